"""The batch path's loops in numpy: the compiled kernels' float operations, without numba.

Why it exists: numba's runtime costs about 0.5 s of CPU on the first compiled call of
every process (0.14 s importing numba, 0.37 s its registries and code generator; the
kernels themselves load from the cache in 0.02 s), while a synchronous collective of a
hundred ranks replays in a few hundredths of a second. A replay starts its batch
instants on these functions and moves to :mod:`netsim.engine.kernels` only once its
batch work would have paid that load back (:meth:`netsim.engine.flows.FlowTable.kernels`;
the threshold is measured by ``benchmarks/startup.py``), or at once if another replay of
the process has already loaded them.

Each function takes the arguments of the kernel of the same name (:func:`component`
takes the active flows instead of the per-link lists) and does the same float
operations on each link and flow: ``left / count``, the least share, ``left - level *
frozen`` floored at 0; ``rem - rate * dt`` and ``now + rem / rate``; a link's load
summed from 0.0 flow by flow in slot order (``np.bincount`` adds its weights in input
order). Results are therefore bit-identical to the compiled path's
(``tests/test_batch_paths_agree.py``). Where numpy's idioms differ from a kernel's on
NaN (``np.fmin`` skips a NaN capacity as the kernel's ``<`` test does), the comment
says so.
"""

import numpy as np

from netsim.trace.graph import ranges

__all__ = ["apply_rates", "component", "fill_bounded", "release"]


def release(done, ptr, succ, waiting):
    """:func:`netsim.engine.kernels.release` in numpy: the ops ``done`` release, ascending.

    Examples
    --------
    Ops 0 and 1 done; op 3 waited for both (it appears twice among their successors),
    op 2 for op 0 alone, op 4 for op 1 and another.

    >>> import numpy as np
    >>> waiting = np.array([0, 0, 1, 2, 2])
    >>> ptr, succ = np.array([0, 2, 4, 4, 4, 4]), np.array([2, 3, 3, 4])
    >>> release(np.array([0, 1]), ptr, succ, waiting).tolist(), waiting.tolist()
    ([2, 3], [0, 0, 0, 0, 1])
    """
    lo = ptr[done]
    found = succ[ranges(lo, ptr[done + 1] - lo)]
    if len(found) > 1 and not (found[1:] > found[:-1]).all():
        found = np.sort(found)  # a sort, then np.unique only if a successor appears twice
        if not (found[1:] > found[:-1]).all():
            uniq, counts = np.unique(found, return_counts=True)
            waiting[uniq] -= counts.astype(waiting.dtype)
            return uniq[waiting[uniq] == 0].astype(np.int64)
    waiting[found] -= 1
    return found[waiting[found] == 0].astype(np.int64)


def _marked_rows(mark, links):
    """Whether each row of ``links`` crosses a link marked in ``mark`` (column by column:
    several times faster than ``mark[links].any(axis=1)`` for the few columns of a route)."""
    sel = mark[links[:, 0]]
    for j in range(1, links.shape[1]):
        sel |= mark[links[:, j]]
    return sel


def component(active, links, mark, added, removed, pad):
    """:func:`netsim.engine.kernels.component` by sweeps over every active flow.

    It takes ``active`` (which slots hold a flow) in place of the kernel's per-link
    lists and its ``sel`` scratch; the other arguments and the two sorted arrays it
    returns (the affected slots, the link directions whose load may change) are the
    kernel's.

    Examples
    --------
    The kernel's example: flow 0 (links 0, 1) has ended; flow 1 is on links 1 and 3,
    flow 2 on 2 and 3.

    >>> import numpy as np
    >>> links = np.array([[0, 1], [1, 3], [2, 3]])
    >>> active, mark = np.array([False, True, True]), np.zeros(5, np.bool_)
    >>> comp, changed = component(active, links, mark, np.zeros(0, np.int64), np.array([0, 1]), 4)
    >>> comp.tolist(), changed.tolist()
    ([1, 2], [0, 1, 2, 3])
    """
    mark[removed] = True
    mark[links[added].ravel()] = True
    mark[pad] = False
    slots = active.nonzero()[0]  # np.flatnonzero without its wrappers
    rows = links.take(slots, axis=0)
    sel = _marked_rows(mark, rows)
    # Close over the flows that share a link with a marked one. Each sweep marks the
    # links of the flows it newly selected and tests only the flows not selected yet;
    # a chain of flows takes a sweep per flow (the batch work that sends a replay to
    # the compiled search, which follows the chain in one pass).
    rest = (~sel).nonzero()[0]
    new = rows[sel].ravel()
    while True:
        grow = ~mark[new]
        grow &= new != pad
        if not grow.any():
            break
        mark[new[grow]] = True
        hit = rest[_marked_rows(mark, rows.take(rest, axis=0))]
        sel[hit] = True
        rest = rest[~sel[rest]]
        new = rows.take(hit, axis=0).ravel()
    changed = mark.nonzero()[0]
    mark[changed] = False
    return slots[sel], changed


