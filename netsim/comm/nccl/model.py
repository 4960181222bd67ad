"""The NCCL model's plan of a call: NCCL's choice and the flows that carry it on the graph.

:func:`setup` reads the graph for a group of GPUs once; :func:`plan` plans a
call as NCCL plans it (:mod:`netsim.comm.nccl.tuning` chooses the algorithm,
protocol and channel count unless the caller fixes them) and returns its
latency and its flows on the real links. :mod:`netsim.comm.library` turns them into
ops of the trace being replayed (a lone call, :func:`netsim.nccl.simulate`, is
the replay of a one-op trace), so contention with everything else in flight is
counted by the engine:

* One compute op charges NCCL's latency for the call (``baseLat`` plus the
  per-step ``hwLat`` of every step, :func:`netsim.comm.nccl.tuning.latency`, with the
  network plugin's reported latency on every inter-node step,
  :data:`netsim.comm.nccl.hardware.NET_PLUGIN_LATENCY`, and for Simple once more, the
  GPUDirect RDMA flush, on GPUs before compute capability 90 only: NCCL's runtime
  does not flush from Hopper on, though its tuning charges it), with NCCL's own
  corrections by size (:func:`netsim.comm.nccl.tuning.size_factors`: the ring's
  "plateau" latency factor, and the time a tree, or a Blackwell NVLS tree on x86
  hosts, loses at medium sizes by ``treeCorrectionFactor``, as NCCL's bandwidth
  figure makes it), and, when one host thread
  launches on every GPU of a machine in turn, the wait for those launches
  (:mod:`netsim.comm.nccl.launch`); every flow waits for it.
* NCCL pipelines each channel in small chunks, so in the fluid limit every
  stage of the pipeline runs at once: each hop of each channel is one flow
  carrying all the bytes that hop moves during the call, and the call ends when
  the slowest flow ends. A ring hop of an allreduce carries ``2 (n-1)/n`` of the
  channel's share, of an allgather or reduce-scatter ``(n-1)/n``; a tree edge
  the channel's share up (reduce) and down (broadcast); an NVLS port
  ``(1 + 1/n)`` of it each way (multimem load-reduce of every slice, then the
  multicast of the result), at NCCL's NVLS efficiency (:data:`NVLS_EFFICIENCY`);
  a PAT channel (allgather and reduce-scatter at one GPU per machine) sends to
  peers ``2**d`` ranks away, Bruck's ``(n-1)/n`` of its share in all
  (:mod:`netsim.comm.nccl.transfers` lays every algorithm's channels out as these flows).
* The protocol's wire format: LL sends 8 bytes per 4 of data (``union
  ncclLLFifoLine``: two 4-byte flags beside two 4-byte words), LL128 128-byte
  lines with one 8-byte flag (``NCCL_LL128_LINEELEMS`` 16, ``NCCL_LL128_DATAELEMS``
  15), Simple the data alone (src/include/device.h, v2.30.7-1).
* Transports: peer-to-peer over NVLink or PCIe on the graph's own route; without
  P2P (a GPU with ``p2p=False``) every transfer is staged through host memory
  (:mod:`netsim.comm.nccl.staging`): in one machine in the receiver's (NCCL's SHM
  transport), across machines at both ends; across machines through the NIC of the channel's
  rail at each end (NET/IB, one channel per rail), reached from a GPU that is
  not next to it through the GPU that is (NCCL's PXN, over NVLink).
* Point-to-point calls (alltoall, sendrecv): every send runs on the channels
  NCCL v2.30.7-1's enqueue.cc gives it (:mod:`netsim.comm.nccl.p2p`: 8 for 128 MiB between
  two A100 on an NVSwitch, 32 from 512 MiB), each channel credited with the
  per-channel bandwidth of NCCL's ring graph, with LL for a send of at most
  16 KiB per channel; charged one ring step of latency inside a machine, and across
  machines the receiver's notice, the data's network latency and the proxy's posts of
  every remote send and receive (:func:`netsim.comm.nccl.p2p.latency`).
* GPU-side limits: a ring channel's flow out of a GPU is held to NCCL's
  per-channel limit of LL (``llMaxBw`` / channels) and LL128
  (``perChMaxRingLL128Bw``) in tuning.cc, and an NVLS tree channel's flows
  across machines to ``perChMaxNVLSTreeBw`` (:mod:`netsim.comm.nccl.limits`),
  as a rate bound of that flow in the engine (:func:`_wire_caps`); an NVLS channel
  inside one machine and a tree channel move their share at most at the bandwidth
  per channel NCCL's tuning gives the algorithm (:func:`_channel_caps`: a tree's
  includes ``perChMaxTreeBw`` and ``perChMaxTreeLL128Bw``).
* CollNet chain (SHARP): where every rail's network switch says ``sharp=True``
  (:func:`netsim.comm.nccl.hardware.sharp_switches`), as if NCCL's SHARP plugin were
  loaded, each machine runs the tree's chains and each channel's head sends its
  share to the rail's switch, which reduces and returns it: every NIC carries the
  buffer once each way at any machine count. NCCL's tuning of CollNet chain
  (``bwIntra``, ratio 1/2, latency ``2 (ppn - 1) intraLat + interLat``) decides
  whether it runs.

Not modelled: CollNet Direct, and TCP stacks that reduce on the CPU (no cited
host-side limit).
"""

