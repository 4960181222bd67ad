"""Compiled loops of the engine's batch path: released ops, affected flows, max-min filling, link accounting.

A step of a synchronous collective, or a collective whose ranks start at jittered
instants, re-rates components of hundreds to tens of thousands of flows at once.
Written with numpy, every such instant paid some sixty array calls of fixed
overhead, and the progressive filling several passes over every flow per round;
these loops do the same work in one pass each, compiled by numba.

They perform the same float operations as the plain-Python specification
(:func:`netsim.maxmin.max_min_rates_small`, :mod:`netsim.reference`): per link
``left / count``, the least share, ``left - level * frozen`` floored at 0; per flow
``rem - rate * dt`` and ``now + rem / rate``; loads summed flow by flow in slot
order. numba compiles without fast-math, so each is the IEEE operation as written
and results equal the small path's bit for bit (``tests/test_properties.py``).
Where they differ from numpy's idioms (``np.maximum`` keeps a NaN), the comment
says so.

Each kernel is compiled on first use and cached on disk (numba's ``cache=True``:
beside this file, or in the user's cache directory where that is read-only), so
only the first run of a fresh install pays the compilation, about ten seconds.
``NUMBA_DISABLE_JIT=1`` runs them as the plain Python they are.
"""

import numpy as np
from numba import njit

from .maxmin import SHARE_CUT

__all__ = ["apply_rates", "component", "fill", "release"]


@njit(cache=True)
def _floor0(x):
    """``np.maximum(x, 0.0)``: a NaN stays NaN (Python's ``max`` would keep 0.0 or NaN by order)."""
    return x if (x >= 0.0 or x != x) else 0.0


@njit(cache=True)
def fill(links, capacity, pad):
    """Max-min fair rates by progressive filling (one class; see :func:`netsim.maxmin.max_min_rates`).

    Parameters
    ----------
    links : ndarray of int64, shape (flows, hops)
        Link ids each flow crosses; ``pad`` entries are ignored, every flow
        crosses at least one real link.
    capacity : ndarray of float64
        Capacity of each link id.
    pad : int
        The filler of ``links``.

    Returns
    -------
    ndarray of float64
        Each flow's rate.

    Examples
    --------
    The parking lot: link 0 has 10 units, link 1 has 4; flow 0 crosses both.

    >>> import numpy as np
    >>> fill(np.array([[0, 1], [0, -1], [1, -1]]), np.array([10.0, 4.0]), -1).tolist()
    [2.0, 8.0, 2.0]
    """
    n, hops = links.shape
    local = np.full(capacity.shape[0], -1, np.int64)  # link id -> its index among `ids`
    ids = np.empty(n * hops, np.int64)
    lk = np.full((n, hops), -1, np.int64)  # each entry's local link index (-1: pad)
    nl = 0
    entries = 0
    for f in range(n):
        for h in range(hops):
            k = links[f, h]
            if k == pad:
                continue
            entries += 1
            j = local[k]
            if j < 0:
                j = nl
                local[k] = j
                ids[j] = k
                nl += 1
            lk[f, h] = j
    rates = np.zeros(n)
    if nl == entries:
        # No link is shared: each flow gets its own bottleneck.
        for f in range(n):
            r = np.inf
            for h in range(hops):
                k = links[f, h]
                if k != pad and capacity[k] < r:
                    r = capacity[k]
            rates[f] = r
        return rates
    left = np.empty(nl)
    for j in range(nl):
        left[j] = capacity[ids[j]]
    count = np.zeros(nl, np.int64)
    frozen = np.zeros(nl, np.int64)
    share = np.empty(nl)
    live = np.ones(n, np.bool_)
    nlive = n
    while nlive > 0:
        count[:] = 0
        for f in range(n):
            if live[f]:
                for h in range(hops):
                    if lk[f, h] >= 0:
                        count[lk[f, h]] += 1
        level = np.inf
        for j in range(nl):
            if count[j] > 0:
                share[j] = s = left[j] / count[j]
                if s < level or s != s:  # a NaN wins, as in numpy's min
                    level = s
        cut = level * SHARE_CUT
        frozen[:] = 0
        for f in range(n):
            if not live[f]:
                continue
            tight = False
            for h in range(hops):
                j = lk[f, h]
                if j >= 0 and count[j] > 0 and share[j] <= cut:
                    tight = True
                    break
            if tight:
                rates[f] = level
                live[f] = False
                nlive -= 1
                for h in range(hops):
                    if lk[f, h] >= 0:
                        frozen[lk[f, h]] += 1
        for j in range(nl):
            left[j] = _floor0(left[j] - level * frozen[j])
    return rates


