"""One route found from both ends: the same route a full Dijkstra picks, without its sweep.

:class:`netsim.network.compiled.Network` routes by least cost, the cost of a path
being (total latency, hops, nodes off the source's rail) compared in that order, and
among equal-cost predecessors a node takes the one of lowest index. A Dijkstra search
from the source settles every node cheaper than the target before it: on a cluster
whose rails are single switches, a route to the next machine settles every NIC and
PCIe switch of the rail first (about 6,000 nodes and 80 ms a source at 2,048
machines), and a pipeline or tree over 16,384 GPUs asks for one route per GPU.

:func:`route_toward` finds the same route in two passes:

1. A bidirectional Dijkstra (forward from the source, backward from the target, the
   side with the smaller key first) gives the least cost ``D``, and each node the
   backward pass settled its exact cost to the target.
2. A Dijkstra from the source, as the full search runs it, that does not enter a node
   ``v`` whose cost from the source plus a lower bound on its cost to the target exceeds
   ``D``; the bound is the exact cost for a node the backward pass settled and the
   backward heap's least key for any other (every unsettled node costs at least that).

Why the route is the same: a node ``u`` that is a least-cost predecessor of a node
``v`` on a least-cost route lies itself on a least-cost route from the source to the
target, so its cost plus its true cost to the target is ``D`` and no admissible bound
prunes it; its cost is strictly below ``v``'s (every hop adds one), so the pruned
search settles it before ``v`` and considers it for ``v``'s predecessor exactly as the
full search does. The route to the target is therefore the full search's, tie-breaks
included; other nodes' costs in the pruned search need not be least, so only the
target's route is kept.

Costs are integers here: latency in femtoseconds, hops and off-rail nodes packed below
it (each below ``2**24``), so that a sum compares as the triple does.
"""

import heapq

__all__ = ["route_toward"]

_HOP = 1 << 24          # the hops' unit, above the off-rail count
_FS = 1 << 48           # the femtosecond's unit, above the hops


def route_toward(adj, radj, link_src, dead_end, off, src, dst, dead_in=None):
    """The least-cost route from ``src`` to ``dst`` as a full Dijkstra picks it.

    Parameters
    ----------
    adj, radj : list of list of (int, int, int)
        Per node, its out-links as ``(head, link, latency in fs)`` sorted, and its
        in-links as ``(tail, link, latency in fs)``.
    link_src : list of int
        Each link's tail.
    dead_end : list of int
        Per node, its only neighbour when every link leads back there, else -1:
        such a node can only end a path.
    off : list of int
        Per node, 1 when it is off the source's rail, else 0.
    src, dst : int
        Node indices, different.
    dead_in : list of int, optional
        Per node, its only in-neighbour when every link into it comes from there, else
        -1: such a node can only start a path (default ``dead_end``, right for a graph
        whose links come in pairs).

    Returns
    -------
    tuple of int or None
        The route's links in order, or None when ``dst`` cannot be reached.

    Examples
    --------
    A square ``0-1-3``, ``0-2-3`` of equal latencies: both paths tie, and node 3 takes
    its lowest-indexed predecessor, 1.

    >>> edges = [(0, 1), (1, 3), (0, 2), (2, 3)]
    >>> links = [(a, b) for a, b in edges] + [(b, a) for a, b in edges]
    >>> adj = [sorted((b, k, 1000) for k, (a, b) in enumerate(links) if a == n) for n in range(4)]
    >>> radj = [[(a, k, 1000) for k, (a, b) in enumerate(links) if b == n] for n in range(4)]
    >>> route_toward(adj, radj, [a for a, _ in links], [-1] * 4, [0] * 4, 0, 3)
    (0, 1)
    """
    best, db, settled_b, top_b = _meet(adj, radj, dead_end,
                                       dead_end if dead_in is None else dead_in, off, src, dst)
    if best is None:
        return None
    dist, pred, done = {src: 0}, {}, set()
    heap = [(0, src)]
    while heap:
        d, u = heapq.heappop(heap)
        if u in done:
            continue
        if u == dst:
            break
        done.add(u)
        for v, link, fs in adj[u]:
            if (dead_end[v] == u and v != dst) or v in done:
                continue
            cand = d + fs * _FS + _HOP + off[v]
            if cand + (db[v] if v in settled_b else top_b) > best:
                continue
            old = dist.get(v)
            if old is None or cand < old:
                heapq.heappush(heap, (cand, v))
                dist[v], pred[v] = cand, link
            elif cand == old and u < link_src[pred[v]]:
                pred[v] = link
    links, node = [], dst
    while node != src:
        link = pred[node]
        links.append(link)
        node = link_src[link]
    return tuple(reversed(links))


def _meet(adj, radj, dead_end, dead_in, off, src, dst):
    """The bidirectional search: the least cost (None: no path), the backward costs,
    the nodes it settled, and a lower bound on any other node's cost to ``dst``."""
    df, db = {src: 0}, {dst: 0}
    hf, hb = [(0, src)], [(0, dst)]
    sf, sb = set(), set()
    best = None
    while hf and hb:
        if best is not None and hf[0][0] + hb[0][0] >= best:
            break
        if hf[0][0] <= hb[0][0]:
            d, u = heapq.heappop(hf)
            if u in sf:
                continue
            sf.add(u)
            for v, _, fs in adj[u]:
                if dead_end[v] == u and v != dst:
                    continue
                cand = d + fs * _FS + _HOP + off[v]
                if v in db and (best is None or cand + db[v] < best):
                    best = cand + db[v]
                if best is not None and hb and cand + hb[0][0] >= best:
                    continue   # no path through v beats best: every node left costs that
                if cand < df.get(v, cand + 1):
                    df[v] = cand
                    heapq.heappush(hf, (cand, v))
        else:
            d, v = heapq.heappop(hb)
            if v in sb:
                continue
            sb.add(v)
            step = _HOP + off[v]
            for u, _, fs in radj[v]:
                if dead_in[u] == v and u != src:
                    continue
                cand = d + fs * _FS + step
                if u in df and (best is None or df[u] + cand < best):
                    best = df[u] + cand
                if cand < db.get(u, cand + 1):
                    db[u] = cand
                    heapq.heappush(hb, (cand, u))
    top_b = hb[0][0] if hb else (best if best is not None else 0) + 1
    return best, db, sb, top_b
