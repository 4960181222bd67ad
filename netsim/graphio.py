"""Read and write topologies as networkx node-link JSON or GraphML.

Graphs made elsewhere (a cluster inventory, a vendor's topology dump) can be
simulated if their edges carry ``bandwidth`` (bytes/s) and ``latency`` (s).
"""

import json

import networkx as nx

from .errors import TopologyError

__all__ = ["read_topology", "write_topology"]


def write_topology(G, path):
    """Write ``G`` as node-link JSON (``.json``) or GraphML (``.graphml``).

    Examples
    --------
    >>> import os, tempfile
    >>> from topologies import star
    >>> p = os.path.join(tempfile.mkdtemp(), "s.graphml")
    >>> write_topology(star(3), p)
    >>> read_topology(p).number_of_edges()
    3
    """
    path = str(path)
    if path.endswith(".json"):
        data = nx.node_link_data(G, edges="edges")
        with open(path, "w") as f:
            json.dump(data, f, default=_jsonable)
    elif path.endswith(".graphml"):
        H = G.copy()
        for _, data in H.nodes(data=True):
            for key, value in list(data.items()):
                if isinstance(value, (tuple, list)):
                    data[key] = json.dumps(list(value))
        nx.write_graphml(H, path)
    else:
        raise TopologyError(f"unknown topology format for {path!r}: use .json or .graphml")


def _jsonable(value):
    if hasattr(value, "tolist"):
        return value.tolist()
    raise TypeError(f"cannot store {type(value).__name__} in JSON")


def read_topology(path):
    """Read a topology written by :func:`write_topology` (or any node-link JSON / GraphML).

    Raises
    ------
    TopologyError
        For a missing, unreadable or malformed file.
    """
    path = str(path)
    try:
        if path.endswith(".json"):
            with open(path) as f:
                data = json.load(f)
            key = "edges" if "edges" in data else "links"
            G = nx.node_link_graph(data, edges=key)
            for _, attrs in G.nodes(data=True):
                if isinstance(attrs.get("coord"), list):
                    attrs["coord"] = tuple(attrs["coord"])
            return G
        if path.endswith(".graphml"):
            G = nx.read_graphml(path)
            for _, attrs in G.nodes(data=True):
                value = attrs.get("coord")
                if isinstance(value, str) and value.startswith("["):
                    attrs["coord"] = tuple(json.loads(value))
            return G
    except FileNotFoundError:
        raise TopologyError(f"topology file not found: {path}") from None
    except Exception as exc:  # any parser failure is bad input: say so on one line
        raise TopologyError(f"{path}: not a valid topology ({type(exc).__name__}: {exc})") from None
    raise TopologyError(f"unknown topology format for {path!r}: use .json or .graphml")
