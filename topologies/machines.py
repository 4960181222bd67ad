"""Single machines: GPUs under PCIe trees, NVLink meshes and NVSwitch fabrics.

Every builder returns an undirected :class:`networkx.Graph`; an edge is a
full-duplex link with ``bandwidth`` (bytes/s per direction) and ``latency``
(seconds), plus an informational ``link`` label such as ``"PCIe gen3 x16"`` or
``"NVLink2 x2"``. The GPUs (kind ``"gpu"``) are the ranks: they are added
first, in rank order, as ``"gpu0"``, ``"gpu1"``, ... CPU sockets are kind
``"cpu"``, PCIe switches ``"pcie_switch"``, NVSwitch fabrics ``"nvswitch"`` and
network adapters ``"nic"``.

All numbers come from :mod:`topologies.specs`, which cites their sources.
"""

import networkx as nx

from netsim.checks import check_int, check_real
from netsim.errors import TopologyError

from . import _validate as _check
from .specs import (
    CPU_INTERCONNECT,
    NVLINK,
    NVLINK_LATENCY,
    NVLINK_LINKS_PER_GPU,
    PCIE_LATENCY,
    PCIE_X16,
    SOCKET_LATENCY,
)

__all__ = ["pcie_tree", "dgx1", "dgx_a100", "dgx_h100"]


