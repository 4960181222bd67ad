"""Compiled loops of the engine's batch path.

Released ops, affected flows, max-min filling and link accounting.

A step of a synchronous collective, or a collective whose ranks start at jittered
instants, re-rates components of hundreds to tens of thousands of flows at once.
Written with numpy, every such instant paid some sixty array calls of fixed
overhead, and the progressive filling several passes over every flow per round;
these loops do the same work in one pass each, compiled by numba.

They perform the same float operations as the plain-Python specification
(:func:`netsim.engine.maxmin.max_min_rates_small`, :mod:`netsim.engine.reference`): per link
``left / count``, the least share, ``left - level * frozen`` floored at 0; per flow
``rem - rate * dt`` and ``now + rem / rate``; loads summed flow by flow in slot
order. numba compiles without fast-math, so each is the IEEE operation as written
and results equal the small path's bit for bit (``tests/test_properties.py``).
Where they differ from numpy's idioms (``np.maximum`` keeps a NaN), the comment
says so.

Each kernel is compiled on first use and cached on disk (numba's ``cache=True``:
beside this file, or in the user's cache directory where that is read-only), so
only the first run of a fresh install pays the compilation: 3.1-3.5 s of CPU
for the first replay that takes the batch path (5.2-5.3 s before the kernels
stopped using numba's ``np.argsort``, ``np.zeros``, ``np.full`` and ``np.ones``,
whose implementations numba compiles anew for each kernel), measured with an empty
``NUMBA_CACHE_DIR`` on the 2-core development machine (AMD EPYC, numba 0.68.1,
2026-11-26, ``benchmarks/startup.py --compile``); a loaded machine stretches it in
wall time. Every later process pays about 0.5 s of CPU once, on its first batch
instant: importing numba (0.14 s), numba's registries (0.37 s, 0.17 s of it
``scipy.linalg`` for numba's BLAS check) and loading the kernels from the cache
(0.02 s). This module is imported only when a replay's batch work would pay that
back (``FlowTable.kernels`` in :mod:`netsim.engine.flows`; until then the same loops run in
numpy, :mod:`netsim.engine.vectorised`) or when :func:`netsim.engine.maxmin.max_min_rates` is
called without ``loops``, so ``import netsim``, replays that stay on the small-event path and
small batch replays never load numba.
``NUMBA_DISABLE_JIT=1`` runs them as the plain Python they are.
"""

import numpy as np
from numba import njit

__all__ = ["account", "apply_rates", "component", "fill", "fill_bounded", "index_add", "index_build",
           "index_remove", "push_link", "rebase", "release"]


@njit(cache=True)
def _floor0(x):
    """``np.maximum(x, 0.0)``: a NaN stays NaN (Python's ``max`` would keep 0.0 or NaN by order)."""
    return x if (x >= 0.0 or x != x) else 0.0


@njit(cache=True)
def fill(links, capacity, pad, cut):
    """Max-min fair rates by progressive filling, one class (:func:`netsim.engine.maxmin.max_min_rates`).

    :func:`fill_bounded` with no flow bounded: the same rounds and float operations.

    Parameters
    ----------
    links : ndarray of int64, shape (flows, hops)
        Link ids each flow crosses; ``pad`` entries are ignored, every flow
        crosses at least one real link.
    capacity : ndarray of float64
        Capacity of each link id.
    pad : int
        The filler of ``links``.
    cut : float
        A link is a bottleneck of a round if its share is at most ``level * cut``
        (:data:`netsim.engine.maxmin.SHARE_CUT`).

    Returns
    -------
    ndarray of float64
        Each flow's rate.

    Examples
    --------
    The parking lot: link 0 has 10 units, link 1 has 4; flow 0 crosses both.

    >>> import numpy as np
    >>> fill(np.array([[0, 1], [0, -1], [1, -1]]), np.array([10.0, 4.0]), -1, 1 + 1e-12).tolist()
    [2.0, 8.0, 2.0]
    """
    return fill_bounded(links, capacity, pad, cut, np.empty(0))


