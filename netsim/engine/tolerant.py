"""The tolerance-bounded batch solve: re-solve only the flows an instant changes.

Why it exists: the exact batch path (:mod:`netsim.engine.kernels`) re-solves, rebases and
accounts the whole component of every changed flow, because that is what keeps its
results bit-identical to the plain-Python specification. A collective whose ranks start
at jittered instants puts every flow in one component (each rank's all-gather loads
every receiver's down link), so each instant re-derives thousands of rates of which a
hundred change. ``replay(..., exact=False)`` solves such instants here instead.

The method is the bottleneck characterisation of max-min fairness (Bertsekas &
Gallager, *Data Networks*, 2nd ed., section 6.5.2): a feasible allocation is max-min
fair if and only if every flow has a *bottleneck*, a saturated link on its path where
no flow has a larger rate (or the flow is at its own rate bound). Starting from the
previous (max-min fair) allocation, an instant's solve:

1. re-solves a set ``S`` of flows, at first the ones that started or whose bound
   changed, by progressive filling (:func:`netsim.engine.kernels.fill_bounded`) on each
   link's capacity minus the rates of the flows held outside ``S``;
2. verifies the bottleneck condition for every flow of ``S`` and for every held flow
   on a *touched* link (a link of ``S``, or of a flow that ended); a held flow whose
   links are all untouched keeps the bottleneck it had, since no rate on them moved;
3. adds the violators to ``S``: a held flow that lost its bottleneck, and the held
   flows faster than a flow of ``S`` on the one of that flow's saturated links where
   they are fewest; and repeats.

``S`` only grows, so this ends; past a size (a quarter of the active flows, eight
rounds, or a budget of entries of the per-link lists visited: as many as there are) it
gives up and the exact path solves the whole component, whose cost grows with them. The
conditions are checked within :data:`TOLERANCE` (a link is saturated within
``TOLERANCE`` of its capacity, a rate is the largest within ``TOLERANCE`` of it), which
is above the rounding of a sum of a few thousand rates: a rate found here is within
about ``TOLERANCE`` times the flows on its bottleneck of the exact solve's.

What it touches: the flows it re-solves and the links they cross or that a flow left,
plus, of a link that lost its saturation or gained a faster flow, the flows that may have
had it as their bottleneck. For that it keeps each flow's *known bottleneck*: the link
(or its rate bound) where the last solve verified its condition, or where
:func:`~netsim.engine.bottlenecks.find_bottlenecks` found it after an exact solve, or none
(a flow that has just started). A held flow whose known bottleneck is another link keeps
it: that link is untouched, or touched and still saturated with no faster flow, or
touched and scanned itself. Per link it counts the flows that have it as their known
bottleneck and the flows with none known, and skips the scan where both are zero. A flow is
rebased (its bytes left brought to now) and given a new end only when its rate changes,
and a link's busy and saturated time are accounted only when its load changes. To avoid
visiting every flow of a touched link, it keeps per link (:class:`Solver`, beside the
batch path's per-link lists of flows): how many flows cross it, an upper bound of their
largest rate and how many flows are known to have it (then the bound is exact), the
rates of the flows that left it since its load was set, and how many times its load
was updated by a difference rather than summed (summed again after
:data:`~netsim.engine.bottlenecks.DRIFT`). A link is summed over its flows only where a
condition needs its exact largest rate. The kernels are in
:mod:`netsim.engine.bottlenecks`.

So results differ from the exact path's in the last bits, and its tests hold every op's
start, first byte and end to the exact path's and to :mod:`netsim.engine.reference`
within a relative 1e-9 (``tests/test_tolerant_solve.py``). The flow table loads the
compiled kernels for it at the first batch instant, so that its results do not depend on
what the process had loaded; strict priority classes, and ``batch="numpy"``
(:mod:`netsim.engine.vectorised`), always take the exact path.
"""

import numpy as np
from numba import njit

from netsim.engine.bottlenecks import (DRIFT, apply, find_bottlenecks, new_state,
                                        set_bottleneck, solve)
from netsim.engine.maxmin import SHARE_CUT

__all__ = ["DRIFT", "TOLERANCE", "Solver", "enter", "exact_links", "new_state"]

