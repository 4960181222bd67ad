"""What the NCCL model reads from a graph: GPUs, machines, link classes, NIC rails, rings.

Everything here is derived from node and edge attributes only (the contract in
:mod:`netsim.comm.nccl`), so a user's own networkx graph works as well as a builder's.

Link classes: an edge is ``"nvlink"`` (NVLink or an NVSwitch port), ``"pci"``
(PCIe, a CPU socket link) or ``"net"`` (a NIC's port, a network switch, a host),
from its ``technology`` when it names one, else from the kinds of its ends.

References
----------
.. [1] NVIDIA NCCL v2.30.7-1, src/graph/topo.h (``SM70_NVLINK_BW`` ...),
   src/graph/topo.cc (``kvDictPciGen``), src/graph/search.cc (rings tried over
   NVLink first, then PCIe, then the NICs), src/graph/trees.cc (``ncclGetBtree``,
   ``ncclGetDtree``: the double binary tree).
.. [2] NVIDIA P100, V100, A100 and H100 whitepapers (2016-2022): one NVLink moves
   20 GB/s (NVLink1) or 25 GB/s (NVLink2-4) per direction; NVIDIA Blackwell architecture
   technical brief (2024): fifth-generation NVLink, 18 links and 1.8 TB/s per GPU, so
   50 GB/s per link per direction.
"""

import itertools
import types
from collections import deque
from typing import NamedTuple

import networkx as nx

from netsim.comm.nccl.tuning import CPU_LINK_BW, NcclModelError, nvlink_bw

__all__ = ["Hardware", "NVLINK_RATE", "PCIE_EFFICIENCY",
           "NET_PLUGIN_LATENCY", "net_latency", "sharp_switches", "link_class",
           "nvlink_efficiency", "describe", "effective_graph", "nvlink_counts", "rings",
           "btree_parents"]

# Data rate of one NVLink per direction, by compute capability (whitepapers [2]; sm86: the RTX
# 3090 bridge's four links, 112.5 GB/s both ways in all, NVIDIA GeForce RTX 3090 product page):
# the datasheet's figure, not NCCL's (NCCL's own figure per link is topo.h ``SM*_NVLINK_BW``,
# :data:`netsim.comm.nccl.tuning.NVLINK_BW`; divided by this it is the share NCCL reaches). The
# model needs it for a graph that gives an NVLink edge's ``bandwidth`` but not its ``links``
# (the contract's default, :func:`nvlink_counts`) and to scale every NVLink edge to NCCL's
# figure (:func:`nvlink_efficiency`). The datasheet's home is ``topologies.links.NVLINK`` (by
# NVLink generation, what the builders use); the core may not import it, so sm60-90 repeat
# its NVLink1-4 figures here, and tests/test_datasheet_copies_agree.py holds the two equal.
NVLINK_RATE = types.MappingProxyType({60: 20e9, 70: 25e9, 80: 25e9, 86: 14.0625e9, 90: 25e9,
                                      100: 50e9})
# NCCL counts a PCIe lane as 6 Gb/s at gen3 (topo.cc ``kvDictPciGen`` 60 x 100 Mb/s,
# ``width * speed / 80`` GB/s), against the 8 GT/s x 128/130 a lane carries: 0.762.
# Gen4 and gen5 double both numbers, so the share is the same; gen6 (FLIT coding, 242 of
# 256 bytes: topologies.links) carries 60.5 Gb/s a lane against NCCL's 48, so NCCL's share
# there is 0.79 and this one undercounts a gen6 link by 4 %.
PCIE_EFFICIENCY = 6.0 / (8.0 * 128 / 130)

# The latency (s) a network plugin reports to NCCL (``ncclNetProperties.latency``), which the
# search copies into ``graph->latencyInter`` (search.cc) and tuning.cc adds to every
# inter-node step. NCCL's own InfiniBand/RoCE and socket transports leave it 0 ("Not set",
# src/transport/net_ib/init.cc and net_socket.cc, v2.30.7-1); AWS's EFA plugin reports 75 us
# on p4d, p4de and p5/p5e alike (aws-ofi-nccl src/platform-aws.cpp, ``platform_data_map``
# ``.latency``, since d87d61e "Variable internode latency reported to NCCL", 2023, and
# unchanged at 2daf7d3, 2026: only p5en, p6 and later get 35 us; the plugin's comment calls
# 75 us empirical, chosen so that NCCL's tuner picks well on p5). Keyed by the technology of
# the NIC's network edge; the plugin does not separate p4d's EFA from p5's. ``EFAv3`` (200 Gb/s
# interfaces) is p5en's, which the same table gives 35 us.
NET_PLUGIN_LATENCY = types.MappingProxyType({"EFA": 75e-6, "EFAv3": 35e-6})