@njit(cache=True)
def fill_bounded(links, capacity, pad, cut, bound):
    """:func:`fill` where flow ``f`` may not exceed ``bound[f]`` (bytes/s; inf: unbounded).

    A bound is a private link of that capacity crossed by its flow alone (the
    bound of a variable in SimGrid's ``lmm`` solver): a round's level is also at
    most every live flow's bound, and a flow whose bound is within ``cut`` of the
    level freezes with the flows of the tight links. An empty ``bound`` bounds no
    flow and runs exactly :func:`fill`'s float operations.

    Examples
    --------
    The parking lot with flow 1 capped at 3: link 0 leaves 7 to share, flow 0 still
    meets link 1's share of 2.

    >>> import numpy as np
    >>> links = np.array([[0, 1], [0, -1], [1, -1]])
    >>> fill_bounded(links, np.array([10.0, 4.0]), -1, 1 + 1e-12,
    ...              np.array([np.inf, 3.0, np.inf])).tolist()
    [2.0, 3.0, 2.0]
    """
    n, hops = links.shape
    # Arrays are made with np.empty and filled by loops here and in every kernel:
    # np.zeros, np.full, np.ones and slice assignment each add 0.05-0.25 s to the
    # one-time compilation (measured with numba 0.68.1).
    local = np.empty(capacity.shape[0], np.int64)  # link id -> its index among `ids`
    for k in range(capacity.shape[0]):
        local[k] = -1
    ids = np.empty(n * hops, np.int64)
    lk = np.empty((n, hops), np.int64)  # each entry's local link index (-1: pad)
    nl = 0
    entries = 0
    for f in range(n):
        for h in range(hops):
            k = links[f, h]
            lk[f, h] = -1
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
    rates = np.empty(n)
    for f in range(n):
        rates[f] = 0.0
    bounded = bound.shape[0] > 0
    if nl == entries:
        # No link is shared: each flow gets its own bottleneck (or its bound).
        for f in range(n):
            r = np.inf
            for h in range(hops):
                k = links[f, h]
                if k != pad and capacity[k] < r:
                    r = capacity[k]
            if bounded and bound[f] < r:
                r = bound[f]
            rates[f] = r
        return rates
    left = np.empty(nl)
    for j in range(nl):
        left[j] = capacity[ids[j]]
    count = np.empty(nl, np.int64)
    frozen = np.empty(nl, np.int64)
    share = np.empty(nl)
    live = np.empty(n, np.bool_)
    for f in range(n):
        live[f] = True
    nlive = n
    while nlive > 0:
        for j in range(nl):
            count[j] = 0
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
        if bounded:
            for f in range(n):
                if live[f] and bound[f] < level:
                    level = bound[f]
        top = level * cut
        for j in range(nl):
            frozen[j] = 0
        for f in range(n):
            if not live[f]:
                continue
            tight = False
            for h in range(hops):
                j = lk[f, h]
                if j >= 0 and count[j] > 0 and share[j] <= top:
                    tight = True
                    break
            if bounded and bound[f] <= top:
                tight = True
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
def index_build(active, links, pad, head, nxt, prv):
    """Link the entries of every active flow into its links' lists (see :func:`index_add`).

    ``head`` is reset first; ``nxt`` and ``prv`` need one place per (slot, hop).
    """
    for k in range(head.shape[0]):
        head[k] = -1
    slots = np.empty(active.shape[0], np.int64)
    m = 0
    for s in range(active.shape[0]):
        if active[s]:
            slots[m] = s
            m += 1
    index_add(slots[:m], links, pad, head, nxt, prv)


@njit(cache=True)
def index_add(slots, links, pad, head, nxt, prv):
    """Link flows ``slots`` into the lists of the links they cross.

    The flows on link ``k`` are a doubly linked list of entries ``slot * hops + h``:
    ``head[k]`` the first (-1: none), ``nxt``/``prv`` the neighbours, so a flow joins
    and leaves in O(hops) and a search visits only the flows it reaches.
    """
    hops = links.shape[1]
    for s in slots:
        for h in range(hops):
            k = links[s, h]
            if k == pad:
                continue
            e = s * hops + h
            first = head[k]
            nxt[e] = first
            prv[e] = -1
            if first >= 0:
                prv[first] = e
            head[k] = e