@njit(cache=True)
def component(active, links, mark, added, removed, pad):
    """The flows sharing a link, transitively, with a changed one; and their links.

    A search from the changed links (``removed``: those of flows that ended;
    the links of the ``added`` flows) over a per-link index of the active
    flows, built in one pass.

    Parameters
    ----------
    active : ndarray of bool
        Which flow slots hold a flow.
    links : ndarray of int64, shape (slots, hops)
        Each slot's links (``pad`` fills).
    mark : ndarray of bool
        Scratch, one per link id and the pad; all False before and after.
    added, removed : ndarray of int64
        Slots of the flows that started; links of those that ended.
    pad : int
        The filler of ``links`` (the last index of ``mark``).

    Returns
    -------
    comp : ndarray of int64
        The affected slots, ascending.
    changed : ndarray of int64
        The link directions whose load may change, ascending.

    Examples
    --------
    Flow 0 on links 0, 1; flow 1 on link 1; flow 2 on link 2. Flow 0 ended on
    links 0 and 1: flow 1 is affected, flow 2 is not.

    >>> import numpy as np
    >>> active = np.array([False, True, True])
    >>> links = np.array([[0, 1], [1, 3], [2, 3]])
    >>> none = np.zeros(0, np.int64)
    >>> comp, changed = component(active, links, np.zeros(4, np.bool_), none, np.array([0, 1]), 3)
    >>> comp.tolist(), changed.tolist()
    ([1], [0, 1])
    """
    slots, hops = links.shape
    nlinks = mark.shape[0]
    ptr = np.zeros(nlinks + 1, np.int64)
    for s in range(slots):
        if active[s]:
            for h in range(hops):
                if links[s, h] != pad:
                    ptr[links[s, h] + 1] += 1
    for k in range(nlinks):
        ptr[k + 1] += ptr[k]
    on_link = np.empty(ptr[nlinks], np.int64)
    fill_at = ptr[:-1].copy()
    for s in range(slots):
        if active[s]:
            for h in range(hops):
                k = links[s, h]
                if k != pad:
                    on_link[fill_at[k]] = s
                    fill_at[k] += 1
    stack = np.empty(nlinks, np.int64)  # also the marked links, in marking order
    n = 0
    for k in removed:
        if k != pad and not mark[k]:
            mark[k] = True
            stack[n] = k
            n += 1
    for s in added:
        for h in range(hops):
            k = links[s, h]
            if k != pad and not mark[k]:
                mark[k] = True
                stack[n] = k
                n += 1
    sel = np.zeros(slots, np.bool_)
    i = 0
    while i < n:  # stack[:n] is the marked links; stack[i:n] those not searched yet
        k = stack[i]
        i += 1
        for p in range(ptr[k], ptr[k + 1]):
            s = on_link[p]
            if sel[s]:
                continue
            sel[s] = True
            for h in range(hops):
                k2 = links[s, h]
                if k2 != pad and not mark[k2]:
                    mark[k2] = True
                    stack[n] = k2
                    n += 1
    # The marked links in order, by a scan (the index above is as long): numba's sort
    # of the search order was the slowest step.
    changed = np.empty(n, np.int64)
    j = 0
    for k in range(nlinks):
        if mark[k]:
            mark[k] = False
            changed[j] = k
            j += 1
    return np.flatnonzero(sel), changed


