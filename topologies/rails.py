"""GPU machines' network adapters and the networks that join them (data and assembly).

:func:`cluster_of` takes a single machine's graph, copies it ``nodes`` times,
gives each copy its PCIe switches and network adapters as in the real box (GPU
``i`` reaches its rail's NIC through the PCIe switch they share), and joins the
NICs with a two-level network of full bisection bandwidth.
:func:`topologies.gpu_cluster` builds a machine kind of :data:`MACHINES` by
name and calls it; ``dgx_h100(nodes=2)`` and the other machine builders do
the same.

Machine kinds and their adapters
--------------------------------
=========== ================ ====================== ========================== =====
kind        GPUs             NICs per machine       PCIe sharing               source
=========== ================ ====================== ========================== =====
dgx1        8 V100, NVLink2  4 x EDR 100 Gb/s IB    2 GPUs + 1 NIC per switch  [1]
dgx_a100    8 A100, NVSwitch 8 x HDR 200 Gb/s IB    2 GPUs + 2 NICs (gen4)     [2]
dgx_h100    8 H100, NVSwitch 8 x NDR 400 Gb/s IB    2 GPUs + 2 NICs (gen5)     [3]
hgx_h100    8 H100, NVSwitch 8 x NDR 400 Gb/s IB    2 GPUs + 2 NICs (gen5)     [8]
hgx_h200    8 H200, NVSwitch 8 x NDR 400 Gb/s IB    2 GPUs + 2 NICs (gen5)     [4]
p4d         8 A100, NVSwitch 4 x 100 Gb/s EFA       2 GPUs + 1 EFA (gen4)      [5]
p5          8 H100, NVSwitch 32 x 100 Gb/s EFA      2 GPUs + 8 EFA (gen5)      [6]
pcie_box    PCIe GPUs        1 x 100GbE (assumed)   the NIC on socket 0        --
dgx_b200    8 B200, NVSwitch 8 x NDR 400 Gb/s IB    2 GPUs + 2 NICs (gen5)     [9]
hgx_b200    8 B200, NVSwitch 8 x NDR 400 Gb/s IB    2 GPUs + 2 NICs (gen5)     [10]
dgx_h200    8 H200, NVSwitch 8 x NDR 400 Gb/s IB    2 GPUs + 2 NICs (gen5)     [11]
p5en        8 H200, NVSwitch 16 x 200 Gb/s EFAv3    2 GPUs + 4 EFA (gen5)      [12]
hgx_h800    8 H800, NVSwitch 8 x NDR 400 Gb/s IB    2 GPUs + 2 NICs (gen5)     [13]
a3          8 H100, NVSwitch 4 x 200 Gb/s Ethernet  2 GPUs + 1 NIC (gen5)      [14]
a3_mega     8 H100, NVSwitch 8 x 200 Gb/s Ethernet  2 GPUs + 2 NICs (gen5)     [14]
mi300x      8 MI300X, xGMI   8 x NDR 400 Gb/s IB    1 GPU + 1 NIC (gen5)       [15]
gb200_nvl72 72 GB200, NVLink 1 x NDR 400 Gb/s a GPU 1 GPU + 1 NIC (gen5)       [16]
gb300_nvl72 72 GB300, NVLink 1 x XDR 800 Gb/s a GPU 1 GPU + 1 NIC (gen6)       [17]
=========== ================ ====================== ========================== =====

A rack's NIC count follows its NVLink domain (``gb200_nvl72(nvl=36)`` has 36): the
``per_gpu`` kinds give one NIC per GPU. The EC2, GCP and Azure machines' PCIe layouts are
not published; the GCP A3 machines' NICs run GPUDirect-TCPX (A3) and TCPXO (A3 Mega), TCP
stacks that netsim's NCCL model does not model (the links are built; see docs/gpu.md).

The NIC counts and rates are the vendors'; how the adapters share PCIe
switches with the GPUs is the DGX A100 layout (four PCIe switches, each with
two GPUs and two compute adapters, [2]) carried over to the H100/H200 boards
and the EC2 instances, whose switch layout is not published: an assumption,
which matters only for traffic between a GPU and another pair's NIC. Where a machine
has one NIC per GPU, GPU ``i`` of a switch owns the switch's NIC ``i``: both carry
``rail``, and routing sends the GPU's network traffic through its own NIC
(:mod:`netsim.network.compiled`, *Rails*), as NCCL picks a GPU's NIC (one adapter per
GPU, [8]).

Networks
--------
``"rail"`` (rail-optimised, as NVIDIA's DGX SuperPOD reference designs [7])
    NIC ``r`` of every machine on leaf switch ``"rail{r}"``; every leaf
    linked to one ``"spine"`` by a bundle of ``nodes`` links (as many up as
    down: full bisection). Same-rail traffic crosses one switch.
``"fat_tree"``
    every NIC of machine ``m`` on leaf ``"leaf{m}"`` (a top-of-rack switch),
    every leaf linked to ``"spine"`` by a bundle of as many links as the
    machine has NICs. Every inter-machine message crosses the spine.

The spine stands for the spine layer of a non-blocking Clos network as one
switch: netsim routes each message on one path, and a single spine node
gives every message the full bisection that ECMP spreads over many spines.

Every switch carries ``sharp``: in-network reduction (InfiniBand SHARP), off
unless asked for, as NCCL uses it only through its SHARP plugin.

References
----------
.. [1] NVIDIA, "NVIDIA DGX-1 With Tesla V100 System Architecture", 2017:
       four 100 Gb/s EDR InfiniBand ports, one per PCIe switch pair of GPUs.
.. [2] NVIDIA, "NVIDIA DGX A100 System Architecture" whitepaper and DGX A100
       User Guide, 2020: eight single-port ConnectX-6 200 Gb/s HDR InfiniBand
       adapters for the compute network, on four PCIe gen4 switches with two
       GPUs each.
.. [3] NVIDIA DGX H100 User Guide, "Introduction to the NVIDIA DGX H100
       System": eight single-port ConnectX-7 adapters, 400 Gb/s InfiniBand
       (NDR) each, PCIe gen5.
.. [4] NVIDIA HGX H200 platform (nvidia.com/en-us/data-center/hgx): eight
       H200 with 400 Gb/s ConnectX-7 networking per GPU.
.. [5] AWS, Amazon EC2 P4d instances: p4d.24xlarge, "400 Gbps" EFA over four
       100 Gbps network cards.
.. [6] AWS, Amazon EC2 P5 instances: p5.48xlarge, "3200 Gbps" EFAv2 over 32
       network cards of 100 Gbps.
.. [7] NVIDIA DGX SuperPOD reference architecture (DGX H100), "compute
       fabric": rail-optimised, each DGX's NIC ``r`` on rail ``r``'s leaf.
.. [8] NVIDIA HGX platform (nvidia.com/en-us/data-center/hgx): HGX H100 8-GPU
       with NVIDIA ConnectX-7 400 Gb/s networking, one adapter per GPU; the
       server maker chooses the adapters, so ``nic`` may override them.
.. [9] NVIDIA DGX B200 User Guide, "Introduction to NVIDIA DGX B200 Systems":
       "4 x OSFP ports for 8 x NVIDIA ConnectX-7 Single Port Cards ...
       InfiniBand (default): Up to 400Gbps"; CPUs "PCIe Gen5".
.. [10] NVIDIA, "NVIDIA HGX AI Factory (H100, H200, B200)" reference
       architecture, abstract: "2-8-9-400" (2 CPUs, 8 GPUs, 9 NICs at 400 Gb/s
       per GPU: eight for the GPUs' compute fabric, one north-south).
.. [11] NVIDIA DGX H100/H200 User Guide: the DGX H200 keeps the DGX H100's eight
       single-port ConnectX-7 400 Gb/s adapters.
.. [12] AWS, Amazon EC2 accelerated computing instance specifications:
       p5en.48xlarge, 8 H200, 3200 Gbps of EFAv3 over 16 network interfaces
       (200 Gbps each; as tabled in stas00/ml-engineering ``network/README.md``,
       "AWS EFA v3 (P5en/Trn2) 16 x 200").
.. [13] DeepSeek-AI, "DeepSeek-V3 Technical Report", arXiv:2412.19437, 2024,
       section 3.2: H800 nodes of 8 GPUs joined by NVLink and NVSwitch, and
       InfiniBand between nodes at 50 GB/s a GPU (one 400 Gb/s NDR adapter per
       GPU).
.. [14] Google Cloud, "GPU machine types" and "Maximize GPU network bandwidth
       with GPUDirect-TCPX and multi-networking": a3-highgpu-8g has 4 GPU NICs
       of 200 Gbps (GPUDirect-TCPX), a3-megagpu-8g 8 of 200 Gbps
       (GPUDirect-TCPXO), beside one host NIC not counted here (as tabled in
       stas00/ml-engineering ``network/README.md``, "GCP A3 High TCPX 4 x 200",
       "GCP A3 Mega TCPXO 8 x 200", note 29).
.. [15] Microsoft Azure, "ND MI300X v5 series": 8 MI300X with one 400 Gb/s
       NDR InfiniBand ConnectX-7 adapter per GPU (3.2 Tb/s a VM); the NIC's PCIe
       switch shared with its GPU is an assumption.
.. [16] NVIDIA GB200 NVL72 (nvidia.com/en-us/data-center/gb200-nvl72) and its
       compute tray: four B200 GPUs, each with a ConnectX-7 400 Gb/s adapter for
       the compute fabric (an MLPerf Inference v6.1 system description of a
       GB200 NVL72 tray, Crusoe ``GB200-NVL72_GB200-186GB_aarch64x16_Dynamo.json``,
       lists "for each 4-GPU node: 4x ... ConnectX-7"). How the adapter reaches
       its GPU inside the tray is not modelled: it shares a PCIe gen5 switch.
.. [17] NVIDIA GB300 NVL72 specifications: "NVIDIA ConnectX-8 SuperNIC" at
       800 Gb/s per GPU (InfiniBand XDR), a PCIe gen6 device.
"""

