"""A networkx topology compiled for simulation: link directions, routes, placement.

netsim takes any ``networkx.Graph`` or ``DiGraph`` whose edges carry
``bandwidth`` (bytes/s, > 0) and should carry ``latency`` (seconds, >= 0; a
missing latency is taken as 0 s with a ``UserWarning`` through the
:mod:`warnings` module, naming how many edges lack one). An undirected edge is
a full-duplex link: it becomes two link directions, each with the full
bandwidth. A ``DiGraph`` edge is one direction.

Two more edge attributes: ``links`` (integer k >= 1, default 1) counts the
physical links an edge stands for, and ``bandwidth`` is already the whole
bundle's rate, so k parallel links are one link of their summed bandwidth
(NVLink stripes a transfer over every link to the same peer, and NCCL's
topology adds parallel links' bandwidths alike: ``link->bw += bw`` in
``ncclTopoConnectNodes``, src/graph/topo.cc); ``links`` is checked and kept for
models that count links (:mod:`netsim.comm.nccl`), never multiplied in again.
``efficiency`` (in (0, 1], default 1) is the payload share of the line rate
once framing is paid, which topology builders compute from technology and MTU.
A link direction's capacity is ``bandwidth * efficiency``.

Routing is deterministic. The candidate paths between two nodes are the
*equal-cost* shortest paths (least total latency, then fewest hops), which
ECMP routers use; link-disjoint paths need not be shortest, and no router
picks them. They are ordered by the predecessors taken node by node back from
the destination, lowest node then link index first (:mod:`netsim.network.multipath`).
Of k paths, a message on ``channel`` c takes path ``c mod k``; with
``ecmp="hash"`` it takes ``ecmp_hash(seed, src, dst, c) mod k``: every message
of one (source, destination, channel) flow alike, different flows spread, and
two flows may collide as on real ECMP switches. Path 0, the lowest-ordered
predecessor at every node, is the one route every message took before
channels, so channel 0 without ECMP replays exactly as before. Routes are
computed on first use and cached on the :class:`Network`.

**Rails.** A node may carry ``rail`` (an integer): a GPU's own NIC rail, and the
NIC's. A message from a node with a rail counts, as a third cost after latency and
hops, the nodes of *another* rail on its path, so of paths equal in latency and hops
it takes the one through its own NIC. Machines whose PCIe switches hold two GPUs and
two NICs (DGX A100 and H100) give each GPU two NICs at equal cost; the host uses the
GPU's own, as NCCL does (``ncclTopoGetLocalNet``, NCCL v2.30.7-1 src/graph/topo.cc:
among the NICs nearest a GPU, the one indexed by the GPU's device number). A source
without a rail routes as before.

The compute nodes, which host ranks by default, are described in
:mod:`netsim.network.placement`.
"""

import warnings

import heapq
import math

import numpy as np

from netsim.checks import is_real
from netsim.errors import TopologyError
from netsim.network.multipath import (ECMP, check_ecmp, ecmp_hash, equal_cost_dag, path_counts, route_loads,
                        unrank_path)
from netsim.network.placement import compute_nodes, leaves
from netsim.network.search import route_toward
from netsim.units import MAX_LATENCY, MIN_BANDWIDTH

__all__ = ["Network", "as_network", "compute_nodes", "leaves", "check_topology", "route_loads",
           "ECMP", "check_ecmp"]

# Latencies are compared in integer femtoseconds so that equal paths tie exactly.
_FS = 1e15
# A source's first search for at most this many targets goes from both ends
# (netsim.network.search); a later one sweeps from the source and keeps every route it
# settles, which serves a source asked for many targets one call at a time.
_TOWARD = 8


