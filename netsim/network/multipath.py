"""Equal-cost paths between two nodes: their number, the i-th in a fixed order, ECMP hashing.

:class:`netsim.network.compiled.Network` routes a message along one of the paths of
least cost (total latency, then hops) between its two nodes. This module holds
the plain functions behind that: a Dijkstra that keeps *every* equal-cost
predecessor (:func:`equal_cost_dag`), the number of shortest paths to each node
and the path of a given index in lexicographic order (:func:`unrank_path`), and
the per-flow hash of ECMP (:func:`ecmp_hash`, options checked by
:func:`check_ecmp`), and the per-link sum of what routed messages carry
(:func:`route_loads`).

The order of the paths: a path is read backwards from the destination as the
sequence of (predecessor node index, link index) it takes at each node, and the
paths are sorted by that sequence. Path 0 therefore takes the lowest-ordered
predecessor at every node, which is exactly the single route the network used
before it knew several paths.
"""

import heapq

import numpy as np

from netsim.checks import check_int
from netsim.errors import TopologyError

__all__ = ["ECMP", "check_ecmp", "equal_cost_dag", "path_counts", "unrank_path", "ecmp_hash",
           "route_loads"]

_MASK = (1 << 64) - 1
# Ways to spread flows over equal-cost paths: None (off: by channel) or per-flow hashing.
ECMP = (None, "hash")


def equal_cost_dag(adj, src, targets, dead_end, penalty=None):
    """Dijkstra on (cost, hops, penalty) from ``src`` keeping every equal-cost predecessor link.

    Parameters
    ----------
    adj : list of list of (int, int, int)
        ``adj[u]`` lists ``(v, link, cost)`` for each link direction leaving node
        ``u``, with integer costs (so that equal paths tie exactly).
    src : int
        Source node index.
    targets : set of int
        The search stops once every target is settled.
    dead_end : list of int
        ``dead_end[v]`` is the one neighbour of a node whose every link leads
        back to it (-1 otherwise); such a node is only entered as a target.
    penalty : list of int, optional
        ``penalty[v]`` is added to the third cost of a path entering node ``v``
        (the nodes off the source's rail: :meth:`netsim.network.compiled.Network.off_rail`);
        default none.

    Returns
    -------
    order : list of int
        Settled nodes in settling order (a topological order of the DAG).
    preds : dict
        Node -> sorted list of ``(predecessor node, link)`` on its shortest paths.

    Examples
    --------
    A square 0-1-3, 0-2-3 of equal links: node 3 has two shortest paths.

    >>> adj = [[(1, 0, 1), (2, 1, 1)], [(3, 2, 1)], [(3, 3, 1)], []]
    >>> order, preds = equal_cost_dag(adj, 0, {3}, [-1] * 4)
    >>> preds[3]
    [(1, 2), (2, 3)]
    """
    penalty = [0] * len(adj) if penalty is None else penalty
    dist = {src: (0, 0, 0)}
    preds = {src: []}
    done, order = set(), []
    heap = [(0, 0, 0, src)]
    left = set(targets) - {src}
    if src in targets:
        order.append(src)
    while heap and left:
        d, h, o, u = heapq.heappop(heap)
        if u in done:
            continue
        done.add(u)
        if u != src:
            order.append(u)
        left.discard(u)
        for v, link, cost in adj[u]:
            if (dead_end[v] == u and v not in targets) or v in done:
                continue
            cand = (d + cost, h + 1, o + penalty[v])
            old = dist.get(v)
            if old is None or cand < old:
                dist[v] = cand
                preds[v] = [(u, link)]
                heapq.heappush(heap, (*cand, v))
            elif cand == old:
                preds[v].append((u, link))
    if src not in order:
        order.insert(0, src)
    return order, {v: sorted(preds[v]) for v in order}


def path_counts(order, preds):
    """Number of shortest paths from the source to each settled node.

    Examples
    --------
    >>> path_counts([0, 1, 2, 3], {0: [], 1: [(0, 0)], 2: [(0, 1)], 3: [(1, 2), (2, 3)]})
    {0: 1, 1: 1, 2: 1, 3: 2}
    """
    counts = {}
    for v in order:
        counts[v] = sum(counts[u] for u, _ in preds[v]) if preds[v] else 1
    return counts


def unrank_path(preds, counts, src, dst, index):
    """The links of shortest path number ``index`` (0-based) from ``src`` to ``dst``.

    Paths are ordered as in the module docstring; ``index`` must be below
    ``counts[dst]``.

    Returns
    -------
    tuple of int
        Link directions in path order.

    Examples
    --------
    >>> preds = {0: [], 1: [(0, 0)], 2: [(0, 1)], 3: [(1, 2), (2, 3)]}
    >>> counts = path_counts([0, 1, 2, 3], preds)
    >>> unrank_path(preds, counts, 0, 3, 0), unrank_path(preds, counts, 0, 3, 1)
    ((0, 2), (1, 3))
    """
    links = []
    node = dst
    while node != src:
        for u, link in preds[node]:
            if index < counts[u]:
                links.append(link)
                node = u
                break
            index -= counts[u]
    return tuple(reversed(links))


def _mix(x):
    """SplitMix64's finaliser (Steele, Lea & Flood 2014): a 64-bit integer scrambled."""
    x = (x + 0x9E3779B97F4A7C15) & _MASK
    x = ((x ^ (x >> 30)) * 0xBF58476D1CE4E5B9) & _MASK
    x = ((x ^ (x >> 27)) * 0x94D049BB133111EB) & _MASK
    return x ^ (x >> 31)


def ecmp_hash(seed, src, dst, channel):
    """A 64-bit hash of one flow (source node, destination node, channel) under a seed.

    What an ECMP switch computes from a packet's 5-tuple, with the channel in
    the role of the port numbers: every message of one flow hashes alike, and
    the seed stands for the switches' hash function. The same arguments give
    the same value on every machine and in every process.

    Examples
    --------
    >>> ecmp_hash(0, 3, 5, 0) == ecmp_hash(0, 3, 5, 0), ecmp_hash(0, 3, 5, 0) % 2
    (True, 1)
    """
    h = _mix(seed & _MASK)
    for value in (src, dst, channel):
        h = _mix(h ^ (value & _MASK))
    return h


def check_ecmp(ecmp, seed=0):
    """``(ecmp, seed)`` checked: ecmp None or ``"hash"``, seed an integer >= 0.

    Raises
    ------
    TopologyError
        Naming the bad value.

    Examples
    --------
    >>> check_ecmp("hash", 3)
    ('hash', 3)
    >>> check_ecmp("split")
    Traceback (most recent call last):
    ...
    netsim.errors.TopologyError: unknown ecmp 'split': use None (paths by channel) or 'hash'
    """
    if not (ecmp is None or isinstance(ecmp, str)) or ecmp not in ECMP:   # an array: no ==
        raise TopologyError(f"unknown ecmp {ecmp!r}: use None (paths by channel) or 'hash'")
    return ecmp, check_int(seed, "ecmp seed", minimum=0, error=TopologyError)


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
    Messages 0 and 1 on route 0 (links 0 and 2), message 2 on route 1 (link 2;
    4 is the padding).

    >>> route_loads([0, 0, 1], np.array([[0, 2], [2, 4]]), 4, [5.0, 5.0, 1.0]).tolist()
    [10.0, 0.0, 11.0, 0.0]
    """
    pair = np.asarray(pair, np.int64)
    per_route = np.bincount(pair, weights=weights, minlength=len(links))
    return np.bincount(links.ravel(), weights=np.repeat(per_route, links.shape[1]),
                       minlength=num_links + 1)[:num_links]