from types import MappingProxyType
from typing import NamedTuple

import networkx as nx

from netsim.checks import check_int
from netsim.errors import TopologyError

from topologies import _validate as _check
from topologies.links import PCIE_X16, technology

__all__ = ["MachineKind", "MACHINES", "NETWORKS", "cluster_of", "one_machine"]


class MachineKind(NamedTuple):
    """How one machine kind is built and where its NICs sit (see the module table)."""

    builder: str  # name of the single-machine builder in topologies.machines
    nics: int  # NICs (rails) per machine
    nic: str  # their technology, a key of links.TECHNOLOGIES
    gpus_per_switch: int  # GPUs sharing a PCIe switch with their NICs; 0: see MACHINES
    gen: str  # PCIe generation of the GPU/NIC switch links
    source: str
    per_gpu: bool = False  # nics counts NICs per GPU (an NVLink rack of any domain size)


#: Machine kind -> :class:`MachineKind` (read-only). ``gpus_per_switch`` 0: the single
#: machine already has its NICs (dgx1's, on its own PCIe switches) or, for pcie_box, the
#: one NIC hangs off socket 0.
MACHINES = MappingProxyType({
    "dgx1": MachineKind("dgx1", 4, "EDR", 0, "gen3", "DGX-1V system architecture whitepaper"),
    "dgx_a100": MachineKind("dgx_a100", 8, "HDR", 2, "gen4", "DGX A100 user guide"),
    "dgx_h100": MachineKind("dgx_h100", 8, "NDR", 2, "gen5", "DGX H100 user guide"),
    "hgx_h100": MachineKind("dgx_h100", 8, "NDR", 2, "gen5", "NVIDIA HGX H100 platform"),
    "hgx_h200": MachineKind("hgx_h200", 8, "NDR", 2, "gen5", "NVIDIA HGX H200 platform"),
    "p4d": MachineKind("dgx_a100", 4, "EFA", 2, "gen4", "AWS EC2 p4d.24xlarge"),
    "p5": MachineKind("dgx_h100", 32, "EFA", 2, "gen5", "AWS EC2 p5.48xlarge"),
    "pcie_box": MachineKind("pcie_box", 1, "100GbE", 0, "gen4", "assumed: one 100GbE port"),
    "dgx_b200": MachineKind("dgx_b200", 8, "NDR", 2, "gen5", "DGX B200 user guide"),
    "hgx_b200": MachineKind("dgx_b200", 8, "NDR", 2, "gen5", "NVIDIA HGX AI Factory RA"),
    "dgx_h200": MachineKind("hgx_h200", 8, "NDR", 2, "gen5", "DGX H100/H200 user guide"),
    "p5en": MachineKind("hgx_h200", 16, "EFAv3", 2, "gen5", "AWS EC2 p5en.48xlarge"),
    "hgx_h800": MachineKind("hgx_h800", 8, "NDR", 2, "gen5", "DeepSeek-V3 report, H800 nodes"),
    "a3": MachineKind("dgx_h100", 4, "200GbE", 2, "gen5", "GCP a3-highgpu-8g (TCPX)"),
    "a3_mega": MachineKind("dgx_h100", 8, "200GbE", 2, "gen5", "GCP a3-megagpu-8g (TCPXO)"),
    "mi300x": MachineKind("mi300x", 8, "NDR", 1, "gen5", "Azure ND MI300X v5"),
    "gb200_nvl72": MachineKind("gb200_nvl72", 1, "NDR", 1, "gen5", "NVIDIA GB200 NVL72", True),
    "gb300_nvl72": MachineKind("gb300_nvl72", 1, "XDR", 1, "gen6", "NVIDIA GB300 NVL72", True),
})