class Network:
    """A topology ready for simulation.

    Parameters
    ----------
    G : networkx.Graph or networkx.DiGraph
        Edges need ``bandwidth`` > 0 (bytes/s); ``latency`` >= 0 (s) defaults to 0
        with a ``UserWarning`` (how many edges lack one); ``links`` (int >= 1) counts
        the parallel links the bandwidth sums, and ``efficiency`` (in (0, 1])
        scales it (module docstring).

    Attributes
    ----------
    nodes : list
        Graph nodes in order; node ``i`` is ``nodes[i]``.
    link_src, link_dst : ndarray of int
        Node indices of each link direction.
    bandwidth, latency : ndarray of float
        Per link direction; ``bandwidth`` is the capacity, framing
        efficiency included.

    Raises
    ------
    TopologyError
        For a multigraph, an empty graph, or an edge whose bandwidth is missing or
        not positive, whose latency is negative or not a number, whose ``links``
        is not an integer >= 1 or whose ``efficiency`` is not in (0, 1].

    Examples
    --------
    >>> import networkx as nx
    >>> G = nx.Graph(); G.add_edge("a", "b", bandwidth=1e9, latency=1e-6)
    >>> net = Network(G)
    >>> net.num_links, net.path("a", "b")
    (2, ['a', 'b'])
    """

    def __init__(self, G):
        if isinstance(G, Network):
            G = G.graph
        import networkx as nx  # here: `import netsim` stays light (the caller has it loaded)

        if not isinstance(G, nx.Graph):
            raise TopologyError(f"topology must be a networkx graph, got {type(G).__name__}")
        if G.is_multigraph():
            raise TopologyError("multigraphs are not supported: give parallel links as one "
                                "edge with a 'links' count (see netsim.network.compiled)")
        if G.number_of_nodes() == 0:
            raise TopologyError("topology has no nodes")
        self.graph = G
        self.directed = G.is_directed()
        self.nodes = list(G.nodes)
        self.index = {n: i for i, n in enumerate(self.nodes)}
        src, dst, bw, lat = [], [], [], []
        for u, v, data in G.edges(data=True):
            b = data.get("bandwidth")
            if b is None:
                raise TopologyError(f"edge ({u!r}, {v!r}) has no 'bandwidth' attribute")
            if not is_real(b) or not math.isfinite(b) or b < MIN_BANDWIDTH:
                raise TopologyError(f"edge ({u!r}, {v!r}) has bandwidth {b!r}: it must be a "
                                    f"finite number >= {MIN_BANDWIDTH:g} bytes/s "
                                    f"(netsim.units.MIN_BANDWIDTH)")
            lt = data.get("latency", 0.0)
            if not is_real(lt) or not math.isfinite(lt) or not 0 <= lt <= MAX_LATENCY:
                raise TopologyError(f"edge ({u!r}, {v!r}) has latency {lt!r}: it must be a "
                                    f"finite number of seconds in [0, {MAX_LATENCY:g}] "
                                    f"(netsim.units.MAX_LATENCY)")
            if u == v:
                raise TopologyError(f"edge ({u!r}, {v!r}) is a self-loop")
            b = float(b) * _scale(u, v, data)
            pairs = [(u, v)] if self.directed else [(u, v), (v, u)]
            for a, c in pairs:
                src.append(self.index[a])
                dst.append(self.index[c])
                bw.append(float(b))
                lat.append(float(lt))
        # warned once every edge passed: a graph refused for a bad edge gets its error alone
        missing = sum("latency" not in d for _, _, d in G.edges(data=True))
        if missing:
            warnings.warn(f"{missing} of {G.number_of_edges()} edges carry no latency: "
                          f"taken as 0 s", stacklevel=2)
        self.link_src = np.array(src, np.int64)
        self.link_dst = np.array(dst, np.int64)
        self.bandwidth = np.array(bw, np.float64)
        self.latency = np.array(lat, np.float64)
        self._lat_fs = np.round(self.latency * _FS).astype(np.int64)
        adj = [[] for _ in self.nodes]
        for link, (a, c, fs) in enumerate(zip(src, dst, self._lat_fs.tolist())):
            adj[a].append((c, link, fs))
        self._adj = [sorted(a) for a in adj]
        self._src_list = src
        # A node whose every out-link goes back to one neighbour is a dead end: it can
        # only be a path's last node. Dijkstra skips it unless it is a target, which
        # keeps routing on stars and trees linear in the number of routes asked for.
        self._dead_end = [a[0][0] if a and all(x[0] == a[0][0] for x in a) else -1 for a in adj]
        self._rail = [_rail_of(n, G.nodes[n]) for n in self.nodes]
        self._off_rail = {}
        self._radj = None
        self._routes = {}
        self._dags = {}

    @property
    def num_links(self):
        """Number of link directions."""
        return len(self.bandwidth)

    def link_name(self, link):
        """``"u->v"`` for a link direction.

        Examples
        --------
        >>> import networkx as nx
        >>> G = nx.Graph(); G.add_edge("a", "b", bandwidth=1e9, latency=1e-6)
        >>> Network(G).link_name(1)
        'b->a'
        """
        return f"{self.nodes[self.link_src[link]]}->{self.nodes[self.link_dst[link]]}"

    def node_of(self, node):
        """Index of a node, raising TopologyError for a missing one.

        Examples
        --------
        >>> import networkx as nx
        >>> G = nx.Graph(); G.add_edge("a", "b", bandwidth=1e9, latency=1e-6)
        >>> Network(G).node_of("b")
        1
        """
        try:
            return self.index[node]
        except (KeyError, TypeError):
            raise TopologyError(f"node {node!r} is not in the topology") from None

    def off_rail(self, src):
        """Per node, 1 where its ``rail`` differs from node ``src``'s, else 0 (a list).

        The third routing cost of a path from ``src`` (module docstring, *Rails*): all
        zeros when ``src`` has no rail.

        Examples
        --------
        Two GPUs behind one switch with two NICs, each GPU's own NIC named by ``rail``:

        >>> import networkx as nx
        >>> G = nx.Graph()
        >>> G.add_nodes_from([("g0", {"rail": 0}), ("g1", {"rail": 1}), ("sw", {}),
        ...                   ("nic0", {"rail": 0}), ("nic1", {"rail": 1}), ("net", {})])
        >>> for u, v in [("g0", "sw"), ("g1", "sw"), ("sw", "nic0"), ("sw", "nic1"),
        ...              ("nic0", "net"), ("nic1", "net")]:
        ...     G.add_edge(u, v, bandwidth=1e9, latency=1e-6)
        >>> net = Network(G)
        >>> net.off_rail(net.node_of("g1"))
        [1, 0, 0, 1, 0, 0]
        >>> net.path("g0", "net"), net.path("g1", "net")   # each through its own NIC
        (['g0', 'sw', 'nic0', 'net'], ['g1', 'sw', 'nic1', 'net'])
        """
        r = self._rail[src]
        off = self._off_rail.get(r)
        if off is None:
            off = self._off_rail[r] = [int(r is not None and x is not None and x != r)
                                       for x in self._rail]
        return off

    def route(self, src, dst, path=0):
        """Link directions from node index ``src`` to ``dst`` (a tuple; cached).

        The path of least total latency; ties go to fewer hops, then to the
        lowest-ordered predecessor (see the module docstring).

        Parameters
        ----------
        src, dst : int
            Node indices (:meth:`node_of`).
        path : int, optional
            Which equal-cost path, 0 to ``num_paths(src, dst) - 1`` (see
            :meth:`path_index`); 0 is the route described above.

        Returns
        -------
        tuple of int
            Link directions in path order; empty when ``src == dst``.

        Raises
        ------
        TopologyError
            If there is no path.

        Examples
        --------
        >>> import networkx as nx
        >>> G = nx.path_graph(3); nx.set_edge_attributes(G, 1e9, "bandwidth")
        >>> nx.set_edge_attributes(G, 1e-6, "latency")
        >>> net = Network(G)
        >>> links = net.route(0, 2)
        >>> links, [net.link_name(k) for k in links]
        ((0, 2), ['0->1', '1->2'])
        """
        if path:
            return self._nth_route(src, dst, path)
        key = (src, dst)
        r = self._routes.get(key)
        if r is None:
            self._solve(src, {dst})
            r = self._routes.get(key)
            if r is None:
                raise TopologyError(f"no path from {self.nodes[src]!r} to {self.nodes[dst]!r}")
        return r

    def path(self, u, v, channel=0, ecmp=None, seed=0):
        """The node path a message from ``u`` to ``v`` takes (node names).

        Parameters
        ----------
        u, v : node
            Graph nodes.
        channel, ecmp, seed : optional
            As for :meth:`path_index`.

        Returns
        -------
        list
            Nodes from ``u`` to ``v``.

        Examples
        --------
        >>> import networkx as nx
        >>> G = nx.Graph()
        >>> G.add_edge("a", "s", bandwidth=1e9, latency=1e-6)
        >>> G.add_edge("s", "b", bandwidth=1e9, latency=1e-6)
        >>> G.add_edge("a", "b", bandwidth=1e9, latency=5e-6)  # direct, but slower
        >>> Network(G).path("a", "b")
        ['a', 's', 'b']
        """
        s, d = self.node_of(u), self.node_of(v)
        links = self.route(s, d, self.path_index(s, d, channel, ecmp, seed) if channel or ecmp
                           else 0)
        return [u] + [self.nodes[self.link_dst[k]] for k in links]

    def _solve(self, src, targets):
        """Cache the least-cost routes from ``src`` to ``targets``, the cost being (latency,
        hops, nodes off its rail).

        For many targets a Dijkstra from ``src`` (:meth:`_sweep`) stops once every
        target is settled and caches the route to every node settled. Among equal costs the predecessor with
        the lowest node index wins. A search for a few targets (at most ``_TOWARD``)
        finds the same routes from both ends and caches those alone
        (:func:`netsim.network.search.route_toward`), however often the source was
        searched before: a full sweep from a GPU of a large cluster costs a hundred of
        those.
        """
        if src in targets:
            self._routes[(src, src)] = ()
        if len(targets) > _TOWARD:
            return self._sweep(src, targets)
        radj, dead_in = self._reverse()
        off = self.off_rail(src)
        for t in targets:
            if t != src:
                r = route_toward(self._adj, radj, self._src_list, self._dead_end, off, src,
                                 t, dead_in)
                if r is not None:
                    self._routes[(src, t)] = r

    def _sweep(self, src, targets):
        """:meth:`_solve`'s Dijkstra from ``src`` until every target is settled, caching the
        route to every node settled."""
        INF = (math.inf, math.inf, math.inf)
        dist = {src: (0, 0, 0)}
        pred = {}
        done = set()
        heap = [(0, 0, 0, src)]
        left = set(targets) - {src}
        adj, link_src, dead_end = self._adj, self._src_list, self._dead_end
        off = self.off_rail(src)
        while heap and left:
            d, h, o, u = heapq.heappop(heap)
            if u in done:
                continue
            done.add(u)
            left.discard(u)
            for v, link, fs in adj[u]:
                if (dead_end[v] == u and v not in targets) or v in done:
                    continue
                cand = (d + fs, h + 1, o + off[v])
                old = dist.get(v, INF)
                if cand < old or (cand == old and u < link_src[pred[v]]):
                    if cand < old:
                        heapq.heappush(heap, (*cand, v))
                    dist[v] = cand
                    pred[v] = link
        for v in done:
            if v == src or (src, v) in self._routes:
                continue
            links = []
            node = v
            while node != src:
                link = pred[node]
                links.append(link)
                node = link_src[link]
            self._routes[(src, v)] = tuple(reversed(links))

    def _reverse(self):
        """Each node's in-links ``(tail, link, latency in fs)`` and, for a node whose every
        in-link comes from one neighbour, that neighbour (else -1); made once, when a search
        first goes from both ends."""
        if self._radj is None:
            radj = [[] for _ in self.nodes]
            for v, a in enumerate(self._adj):
                for w, link, fs in a:
                    radj[w].append((v, link, fs))
            self._radj = radj, [a[0][0] if a and all(x[0] == a[0][0] for x in a) else -1
                                for a in radj]
        return self._radj

    def routes(self, src, dst, placed=None, channel=None, ecmp=None, seed=0):
        """Routes for arrays of node-index pairs, as a padded link matrix.

        Parameters
        ----------
        src, dst : array_like of int
            Node indices.
        placed : ndarray of int, optional
            Node index of each rank (from :meth:`placement`); when given, a
            missing route is reported by the ranks it joins.
        channel : array_like of int, optional
            Channel of each message (default 0).
        ecmp, seed : optional
            How channels map to equal-cost paths: see :meth:`path_index`.

        Returns
        -------
        pair : ndarray of int
            For each input, the index of its distinct (src, dst) pair.
        links : ndarray of int, shape (pairs, hops)
            Link directions of each distinct pair, padded with ``num_links``
            (a dummy link of infinite capacity).
        latency : ndarray of float
            Sum of link latencies of each distinct pair.

        Raises
        ------
        TopologyError
            If some pair has no path.

        Examples
        --------
        >>> import networkx as nx
        >>> G = nx.path_graph(3); nx.set_edge_attributes(G, 1e9, "bandwidth")
        >>> nx.set_edge_attributes(G, 1e-6, "latency")
        >>> pair, links, lat = Network(G).routes([0, 2, 0], [2, 0, 2])
        >>> pair.tolist(), links.tolist()
        ([0, 1, 0], [[0, 2], [3, 1]])
        """
        src = np.asarray(src, np.int64)
        dst = np.asarray(dst, np.int64)
        ecmp, seed = check_ecmp(ecmp, seed)
        if ecmp is not None or (channel is not None and np.any(channel)):
            return self._multipath_routes(src, dst, placed, channel, ecmp, seed)
        n = len(self.nodes)
        keys, pair = _unique_pairs(src, dst, n)
        ps, pd = keys // n, keys % n
        by_src = {}
        for s, d in zip(ps.tolist(), pd.tolist()):
            if (s, d) not in self._routes:
                by_src.setdefault(s, set()).add(d)
        for s, ds in by_src.items():
            self._solve(s, ds)
        routes = []
        for s, d in zip(ps.tolist(), pd.tolist()):
            r = self._routes.get((s, d))
            if r is None:
                if placed is not None:
                    raise _no_path(self, placed, s, d)
                raise TopologyError(f"no path from {self.nodes[s]!r} to {self.nodes[d]!r}")
            routes.append(r)
        return (pair.reshape(-1),) + self._padded(routes)

    def _padded(self, routes):
        """The padded link matrix and the latency of a list of routes."""
        hops = max((len(r) for r in routes), default=0)
        links = np.full((len(routes), max(hops, 1)), self.num_links, np.int64)
        for i, r in enumerate(routes):
            links[i, :len(r)] = r
        lat = np.concatenate([self.latency, [0.0]])[links].sum(axis=1)
        return links, lat

    def _multipath_routes(self, src, dst, placed, channel, ecmp, seed):
        """:meth:`routes` when some message has a channel or ECMP is on."""
        channel = np.zeros(len(src), np.int64) if channel is None else np.asarray(channel,
                                                                                  np.int64)
        flows, flow = np.unique(np.stack([src, dst, channel], axis=1).reshape(-1, 3), axis=0,
                                return_inverse=True)
        by_src = {}
        for s, d, _ in flows.tolist():
            by_src.setdefault(s, set()).add(d)
        for s, ds in by_src.items():
            counts = self._equal_cost(s, ds)[2]
            missing = [d for d in sorted(ds) if d not in counts]
            if missing:
                if placed is not None:
                    raise _no_path(self, placed, s, missing[0])
                raise TopologyError(f"no path from {self.nodes[s]!r} to "
                                    f"{self.nodes[missing[0]]!r}")
        keys = {}
        flow_route = [keys.setdefault((s, d, self.path_index(s, d, c, ecmp, seed)), len(keys))
                      for s, d, c in flows.tolist()]
        routes = [self.route(s, d, p) for s, d, p in keys]
        return (np.asarray(flow_route, np.int64)[flow.reshape(-1)],) + self._padded(routes)

    def _equal_cost(self, src, dsts):
        """``(targets, preds, counts)`` of the equal-cost paths from ``src`` (cached)."""
        entry = self._dags.get(src)
        if entry is None or not set(dsts) <= entry[0]:
            targets = set(dsts) | (entry[0] if entry else set())
            order, preds = equal_cost_dag(self._adj, src, targets, self._dead_end,
                                          self.off_rail(src))
            entry = self._dags[src] = (targets, preds, path_counts(order, preds))
        return entry

    def num_paths(self, src, dst):
        """Number of equal-cost shortest paths from node index ``src`` to ``dst``.

        Raises TopologyError if there is none.

        Examples
        --------
        >>> import networkx as nx
        >>> G = nx.cycle_graph(4); nx.set_edge_attributes(G, 1e9, "bandwidth")
        >>> nx.set_edge_attributes(G, 1e-6, "latency")
        >>> Network(G).num_paths(0, 2), Network(G).num_paths(0, 1)
        (2, 1)
        """
        counts = self._equal_cost(src, [dst])[2]
        if dst not in counts:
            raise TopologyError(f"no path from {self.nodes[src]!r} to {self.nodes[dst]!r}")
        return counts[dst]

    def path_index(self, src, dst, channel=0, ecmp=None, seed=0):
        """Which equal-cost path (for :meth:`route`) a message on ``channel`` takes.

        With k equal-cost paths: ``channel mod k`` without ECMP, or the flow's
        :func:`~netsim.network.multipath.ecmp_hash` mod k with ``ecmp="hash"``.

        Parameters
        ----------
        src, dst : int
            Node indices.
        channel : int, optional
            The message's channel, >= 0.
        ecmp : {None, "hash"}, optional
        seed : int, optional

        Examples
        --------
        >>> import networkx as nx
        >>> G = nx.cycle_graph(4); nx.set_edge_attributes(G, 1e9, "bandwidth")
        >>> nx.set_edge_attributes(G, 1e-6, "latency")
        >>> net = Network(G)
        >>> [net.path(0, 2, c) for c in (0, 1, 2)]
        [[0, 1, 2], [0, 3, 2], [0, 1, 2]]
        """
        ecmp, seed = check_ecmp(ecmp, seed)
        k = self.num_paths(src, dst)
        if k == 1:
            return 0
        if ecmp == "hash":
            return ecmp_hash(seed, src, dst, int(channel)) % k
        return int(channel) % k

    def _nth_route(self, src, dst, path):
        key = (src, dst, path)
        r = self._routes.get(key)
        if r is None:
            k = self.num_paths(src, dst)
            if not 0 <= path < k:
                raise TopologyError(f"path {path!r} from {self.nodes[src]!r} to "
                                    f"{self.nodes[dst]!r}: there are {k} equal-cost paths")
            _, preds, counts = self._dags[src]
            r = self._routes[key] = unrank_path(preds, counts, src, dst, path)
        return r

    def placement(self, ranks, placement=None):
        """Node indices hosting ranks ``0..ranks-1``.

        Parameters
        ----------
        ranks : int
        placement : sequence or dict, optional
            ``placement[r]`` is the node of rank ``r``. By default the compute
            nodes (:func:`compute_nodes`) in order.

        Raises
        ------
        TopologyError
            If a node is missing, used twice, or there are too few nodes.

        Examples
        --------
        >>> import networkx as nx
        >>> G = nx.Graph()
        >>> G.add_edge("h0", "s", bandwidth=1e9, latency=1e-6)
        >>> G.add_edge("h1", "s", bandwidth=1e9, latency=1e-6)
        >>> nx.set_node_attributes(G, {"h0": "host", "h1": "host", "s": "switch"}, "kind")
        >>> net = Network(G)
        >>> net.placement(2).tolist(), net.placement(2, ["h1", "h0"]).tolist()
        ([0, 2], [2, 0])
        """
        if placement is None:
            nodes = compute_nodes(self.graph)
            if len(nodes) < ranks:
                raise TopologyError(f"the trace has {ranks} ranks but the topology has only "
                                    f"{len(nodes)} compute nodes; pass a placement or a "
                                    f"larger topology")
            return np.array([self.index[n] for n in nodes[:ranks]], np.int64)
        try:
            chosen = [placement[r] for r in range(ranks)]
        except (KeyError, IndexError):
            raise TopologyError(f"placement covers fewer than the trace's {ranks} ranks") from None
        seen = {}
        out = np.empty(ranks, np.int64)
        for r, node in enumerate(chosen):
            idx = self.node_of(node)
            if idx in seen:
                raise TopologyError(f"placement puts ranks {seen[idx]} and {r} on the same "
                                    f"node {node!r}")
            seen[idx] = r
            out[r] = idx
        return out


