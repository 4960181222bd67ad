"""Single machines: GPUs under PCIe trees, NVLink meshes and NVSwitch fabrics.

Every builder returns an undirected :class:`networkx.Graph`; an edge is a
full-duplex link with ``bandwidth`` (bytes/s per direction) and ``latency``
(seconds), plus an informational ``link`` label such as ``"PCIe gen3 x16"`` or
``"NVLink2 x2"``. The GPUs (kind ``"gpu"``) are the ranks: they are added
first, in rank order, as ``"gpu0"``, ``"gpu1"``, ... CPU sockets are kind
``"cpu"``, PCIe switches ``"pcie_switch"``, NVSwitch fabrics ``"nvswitch"`` and
network adapters ``"nic"``.

Attributes a communication-library model reads (the graph contract, see
:mod:`topologies`): every edge carries ``technology`` (a key of
:data:`topologies.links.TECHNOLOGIES`, or of ``CPU_INTERCONNECT`` for a socket
link) and ``links`` (how many physical links the edge bundles); every GPU
``node`` (the machine's index, 0 here), ``model``, ``sm`` (CUDA compute
capability, :data:`topologies.devices.COMPUTE_CAPABILITY`), ``p2p``
(GPU peer-to-peer access possible) and ``launch`` (host seconds per kernel
launch, :data:`topologies.devices.LAUNCH_LATENCY`); an NVSwitch ``nvls`` (NVLink SHARP
in-switch reduction, third-generation NVSwitch and later); a CPU ``vendor``
(``"intel"`` for QPI/UPI sockets, ``"amd"`` for xGMI).

The NVSwitch machines and :func:`dgx1` take ``nodes``: more than one builds a
cluster of that machine with :func:`topologies.rails.cluster_of`.

All numbers come from :mod:`topologies.links` and :mod:`topologies.devices`, which cite
their sources.
"""

import networkx as nx

from netsim.checks import check_int, check_real
from netsim.errors import TopologyError

from topologies import _validate as _check
from topologies.devices import COMPUTE_CAPABILITY, compute_capability, host_cpu, launch_latency
from topologies.links import (
    CPU_INTERCONNECT,
    NVLINK,
    NVLINK_LATENCY,
    NVLINK_LINKS_PER_GPU,
    PCIE_LATENCY,
    PCIE_X16,
    SOCKET_LATENCY,
    technology,
)
from topologies.rails import cluster_of, one_machine

__all__ = ["pcie_tree", "pcie_box", "dgx1", "dgx_a100", "dgx_h100", "hgx_h200", "dgx_b200",
           "hgx_h800", "l40s_box"]

# pcie_tree models Intel Xeon boards (PCIe switches under QPI/UPI sockets); AMD EPYC
# boxes, whose GPUs sit on the sockets' own root ports, are pcie_box.
_INTEL_LINKS = {k: CPU_INTERCONNECT[k] for k in ("QPI", "UPI")}


def _gpu_attrs(fn, model, p2p):
    """The contract's GPU attributes: machine 0, model, compute capability, P2P, launch."""
    if not isinstance(p2p, bool):
        raise TopologyError(f"{fn}: p2p must be True or False, got {p2p!r}")
    canonical = {k.casefold(): k for k in COMPUTE_CAPABILITY}
    key = canonical.get(str(model).casefold().replace("-", ""))
    if key is None:
        raise TopologyError(f"{fn}: gpu must be one of {', '.join(COMPUTE_CAPABILITY)}, "
                            f"got {model!r}")
    return {"node": 0, "model": key, "sm": compute_capability(key), "p2p": p2p,
            "launch": launch_latency(key)}


def _pcie(gen, latency=PCIE_LATENCY):
    return {"bandwidth": PCIE_X16[gen], "latency": latency, "link": f"PCIe {gen} x16",
            "technology": f"PCIe-{gen}-x16", "links": 1}


def _cluster(fn, nodes, network, nic, build):
    """None for one plain machine, else the cluster of ``nodes`` machines ``build()``."""
    if one_machine(fn, nodes, network, nic):
        return None
    return cluster_of(build(), fn, nodes, network=network, nic=nic)