#: The networks :func:`cluster_of` builds.
NETWORKS = ("rail", "fat_tree")

_NETWORK_FAMILIES = ("infiniband", "roce", "efa", "ethernet")


def _pcie_link(gen):
    return {"bandwidth": PCIE_X16[gen], "latency": technology(f"PCIe-{gen}-x16").latency,
            "link": f"PCIe {gen} x16", "technology": f"PCIe-{gen}-x16", "links": 1}


def _with_nics(one, kind):
    """A copy of one machine with its PCIe switches and NICs (see the module table)."""
    spec = MACHINES[kind]
    G = one.copy()
    if any(k == "nic" for _, k in G.nodes(data="kind")):
        return G  # dgx1(nics=True): the builder placed them
    gpus = [n for n, k in G.nodes(data="kind") if k == "gpu"]
    if spec.gpus_per_switch == 0:  # pcie_box: the NIC on the first socket's root port
        gen = next(d["technology"] for _, _, d in G.edges(gpus[0], data=True))
        G.add_node("nic0", kind="nic", node=0, rail=0)
        G.add_edge("nic0", "cpu0", **_pcie_link(gen.split("-")[1]))
        return G
    switches = len(gpus) // spec.gpus_per_switch
    nics = spec.nics * len(gpus) if spec.per_gpu else spec.nics
    per_switch = nics // switches
    for j in range(switches):
        G.add_node(f"pcie{j}", kind="pcie_switch", node=0)
        for i, g in enumerate(gpus[j * spec.gpus_per_switch:(j + 1) * spec.gpus_per_switch]):
            G.add_edge(g, f"pcie{j}", **_pcie_link(spec.gen))
            if per_switch == spec.gpus_per_switch:   # one NIC per GPU: the GPU's own rail
                G.nodes[g]["rail"] = j * per_switch + i
    for r in range(nics):
        G.add_node(f"nic{r}", kind="nic", node=0, rail=r)
        G.add_edge(f"nic{r}", f"pcie{r // per_switch}", **_pcie_link(spec.gen))
    return G