import math
import types
from typing import NamedTuple

import networkx as nx

from netsim.network.compiled import Network
from netsim.checks import check_choice, check_int
from netsim.comm.nccl import hardware, launch as _launch, limits, p2p, search, staging, tuning
from netsim.comm.nccl.transfers import NVLS_EFFICIENCY, RING_SHARE, Transfers, lay_out
from netsim.comm.nccl.tuning import NcclModelError
from netsim.trace.collop import NCCL_HINTS
from netsim.trace.collop import OPS as TRACE_OPS

__all__ = ["OPS", "ALGORITHMS", "WIRE_FACTOR", "NVLS_EFFICIENCY", "Plan", "Setup", "Call",
           "setup", "plan"]

#: The operations the model plans: every op a trace may hold (their one home).
OPS = TRACE_OPS
#: The algorithms the model runs, ``ring`` first (their one home is the trace's vocabulary of
#: hints); NCCL's own enum order of its algorithms is :data:`tuning.NCCL_ALGO_ORDER`.
ALGORITHMS = NCCL_HINTS
# Bytes on the wire per data byte (src/include/device.h, see the module docstring).
WIRE_FACTOR = types.MappingProxyType({"LL": 16 / 8, "LL128": 16 / 15, "Simple": 1.0})



class Plan(NamedTuple):
    """What the model decided and what it got (read-only)."""

    op: str
    nbytes: int
    ranks: int
    nodes: int
    algorithm: str
    protocol: str
    channels: int
    latency: float   # s, the software latency charged (NCCL's tuning model)
    algbw: float     # bytes/s: nbytes / makespan
    busbw: float     # bytes/s: algbw x nccl-tests' bus factor of the op
    tuning_time: float  # s, NCCL's own prediction for the same choice (inf if it has none)


def _bottleneck(G, path):
    return min(G.edges[u, v]["bandwidth"] for u, v in zip(path, path[1:]))


def _intra_links(G, E, hw, m):
    """Machine ``m``'s links as NCCL's search sees them: ``link_bw``, ``n_links``, ``n_gpus``.

    ``link_bw`` is None on a machine of one GPU (no intra-node link).
    """
    local, cc = hw.machines[m], hw.compcap
    if len(local) < 2:
        kw = dict(link_bw=None)
    elif hw.nvswitch[m] is not None and hw.p2p:
        port = min(E.edges[hw.gpus[r], hw.nvswitch[m]]["bandwidth"] for r in local)
        kw = dict(link_bw=port)
    elif hw.intra == "nvlink" and hw.p2p:
        counts = hardware.nvlink_counts(G, [hw.gpus[r] for r in local], cc)
        per_gpu = min(sum(c for (a, _), c in counts.items() if a == i)
                      for i in range(len(local)))
        kw = dict(link_bw=tuning.nvlink_bw(cc), n_links=max(per_gpu, 1))
    else:
        ring = [hw.gpus[r] for r in local]
        hops = []
        for i, a in enumerate(ring):
            b = ring[(i + 1) % len(ring)]
            via = hw.cpu[local[i]] if not hw.p2p and hw.cpu[local[i]] else None
            legs = [(a, via), (via, b)] if via else [(a, b)]
            hops.append(min(_bottleneck(E, _path(E, u, v)) for u, v in legs))
        kw = dict(link_bw=min(hops))
    kw["n_gpus"] = len(local)
    return kw


