"""Where ranks go by default: the compute nodes of a topology.

:meth:`netsim.network.compiled.Network.placement` puts rank r on the r-th compute node
unless a placement is given; :mod:`netsim.network.compiled` re-exports both functions.

The compute nodes, which host ranks by default, are the nodes of kind ``gpu`` in
graph order; if there are none, the nodes of kind ``host``. If no node has a
``kind`` at all (a hand-made ``.graphml`` or ``.json``, say), the ranks go on the
degree-1 nodes (the leaves, counting neighbours in either direction): in a tree
of switches those are the endpoints, and the switches are left out. A graph
without leaves (a ring, a complete graph) has no node that stands out as a
switch, so there every node is a compute node. Give ``kind`` (or a placement)
for anything else.
"""

__all__ = ["compute_nodes", "leaves"]


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
    kinds = {n: d["kind"] for n, d in G.nodes(data=True) if "kind" in d}
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
