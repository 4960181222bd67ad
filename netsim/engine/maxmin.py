"""Max-min fair rates by progressive filling: a compiled loop for batches, plain Python for a few flows.

All flows start at rate 0 and grow together; when a link fills up, the flows
crossing it freeze at their current rate and the others keep growing. Each round
freezes the flows of the link(s) with the smallest fair share
``remaining capacity / unfrozen flows``; there are at most as many rounds as
distinct bottleneck levels. This is the bandwidth-sharing model of SimGrid's
CM02 (Casanova, Legrand & Quinson, "SimGrid: a generic framework for large-scale
distributed experiments", UKSim 2008) and of Bertsekas & Gallager, *Data
Networks*, 2nd ed., section 6.5.2.

Strict priority (``priority=``, larger = more urgent): the classes are filled one
after the other, highest first; each class shares by max-min what the classes above
it left on every link (work conserving: a lower class gets all the residual
capacity, and nothing where a higher class fills the link). This is the per-link
strict-priority queueing that P3 (Jayarajan et al., MLSys 2019) and ByteScheduler
(Peng et al., SOSP 2019) rely on to let urgent chunks overtake. With a single class
it is max-min exactly (the same function, the same float operations).

Per-flow rate bounds (``bound=``, bytes/s, inf for none): a flow may not exceed
its bound, as a variable's bound in SimGrid's ``lmm`` solver (CM02 bounds each
flow by its TCP window over its round-trip time, option ``network/TCP-gamma``;
SimGrid documentation, "The SimGrid Models", the default TCP model). Progressive filling treats a bound as a private link crossed
by its flow alone: a round's level is at most every live flow's bound, and a
flow at its bound freezes there while the others keep growing. A flow table
with no finite bound takes exactly the unbounded float operations.
"""

import numpy as np

from netsim.checks import check_choice
from netsim.errors import NetsimError

__all__ = ["SHARING", "check_sharing", "max_min_rates", "max_min_rates_small"]

#: The bandwidth-sharing models of a replay: max-min fair, or strict priority classes.
SHARING = ("maxmin", "priority")

# Links whose fair share is within this relative distance of the round's minimum
# freeze in the same round, so that equal shares computed by different float
# paths do not split into needless extra rounds.
_SHARE_RTOL = 1e-12
#: A link is a bottleneck of a round if its share is at most ``level * SHARE_CUT``.
SHARE_CUT = 1 + _SHARE_RTOL


def check_sharing(sharing):
    """``sharing`` if it names a sharing model of :data:`SHARING`.

    Raises
    ------
    NetsimError
        Naming the value and the known models.

    Examples
    --------
    >>> check_sharing("priority")
    'priority'
    >>> check_sharing("fifo")
    Traceback (most recent call last):
    ...
    netsim.errors.NetsimError: unknown sharing 'fifo'; known: maxmin, priority
    """
    check_choice(sharing, "sharing", SHARING, error=NetsimError)
    return sharing


def max_min_rates(flow_links, capacity, pad=-1, priority=None, bound=None, loops=None):
    """Max-min fair rate of each flow (by strict priority class with ``priority``),
    each within its ``bound``.

    Parameters
    ----------
    flow_links : ndarray of int, shape (flows, hops)
        Link ids each flow crosses; entries equal to ``pad`` are ignored. Every
        flow must cross at least one real link.
    capacity : ndarray of float
        Capacity of each link id (bytes/s).
    pad : int
        Filler value in ``flow_links``.
    priority : ndarray of int, optional
        Priority class of each flow (larger = served first); None or a single
        class: plain max-min.
    bound : ndarray of float, optional
        Largest rate of each flow (bytes/s, > 0; inf: unbounded); None bounds none.
    loops : module, optional
        Whose ``fill_bounded`` fills: :mod:`netsim.engine.kernels` (compiled, the
        default) or :mod:`netsim.engine.vectorised` (numpy, no numba to load); the
        rates are the same bit for bit.

    Returns
    -------
    ndarray of float
        The rate of each flow (bytes/s).

    Examples
    --------
    The parking lot: flow 0 crosses links 0 and 1, flow 1 only link 0, flow 2
    only link 1. Link 0 has 10 units, link 1 has 4.

    >>> import numpy as np
    >>> links = np.array([[0, 1], [0, -1], [1, -1]])
    >>> max_min_rates(links, np.array([10.0, 4.0])).tolist()
    [2.0, 8.0, 2.0]

    Flow 1 urgent: it takes all of link 0; flow 0 gets nothing there, flow 2 all of link 1.

    >>> max_min_rates(links, np.array([10.0, 4.0]), priority=np.array([0, 1, 0])).tolist()
    [0.0, 10.0, 4.0]

    Flow 1 bounded at 3: link 0 has 7 left, flow 0 still meets link 1's share of 2.

    >>> max_min_rates(links, np.array([10.0, 4.0]), bound=np.array([np.inf, 3.0, np.inf])).tolist()
    [2.0, 3.0, 2.0]
    """
    if bound is not None:
        bound = np.asarray(bound, np.float64)
    if priority is not None:
        classes = np.unique(priority)
        if len(classes) > 1:
            return _by_class(np.asarray(flow_links), capacity, pad, np.asarray(priority),
                             classes[::-1], bound, loops)
    return _fill(np.asarray(flow_links), capacity, pad, bound, loops)