def _rail_of(node, data):
    """A node's ``rail`` attribute: an int, or None without one."""
    r = data.get("rail")
    if r is None:
        return None
    if isinstance(r, bool) or not isinstance(r, (int, np.integer)):
        raise TopologyError(f"node {node!r} has rail {r!r}: it must be an integer")
    return int(r)


def _scale(u, v, data):
    """The edge's ``efficiency`` (module docstring), with its ``links`` count checked."""
    k = data.get("links", 1)
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 1:
        raise TopologyError(f"edge ({u!r}, {v!r}) has links {k!r}: it must be an integer >= 1 "
                            "(the number of parallel links its bandwidth sums)")
    eff = data.get("efficiency", 1.0)
    if not is_real(eff) or not 0 < eff <= 1:
        raise TopologyError(f"edge ({u!r}, {v!r}) has efficiency {eff!r}: it must be a number "
                            f"in (0, 1] (the payload share of the line rate)")
    return float(eff)


def as_network(topology):
    """``topology`` itself if it is a :class:`Network` (keeping its route cache), else compiled.

    The one graph-or-network coercion: every function that takes a topology
    accepts either a networkx graph or an already compiled :class:`Network`.

    Parameters
    ----------
    topology : networkx.Graph, networkx.DiGraph or Network

    Returns
    -------
    Network

    Examples
    --------
    >>> import networkx as nx
    >>> G = nx.Graph(); G.add_edge("a", "b", bandwidth=1e9, latency=1e-6)
    >>> net = as_network(G)
    >>> as_network(net) is net, net.num_links
    (True, 2)
    """
    return topology if isinstance(topology, Network) else Network(topology)