def _comm(G, E, hw, sharp):
    """The :class:`tuning.Comm` NCCL's search would build on this hardware.

    ``sharp``: :func:`netsim.comm.nccl.hardware.sharp_switches` of the graph (None: no CollNet).
    """
    cc, n = hw.compcap, len(hw.gpus)
    graphs = {}
    if len(hw.machines) == 1:
        kw = dict(_intra_links(G, E, hw, 0), compcap=cc)
        link = "nvlink" if hw.intra == "nvlink" and hw.p2p else "pci"
    else:
        rails = min(len(x) for x in hw.nics)
        if rails == 0:
            raise NcclModelError("ranks span several machines but a machine has no nic node")
        nic_bw = min(d["bandwidth"] for nics in hw.nics for nic in nics
                     for _, other, d in E.edges(nic, data=True)
                     if hardware.link_class(E, nic, other) == "net")
        kw = dict(link_bw=nic_bw, n_links=rails, compcap=cc, net=True,
                  n_gpus=min(len(x) for x in hw.machines))
        link = "nvlink" if hw.intra == "nvlink" and hw.p2p else "pci"
    net_lat = hardware.net_latency(E, [nic for nics in hw.nics for nic in nics])
    c, bw = tuning.search_channels(**kw)
    graphs["ring"] = tuning.Graph(c, bw, bw, link=link, latency_inter=net_lat)
    if len(hw.machines) > 1:
        c2, bw2 = tuning.search_channels(**kw, pattern="tree", min_channels=c, max_channels=c)
        intra = min((_intra_links(G, E, hw, m) for m in range(len(hw.machines))),
                    key=lambda k: math.inf if k["link_bw"] is None
                    else k["link_bw"] * k.get("n_links", 1))
        graphs["tree"] = tuning.Graph(c2, tuning.raise_tree_intra(bw2, c2, compcap=cc, **intra),
                                      bw2, link=link, latency_inter=net_lat)
        if sharp:   # CollNet chain: the tree's channels and speeds
            graphs["collnet_chain"] = graphs["tree"]
    # ncclNvlsInit (transport/nvls.cc, v2.30.7-1) leaves NVLS off where the communicator
    # has fewer than 2 GPUs on the machine (its topology's ncclTopoGetGpuCount)
    if hw.nvls and cc >= 90 and hw.p2p and min(map(len, hw.machines)) >= 2:
        if len(hw.machines) == 1:
            c3, intra3, inter3 = search.nvls_intra(kw["link_bw"], kw["n_gpus"], cc)
            graphs["nvls"] = tuning.Graph(c3, intra3, inter3, link=link)
        else:
            c3, bw3 = tuning.search_channels(**kw, pattern="nvls", max_channels=search.MAX_NVLS_ARITY)
            graphs["nvls_tree"] = tuning.Graph(c3, bw3, bw3, link=link, latency_inter=net_lat)
    return tuning.Comm(n, len(hw.machines), cc, graphs, hw.cpu_vendor)


def _path(G, u, v):
    return nx.shortest_path(G, u, v, weight="latency")