# The socket link NCCL assumes for a technology (topo.h QPI_BW, SKL_QPI_BW; AMD_BW for xGMI).
_SOCKET_LINK = types.MappingProxyType({"qpi": "qpi", "upi": "skl_qpi", "xgmi": "amd"})
_NET_KINDS = frozenset({"switch", "host"})
_PCI_KINDS = frozenset({"pcie_switch", "cpu"})


class Hardware(NamedTuple):
    """The graph as the NCCL model sees it (see :func:`describe`)."""

    gpus: tuple          # graph node of each rank
    machine: tuple       # machine index of each rank
    machines: tuple      # per machine, the ranks on it (tuple of tuples), machine order
    compcap: int         # the lowest compute capability of the ranks
    p2p: bool            # every rank allows GPU peer-to-peer
    nvswitch: tuple      # per machine, its NVSwitch node or None
    nvls: bool           # every machine's NVSwitch says ``nvls``
    nics: tuple          # per machine, its NIC nodes (rails in graph order)
    rail_gpu: tuple      # per machine, per rail, the rank nearest that NIC (least used first)
    rail_near: tuple     # per machine, per rail, every rank nearest that NIC
    cpu: tuple           # per rank, the nearest CPU node or None
    intra: str           # "nvlink" when the machines' GPUs are joined by NVLink, else "pci"
    cpu_vendor: str      # "amd" if a CPU node says ``vendor="amd"``, "arm" if one says
    #                      ``vendor="arm"`` (NCCL's cpuArch ARM: Grace), else "intel"


def _compcap(G, node):
    """A gpu node's compute capability x 10: its ``sm``, else 80 (the documented default).

    The core knows no product names: a node that names its ``model`` but not its ``sm`` is
    refused rather than read as sm 80 (``topologies.devices.compute_capability`` gives it).
    """
    data = G.nodes[node]
    if "sm" in data:
        return int(data["sm"])
    if "model" in data:
        raise NcclModelError(f"gpu node {node!r} names model {data['model']!r} but not its "
                             f"compute capability: set sm (x 10, e.g. sm=90 for 9.0; "
                             f"topologies.devices.compute_capability gives it for the models "
                             f"it knows)")
    return 80


def net_latency(G, nics):
    """The latency the network plugin of these NICs reports to NCCL, in seconds.

    The largest :data:`NET_PLUGIN_LATENCY` of the ``technology`` of any network
    edge of ``nics``; 0 for technologies whose plugin reports none (InfiniBand,
    RoCE, Ethernet) or edges that name no technology.

    Parameters
    ----------
    G : networkx.Graph
    nics : iterable of nodes

    Returns
    -------
    float

    Examples
    --------
    >>> import networkx as nx
    >>> G = nx.Graph()
    >>> G.add_edge("nic0", "sw", technology="EFA", bandwidth=12.5e9, latency=0)
    >>> G.add_edge("nic1", "sw", technology="NDR", bandwidth=50e9, latency=0)
    >>> G.nodes["sw"]["kind"] = "switch"
    >>> net_latency(G, ["nic0"]), net_latency(G, ["nic1"])
    (7.5e-05, 0.0)
    """
    return max((NET_PLUGIN_LATENCY.get(d.get("technology"), 0.0) for nic in nics
                for _, other, d in G.edges(nic, data=True)
                if link_class(G, nic, other) == "net"), default=0.0)