def _by_class(flow_links, capacity, pad, priority, classes, bound=None, loops=None):
    """Strict priority: each class (highest first) max-min shares what the ones above left.

    The residual is taken flow by flow, link by link, in flow order: the float
    operations of :func:`_by_class_small`.
    """
    left = np.array(capacity, np.float64)
    rates = np.zeros(len(flow_links))
    for p in classes.tolist():
        sel = np.flatnonzero(priority == p)
        sub = flow_links[sel]
        r = _fill(sub, left, pad, None if bound is None else bound[sel], loops)
        rates[sel] = r
        valid = sub != pad
        np.subtract.at(left, sub[valid], np.broadcast_to(r[:, None], sub.shape)[valid])
        np.maximum(left, 0.0, out=left)
    return rates


def _fill(flow_links, capacity, pad, bound=None, loops=None):
    """Progressive filling of one class (see :func:`max_min_rates`), by ``loops``' filling."""
    if loops is None:
        # Imported here: numba's import and the kernels' load from cache cost a few tenths
        # of a second that runs without a large batch never need.
        from netsim.engine import kernels as loops
    fill_bounded = loops.fill_bounded

    links = np.ascontiguousarray(flow_links, np.int64)
    capacity = np.ascontiguousarray(capacity, np.float64)
    # An empty bound runs fill's float operations exactly; calling fill_bounded alone
    # compiles one kernel instead of two on the first run after installing.
    bound = np.empty(0) if bound is None else np.ascontiguousarray(bound, np.float64)
    return fill_bounded(links, capacity, int(pad), SHARE_CUT, bound)


def max_min_rates_small(routes, capacity, priority=None, bound=None):
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
    priority : sequence of int, optional
        Priority class of each flow (larger = served first).
    bound : sequence of float, optional
        Largest rate of each flow (bytes/s; inf: unbounded).

    Returns
    -------
    list of float
        The rate of each flow (bytes/s).

    Examples
    --------
    The parking lot of :func:`max_min_rates`, then with flow 1 urgent:

    >>> max_min_rates_small([[0, 1], [0], [1]], [10.0, 4.0])
    [2.0, 8.0, 2.0]
    >>> max_min_rates_small([[0, 1], [0], [1]], [10.0, 4.0], priority=[0, 1, 0])
    [0.0, 10.0, 4.0]

    Flows 1 and 2 bounded at 3 and 1: flow 0 takes the 3 that flow 2 leaves on link 1.

    >>> max_min_rates_small([[0, 1], [0], [1]], [10.0, 4.0], bound=[float("inf"), 3.0, 1.0])
    [3.0, 3.0, 1.0]
    """
    if priority is not None and len(set(priority)) > 1:
        left = {link: float(capacity[link]) for route in routes for link in route}
        rates = [0.0] * len(routes)
        for p in sorted(set(priority), reverse=True):
            sel = [f for f, q in enumerate(priority) if q == p]
            sub = None if bound is None else [bound[f] for f in sel]
            for f, r in zip(sel, _fill_small([routes[f] for f in sel], left, sub)):
                rates[f] = r
                for link in routes[f]:
                    left[link] -= r
            for link in left:
                left[link] = max(left[link], 0.0)
        return rates
    return _fill_small(routes, capacity, bound)


def _fill_small(routes, capacity, bound=None):
    """Progressive filling of one class (see :func:`max_min_rates_small`)."""
    links = sorted({link for route in routes for link in route})
    if len(links) == sum(len(route) for route in routes):
        rates = [min(float(capacity[link]) for link in route) for route in routes]
        return rates if bound is None else [min(r, b) for r, b in zip(rates, bound)]
    left = {link: float(capacity[link]) for link in links}
    rates = [0.0] * len(routes)
    live = list(range(len(routes)))
    while live:
        count = dict.fromkeys(links, 0)
        for f in live:
            for link in routes[f]:
                count[link] += 1
        level = min(left[link] / c for link, c in count.items() if c)
        if bound is not None:
            level = min([level] + [bound[f] for f in live])
        top = level * SHARE_CUT
        tight = {link for link, c in count.items() if c and left[link] / c <= top}
        frozen = dict.fromkeys(links, 0)
        rest = []
        for f in live:
            if any(link in tight for link in routes[f]) or (bound is not None
                                                            and bound[f] <= top):
                rates[f] = level
                for link in routes[f]:
                    frozen[link] += 1
            else:
                rest.append(f)
        for link in links:
            left[link] = max(left[link] - level * frozen[link], 0.0)
        live = rest
    return rates