def one_machine(fn, nodes, network="rail", nic=None):
    """Whether builder ``fn`` makes one plain machine (``nodes`` 1, no ``nic``), its options checked.

    One machine has no network between machines: a ``network`` other than the default
    would change nothing there and is refused, as an unknown one is anywhere.

    Parameters
    ----------
    fn : str
        The builder, for the messages.
    nodes : int
    network : str
        One of :data:`NETWORKS`.
    nic : str or None

    Returns
    -------
    bool

    Raises
    ------
    TopologyError
        For ``nodes < 1``, an unknown network, or a network other than ``"rail"`` for one
        machine without a ``nic``.

    Examples
    --------
    >>> one_machine("dgx_h100", 1), one_machine("dgx_h100", 2, "fat_tree")
    (True, False)
    >>> one_machine("dgx_h100", 1, "fat_tree")
    Traceback (most recent call last):
    ...
    netsim.errors.TopologyError: dgx_h100: network='fat_tree' joins machines: it applies with nodes > 1 or a nic, and there is one machine
    """
    nodes = check_int(nodes, f"{fn}: nodes", error=TopologyError)
    network = _check.choice(fn, "network", network, dict.fromkeys(NETWORKS))
    if nodes > 1 or nic is not None:
        return False
    if network != NETWORKS[0]:
        raise TopologyError(f"{fn}: network={network!r} joins machines: it applies with nodes > 1 "
                            f"or a nic, and there is one machine")
    return True


