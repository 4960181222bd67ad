"""gloo's allreduce on host cores: the network's bytes, and the copies and sums a CPU makes.

A CPU collective (gloo, MPI over TCP) moves its bytes through the host: the
process's own core(s) copy every byte into and out of the kernel's socket
buffers and add every received chunk into the result. On a fast NIC that work,
not the wire, sets the time. This module is the model of it, read from graph
attributes like the rest of the hardware:

* A member of the call is a graph node (``kind="host"`` or ``"cpu"``): the
  machine its process runs on. It may carry ``core_bandwidth`` (bytes/s one core
  moves to and from memory, reads and writes counted as STREAM counts them),
  ``memory_bandwidth`` (bytes/s of the socket's memory, reads and writes
  together: the vendor's figure) and ``cores`` (cores the process uses, default 1).
* The memory is a node ``"<host>#mem"`` joined to the host by one edge of
  ``memory_bandwidth`` (else ``cores x core_bandwidth``). Each process's host work
  is one flow over it whose rate is bounded by ``cores x core_bandwidth`` (a
  per-flow rate bound of the engine), so processes on one socket share its
  memory and each is held to its own cores. A host without ``core_bandwidth``
  and ``memory_bandwidth`` does no host work: the call is the network alone.
* As in the NCCL model, the call is the fluid limit of its pipeline: after its
  latency every flow (each rank's bytes to its right neighbour, each rank's host
  work) runs at once and the call ends with the last.

The algorithms, as gloo implements them (gloo at cc44198, 2025), per rank for
``P`` ranks and ``n`` bytes; a TCP send copies the bytes from the user buffer
into the socket's buffers and a receive copies them out (Linux
``tcp_sendmsg``/``tcp_recvmsg``, net/ipv4/tcp.c), each a read and a write:

* ``"ring_chunked"`` (``gloo/allreduce_ring_chunked.h``): ``2P`` chunks of
  ``n / 2P``; a reduce-scatter pass then a broadcast pass around the ring, every
  rank sending ``2 (P-1)/P n``. Host work: the sends' and receives' copies
  (``2 x 2 (P-1)/P n`` each), the sums of ``(P-1)/P n`` received bytes into the
  result (two reads and a write: ``3 (P-1)/P n``) and the copies of the
  broadcast chunks out of the inbox (``2 (P-1)/P n``): ``13 (P-1)/P n``.
* ``"ring"`` (``gloo/allreduce_ring.h``): the whole buffer goes round ``P-1``
  times (``(P-1) n`` sent). Host work: the first copy into the outbox (``2n``),
  per round a send, a receive and a sum (``7n``), and a copy from inbox to
  outbox in every round but the last (``2n``): ``(9P - 9) n``.

Latency: gloo's documentation counts ``4P`` communication steps for
``ring_chunked`` and ``P-1`` for ``ring`` (gloo's own docs/algorithms.md); each waits one
message's path latency, of which the flows pay one themselves, so the call's
latency op charges the others. No cited figure gives the TCP stack's own
per-message host cost, so none is charged; nor the halving-doubling and bcube
algorithms, other operations, or more than one input buffer per process.
Placement puts one rank on a node, so two processes of one host sharing its
memory cannot be expressed yet. With ``transport="tcp"`` every message of the
replay is a TCP transfer, the host-work flows too; their path (one edge of no
latency) has a round trip of nanoseconds, so slow start lifts at once (the
20 MB row of the validation page gives the same time to the microsecond).
"""

import math
import types
from typing import NamedTuple

import networkx as nx

from netsim.checks import check_choice
from netsim.errors import TraceError

__all__ = ["GLOO_ALGORITHMS", "DEFAULT", "MEMORY_SUFFIX", "Call", "traffic", "plan"]

GLOO_ALGORITHMS = ("ring_chunked", "ring")
"""gloo's allreduce algorithms the model runs (their headers, module docstring): gloo's own
names, not MPICH's schedules nor NCCL's algorithms (``ring`` here is gloo's whole-buffer ring)."""
DEFAULT = "ring_chunked"
"""The algorithm of a call that names none (gloo's benchmark's usual one)."""
MEMORY_SUFFIX = "#mem"
"""Suffix of the node standing for a host's memory (as :mod:`netsim.comm.nccl.staging`'s)."""

# Per rank, as multiples of n: (bytes sent to the right neighbour, host bytes, steps);
# the module docstring derives each from gloo's source.
_TRAFFIC = types.MappingProxyType({
    "ring_chunked": lambda P: (2 * (P - 1) / P, 13 * (P - 1) / P, 4 * P),
    "ring": lambda P: (P - 1, 9 * (P - 1), P - 1),
})