#: The relative tolerance of the bottleneck conditions of :func:`~netsim.engine.bottlenecks.solve`.
TOLERANCE = 1e-12


@njit(cache=True)
def exact_links(comp, changed, links, rate, state, pad, summed):
    """After an exact solve of flows ``comp`` (every flow on links ``changed``): those links'
    largest rates in :func:`~netsim.engine.bottlenecks.solve`'s ``state``, and, if ``summed``, their loads as sums;
    the flows' bottlenecks unknown.

    Examples
    --------
    >>> import numpy as np
    >>> state = new_state(np.array([2, 1, 0]), 2)
    >>> exact_links(np.array([0, 1]), np.array([0, 1]), np.array([[0, 1], [0, 2]]),
    ...             np.array([3.0, 3.0]), state, 2, True)
    >>> state[1].tolist(), state[2].tolist()
    ([3.0, 3.0, 0.0], [2, 1, 0])
    """
    count, lmax, lnum, drift, gone = state[:5]
    nb, nu, bn = state[5], state[6], state[7]
    for k in changed:
        lmax[k] = 0.0
        lnum[k] = 0
        gone[k] = 0.0
        if summed:
            drift[k] = 0
    for s in comp:
        set_bottleneck(s, -1, nb, nu, bn, links, pad)
        r = rate[s]
        for h in range(links.shape[1]):
            k = links[s, h]
            if k == pad:
                continue
            if r > lmax[k] or lnum[k] == 0:
                lmax[k] = r
                lnum[k] = 1
            elif r == lmax[k]:
                lnum[k] += 1


@njit(cache=True)
def enter(slots, links, rate, state, pad, sign):
    """Flows ``slots`` join (``sign`` 1) or leave (-1) their links in :func:`~netsim.engine.bottlenecks.solve`'s ``state``.

    A leaving flow's rate goes to the link's ``gone``, and if it is the link's known largest
    rate it counts off it; a joining one has rate 0. Either has no bottleneck known.

    Examples
    --------
    >>> import numpy as np
    >>> state = new_state(np.array([0, 0]), 1)
    >>> enter(np.array([0]), np.array([[0]]), np.array([0.0]), state, 1, 1)
    >>> state[0].tolist(), state[6].tolist()
    ([1, 0], [1, 0])
    """
    count, lmax, lnum, drift, gone = state[:5]
    nb, nu, bn = state[5], state[6], state[7]
    for s in slots:
        if sign < 0:
            set_bottleneck(s, -1, nb, nu, bn, links, pad)
        for h in range(links.shape[1]):
            k = links[s, h]
            if k == pad:
                continue
            count[k] += sign
            nu[k] += sign
            if sign < 0:
                gone[k] += rate[s]
                if rate[s] == lmax[k] and lnum[k] > 0:
                    lnum[k] -= 1
            if count[k] == 0:
                lmax[k] = 0.0
                lnum[k] = 0


