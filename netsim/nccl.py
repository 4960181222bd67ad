"""NCCL as a user calls it: ``netsim.nccl.simulate(G, op, nbytes)`` and the model's names.

A lone call is the replay of a one-op trace: a collective op among the GPU ranks, expanded
by :mod:`netsim.comm.library` with NCCL's plan and replayed by
:func:`netsim.result.replay_expansion`, the same path as a collective inside a training
iteration, so the two cannot drift apart. This module sits above :mod:`netsim.result`, and
the model it calls (:mod:`netsim.comm.nccl`, whose docstring gives the graph attribute
contract) below :mod:`netsim.comm.library`: the library expands NCCL's plans, and the lone
call replays them, with no circle between the two.

Examples
--------
>>> import networkx as nx
>>> from netsim import nccl
>>> G = nx.Graph()
>>> G.add_nodes_from([f"g{i}" for i in range(8)], kind="gpu", model="H100", sm=90)
>>> G.add_node("sw", kind="nvswitch", nvls=True)
>>> G.add_edges_from([(f"g{i}", "sw") for i in range(8)], bandwidth=450e9, latency=1e-7)
>>> r = nccl.simulate(G, "allreduce", 2**30)
>>> r.plan.algorithm, r.plan.protocol, r.plan.channels
('nvls', 'Simple', 8)
"""

from netsim.comm import library as _library
from netsim import result as _result
from netsim.checks import check_choice, check_int
from netsim.trace.core import TraceBuilder
from netsim.comm.nccl import hardware, launch, limits, model, p2p, search, staging, tuning
from netsim.comm.nccl.model import ALGORITHMS, OPS, WIRE_FACTOR, Plan
from netsim.comm.nccl.tuning import NcclModelError, bus_factor

__all__ = ["simulate", "Plan", "NcclModelError", "OPS", "ALGORITHMS", "WIRE_FACTOR",
           "bus_factor", "tuning", "search", "hardware", "p2p", "limits", "launch", "staging",
           "model"]


def simulate(G, op, nbytes, ranks=None, algorithm=None, protocol=None, channels=None,
             launch="proc"):
    """Simulate one NCCL collective on a graph; its time is ``result.makespan``.

    Parameters
    ----------
    G : networkx.Graph
        Hardware following the attribute contract of :mod:`netsim.comm.nccl`.
    op : str
        ``"allreduce"``, ``"allgather"``, ``"reduce_scatter"``, ``"broadcast"``,
        ``"reduce"``, ``"alltoall"`` or ``"sendrecv"``.
    nbytes : int
        nccl-tests' size in bytes: the buffer of allreduce, broadcast, reduce and
        sendrecv, the whole gathered (scattered) buffer of allgather
        (reduce_scatter), each rank's send buffer of alltoall.
    ranks : sequence of nodes, optional
        The gpu node of each rank; default every gpu node in graph order.
    algorithm : {"ring", "tree", "nvls", "nvls_tree", "collnet_chain", "pat", "p2p"}, optional
        None: NCCL's choice (:func:`netsim.comm.nccl.tuning.algo_time` least).
        alltoall and sendrecv always run as ``"p2p"``.
    protocol : {"LL", "LL128", "Simple"}, optional
        None: NCCL's choice.
    channels : int, optional
        None: the count NCCL's search reaches on these links; for alltoall and
        sendrecv, the channels each send runs on (:mod:`netsim.comm.nccl.p2p`).
    launch : {"proc", "thread"}, optional
        How the GPUs are driven (:mod:`netsim.comm.nccl.launch`): ``"proc"``, a process
        per GPU (nccl-tests ``-g 1``, the default), or ``"thread"``, one host thread
        per machine launching on each of its GPUs in turn (``-g N``): the call also
        waits for those launches, from the gpu nodes' ``launch`` attribute.

    Returns
    -------
    Result
        The replay; ``result.plan`` is a :class:`Plan`, ``result.ranks`` has one
        row per GPU rank; ``result.expanded`` holds the trace of flows actually
        replayed, whose ranks after the GPUs are the nodes a transfer is staged
        through (without P2P a CPU or its memory, ``"<cpu>#mem"``; a NIC; an
        NVSwitch for NVLS). A channel's GPU-side limit is a rate bound of its
        flow (``result.expanded.bound``), not a node. Link
        capacities in ``result.links`` are the ones NCCL counts on
        (:func:`netsim.comm.nccl.hardware.effective_graph`).

    Raises
    ------
    NcclModelError
        For an unknown op, algorithm, protocol or launch mode, ``nbytes`` or
        ``channels`` below 1, ranks that are not gpu nodes, an algorithm the
        hardware cannot run (the message names what is missing), or ``"thread"``
        launches on a gpu node without ``launch``.

    Examples
    --------
    Two GPUs on one 25 GB/s NVLink (V100, NCCL counts 20 GB/s), 1 GB allreduce:

    >>> import networkx as nx
    >>> G = nx.Graph(); G.add_nodes_from(["g0", "g1"], kind="gpu", model="V100", sm=70)
    >>> G.add_edge("g0", "g1", bandwidth=25e9, latency=0.0)
    >>> r = simulate(G, "allreduce", 10**9, algorithm="ring", protocol="Simple")
    >>> r.plan.algorithm, r.plan.channels
    ('ring', 1)
    >>> round(r.makespan * 1e3, 4)     # (8.4 + 2 x 3.4) us + 1 GB x 2 x 1/2 / 20 GB/s
    50.0152

    Driven by one thread that spends 2 us per launch, the second GPU's kernel
    starts 2 us later, and so does everything after it:

    >>> G.nodes["g1"]["launch"] = G.nodes["g0"]["launch"] = 2e-6
    >>> t = simulate(G, "allreduce", 10**9, algorithm="ring", protocol="Simple", launch="thread")
    >>> round((t.makespan - r.makespan) * 1e6, 6)
    2.0
    """
    check_choice(op, "op", OPS, error=NcclModelError)
    nbytes = check_int(nbytes, "nbytes", error=NcclModelError)
    hw = hardware.describe(G, ranks)     # refuses non-gpu ranks and fewer than two
    meta = {"library": "nccl", "op": op}
    b = TraceBuilder(len(hw.gpus), metadata=meta)
    if algorithm is not None and algorithm not in ALGORITHMS:   # before the trace's own check
        raise NcclModelError(f"unknown algorithm {algorithm!r}; known: {', '.join(ALGORITHMS)}")
    b.collective(op, range(len(hw.gpus)), nbytes, algorithm=algorithm)
    trace = b.build()
    x = _library.expand(trace, G, list(hw.gpus), "nccl",
                        {"protocol": protocol, "channels": channels, "launch": launch})
    result = _result.replay_expansion(trace, x)
    c = {k: v[0] for k, v in result.collectives.items()}
    result.metadata.update(algorithm=str(c["algorithm"]), protocol=str(c["protocol"]))
    algbw = nbytes / result.makespan
    result.plan = Plan(op, nbytes, len(hw.gpus), len(hw.machines), str(c["algorithm"]),
                       str(c["protocol"]), int(c["channels"]), float(c["latency"]), algbw,
                       algbw * tuning.bus_factor(op, len(hw.gpus)), float(c["tuning_time"]))
    return result