def sharp_switches(G, hw):
    """Per rail, the network switch that reduces it in the network (SHARP), or None.

    For rail ``r`` (the ``r``-th NIC of every machine) the aggregation switch is
    the network switch nearest to all of them (least largest hop count over the
    network's nodes, then graph order); CollNet can run when every rail's
    switch says ``sharp=True``.

    Parameters
    ----------
    G : networkx.Graph
    hw : Hardware
        :func:`describe` of the graph.

    Returns
    -------
    tuple of nodes, or None
        None for one machine, a machine without NICs, or a rail whose switch
        has no ``sharp``.

    Examples
    --------
    >>> import networkx as nx
    >>> G = nx.Graph()
    >>> for m in range(2):
    ...     G.add_node(f"g{m}", kind="gpu", model="A100", sm=80, node=m)
    ...     G.add_node(f"nic{m}", kind="nic")
    ...     G.add_edge(f"g{m}", f"nic{m}", bandwidth=25e9, latency=0)
    ...     G.add_edge(f"nic{m}", "leaf", bandwidth=25e9, latency=0)
    >>> G.nodes["leaf"].update(kind="switch", sharp=True)
    >>> sharp_switches(G, describe(G))
    ('leaf',)
    """
    rails = min((len(x) for x in hw.nics), default=0)
    if len(hw.machines) < 2 or rails == 0 or not any(
            d.get("kind") == "switch" and d.get("sharp", False) for _, d in G.nodes(data=True)):
        return None   # no switch reduces in the network
    net = G.subgraph(n for n, k in G.nodes(data="kind") if k in _NET_KINDS or k == "nic")
    order = {n: i for i, n in enumerate(G.nodes)}
    picks = []
    for r in range(rails):
        hops = [nx.single_source_shortest_path_length(net, nics[r]) for nics in hw.nics]
        switches = [n for n, k in net.nodes(data="kind") if k == "switch"
                    and all(n in h for h in hops)]
        if not switches:
            return None
        best = min(switches, key=lambda n: (max(h[n] for h in hops), order[n]))
        if not G.nodes[best].get("sharp", False):
            return None
        picks.append(best)
    return tuple(picks)


def link_class(G, u, v):
    """``"nvlink"``, ``"pci"`` or ``"net"``: the class of the edge ``(u, v)``.

    Parameters
    ----------
    G : networkx.Graph
    u, v : node

    Returns
    -------
    str

    Examples
    --------
    >>> import networkx as nx
    >>> G = nx.Graph()
    >>> G.add_nodes_from(["g0", "g1"], kind="gpu"); G.add_node("p", kind="pcie_switch")
    >>> G.add_edge("g0", "g1"); G.add_edge("g0", "p"); G.add_edge("p", "g1", technology="NDR")
    >>> link_class(G, "g0", "g1"), link_class(G, "g0", "p"), link_class(G, "p", "g1")
    ('nvlink', 'pci', 'net')
    """
    tech = str(G.edges[u, v].get("technology", "")).casefold()
    if tech:
        if tech.startswith(("nvlink", "nvswitch")):
            return "nvlink"
        if tech.startswith("pci") or tech in ("qpi", "upi", "xgmi"):
            return "pci"
        return "net"
    kinds = {G.nodes[u].get("kind"), G.nodes[v].get("kind")}
    if kinds & _NET_KINDS or kinds == {"nic"}:
        return "net"
    if kinds & _PCI_KINDS or "nic" in kinds:
        return "pci"
    if kinds <= {"gpu", "nvswitch"}:
        return "nvlink"
    return "net"


def nvlink_efficiency(compcap):
    """Share of an NVLink's rate NCCL counts on: ``SM*_NVLINK_BW`` / the link's data rate.

    Parameters
    ----------
    compcap : int
        Compute capability x 10.

    Returns
    -------
    float

    Examples
    --------
    >>> nvlink_efficiency(70), round(nvlink_efficiency(90), 3)
    (0.8, 0.824)
    """
    return nvlink_bw(max(compcap, 60)) / NVLINK_RATE[_generation(compcap)]


def _generation(compcap):
    """The key of topo.h's NVLink table for a compute capability (as ``nvlink_bw``)."""
    return (100 if compcap >= 100 else 90 if compcap >= 90 else 86 if compcap == 86
            else 80 if compcap >= 80 else 70 if compcap >= 70 else 60)


def _near(G, start, want, through):
    """Nodes of kind in ``want`` nearest to ``start`` (BFS over kinds in ``through``)."""
    seen, frontier, found = {start}, deque([(start, 0)]), []
    best = None
    while frontier:
        node, d = frontier.popleft()
        if best is not None and d > best:
            break
        for nb in G.neighbors(node):
            if nb in seen:
                continue
            seen.add(nb)
            kind = G.nodes[nb].get("kind")
            if kind in want:
                found.append((d + 1, nb))
                best = d + 1
            elif kind in through:
                frontier.append((nb, d + 1))
    return [n for _, n in found]