def cluster_of(one, kind, nodes, network="rail", nic=None, sharp=False):
    """``nodes`` copies of one machine's graph, with their NICs, joined by a network.

    GPUs are the ranks, machine-major: GPU ``i`` of machine ``m`` is
    ``"gpu{m * G + i}"`` for ``G`` GPUs per machine and carries ``node=m``.
    Every other node of machine ``m`` keeps its single-machine name behind the
    prefix ``"n{m}."`` (``"n1.nvswitch0"``, ``"n1.pcie2"``, ``"n1.nic5"``)
    and carries ``node=m``; NICs carry their ``rail``. Network edges carry the
    NIC's ``technology``, its rate times ``links`` and its latency.

    Parameters
    ----------
    one : networkx.Graph
        One machine of ``kind``, as its builder returns it.
    kind : str
        A key of :data:`MACHINES`: where the NICs go and what they are.
    nodes : int
        Machines, >= 1.
    network : {"rail", "fat_tree"}, optional
        Rail-optimised (default) or one leaf per machine.
    nic : str, optional
        Replace the NICs' technology (a network technology of
        :data:`topologies.links.TECHNOLOGIES`, e.g. ``"HDR"``, ``"RoCE-200G"``,
        ``"EFA"``, ``"25GbE"``); the count stays the machine's.
    sharp : bool, optional
        The switches reduce in the network (InfiniBand SHARP); only with
        InfiniBand NICs. Default False.

    Returns
    -------
    networkx.Graph
        With ``V`` nodes and ``E`` edges per machine (NICs included) and
        ``R`` NICs per machine: ``nodes * V + R + 1`` nodes and
        ``nodes * E + nodes * R + R`` edges for ``"rail"``;
        ``nodes * V + nodes + 1`` nodes and ``nodes * E + nodes * R + nodes``
        edges for ``"fat_tree"``.

    Raises
    ------
    TopologyError
        For an unknown kind, network or NIC technology, ``nodes < 1``, or
        ``sharp`` without InfiniBand.

    Examples
    --------
    >>> import networkx as nx
    >>> one = nx.Graph(); one.add_node("gpu0", kind="gpu"); one.add_node("cpu0", kind="cpu")
    >>> one.add_edge("gpu0", "cpu0", bandwidth=1e9, latency=0.0, technology="PCIe-gen4-x16")
    >>> G = cluster_of(one, "pcie_box", 2, nic="25GbE")
    >>> sorted(G["rail0"])
    ['n0.nic0', 'n1.nic0', 'spine']
    """
    fn = "gpu_cluster"
    kind = _check.choice(fn, "machine", kind, MACHINES)
    nodes = check_int(nodes, f"{fn}: nodes", error=TopologyError)
    network = _check.choice(fn, "network", network, dict.fromkeys(NETWORKS))
    spec = MACHINES[kind]
    tech = technology(spec.nic if nic is None else nic)
    if tech.family not in _NETWORK_FAMILIES:
        raise TopologyError(f"{fn}: nic must be a network technology "
                            f"({', '.join(_NETWORK_FAMILIES)}), got {nic!r} ({tech.family})")
    if not isinstance(sharp, bool):
        raise TopologyError(f"{fn}: sharp must be True or False, got {sharp!r}")
    if sharp and tech.family != "infiniband":
        raise TopologyError(f"{fn}: sharp needs InfiniBand switches, but the NICs are {tech.name}")
    one = _with_nics(one, kind)
    rails = sum(k == "nic" for _, k in one.nodes(data="kind"))
    # each machine's nodes and edges and a network link per NIC, at least
    _check.check_size(kind, nodes * (one.number_of_nodes() + one.number_of_edges() + rails),
                      f"nodes={nodes}")
    gpus = [n for n, k in one.nodes(data="kind") if k == "gpu"]
    rank = {n: i for i, n in enumerate(gpus)}
    rest = [n for n in one if n not in rank]

    def name(m, n):
        return f"gpu{m * len(gpus) + rank[n]}" if n in rank else f"n{m}.{n}"

    G = nx.Graph(name=f"gpu_cluster({nodes} x {kind}, {rails} x {tech.name} per "
                      f"machine, {network})")
    for m in range(nodes):
        G.add_nodes_from((name(m, n), {**one.nodes[n], "node": m}) for n in gpus)
    for m in range(nodes):
        G.add_nodes_from((name(m, n), {**one.nodes[n], "node": m}) for n in rest)
        G.add_edges_from((name(m, u), name(m, v), dict(d)) for u, v, d in one.edges(data=True))
    nic_link = {"bandwidth": tech.bandwidth, "latency": tech.latency, "link": tech.name,
                "technology": tech.name}
    leaves = ([f"rail{r}" for r in range(rails)] if network == "rail"
              else [f"leaf{m}" for m in range(nodes)])
    G.add_nodes_from(leaves, kind="switch", sharp=sharp)
    G.add_node("spine", kind="switch", sharp=sharp)
    for m in range(nodes):
        for r in range(rails):
            leaf = f"rail{r}" if network == "rail" else f"leaf{m}"
            G.add_edge(f"n{m}.nic{r}", leaf, **nic_link, links=1)
    bundle = nodes if network == "rail" else rails
    for leaf in leaves:
        G.add_edge(leaf, "spine", **{**nic_link, "bandwidth": bundle * tech.bandwidth},
                   links=bundle)
    return G
