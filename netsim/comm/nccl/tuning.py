"""NCCL's own tuning model: per-(algorithm, protocol) latency and bandwidth, and its choice.

A faithful, plain-number transcription of ``ncclTopoTuneModel`` and
``ncclTopoGetAlgoTime`` in NCCL v2.30.7-1 (:data:`NCCL_VERSION`, the newest
release whose source was read), ``src/graph/tuning.cc``, with the link
bandwidths NCCL assigns in ``src/graph/topo.h`` and the speed ladders of
``src/graph/search.cc`` of the same release. NCCL uses this model to
*choose* an algorithm and a protocol; it predicts time as ``latency + bytes /
bandwidth``. Every constant of :mod:`netsim.comm.nccl` comes from this one release.

Units: NCCL's tables are in microseconds and GB/s (1e9 bytes/s) and are kept
so here, as written in the source; every public function takes and returns SI
units (seconds, bytes, bytes/s).

What a caller supplies is what NCCL's topology search would find, as plain
numbers: per algorithm a :class:`Graph` (channels, per-channel bandwidth
inside and across nodes, intra-node link type), and a :class:`Comm` (ranks,
nodes, compute capability, CPU vendor). :func:`search_channels` gives the
channel count and per-channel bandwidth NCCL's search reaches when it finds a
solution that fills the links (it is the bound of the search, not the search),
and :func:`raise_tree_intra` a tree's intra-node speed after the search's
second pass; both live in :mod:`netsim.comm.nccl.search` and are re-exported here.

PAT (allgather and reduce-scatter at one GPU per node, ``ncclPatEnable``) runs
on the tree's graph (init.cc hands ``graphs[NCCL_ALGO_PAT]`` the tree graph).

Not modelled: CollNet Direct (CollNet chain is: it needs NCCL's SHARP plugin,
which a graph of ``sharp`` switches is taken to have), user overrides (``NCCL_ALGO``/``NCCL_PROTO``), the Power-CPU tree
adjustment, aggregation of several operations (``numPipeOps`` is 1).

References
----------
.. [1] NVIDIA NCCL v2.30.7-1, src/graph/tuning.cc: ``ncclTunerConstantsDefaults``
   (``baseLatencies``, ``hwLatencies``, ``llMaxBws``, ``perChMaxRingLL128Bws``,
   ``perChMaxTreeLL128Bws``, ``perChMaxTreeBws``, ``perChMaxNVLSTreeBws``),
   ``nvlsEfficiency``, ``ncclPatEnable``, ``getNetOverhead``,
   ``treeCorrectionFactor``, ``ncclTopoTuneModel``, ``ncclTopoGetAlgoTime``.
.. [2] NCCL v2.30.7-1, src/graph/topo.h: ``SM60_NVLINK_BW`` .. ``SM100_NVLINK_BW``,
   ``PCI_BW``, ``BDW_QPI_BW`` .. ``ARM_BW``; src/graph/topo.cc: ``kvDictPciGen`` (PCIe
   bandwidth ``width * speed / 80`` GB/s).
.. [3] NCCL v2.30.7-1, src/graph/search.cc: ``speedArrayIntra``,
   ``speedArrayInter``, ``sm90SpeedArray*``, ``sm100SpeedArray*``,
   ``ncclTopoCompute``, ``ncclTopoDupChannels``; src/init.cc: ring
   ``maxChannels = MAXCHANNELS / 2`` (32; src/include/device.h ``MAXCHANNELS`` 64).
.. [4] NVIDIA nccl-tests, doc/PERFORMANCE.md: bus bandwidth factors.
"""

import math
import types
from typing import Mapping, NamedTuple

from netsim.checks import check_int
from netsim.errors import NcclModelError
from netsim.comm.nccl.search import MAX_NVLS_ARITY, SPEEDS, raise_tree_intra, search_channels
from netsim.comm.nccl.limits import (LL_MAX_BW, NVLS_EFFICIENCY, PER_CH_MAX_NVLS_TREE_BW,
                     PER_CH_MAX_RING_LL128_BW, PER_CH_MAX_TREE_BW, PER_CH_MAX_TREE_LL128_BW,
                     table_indices)

__all__ = [
    "NcclModelError", "NCCL_VERSION", "NCCL_ALGO_ORDER", "PROTOCOLS", "NCCL_FUNC_ORDER",
    "BASE_LAT_US", "HW_LAT_US", "LL_MAX_BW", "PER_CH_MAX_RING_LL128_BW",
    "PER_CH_MAX_TREE_LL128_BW", "PER_CH_MAX_TREE_BW", "PER_CH_MAX_NVLS_TREE_BW",
    "NVLS_EFFICIENCY", "TREE_CORRECTION_FACTOR",
    "NVLINK_BW", "PCI_BW", "CPU_LINK_BW", "SPEEDS", "Graph", "Comm", "Choice",
    "bus_factor", "steps", "nvlink_bw", "pci_bw", "pat_enabled", "search_channels", "raise_tree_intra",
    "bandwidth", "latency", "net_overhead", "size_factors", "call_channels", "algo_time",
    "choose",
]