def check_topology(G, placement=None, ranks=None):
    """Validate a topology and, optionally, a placement; return the :class:`Network`.

    Checks the edge attributes, the placement, and that every pair of placed
    ranks is connected. A :class:`Network` is checked and returned itself, route
    cache included; a graph is compiled into a new one.

    Parameters
    ----------
    G : networkx.Graph, networkx.DiGraph or Network
    placement : sequence or dict, optional
        ``placement[r]`` is the node of rank r (default: compute nodes in order).
    ranks : int, optional
        Ranks to place (default: ``len(placement)``, else every compute node).

    Returns
    -------
    Network

    Raises
    ------
    TopologyError
        Naming the offending edge, node or pair of ranks.

    Examples
    --------
    >>> import networkx as nx
    >>> G = nx.Graph(); G.add_node("a", kind="host"); G.add_node("b", kind="host")
    >>> check_topology(G)
    Traceback (most recent call last):
    ...
    netsim.errors.TopologyError: ranks 0 ('a') and 1 ('b') have no path between them
    """
    net = as_network(G)
    if ranks is None:
        ranks = len(placement) if placement is not None else len(compute_nodes(net.graph))
    nodes = net.placement(ranks, placement)
    import networkx as nx

    comp = {}
    conn = nx.strongly_connected_components if net.directed else nx.connected_components
    for c, members in enumerate(conn(net.graph)):
        for m in members:
            comp[net.index[m]] = c
    for r in range(1, len(nodes)):
        if comp[nodes[r]] != comp[nodes[0]]:
            raise _no_path(net, nodes, nodes[0], nodes[r])
    return net