@njit(cache=True)
def apply_rates(comp, rates, changed, now, rem, rate, since, finish, links, cap, load, link_t,
                busy, saturated, peak_util, peak_flows, pos, saturation, pad, series):
    """Account link time up to ``now``, give flows ``comp`` their ``rates``, set link loads.

    In order: the ``changed`` link directions' busy and saturated time up to now
    (at their old loads); each flow's bytes left at its old rate, its new rate
    and predicted end; the new load and flow count of every changed link
    (every link of ``comp`` is in ``changed``, which is sorted), and their peaks.

    Parameters
    ----------
    comp, rates : ndarray
        Flow slots and their new rates.
    changed : ndarray of int64
        The link directions whose load may change, ascending.
    now : float
        The current time.
    rem, rate, since, finish : ndarray of float64
        Per slot: bytes left at ``since``, rate, when ``rem`` was last updated,
        predicted end (updated in place).
    links : ndarray of int64, shape (slots, hops)
        Each slot's links (``pad`` fills).
    cap, load, link_t, busy, saturated, peak_util : ndarray of float64
        Per link direction: capacity; current load, when last accounted, busy and
        saturated seconds, peak utilisation (updated in place).
    peak_flows : ndarray of int64
        Per link direction: most flows at once (updated in place).
    pos : ndarray of int64
        Scratch, one per link direction.
    saturation : float
        The share of capacity counted as saturated.
    pad : int
        The filler of ``links``.
    series : bool
        Return the links whose load moved, with their new loads.

    Returns
    -------
    moved : ndarray of int64
        With ``series``, the changed links whose load moved (ascending); else empty.
    moved_load : ndarray of float64
        Their new loads.

    Examples
    --------
    One flow of 1000 bytes alone on link 0 (100 B/s) from time 0; at time 0 it gets
    its rate: it will end at 10 s and the link is full.

    >>> import numpy as np
    >>> f = lambda x: np.array(x, np.float64)
    >>> rem, rate, since, finish = f([1000.0]), f([0.0]), f([0.0]), f([np.inf])
    >>> load, t, busy, sat, peak = f([0.0, 0.0]), f([0.0, 0.0]), f([0.0, 0.0]), f([0.0, 0.0]), f([0.0, 0.0])
    >>> flows, pos = np.zeros(2, np.int64), np.zeros(2, np.int64)
    >>> moved, new = apply_rates(np.array([0]), f([100.0]), np.array([0]), 0.0, rem, rate, since,
    ...     finish, np.array([[0]]), f([100.0, np.inf]), load, t, busy, sat, peak, flows, pos,
    ...     0.99, 1, True)
    >>> finish.tolist(), load.tolist(), peak.tolist(), moved.tolist(), new.tolist()
    ([10.0], [100.0, 0.0], [1.0, 0.0], [0], [100.0])
    """
    ncl = changed.shape[0]
    hops = links.shape[1]
    for k in changed:
        dt = now - link_t[k]
        x = load[k]
        busy[k] += dt if x > 0 else 0.0
        saturated[k] += dt if x >= saturation * cap[k] else 0.0
        link_t[k] = now
    for p in range(ncl):
        pos[changed[p]] = p
    new_load = np.zeros(ncl)
    new_count = np.zeros(ncl, np.int64)
    for i in range(comp.shape[0]):
        s = comp[i]
        r = rates[i]
        left = _floor0(rem[s] - rate[s] * (now - since[s]))
        rem[s] = left
        since[s] = now
        rate[s] = r
        finish[s] = now + left / r if r > 0 else np.inf
        for h in range(hops):
            k = links[s, h]
            if k != pad:
                p = pos[k]
                new_load[p] += r
                new_count[p] += 1
    moved = np.zeros(ncl if series else 0, np.int64)
    moved_load = np.zeros(ncl if series else 0)
    m = 0
    for p in range(ncl):
        k = changed[p]
        x = new_load[p]
        if series and x != load[k]:
            moved[m] = k
            moved_load[m] = x
            m += 1
        load[k] = x
        u = x / cap[k]
        old = peak_util[k]
        peak_util[k] = old if (old >= u or old != old) else u  # np.maximum(old, u)
        if new_count[p] > peak_flows[k]:
            peak_flows[k] = new_count[p]
    return moved[:m], moved_load[:m]


@njit(cache=True)
def release(done, ptr, succ, waiting):
    """Count the completed ops ``done`` off their successors' waits; the ops now ready, ascending.

    Parameters
    ----------
    done : ndarray of int64
        Ops that completed.
    ptr, succ : ndarray of int64
        Successors in CSR form: op ``i``'s are ``succ[ptr[i]:ptr[i + 1]]``.
    waiting : ndarray of int64
        How many ops each op still waits for (updated in place).

    Returns
    -------
    ndarray of int64

    Examples
    --------
    Ops 0 and 1 done; op 2 waited for both, op 3 for 1 and another.

    >>> import numpy as np
    >>> waiting = np.array([0, 0, 2, 2])
    >>> release(np.array([0, 1]), np.array([0, 1, 3, 3, 3]), np.array([2, 2, 3]), waiting).tolist()
    [2]
    >>> waiting.tolist()
    [0, 0, 0, 1]
    """
    n = 0
    for op in done:
        n += ptr[op + 1] - ptr[op]
    ready = np.empty(n, np.int64)
    m = 0
    for op in done:
        for i in range(ptr[op], ptr[op + 1]):
            s = succ[i]
            waiting[s] -= 1
            if waiting[s] == 0:
                ready[m] = s
                m += 1
    ready = ready[:m]
    # A merge sort: numba's default quicksort is slow on the patterned orders of a replay.
    return ready[np.argsort(ready, kind="mergesort")]