def fill_bounded(links, capacity, pad, cut, bound):
    """:func:`netsim.engine.kernels.fill_bounded` in numpy: max-min rates, each within its bound.

    Examples
    --------
    The parking lot with flow 1 capped at 3, then with no bound (an empty ``bound``):

    >>> import numpy as np
    >>> links = np.array([[0, 1], [0, -1], [1, -1]])
    >>> fill_bounded(links, np.array([10.0, 4.0]), -1, 1 + 1e-12,
    ...              np.array([np.inf, 3.0, np.inf])).tolist()
    [2.0, 3.0, 2.0]
    >>> fill_bounded(links, np.array([10.0, 4.0]), -1, 1 + 1e-12, np.empty(0)).tolist()
    [2.0, 8.0, 2.0]
    """
    n, hops = links.shape
    bounded = bound.shape[0] > 0
    valid = links != pad
    flat = links[valid]
    present = np.zeros(capacity.shape[0], bool)
    present[flat] = True
    ids = present.nonzero()[0]
    if len(ids) == len(flat):
        # No link is shared: each flow its smallest capacity (np.fmin skips a NaN, as
        # the kernel's `capacity < r` does), then its bound where that is smaller.
        caps = np.full(links.shape, np.inf)
        caps[valid] = capacity[flat]
        rates = np.fmin.reduce(caps, axis=1)
        return np.where(bound < rates, bound, rates) if bounded else rates
    index = np.empty(capacity.shape[0], np.int64)
    index[ids] = np.arange(len(ids))
    link = index[flat]  # each entry's local link
    owner = np.nonzero(valid)[0]  # each entry's flow
    nl = len(ids)
    left = capacity[ids]
    rates = np.zeros(n)
    live = np.ones(len(flat), bool)  # entries of unfrozen flows
    flive = np.ones(n, bool)
    share = np.empty(nl)
    while flive.any():
        count = np.bincount(link[live], minlength=nl)
        used = count > 0
        share.fill(np.inf)
        share[used] = left[used] / count[used]
        level = share.min()  # a NaN wins, as in the kernel
        if bounded:
            least = np.fmin.reduce(bound[flive])  # the kernel's `bound[f] < level` skips a NaN
            if least < level:
                level = least
        top = level * cut
        tight = used & (share <= top)
        hit = np.zeros(n, bool)
        hit[owner[live & tight[link]]] = True
        if bounded:
            hit |= flive & (bound <= top)
        rates[hit] = level
        newly = live & hit[owner]
        left = np.maximum(left - level * np.bincount(link[newly], minlength=nl), 0.0)
        live &= ~newly
        flive &= ~hit
    return rates


def apply_rates(comp, rates, changed, now, rem, rate, since, finish, links, cap, load, link_t,
                busy, saturated, peak_util, peak_flows, pos, saturation, pad, series):
    """:func:`netsim.engine.kernels.apply_rates` in numpy: link time, flow rates, link loads.

    Examples
    --------
    Two flows of 1000 bytes share link 0 (100 B/s) from time 0, the second also on
    link 1; at time 0 each gets 50 B/s: both end at 20 s, link 0 is full, link 1 half.

    >>> import numpy as np
    >>> f = lambda x: np.array(x, np.float64)
    >>> rem, rate, since, finish = f([1e3, 1e3]), f([0, 0]), f([0, 0]), f([np.inf, np.inf])
    >>> load, t, busy, sat, peak = (f([0, 0, 0]) for _ in range(5))
    >>> flows, pos = np.zeros(3, np.int64), np.zeros(3, np.int64)
    >>> cap = f([100, 100, np.inf])
    >>> moved, new = apply_rates(np.array([0, 1]), f([50, 50]), np.array([0, 1]), 0.0, rem,
    ...     rate, since, finish, np.array([[0, 2], [0, 1]]), cap, load, t, busy, sat, peak,
    ...     flows, pos, 0.99, 2, True)
    >>> finish.tolist(), load.tolist(), peak.tolist(), flows.tolist(), moved.tolist()
    ([20.0, 20.0], [100.0, 50.0, 0.0], [1.0, 0.5, 0.0], [2, 1, 0], [0, 1])
    """
    ncl = len(changed)
    old = load[changed]
    capacity = cap[changed]
    dt = now - link_t[changed]
    busy[changed] += np.where(old > 0, dt, 0.0)
    saturated[changed] += np.where(old >= saturation * capacity, dt, 0.0)
    link_t[changed] = now
    if len(comp):
        left = rem[comp] - rate[comp] * (now - since[comp])
        np.maximum(left, 0.0, out=left)  # the kernel's _floor0: a NaN stays
        rem[comp] = left
        since[comp] = now
        rate[comp] = rates
        ahead = np.full(len(comp), np.inf)  # a flow at rate 0 (a starved class) never ends
        np.divide(left, rates, out=ahead, where=rates > 0)
        finish[comp] = now + ahead
        flat = links.take(comp, axis=0).ravel()
        real = flat != pad
        pos[changed] = np.arange(ncl)  # a lookup: searchsorted costs 10x more
        at = pos[flat[real]]
        new_load = np.bincount(at, weights=np.repeat(rates, links.shape[1])[real], minlength=ncl)
        new_count = np.bincount(at, minlength=ncl)
    else:
        new_load = np.zeros(ncl)
        new_count = np.zeros(ncl, np.int64)
    if series:
        moved = new_load != old
        out = changed[moved], new_load[moved]
    else:
        out = changed[:0], new_load[:0]
    load[changed] = new_load
    peak_util[changed] = np.maximum(peak_util[changed], new_load / capacity)
    peak_flows[changed] = np.maximum(peak_flows[changed], new_count)
    return out
