"""Multi-node GPU clusters by machine name: :func:`gpu_cluster`.

The machines are :mod:`topologies.machines`' builders; their adapters, the
networks and the sources of every NIC count and rate are in
:mod:`topologies.rails`.
"""

from types import MappingProxyType

from netsim.errors import TopologyError

from topologies import _validate as _check
from topologies import machines, machines_mesh, machines_nvl
from topologies.rails import MACHINES, cluster_of

__all__ = ["gpu_cluster"]


def gpu_cluster(machine, nodes, network="rail", nic=None, sharp=False, options=None):
    """``nodes`` GPU machines of one kind whose NIC rails join a network.

    Each machine is its single-machine builder's graph (e.g.
    :func:`topologies.dgx_h100`) plus its PCIe switches and NICs; the NICs
    join a ``"rail"`` or ``"fat_tree"`` network of full bisection bandwidth
    (:func:`topologies.rails.cluster_of`, whose module docstring gives each
    kind's adapters and their sources).

    Parameters
    ----------
    machine : str
        A key of :data:`topologies.rails.MACHINES`: ``"dgx1"``, ``"dgx_a100"``,
        ``"dgx_h100"``, ``"hgx_h100"``, ``"hgx_h200"``, ``"p4d"``, ``"p5"``,
        ``"pcie_box"``, ``"dgx_b200"``, ``"hgx_b200"``, ``"dgx_h200"``, ``"p5en"``,
        ``"hgx_h800"``, ``"a3"``, ``"a3_mega"``, ``"mi300x"``, ``"gb200_nvl72"`` or
        ``"gb300_nvl72"``.
    nodes : int
        Machines, >= 1.
    network : {"rail", "fat_tree"}, optional
        Rail-optimised (default) or one leaf per machine.
    nic : str, optional
        Replace the NICs' technology (e.g. ``"HDR"``, ``"RoCE-200G"``).
    sharp : bool, optional
        InfiniBand switches with in-network reduction (default False).
    options : dict, optional
        Keyword arguments of the machine builder: ``pcie_box``'s (e.g.
        ``{"gpus": 4, "p2p": True}``) or the racks' NVLink domain size
        (``{"nvl": 36}``); the other machines take none.

    Returns
    -------
    networkx.Graph
        See :func:`topologies.rails.cluster_of` for names and counts.

    Raises
    ------
    TopologyError
        For an unknown machine, network or NIC, ``nodes < 1``, ``sharp``
        without InfiniBand, or options for a machine that takes none.

    Examples
    --------
    >>> G = gpu_cluster("dgx_h100", 2)
    >>> G.number_of_nodes(), G.number_of_edges()   # 2 x 21 + 8 + 1, 2 x 24 + 2 x 8 + 8
    (51, 72)
    >>> G.nodes["gpu9"]["node"], G.edges["n1.nic1", "rail1"]["technology"]
    (1, 'NDR')
    >>> G.edges["rail1", "spine"]["bandwidth"] / 1e9, G.edges["rail1", "spine"]["links"]
    (100.0, 2)
    """
    fn = "gpu_cluster"
    machine = _check.choice(fn, "machine", machine, MACHINES)
    options = {} if options is None else options
    if not isinstance(options, dict):
        raise TopologyError(f"{fn}: options must be a dict of builder options, got {options!r}")
    allowed = _OPTIONS.get(machine, ())
    if set(options) - set(allowed):
        raise TopologyError(f"{fn}: machine {machine} takes "
                            + (f"only the options {', '.join(allowed)}" if allowed else "no options")
                            + f", got {sorted(options)}")
    name = MACHINES[machine].builder
    build = next(getattr(m, name) for m in (machines, machines_nvl, machines_mesh)
                 if hasattr(m, name))
    one = build(nics=True) if machine == "dgx1" else build(**options)
    return cluster_of(one, machine, nodes, network=network, nic=nic, sharp=sharp)


# The single-machine options each machine kind's builder takes through ``options``.
_OPTIONS = MappingProxyType({
    "pcie_box": ("gpus", "gpu", "gen", "p2p", "sockets", "interconnect", "socket_links"),
    "gb200_nvl72": ("nvl",), "gb300_nvl72": ("nvl",)})