def _check_algorithm(hw, comm, op, algorithm):
    check_choice(algorithm, "algorithm", ALGORITHMS, error=NcclModelError)
    if op in ("alltoall", "sendrecv"):
        if algorithm != "p2p":
            raise NcclModelError(f"{op} runs as point-to-point sends (algorithm 'p2p'), "
                                 f"not {algorithm!r}")
        return
    if algorithm == "p2p":
        raise NcclModelError(f"algorithm 'p2p' is for alltoall and sendrecv, not {op}")
    if algorithm in ("nvls", "nvls_tree"):
        if not hw.p2p:
            raise NcclModelError(f"{algorithm} needs GPU peer-to-peer access; a gpu node "
                                 f"says p2p=False")
        if not hw.nvls or hw.compcap < 90:
            raise NcclModelError(f"{algorithm} needs an NVSwitch with nvls=True (gen3, sm >= 90) "
                                 f"on every machine; this graph has none")
        if min(map(len, hw.machines)) < 2:
            raise NcclModelError(f"{algorithm} needs at least 2 of the group's GPUs on each "
                                 f"machine (ncclNvlsInit); a machine holds 1")
    if (algorithm == "collnet_chain" and len(hw.machines) > 1
            and "collnet_chain" not in comm.graphs):
        raise NcclModelError("collnet_chain needs network switches with sharp=True (InfiniBand "
                             "SHARP) joining every rail; this graph has none")
    if algorithm == "pat" and (op not in ("allgather", "reduce_scatter")
                               or len(hw.machines) != len(hw.gpus)):
        raise NcclModelError(f"pat runs allgather and reduce_scatter at one GPU per machine "
                             f"(ncclPatEnable), not {op} on {len(hw.gpus)} GPUs in "
                             f"{len(hw.machines)} machines")
    if algorithm in ("tree", "nvls_tree", "collnet_chain") and len(hw.machines) < 2:
        raise NcclModelError(f"{algorithm} runs across machines; all ranks are on one "
                             f"(give gpu nodes a 'node' attribute)")
    if algorithm == "nvls" and len(hw.machines) > 1:
        raise NcclModelError("nvls runs inside one machine; across machines use nvls_tree")
    if _graph(comm, algorithm) is None:
        raise NcclModelError(f"{algorithm} is not available on this hardware")


def _graph(comm, algorithm):
    """The search graph an algorithm runs on (PAT on the tree's, init.cc), or None."""
    return comm.graphs.get("tree" if algorithm == "pat" else algorithm)


def _choose(comm, hw, op, nbytes, algorithm, protocol):
    """NCCL's (algorithm, protocol), the caller's where given, and NCCL's predicted time."""
    if op in ("alltoall", "sendrecv"):
        return algorithm or "p2p", protocol, math.inf
    algos = ([algorithm] if algorithm else
             [a for a in tuning.NCCL_ALGO_ORDER if a in ALGORITHMS and _graph(comm, a) is not None])
    protos = [protocol] if protocol else list(tuning.PROTOCOLS)
    best = None
    for a in algos:
        for p in protos:
            t = tuning.algo_time(comm, op, a, p, nbytes)
            if t < math.inf and (best is None or t < best[2]):
                best = (a, p, t)
    if best is None:
        raise NcclModelError(f"NCCL runs no {algorithm or 'algorithm'} with "
                             f"{protocol or 'any protocol'} for {op} on this hardware")
    return best