def describe(G, ranks=None, cpu_vendor=None, position=None):
    """Read the graph: ranks, machines, NVSwitches, NIC rails, CPUs, compute capability.

    Parameters
    ----------
    G : networkx.Graph
        A graph following the attribute contract of :mod:`netsim.comm.nccl`.
    ranks : sequence of nodes, optional
        The GPU node of each rank (default: every ``kind="gpu"`` node in graph order).
    cpu_vendor : {"intel", "amd", "arm"}, optional
        The graph's CPU vendor when an earlier call has read it (it is the whole
        graph's: read once per replay, not once per group).
    position : dict, optional
        Each node's index in ``G``'s node order, when an earlier call has made it (the
        NIC rails are listed in that order; a graph of 16,384 GPUs has 43,000 nodes).

    Returns
    -------
    Hardware

    Raises
    ------
    NcclModelError
        For fewer than two ranks, a rank that is not a GPU node, or one given twice.

    Examples
    --------
    >>> import networkx as nx
    >>> G = nx.Graph()
    >>> G.add_nodes_from(["g0", "g1"], kind="gpu", model="H100", sm=90)
    >>> G.add_node("sw", kind="nvswitch", nvls=True)
    >>> G.add_edges_from([("g0", "sw"), ("g1", "sw")], bandwidth=450e9, latency=1e-7)
    >>> hw = describe(G)
    >>> hw.compcap, hw.machines, hw.nvswitch, hw.nvls, hw.intra
    (90, ((0, 1),), ('sw',), True, 'nvlink')
    """
    if not isinstance(G, nx.Graph):
        raise NcclModelError(f"topology must be a networkx graph, got {type(G).__name__}")
    if ranks is None:
        gpus = [n for n, k in G.nodes(data="kind") if k == "gpu"]
    elif isinstance(ranks, (str, bytes)) or not hasattr(ranks, "__iter__"):
        raise NcclModelError(f"ranks must be a sequence of gpu nodes (e.g. the first 8: "
                             f"[g for g, k in G.nodes(data='kind') if k == 'gpu'][:8]), got "
                             f"{type(ranks).__name__} {ranks!r:.40}")
    else:
        gpus = list(ranks)
    for g in gpus:
        if g not in G or G.nodes[g].get("kind") != "gpu":
            raise NcclModelError(f"rank node {g!r} is not a gpu node of the graph")
    if len(set(gpus)) != len(gpus):
        raise NcclModelError("ranks name the same gpu node twice")
    if len(gpus) < 2:
        raise NcclModelError(f"a collective needs >= 2 gpu ranks, got {len(gpus)}")
    labels = [G.nodes[g].get("node", 0) for g in gpus]
    order = list(dict.fromkeys(labels))
    machine = tuple(order.index(x) for x in labels)
    machines = tuple(tuple(r for r in range(len(gpus)) if machine[r] == m)
                     for m in range(len(order)))
    nvswitch, nvls, nics, rail_gpu, rail_near = [], True, [], [], []
    position = {n: i for i, n in enumerate(G.nodes)} if position is None else position
    for members in machines:
        sw = _near(G, gpus[members[0]], {"nvswitch"}, ())
        nvswitch.append(sw[0] if sw else None)
        nvls = nvls and bool(sw) and bool(G.nodes[sw[0]].get("nvls", False))
        rails = []
        for r in members:
            for nic in _near(G, gpus[r], {"nic"}, _PCI_KINDS):
                if nic not in rails:
                    rails.append(nic)
        rails = sorted(rails, key=position.__getitem__)
        nics.append(tuple(rails))
        picks, nears, used = [], [], {}
        for nic in rails:  # the nearest GPU, the least used first (two NICs on one switch)
            close = [r for r in members if gpus[r] in set(_near(G, nic, {"gpu"}, _PCI_KINDS))]
            pick = min(close or members, key=lambda r: used.get(r, 0))
            used[pick] = used.get(pick, 0) + 1
            picks.append(pick)
            nears.append(tuple(close))
        rail_gpu.append(tuple(picks))
        rail_near.append(tuple(nears))
    cpu = tuple((_near(G, g, {"cpu"}, {"pcie_switch"}) or [None])[0] for g in gpus)
    direct = any(link_class(G, gpus[a], b) == "nvlink" for a in range(len(gpus))
                 for b in G.neighbors(gpus[a]))
    return Hardware(
        gpus=tuple(gpus), machine=machine, machines=machines,
        compcap=min(_compcap(G, g) for g in gpus),
        p2p=all(bool(G.nodes[g].get("p2p", True)) for g in gpus),
        nvswitch=tuple(nvswitch), nvls=nvls, nics=tuple(nics), rail_gpu=tuple(rail_gpu),
        rail_near=tuple(rail_near), cpu=cpu,
        intra="nvlink" if direct else "pci", cpu_vendor=cpu_vendor or _cpu_vendor(G))


