"""A networkx topology compiled for simulation: link directions, routes, placement.

netsim takes any ``networkx.Graph`` or ``DiGraph`` whose edges carry
``bandwidth`` (bytes/s, > 0) and should carry ``latency`` (seconds, >= 0; a
missing latency is taken as 0 s with a ``UserWarning`` through the
:mod:`warnings` module, naming how many edges lack one). An undirected edge is
a full-duplex link: it becomes two link directions, each with the full
bandwidth. A ``DiGraph`` edge is one
direction.

Routing is deterministic: a message takes the path of least total latency; ties
go to the path with fewer hops, then to the lowest-ordered predecessor node
(graph insertion order), node by node back from the destination. Routes are
computed on first use and cached on the :class:`Network`.

The compute nodes, which host ranks by default, are the nodes of kind ``gpu`` in
graph order; if there are none, the nodes of kind ``host``. If no node has a
``kind`` at all (a hand-made ``.graphml`` or ``.json``, say), the ranks go on the
degree-1 nodes (the leaves, counting neighbours in either direction): in a tree
of switches those are the endpoints, and the switches are left out. A graph
without leaves (a ring, a complete graph) has no node that stands out as a
switch, so there every node is a compute node. Give ``kind`` (or a placement)
for anything else.
"""

import warnings

import heapq
import math

import networkx as nx
import numpy as np

from .checks import is_real
from .errors import TopologyError

__all__ = ["Network", "as_network", "compute_nodes", "leaves", "check_topology", "route_loads"]

# Latencies are compared in integer femtoseconds so that equal paths tie exactly.
_FS = 1e15


def compute_nodes(G):
    """The nodes that host ranks by default, in order.

    Nodes of kind ``gpu`` if the graph has any; otherwise of kind ``host``;
    otherwise, when no node carries a ``kind``, the degree-1 nodes (leaves), or
    every node when the graph has no leaf (see the module docstring).

    Examples
    --------
    >>> import networkx as nx
    >>> G = nx.Graph(); G.add_node("s", kind="switch"); G.add_node("h0", kind="host")
    >>> compute_nodes(G)
    ['h0']
    >>> compute_nodes(nx.star_graph(3))  # no kind: the leaves, not the hub 0
    [1, 2, 3]
    >>> compute_nodes(nx.cycle_graph(3))  # no kind, no leaf: every node
    [0, 1, 2]
    """
    kinds = nx.get_node_attributes(G, "kind")
    for kind in ("gpu", "host"):
        nodes = [n for n in G.nodes if kinds.get(n) == kind]
        if nodes:
            return nodes
    if not kinds:
        return leaves(G) or list(G.nodes)
    return []


def leaves(G):
    """The degree-1 nodes of ``G`` in graph order, neighbours counted in either direction.

    Examples
    --------
    >>> import networkx as nx
    >>> leaves(nx.path_graph(4)), leaves(nx.DiGraph([(0, 1), (1, 0), (1, 2)]))
    ([0, 3], [0, 2])
    """
    U = G.to_undirected(as_view=True) if G.is_directed() else G
    return [n for n in U.nodes if U.degree(n) == 1 and not U.has_edge(n, n)]