class Solver:
    """The tolerant solve of one flow table: its state of each link and its scratch arrays.

    The flow table (:class:`netsim.engine.flows.FlowTable`, with ``exact=False``) keeps it
    beside its batch path's per-link lists: :meth:`rebuild` when it rebuilds them,
    :meth:`enter` as flows join and leave them, :meth:`solved` after an exact solve, and
    :meth:`rerate` for an instant.

    Parameters
    ----------
    cap : ndarray of float
        Capacity of each link id, the pad (the last) included.
    saturation : float
        The share of capacity a link's statistics count as saturated.

    Examples
    --------
    Two flows on link 0 (10 B/s), flow 1 also on link 1 (4 B/s): flow 0 alone at 10, then
    flow 1 joins (the per-link lists as :func:`netsim.engine.kernels.index_build` makes them).

    >>> import numpy as np
    >>> from netsim.engine.kernels import index_build
    >>> cap, links = np.array([10.0, 4.0, np.inf]), np.array([[0, 2], [0, 1]])
    >>> active, rate = np.array([True, True]), np.array([10.0, 0.0])
    >>> head, nxt, prv = np.empty(3, np.int64), np.empty(4, np.int64), np.empty(4, np.int64)
    >>> index_build(active, links, 2, head, nxt, prv)
    >>> load = np.array([10.0, 0.0, 0.0])
    >>> solver = Solver(cap, 0.99)
    >>> solver.rebuild(active, links, rate, np.zeros(0), load)
    >>> rem, t, finish = np.array([50.0, 8.0]), np.zeros(2), np.full(2, np.inf)
    >>> stats = [np.zeros(3) for _ in range(4)] + [np.zeros(3, np.int64)]
    >>> solver.rerate(np.array([1]), np.zeros(0, np.int64), head, nxt, active, links, rate,
    ...               np.zeros(0), rem, t, finish, 0.0, load, *stats, False)[0].tolist()
    []
    >>> rate.tolist(), finish.tolist(), load.tolist()
    ([6.0, 4.0], [8.333333333333334, 2.0], [10.0, 4.0, 0.0])
    """

    def __init__(self, cap, saturation):
        self.cap = cap
        self.saturation = saturation
        self.pad = len(cap) - 1
        self.drift = np.zeros(len(cap), np.int64)  # kept across rebuilds: loads are not summed
        self.state = None
        self.scratch = None

    def rebuild(self, active, links, rate, bound, load):
        """The state of each link from the active flows (their ``links``, ``rate`` and
        ``bound``, empty if none) and the links' ``load`` (which may still hold flows that
        have ended: their ``gone``); each flow's bottleneck from the flows' loads."""
        slots = np.flatnonzero(active)
        size = len(self.cap)
        count = np.bincount(links[slots].ravel(), minlength=size)[:size]
        count, lmax, lnum, _, gone, nb, nu, bn = new_state(count, len(active))
        self.state = (count, lmax, lnum, self.drift, gone, nb, nu, bn)
        exact_links(slots, np.arange(self.pad), links, rate, self.state, self.pad, False)
        summed = np.bincount(links[slots].ravel(), minlength=size,
                             weights=np.repeat(rate[slots], links.shape[1]))[:size]
        gone[:] = load - summed
        find_bottlenecks(slots, links, rate, bound, self.cap, summed, self.state, self.pad,
                         TOLERANCE)

    def enter(self, slots, links, rate, sign):
        """Flows ``slots`` join (``sign`` 1) or leave (-1) the lists (:func:`enter`)."""
        if self.state is not None:
            enter(slots, links, rate, self.state, self.pad, sign)

    def solved(self, comp, changed, links, rate, bound, load):
        """The exact path solved ``comp``, every flow on links ``changed`` (:func:`exact_links`;
        then :func:`~netsim.engine.bottlenecks.find_bottlenecks` on the links' ``load``)."""
        if self.state is not None:
            exact_links(comp, changed, links, rate, self.state, self.pad, True)
            find_bottlenecks(comp, links, rate, bound, self.cap, load, self.state, self.pad,
                             TOLERANCE)

    def rerate(self, added, removed, head, nxt, active, links, rate, bound, rem, since, finish,
               now, load, link_t, busy, saturated, peak_util, peak_flows, series):
        """Re-rate an instant (:func:`~netsim.engine.bottlenecks.solve`, then :func:`~netsim.engine.bottlenecks.apply`): None if it gave up (then
        nothing changed), else the links whose load moved and their loads (with ``series``)."""
        n, size = len(active), len(self.cap)
        if self.scratch is None or len(self.scratch[0]) != n:
            self.scratch = (np.zeros(n, bool), np.zeros(size, bool), np.zeros(size, np.int64),
                            np.zeros(n), *(np.zeros(size) for _ in range(5)),
                            np.zeros(size, np.int64), np.zeros(size, np.int64))
        count = self.state[0]
        ok, comp, rates, changed, new_load, summed = solve(
            added, removed, head, nxt, links, rate, bound, self.cap, load, self.state, self.pad,
            max(64, int(np.count_nonzero(active)) // 4), max(1024, int(count[:self.pad].sum())),
            TOLERANCE, SHARE_CUT, *self.scratch)
        if not ok:
            return None
        return apply(comp, rates, changed, new_load, summed, self.scratch[7], self.scratch[9],
                     self.state, now, rem, rate, since, finish, self.cap, load, link_t, busy,
                     saturated, peak_util, peak_flows, links, self.pad, self.saturation, series)
