"""Max-min fair rates by progressive filling, vectorised with numpy.

All flows start at rate 0 and grow together; when a link fills up, the flows
crossing it freeze at their current rate and the others keep growing. Each round
freezes the flows of the link(s) with the smallest fair share
``remaining capacity / unfrozen flows``; there are at most as many rounds as
distinct bottleneck levels. This is the bandwidth-sharing model of SimGrid's
CM02 (Casanova, Legrand & Quinson, "SimGrid: a generic framework for large-scale
distributed experiments", UKSim 2008) and of Bertsekas & Gallager, *Data
Networks*, 2nd ed., section 6.5.2.
"""

import numpy as np

__all__ = ["max_min_rates", "max_min_rates_small"]

# Links whose fair share is within this relative distance of the round's minimum
# freeze in the same round, so that equal shares computed by different float
# paths do not split into needless extra rounds.
_SHARE_RTOL = 1e-12


def max_min_rates(flow_links, capacity, pad=-1):
    """Max-min fair rate of each flow.

    Parameters
    ----------
    flow_links : ndarray of int, shape (flows, hops)
        Link ids each flow crosses; entries equal to ``pad`` are ignored. Every
        flow must cross at least one real link.
    capacity : ndarray of float
        Capacity of each link id (bytes/s).
    pad : int
        Filler value in ``flow_links``.

    Returns
    -------
    ndarray of float
        The rate of each flow (bytes/s).

    Examples
    --------
    The parking lot: flow 0 crosses links 0 and 1, flow 1 only link 0, flow 2
    only link 1. Link 0 has 10 units, link 1 has 4.

    >>> import numpy as np
    >>> max_min_rates(np.array([[0, 1], [0, -1], [1, -1]]), np.array([10.0, 4.0])).tolist()
    [2.0, 8.0, 2.0]
    """
    flow_links = np.asarray(flow_links)
    nflows, hops = flow_links.shape
    valid = flow_links != pad
    owner = np.repeat(np.arange(nflows), hops).reshape(nflows, hops)[valid]
    ids, link = np.unique(flow_links[valid], return_inverse=True)
    link = link.reshape(-1)
    capacity = np.asarray(capacity, np.float64)
    if len(ids) == len(link):
        # No link is shared: every flow gets its own bottleneck (one solve for a batch of
        # independent flows, as in every step of a ring on a star).
        caps = np.full(flow_links.shape, np.inf)
        caps[valid] = capacity[flow_links[valid]]
        return caps.min(axis=1)
    left = capacity[ids].copy()
    nlinks = len(ids)
    rates = np.zeros(nflows)
    live = np.ones(len(owner), bool)  # incidence entries of unfrozen flows
    while live.any():
        count = np.bincount(link[live], minlength=nlinks)
        used = count > 0
        share = np.full(nlinks, np.inf)
        share[used] = left[used] / count[used]
        level = share.min()
        bottleneck = share <= level * (1 + _SHARE_RTOL)
        hit = np.zeros(nflows, bool)
        hit[owner[live & bottleneck[link]]] = True
        rates[hit] = level
        newly = live & hit[owner]
        left -= level * np.bincount(link[newly], minlength=nlinks)
        np.maximum(left, 0.0, out=left)
        live &= ~newly
    return rates


def max_min_rates_small(routes, capacity):
    """Max-min fair rates of a few flows, in plain Python, equal bit for bit to :func:`max_min_rates`.

    Numpy's per-call overhead dominates for a handful of flows, the common case of
    a desynchronised event; this runs the same rounds with the same float
    operations in the same order, so both give identical rates.

    Parameters
    ----------
    routes : list of sequence of int
        The link ids each flow crosses (no padding; at least one link each).
    capacity : sequence of float
        Capacity of each link id (bytes/s).

    Returns
    -------
    list of float
        The rate of each flow (bytes/s).

    Examples
    --------
    The parking lot of :func:`max_min_rates`:

    >>> max_min_rates_small([[0, 1], [0], [1]], [10.0, 4.0])
    [2.0, 8.0, 2.0]
    """
    links = sorted({link for route in routes for link in route})
    if len(links) == sum(len(route) for route in routes):
        return [min(float(capacity[link]) for link in route) for route in routes]
    left = {link: float(capacity[link]) for link in links}
    rates = [0.0] * len(routes)
    live = list(range(len(routes)))
    while live:
        count = dict.fromkeys(links, 0)
        for f in live:
            for link in routes[f]:
                count[link] += 1
        level = min(left[link] / c for link, c in count.items() if c)
        bound = level * (1 + _SHARE_RTOL)
        tight = {link for link, c in count.items() if c and left[link] / c <= bound}
        frozen = dict.fromkeys(links, 0)
        rest = []
        for f in live:
            if any(link in tight for link in routes[f]):
                rates[f] = level
                for link in routes[f]:
                    frozen[link] += 1
            else:
                rest.append(f)
        for link in links:
            left[link] = max(left[link] - level * frozen[link], 0.0)
        live = rest
    return rates
