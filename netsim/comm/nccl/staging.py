"""Transfers staged through host memory when GPUs cannot reach each other peer-to-peer.

Without GPU peer-to-peer (gpu nodes with ``p2p=False``, e.g. GeForce cards),
NCCL moves data between two GPUs of one machine with its SHM transport: the
sending GPU's kernel stores into a buffer in pinned host memory and the
receiving GPU's kernel loads from it. The buffer sits in the receiver's memory
by default (``NCCL_SHM_LOCALITY`` = ``SHM_RECV_SIDE``, src/transport/shm.cc of
NCCL v2.30.7-1). Across machines without GPUDirect the network transport stages
through host memory at both ends in the same way. The bytes cross the PCIe links
twice (GPU to CPU, CPU to GPU; a PCIe switch's uplink carries both, as NCCL's
maintainer explains in NVIDIA/nccl#1309), which the flows' legs through the CPU
node already count, and the socket's memory once each way: written once, read
once.

The memory is what this module adds. A cpu node may carry ``memory_bandwidth``
(bytes/s: what the socket's memory moves, reads and writes together). Its memory
becomes a node ``"<cpu>#mem"`` joined to the cpu node by one edge of half that
bandwidth each way: every staged byte is written into it (cpu to memory) and
read back out (memory to cpu), so the two directions carry the same traffic and
together use the whole, and every staged transfer on that socket shares it. A
cpu node without ``memory_bandwidth`` stages with no memory limit.
"""

from netsim.comm.nccl.tuning import NcclModelError

__all__ = ["MEMORY_SUFFIX", "add_host_memory"]

MEMORY_SUFFIX = "#mem"
"""Suffix of the node standing for a cpu node's memory in the effective graph."""


def add_host_memory(E, cpus):
    """Give each of ``cpus`` that carries ``memory_bandwidth`` its memory node in ``E``.

    Parameters
    ----------
    E : networkx.Graph
        The effective graph (:func:`netsim.comm.nccl.hardware.effective_graph`), changed
        in place.
    cpus : iterable of nodes
        The cpu nodes transfers are staged through (None entries are skipped).

    Returns
    -------
    dict
        cpu node -> its memory node, for the cpus that have one.

    Raises
    ------
    NcclModelError
        For a ``memory_bandwidth`` that is not a positive number of bytes/s.

    Examples
    --------
    A socket whose memory moves 204.8 GB/s: 102.4 GB/s of writes and as much of
    reads.

    >>> import networkx as nx
    >>> E = nx.Graph(); E.add_node("cpu0", kind="cpu", memory_bandwidth=204.8e9)
    >>> add_host_memory(E, ["cpu0", None])
    {'cpu0': 'cpu0#mem'}
    >>> E.edges["cpu0", "cpu0#mem"]["bandwidth"] / 1e9
    102.4
    """
    out = {}
    for cpu in dict.fromkeys(c for c in cpus if c is not None):
        bw = E.nodes[cpu].get("memory_bandwidth")
        if bw is None:
            continue
        if isinstance(bw, bool) or not isinstance(bw, (int, float)) or not bw > 0:
            raise NcclModelError(f"cpu node {cpu!r}: memory_bandwidth must be bytes/s > 0, "
                                 f"got {bw!r}")
        mem = f"{cpu}{MEMORY_SUFFIX}"
        if mem not in E:
            E.add_node(mem, kind="memory")
            E.add_edge(cpu, mem, bandwidth=float(bw) / 2, latency=0.0)
        out[cpu] = mem
    return out