def _no_path(net, placed, u, v):
    """The error for placed nodes ``u`` and ``v`` (node indices) with no path between them."""
    rank = {int(node): r for r, node in enumerate(placed)}
    u, v = int(u), int(v)
    return TopologyError(f"ranks {rank[u]} ({net.nodes[u]!r}) and {rank[v]} ({net.nodes[v]!r}) "
                         f"have no path between them")


def _unique_pairs(src, dst, n):
    """``np.unique(src * n + dst, return_inverse=True)``, in less memory when ``n`` is small.

    With ``n * n`` no larger than four keys per message, the distinct keys are
    marked in a table of ``n * n`` flags and numbered in increasing order (the
    same keys and inverse as ``np.unique``, which sorts: at 10^7 messages its
    sort, sorted copy and inverse took about 40 bytes per message).

    Examples
    --------
    >>> k, inv = _unique_pairs(np.array([2, 0, 2]), np.array([1, 1, 1]), 3)
    >>> k.tolist(), inv.tolist()
    ([1, 7], [1, 0, 1])
    """
    keys = src * n + dst
    if n * n > 4 * len(keys) or n * n >= 2**31:
        return np.unique(keys, return_inverse=True)
    seen = np.zeros(n * n, bool)
    seen[keys] = True
    number = np.cumsum(seen, dtype=np.int32)
    number -= 1
    pair = number[keys].astype(np.int64)
    return np.flatnonzero(seen), pair