NCCL_VERSION = "v2.30.7-1"


#: NCCL's algorithms in the index order of its tables (``NCCL_ALGO_*``,
#: src/include/plugin/nccl_tuner.h): the rows of :data:`BASE_LAT_US` and :data:`HW_LAT_US`.
#: NCCL's fact, not the model's list of what it runs (:data:`netsim.comm.nccl.ALGORITHMS`,
#: whose home is :data:`netsim.trace.collop.NCCL_HINTS`).
NCCL_ALGO_ORDER = ("tree", "ring", "collnet_direct", "collnet_chain", "nvls", "nvls_tree", "pat")
#: NCCL's protocols in the index order of its tables (``NCCL_PROTO_*``).
PROTOCOLS = ("LL", "LL128", "Simple")
#: The operations NCCL's tuning model times, in ``ncclFunc_t`` order (src/include/device.h):
#: allreduce 2(n-1) steps, allgather/reduce_scatter n-1, others n. The trace's op names and
#: their order are :data:`netsim.trace.collop.OPS`.
NCCL_FUNC_ORDER = ("broadcast", "reduce", "allgather", "reduce_scatter", "allreduce")
# Of NCCL's algorithms, those the tuning model here times: all but CollNet Direct.
_MODELLED = tuple(a for a in NCCL_ALGO_ORDER if a != "collnet_direct")
# src/include/device.h: NCCL_MAX_DIRECT_ARITY (CollNet); enqueue.cc ``updateCollCostTable``
# times NVLS only for allreduce beyond NCCL_MAX_NVLS_ARITY (search.MAX_NVLS_ARITY) local ranks,
# and CollNet chain only up to NCCL_MAX_DIRECT_ARITY + 1 of them.
_MAX_DIRECT_ARITY = 7
_HW = types.MappingProxyType({"nvlink": 0, "pci": 1, "net": 2})  # NCCL_HW_NVLINK, NCCL_HW_PCI, NCCL_HW_NET

# tuning.cc ``baseLatencies`` (us): rows Tree, Ring, CollNetDirect, CollNetChain, NVLS,
# NVLSTree, PAT; columns LL, LL128, Simple.
BASE_LAT_US = ((6.8, 14.0, 8.4), (6.6, 14.0, 8.4), (0, 0, 0), (0, 0, 0), (0, 0, 0), (0, 0, 0),
               (8.0, 8.0, 8.0))
# tuning.cc ``hwLatencies`` (us): [NVLINK, PCI, NET][algorithm][protocol].
HW_LAT_US = (
    ((.6, 1.25, 4.0), (.6, 1.9, 3.4), (0, 0, 3.7), (0, 0, 2.8), (0, 0, 25), (0, 0, 25),
     (0, 0, 4.0)),
    ((1.0, 1.9, 4.0), (1.0, 2.5, 5.7), (0, 0, 3.7), (0, 0, 2.8), (0, 0, 0), (0, 0, 0),
     (0, 0, 4.0)),
    ((5.0, 8.5, 14), (2.7, 4.0, 14.0), (0, 0, 31), (0, 0, 30), (0, 0, 18), (0, 0, 20.9),
     (0, 0, 14)),
)
# llMaxBws, perChMax*Bws (GB/s), nvlsEfficiency: netsim.comm.nccl.limits, re-exported here.
# tuning.cc ``treeCorrectionFactor``[protocol][log2(bytes / 64)], 64 B .. 512 MiB (24 columns;
# trees read the first 23, NVLS trees on Blackwell x86 all 24: :func:`size_factors`).
TREE_CORRECTION_FACTOR = (
    (1.0, 1.0, 1.0, 1.0, .9, .8, .7, .7, .7, .7, .6, .5, .4, .4, .5, .6, .7, .8, .9, 1.0, 1.0, 1.0,
     1.0, 1.0),
    (1.0, 1.0, 1.0, 1.0, 1.0, .9, .8, .8, .8, .7, .6, .6, .6, .6, .6, .6, .8, .9, .9, .9, .9, 1.0,
     1.0, 1.0),
    (.9, .9, .9, .9, .9, .9, .9, .8, .7, .6, .6, .5, .5, .5, .5, .6, .7, .8, .7, .7, .8, .9, .9, .9),
)
# topo.h (GB/s per NVLink): SM60 18, SM70 20, SM80 20, SM86 12, SM90 20.6, SM100 40.1.
NVLINK_BW = types.MappingProxyType({60: 18.0, 70: 20.0, 80: 20.0, 86: 12.0, 90: 20.6, 100: 40.1})
PCI_BW = 12.0  # topo.h ``PCI_BW``: PCIe gen3 x16
# topo.h, GB/s NCCL gives the link between CPU sockets: BDW_QPI_BW ("qpi"), SKL_QPI_BW,
# SRP_QPI_BW (Sapphire Rapids), ERP_QPI_BW (Emerald Rapids), AMD_BW, ZPI_BW,
# YONGFENG_ZPI_BW, P9_BW, ARM_BW.
CPU_LINK_BW = types.MappingProxyType(
    {"qpi": 6.0, "skl_qpi": 10.0, "srp_qpi": 22.0, "erp_qpi": 40.0, "amd": 16.0, "zpi": 6.0,
     "yongfeng_zpi": 9.0, "p9": 32.0, "arm": 6.0})