def pcie_tree(
    gpus_per_switch=2,
    switches_per_socket=2,
    sockets=2,
    gen="gen3",
    interconnect="QPI",
    socket_links=1,
    pcie_latency=PCIE_LATENCY,
    socket_latency=SOCKET_LATENCY,
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
    gen : {"gen3", "gen4", "gen5"}, optional
        PCIe generation of every x16 link (see ``specs.PCIE_X16``).
    interconnect : {"QPI", "UPI"}, optional
        Socket link (see ``specs.CPU_INTERCONNECT``).
    socket_links : int, optional
        Links bonded between each pair of sockets, >= 1 (default 1). Xeon
        E5-2600 v4 parts have two QPI links and Xeon Scalable parts two or
        three UPI links.
    pcie_latency, socket_latency : float, optional
        Seconds per PCIe link and per socket link.

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
    """
    fn = "pcie_tree"
    gpus_per_switch = check_int(gpus_per_switch, f"{fn}: gpus_per_switch", error=TopologyError)
    switches_per_socket = check_int(switches_per_socket, f"{fn}: switches_per_socket",
                                    error=TopologyError)
    sockets = check_int(sockets, f"{fn}: sockets", error=TopologyError)
    gen = _check.choice(fn, "gen", gen, PCIE_X16)
    interconnect = _check.choice(fn, "interconnect", interconnect, CPU_INTERCONNECT)
    socket_links = check_int(socket_links, f"{fn}: socket_links", error=TopologyError)
    pcie_latency = check_real(pcie_latency, f"{fn}: pcie_latency (s)", lo=0, error=TopologyError)
    socket_latency = check_real(socket_latency, f"{fn}: socket_latency (s)", lo=0,
                                error=TopologyError)

    switches = sockets * switches_per_socket
    gpus = switches * gpus_per_switch
    G = nx.Graph(
        name=f"pcie_tree({gpus} GPUs, {switches} switches, {sockets} sockets, "
        f"PCIe {gen} x16, {interconnect})"
    )
    for i in range(gpus):
        G.add_node(f"gpu{i}", kind="gpu", socket=i // gpus_per_switch // switches_per_socket)
    for j in range(switches):
        G.add_node(f"pcie{j}", kind="pcie_switch", socket=j // switches_per_socket)
    G.add_nodes_from((f"cpu{s}" for s in range(sockets)), kind="cpu")

    pcie = {"bandwidth": PCIE_X16[gen], "latency": pcie_latency, "link": f"PCIe {gen} x16"}
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


def dgx1(nics=False):
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
        bandwidth ``specs.INFINIBAND["EDR"]`` to build a multi-node system.

    Returns
    -------
    networkx.Graph
        8 GPUs, 4 PCIe switches, 2 CPUs (and 4 NICs) with 16 NVLink edges, 12
        PCIe edges (16 with NICs) and 1 QPI edge.

    Raises
    ------
    TopologyError
        If ``nics`` is not a bool (or 0/1).

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
    """
    if isinstance(nics, bool) or (isinstance(nics, int) and nics in (0, 1)):
        nics = bool(nics)
    else:
        raise TopologyError(f"dgx1: nics must be True or False, got {nics!r}")
    G = pcie_tree(
        gpus_per_switch=2,
        switches_per_socket=2,
        sockets=2,
        gen="gen3",
        interconnect="QPI",
        socket_links=2,
    )
    G.graph["name"] = "dgx1(8 V100, NVLink2 hybrid cube-mesh, PCIe gen3, QPI)"
    for i in range(8):
        G.nodes[f"gpu{i}"]["model"] = "V100"
    for (a, b), links in _DGX1_NVLINKS.items():
        G.add_edge(
            f"gpu{a}",
            f"gpu{b}",
            bandwidth=links * NVLINK["NVLink2"],
            latency=NVLINK_LATENCY,
            link=f"NVLink2 x{links}",
        )
    if nics:
        pcie = {"bandwidth": PCIE_X16["gen3"], "latency": PCIE_LATENCY, "link": "PCIe gen3 x16"}
        for j in range(4):
            G.add_node(f"nic{j}", kind="nic", socket=j // 2)
            G.add_edge(f"nic{j}", f"pcie{j}", **pcie)
    return G


def _nvswitch_machine(fn, model, generation, physical):
    links = NVLINK_LINKS_PER_GPU[model]
    per_gpu = links * NVLINK[generation]
    G = nx.Graph(
        name=f"{fn}(8 {model}, {physical} NVSwitches as one switch, {per_gpu / 1e9:g} GB/s per GPU)"
    )
    G.add_nodes_from((f"gpu{i}" for i in range(8)), kind="gpu", model=model)
    G.add_node("nvswitch0", kind="nvswitch", physical_switches=physical)
    nvlinks = {"bandwidth": per_gpu, "latency": NVLINK_LATENCY, "link": f"{generation} x{links}"}
    for i in range(8):
        G.add_edge(f"gpu{i}", "nvswitch0", **nvlinks)
    return G


def dgx_a100():
    """NVIDIA DGX A100: 8 A100 GPUs on an NVSwitch fabric, 300 GB/s per GPU.

    Each A100 has 12 NVLink3 links of 25 GB/s per direction, 300 GB/s per
    direction in all, spread over six second-generation NVSwitch chips.

    The NVSwitch chips are modelled as ONE logical non-blocking switch
    ``"nvswitch0"`` (kind ``"nvswitch"``) with one link per GPU at the GPU's
    full NVLink bandwidth. In the machine each GPU spreads its links over all
    the NVSwitch chips and a transfer between two GPUs is striped across
    them; netsim sends a message on a single path, so modelling the chips
    separately would give one GPU pair only a fraction of the bandwidth it
    really gets. The PCIe side (CPUs, PCIe switches, NICs) is not modelled.

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
    return _nvswitch_machine("dgx_a100", "A100", "NVLink3", 6)


def dgx_h100():
    """NVIDIA DGX H100: 8 H100 GPUs on an NVSwitch fabric, 450 GB/s per GPU.

    Each H100 has 18 NVLink4 links of 25 GB/s per direction, 450 GB/s per
    direction in all (900 GB/s both ways), spread over four third-generation
    NVSwitch chips.

    As in :func:`dgx_a100`, the NVSwitch chips are modelled as ONE logical
    non-blocking switch ``"nvswitch0"`` with one link per GPU at the GPU's
    full NVLink bandwidth, because netsim sends a message on a single path
    while the hardware stripes it over every chip. No PCIe side.

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
    return _nvswitch_machine("dgx_h100", "H100", "NVLink4", 4)