def effective_graph(G, compcap):
    """A copy of ``G`` whose links carry what NCCL counts on: NVLink, PCIe, sockets.

    NVLink edges get :func:`nvlink_efficiency`, PCIe edges :data:`PCIE_EFFICIENCY`;
    a link between two CPU sockets is held to the figure NCCL gives it (topo.h
    ``QPI_BW`` 6, ``SKL_QPI_BW`` 10, ``AMD_BW`` 16 GB/s: its technology ``QPI``,
    ``UPI`` or ``xGMI``, or a cpu node's ``vendor="amd"``), when that is lower;
    network links keep their bandwidth (NCCL takes a NIC's reported speed as it
    is; framing belongs to the core). ``links`` is dropped from the copy: by the
    contract of :mod:`netsim.comm.nccl` an edge's ``bandwidth`` is already its whole
    bundle of parallel links, and the model has read the count.

    Parameters
    ----------
    G : networkx.Graph
    compcap : int

    Returns
    -------
    networkx.Graph

    Examples
    --------
    >>> import networkx as nx
    >>> G = nx.Graph(); G.add_nodes_from(["a", "b"], kind="gpu")
    >>> G.add_edge("a", "b", bandwidth=25e9, latency=0.0)
    >>> effective_graph(G, 70).edges["a", "b"]["bandwidth"]
    20000000000.0
    """
    H = G.copy()
    eff = {"nvlink": nvlink_efficiency(compcap), "pci": PCIE_EFFICIENCY}
    amd = _cpu_vendor(G) == "amd"
    for u, v, d in H.edges(data=True):
        d.pop("links", None)  # read already; ``bandwidth`` is the whole bundle (the contract)
        if "bandwidth" not in d:
            continue
        if {H.nodes[u].get("kind"), H.nodes[v].get("kind")} == {"cpu"}:
            tech = str(d.get("technology", "")).casefold()
            key = "amd" if amd or tech == "xgmi" else _SOCKET_LINK.get(tech)
            if key:
                d["bandwidth"] = min(d["bandwidth"], CPU_LINK_BW[key] * 1e9)
            continue
        cls = link_class(H, u, v)
        if cls in eff:
            d["bandwidth"] = d["bandwidth"] * eff[cls]
    return H


def _cpu_vendor(G):
    """``"amd"`` if a cpu node says so or two sockets are joined by xGMI, ``"arm"`` if a cpu
    node says ``vendor="arm"``, else ``"intel"``."""
    for u, v, d in G.edges(data=True):
        if ({G.nodes[u].get("kind"), G.nodes[v].get("kind")} == {"cpu"}
                and str(d.get("technology", "")).casefold() == "xgmi"):
            return "amd"
    vendors = {str(d.get("vendor", "")).casefold() for _, d in G.nodes(data=True)
               if d.get("kind") == "cpu"}
    return "amd" if "amd" in vendors else "arm" if "arm" in vendors else "intel"


def nvlink_counts(G, gpus, compcap):
    """NVLinks between each pair of the given GPUs: ``links``, else bandwidth / one link's rate.

    Parameters
    ----------
    G : networkx.Graph
    gpus : sequence of nodes
        The GPUs, indexed 0..len-1 in the result.
    compcap : int
        Compute capability (one NVLink's rate, :data:`NVLINK_RATE`).

    Returns
    -------
    dict
        ``{(i, j): links}`` for both orders of every NVLink-joined pair.

    Examples
    --------
    >>> import networkx as nx
    >>> G = nx.Graph(); G.add_nodes_from("abc", kind="gpu")
    >>> G.add_edge("a", "b", bandwidth=50e9); G.add_edge("b", "c", bandwidth=25e9, links=3)
    >>> nvlink_counts(G, "abc", 70)
    {(0, 1): 2, (1, 0): 2, (1, 2): 3, (2, 1): 3}
    """
    rate = NVLINK_RATE[_generation(compcap)]
    counts = {}
    for a, b in itertools.combinations(range(len(gpus)), 2):
        u, v = gpus[a], gpus[b]
        if G.has_edge(u, v) and link_class(G, u, v) == "nvlink":
            d = G.edges[u, v]
            counts[a, b] = counts[b, a] = int(d.get("links") or max(1, round(d["bandwidth"] / rate)))
    return counts