_PCI_LANE = types.MappingProxyType(
    {"gen1": 15, "gen2": 30, "gen3": 60, "gen4": 120, "gen5": 240, "gen6": 480})
_GB, _US = 1e9, 1e-6


class Graph(NamedTuple):
    """What NCCL's topology search found for one algorithm (``struct ncclTopoGraph``).

    ``bw_intra``/``bw_inter`` are bytes/s per channel; ``link`` is the
    intra-node path type, ``"nvlink"`` (typeIntra NVL/NVB) or ``"pci"``
    (anything slower); ``tree_pattern`` marks NCCL_TOPO_PATTERN_TREE (a 0.85
    bandwidth penalty) rather than a balanced or split tree; ``same_channels``
    is the search's ``sameChannels`` (broadcast and reduce then pay one hop of
    latency instead of one per step).
    """

    n_channels: int
    bw_intra: float
    bw_inter: float
    link: str = "nvlink"
    latency_inter: float = 0.0
    tree_pattern: bool = False
    same_channels: bool = True


class Comm(NamedTuple):
    """A communicator as the tuning model sees it; ``graphs`` maps algorithm -> Graph.

    ``cpu_vendor``: ``"intel"`` or ``"amd"`` (x86, NCCL's ``cpuVendor``) or ``"arm"``
    (NCCL's ``cpuArch`` ARM, which tuning.cc treats as Intel but for the Blackwell NVLS-tree
    correction of :func:`size_factors`).
    """

    n_ranks: int
    n_nodes: int
    compcap: int
    graphs: Mapping[str, Graph]
    cpu_vendor: str = "intel"


class Choice(NamedTuple):
    """The fastest (algorithm, protocol) for one call, its predicted time (s) and bandwidth."""

    algorithm: str
    protocol: str
    time: float
    bandwidth: float


def _index(name, names, what):
    if name not in names:
        raise NcclModelError(f"unknown {what} {name!r}; known: {', '.join(names)}")
    return names.index(name)


def bus_factor(op, n_ranks):
    """nccl-tests' bus-bandwidth factor: busbw = algbw * factor.

    Parameters
    ----------
    op : str
        ``"allreduce"`` (2(n-1)/n), ``"allgather"``, ``"reduce_scatter"``,
        ``"alltoall"`` ((n-1)/n), ``"broadcast"``, ``"reduce"``, ``"sendrecv"`` (1).
    n_ranks : int
        Ranks, >= 1.

    Returns
    -------
    float

    Examples
    --------
    >>> bus_factor("allreduce", 8), bus_factor("allgather", 4), bus_factor("reduce", 8)
    (1.75, 0.75, 1.0)

    References
    ----------
    nccl-tests doc/PERFORMANCE.md, and ``getBw`` in src/all_reduce.cu, all_gather.cu, ...
    """
    n = check_int(n_ranks, "n_ranks", error=NcclModelError)
    factors = {"allreduce": 2 * (n - 1) / n, "allgather": (n - 1) / n,
               "reduce_scatter": (n - 1) / n, "alltoall": (n - 1) / n,
               "broadcast": 1.0, "reduce": 1.0, "sendrecv": 1.0}
    if op not in factors:
        raise NcclModelError(f"unknown op {op!r}; known: {', '.join(factors)}")
    return factors[op]


def steps(op, n_ranks, n_nodes=1):
    """Ring steps of an op, and how many of them cross nodes (``nsteps``, ``nInterSteps``).

    Parameters
    ----------
    op : str
        One of :data:`NCCL_FUNC_ORDER`.
    n_ranks, n_nodes : int
        Ranks and nodes (>= 1).

    Returns
    -------
    (int, int)

    Examples
    --------
    >>> steps("allreduce", 8), steps("allreduce", 16, 2), steps("allgather", 16, 2)
    ((14, 0), (30, 2), (15, 1))
    """
    _index(op, NCCL_FUNC_ORDER, "op")
    n = check_int(n_ranks, "n_ranks", error=NcclModelError)
    nodes = check_int(n_nodes, "n_nodes", maximum=n, error=NcclModelError)
    if op == "allreduce":
        return 2 * (n - 1), 2 * (nodes - 1)   # v2.30.7-1: 2 (nNodes - 1) (was 2 nNodes)
    if op in ("allgather", "reduce_scatter"):
        return n - 1, nodes - 1
    return n, nodes