def pcie_tree(
    gpus_per_switch=2,
    switches_per_socket=2,
    sockets=2,
    gen="gen3",
    interconnect="QPI",
    socket_links=1,
    pcie_latency=PCIE_LATENCY,
    socket_latency=SOCKET_LATENCY,
    gpu="V100",
    p2p=True,
):
    """GPUs under PCIe switches under CPU sockets, the sockets joined by QPI/UPI.

    GPU ``i`` hangs off switch ``"pcie{i // gpus_per_switch}"``, and switch
    ``j`` off socket ``"cpu{j // switches_per_socket}"``, so GPUs are numbered
    socket-major. Every GPU-switch and switch-CPU link is a PCIe x16 link of
    generation ``gen``; the switches are non-blocking, so a switch's x16
    uplink is shared by its GPUs when they talk to the CPU or across
    switches. Every pair of sockets is joined by ``socket_links`` bonded
    links (a full mesh, as in glueless two- and four-socket Xeon boards).
    GPUs and switches carry their ``socket``.

    Parameters
    ----------
    gpus_per_switch, switches_per_socket, sockets : int, optional
        Counts, each >= 1 (default 2, 2, 2: the 8-GPU PCIe server).
    gen : {"gen3", "gen4", "gen5", "gen6"}, optional
        PCIe generation of every x16 link (see ``specs.PCIE_X16``).
    interconnect : {"QPI", "UPI"}, optional
        Socket link (see ``specs.CPU_INTERCONNECT``).
    socket_links : int, optional
        Links bonded between each pair of sockets, >= 1 (default 1). Xeon
        E5-2600 v4 parts have two QPI links and Xeon Scalable parts two or
        three UPI links.
    pcie_latency, socket_latency : float, optional
        Seconds per PCIe link and per socket link.
    gpu : str, optional
        GPU model, a key of :data:`topologies.devices.COMPUTE_CAPABILITY`
        (default ``"V100"``); sets the GPUs' ``model`` and ``sm``.
    p2p : bool, optional
        Whether the GPUs can reach each other's memory over PCIe (default
        True); False for boards or drivers without peer-to-peer access, where
        a library stages through host memory.

    Returns
    -------
    networkx.Graph
        With ``S = switches_per_socket * sockets`` switches and
        ``N = gpus_per_switch * S`` GPUs: ``N + S + sockets`` nodes and
        ``N + S + sockets * (sockets - 1) / 2`` edges. For ``sockets <= 2``
        the graph is a tree.

    Raises
    ------
    TopologyError
        If a count is < 1, ``gen`` or ``interconnect`` is unknown, or a
        latency is negative.

    References
    ----------
    .. [1] PCI-SIG, PCI Express Base Specification, Revisions 3.0-5.0.
    .. [2] Intel ARK, Xeon E5-2600 v4 (QPI) and Xeon Scalable (UPI) processors.

    Examples
    --------
    >>> G = pcie_tree()
    >>> [n for n, kind in G.nodes(data="kind") if kind == "gpu"][:3]
    ['gpu0', 'gpu1', 'gpu2']
    >>> G.edges["gpu0", "pcie0"]["link"], G.edges["cpu0", "cpu1"]["link"]
    ('PCIe gen3 x16', 'QPI x1')
    >>> round(G.edges["gpu0", "pcie0"]["bandwidth"] / 1e9, 2)
    15.75
    >>> G.edges["gpu0", "pcie0"]["technology"], G.nodes["gpu0"]["sm"]
    ('PCIe-gen3-x16', 70)
    """
    fn = "pcie_tree"
    gpus_per_switch = check_int(gpus_per_switch, f"{fn}: gpus_per_switch", error=TopologyError)
    switches_per_socket = check_int(switches_per_socket, f"{fn}: switches_per_socket",
                                    error=TopologyError)
    sockets = check_int(sockets, f"{fn}: sockets", error=TopologyError)
    gen = _check.choice(fn, "gen", gen, PCIE_X16)
    interconnect = _check.choice(fn, "interconnect", interconnect, _INTEL_LINKS)
    attrs = _gpu_attrs(fn, gpu, p2p)
    socket_links = check_int(socket_links, f"{fn}: socket_links", error=TopologyError)
    pcie_latency = check_real(pcie_latency, f"{fn}: pcie_latency (s)", lo=0, error=TopologyError)
    socket_latency = check_real(socket_latency, f"{fn}: socket_latency (s)", lo=0,
                                error=TopologyError)

    switches = sockets * switches_per_socket
    gpus = switches * gpus_per_switch
    _check.check_size(fn, 2 * gpus + 2 * switches + sockets + sockets * (sockets - 1) // 2,
                      f"gpus_per_switch={gpus_per_switch}, switches_per_socket="
                      f"{switches_per_socket}, sockets={sockets}")
    G = nx.Graph(
        name=f"pcie_tree({gpus} GPUs, {switches} switches, {sockets} sockets, "
        f"PCIe {gen} x16, {interconnect})"
    )
    for i in range(gpus):
        G.add_node(f"gpu{i}", kind="gpu", socket=i // gpus_per_switch // switches_per_socket,
                   **attrs)
    for j in range(switches):
        G.add_node(f"pcie{j}", kind="pcie_switch", socket=j // switches_per_socket)
    G.add_nodes_from((f"cpu{s}" for s in range(sockets)), kind="cpu", vendor="intel")

    pcie = _pcie(gen, pcie_latency)
    for i in range(gpus):
        G.add_edge(f"gpu{i}", f"pcie{i // gpus_per_switch}", **pcie)
    for j in range(switches):
        G.add_edge(f"pcie{j}", f"cpu{j // switches_per_socket}", **pcie)
    for a in range(sockets):
        for b in range(a + 1, sockets):
            G.add_edge(
                f"cpu{a}",
                f"cpu{b}",
                bandwidth=socket_links * CPU_INTERCONNECT[interconnect],
                latency=socket_latency,
                link=f"{interconnect} x{socket_links}",
                technology=interconnect,
                links=socket_links,
            )
    return G


# NVLinks between GPU pairs of the DGX-1 with V100 (hybrid cube-mesh): 1 or 2
# bonded links. From `nvidia-smi topo -m` on a DGX-1V (NV1/NV2 entries), which
# matches the whitepaper's figure: two fully connected quads 0-3 and 4-7 plus
# the links i <-> i+4, six links per GPU.
_DGX1_NVLINKS = {
    (0, 1): 1, (0, 2): 1, (0, 3): 2, (0, 4): 2,
    (1, 2): 2, (1, 3): 1, (1, 5): 2,
    (2, 3): 2, (2, 6): 1,
    (3, 7): 1,
    (4, 5): 1, (4, 6): 1, (4, 7): 2,
    (5, 6): 2, (5, 7): 1,
    (6, 7): 2,
}  # fmt: skip


def dgx1(nics=False, nodes=1, network="rail", nic=None):
    """NVIDIA DGX-1 with Tesla V100: 8 GPUs in an NVLink2 hybrid cube-mesh.

    The GPUs form two fully connected quads (GPUs 0-3 and 4-7) plus the links
    ``i <-> i+4``: four NVLink neighbours per GPU over six NVLink2 links, the
    pairs 0-3, 0-4, 1-2, 1-5, 2-3, 4-7, 5-6 and 6-7 with two bonded links
    (2 x 25 GB/s per direction), the others with one. Beside the NVLinks is
    the PCIe tree: four PCIe gen3 switches with two GPUs each (GPUs 0-1, 2-3
    on socket 0; 4-5, 6-7 on socket 1), two Xeon E5-2698 v4 sockets joined by
    their two 9.6 GT/s QPI links (modelled as one bonded link; we assume both
    links join the two sockets, as on standard two-socket boards).

    netsim sends each message on its lowest-latency path. With the default
    latencies (``specs.NVLINK_LATENCY`` below two PCIe links) NVLink-adjacent
    GPUs use their NVLink, and a GPU pair without an NVLink (such as 0 and 6)
    goes over two NVLinks through a third GPU rather than over PCIe and QPI,
    as NCCL's "NVLink through an intermediate GPU" path does.

    Parameters
    ----------
    nics : bool, optional
        Default False. Add the four EDR InfiniBand adapters ``"nic0"`` .. ``"nic3"`` (kind
        ``"nic"``), one on each PCIe switch over a gen3 x16 link. Their
        network ports are not modelled: link them to a cluster switch with
        bandwidth ``links.INFINIBAND["EDR"]`` to build a multi-node system,
        or give ``nodes``.
    nodes, network, nic : optional
        ``nodes > 1`` (or a ``nic``) builds
        ``gpu_cluster("dgx1", nodes, network, nic)``: DGX-1s whose four EDR
        adapters join a rail-optimised or fat-tree network (see
        :func:`topologies.rails.cluster_of`).

    Returns
    -------
    networkx.Graph
        8 GPUs, 4 PCIe switches, 2 CPUs (and 4 NICs) with 16 NVLink edges, 12
        PCIe edges (16 with NICs) and 1 QPI edge.

    Raises
    ------
    TopologyError
        If ``nics`` is not a bool (or 0/1), or a cluster option is bad.

    References
    ----------
    .. [1] NVIDIA, "NVIDIA DGX-1 With Tesla V100 System Architecture",
           whitepaper, 2017, section "DGX-1 NVLink Network Topology for
           Efficient Application Scaling" (hybrid cube-mesh: a cube with all
           twelve edges, some doubled, plus the diagonals of two faces).
    .. [2] ``nvidia-smi topo -m`` on a DGX-1V (NV1/NV2 matrix), e.g. as
           reproduced in gist.github.com/ashwin/e139748bdba15f5af63f0146d01ee4c3,
           and the DGX-1V NCCL topology dump in NVIDIA/nccl issue #671.
    .. [3] NVIDIA, "NVIDIA Tesla V100 GPU Architecture", whitepaper, 2017
           (25 GB/s per NVLink per direction, six links).
    .. [4] Intel ARK, Xeon E5-2698 v4: two QPI links at 9.6 GT/s.

    Examples
    --------
    >>> G = dgx1()
    >>> G.edges["gpu0", "gpu3"]["bandwidth"], G.edges["gpu0", "gpu1"]["bandwidth"]
    (50000000000.0, 25000000000.0)
    >>> sorted(n for n in G["gpu0"] if G.nodes[n]["kind"] == "gpu")
    ['gpu1', 'gpu2', 'gpu3', 'gpu4']
    >>> G.edges["gpu0", "gpu3"]["technology"], G.edges["gpu0", "gpu3"]["links"]
    ('NVLink2', 2)
    """
    if isinstance(nics, bool) or (isinstance(nics, int) and nics in (0, 1)):
        nics = bool(nics)
    else:
        raise TopologyError(f"dgx1: nics must be True or False, got {nics!r}")
    cluster = _cluster("dgx1", nodes, network, nic, lambda: dgx1(nics=True))
    if cluster is not None:
        return cluster
    G = pcie_tree(
        gpus_per_switch=2,
        switches_per_socket=2,
        sockets=2,
        gen="gen3",
        interconnect="QPI",
        socket_links=2,
        gpu="V100",
    )
    G.graph["name"] = "dgx1(8 V100, NVLink2 hybrid cube-mesh, PCIe gen3, QPI)"
    for (a, b), links in _DGX1_NVLINKS.items():
        G.add_edge(
            f"gpu{a}",
            f"gpu{b}",
            bandwidth=links * NVLINK["NVLink2"],
            latency=NVLINK_LATENCY,
            link=f"NVLink2 x{links}",
            technology="NVLink2",
            links=links,
        )
    if nics:
        for j in range(4):
            G.add_node(f"nic{j}", kind="nic", socket=j // 2, node=0, rail=j)
            G.add_edge(f"nic{j}", f"pcie{j}", **_pcie("gen3"))
    return G


def nvswitch_machine(fn, model, generation, physical, switch):
    """Eight GPUs on one logical NVSwitch: the body of :func:`dgx_a100` and its kin.

    Parameters
    ----------
    fn : str
        The builder's name, for ``G.graph["name"]``.
    model : str
        GPU model, a key of ``NVLINK_LINKS_PER_GPU`` and ``COMPUTE_CAPABILITY``.
    generation : str
        NVLink generation of the GPU's links (``"NVLink3"``).
    physical : int
        NVSwitch chips in the machine, recorded on the switch node.
    switch : str
        The switch's technology (``"NVSwitch2"``); its in-network reduction
        sets the switch's ``nvls``.

    Returns
    -------
    networkx.Graph
        9 nodes, 8 edges of ``links * NVLINK[generation]`` bytes/s.

    Examples
    --------
    >>> G = nvswitch_machine("x", "H100", "NVLink4", 4, "NVSwitch3")
    >>> G.nodes["nvswitch0"]["nvls"], G.edges["gpu0", "nvswitch0"]["links"]
    (True, 18)
    """
    links = NVLINK_LINKS_PER_GPU[model]
    per_gpu = links * NVLINK[generation]
    G = nx.Graph(
        name=f"{fn}(8 {model}, {physical} NVSwitches as one switch, {per_gpu / 1e9:g} GB/s per GPU)"
    )
    G.add_nodes_from((f"gpu{i}" for i in range(8)), kind="gpu", **_gpu_attrs(fn, model, True))
    G.add_node("nvswitch0", kind="nvswitch", physical_switches=physical, node=0,
               nvls=technology(switch).in_network_reduction)
    nvlinks = {"bandwidth": per_gpu, "latency": NVLINK_LATENCY, "link": f"{generation} x{links}",
               "technology": switch, "links": links}
    for i in range(8):
        G.add_edge(f"gpu{i}", "nvswitch0", **nvlinks)
    return G


def dgx_a100(nodes=1, network="rail", nic=None):
    """NVIDIA DGX A100: 8 A100 GPUs on an NVSwitch fabric, 300 GB/s per GPU.

    Each A100 has 12 NVLink3 links of 25 GB/s per direction, 300 GB/s per
    direction in all, spread over six second-generation NVSwitch chips.

    The NVSwitch chips are modelled as ONE logical non-blocking switch
    ``"nvswitch0"`` (kind ``"nvswitch"``) with one link per GPU at the GPU's
    full NVLink bandwidth. In the machine each GPU spreads its links over all
    the NVSwitch chips and a transfer between two GPUs is striped across
    them; netsim sends a message on a single path, so modelling the chips
    separately would give one GPU pair only a fraction of the bandwidth it
    really gets. The PCIe side (CPUs, PCIe switches, NICs) is not modelled
    on one machine; a cluster adds the PCIe switches and the NICs.

    Parameters
    ----------
    nodes : int, optional
        Machines, >= 1 (default 1). More than one, or a ``nic``, builds
        ``gpu_cluster(name, nodes, network, nic)``
        (:func:`topologies.rails.cluster_of`): the machines with their
        PCIe switches and NIC rails, on a network.
    network : {"rail", "fat_tree"}, optional
        The cluster's network (default ``"rail"``).
    nic : str, optional
        A network technology replacing the machine's own NICs' rate.

    Returns
    -------
    networkx.Graph
        9 nodes (``"gpu0"`` .. ``"gpu7"`` and ``"nvswitch0"``), 8 edges.

    References
    ----------
    .. [1] NVIDIA, "NVIDIA A100 Tensor Core GPU Architecture", whitepaper,
           2020 (12 third-generation NVLinks, 600 GB/s total; six NVSwitches
           in DGX A100).

    Examples
    --------
    >>> G = dgx_a100()
    >>> G.graph["name"]
    'dgx_a100(8 A100, 6 NVSwitches as one switch, 300 GB/s per GPU)'
    >>> G.edges["gpu0", "nvswitch0"]["bandwidth"]
    300000000000.0
    """
    def build():
        return nvswitch_machine("dgx_a100", "A100", "NVLink3", 6, "NVSwitch2")

    return _cluster("dgx_a100", nodes, network, nic, build) or build()


def dgx_h100(nodes=1, network="rail", nic=None):
    """NVIDIA DGX H100: 8 H100 GPUs on an NVSwitch fabric, 450 GB/s per GPU.

    Each H100 has 18 NVLink4 links of 25 GB/s per direction, 450 GB/s per
    direction in all (900 GB/s both ways), spread over four third-generation
    NVSwitch chips.

    As in :func:`dgx_a100`, the NVSwitch chips are modelled as ONE logical
    non-blocking switch ``"nvswitch0"`` with one link per GPU at the GPU's
    full NVLink bandwidth, because netsim sends a message on a single path
    while the hardware stripes it over every chip. No PCIe side on one
    machine. Third-generation NVSwitch: the switch node carries ``nvls=True``.

    Parameters
    ----------
    nodes : int, optional
        Machines, >= 1 (default 1). More than one, or a ``nic``, builds
        ``gpu_cluster(name, nodes, network, nic)``
        (:func:`topologies.rails.cluster_of`): the machines with their
        PCIe switches and NIC rails, on a network.
    network : {"rail", "fat_tree"}, optional
        The cluster's network (default ``"rail"``).
    nic : str, optional
        A network technology replacing the machine's own NICs' rate.

    Returns
    -------
    networkx.Graph
        9 nodes (``"gpu0"`` .. ``"gpu7"`` and ``"nvswitch0"``), 8 edges.

    References
    ----------
    .. [1] NVIDIA, "NVIDIA H100 Tensor Core GPU Architecture", whitepaper,
           2022 (18 fourth-generation NVLinks, 900 GB/s total; HGX H100 8-GPU
           with four third-generation NVSwitches).

    Examples
    --------
    >>> G = dgx_h100()
    >>> G.edges["gpu7", "nvswitch0"]["bandwidth"]
    450000000000.0
    """
    def build():
        return nvswitch_machine("dgx_h100", "H100", "NVLink4", 4, "NVSwitch3")

    return _cluster("dgx_h100", nodes, network, nic, build) or build()



def hgx_h200(nodes=1, network="rail", nic=None):
    """NVIDIA HGX H200 8-GPU: 8 H200 GPUs on an NVSwitch fabric, 450 GB/s per GPU.

    The H200 keeps the H100's eighteen NVLink4 links (900 GB/s both ways in
    all, H200 datasheet) and the HGX board its four third-generation
    NVSwitch chips, so the graph is :func:`dgx_h100`'s with H200 GPUs: one
    logical switch with ``nvls=True``.

    Parameters
    ----------
    nodes : int, optional
        Machines, >= 1 (default 1); more than one, or a ``nic``, builds
        ``gpu_cluster("hgx_h200", nodes, network, nic)``, with eight
        ConnectX-7 400 Gb/s NDR adapters per machine.
    network : {"rail", "fat_tree"}, optional
        The cluster's network (default ``"rail"``).
    nic : str, optional
        A network technology replacing the NICs' rate.

    Returns
    -------
    networkx.Graph
        9 nodes and 8 edges for one machine.

    References
    ----------
    .. [1] NVIDIA, "NVIDIA H200 Tensor Core GPU" datasheet, 2024 (NVLink
           900 GB/s; HGX H200 with NVIDIA NVSwitch).

    Examples
    --------
    >>> G = hgx_h200()
    >>> G.nodes["gpu0"]["model"], G.nodes["gpu0"]["sm"], G.nodes["nvswitch0"]["nvls"]
    ('H200', 90, True)
    """
    def build():
        return nvswitch_machine("hgx_h200", "H200", "NVLink4", 4, "NVSwitch3")

    return _cluster("hgx_h200", nodes, network, nic, build) or build()


def dgx_b200(nodes=1, network="rail", nic=None):
    """NVIDIA DGX B200 / HGX B200: 8 B200 GPUs on an NVSwitch fabric, 900 GB/s per GPU.

    Each B200 has 18 NVLink5 links of 50 GB/s per direction, 900 GB/s per
    direction in all (the Blackwell datasheet's 1.8 TB/s both ways), over the
    board's two fifth-generation NVLink switch chips (DGX B200 user guide:
    14.4 TB/s in aggregate, 8 x 1.8 TB/s). As in :func:`dgx_a100`, the chips
    are ONE logical switch ``"nvswitch0"``, with NVLink SHARP (``nvls=True``).

    Parameters
    ----------
    nodes : int, optional
        Machines, >= 1 (default 1); more than one, or a ``nic``, builds
        ``gpu_cluster("dgx_b200", nodes, network, nic)`` with the eight
        ConnectX-7 400 Gb/s adapters of each machine (``"hgx_b200"`` is the
        same cluster under the HGX reference architecture's name).
    network : {"rail", "fat_tree"}, optional
        The cluster's network (default ``"rail"``).
    nic : str, optional
        A network technology replacing the NICs' rate.

    Returns
    -------
    networkx.Graph
        9 nodes and 8 edges for one machine.

    References
    ----------
    .. [1] NVIDIA DGX B200 User Guide, "Introduction to NVIDIA DGX B200
           Systems": 8 B200, "2 x 5th generation NVLink switches that provide
           14.4 TB/s aggregate bandwidth", 8 ConnectX-7 400 Gb/s.
    .. [2] NVIDIA, "NVIDIA Blackwell" datasheet: fifth-generation NVLink,
           1.8 TB/s per GPU.

    Examples
    --------
    >>> G = dgx_b200()
    >>> G.edges["gpu0", "nvswitch0"]["bandwidth"] / 1e9, G.nodes["gpu0"]["sm"]
    (900.0, 100)
    """
    def build():
        return nvswitch_machine("dgx_b200", "B200", "NVLink5", 2, "NVSwitch4")

    return _cluster("dgx_b200", nodes, network, nic, build) or build()


def hgx_h800(nodes=1, network="rail", nic=None):
    """An HGX H800 8-GPU board: the H100 board with NVLink cut to 200 GB/s per GPU.

    The H800 SXM5 is the H100 SXM5 with its NVLink cut to 400 GB/s both ways,
    200 GB/s per direction: eight NVLink4 links of 25 GB/s where the H100 has
    eighteen (the count is derived from the 400 GB/s). The board keeps the four
    third-generation NVSwitch chips, one logical switch with ``nvls=True``.

    Parameters
    ----------
    nodes : int, optional
        Machines, >= 1 (default 1); more than one, or a ``nic``, builds
        ``gpu_cluster("hgx_h800", nodes, network, nic)`` with one 400 Gb/s NDR
        adapter per GPU (DeepSeek-V3's H800 cluster).
    network : {"rail", "fat_tree"}, optional
        The cluster's network (default ``"rail"``).
    nic : str, optional
        A network technology replacing the NICs' rate.

    Returns
    -------
    networkx.Graph
        9 nodes and 8 edges for one machine.

    References
    ----------
    .. [1] "NVIDIA H800 vs H100" (philisun.com, 2025): NVLink 400 GB/s against
           the H100's 900 GB/s, the same Hopper die.
    .. [2] DeepSeek-AI, "DeepSeek-V3 Technical Report", arXiv:2412.19437.

    Examples
    --------
    >>> G = hgx_h800()
    >>> G.edges["gpu0", "nvswitch0"]["bandwidth"] / 1e9, G.edges["gpu0", "nvswitch0"]["links"]
    (200.0, 8)
    """
    def build():
        return nvswitch_machine("hgx_h800", "H800", "NVLink4", 4, "NVSwitch3")

    return _cluster("hgx_h800", nodes, network, nic, build) or build()


def l40s_box(gpus_per_switch=2, p2p=True):
    """An eight-L40S PCIe server: no NVLink, GPUs in pairs under PCIe gen4 switches.

    The L40S is a PCIe Gen4 x16 card without NVLink (L40S datasheet). The
    server is :func:`pcie_tree` with L40S GPUs: two Xeon Scalable sockets
    joined by two UPI links, two PCIe switches per socket and
    ``gpus_per_switch`` GPUs under each (an assumption: the datasheet names no
    server, and switch layouts differ between vendors). GPU peer-to-peer over
    PCIe is on by default (``p2p``), as on NVIDIA's data-centre cards; set it
    False for a platform that disables it.

    Parameters
    ----------
    gpus_per_switch : int, optional
        GPUs under each of the four switches, 1 to 4 (default 2: 8 GPUs).
    p2p : bool, optional
        GPU peer-to-peer over PCIe (default True).

    Returns
    -------
    networkx.Graph
        ``N = 4 * gpus_per_switch`` GPUs, 4 switches, 2 CPUs: ``N + 6`` nodes
        and ``N + 5`` edges.

    Raises
    ------
    TopologyError
        For ``gpus_per_switch`` outside 1..4 or a ``p2p`` that is not a bool.

    Examples
    --------
    >>> G = l40s_box()
    >>> G.number_of_nodes(), G.number_of_edges(), G.nodes["gpu0"]["sm"]
    (14, 13, 89)
    >>> round(G.edges["gpu0", "pcie0"]["bandwidth"] / 1e9, 1)
    31.5
    """
    fn = "l40s_box"
    gpus_per_switch = check_int(gpus_per_switch, f"{fn}: gpus_per_switch (GPUs per PCIe switch)",
                                maximum=4, error=TopologyError)
    _gpu_attrs(fn, "L40S", p2p)  # checks p2p under this builder's name
    G = pcie_tree(gpus_per_switch=gpus_per_switch, switches_per_socket=2, sockets=2, gen="gen4",
                  interconnect="UPI", socket_links=2, gpu="L40S", p2p=p2p)
    G.graph["name"] = (f"l40s_box({4 * gpus_per_switch} L40S, PCIe gen4 x16, no NVLink, "
                       f"{'P2P' if p2p else 'no P2P'})")
    return G


def pcie_box(gpus=8, gpu="RTX4090", gen="gen4", p2p=False, sockets=2, interconnect="xGMI",
             socket_links=3, nodes=1, network="rail", nic=None):
    """A PCIe GPU server without switches: each GPU on its own x16 root port.

    The GPUs are shared evenly among the CPU sockets (GPU ``i`` on socket
    ``i * sockets // gpus``), each over its own PCIe x16 link to the socket's
    root complex, as on second-generation AMD EPYC boards, whose sockets have
    eight x16 PCIe gen4 ports each (AnandTech, "AMD Rome Second Generation
    EPYC Review", 2019). The sockets form a full mesh of ``socket_links``
    bonded links. The default is the eight RTX 4090 box of the published
    measurements: two EPYC 7542 sockets joined by three xGMI links, and no
    GPU peer-to-peer (``p2p=False``: GeForce drivers disable it, so a library
    stages every transfer through host memory). The sockets of an xGMI box are
    second-generation EPYC and carry their ``memory_bandwidth``
    (:data:`topologies.devices.HOST_CPUS`, 204.8 GB/s each); a
    UPI/QPI box names no CPU part and carries none.

    Parameters
    ----------
    gpus : int, optional
        GPUs, >= 1 (default 8).
    gpu : str, optional
        GPU model (default ``"RTX4090"``), a key of
        :data:`topologies.devices.COMPUTE_CAPABILITY`.
    gen : {"gen3", "gen4", "gen5", "gen6"}, optional
        PCIe generation (default gen4).
    p2p : bool, optional
        GPU peer-to-peer possible (default False).
    sockets : int, optional
        CPU sockets, >= 1 (default 2).
    interconnect : {"QPI", "UPI", "xGMI"}, optional
        Socket link (default xGMI, see ``links.CPU_INTERCONNECT``).
    socket_links : int, optional
        Links bonded between each pair of sockets (default 3).
    nodes, network, nic : optional
        ``nodes > 1`` (or a ``nic``) builds ``gpu_cluster("pcie_box", ...)``
        with one NIC per box (default 100GbE, an assumption: the measured
        box's network is not published).

    Returns
    -------
    networkx.Graph
        ``gpus + sockets`` nodes, ``gpus + sockets * (sockets - 1) / 2`` edges.

    Raises
    ------
    TopologyError
        For a count < 1, an unknown generation, link or GPU model, or more
        sockets than GPUs.

    Examples
    --------
    >>> G = pcie_box()
    >>> G.number_of_nodes(), G.number_of_edges(), G.nodes["gpu0"]["p2p"]
    (10, 9, False)
    >>> G.edges["cpu0", "cpu1"]["bandwidth"] / 1e9, G.edges["gpu4", "cpu1"]["technology"]
    (108.0, 'PCIe-gen4-x16')
    """
    fn = "pcie_box"
    gpus = check_int(gpus, f"{fn}: gpus", error=TopologyError)
    sockets = check_int(sockets, f"{fn}: sockets", error=TopologyError)
    if sockets > gpus:   # named as two values: the default sockets=2 with gpus=1 is the case
        raise TopologyError(f"{fn}: sockets={sockets} is more than gpus={gpus}: each socket "
                            f"holds at least one GPU; give sockets={gpus}, or more gpus")
    socket_links = check_int(socket_links, f"{fn}: socket_links", error=TopologyError)
    gen = _check.choice(fn, "gen", gen, PCIE_X16)
    interconnect = _check.choice(fn, "interconnect", interconnect, CPU_INTERCONNECT)
    attrs = _gpu_attrs(fn, gpu, p2p)
    _check.check_size(fn, 2 * gpus + sockets + sockets * (sockets - 1) // 2,
                      f"gpus={gpus}, sockets={sockets}")
    cluster = _cluster(fn, nodes, network, nic, lambda: pcie_box(
        gpus, gpu, gen, p2p, sockets, interconnect, socket_links))
    if cluster is not None:
        return cluster
    G = nx.Graph(name=f"pcie_box({gpus} {attrs['model']}, PCIe {gen} x16, {sockets} sockets, "
                 f"{interconnect} x{socket_links}, {'P2P' if p2p else 'no P2P'})")
    for i in range(gpus):
        G.add_node(f"gpu{i}", kind="gpu", socket=i * sockets // gpus, **attrs)
    host = ({"vendor": "amd", **host_cpu("EPYC-7002")}
            if interconnect == "xGMI" else {"vendor": "intel"})
    G.add_nodes_from((f"cpu{s}" for s in range(sockets)), kind="cpu", node=0, **host)
    for i in range(gpus):
        G.add_edge(f"gpu{i}", f"cpu{i * sockets // gpus}", **_pcie(gen))
    for a in range(sockets):
        for b in range(a + 1, sockets):
            G.add_edge(f"cpu{a}", f"cpu{b}", bandwidth=socket_links * CPU_INTERCONNECT[interconnect],
                       latency=SOCKET_LATENCY, link=f"{interconnect} x{socket_links}",
                       technology=interconnect, links=socket_links)
    return G