def _p2p_plan(G, E, hw, comm, op, nbytes):
    """Channels and protocol of each send of a point-to-point call (:mod:`.p2p`)."""
    n, cc = len(hw.gpus), hw.compcap
    local = hw.machines[0]
    nvl = tuning.nvlink_bw(cc) if hw.intra == "nvlink" and hw.p2p else None
    if nvl and hw.nvswitch[0] is not None:
        port = min(E.edges[hw.gpus[r], hw.nvswitch[0]]["bandwidth"] for r in local)
        peer = [2 * max(1, int(port / nvl + 1e-9))]
    elif nvl:
        counts = hardware.nvlink_counts(G, [hw.gpus[r] for r in local], cc)
        full = len(counts) == len(local) * (len(local) - 1)
        peer = [2 * min(counts.values())] if full else [2]   # PATH_NVB or PCI: 2
    else:
        peer = [2]
    if len(hw.machines) > 1:
        peer.append(min(_net_peer_channels(E, hw, r) for r in range(n)))
    ring = comm.graphs["ring"]
    channels = p2p.comm_channels(ring.n_channels, cc, len(hw.machines), ring.bw_intra / 1e9)
    total, per_peer = p2p.p2p_channels(channels, peer, n, len(hw.machines))
    step = p2p.step_size("nvlink" if nvl else "pci", len(hw.machines))
    each = max(1, nbytes // n if op == "alltoall" else nbytes)
    k = p2p.send_channels(each, n, len(hw.machines), total, per_peer, step)
    return k, p2p.protocol(each, k)


def _net_peer_channels(E, hw, r):
    """:func:`p2p.net_peer_channels` of rank ``r``: its local NICs against its CPU path (GB/s)."""
    m, g = hw.machine[r], hw.gpus[r]
    nics = [nic for nic, near in zip(hw.nics[m], hw.rail_near[m]) if r in near] or hw.nics[m]
    cpu = hw.cpu[r]
    if cpu is not None:
        gpu_bw = _bottleneck(E, _path(E, g, cpu))
    else:   # no cpu node: the GPU's own PCIe link ("BW to CPU reflects the GPU bandwidth")
        gpu_bw = max((d["bandwidth"] for _, o, d in E.edges(g, data=True)
                      if hardware.link_class(E, g, o) == "pci"), default=math.inf)
    bws = []
    for nic in nics:
        out = max((d["bandwidth"] for _, o, d in E.edges(nic, data=True)
                   if hardware.link_class(E, nic, o) == "net"), default=math.inf)
        bws.append(min(_bottleneck(E, _path(E, g, nic)), out) / 1e9)
    return p2p.net_peer_channels(bws, gpu_bw / 1e9)


def _latency(comm, hw, op, algorithm, protocol, nbytes):
    """Seconds charged for a call beside its flows: NCCL's latency and its size correction.

    A collective pays tuning.cc's latency (the runtime's flush only, :func:`_runtime_flush`)
    times NCCL's latency factor by size, and the time NCCL's model adds to the call's
    bandwidth term at this size (:func:`netsim.comm.nccl.tuning.size_factors`: a tree at
    medium sizes runs at ``treeCorrectionFactor`` of its rate), ``nbytes / bw x (1/f - 1)``
    with NCCL's bandwidth ``bw``: a wait on no link, as NCCL's source leaves its cause (the
    pipeline at medium sizes) unnamed.
    """
    if op in ("alltoall", "sendrecv"):
        # NCCL's tuning has no entry for point-to-point: one ring step inside a machine;
        # across machines the receiver's notice, the data and the proxy's posts (p2p.latency).
        return p2p.latency(protocol, hw.intra, p2p.net_posts(op, hw.machine),
                           comm.graphs["ring"].latency_inter, hw.cpu_vendor,
                           flush=protocol == "Simple" and _runtime_flush(hw))
    lat = tuning.latency(comm, op, algorithm, protocol, flush=_runtime_flush(hw))
    lat_factor, bw_factor = tuning.size_factors(comm, op, algorithm, protocol, nbytes)
    bw = tuning.bandwidth(comm, op, algorithm, protocol)
    slower = nbytes / bw * (1 / bw_factor - 1) if bw > 0 else 0.0
    return lat * lat_factor + slower


def _runtime_flush(hw):
    """Whether NCCL's runtime flushes a GPUDirect RDMA receive (charged as time, not chosen by).

    NCCL v2.30.7-1 src/graph/paths.cc ``ncclTopoNeedFlush``: "Flush is required on
    Ampere and earlier"; from compute capability 90 the flush is none unless the
    plugin or ``NCCL_NET_FORCE_FLUSH`` (default 0) forces it, or a DataDirect NIC
    sits behind a C2C CPU link (not modelled: no graph here has one). tuning.cc
    charges the flush for every Simple inter-node step whatever the GPU (NVIDIA/nccl#2274
    asks about that gap), so NCCL's choice keeps it; the time charged for the call
    leaves it out where the runtime does not flush.
    """
    return hw.compcap < 90


# The algorithms whose channels move their share at most at NCCL's own per-channel figure.
_AT_NCCLS_RATE = ("nvls", "tree")


def _channel_caps(hw, comm, op, algorithm, protocol, channels):
    """Bytes/s at which one channel may move its share of the call, or None: ``cap(a, b)``.

    :func:`netsim.comm.nccl.transfers.lay_out` bounds each flow of the channel by this
    rate times the part of the share the flow carries. Point-to-point: each channel is
    credited with the per-channel bandwidth of NCCL's ring graph, as its tuning model
    credits every channel of a graph (tuning.cc ``busBw = nChannels * bw``):
    ``bwIntra`` toward a peer in the same machine, ``bwInter`` toward another.
    Collectives: likewise, each channel moves its share at most at the algorithm
    bandwidth per channel NCCL's tuning gives the plan
    (:func:`netsim.comm.nccl.tuning.bandwidth` over the graph's channels: the search's
    per-channel speed with tuning.cc's factors and caps of the algorithm and protocol,
    e.g. "Convert to NVLS busBW/channel" for NVLS), and within the GPU-side limits of
    tuning.cc as :func:`netsim.comm.nccl.limits.channel_cap` reads them (a ring's LL cap
    is per call, so on fewer channels than the graph's each gets more of it).
    """
    ring, wire = comm.graphs["ring"], WIRE_FACTOR[protocol]   # the graph's bw is on the wire
    if algorithm == "p2p":
        return lambda a, b: (ring.bw_intra if hw.machine[a] == hw.machine[b]
                             else ring.bw_inter) / wire
    rates = []
    if algorithm in _AT_NCCLS_RATE:
        figure = tuning.bandwidth(comm, op, algorithm, protocol) / _graph(comm, algorithm).n_channels
        if figure > 0:
            rates.append(figure)
    limit = limits.channel_cap(comm, algorithm, protocol, channels)
    if limit is not None:   # a ring's limit is a hop's rate; the rest are the share's
        n = len(hw.gpus)
        rates.append(limit / RING_SHARE[op](n) if algorithm == "ring" and op in RING_SHARE
                     else limit)
    if not rates:
        return None
    rate = min(rates)
    return lambda a, b: rate


def _wire_caps(cap, wire):
    """``bound(a, b)``: the rate bound, in wire bytes/s, of a channel's flow out of rank ``a``.

    The engine holds every such flow to it (a per-flow rate bound, as SimGrid's
    solver bounds a variable), so it shares ``a``'s links with the rest within
    its channel's GPU-side limit; None where the call has no limit.
    """
    if cap is None:
        return lambda a, b: None
    return lambda a, b: cap(a, b) * wire


class Setup(NamedTuple):
    """What the model reads once for a group of GPUs (:func:`setup`)."""

    G: object        # the graph as given (NVLink counts, rings)
    hw: object       # hardware.Hardware of the group
    E: object        # the effective graph (shared by the calls of one replay)
    sharp: object    # the SHARP switches, or None
    comm: object     # tuning.Comm: the graphs NCCL's search would build
    memory: object = None   # cpu node -> memory node transfers are staged in, without P2P


class Call(NamedTuple):
    """One planned call: NCCL's choice and the flows that carry it (:func:`plan`)."""

    op: str
    nbytes: int
    ranks: int
    nodes: int        # machines
    algorithm: str
    protocol: str
    channels: int
    latency: float    # s, NCCL's latency for the call
    tuning_time: float
    flows: tuple      # (from node, to node, bytes) on ``E``
    launch: float = 0.0   # s, the wait for kernel launches beyond it (:mod:`.launch`)
    bounds: tuple = ()    # per flow, its rate bound in bytes/s (inf: none)


def setup(G, ranks=None, E=None):
    """Read the graph for a group of GPUs: hardware, effective graph, NCCL's search.

    Parameters
    ----------
    G : networkx.Graph
        Hardware following the attribute contract of :mod:`netsim.comm.nccl`.
    ranks : sequence of nodes, optional
        The gpu node of each member (default every gpu node in graph order).
    E : networkx.Graph, optional
        The effective graph of an earlier group of the same replay, to share
        (host memory nodes are added to it); None builds one.

    Returns
    -------
    Setup

    Raises
    ------
    NcclModelError
        For ranks that are not gpu nodes, or ``E`` of another GPU generation.

    Examples
    --------
    >>> import networkx as nx
    >>> G = nx.Graph(); G.add_nodes_from(["g0", "g1"], kind="gpu", model="V100", sm=70)
    >>> G.add_edge("g0", "g1", bandwidth=25e9, latency=0.0)
    >>> s = setup(G); s.hw.compcap, s.E.edges["g0", "g1"]["bandwidth"]
    (70, 20000000000.0)
    """
    hw = hardware.describe(G, ranks, None if E is None else E.graph.get("nccl_cpu_vendor"),
                           None if E is None else E.graph.get("nccl_position"))
    if E is None:
        Network(G)  # the edges' bandwidth and latency are checked before they are read
        E = hardware.effective_graph(G, hw.compcap)
        E.graph["nccl_compcap"] = hw.compcap
        E.graph["nccl_cpu_vendor"] = hw.cpu_vendor
        E.graph["nccl_position"] = {n: i for i, n in enumerate(G.nodes)}   # G's node order
    elif E.graph.get("nccl_compcap") != hw.compcap:
        raise NcclModelError(f"collectives of one replay run on GPUs of different compute "
                             f"capabilities ({E.graph.get('nccl_compcap')} and {hw.compcap}); "
                             f"the model counts links for one generation")
    sharp = hardware.sharp_switches(E, hw)
    memory = None if hw.p2p else staging.add_host_memory(E, hw.cpu)
    return Setup(G, hw, E, sharp, _comm(G, E, hw, sharp), memory)


def plan(s, op, nbytes, algorithm=None, protocol=None, channels=None, launch="proc"):
    """Plan one call on a :class:`Setup`: NCCL's algorithm, protocol, channels and flows.

    Parameters
    ----------
    s : Setup
    op, nbytes, algorithm, protocol, channels, launch
        As for :func:`netsim.nccl.simulate`.

    Returns
    -------
    Call

    Raises
    ------
    NcclModelError
        For an unknown op, algorithm, protocol or launch mode, ``nbytes`` or
        ``channels`` below 1, or an algorithm the hardware cannot run.

    Examples
    --------
    >>> import networkx as nx
    >>> G = nx.Graph(); G.add_nodes_from(["g0", "g1"], kind="gpu", model="V100", sm=70)
    >>> G.add_edge("g0", "g1", bandwidth=25e9, latency=0.0)
    >>> c = plan(setup(G), "allreduce", 10**9, algorithm="ring", protocol="Simple")
    >>> c.channels, c.flows
    (1, (('g0', 'g1', 1000000000.0), ('g1', 'g0', 1000000000.0)))
    """
    check_choice(op, "op", OPS, error=NcclModelError)
    nbytes = check_int(nbytes, "nbytes", error=NcclModelError)
    if protocol is not None and protocol not in tuning.PROTOCOLS:
        raise NcclModelError(f"unknown protocol {protocol!r}; known: {', '.join(tuning.PROTOCOLS)}")
    hw, E, comm = s.hw, s.E, s.comm
    wait = _launch.launch_delay(s.G, hw, launch)
    if algorithm is not None:
        _check_algorithm(hw, comm, op, algorithm)
    if op in ("alltoall", "sendrecv"):
        k, proto = _p2p_plan(s.G, E, hw, comm, op, nbytes)
        channels = k if channels is None else channels
        protocol = protocol or proto
    algorithm, protocol, predicted = _choose(comm, hw, op, nbytes, algorithm, protocol)
    if channels is None:
        channels = (_graph(comm, algorithm) or comm.graphs["ring"]).n_channels
        if algorithm in ("ring", "tree"):   # fewer for a small call (tuning.call_channels)
            channels = tuning.call_channels(comm, op, algorithm, protocol, nbytes)
    # NCCL allocates at most MAXCHANNELS channels per communicator (search.MAX_CHANNELS).
    channels = check_int(channels, "channels", maximum=search.MAX_CHANNELS, error=NcclModelError)
    cap = _wire_caps(_channel_caps(hw, comm, op, algorithm, protocol, channels),
                     WIRE_FACTOR[protocol])
    flows = Transfers(hw, WIRE_FACTOR[protocol], s.memory)
    lay_out(s.G, hw, flows, op, algorithm, nbytes, channels, cap, s.sharp)
    return Call(op, nbytes, len(hw.gpus), len(hw.machines), algorithm, protocol, channels,
                _latency(comm, hw, op, algorithm, protocol, nbytes), predicted, tuple(flows.flows), wait,
                tuple(flows.bounds))
