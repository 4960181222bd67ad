"""Read and write topologies as networkx node-link JSON or GraphML.

Graphs made elsewhere (a cluster inventory, a vendor's topology dump) can be
simulated if their edges carry ``bandwidth`` (bytes/s) and ``latency`` (s).
"""

import json

import networkx as nx

from netsim.errors import TopologyError

__all__ = ["read_topology", "write_topology"]


def write_topology(G, path):
    """Write ``G`` as node-link JSON (``.json``) or GraphML (``.graphml``).

    JSON round-trips a topology: :func:`read_topology` gives back a graph
    isomorphic to ``G`` with the same node ids (strings, integers or tuples)
    and the same node, edge and graph attributes, lists and tuples included.
    Tuple-valued attributes (such as a torus node's ``coord``) are stored as
    lists and their names kept in the graph attribute ``netsim_tuples``, so
    they come back as tuples.

    GraphML round-trips string and integer node ids (integer ids are flagged
    in ``netsim_node_type`` and restored) and scalar and tuple attributes.
    It has no list type and its ids are strings, so two things do not come
    back: a list-valued attribute is read back as its JSON text (``"[1, 2]"``),
    and a tuple node id as its ``str`` (``"(0, 1)"``). Use JSON for such graphs.

    Parameters
    ----------
    G : networkx.Graph or DiGraph
    path : str or path-like
        Ends with ``.json`` or ``.graphml``.

    Raises
    ------
    TopologyError
        For another file extension.

    Examples
    --------
    >>> import os, tempfile
    >>> import networkx as nx  # a star: hosts on one switch
    >>> G = nx.Graph()
    >>> G.add_nodes_from(["host0", "host1", "host2"], kind="host")
    >>> G.add_edges_from([(h, "switch") for h in list(G)], bandwidth=1.25e9, latency=1e-6)
    >>> p = os.path.join(tempfile.mkdtemp(), "s.graphml")
    >>> write_topology(G, p)
    >>> read_topology(p).number_of_edges()
    3
    """
    path = str(path)
    if not path.endswith((".json", ".graphml")):
        raise TopologyError(f"unknown topology format for {path!r}: use .json or .graphml")
    H = G.copy()
    tuples = {"node": _tuple_keys(d for _, d in H.nodes(data=True)),
              "edge": _tuple_keys(d for *_, d in H.edges(data=True)),
              "graph": _tuple_keys([H.graph])}
    if any(tuples.values()):
        H.graph["netsim_tuples"] = json.dumps(tuples, sort_keys=True)
    if path.endswith(".json"):
        data = nx.node_link_data(H, edges="edges")
        with open(path, "w") as f:
            json.dump(data, f, default=_jsonable)
    else:
        for data in _attr_dicts(H):
            for key, value in list(data.items()):
                if isinstance(value, (tuple, list)):
                    data[key] = json.dumps(list(value), default=_jsonable)
        if H.number_of_nodes() and all(isinstance(n, int) and not isinstance(n, bool)
                                       for n in H.nodes):
            H.graph["netsim_node_type"] = "int"
        nx.write_graphml(H, path)


def _attr_dicts(G):
    yield G.graph
    yield from (d for _, d in G.nodes(data=True))
    yield from (d for *_, d in G.edges(data=True))


def _tuple_keys(dicts):
    return sorted({k for d in dicts for k, v in d.items() if isinstance(v, tuple)})


def _jsonable(value):
    if hasattr(value, "tolist"):
        return value.tolist()
    raise TypeError(f"cannot store {type(value).__name__} in JSON")


def read_topology(path):
    """Read a topology written by :func:`write_topology` (or any node-link JSON / GraphML).

    Parameters
    ----------
    path : str or path-like
        A ``.json`` (networkx node-link data, ``edges`` or ``links`` key) or
        ``.graphml`` file.

    Returns
    -------
    networkx.Graph or networkx.DiGraph

    Raises
    ------
    TopologyError
        For a missing, unreadable or malformed file.

    Examples
    --------
    >>> import os, tempfile
    >>> import networkx as nx  # a 2 x 2 torus, hosts with their grid coordinates
    >>> G = nx.cycle_graph([f"host{i}" for i in (0, 1, 3, 2)])
    >>> nx.set_node_attributes(G, {f"host{i}": (i // 2, i % 2) for i in range(4)}, "coord")
    >>> nx.set_edge_attributes(G, 1.25e9, "bandwidth"); nx.set_edge_attributes(G, 1e-6, "latency")
    >>> p = os.path.join(tempfile.mkdtemp(), "t.json")
    >>> write_topology(G, p)
    >>> read_topology(p).nodes["host3"]["coord"]
    (1, 1)
    """
    path = str(path)
    try:
        if path.endswith(".json"):
            with open(path) as f:
                data = json.load(f)
            key = "edges" if "edges" in data else "links"
            for item in data.get("nodes", ()):  # JSON has no tuples: (0, 1) ids became lists
                if isinstance(item.get("id"), list):
                    item["id"] = _tuple(item["id"])
            for item in data.get(key, ()):
                for end in ("source", "target"):
                    if isinstance(item.get(end), list):
                        item[end] = _tuple(item[end])
            G = nx.node_link_graph(data, edges=key)
            return _restore(G, json_lists=False)
        if path.endswith(".graphml"):
            G = nx.read_graphml(path)
            if G.graph.get("netsim_node_type") == "int":
                G = nx.relabel_nodes(G, int, copy=True)
            for key in ("node_default", "edge_default"):  # added by the reader when empty
                if G.graph.get(key) == {}:
                    del G.graph[key]
            return _restore(G, json_lists=True)
    except FileNotFoundError:
        raise TopologyError(f"topology file not found: {path}") from None
    except Exception as exc:  # any parser failure is bad input: say so on one line
        raise TopologyError(f"{path}: not a valid topology ({type(exc).__name__}: {exc})") from None
    raise TopologyError(f"unknown topology format for {path!r}: use .json or .graphml")


def _tuple(value):
    return tuple(_tuple(v) if isinstance(v, list) else v for v in value)


def _restore(G, json_lists):
    """Turn the attributes named in ``netsim_tuples`` back into tuples."""
    G.graph.pop("netsim_node_type", None)
    marker = G.graph.pop("netsim_tuples", None)
    # Files written before the marker existed: only a node's coord was a tuple.
    names = json.loads(marker) if marker else {"node": ["coord"], "edge": [], "graph": []}
    where = {"node": [d for _, d in G.nodes(data=True)],
             "edge": [d for *_, d in G.edges(data=True)], "graph": [G.graph]}
    for kind, keys in names.items():
        for data in where.get(kind, ()):
            for key in keys:
                value = data.get(key)
                if json_lists and isinstance(value, str) and value.startswith("["):
                    value = json.loads(value)
                if isinstance(value, list):
                    data[key] = _tuple(value)
    return G
