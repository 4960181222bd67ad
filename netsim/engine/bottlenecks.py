"""The tolerant solve's kernels: re-solve some flows, verify max-min's bottleneck conditions.

:func:`solve` finds an instant's new rates from the previous allocation by re-solving a
growing set of flows until every flow it may have affected has a bottleneck, and
:func:`apply` gives the flows and links their new rates and loads where they move. Why,
and the method: :mod:`netsim.engine.tolerant`, which keeps their per-link state.
"""

import numpy as np
from numba import njit

from netsim.engine.kernels import account, fill_bounded, push_link, rebase

__all__ = ["DRIFT", "apply", "find_bottlenecks", "new_state", "set_bottleneck", "solve"]

#: A link's load is summed over its flows after this many updates by a change (each
#: rounds in its last bit), so that a sum's error stays far below the tolerance.
DRIFT = 256


def new_state(count, slots):
    """The state of :func:`~netsim.engine.bottlenecks.solve` for links with ``count`` flows, largest rates unknown,
    and a flow table of ``slots`` slots whose flows' bottlenecks are unknown.

    Per link: ``count``, ``lmax``, ``lnum``, ``drift``, ``gone`` (see :func:`solve`),
    ``nb`` (how many flows have it as their known bottleneck) and ``nu`` (how many of its
    flows have none known); per slot: ``bn``, the flow's known bottleneck (a link, the pad
    for a flow at its rate bound, -1 unknown).

    Examples
    --------
    >>> [a.tolist() for a in new_state(np.array([2, 0]), 3)]
    [[2, 0], [inf, 0.0], [0, 0], [0, 0], [0.0, 0.0], [0, 0], [2, 0], [-1, -1, -1]]
    """
    count = np.asarray(count, np.int64)
    lmax = np.where(count > 0, np.inf, 0.0)
    n = len(count)
    return (count, lmax, np.zeros(n, np.int64), np.zeros(n, np.int64), np.zeros(n),
            np.zeros(n, np.int64), count.copy(), np.full(slots, -1, np.int64))


@njit(cache=True)
def set_bottleneck(g, b, nb, nu, bn, links, pad):
    """Flow ``g``'s known bottleneck becomes ``b`` (-1: unknown) in ``state``'s counts.

    Examples
    --------
    >>> state = new_state(np.array([1, 1, 0]), 1)
    >>> set_bottleneck(0, 1, *state[5:], np.array([[0, 1]]), 2)
    >>> state[5].tolist(), state[6].tolist(), state[7].tolist()
    ([0, 1, 0], [0, 0, 0], [1])
    """
    old = bn[g]
    if old == b:
        return
    if old >= 0:
        nb[old] -= 1
    else:
        for h in range(links.shape[1]):
            if links[g, h] != pad:
                nu[links[g, h]] -= 1
    if b >= 0:
        nb[b] += 1
    else:
        for h in range(links.shape[1]):
            if links[g, h] != pad:
                nu[links[g, h]] += 1
    bn[g] = b


@njit(cache=True)
def find_bottlenecks(comp, links, rate, bound, cap, load, state, pad, eps):
    """Each flow of ``comp`` its bottleneck in ``state``, after an exact solve: a link of its
    path saturated within ``eps`` where no flow is faster by more than ``eps`` (the links'
    largest rates exact), or the pad if it is at its rate bound (``bound`` empty: none).

    Examples
    --------
    Flow 0 on links 0 (10 B/s, saturated) and 1 (100 B/s) at 10 B/s:

    >>> state = new_state(np.array([1, 1, 0]), 1)
    >>> state[1][:2], state[2][:2] = 10.0, 1  # (as exact_links leaves them)
    >>> find_bottlenecks(np.array([0]), np.array([[1, 0]]), np.array([10.0]), np.zeros(0),
    ...                  np.array([10.0, 100.0, np.inf]), np.array([10.0, 10.0, 0.0]),
    ...                  state, 2, 1e-12)
    >>> state[7].tolist()
    [0]
    """
    lmax, lnum, nb, nu, bn = state[1], state[2], state[5], state[6], state[7]
    sat = 1 - eps
    bounded = bound.shape[0] > 0
    for s in comp:
        x = rate[s]
        if bounded and x >= bound[s] * sat:
            set_bottleneck(s, pad, nb, nu, bn, links, pad)
            continue
        for h in range(links.shape[1]):
            k = links[s, h]
            if k != pad and lnum[k] > 0 and load[k] >= cap[k] * sat and x >= lmax[k] * sat:
                set_bottleneck(s, k, nb, nu, bn, links, pad)
                break


