"""NVLink-domain racks: GB200 NVL72 and GB300 NVL72, 72 GPUs on one NVLink switch fabric.

A rack holds 18 compute trays of 4 Blackwell GPUs (and 2 Grace CPUs) and 9
NVLink switch trays of 2 switch chips. Every GPU's 18 NVLink5 links (900 GB/s
per direction) go to the switch chips, so any GPU reaches any other of the
rack at its full NVLink bandwidth: 72 GPUs in one NVLink domain, which NCCL
(from 2.21, multi-node NVLink, "MNNVL") treats as one node even though each
tray runs its own operating system. As in :func:`topologies.dgx_h100`, the
switch chips are ONE logical switch ``"nvswitch0"`` with NVLink SHARP
(``nvls=True``), and every GPU carries ``node`` = its NVLink domain (the
machine index a communication library reads) and ``tray`` = its compute tray.

``nvl`` builds a smaller domain: ``nvl`` GPUs in ``nvl / 4`` trays (an NVL36
rack, or a partition of an NVL72 that NVIDIA's Fabric Manager sets up), with
``nvl / 4`` switch chips (each chip has 72 NVLink ports: ``nvl * 18 / 72``).
The Grace CPUs are not modelled: the collectives netsim models do not stage
through them.

Across racks, each GPU has its own network adapter (ConnectX-7 400 Gb/s on
GB200, ConnectX-8 800 Gb/s on GB300): ``nodes > 1`` builds
``gpu_cluster("gb200_nvl72", nodes, network, nic, options={"nvl": ...})``
(:func:`topologies.rails.cluster_of`).
"""

import networkx as nx

from netsim.checks import check_int
from netsim.errors import TopologyError

from topologies.devices import compute_capability, launch_latency
from topologies.links import NVLINK, NVLINK_LATENCY, NVLINK_LINKS_PER_GPU, technology
from topologies.rails import cluster_of, one_machine

__all__ = ["GPUS_PER_TRAY", "MAX_NVL", "nvl_rack", "gb200_nvl72", "gb300_nvl72"]

#: GPUs in one compute tray (two Grace Blackwell boards of one CPU and two GPUs each).
GPUS_PER_TRAY = 4

#: GPUs in the largest NVLink domain, a full NVL72 rack of 18 trays.
MAX_NVL = 72


def nvl_rack(fn, model, nvl=MAX_NVL):
    """``nvl`` GPUs of one Blackwell model on one logical NVLink switch: one rack's domain.

    Parameters
    ----------
    fn : str
        The builder's name, for ``G.graph["name"]`` and error messages.
    model : str
        GPU model, a key of ``NVLINK_LINKS_PER_GPU`` and ``COMPUTE_CAPABILITY``.
    nvl : int, optional
        GPUs in the NVLink domain: a multiple of 4 from 4 to 72 (default 72).

    Returns
    -------
    networkx.Graph
        ``nvl + 1`` nodes and ``nvl`` edges of 18 x 50 GB/s.

    Raises
    ------
    TopologyError
        For an ``nvl`` that is not a multiple of 4 in 4..72.

    Examples
    --------
    >>> G = nvl_rack("x", "GB200", 8)
    >>> G.number_of_nodes(), G.nodes["gpu5"]["tray"], G.nodes["nvswitch0"]["physical_switches"]
    (9, 1, 2)
    >>> nvl_rack("x", "GB200", 30)
    Traceback (most recent call last):
    ...
    netsim.errors.TopologyError: x: nvl (GPUs in the NVLink domain) must be a multiple of 4 (GPUs per compute tray) from 4 to 72 (18 trays), got 30
    """
    limit = (f"{fn}: nvl (GPUs in the NVLink domain) must be a multiple of {GPUS_PER_TRAY} "
             f"(GPUs per compute tray) from {GPUS_PER_TRAY} to {MAX_NVL} "
             f"({MAX_NVL // GPUS_PER_TRAY} trays)")
    if isinstance(nvl, bool) or not isinstance(nvl, int):
        raise TopologyError(f"{limit}, got {nvl!r}")
    if nvl % GPUS_PER_TRAY or not GPUS_PER_TRAY <= nvl <= MAX_NVL:
        raise TopologyError(f"{limit}, got {nvl!r}")
    links = NVLINK_LINKS_PER_GPU[model]
    per_gpu = links * NVLINK["NVLink5"]
    chips = nvl * links // 72  # 72 NVLink ports per switch chip
    G = nx.Graph(name=f"{fn}({nvl} {model} in {nvl // GPUS_PER_TRAY} trays, one NVLink domain "
                      f"of {chips} switch chips, {per_gpu / 1e9:g} GB/s per GPU)")
    for i in range(nvl):
        G.add_node(f"gpu{i}", kind="gpu", node=0, tray=i // GPUS_PER_TRAY, model=model,
                   sm=compute_capability(model), p2p=True, launch=launch_latency(model))
    G.add_node("nvswitch0", kind="nvswitch", node=0, physical_switches=chips,
               nvls=technology("NVSwitch4").in_network_reduction)
    G.add_edges_from(((f"gpu{i}", "nvswitch0") for i in range(nvl)), bandwidth=per_gpu,
                     latency=NVLINK_LATENCY, link=f"NVLink5 x{links}", technology="NVSwitch4",
                     links=links)
    return G