def nvlink_bw(compcap):
    """Bandwidth NCCL assigns one NVLink of a GPU generation, in bytes/s (topo.h).

    Parameters
    ----------
    compcap : int
        Compute capability x 10 (70 V100, 80 A100, 86 consumer Ampere, 90 H100, 100 B200).

    Returns
    -------
    float
        Bytes/s (``SM*_NVLINK_BW``; below 60 NCCL has no NVLink figure).

    Examples
    --------
    >>> nvlink_bw(70), nvlink_bw(90)
    (20000000000.0, 20600000000.0)
    """
    cc = check_int(compcap, "compcap", minimum=60, error=NcclModelError)
    key = (100 if cc >= 100 else 90 if cc >= 90 else 86 if cc == 86 else 80 if cc >= 80
           else 70 if cc >= 70 else 60)
    return NVLINK_BW[key] * _GB


def pci_bw(gen="gen3", width=16):
    """Bandwidth NCCL assigns a PCIe link: ``width * speed / 80`` GB/s (topo.cc).

    Parameters
    ----------
    gen : str
        ``"gen1"`` .. ``"gen6"`` (``kvDictPciGen``: 15 .. 480 x 100 Mb/s per lane).
    width : int
        Lanes.

    Returns
    -------
    float
        Bytes/s.

    Examples
    --------
    >>> pci_bw("gen3") / 1e9, pci_bw("gen4") / 1e9, pci_bw("gen5", 8) / 1e9
    (12.0, 24.0, 24.0)
    """
    lane = _PCI_LANE.get(gen)
    if lane is None:
        raise NcclModelError(f"unknown PCIe generation {gen!r}; known: {', '.join(_PCI_LANE)}")
    return check_int(width, "width", error=NcclModelError) * lane / 80 * _GB


def _check(comm, op, algorithm, protocol):
    if not isinstance(comm, Comm):
        raise NcclModelError(f"comm must be a Comm, got {type(comm).__name__}")
    check_int(comm.n_ranks, "n_ranks", minimum=2, error=NcclModelError)
    check_int(comm.n_nodes, "n_nodes", maximum=comm.n_ranks, error=NcclModelError)
    o, a, p = _index(op, NCCL_FUNC_ORDER, "op"), _index(algorithm, NCCL_ALGO_ORDER, "algorithm"), \
        _index(protocol, PROTOCOLS, "protocol")
    if algorithm not in _MODELLED:
        raise NcclModelError(f"algorithm {algorithm!r} (CollNet Direct) is not modelled")
    return o, a, p


def pat_enabled(comm):
    """Whether NCCL runs PAT at all: ``ncclPatEnable`` (one GPU per node, sm >= 60).

    Parameters
    ----------
    comm : Comm

    Returns
    -------
    bool
        True when every node holds one rank (``nNodes == nRanks``) and the
        compute capability is at least 60 (CUDA atomics); the network is taken
        to be a host one (no device offload), as NCCL's IB and socket transports are.

    Examples
    --------
    >>> pat_enabled(Comm(4, 4, 80, {})), pat_enabled(Comm(8, 1, 80, {}))
    (True, False)
    """
    return comm.n_nodes == comm.n_ranks and comm.compcap >= 60


def _applies(comm, op, algorithm, protocol):
    """NCCL's filters: which (op, algorithm, protocol) it considers at all (v2.30.7-1).

    tuning.cc's, and enqueue.cc ``updateCollCostTable``'s on the ranks per node.
    """
    graph_key = "tree" if algorithm == "pat" else algorithm   # init.cc: PAT on the tree graph
    if graph_key not in comm.graphs:
        return False
    if op in ("broadcast", "reduce") and algorithm != "ring":
        return False
    if op in ("allgather", "reduce_scatter") and algorithm not in ("ring", "nvls", "pat"):
        return False
    if algorithm == "pat" and (op == "allreduce" or protocol != "Simple"
                               or not pat_enabled(comm)):
        return False
    if algorithm in ("nvls", "nvls_tree", "collnet_chain") and protocol != "Simple":
        return False
    if algorithm in ("nvls", "nvls_tree") and comm.graphs[algorithm].n_channels < 2:
        return False  # "NVLS/NVLStree needs at least 2 channels"
    local = comm.n_ranks // comm.n_nodes
    if algorithm in ("nvls", "nvls_tree") and op != "allreduce" and local > MAX_NVLS_ARITY:
        return False  # enqueue.cc updateCollCostTable: only allreduce past NCCL_MAX_NVLS_ARITY
    if algorithm == "collnet_chain" and local > _MAX_DIRECT_ARITY + 1:
        return False  # enqueue.cc: "Disable CollNet Chain for more than 8 local GPUs"
    if algorithm == "collnet_chain" and (op != "allreduce" or comm.n_nodes == 1):
        return False
    if algorithm == "nvls_tree" and comm.n_nodes == 1:
        return False  # algoEnable[NVLS_TREE] = 0 on one node
    if algorithm == "nvls" and comm.n_nodes > 1:
        return False  # no CollNet support: algoEnable[NVLS] = 0 across nodes
    if protocol == "LL128":
        # Enabled by default with NVLink inside nodes (typeIntra <= PATH_NVB) on sm >= 70
        # (mixed compute capabilities only from sm90); the NIC path within PXB (PXN on
        # sm >= 90) is assumed met.
        return comm.graphs[graph_key].link == "nvlink" and comm.compcap >= 70
    return True