class Network:
    """A topology ready for simulation.

    Parameters
    ----------
    G : networkx.Graph or networkx.DiGraph
        Edges need ``bandwidth`` > 0 (bytes/s); ``latency`` >= 0 (s) defaults to 0
        with a ``UserWarning`` (how many edges lack one).

    Attributes
    ----------
    nodes : list
        Graph nodes in order; node ``i`` is ``nodes[i]``.
    link_src, link_dst : ndarray of int
        Node indices of each link direction.
    bandwidth, latency : ndarray of float
        Per link direction.

    Raises
    ------
    TopologyError
        For a multigraph, an empty graph, or an edge whose bandwidth is missing or
        not positive or whose latency is negative or not a number.

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
        if not isinstance(G, nx.Graph):
            raise TopologyError(f"topology must be a networkx graph, got {type(G).__name__}")
        if G.is_multigraph():
            raise TopologyError("multigraphs are not supported: merge parallel links into one "
                                "edge with their summed bandwidth")
        if G.number_of_nodes() == 0:
            raise TopologyError("topology has no nodes")
        self.graph = G
        self.directed = G.is_directed()
        self.nodes = list(G.nodes)
        self.index = {n: i for i, n in enumerate(self.nodes)}
        src, dst, bw, lat = [], [], [], []
        missing = sum("latency" not in d for _, _, d in G.edges(data=True))
        if missing:
            warnings.warn(f"{missing} of {G.number_of_edges()} edges carry no latency: "
                          f"taken as 0 s", stacklevel=2)
        for u, v, data in G.edges(data=True):
            b = data.get("bandwidth")
            if b is None:
                raise TopologyError(f"edge ({u!r}, {v!r}) has no 'bandwidth' attribute")
            if not is_real(b) or not math.isfinite(b) or b <= 0:
                raise TopologyError(f"edge ({u!r}, {v!r}) has bandwidth {b!r}: it must be a "
                                    f"finite number > 0 bytes/s")
            lt = data.get("latency", 0.0)
            if not is_real(lt) or not math.isfinite(lt) or lt < 0:
                raise TopologyError(f"edge ({u!r}, {v!r}) has latency {lt!r}: it must be a "
                                    f"finite number >= 0 seconds")
            if u == v:
                raise TopologyError(f"edge ({u!r}, {v!r}) is a self-loop")
            pairs = [(u, v)] if self.directed else [(u, v), (v, u)]
            for a, c in pairs:
                src.append(self.index[a])
                dst.append(self.index[c])
                bw.append(float(b))
                lat.append(float(lt))
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
        self._routes = {}

    @property
    def num_links(self):
        """Number of link directions."""
        return len(self.bandwidth)

    def link_name(self, link):
        """``"u->v"`` for a link direction.

        Examples
        --------
        >>> import networkx as nx
        >>> G = nx.Graph(); G.add_edge("a", "b", bandwidth=1e9)
        >>> Network(G).link_name(1)
        'b->a'
        """
        return f"{self.nodes[self.link_src[link]]}->{self.nodes[self.link_dst[link]]}"

    def node_of(self, node):
        """Index of a node, raising TopologyError for a missing one.

        Examples
        --------
        >>> import networkx as nx
        >>> G = nx.Graph(); G.add_edge("a", "b", bandwidth=1e9)
        >>> Network(G).node_of("b")
        1
        """
        try:
            return self.index[node]
        except (KeyError, TypeError):
            raise TopologyError(f"node {node!r} is not in the topology") from None

    def route(self, src, dst):
        """Link directions from node index ``src`` to ``dst`` (a tuple; cached).

        The path of least total latency; ties go to fewer hops, then to the
        lowest-ordered predecessor (see the module docstring).

        Parameters
        ----------
        src, dst : int
            Node indices (:meth:`node_of`).

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
        >>> net = Network(G)
        >>> links = net.route(0, 2)
        >>> links, [net.link_name(k) for k in links]
        ((0, 2), ['0->1', '1->2'])
        """
        key = (src, dst)
        r = self._routes.get(key)
        if r is None:
            self._solve(src, {dst})
            r = self._routes.get(key)
            if r is None:
                raise TopologyError(f"no path from {self.nodes[src]!r} to {self.nodes[dst]!r}")
        return r

    def path(self, u, v):
        """The node path a message from ``u`` to ``v`` takes (node names).

        Parameters
        ----------
        u, v : node
            Graph nodes.

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
        links = self.route(self.node_of(u), self.node_of(v))
        return [u] + [self.nodes[self.link_dst[k]] for k in links]

    def _solve(self, src, targets):
        """Dijkstra from ``src`` on (latency, hops); cache routes to every node settled.

        Stops once every target is settled. Among equal (latency, hops) the
        predecessor with the lowest node index wins.
        """
        if src in targets:
            self._routes[(src, src)] = ()
        INF = (math.inf, math.inf)
        dist = {src: (0, 0)}
        pred = {}
        done = set()
        heap = [(0, 0, src)]
        left = set(targets) - {src}
        adj, link_src, dead_end = self._adj, self._src_list, self._dead_end
        while heap and left:
            d, h, u = heapq.heappop(heap)
            if u in done:
                continue
            done.add(u)
            left.discard(u)
            for v, link, fs in adj[u]:
                if (dead_end[v] == u and v not in targets) or v in done:
                    continue
                cand = (d + fs, h + 1)
                old = dist.get(v, INF)
                if cand < old or (cand == old and u < link_src[pred[v]]):
                    if cand < old:
                        heapq.heappush(heap, (cand[0], cand[1], v))
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

    def routes(self, src, dst, placed=None):
        """Routes for arrays of node-index pairs, as a padded link matrix.

        Parameters
        ----------
        src, dst : array_like of int
            Node indices.
        placed : ndarray of int, optional
            Node index of each rank (from :meth:`placement`); when given, a
            missing route is reported by the ranks it joins.

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
        >>> pair, links, lat = Network(G).routes([0, 2, 0], [2, 0, 2])
        >>> pair.tolist(), links.tolist()
        ([0, 1, 0], [[0, 2], [3, 1]])
        """
        src = np.asarray(src, np.int64)
        dst = np.asarray(dst, np.int64)
        n = len(self.nodes)
        keys, pair = np.unique(src * n + dst, return_inverse=True)
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
        hops = max((len(r) for r in routes), default=0)
        links = np.full((len(routes), max(hops, 1)), self.num_links, np.int64)
        for i, r in enumerate(routes):
            links[i, :len(r)] = r
        lat = np.concatenate([self.latency, [0.0]])[links].sum(axis=1)
        return pair.reshape(-1), links, lat

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
        >>> G.add_edge("h0", "s", bandwidth=1e9); G.add_edge("h1", "s", bandwidth=1e9)
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
    >>> G = nx.Graph(); G.add_edge("a", "b", bandwidth=1e9)
    >>> net = as_network(G)
    >>> as_network(net) is net, net.num_links
    (True, 2)
    """
    return topology if isinstance(topology, Network) else Network(topology)



def route_loads(pair, links, num_links, weights=None):
    """Sum per link direction of a quantity carried by routed messages (bytes, counts).

    The one link-load binning: messages are summed per route first (there are
    far fewer routes than messages), then each route's sum is added to every
    link direction on it.

    Parameters
    ----------
    pair : array_like of int
        Route index of each message (the ``pair`` of :meth:`Network.routes`).
    links : ndarray of int, shape (routes, hops)
        Link directions of each route, padded with ``num_links``.
    num_links : int
        Number of link directions.
    weights : array_like of float, optional
        Per-message quantity; None counts messages.

    Returns
    -------
    ndarray of float, shape (num_links,)

    Examples
    --------
    >>> import networkx as nx
    >>> G = nx.path_graph(3); nx.set_edge_attributes(G, 1e9, "bandwidth")
    >>> net = Network(G)
    >>> pair, links, _ = net.routes([0, 0, 1], [2, 2, 2])
    >>> route_loads(pair, links, net.num_links, [5.0, 5.0, 1.0]).tolist()
    [10.0, 0.0, 11.0, 0.0]
    """
    pair = np.asarray(pair, np.int64)
    per_route = np.bincount(pair, weights=weights, minlength=len(links))
    return np.bincount(links.ravel(), weights=np.repeat(per_route, links.shape[1]),
                       minlength=num_links + 1)[:num_links]


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