def _rack_or_cluster(fn, model, nvl, nodes, network, nic):
    nodes = check_int(nodes, f"{fn}: nodes (NVLink domains)", error=TopologyError)
    one = nvl_rack(fn, model, nvl)
    if one_machine(fn, nodes, network, nic):
        return one
    return cluster_of(one, fn, nodes, network=network, nic=nic)


def gb200_nvl72(nvl=72, nodes=1, network="rail", nic=None):
    """NVIDIA GB200 NVL72: 72 B200 GPUs (of 36 GB200 boards) in one NVLink domain.

    See the module docstring for the rack and what is modelled. Each GPU:
    18 NVLink5 links, 900 GB/s per direction to the switch fabric; compute
    capability 10.0; one ConnectX-7 400 Gb/s adapter for the network between
    racks.

    Parameters
    ----------
    nvl : int, optional
        GPUs in the NVLink domain, a multiple of 4 from 4 to 72 (default 72).
    nodes : int, optional
        NVLink domains (racks), >= 1 (default 1); more than one, or a ``nic``,
        joins them through their GPUs' adapters on a ``network``.
    network : {"rail", "fat_tree"}, optional
        The network between racks (default ``"rail"``: adapter ``r`` of every
        rack on leaf ``"rail{r}"``).
    nic : str, optional
        A network technology replacing the adapters' (``"NDR"``).

    Returns
    -------
    networkx.Graph
        One rack: ``nvl + 1`` nodes and ``nvl`` edges (73 and 72). With
        ``nodes = N`` racks on rails (each rack with a PCIe switch and an
        adapter per GPU, so ``3 * nvl + 1`` nodes and ``3 * nvl`` edges):
        ``N * (3 * nvl + 1) + nvl + 1`` nodes and ``N * 3 * nvl + N * nvl + nvl``
        edges.

    Raises
    ------
    TopologyError
        For a bad ``nvl``, ``nodes < 1``, or a bad network or ``nic``.

    References
    ----------
    .. [1] NVIDIA GB200 NVL72 (nvidia.com/en-us/data-center/gb200-nvl72): 72
           Blackwell GPUs and 36 Grace CPUs, fifth-generation NVLink at 1.8 TB/s
           per GPU, 130 TB/s in the rack (72 x 1.8 TB/s).
    .. [2] NVIDIA NCCL 2.21 release notes: multi-node NVLink (MNNVL) support.

    Examples
    --------
    >>> G = gb200_nvl72()
    >>> G.number_of_nodes(), G.number_of_edges(), G.edges["gpu71", "nvswitch0"]["bandwidth"] / 1e9
    (73, 72, 900.0)
    >>> G = gb200_nvl72(nvl=36, nodes=2)      # 2 * 109 + 37, 2 * 108 + 72 + 36
    >>> G.number_of_nodes(), G.number_of_edges(), G.nodes["gpu40"]["node"]
    (255, 324, 1)
    """
    return _rack_or_cluster("gb200_nvl72", "GB200", nvl, nodes, network, nic)


def gb300_nvl72(nvl=72, nodes=1, network="rail", nic=None):
    """NVIDIA GB300 NVL72: 72 Blackwell Ultra (B300) GPUs in one NVLink domain.

    The GB200 NVL72's rack (:func:`gb200_nvl72`) with Blackwell Ultra GPUs
    (compute capability 10.3) and a ConnectX-8 SuperNIC of 800 Gb/s (InfiniBand
    XDR, PCIe gen6) per GPU. NVLink is the same: 18 NVLink5 links, 1.8 TB/s
    both ways per GPU.

    Parameters
    ----------
    nvl, nodes, network : optional
        As for :func:`gb200_nvl72`.
    nic : str, optional
        A network technology replacing the adapters' (``"XDR"``).

    Returns
    -------
    networkx.Graph
        As :func:`gb200_nvl72`.

    References
    ----------
    .. [1] NVIDIA GB300 NVL72 (nvidia.com/en-us/data-center/gb300-nvl72): 72
           Blackwell Ultra GPUs, NVLink 130 TB/s, ConnectX-8 SuperNIC 800 Gb/s
           per GPU.

    Examples
    --------
    >>> G = gb300_nvl72(nodes=2)
    >>> G.nodes["gpu0"]["sm"], G.edges["n0.nic0", "rail0"]["technology"]
    (103, 'XDR')
    """
    return _rack_or_cluster("gb300_nvl72", "GB300", nvl, nodes, network, nic)