class Call(NamedTuple):
    """One planned gloo call: its flows, their rate bounds and its latency (:func:`plan`)."""

    algorithm: str
    latency: float   # s, charged before the flows
    flows: tuple     # (from node, to node, bytes)
    bounds: tuple    # bytes/s per flow (inf: none)


def traffic(algorithm, P, nbytes):
    """Bytes one rank sends, bytes its host moves, and the call's steps.

    Parameters
    ----------
    algorithm : {"ring_chunked", "ring"}
    P : int
        Ranks.
    nbytes : float
        The buffer.

    Returns
    -------
    sent, host : float
        Bytes to the right neighbour; bytes read and written by the process's cores.
    steps : int

    Examples
    --------
    Two ranks, 20 MB, ``ring_chunked``: 20 MB sent, 130 MB through the core.

    >>> traffic("ring_chunked", 2, 20e6)
    (20000000.0, 130000000.0, 8)
    """
    check_choice(algorithm, "gloo algorithm", GLOO_ALGORITHMS, error=TraceError)
    sent, host, steps = _TRAFFIC[algorithm](P)
    return sent * nbytes, host * nbytes, steps


def _positive(G, node, key):
    x = G.nodes[node].get(key)
    if x is None:
        return None
    if isinstance(x, bool) or not isinstance(x, (int, float)) or not x > 0:
        raise TraceError(f"node {node!r}: {key} must be a number > 0, got {x!r}")
    return float(x)


def _host_work(H, node, nbytes):
    """The flow of ``node``'s host work and its bound, or None (adds ``<node>#mem`` to ``H``)."""
    core = _positive(H, node, "core_bandwidth")
    mem = _positive(H, node, "memory_bandwidth")
    if core is None and mem is None:
        return None
    cores = H.nodes[node].get("cores", 1)
    if isinstance(cores, bool) or not isinstance(cores, int) or cores < 1:
        raise TraceError(f"node {node!r}: cores must be an integer >= 1, got {cores!r}")
    bound = math.inf if core is None else cores * core
    memory = f"{node}{MEMORY_SUFFIX}"
    if memory not in H:
        H.add_node(memory, kind="memory")
        H.add_edge(node, memory, bandwidth=mem if mem is not None else bound, latency=0.0)
    return (node, memory, nbytes), bound


def plan(H, nodes, nbytes, algorithm=None):
    """Plan one gloo allreduce among ``nodes`` of graph ``H``: flows, bounds, latency.

    Parameters
    ----------
    H : networkx.Graph
        The graph the call runs on; memory nodes are added to it (pass a copy).
    nodes : sequence of nodes
        Each member's node, in ring order.
    nbytes : float
        The buffer, bytes.
    algorithm : {"ring_chunked", "ring"}, optional
        Default :data:`DEFAULT`.

    Returns
    -------
    Call

    Raises
    ------
    TraceError
        For an unknown algorithm, or a host attribute out of range (naming it).

    Examples
    --------
    Two hosts on a 5 GB/s link, each core moving 10 GB/s: the host work (65 MB
    at 10 GB/s, 6.5 ms) outlasts the wire (10 MB at 5 GB/s, 2 ms).

    >>> import networkx as nx
    >>> H = nx.Graph(); H.add_edge("a", "b", bandwidth=5e9, latency=0.0)
    >>> nx.set_node_attributes(H, {"a": 10e9, "b": 10e9}, "core_bandwidth")
    >>> c = plan(H, ["a", "b"], 10e6)
    >>> c.flows[:2], c.flows[2], c.bounds
    ((('a', 'b', 10000000.0), ('b', 'a', 10000000.0)), ('a', 'a#mem', 65000000.0), (inf, inf, 10000000000.0, 10000000000.0))
    """
    algorithm = DEFAULT if algorithm is None else algorithm
    P = len(nodes)
    sent, host, steps = traffic(algorithm, P, nbytes)
    flows, bounds = [], []
    for i, u in enumerate(nodes):
        flows.append((u, nodes[(i + 1) % P], sent))
        bounds.append(math.inf)
    for u in nodes:
        work = _host_work(H, u, host)
        if work is not None:
            flows.append(work[0])
            bounds.append(work[1])
    hop = nx.shortest_path_length(H, nodes[0], nodes[1 % P], weight="latency")
    return Call(algorithm, max(steps - 1, 0) * hop, tuple(flows), tuple(bounds))