@njit(cache=True)
def index_remove(slots, links, pad, head, nxt, prv):
    """Unlink flows ``slots`` (still holding their links) from their links' lists."""
    hops = links.shape[1]
    for s in slots:
        for h in range(hops):
            k = links[s, h]
            if k == pad:
                continue
            e = s * hops + h
            before, after = prv[e], nxt[e]
            if before >= 0:
                nxt[before] = after
            else:
                head[k] = after
            if after >= 0:
                prv[after] = before


@njit(cache=True)
def component(head, nxt, links, mark, sel, added, removed, pad):
    """The flows sharing a link, transitively, with a changed one; and their links.

    A search from the changed links (``removed``: those of flows that ended; the
    links of the ``added`` flows) over the per-link lists of :func:`index_add`: it
    visits only the flows and links it finds.

    Parameters
    ----------
    head, nxt : ndarray of int64
        The per-link lists of the active flows.
    links : ndarray of int64, shape (slots, hops)
        Each slot's links (``pad`` fills).
    mark, sel : ndarray of bool
        Scratch, one per link id and the pad, one per slot; all False before and after.
    added, removed : ndarray of int64
        Slots of the flows that started; links of those that ended.
    pad : int
        The filler of ``links``.

    Returns
    -------
    comp : ndarray of int64
        The affected slots, ascending.
    changed : ndarray of int64
        The link directions whose load may change, ascending.

    Examples
    --------
    Flow 0 (on links 0 and 1) has ended; flow 1 is on links 1 and 3, flow 2 on 2 and 3.
    Its end frees link 1, which flow 1 shares, and flow 1 shares link 3 with flow 2.

    >>> import numpy as np
    >>> links = np.array([[0, 1], [1, 3], [2, 3]])
    >>> head, nxt, prv = np.full(5, -1), np.zeros(6, np.int64), np.zeros(6, np.int64)
    >>> index_add(np.array([1, 2]), links, 4, head, nxt, prv)
    >>> mark, sel, none = np.zeros(5, np.bool_), np.zeros(3, np.bool_), np.zeros(0, np.int64)
    >>> comp, changed = component(head, nxt, links, mark, sel, none, np.array([0, 1]), 4)
    >>> comp.tolist(), changed.tolist()
    ([1, 2], [0, 1, 2, 3])
    """
    hops = links.shape[1]
    stack = np.empty(mark.shape[0], np.int64)  # the marked links, in marking order
    n = 0
    for k in removed:
        n = push_link(k, pad, mark, stack, n)
    for s in added:
        for h in range(hops):
            n = push_link(links[s, h], pad, mark, stack, n)
    comp = np.empty(sel.shape[0], np.int64)
    m = 0
    i = 0
    while i < n:  # stack[i:n]: marked links not searched yet
        e = head[stack[i]]
        i += 1
        while e >= 0:
            s = e // hops
            e = nxt[e]
            if sel[s]:
                continue
            sel[s] = True
            comp[m] = s
            m += 1
            for h in range(hops):
                n = push_link(links[s, h], pad, mark, stack, n)
    return _ascending(comp[:m], sel), _ascending(stack[:n], mark)


@njit(cache=True)
def push_link(k, pad, mark, stack, n):
    """Mark link ``k`` and put it at ``stack[n]`` unless it is ``pad`` or marked; the new ``n``.

    Examples
    --------
    >>> import numpy as np
    >>> mark, stack = np.zeros(3, np.bool_), np.zeros(3, np.int64)
    >>> n = push_link(1, 2, mark, stack, 0); n = push_link(1, 2, mark, stack, n)
    >>> push_link(2, 2, mark, stack, n), stack[:n].tolist()
    (1, [1])
    """
    if k != pad and not mark[k]:
        mark[k] = True
        stack[n] = k
        n += 1
    return n


