"""What one NCCL call costs alone, as the replay runs it: the closed forms' price of a collective.

A closed form that sits beside a replay must price each collective the way the
replay runs it, or the two differ by the library and not by contention. On GPU
nodes the replay runs NCCL's plan (:mod:`netsim.comm.library`): the plan of
:func:`netsim.comm.nccl.model.plan` for the members' setup, on the effective
graph NCCL counts on (:func:`netsim.comm.nccl.hardware.effective_graph`). A call
with its links to itself takes the seconds of that plan replayed by itself
(:func:`netsim.comm.alone.isolated`), which is also what a replay with
``collapse=True`` charges for it: one implementation of "an NCCL call's time
alone".

:class:`NcclPrices` plans each call as the library does (one effective graph
shared by every group, launch mode ``"proc"``, NCCL's own choice of algorithm,
protocol and channels unless a hint is given) and caches the seconds per
(member nodes, op, bytes, hint), since a sweep prices many layouts with the
same groups.
"""

from netsim.comm.alone import isolated
from netsim.network.compiled import as_network

__all__ = ["NcclPrices"]


class NcclPrices:
    """Seconds of NCCL calls alone on the graph ``G``, each plan replayed once.

    Parameters
    ----------
    G : networkx.Graph
        Hardware following the attribute contract of :mod:`netsim.comm.nccl`.

    Examples
    --------
    Four H100 on one NVSwitch: a 256 MiB allreduce alone takes what
    :func:`netsim.nccl.simulate` replays for it.

    >>> import networkx as nx
    >>> from netsim import nccl
    >>> gpus = ["a", "b", "c", "d"]
    >>> G = nx.star_graph(["nvs"] + gpus)
    >>> nx.set_node_attributes(G, {g: {"kind": "gpu", "model": "H100", "sm": 90} for g in gpus})
    >>> G.nodes["nvs"].update(kind="nvswitch", nvls=True)
    >>> nx.set_edge_attributes(G, 200e9, "bandwidth"); nx.set_edge_attributes(G, 1e-7, "latency")
    >>> prices = NcclPrices(G)
    >>> prices.seconds(gpus, "allreduce", 2**28) == nccl.simulate(G, "allreduce", 2**28).makespan
    True
    >>> prices.plan(gpus, "allreduce", 2**28).algorithm   # NCCL's choice at this size
    'ring'
    """

    def __init__(self, G):
        self.G = G
        self._setups = {}    # member nodes -> netsim.comm.nccl.model.Setup
        self._plans = {}     # (member nodes, op, bytes, hint, options) -> Call
        self._replayed = {}   # (member nodes, op, bytes, hint) -> its plan replayed alone
        self._net = None     # the compiled effective graph, and its size when compiled
        self._size = None

    @property
    def E(self):
        """The effective graph the replay runs on (None before the first call is planned)."""
        return next(iter(self._setups.values())).E if self._setups else None

    def _setup(self, nodes):
        from netsim.comm.nccl import model   # NCCL's model loads with its first call

        nodes = tuple(nodes)
        if nodes not in self._setups:
            self._setups[nodes] = model.setup(self.G, nodes, self.E)
        return self._setups[nodes]

    def graph(self, nodes):
        """The effective graph the replay runs on, set up for the group ``nodes`` first if
        no group is yet (a replay with any NCCL call runs everything on it, messages too).

        Examples
        --------
        >>> import networkx as nx
        >>> G = nx.Graph(); G.add_nodes_from(["g0", "g1"], kind="gpu", model="V100", sm=70)
        >>> G.add_edge("g0", "g1", bandwidth=25e9, latency=0.0)
        >>> NcclPrices(G).graph(["g0", "g1"]).edges["g0", "g1"]["bandwidth"]
        20000000000.0
        """
        return self.E if self._setups else self._setup(nodes).E

    def network(self):
        """The effective graph compiled for replay (recompiled if a setup added nodes)."""
        # A setup changes the graph only by adding nodes (a host's memory, with its edges:
        # netsim.comm.nccl.staging), so their count tells (edges take a walk to count).
        size = self.E.number_of_nodes()
        if self._net is None or self._size != size:
            self._net, self._size = as_network(self.E), size
        return self._net

    def plan(self, nodes, op, nbytes, algorithm=None, **options):
        """NCCL's plan of the call (:class:`netsim.comm.nccl.model.Call`), as the replay plans it.

        The one planner of NCCL calls: :func:`netsim.comm.library.expand` plans every
        call of a replay through it, and :meth:`seconds` prices the same plans.

        Parameters
        ----------
        nodes, op, nbytes, algorithm
            As for :meth:`seconds`.
        **options
            ``protocol``, ``channels`` and ``launch`` of
            :func:`netsim.comm.nccl.model.plan` (default: NCCL's choice, ``"proc"``).

        Raises
        ------
        NcclModelError
            For a call NCCL cannot run.

        Examples
        --------
        >>> import networkx as nx
        >>> G = nx.Graph(); G.add_nodes_from(["g0", "g1"], kind="gpu", model="V100", sm=70)
        >>> G.add_edge("g0", "g1", bandwidth=25e9, latency=0.0)
        >>> NcclPrices(G).plan(["g0", "g1"], "allreduce", 2**20).algorithm
        'ring'
        """
        from netsim.comm.nccl import model

        nodes = tuple(nodes)
        key = (nodes, op, int(nbytes), algorithm, tuple(sorted(options.items())))
        if key not in self._plans:
            self._plans[key] = model.plan(self._setup(nodes), op, int(nbytes), algorithm,
                                          **options)
        return self._plans[key]

    def seconds(self, nodes, op, nbytes, algorithm=None):
        """Seconds of one call among ``nodes`` with its links to itself.

        Parameters
        ----------
        nodes : sequence of nodes
            The members' gpu nodes, in the call's local-rank order.
        op : str
            An operation of :data:`netsim.comm.nccl.model.OPS`.
        nbytes : int
            The call's bytes as a trace's collective op holds them (nccl-tests' size).
        algorithm : str, optional
            The call's hint (None: NCCL's choice).

        Returns
        -------
        float
            0 for a call of one member or no bytes (it moves nothing, as in the replay).

        Examples
        --------
        Two V100 over one NVLink pair at NCCL's achievable 20 GB/s: a 1 GB allreduce sends
        1 GB each way, after NCCL's latency.

        >>> import networkx as nx
        >>> G = nx.Graph(); G.add_nodes_from(["g0", "g1"], kind="gpu", model="V100", sm=70)
        >>> G.add_edge("g0", "g1", bandwidth=25e9, latency=0.0)
        >>> p = NcclPrices(G)
        >>> t = p.seconds(["g0", "g1"], "allreduce", 10**9)
        >>> round(t - p.plan(["g0", "g1"], "allreduce", 10**9).latency, 6)
        0.05
        """
        if len(nodes) < 2 or nbytes == 0:
            return 0.0
        return self.alone(nodes, op, nbytes, algorithm).seconds

    def alone(self, nodes, op, nbytes, algorithm=None):
        """The plan of the call replayed by itself (:func:`netsim.comm.alone.isolated`) on
        :meth:`network`, made once per call: the replay's collapsed calls
        (:func:`netsim.comm.alone.collapse`) and :meth:`seconds` share it.

        Examples
        --------
        >>> import networkx as nx
        >>> G = nx.Graph(); G.add_nodes_from(["g0", "g1"], kind="gpu", model="V100", sm=70)
        >>> G.add_edge("g0", "g1", bandwidth=25e9, latency=0.0)
        >>> p = NcclPrices(G)
        >>> p.alone(["g0", "g1"], "allreduce", 10**9).messages   # a flow each way
        2
        """
        key = (tuple(nodes), op, int(nbytes), algorithm)
        if key not in self._replayed:
            self._replayed[key] = isolated(self.plan(*key), self.network())
        return self._replayed[key]