def bandwidth(comm, op, algorithm, protocol):
    """Algorithm bandwidth NCCL's model gives an (op, algorithm, protocol), bytes/s.

    ``comm->bandwidths`` of ``ncclTopoTuneModel`` (v2.30.7-1): the bus bandwidth
    ``nChannels * bw`` (``bwIntra`` up to two nodes and for CollNet, ``bwInter``
    beyond), capped and scaled per protocol (ring LL half the wire rate up to
    ``llMaxBw``; ring LL128 0.92 up to ``perChMaxRingLL128Bw`` per channel; tree
    0.92 up to ``perChMaxTreeBw`` per channel, then LL /3.8 up to ``llMaxBw``,
    LL128 7/9 on one node else 120/128 up to ``perChMaxTreeLL128Bw``; 0.85 for a
    plain tree pattern; PAT 0.75). NVLS and NVLS tree take per channel the least
    of ``bwIntra x nvlsEfficiency x (nChannels - 1)/nChannels`` (x2 for
    allreduce, which pipelines two operations, else x (ppn - 1)/ppn),
    ``bwInter`` (x2 for an NVLS tree on at most two nodes) and, for NVLS tree,
    ``perChMaxNVLSTreeBw``. Bus bandwidth becomes algorithm bandwidth by
    ``nRanks / nsteps`` for ring and NVLS, 1/2 for tree and CollNet chain;
    allgather and reduce-scatter off the ring (NVLS, PAT) keep bus bandwidth. 0.0 where NCCL does not consider the combination.

    Parameters
    ----------
    comm : Comm
    op, algorithm, protocol : str
        One of :data:`NCCL_FUNC_ORDER`, :data:`NCCL_ALGO_ORDER`, :data:`PROTOCOLS`.

    Returns
    -------
    float
        Bytes/s.

    Examples
    --------
    >>> c = Comm(8, 1, 80, {"ring": Graph(12, 20e9, 20e9)})
    >>> bandwidth(c, "allreduce", "ring", "Simple") / 1e9   # 240 * 8 / 14
    137.14285714285714
    >>> bandwidth(c, "allreduce", "ring", "LL") / 1e9       # min(87.7, 240 / 2) * 8 / 14
    50.114285714285714
    """
    _check(comm, op, algorithm, protocol)
    if not _applies(comm, op, algorithm, protocol):
        return 0.0
    g = comm.graphs["tree" if algorithm == "pat" else algorithm]
    cc_index, index1, index2 = table_indices(comm)
    nsteps, _ = steps(op, comm.n_ranks, comm.n_nodes)
    ppn = comm.n_ranks / comm.n_nodes
    collnet = algorithm == "collnet_chain"
    bw = (g.bw_intra if comm.n_nodes <= 2 or collnet else g.bw_inter) / _GB
    if algorithm in ("nvls", "nvls_tree"):
        intra = g.bw_intra / _GB * NVLS_EFFICIENCY[cc_index] * (g.n_channels - 1) / g.n_channels
        intra *= 2.0 if op == "allreduce" else (ppn - 1) / ppn
        inter = g.bw_inter / _GB * (2 if algorithm == "nvls_tree" and comm.n_nodes <= 2 else 1)
        bw = min(intra, inter)
        if algorithm == "nvls_tree":
            bw = min(bw, PER_CH_MAX_NVLS_TREE_BW[cc_index][index2])
    bus = g.n_channels * bw
    ll_max = LL_MAX_BW[index1][index2]
    if algorithm == "ring" and protocol == "LL":
        bus = min(ll_max, bus * .5)
    if algorithm == "ring" and protocol == "LL128":
        bus = min(bus * 0.92, g.n_channels * PER_CH_MAX_RING_LL128_BW[cc_index][index2])
    if algorithm == "tree":
        if op == "allreduce":
            bus = min(bus * .92, g.n_channels * PER_CH_MAX_TREE_BW[cc_index][index2])
        if protocol == "LL":
            bus = min(bus / 3.8, ll_max)
        if protocol == "LL128":
            bus = min(bus * (7.0 / 9.0 if comm.n_nodes == 1 else 120.0 / 128.0),
                      g.n_channels * PER_CH_MAX_TREE_LL128_BW[cc_index][index2])
        if g.tree_pattern:
            bus *= .85
    if algorithm == "pat":
        bus *= .75
    if algorithm != "ring" and op in ("allgather", "reduce_scatter"):
        return bus * _GB   # "Convert bus BW to algorithm BW" skips these
    ratio = comm.n_ranks / nsteps if algorithm in ("ring", "nvls", "nvls_tree") else .5
    return bus * ratio * _GB