@njit(cache=True)
def _scan(k, head, nxt, hops, rate, new_rate, in_s):
    """Link ``k`` summed over its flows: its load and largest rate after the solve, how many
    flows have that rate, and its largest rate before."""
    total = 0.0
    mx = 0.0
    num = 0
    old = 0.0
    e = head[k]
    while e >= 0:
        s = e // hops
        x = new_rate[s] if in_s[s] else rate[s]
        total += x
        if x > mx:
            mx = x
            num = 1
        elif x == mx:
            num += 1
        if rate[s] > old:
            old = rate[s]
        e = nxt[e]
    return total, mx, num, old


@njit(cache=True)
def solve(added, removed, head, nxt, links, rate, bound, cap, load, state, pad, limit, budget,
          eps, cut, in_s, mark, flag, new_rate, resid, acc, t_load, t_max, o_max, s_num, s_in):
    """The rates after an instant, re-solving only the flows it changes (see :mod:`netsim.engine.tolerant`).

    What it knows of each link without visiting its flows (``state``, kept by
    :func:`apply`, :func:`~netsim.engine.tolerant.exact_links` and :func:`~netsim.engine.tolerant.enter`): how many flows it carries, an
    upper bound of their largest rate (exact while some flow is known to have it), and how
    many times its load was updated rather than summed; and of each flow its known
    bottleneck, with per link how many flows have it as theirs or have none known (a
    link's flows are checked only for those). A touched link's new load is its
    old one plus its re-solved flows' change; it is summed over its flows after
    :data:`DRIFT` updates, or when a condition needs its exact largest rate. A flow
    it verifies (re-solved, or held) gets the bottleneck it was verified at; if it gives
    up, the exact path's :func:`~netsim.engine.tolerant.exact_links` forgets them.

    Parameters
    ----------
    added : ndarray of int64
        Slots of the flows that started, or whose bound changed.
    removed : ndarray of int64
        Links of the flows that ended (already out of the per-link lists and ``state``).
    head, nxt : ndarray of int64
        The per-link lists of the active flows (:func:`netsim.engine.kernels.index_add`).
    links : ndarray of int64, shape (slots, hops)
        Each slot's links (``pad`` fills).
    rate, bound : ndarray of float64
        Per slot: the current rate (the new flows' 0) and the rate bound (inf: none);
        ``bound`` empty if no flow is bounded.
    cap, load : ndarray of float64
        Capacity and load (before the instant) per link id (the pad's inf and 0).
    state : tuple of ndarray
        Per link id: ``count`` (flows), ``lmax`` (the upper bound), ``lnum`` (how many
        flows have rate ``lmax``; 0: unknown, ``lmax`` only bounds), ``drift`` (updates),
        ``gone`` (the rates of the flows that left it since its load was last set),
        ``nb`` and ``nu`` (how many flows have it as their known bottleneck, and have
        none known); per slot ``bn`` (see :func:`new_state`).
    pad : int
        The filler of ``links``.
    limit : int
        Give up once more than this many flows are to be re-solved,
    budget : int
        or once the per-link lists' entries visited exceed this.
    eps : float
        The conditions' relative tolerance (:data:`netsim.engine.tolerant.TOLERANCE`).
    cut : float
        Progressive filling's :data:`netsim.engine.maxmin.SHARE_CUT`.
    in_s, mark : ndarray of bool
        Scratch, one per slot and one per link id; all False before and after.
    flag : ndarray of int64
        Scratch, one per link id; all 0 before and after.
    new_rate : ndarray of float64
        Scratch, one per slot.
    resid, acc, t_load, t_max, o_max : ndarray of float64
        Scratch, one per link id.
    s_num, s_in : ndarray of int64
        Scratch, one per link id.

    Returns
    -------
    ok : bool
        False if it gave up (nothing changed; the exact path solves the instant).
    comp, rates : ndarray
        The re-solved slots and their new rates.
    changed, new_load : ndarray
        The touched links (ascending) and their new loads.
    summed : ndarray of bool
        Per changed link: whether its load was summed over its flows (then ``t_max`` and
        ``s_num`` hold its exact largest rate and how many flows have it).

    Examples
    --------
    Flow 0 alone on links 0 and 1 (capacity 10 and 4) at rate 4; flow 1 joins on link 0:
    it gets the 6 link 0 leaves, and flow 0 keeps its 4 (its bottleneck, link 1, is untouched).

    >>> import numpy as np
    >>> from netsim.engine.kernels import index_add
    >>> links = np.array([[0, 1], [0, 2]])
    >>> head, nxt, prv = np.full(4, -1), np.zeros(4, np.int64), np.zeros(4, np.int64)
    >>> index_add(np.array([0, 1]), links, 3, head, nxt, prv)
    >>> cap, rate = np.array([10.0, 4.0, 100.0, np.inf]), np.array([4.0, 0.0])
    >>> load, state = np.array([4.0, 4.0, 0.0, 0.0]), new_state(np.array([2, 1, 1, 0]), 2)
    >>> state[1][:2], state[2][:2] = 4.0, 1  # links 0 and 1: one flow at 4
    >>> f, b, i = (lambda n: np.zeros(n)), (lambda n: np.zeros(n, np.bool_)), np.zeros(4, np.int64)
    >>> ok, comp, rates, changed, new_load, summed = solve(
    ...     np.array([1]), np.zeros(0, np.int64), head, nxt, links, rate, np.zeros(0), cap,
    ...     load, state, 3, 8, 100, 1e-12, 1 + 1e-12, b(2), b(4), i, f(2), f(4), f(4), f(4),
    ...     f(4), f(4), i.copy(), i.copy())
    >>> ok, comp.tolist(), rates.tolist(), changed.tolist(), new_load.tolist()
    (True, [1], [6.0], [0, 2], [10.0, 6.0])
    """
    count, lmax, lnum, drift, gone = state[:5]
    nb, nu, bn = state[5], state[6], state[7]
    hops = links.shape[1]
    bounded = bound.shape[0] > 0
    sat = 1 - eps
    s_list = np.empty(in_s.shape[0], np.int64)
    s_rel = np.empty(mark.shape[0], np.int64)
    ns = 0
    for s in added:
        if not in_s[s]:
            in_s[s] = True
            s_list[ns] = s
            ns += 1
    touched = np.empty(mark.shape[0], np.int64)
    nt = 0
    for k in removed:
        nt = push_link(k, pad, mark, touched, nt)
    # Untouched links whose exact largest rate was needed (flag 2), for the call.
    memo = np.empty(mark.shape[0], np.int64)
    nm = 0
    ok = True
    rounds = 0
    work = 0
    while True:
        rounds += 1
        if ns > limit or rounds > 8 or work > budget:
            ok = False
            break
        for i in range(ns):
            for h in range(hops):
                nt = push_link(links[s_list[i], h], pad, mark, touched, nt)
        # 1. Each touched link: its capacity less the held flows' rates.
        for j in range(nt):
            k = touched[j]
            acc[k] = 0.0  # the re-solved flows' rates before,
            resid[k] = 0.0  # and after
            t_max[k] = 0.0  # their largest after
            flag[k] = 0  # (1 once summed over its flows in this round)
            s_in[k] = 0  # its flows in S
        for i in range(ns):
            f = s_list[i]
            for h in range(hops):
                k = links[f, h]
                if k != pad:
                    acc[k] += rate[f]
                    s_in[k] += 1
        for j in range(nt):
            k = touched[j]
            r = cap[k] - (load[k] - gone[k] - acc[k])
            o_max[k] = r if r > 0.0 else 0.0
        sub = np.empty((ns, hops), np.int64)
        for i in range(ns):
            for h in range(hops):
                sub[i, h] = links[s_list[i], h]
        if bounded:
            sb = np.empty(ns)
            for i in range(ns):
                sb[i] = bound[s_list[i]]
            r_s = fill_bounded(sub, o_max, pad, cut, sb)
        else:
            r_s = fill_bounded(sub, o_max, pad, cut, np.empty(0))
        for i in range(ns):
            f = s_list[i]
            x = r_s[i]
            new_rate[f] = x
            for h in range(hops):
                k = links[f, h]
                if k != pad:
                    resid[k] += x
                    if x > t_max[k]:
                        t_max[k] = x
        # The touched links' new loads (updated, or summed after DRIFT updates) and an upper
        # bound of their largest rates (exact if summed); o_max their largest before.
        for j in range(nt):
            k = touched[j]
            if drift[k] >= DRIFT:
                work += count[k]
                t_load[k], t_max[k], s_num[k], o_max[k] = _scan(k, head, nxt, hops, rate,
                                                                new_rate, in_s)
                flag[k] = 1
                continue
            t_load[k] = load[k] - gone[k] - acc[k] + resid[k] if count[k] else 0.0
            if lmax[k] > t_max[k]:
                t_max[k] = lmax[k]
            o_max[k] = lmax[k] if lnum[k] > 0 else -1.0  # (-1: not known exactly)
        grew = False
        for j in range(nt):
            acc[touched[j]] = -1.0  # from here the rate its faster flows were counted at
        # 2. Every flow of S needs a bottleneck; 3. else the held flows faster than it on
        # one of its saturated links join S.
        for i in range(ns):
            f = s_list[i]
            x = new_rate[f]
            if bounded and x >= bound[f] * sat:
                set_bottleneck(f, pad, nb, nu, bn, links, pad)
                continue
            good = False
            for h in range(hops):
                k = links[f, h]
                if k == pad or t_load[k] < cap[k] * sat:
                    continue
                if x < t_max[k] * sat and flag[k] != 1 and lnum[k] <= s_in[k]:
                    # the bound may be loose (unless a held flow is known to have it): sum
                    work += count[k]
                    t_load[k], t_max[k], s_num[k], o_max[k] = _scan(k, head, nxt, hops, rate,
                                                                    new_rate, in_s)
                    flag[k] = 1
                if t_load[k] >= cap[k] * sat and x >= t_max[k] * sat:
                    good = True
                    set_bottleneck(f, k, nb, nu, bn, links, pad)
                    break
            if good:
                continue
            # Of its saturated links, the one with the fewest held flows faster than it
            # (resid, no longer needed, counts them per link for the rate in acc).
            best = -1
            fewest = 0.0
            pending = False
            for h in range(hops):
                k = links[f, h]
                if k == pad or t_load[k] < cap[k] * sat:
                    continue
                if acc[k] == x and resid[k] == 0.0 and grew:
                    pending = True  # its faster flows there joined S for another flow
                    break
                if acc[k] != x:
                    acc[k] = x
                    work += count[k]
                    n = 0.0
                    e = head[k]
                    while e >= 0:
                        s = e // hops
                        if not in_s[s] and rate[s] > x * (1 + eps):
                            n += 1.0
                        e = nxt[e]
                    resid[k] = n
                if resid[k] > 0 and (best < 0 or resid[k] < fewest):
                    best = k
                    fewest = resid[k]
            if pending:
                continue  # re-solved with them in the next round
            if best >= 0:
                work += count[best]
                e = head[best]
                while e >= 0:
                    s = e // hops
                    if not in_s[s] and rate[s] > x * (1 + eps):
                        in_s[s] = True
                        s_list[ns] = s
                        ns += 1
                    e = nxt[e]
                resid[best] = 0.0  # none faster than x left there (counts elsewhere may
                # be too large now: they only choose the link)
            if best < 0 and grew:
                continue  # its faster flows joined S for another flow: solved next round
            if best < 0 or ns > limit or work > budget:  # (none: the solve itself is off)
                ok = False
                break
            grew = True
        if not ok:
            break
        if grew:
            continue  # (re-solve first: the flows that just joined S have no new rate yet)
        # 2. A held flow on a touched link needs a bottleneck; 3. else it joins S. Only on
        # a link that was saturated and is no longer, or has a faster flow than before (a
        # flow whose bottleneck it was keeps it otherwise, and a flow whose bottleneck is
        # elsewhere keeps that one unless it is touched, and checked, too); and only the
        # flows at its largest rate before (the others were not the largest there); and
        # only the flows that may have had it as their bottleneck (see new_state; a flow is
        # given the one it is verified at as soon as it is: if that link changes in a later
        # round, the link's own check finds the flow, and if the solve gives up, the exact
        # path forgets them).
        for j in range(nt):
            s_rel[touched[j]] = 0  # the flows of S that have it as theirs, or none known
        for i in range(ns):
            f = s_list[i]
            for h in range(hops):
                k = links[f, h]
                if k != pad and (bn[f] == k or bn[f] < 0):
                    s_rel[k] += 1
        for j in range(nt):
            k = touched[j]
            if load[k] < cap[k] * sat:
                continue
            if t_load[k] >= cap[k] * sat:
                if o_max[k] < 0.0 or (t_max[k] > o_max[k] and flag[k] != 1):
                    # its largest rate before not known exactly, or after only bounded: sum
                    work += count[k]
                    t_load[k], t_max[k], s_num[k], o_max[k] = _scan(k, head, nxt, hops, rate,
                                                                    new_rate, in_s)
                    flag[k] = 1
                if t_max[k] <= o_max[k]:
                    continue
            if nb[k] + nu[k] == s_rel[k]:
                continue  # no held flow has it as its known bottleneck, and none has none known
            top = o_max[k] * sat  # (o_max -1, not known: every flow)
            work += count[k]
            e = head[k]
            while e >= 0:
                g = e // hops
                e = nxt[e]
                if in_s[g] or (bn[g] >= 0 and bn[g] != k):
                    continue  # (a known bottleneck elsewhere holds, or is touched and checked)
                x = rate[g]
                if x < top:
                    continue
                if bounded and x >= bound[g] * sat:
                    set_bottleneck(g, pad, nb, nu, bn, links, pad)
                    continue
                good = False
                for h in range(hops):
                    k2 = links[g, h]
                    if k2 == pad:
                        continue
                    if mark[k2]:
                        ld, mx = t_load[k2], t_max[k2]
                        if ld >= cap[k2] * sat and x < mx * sat and flag[k2] != 1 and \
                                lnum[k2] <= s_in[k2]:
                            work += count[k2]
                            t_load[k2], t_max[k2], s_num[k2], o_max[k2] = _scan(
                                k2, head, nxt, hops, rate, new_rate, in_s)
                            flag[k2] = 1
                            ld, mx = t_load[k2], t_max[k2]
                    else:
                        ld, mx = load[k2], lmax[k2]
                        if ld >= cap[k2] * sat and x < mx * sat and lnum[k2] <= 0:
                            if flag[k2] != 2:
                                work += count[k2]
                                t_load[k2], t_max[k2], s_num[k2], o_max[k2] = _scan(
                                    k2, head, nxt, hops, rate, new_rate, in_s)
                                flag[k2] = 2
                                memo[nm] = k2
                                nm += 1
                            ld, mx = t_load[k2], t_max[k2]
                    if ld >= cap[k2] * sat and x >= mx * sat:
                        good = True
                        set_bottleneck(g, k2, nb, nu, bn, links, pad)
                        break
                if not good:
                    in_s[g] = True
                    s_list[ns] = g
                    ns += 1
                    grew = True
            if ns > limit or work > budget:
                ok = False  # (the other touched links not checked)
                break
        if not grew or not ok:
            break
    comp = s_list[:ns].copy()
    rates = np.empty(ns)
    for i in range(ns):
        in_s[comp[i]] = False
        rates[i] = new_rate[comp[i]]
    changed = touched[:nt].copy()
    changed.sort()
    new_load = np.empty(nt)
    summed = np.empty(nt, np.bool_)
    for j in range(nt):
        k = changed[j]
        new_load[j] = t_load[k]
        summed[j] = flag[k] == 1
    for j in range(nm):
        flag[memo[j]] = 0
    for j in range(nt):
        mark[touched[j]] = False
        flag[touched[j]] = 0
    return ok, comp, rates, changed, new_load, summed


