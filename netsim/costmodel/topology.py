"""What a topology implies for cost models: alpha and beta, link loads, the contention bound."""

import numpy as np

from netsim.checks import check_int
from netsim.errors import TraceError
from netsim.comm.library import mpich_wire
from netsim.network.compiled import as_network, compute_nodes, route_loads

__all__ = ["alpha_beta", "link_loads", "contention_bound", "busiest_link"]


def alpha_beta(topology, ranks=None, placement=None, trace=None):
    """Alpha and beta for ranks placed on a topology.

    Alpha is the largest path latency and beta the inverse of the smallest
    bottleneck bandwidth over the pairs considered: the ``(src, dst)`` pairs
    of the trace's messages if a trace is given (its collective ops as MPICH's
    messages, :func:`netsim.comm.library.mpich_wire`), otherwise every ordered pair
    of the ``ranks`` placed ranks. Pairs on one node are skipped.

    Parameters
    ----------
    topology : networkx.Graph or Network
        The hardware.
    ranks : int, optional
        Number of ranks (default: the trace's, else every compute node).
    placement : sequence or dict, optional
        ``placement[r]`` is the node of rank r (default: compute nodes in order).
    trace : Trace, optional

    Returns
    -------
    alpha, beta : float
        Seconds and seconds per byte; (0, 0) when no pair crosses the network.

    Raises
    ------
    TopologyError
        For more ranks than compute nodes, a bad placement, or no path.

    Examples
    --------
    >>> import networkx as nx  # a star: hosts on one switch
    >>> G = nx.Graph()
    >>> G.add_nodes_from([f"host{i}" for i in range(4)], kind="host")
    >>> G.add_edges_from([(h, "switch") for h in list(G)], bandwidth=1.25e9, latency=1e-6)
    >>> a, b = alpha_beta(G)
    >>> a, 1 / b
    (2e-06, 1250000000.0)
    """
    net = as_network(topology)
    if trace is not None:
        trace = mpich_wire(trace)
        ranks = trace.ranks
        msg = trace.is_message
        pairs = np.unique(np.stack([trace.rank[msg], trace.peer[msg]], axis=1).astype(np.int64),
                          axis=0)
        src, dst = pairs[:, 0], pairs[:, 1]
    else:
        if ranks is None:
            ranks = len(placement) if placement is not None else len(compute_nodes(net.graph))
        ranks = check_int(ranks, "ranks", error=TraceError)
        src, dst = np.divmod(np.arange(ranks * ranks, dtype=np.int64), ranks)
    nodes = net.placement(ranks, placement)
    u, v = nodes[src], nodes[dst]
    keep = u != v
    if not keep.any():
        return 0.0, 0.0
    _, links, lat = net.routes(u[keep], v[keep])
    cap = np.concatenate([net.bandwidth, [np.inf]])[links].min(axis=1)
    return float(lat.max()), float(1.0 / cap.min())


def link_loads(trace, topology, placement=None):
    """Bytes each link direction must carry when the trace's messages are routed (its
    collective ops as MPICH's messages, :func:`netsim.comm.library.mpich_wire`).

    Parameters
    ----------
    trace : Trace
    topology : networkx.Graph or Network
    placement : sequence or dict, optional
        ``placement[r]`` is the node of rank r (default: compute nodes in order).

    Returns
    -------
    ndarray
        One entry per link direction of ``Network(topology)``, in its order.

    Examples
    --------
    >>> from netsim.comm.collectives import ring_allgather
    >>> import networkx as nx  # a star: hosts on one switch
    >>> G = nx.Graph()
    >>> G.add_nodes_from(["host0", "host1"], kind="host")
    >>> G.add_edges_from([(h, "switch") for h in list(G)], bandwidth=1.25e9, latency=1e-6)
    >>> link_loads(ring_allgather(2, 2e6), G).tolist()
    [1000000.0, 1000000.0, 1000000.0, 1000000.0]
    """
    net = as_network(topology)
    nodes = net.placement(trace.ranks, placement)
    trace = mpich_wire(trace)   # collective ops as MPICH's messages
    msg = trace.is_message
    L = net.num_links
    if not msg.any():
        return np.zeros(L)
    pair, links, _ = net.routes(nodes[trace.rank[msg]], nodes[trace.peer[msg]],
                                channel=trace.channel[msg])
    return route_loads(pair, links, L, trace.size[msg])


def contention_bound(trace, topology, placement=None):
    """Lower bound on any schedule of the trace's messages: the busiest link direction.

    For each link direction, the bytes it must carry divided by its bandwidth;
    the bound is the largest (:func:`busiest_link`). Latency and dependencies
    are ignored.

    Parameters
    ----------
    trace : Trace
    topology : networkx.Graph or Network
    placement : sequence or dict, optional
        ``placement[r]`` is the node of rank r (default: compute nodes in order).

    Returns
    -------
    dict
        ``seconds`` (the bound), ``link`` (``"u->v"``, None without messages),
        ``bytes`` and ``bandwidth`` of that link direction.

    Examples
    --------
    >>> from netsim.comm.collectives import ps_push_pull
    >>> import networkx as nx  # a star: hosts on one switch
    >>> G = nx.Graph()
    >>> G.add_nodes_from([f"host{i}" for i in range(5)], kind="host")
    >>> G.add_edges_from([(h, "switch") for h in list(G)], bandwidth=1e9, latency=1e-6)
    >>> cb = contention_bound(ps_push_pull(4, 1e6), G)
    >>> cb["seconds"], cb["link"]
    (0.004, 'host4->switch')
    """
    net = as_network(topology)
    return busiest_link(link_loads(trace, net, placement), net.bandwidth,
                        [net.link_name(k) for k in range(net.num_links)])


def busiest_link(loads, bandwidth, names):
    """The link direction whose bytes take longest at its bandwidth: the contention bound.

    The one implementation of the bound: :func:`contention_bound` feeds it the
    loads of a routed trace; a finished run's ``Result.links`` (``bytes``,
    ``bandwidth``, ``src->dst``) can be fed to it directly, without re-routing.

    Parameters
    ----------
    loads : array_like of float
        Bytes per link direction.
    bandwidth : array_like of float
        Bytes/s per link direction.
    names : sequence of str
        ``"u->v"`` per link direction.

    Returns
    -------
    dict
        ``seconds`` (largest ``loads / bandwidth``; 0 when nothing is carried),
        ``link`` (its name, None when nothing is carried), ``bytes`` and
        ``bandwidth`` of that link direction.

    Examples
    --------
    >>> busiest_link([4e6, 1e6], [1e9, 1e8], ["a->b", "b->a"])
    {'seconds': 0.01, 'link': 'b->a', 'bytes': 1000000.0, 'bandwidth': 100000000.0}
    """
    loads = np.asarray(loads, np.float64)
    if not len(loads) or loads.max() <= 0:
        return {"seconds": 0.0, "link": None, "bytes": 0.0, "bandwidth": None}
    t = loads / np.asarray(bandwidth, np.float64)
    i = int(np.argmax(t))
    return {"seconds": float(t[i]), "link": str(names[i]), "bytes": float(loads[i]),
            "bandwidth": float(bandwidth[i])}