@njit(cache=True)
def _ascending(items, flag):
    """``items`` (distinct, each flagged in ``flag``) in ascending order; clears their flags.

    A merge sort (:func:`_sorted`) when they are few, else a scan of ``flag``, which
    is cheaper than the sort once they are more than about one in sixteen.
    """
    if items.shape[0] * 16 < flag.shape[0]:
        items = _sorted(items)
        for x in items:
            flag[x] = False
        return items
    out = np.empty(items.shape[0], np.int64)
    j = 0
    for x in range(flag.shape[0]):
        if flag[x]:
            flag[x] = False
            out[j] = x
            j += 1
    return out


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
    >>> load, t, busy, sat, peak = (f([0.0, 0.0]) for _ in range(5))
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
        account(k, now, load, link_t, cap, busy, saturated, saturation)
    for p in range(ncl):
        pos[changed[p]] = p
    new_load = np.empty(ncl)
    new_count = np.empty(ncl, np.int64)
    for p in range(ncl):
        new_load[p] = 0.0
        new_count[p] = 0
    for i in range(comp.shape[0]):
        s = comp[i]
        r = rates[i]
        rebase(s, r, now, rem, rate, since, finish)
        for h in range(hops):
            k = links[s, h]
            if k != pad:
                p = pos[k]
                new_load[p] += r
                new_count[p] += 1
    moved = np.empty(ncl if series else 0, np.int64)
    moved_load = np.empty(ncl if series else 0)
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
def account(k, now, load, link_t, cap, busy, saturated, saturation):
    """Add link ``k``'s busy and saturated seconds since ``link_t[k]`` at its load so far,
    and move ``link_t[k]`` to ``now`` (before its load changes; arrays updated in place).

    Examples
    --------
    >>> import numpy as np
    >>> busy, sat, t = np.zeros(1), np.zeros(1), np.array([1.0])
    >>> account(0, 3.0, np.array([99.5]), t, np.array([100.0]), busy, sat, 0.99)
    >>> busy.tolist(), sat.tolist(), t.tolist()
    ([2.0], [2.0], [3.0])
    """
    dt = now - link_t[k]
    x = load[k]
    busy[k] += dt if x > 0 else 0.0
    saturated[k] += dt if x >= saturation * cap[k] else 0.0
    link_t[k] = now


@njit(cache=True)
def rebase(s, r, now, rem, rate, since, finish):
    """Bring flow ``s``'s bytes left to ``now`` at its old rate, give it rate ``r`` and
    predict its end (``rem``, ``rate``, ``since``, ``finish`` per slot, updated in place).

    Examples
    --------
    >>> import numpy as np
    >>> rem, rate, since, finish = np.array([100.0]), np.array([10.0]), np.zeros(1), np.zeros(1)
    >>> rebase(0, 20.0, 2.0, rem, rate, since, finish)
    >>> rem.tolist(), finish.tolist()
    ([80.0], [6.0])
    """
    left = _floor0(rem[s] - rate[s] * (now - since[s]))
    rem[s] = left
    since[s] = now
    rate[s] = r
    finish[s] = now + left / r if r > 0 else np.inf


@njit(cache=True)
def release(done, ptr, succ, waiting):
    """Count the completed ops ``done`` off their successors' waits; the ops now ready, ascending.

    Parameters
    ----------
    done : ndarray of int64
        Ops that completed.
    ptr, succ : ndarray of int64 (``succ`` also int32)
        Successors in CSR form: op ``i``'s are ``succ[ptr[i]:ptr[i + 1]]``.
    waiting : ndarray of int64 or int32
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
    return _sorted(ready[:m])


@njit(cache=True)
def _sorted(items):
    """A sorted copy of ``items`` (int64), by a bottom-up merge sort.

    Not numba's ``np.argsort``: its default quicksort is slow on the patterned orders of
    a replay, and its merge sort takes about 0.9 s to compile, this one 0.1 s. Any
    correct sort gives the same array.
    """
    n = items.shape[0]
    a = items.copy()
    b = np.empty(n, np.int64)
    width = 1
    while width < n:
        lo = 0
        while lo < n:
            mid = min(lo + width, n)
            hi = min(lo + 2 * width, n)
            i, j = lo, mid
            for k in range(lo, hi):
                if j < hi and (i >= mid or a[j] < a[i]):
                    b[k] = a[j]
                    j += 1
                else:
                    b[k] = a[i]
                    i += 1
            lo = hi
        a, b = b, a
        width *= 2
    return a