@njit(cache=True)
def apply(comp, rates, changed, new_load, summed, t_max, s_num, state, now, rem, rate, since,
          finish, cap, load, link_t, busy, saturated, peak_util, peak_flows, links, pad,
          saturation, series):
    """Give flows ``comp`` their ``rates`` and links ``changed`` their loads, where they move.

    :func:`netsim.engine.kernels.apply_rates` for :func:`solve`'s result: a flow whose rate
    is unchanged is left as it is (not rebased), and a link whose load is unchanged is not
    accounted (its busy and saturated time run on from when it last was); its peak flow
    count is still updated. Keeps ``state`` (see :func:`solve`): a link's largest rate from
    its flows' changes, or from ``t_max`` and ``s_num`` where its load was ``summed``.
    Returns, with ``series``, the links whose load moved and their new loads.

    Examples
    --------
    Flow 0 (1000 bytes at 0 B/s) gets 100 B/s at time 1; link 0 goes from 0 to 100:

    >>> import numpy as np
    >>> f = lambda x: np.array(x, np.float64)
    >>> rem, rate, since, finish = f([1000.0]), f([0.0]), f([1.0]), f([np.inf])
    >>> load, t, busy, sat, peak = (f([0.0, 0.0]) for _ in range(5))
    >>> state, none = new_state(np.array([1, 0]), 1), np.zeros(2, np.int64)
    >>> state[1][0] = 0.0  # link 0's flow: rate 0 so far
    >>> moved, new = apply(np.array([0]), f([100.0]), np.array([0]), f([100.0]),
    ...     np.zeros(1, np.bool_), f([0.0, 0.0]), none, state, 1.0, rem, rate, since, finish,
    ...     f([100.0, np.inf]), load, t, busy, sat, peak, none.copy(), np.array([[0]]), 1, 0.99,
    ...     True)
    >>> finish.tolist(), load.tolist(), moved.tolist(), new.tolist(), state[1].tolist()
    ([11.0], [100.0, 0.0], [0], [100.0], [100.0, 0.0])
    """
    count, lmax, lnum, drift, gone = state[:5]
    hops = links.shape[1]
    for i in range(comp.shape[0]):
        s = comp[i]
        r = rates[i]
        old = rate[s]
        if r == old:
            continue
        rebase(s, r, now, rem, rate, since, finish)
        for h in range(hops):
            k = links[s, h]
            if k == pad:
                continue
            if old == lmax[k] and lnum[k] > 0:
                lnum[k] -= 1  # (at 0 lmax only bounds the largest rate)
            if r > lmax[k] or (r == lmax[k] and lnum[k] <= 0):
                lmax[k] = r
                lnum[k] = 1
            elif r == lmax[k]:
                lnum[k] += 1
    n = changed.shape[0]
    moved = np.empty(n if series else 0, np.int64)
    moved_load = np.empty(n if series else 0)
    m = 0
    for p in range(n):
        k = changed[p]
        x = new_load[p]
        gone[k] = 0.0
        if summed[p]:
            lmax[k] = t_max[k]
            lnum[k] = s_num[k]
            drift[k] = 0
        else:
            drift[k] += 1
        if count[k] == 0:
            lmax[k] = 0.0
            lnum[k] = 0
        if count[k] > peak_flows[k]:
            peak_flows[k] = count[k]
        if x == load[k]:
            continue
        account(k, now, load, link_t, cap, busy, saturated, saturation)
        load[k] = x
        u = x / cap[k]
        if not (peak_util[k] >= u or peak_util[k] != peak_util[k]):
            peak_util[k] = u
        if series:
            moved[m] = k
            moved_load[m] = x
            m += 1
    return moved[:m], moved_load[:m]
