"""GPUs joined pairwise without a switch: the AMD Instinct MI300X platform.

Eight MI300X GPUs on one baseboard, every pair joined by one AMD Infinity
Fabric (xGMI) link: seven links per GPU, 64 GB/s per direction each
(:data:`topologies.links.INFINITY_FABRIC`), so a GPU reaches any one peer at
64 GB/s and all seven at once at 448 GB/s. Unlike an NVSwitch machine, two GPUs
cannot use more than their own link: an algorithm that uses only part of the
peers uses only part of a GPU's fabric.

The GPUs carry ``model="MI300X"`` and ``p2p=True`` but no ``sm``: the MI300X
has no CUDA compute capability and its collectives library is RCCL, which
netsim's NCCL model does not model (``netsim.nccl.simulate`` refuses the
graph and says so); the MPICH-style schedules run on it as on any graph.
"""

import itertools

import networkx as nx

from topologies.links import INFINITY_FABRIC, NVLINK_LATENCY
from topologies.rails import cluster_of, one_machine

__all__ = ["mi300x"]


def mi300x(nodes=1, network="rail", nic=None):
    """AMD Instinct MI300X platform: 8 GPUs, every pair joined by one Infinity Fabric link.

    Parameters
    ----------
    nodes : int, optional
        Machines, >= 1 (default 1). More than one, or a ``nic``, builds
        ``gpu_cluster("mi300x", nodes, network, nic)``: each machine with one
        400 Gb/s NDR InfiniBand adapter per GPU (Azure ND MI300X v5), on a
        rail-optimised or fat-tree network (:func:`topologies.rails.cluster_of`).
    network : {"rail", "fat_tree"}, optional
        The cluster's network (default ``"rail"``).
    nic : str, optional
        A network technology replacing the NICs' rate.

    Returns
    -------
    networkx.Graph
        8 nodes and 8 x 7 / 2 = 28 edges (the complete graph K8) for one
        machine; every edge 64 GB/s, ``technology="InfinityFabric-MI300X"``,
        ``links=1``.

    Raises
    ------
    TopologyError
        For ``nodes < 1`` or a bad cluster option.

    References
    ----------
    .. [1] AMD, "AMD Instinct MI300X" and "AMD Instinct MI300X Platform"
           specifications: 8 Infinity Fabric links per GPU at 128 GB/s peak
           (both ways); 896 GB/s of peer bandwidth per GPU on the 8-GPU
           platform, 7 x 128 GB/s.

    Examples
    --------
    >>> G = mi300x()
    >>> G.number_of_nodes(), G.number_of_edges()
    (8, 28)
    >>> G.edges["gpu0", "gpu7"]["bandwidth"] / 1e9, G.nodes["gpu0"]["model"]
    (64.0, 'MI300X')
    >>> sum(d["bandwidth"] for _, _, d in G.edges("gpu3", data=True)) / 1e9   # 7 peers
    448.0
    """
    fn = "mi300x"
    if not one_machine(fn, nodes, network, nic):
        return cluster_of(mi300x(), fn, nodes, network=network, nic=nic)
    G = nx.Graph(name="mi300x(8 MI300X, all pairs joined by one Infinity Fabric link, 64 GB/s)")
    gpus = [f"gpu{i}" for i in range(8)]
    G.add_nodes_from(gpus, kind="gpu", node=0, model="MI300X", p2p=True)
    G.add_edges_from(itertools.combinations(gpus, 2), bandwidth=INFINITY_FABRIC,
                     latency=NVLINK_LATENCY, link="Infinity Fabric x1",
                     technology="InfinityFabric-MI300X", links=1)
    return G