def _hamiltonian_cycles(n, counts):
    """Every Hamiltonian cycle of the multigraph ``counts`` on ``0..n-1``, starting at 0."""
    out = []

    def extend(path, used):
        if len(path) == n:
            if (path[-1], 0) in counts:
                out.append(tuple(path))
            return
        for nxt in range(1, n):
            if nxt not in used and (path[-1], nxt) in counts:
                if len(path) == 1 or len(path) < n - 1 or nxt > path[1]:
                    extend(path + [nxt], used | {nxt})

    extend([0], {0})
    return [c for c in out if c[1] < c[-1]]  # one orientation of each


def _pack(cycles, counts, want):
    """The most edge-disjoint cycles (within link multiplicities), up to ``want``."""
    best = []

    def edges(c):
        return [(min(a, b), max(a, b)) for a, b in zip(c, c[1:] + c[:1])]

    def go(start, chosen, left):
        nonlocal best
        if len(chosen) > len(best):
            best = list(chosen)
        if len(best) >= want:
            return
        for i in range(start, len(cycles)):
            es = edges(cycles[i])
            if all(left[e] > 0 for e in es):
                for e in es:
                    left[e] -= 1
                go(i, chosen + [cycles[i]], left)
                for e in es:
                    left[e] += 1
                if len(best) >= want:
                    return

    go(0, [], {(a, b): c for (a, b), c in counts.items() if a < b})
    return best


def rings(G, hw, m, want):
    """Directed rings over the GPUs of machine ``m``, as NCCL's search finds them.

    NVLink first: on an NVSwitch every order is a ring (rank order is taken); on
    direct NVLinks, edge-disjoint Hamiltonian cycles of the NVLink multigraph
    (each used in both directions, so every link direction carries one ring);
    without NVLink (or with no Hamiltonian cycle) the ring is rank order over
    PCIe. Returns ranks, one tuple per ring; at least one ring.

    Parameters
    ----------
    G : networkx.Graph
    hw : Hardware
    m : int
        Machine index.
    want : int
        Rings wanted (the channel count); fewer come back when the links allow fewer.

    Returns
    -------
    list of tuple

    Examples
    --------
    >>> import networkx as nx
    >>> G = nx.Graph(); G.add_nodes_from(range(4), kind="gpu", model="V100", sm=70)
    >>> for a, b in [(0, 1), (1, 2), (2, 3), (3, 0), (0, 2), (1, 3)]:
    ...     G.add_edge(a, b, bandwidth=25e9, latency=1e-7)
    >>> rings(G, describe(G), 0, 2)   # K4 holds one Hamiltonian cycle per direction
    [(0, 1, 2, 3), (0, 3, 2, 1)]
    """
    local = hw.machines[m]
    if len(local) < 3 or hw.nvswitch[m] is not None or not hw.p2p:
        return [tuple(local)]
    counts = nvlink_counts(G, [hw.gpus[r] for r in local], hw.compcap)
    cycles = _pack(_hamiltonian_cycles(len(local), counts), counts, -(-want // 2))
    if not cycles:
        return [tuple(local)]
    out = []
    for c in cycles:
        out.append(tuple(local[i] for i in c))
        out.append(tuple(local[i] for i in (c[0],) + c[1:][::-1]))
    return out


def btree_parents(n, mirror=False):
    """Parent of each of ``n`` nodes in NCCL's binary tree (-1 for the root).

    Tree 0 is ``ncclGetBtree`` (trees.cc): node ``r``'s lowest set bit ``b``
    gives parent ``(r ^ b) | (b << 1)``, or ``r ^ b`` when that is out of range;
    node 0 is the root. Tree 1 (``ncclGetDtree``) is tree 0 shifted by one node
    when ``n`` is odd and mirrored (``n - 1 - r``) when even, so that every node
    is a leaf in one tree.

    Parameters
    ----------
    n : int
        Nodes (machines), >= 1.
    mirror : bool
        Tree 1 instead of tree 0.

    Returns
    -------
    list of int

    Examples
    --------
    >>> btree_parents(4), btree_parents(4, mirror=True)
    ([-1, 2, 0, 2], [1, 3, 1, -1])
    """
    def parent0(r):
        if r == 0:
            return -1
        b = r & -r
        up = (r ^ b) | (b << 1)
        return up if up < n else r ^ b

    if not mirror:
        return [parent0(r) for r in range(n)]
    if n % 2:
        to1 = [(r - 1) % n for r in range(n)]      # tree-0 position of node r
        from1 = [(p + 1) % n for p in range(n)]
    else:
        to1 = [n - 1 - r for r in range(n)]
        from1 = to1
    return [-1 if parent0(to1[r]) < 0 else from1[parent0(to1[r])] for r in range(n)]