def latency(comm, op, algorithm, protocol, flush=True):
    """Latency NCCL's model gives an (op, algorithm, protocol), in seconds.

    ``comm->latencies`` of ``ncclTopoTuneModel`` (v2.30.7-1): ``baseLat`` plus,
    for rings, ``(nsteps - nInterSteps) * intraLat + nInterSteps * interLat``
    (intraLat at least the network post overhead, 1 us Intel / 2 us AMD, x3 for
    Simple, when the ring crosses nodes; broadcast and reduce pay one hop), for
    trees ``2 * ((ranks per node - 1) * intraLat + log2(nodes) * interLat)``, for
    NVLS ``intraLat (+ interLat)``, for NVLS tree ``intraLat + 2 log2(nodes)
    interLat``, for CollNet chain ``2 (ranks per node - 1) intraLat +
    interLat``, for PAT ``log2(nodes) interLat / 3.5 + 2.8 nRanks``;
    ``interLat`` is ``hwLat[NET]`` (the tree's at one rank per node, "latencies
    are fully exposed") plus the graph's network latency (twice for Simple, the
    flush).

    Parameters
    ----------
    comm : Comm
    op, algorithm, protocol : str
    flush : bool, optional
        Charge the GPUDirect RDMA flush (a second network latency per
        inter-node Simple step), as tuning.cc always does (the default, used
        for NCCL's choice). ``False`` leaves it out, for a receive path on
        which NCCL's runtime does not flush (:func:`netsim.comm.nccl.model.plan`).

    Returns
    -------
    float
        Seconds.

    Examples
    --------
    >>> c = Comm(8, 1, 80, {"ring": Graph(12, 20e9, 20e9)})
    >>> round(latency(c, "allreduce", "ring", "LL") * 1e6, 6)      # 6.6 + 14 * 0.6
    15.0
    >>> round(latency(c, "allreduce", "ring", "Simple") * 1e6, 6)  # 8.4 + 14 * 3.4
    56.0
    >>> t = Comm(16, 2, 90, {"tree": Graph(4, 20e9, 20e9, latency_inter=75e-6)})
    >>> round(latency(t, "allreduce", "tree", "Simple") * 1e6, 1)    # 8.4 + 2 (7 x 4 + 14 + 2 x 75)
    392.4
    >>> round(latency(t, "allreduce", "tree", "Simple", flush=False) * 1e6, 1)  # one 75 fewer per side
    242.4
    """
    _, a, p = _check(comm, op, algorithm, protocol)
    graph_key = "tree" if algorithm == "pat" else algorithm
    if graph_key not in comm.graphs:
        raise NcclModelError(f"comm has no graph for algorithm {algorithm!r}")
    g = comm.graphs[graph_key]
    n, nodes = comm.n_ranks, comm.n_nodes
    nsteps, inter_steps = steps(op, n, nodes)
    intra_hw = _HW["nvlink"] if g.link == "nvlink" else _HW["pci"]
    hw = intra_hw if nodes == 1 else _HW["net"]
    intra = HW_LAT_US[intra_hw][a][p]
    net_lat = g.latency_inter / _US
    inter = HW_LAT_US[_HW["net"]][0 if n == nodes else a][p]
    inter += net_lat + (net_lat if protocol == "Simple" and flush else 0)
    lat = BASE_LAT_US[a][p]
    if algorithm == "ring":
        hop = HW_LAT_US[hw][a][p]
        if op in ("broadcast", "reduce"):
            if g.same_channels:
                lat += hop
            else:  # Simple borrows the tree's hop latency ("waiting for proper chunk modeling")
                lat += nsteps * (HW_LAT_US[hw][0][p] if protocol == "Simple" else hop)
        else:
            overhead = net_overhead(comm.cpu_vendor, protocol) / _US if nodes > 1 else 0.0
            lat += (nsteps - inter_steps) * max(intra, overhead) + inter_steps * inter
    elif algorithm == "tree":
        if op == "allreduce":
            lat += 2 * ((n // nodes - 1) * intra + _log2i(nodes) * inter)
    elif algorithm == "nvls":
        lat = intra + (inter if nodes > 1 else 0)
    elif algorithm == "collnet_chain":
        lat += 2 * (n // nodes - 1) * intra + inter
    elif algorithm == "pat":
        lat += _log2i(nodes) * (inter / 3.5) + n * 2.8
    else:  # nvls_tree
        lat += intra + 2 * _log2i(nodes) * inter
    return lat * _US


def net_overhead(cpu_vendor, protocol):
    """Host time NCCL's model gives one network operation posted by the proxy, in seconds.

    tuning.cc ``getNetOverhead`` (v2.30.7-1): 1 us on Intel (and other) x86 hosts,
    2 us on AMD; ``ncclTopoTuneModel`` charges it three times for Simple ("Inter-node
    rings still have to launch nsteps * net overhead").

    Parameters
    ----------
    cpu_vendor : {"intel", "amd"}
    protocol : {"LL", "LL128", "Simple"}

    Examples
    --------
    >>> net_overhead("intel", "LL") * 1e6, net_overhead("amd", "Simple") * 1e6
    (1.0, 6.0)
    """
    _index(protocol, PROTOCOLS, "protocol")
    return (2.0 if cpu_vendor == "amd" else 1.0) * (3 if protocol == "Simple" else 1) * _US


def _log2i(n):  # utils.h log2i: floor(log2(n)), 0 for n <= 1
    return int(n).bit_length() - 1 if n > 0 else 0


def size_factors(comm, op, algorithm, protocol, nbytes):
    """NCCL's corrections of its own model by call size: ``(latency factor, bandwidth factor)``.

    ``ncclTopoGetAlgoTime`` (v2.30.7-1) scales what ``ncclTopoTuneModel`` gives a call
    by its size, because, in its source's words, "Trees are not perfectly sticking to
    the model for medium sizes": tree allreduce's bandwidth by ``treeCorrectionFactor``
    below 512 MiB, NVLS tree allreduce's by the same table below 1 GiB on Blackwell
    (sm >= 100) with x86 hosts (``cpuArch == NCCL_TOPO_CPU_ARCH_X86``; since v2.29), and
    the latency of an inter-node Simple ring allreduce by 1.9 (sm < 80) or 1.4 once each
    rank-channel carries >= 64 bytes ("Plateau effect of ring").

    Parameters
    ----------
    comm : Comm
    op, algorithm, protocol : str
    nbytes : int
        Message size in bytes, >= 1.

    Returns
    -------
    (float, float)
        The factor of the latency and of the bandwidth (1.0 where NCCL has none).

    Examples
    --------
    >>> t = Comm(16, 2, 80, {"ring": Graph(8, 20e9, 20e9), "tree": Graph(8, 20e9, 20e9)})
    >>> size_factors(t, "allreduce", "tree", "LL128", 2**20)    # log2(2**20 / 64) = 14
    (1.0, 0.6)
    >>> size_factors(t, "allreduce", "ring", "Simple", 2**20)
    (1.4, 1.0)
    >>> size_factors(t, "allgather", "ring", "Simple", 2**20)
    (1.0, 1.0)
    """
    _check(comm, op, algorithm, protocol)
    size = check_int(nbytes, "nbytes", error=NcclModelError)
    log_size = _log2i(size >> 6) if size >= 64 else -1   # bitops.h log2Down(0) is -1
    lat, bw = 1.0, 1.0
    row = TREE_CORRECTION_FACTOR[PROTOCOLS.index(protocol)]
    if algorithm == "tree" and op == "allreduce" and 0 <= log_size < 23:
        bw = row[log_size]
    if (algorithm == "nvls_tree" and op == "allreduce" and 0 <= log_size < 24 and comm.compcap >= 100
            and comm.cpu_vendor != "arm"):
        bw = row[log_size]
    if (algorithm == "ring" and protocol == "Simple" and comm.n_nodes > 1 and op == "allreduce"
            and size / (comm.graphs["ring"].n_channels * comm.n_ranks) >= 64):
        lat = 1.9 if comm.compcap < 80 else 1.4
    return lat, bw


# Threads a channel's block runs per protocol (src/include/device.h: NCCL_LL_MAX_NTHREADS 512,
# NCCL_LL128_MAX_NTHREADS 640, NCCL_SIMPLE_MAX_NTHREADS 512; tuning.cc gives a ring Simple 256
# where the ring graph's bwIntra x nChannels is at most PCI_BW) and the bytes a thread must
# have before NCCL adds a channel (src/include/comm.h NCCL_LL_THREAD_THRESHOLD 8,
# NCCL_LL128_THREAD_THRESHOLD 8, NCCL_SIMPLE_THREAD_THRESHOLD 64; ring LL x nRanks).
_MAX_THREADS = types.MappingProxyType({"LL": 512, "LL128": 640, "Simple": 512})
_THREAD_THRESHOLD = types.MappingProxyType({"LL": 8, "LL128": 8, "Simple": 64})


def call_channels(comm, op, algorithm, protocol, nbytes):
    """Channels NCCL runs one ring or tree call on: fewer than the graph's for small calls.

    enqueue.cc ``topoGetAlgoInfo`` (v2.30.7-1, "Ring/Tree channel tuning"): starting
    from the graph's channels, NCCL drops one while ``nBytes < nc x nt x
    threadThreshold`` and ``nc >= 2``, with ``nt`` the protocol's threads a channel
    (256 for a ring Simple whose graph carries at most ``PCI_BW``, 12 GB/s) and
    ``threadThreshold`` 8 bytes a thread for LL and LL128 (LL on a ring x nRanks) and 64
    for Simple. A single call then runs on all ``nc`` channels (``scheduleCollTasksToPlan``
    spreads one task's traffic over them). NVLS, NVLS tree, CollNet and PAT keep theirs.

    Parameters
    ----------
    comm : Comm
    op, algorithm, protocol : str
    nbytes : int
        Message size in bytes (``nBytes``: the whole buffer of an allgather), >= 1.

    Returns
    -------
    int

    Examples
    --------
    >>> c = Comm(8, 1, 70, {"ring": Graph(6, 20e9, 20e9)})
    >>> call_channels(c, "allreduce", "ring", "LL", 8)          # 8 < 512 x 64 bytes
    1
    >>> call_channels(c, "allreduce", "ring", "LL", 2**16)      # 65536 < 3 x 512 x 64
    2
    >>> call_channels(c, "allreduce", "ring", "Simple", 2**20)  # 1 MiB >= 6 x 512 x 64
    6
    """
    _check(comm, op, algorithm, protocol)
    size = check_int(nbytes, "nbytes", error=NcclModelError)
    nc = comm.graphs["tree" if algorithm == "pat" else algorithm].n_channels
    if algorithm not in ("ring", "tree"):
        return nc
    ring = comm.graphs.get("ring")
    nt = _MAX_THREADS[protocol]
    if (algorithm == "ring" and protocol == "Simple" and ring is not None
            and ring.bw_intra * ring.n_channels <= PCI_BW * _GB):
        nt = 256
    threshold = _THREAD_THRESHOLD[protocol] * (comm.n_ranks if (algorithm, protocol) == ("ring", "LL")
                                                else 1)
    while size < nc * nt * threshold and nc >= 2:
        nc -= 1
    return nc


def algo_time(comm, op, algorithm, protocol, nbytes):
    """Predicted time of one call: ``ncclTopoGetAlgoTime`` (latency + bytes / bandwidth).

    Both terms scaled by NCCL's corrections by size (:func:`size_factors`). ``inf``
    where NCCL's bandwidth is 0.

    Parameters
    ----------
    comm : Comm
    op, algorithm, protocol : str
    nbytes : int
        Message size in bytes (nccl-tests' "size"), >= 1.

    Returns
    -------
    float
        Seconds, or ``math.inf``.

    Examples
    --------
    >>> c = Comm(8, 1, 80, {"ring": Graph(12, 20e9, 20e9)})
    >>> round(algo_time(c, "allreduce", "ring", "Simple", 2**30) * 1e3, 4)  # 56 us + 1 GiB / 137 GB/s
    7.8854
    """
    _check(comm, op, algorithm, protocol)
    size = check_int(nbytes, "nbytes", error=NcclModelError)
    bw = bandwidth(comm, op, algorithm, protocol) / _GB
    if bw == 0:
        return math.inf
    lat = latency(comm, op, algorithm, protocol) / _US
    lat_factor, bw_factor = size_factors(comm, op, algorithm, protocol, size)
    return (lat * lat_factor + size / (1000 * bw * bw_factor)) * _US


def choose(comm, op, nbytes):
    """NCCL's choice: the (algorithm, protocol) of least :func:`algo_time`.

    Ties go to the first in NCCL's loop order (algorithm, then protocol).

    Parameters
    ----------
    comm : Comm
    op : str
    nbytes : int

    Returns
    -------
    Choice

    Raises
    ------
    NcclModelError
        If no graph in ``comm`` can run ``op``.

    Examples
    --------
    >>> c = Comm(8, 1, 80, {"ring": Graph(12, 20e9, 20e9), "tree": Graph(12, 20e9, 20e9)})
    >>> choose(c, "allreduce", 8)[:2], choose(c, "allreduce", 2**30)[:2]
    (('ring', 'LL'), ('ring', 'Simple'))
    """
    best = None
    for algorithm in _MODELLED:
        for protocol in PROTOCOLS:
            t = algo_time(comm, op, algorithm, protocol, nbytes)
            if t < math.inf and (best is None or t < best.time):
                bw = bandwidth(comm, op, algorithm, protocol)
                best = Choice(algorithm, protocol, t, bw)
    if best is None:
        raise NcclModelError(f"no algorithm in {sorted(comm.graphs)} can run {op!r}")
    return best
