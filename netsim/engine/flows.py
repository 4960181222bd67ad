"""The messages on the wire and the link directions they load: rates, finishes, statistics.

A :class:`FlowTable` holds every transferring message (a *flow*) in a slot, and for
every link direction its current load and running statistics. After flows start
or end at an instant, :meth:`FlowTable.rerate` recomputes max-min rates (see
:mod:`netsim.engine.maxmin`) only for the flows sharing a link, transitively, with one
that changed, and accounts the link directions whose load may change.

Two paths give bit-identical results. An event touching a few flows uses the
incremental one: per-link sets of flow slots kept up to date, the affected
component found by a search from the changed links (none for a flow alone on its
links), rates solved in plain Python (no numpy call overhead; a lone flow gets its
smallest capacity), predicted ends and free slots kept in heaps, and single
values read and written through memoryviews of the numpy columns
(:meth:`FlowTable.add_one`, :meth:`FlowTable.pop_few`). A large batch (a step of a
synchronous collective) or a large component uses compiled loops
(:mod:`netsim.engine.kernels`) over per-link lists of flows that batches keep up to date;
a large batch leaves the index and heaps stale, to be rebuilt by the next small
event, and a small event the lists, to be rebuilt by the next batch. Both visit
flows in slot order and sum loads in that order with the same float operations,
so they agree bit for bit; the property tests check it.

A flow may carry a rate bound (bytes/s; :meth:`FlowTable.add`'s ``bound``, changed
by :meth:`FlowTable.set_bound`); max-min respects it (:mod:`netsim.engine.maxmin`). Until
the first finite bound arrives the solvers run without bounds, so a replay with
none does exactly the float operations it did before bounds existed.
"""

import heapq
import sys

import numpy as np

from netsim.checks import check_choice
from netsim.engine import flow_index
from netsim.engine.maxmin import SHARE_CUT, max_min_rates, max_min_rates_small
from netsim.engine.views import flow_views, link_views
from netsim.errors import NetsimError

__all__ = ["BATCH", "BATCH_INSTANT_WORK", "COMPILE_WORK", "SATURATION", "FlowTable",
           "check_batch"]

SATURATION = 0.99  # a link direction is saturated at >= 99 % of its capacity
_SMALL_SOLVE = 16  # components of at most this many flows are solved in plain Python
_NONE = np.zeros(0, np.int64)
_NO_BOUND = np.zeros(0)  # kernels.fill_bounded's 'no flow bounded'

#: The batch path's loops: numpy until the work pays numba's load ("auto"), or always one.
BATCH = ("auto", "numpy", "compiled")
#: A batch solve's fixed cost, in flows solved: what the numpy loops spend per solve
#: beyond the compiled ones, over what they spend per flow (``benchmarks/startup.py
#: --threshold``, 2026-12-07: 60-63 us per solve, 66-68 ns per flow; 910-925).
BATCH_INSTANT_WORK = 900
#: The batch work (:attr:`FlowTable.batch_work`) after which ``batch="auto"`` loads the
#: compiled kernels: numba's load in a fresh process over the numpy loops' extra cost
#: per flow solved (the same measurement: 0.43-0.50 s over 66-68 ns, 6.4-7.4 million).
COMPILE_WORK = 7_000_000


def check_batch(batch):
    """``batch`` if it names a choice of the batch path's loops, :data:`BATCH`.

    Raises
    ------
    NetsimError
        Naming the value and the choices.

    Examples
    --------
    >>> check_batch("numpy")
    'numpy'
    >>> check_batch("jit")
    Traceback (most recent call last):
    ...
    netsim.errors.NetsimError: unknown batch 'jit'; known: auto, numpy, compiled
    """
    check_choice(batch, "batch", BATCH, error=NetsimError)
    return batch


def _as_list(x):
    """``x`` as a Python list (the incremental path's sequences may be arrays or lists)."""
    return x.tolist() if isinstance(x, np.ndarray) else x


class FlowTable:
    """Flows in slots and the link directions they load.

    Parameters
    ----------
    capacity : ndarray of float
        Bandwidth of each link direction (bytes/s); link id ``len(capacity)`` is
        the padding of routes.
    hops : int
        Columns of a route (the longest route, padded).
    link_series : bool
        Keep every change of a link direction's load in :attr:`series`.
    small : int
        Events starting or ending at most this many flows take the incremental path.
    priority : bool
        Share by strict priority between the flows' classes (:meth:`add`'s
        ``priority``) instead of plain max-min (:mod:`netsim.engine.maxmin`).
    batch : {"auto", "numpy", "compiled"}
        The batch path's loops (:meth:`kernels`): numpy until the batch work pays
        numba's load, or always the one named. Bit-identical either way.
    exact : bool
        False: a large batch re-solves only the flows whose rates it changes
        (:class:`netsim.engine.tolerant.Solver`, on the compiled loops, which it then
        loads), within a relative 1e-9 of the exact solve; ignored with ``priority``.

    Attributes
    ----------
    now : float
        The current time, set by the engine before each instant's calls.
    busy, saturated, peak_util, peak_flows : ndarray
        Per link direction (plus the pad): seconds with a load, seconds at
        >= :data:`SATURATION` of capacity, largest load / capacity, most flows.
    first_finish : float
        The earliest predicted end of a flow (inf if none).
    series : list or None
        ``(time, link, load)`` array chunks, with ``link_series``.
    rate_solves : int
        Max-min solves so far.
    compiled : bool
        Whether the batch path runs the compiled kernels (from now on).
    batch_work : int
        The batch work the numpy loops have done: flows solved, plus
        :data:`BATCH_INSTANT_WORK` per solve.
    link_views, flow_views : LinkViews, FlowViews
        Memoryviews of the link and flow columns by name, for the plain-Python paths
        (:mod:`netsim.engine.views`); ``flow_views`` is renewed when the slots grow.

    Examples
    --------
    Two flows into one link direction of 1 GB/s (link 0), each also crossing its own
    link (1, 2): they share link 0 at 0.5 GB/s and would end at 2 ms.

    >>> import numpy as np
    >>> table = FlowTable(np.array([1e9, 1e9, 1e9]), hops=2)
    >>> slots = table.add(np.array([7, 8]), np.array([1e6, 1e6]), np.array([[1, 0], [2, 0]]))
    >>> table.rerate(slots, slots[:0], slots[:0])
    >>> table.first_finish
    0.002
    >>> table.now = 0.002
    >>> ended, finished, removed = table.pop_finished(0.002)
    >>> ended.tolist()
    [7, 8]
    """

    def __init__(self, capacity, hops, link_series=False, small=8, priority=False, batch="auto",
                 exact=True):
        L = self.L = len(capacity)
        self.cap = np.concatenate([np.asarray(capacity, np.float64), [np.inf]])
        self.hops = hops
        self.small = small
        self.by_class = bool(priority)
        self.bounded = False  # True once a flow has carried a finite bound
        self.now = 0.0
        self.series = [] if link_series else None
        self.rate_solves = 0
        self._free = None  # free slots as a heap for add_one; None when stale, see _alloc
        self._alloc(64)
        # Link statistics, indexed by link direction (plus the dummy pad link L).
        self.load = np.zeros(L + 1)
        self.link_t = np.zeros(L + 1)
        self.busy = np.zeros(L + 1)
        self.saturated = np.zeros(L + 1)
        self.peak_util = np.zeros(L + 1)
        self.peak_flows = np.zeros(L + 1, np.int64)
        # The incremental path reads and writes single links and flows through memoryviews
        # of these columns, by name (netsim.engine.views); _alloc renews the flows' views
        # when it replaces their arrays. A link direction is saturated at loads of at least
        # its ``full`` (the product SATURATION * capacity that apply_rates computes, once
        # per link).
        self.link_views = link_views(self, SATURATION * self.cap)
        self._mark = np.zeros(L + 1, bool)
        self._pos = np.zeros(L + 1, np.int64)  # scratch: a link's position in `changed`
        # Predicted flow ends as a heap of (time, slot), valid where end_of[slot] == time;
        # None after a batch re-rate until the next small one rebuilds it.
        self.ends = None
        self.end_of = {}
        self.first_finish = np.inf
        self.on_link = None  # per-link sets of flow slots (netsim.engine.flow_index); None: stale
        self.link_sets = None  # those sets kept for reuse while on_link is stale
        self.route = {}
        # The batch path's per-link lists of flows (head, next, previous: see
        # kernels.index_add), kept by add and pop_finished; None when the incremental
        # path has changed flows since, until the next batch search rebuilds them.
        self._lists = None
        # The batch path's loops: netsim.engine.vectorised (numpy) or netsim.engine.kernels
        # (compiled), chosen when the batch path first needs them (see kernels()).
        self._kernels = None
        self.compiled = False
        self.batch = check_batch(batch)
        self.batch_work = 0  # flows solved by the numpy loops, plus BATCH_INSTANT_WORK per solve
        # exact=False: large batches on the compiled loops try netsim.engine.tolerant first
        self.exact = exact or self.by_class
        self._solver = None  # its tolerant.Solver, made with the compiled loops

    def add(self, ops, sizes, links, priority=0, bound=np.inf):
        """Put messages ``ops`` of ``sizes`` bytes on routes ``links`` in the lowest free slots,
        in priority classes ``priority`` (one for all or one per op), each within its rate
        ``bound`` (bytes/s, one for all or one per op; inf: none).

        Returns the slots, in the order of ``ops``.
        """
        self._free = None  # add_one's heap of free slots is rebuilt when next needed
        if not (isinstance(bound, float) and bound == np.inf):  # np.ndim costs a call
            if np.ndim(bound) or bound != np.inf:
                self.bounded = self.bounded or bool(np.any(np.asarray(bound) < np.inf))
        if len(ops) == 1:
            slot = int(self.fl_active.argmin())  # the first free slot, if there is one
            if not self.fl_active[slot]:
                self._fill(slot, ops[0], sizes[0], links[0],
                           priority if np.ndim(priority) == 0 else priority[0],
                           bound if np.ndim(bound) == 0 else bound[0])
                return np.array([slot], np.int64)
        # A scalar priority is assigned to every slot as it is (no np.full); free slots
        # by nonzero (np.flatnonzero adds two Python calls around it).
        free = (~self.fl_active).nonzero()[0]
        if len(free) < len(ops):
            self._alloc(max(2 * len(self.fl_active), len(self.fl_active) + len(ops)))
            free = (~self.fl_active).nonzero()[0]
        slots = free[:len(ops)]
        self._fill(slots, ops, sizes, links, priority, bound)
        return slots

    def add_one(self, op, size, links, priority=0, bound=np.inf):
        """:meth:`add` for one message, in plain Python: its slot, the lowest free one.

        ``links`` is its padded route (a row of :meth:`add`'s ``links``).
        """
        if bound != np.inf:
            self.bounded = True
        free = self._free
        if free is None:  # stale after a numpy add or pop: ascending, so a valid heap
            free = self._free = np.flatnonzero(~self.fl_active).tolist()
        if not free:
            n = len(self.fl_active)
            self._alloc(max(2 * n, n + 1))  # as add grows for one flow
            free = self._free = np.flatnonzero(~self.fl_active).tolist()
        slot = heapq.heappop(free)
        self._lists = None  # the batch path's lists: rebuilt when next needed
        fl_active, fl_op, fl_prio, fl_rem, fl_t, fl_rate, _ = self.flow_views
        fl_active[slot] = True
        fl_prio[slot] = priority
        fl_op[slot] = op
        fl_rem[slot] = size
        fl_t[slot] = self.now
        fl_rate[slot] = 0.0
        self.fl_bound[slot] = bound
        self.fl_links[slot] = links
        return slot

    def set_bound(self, slot, bound):
        """Give the flow in ``slot`` the rate bound ``bound`` (bytes/s; inf: none) from now.

        Its rate changes at the next :meth:`rerate` that includes the slot among
        its ``added`` (the engine re-rates it at once).
        """
        if bound != np.inf:
            self.bounded = True
        self.fl_bound[slot] = bound

    def _fill(self, slots, ops, sizes, links, priority, bound=np.inf):
        """Start flows ``ops`` in ``slots`` (a slot or an array of them)."""
        self.fl_active[slots] = True
        self.fl_bound[slots] = bound
        self.fl_prio[slots] = priority
        self.fl_op[slots] = ops
        self.fl_rem[slots] = sizes
        self.fl_t[slots] = self.now
        self.fl_rate[slots] = 0.0
        self.fl_links[slots] = links
        if self._lists is not None:
            self.kernels().index_add(np.atleast_1d(slots), self.fl_links, self.L, *self._lists)
            if self._solver is not None:
                self._solver.enter(np.atleast_1d(slots), self.fl_links, self.fl_rate, 1)

    def pop_finished(self, limit):
        """End the flows predicted to end by ``limit``.

        Returns their ops, their slots (ascending) and the links they crossed
        (read before new flows may reuse the slots).
        """
        finished = self._finished(limit)
        if not len(finished):
            return finished, finished, finished
        self._free = None  # add_one's heap of free slots is rebuilt when next needed
        if self._lists is not None:
            self.kernels().index_remove(finished, self.fl_links, self.L, *self._lists)
            if self._solver is not None:
                self._solver.enter(finished, self.fl_links, self.fl_rate, -1)
        removed = self.fl_links[finished].ravel()
        ended = self.fl_op[finished]
        self.fl_active[finished] = False
        self.fl_finish[finished] = np.inf
        self.fl_rate[finished] = 0.0
        return ended, finished, removed

    def pop_few(self, limit):
        """:meth:`pop_finished` for the incremental path, in plain Python.

        Returns lists: the ops of the flows predicted to end by ``limit``, their
        slots (ascending) and the links they crossed (no padding); empty tuples if
        none ends. When a batch has left the heap of ends stale, returns
        :meth:`pop_finished`'s arrays instead.
        """
        if limit < self.first_finish:
            return (), (), ()
        if self.ends is None:
            return self.pop_finished(limit)
        ends, end_of = self.ends, self.end_of
        finished = []
        while ends and ends[0][0] <= limit:
            t, slot = heapq.heappop(ends)
            if end_of.get(slot) == t:
                del end_of[slot]
                finished.append(slot)
        finished.sort()
        if finished:
            self._lists = None  # the batch path's lists: rebuilt when next needed
        ended, removed = [], []
        route, free = self.route, self._free  # the index is current while the heap is
        fl_active, fl_op, _, _, _, fl_rate, fl_finish = self.flow_views
        for slot in finished:
            ended.append(fl_op[slot])
            removed.extend(route[slot])
            fl_active[slot] = False
            fl_finish[slot] = np.inf
            fl_rate[slot] = 0.0
            if free is not None:
                heapq.heappush(free, slot)
        return ended, finished, removed

    def kernels(self):
        """The batch path's loops: :mod:`netsim.engine.vectorised` or :mod:`netsim.engine.kernels`.

        With ``batch="auto"`` the numpy loops serve until the batch work they did
        (:attr:`batch_work`: flows solved, plus :data:`BATCH_INSTANT_WORK` per solve)
        passes :data:`COMPILE_WORK`, the work whose numpy cost over the compiled one
        pays numba's load in a fresh process; then the compiled kernels, for the rest
        of the replay. If the kernels are already loaded (another replay of the
        process did it), they serve from the first instant. Both give bit-identical
        results, so the choice changes only the speed. Kept here rather than imported
        in each function: a relative import costs about 1 us per call, and a large
        replay makes millions of kernel calls.
        """
        loops = self._kernels
        if loops is None:
            if self.batch == "compiled" or (self.batch == "auto"
                                            and "netsim.engine.kernels" in sys.modules):
                return self._compile()
            from netsim.engine import vectorised as loops

            self._kernels = loops
        return loops

    def _compile(self):
        """Move the batch path to the compiled kernels (numba's load, once per process)."""
        from netsim.engine import kernels

        self._kernels = kernels
        self.compiled = True
        return kernels

    def _alloc(self, size):
        """Grow the flow slots to ``size``."""
        old = getattr(self, "fl_active", None)
        k = 0 if old is None else len(old)
        grow = size - k

        def ext(name, fill, dtype, shape=()):
            arr = np.full((grow,) + shape, fill, dtype)
            cur = getattr(self, name, None)
            setattr(self, name, arr if cur is None else np.concatenate([cur, arr]))

        ext("fl_active", False, bool)
        ext("fl_op", -1, np.int64)
        ext("fl_prio", 0, np.int64)
        ext("fl_rem", 0.0, np.float64)
        ext("fl_t", 0.0, np.float64)
        ext("fl_rate", 0.0, np.float64)
        ext("fl_finish", np.inf, np.float64)
        ext("fl_bound", np.inf, np.float64)
        ext("fl_links", self.L, np.int64, (self.hops,))
        self._free = None  # rebuilt from fl_active when add_one next needs it
        self._lists = None  # likewise the batch path's lists, by _link_lists
        self._sel = np.zeros(size, bool)  # scratch of the batch search, one per slot
        self.flow_views = flow_views(self)  # memoryviews of the new arrays (see __init__)

    def _finished(self, limit):
        """Slots of the flows predicted to end by ``limit``, ascending."""
        if limit < self.first_finish:
            return _NONE
        if self.ends is None:
            return (self.fl_finish <= limit).nonzero()[0]  # np.flatnonzero, two calls fewer
        ends, end_of = self.ends, self.end_of
        found = set()
        while ends and ends[0][0] <= limit:
            t, slot = heapq.heappop(ends)
            if end_of.get(slot) == t:
                del end_of[slot]
                found.add(slot)
        return np.array(sorted(found), np.int64)

    def _first_finish(self):
        """The earliest predicted end of an active flow (inf if none)."""
        if self.ends is None:
            # never empty: there are always flow slots (ndarray.min, without its Python wrapper)
            return float(np.minimum.reduce(self.fl_finish))
        ends, end_of = self.ends, self.end_of
        while ends and end_of.get(ends[0][1]) != ends[0][0]:
            heapq.heappop(ends)  # stale: the flow was re-rated or has ended
        return ends[0][0] if ends else np.inf

    def rerate(self, added, finished, removed, routes=None):
        """Recompute max-min rates for the flows connected to the flows that started or ended.

        ``added`` and ``finished`` are flow slots, ``removed`` the links the finished
        flows crossed (their slots may already hold new flows); arrays or lists.
        ``routes``, if given, are the links of each added flow without padding, and
        the three others lists or tuples (the engine's small path: nothing to convert
        or read back). A flow whose bound changed is passed among ``added`` (it
        stays where it is).

        A few changed flows take the incremental path (the per-link index, plain
        Python); a large batch (the steps of a synchronous collective) the
        compiled one over the active flows. Both give identical results.
        """
        if len(added) + len(finished) <= self.small:
            if routes is None:  # arrays, unless from the engine's small path
                added, finished, removed = _as_list(added), _as_list(finished), _as_list(removed)
            comp, changed = flow_index.component(self, added, finished, removed, routes)
            if len(comp) <= _SMALL_SOLVE:
                self._rerate_small(comp, changed)
            else:
                self._rerate_batch(np.array(comp, np.int64), np.array(changed, np.int64))
        else:
            self.on_link = None  # stale: rebuilt when the next small event needs it
            self.ends = None
            added, removed = np.asarray(added, np.int64), np.asarray(removed, np.int64)
            if self.exact or not self._rerate_tolerant(added, removed):
                self._rerate_batch(*self._component_scan(added, removed))
        ends = self.ends
        if ends is None:
            self.first_finish = self._first_finish()
            return
        end_of = self.end_of  # _first_finish with a heap, inlined for speed
        while ends and end_of.get(ends[0][1]) != ends[0][0]:
            heapq.heappop(ends)  # stale: the flow was re-rated or has ended
        self.first_finish = ends[0][0] if ends else np.inf

    def _link_lists(self):
        """The batch path's per-link lists of the active flows, rebuilt if stale."""
        if self._lists is None:
            n = self.fl_links.size
            head = np.empty(self.L + 1, np.int64)
            self._lists = (head, np.empty(n, np.int64), np.empty(n, np.int64))
            self.kernels().index_build(self.fl_active, self.fl_links, self.L, *self._lists)
            if self._solver is not None:  # its state of each link, kept beside the lists
                self._solver.rebuild(self.fl_active, self.fl_links, self.fl_rate,
                                     self.fl_bound if self.bounded else _NO_BOUND, self.load)
        return self._lists

    def _component_scan(self, added, removed):
        """:func:`netsim.engine.flow_index.component` for large batches: a compiled search over the
        per-link lists, or numpy sweeps over the active flows."""
        loops = self.kernels()
        if not self.compiled:
            return loops.component(self.fl_active, self.fl_links, self._mark, added, removed,
                                   self.L)
        head, nxt, _ = self._link_lists()
        return loops.component(head, nxt, self.fl_links, self._mark, self._sel, added, removed,
                               self.L)

    def _rerate_batch(self, comp, changed):
        """Solve the rates of flows ``comp`` and set the loads of ``changed`` links (batch loops).

        ``comp`` is sorted by slot and ``changed`` by link; every link of ``comp``
        is in ``changed``.
        """
        kernels = self.kernels()
        if len(comp):
            links = self.fl_links.take(comp, axis=0)
            bound = self.fl_bound[comp] if self.bounded else None
            if self.by_class:
                rates = max_min_rates(links, self.cap, pad=self.L, priority=self.fl_prio[comp],
                                      bound=bound, loops=kernels)
            else:  # max_min_rates' one class, without its conversions (a few us per solve)
                rates = kernels.fill_bounded(links, self.cap, self.L, SHARE_CUT,
                                             _NO_BOUND if bound is None else bound)
            self.rate_solves += 1
            if not self.compiled:
                self.batch_work += len(comp) + BATCH_INSTANT_WORK
                if self.batch_work > COMPILE_WORK and self.batch == "auto":
                    self._compile()  # from the next instant: this one ends on the numpy loops
        else:
            rates = np.zeros(0)
        moved, moved_load = kernels.apply_rates(
            comp, rates, changed, self.now, self.fl_rem, self.fl_rate, self.fl_t, self.fl_finish,
            self.fl_links, self.cap, self.load, self.link_t, self.busy, self.saturated,
            self.peak_util, self.peak_flows, self._pos, SATURATION, self.L, self.series is not None)
        if len(moved):
            self.series.append((np.full(len(moved), self.now), moved, moved_load))
        if self._solver is not None and self._lists is not None:  # (exact=False)
            self._solver.solved(comp, changed, self.fl_links, self.fl_rate,
                                self.fl_bound if self.bounded else _NO_BOUND, self.load)
        if self.ends is not None and len(comp):
            self._push_ends(zip(self.fl_finish[comp].tolist(), comp.tolist()))

    def _rerate_tolerant(self, added, removed):
        """:meth:`_rerate_batch` by :class:`netsim.engine.tolerant.Solver` (``exact=False``):
        only the flows whose rates the instant changes; False if it gave up (nothing changed).

        On the compiled loops, which it loads at the first batch instant (unless
        ``batch="numpy"``: then every batch is solved exactly), so that which instants it
        solves, hence the last bits of the results, never depend on whether the process
        had loaded them before.
        """
        if not self.compiled:
            if self.batch == "numpy":
                return False
            self._compile()
        if self._solver is None:
            from netsim.engine.tolerant import Solver

            self._solver = Solver(self.cap, SATURATION)
            self._lists = None  # rebuilt with the solver's state
        head, nxt, _ = self._link_lists()
        done = self._solver.rerate(
            added, removed, head, nxt, self.fl_active, self.fl_links, self.fl_rate,
            self.fl_bound if self.bounded else _NO_BOUND, self.fl_rem, self.fl_t,
            self.fl_finish, self.now, self.load, self.link_t, self.busy, self.saturated,
            self.peak_util, self.peak_flows, self.series is not None)
        if done is None:
            return False
        self.rate_solves += 1
        moved, moved_load = done
        if len(moved):
            self.series.append((np.full(len(moved), self.now), moved, moved_load))
        return True

    def _rerate_small(self, comp, changed):
        """:meth:`_rerate_batch` for a few flows, in plain Python with the same float operations."""
        cap = self.link_views.cap
        route = self.route
        if not self.exact:
            self._lists = None  # and tolerant.solve's state: rebuilt when next needed
        if len(comp) == 1 and len(set(route[comp[0]])) == len(route[comp[0]]):
            # One flow, no link twice (the usual desynchronised event): its smallest
            # capacity, which is what _fill_small's no-shared-link case computes (min is
            # exact), and its load 0.0 + r on each of its links, as the sum below.
            slot = comp[0]
            links = route[slot]
            r = min(map(cap.__getitem__, links))
            if self.bounded:
                r = min(r, float(self.fl_bound[slot]))
            self.rate_solves += 1
            self._set_rate(slot, r)
            if self.ends is None:
                self._push_ends(())  # rebuilds the heap from every active flow
            self._set_loads(changed, dict.fromkeys(links, 0.0 + r))
            return
        new_load, new_count = {}, {}  # of the links of comp; the other changed links go to 0
        if comp:
            # map() rather than comprehensions: a comprehension is a function call in 3.11
            routes = list(map(route.__getitem__, comp))
            prio = [int(self.fl_prio[slot]) for slot in comp] if self.by_class else None
            bound = self.fl_bound[comp].tolist() if self.bounded else None
            rates = max_min_rates_small(routes, cap, prio, bound)
            self.rate_solves += 1
            for slot, links, r in zip(comp, routes, rates):
                self._set_rate(slot, r)
                for k in links:  # summed from 0.0 in slot order, as _rerate_batch sums
                    if k in new_load:
                        new_load[k] += r
                        new_count[k] += 1
                    else:
                        new_load[k] = 0.0 + r
                        new_count[k] = 1
            if self.ends is None:
                self._push_ends(())  # rebuilds the heap from every active flow
        self._set_loads(changed, new_load, new_count)

    def _set_rate(self, slot, r):
        """Bring the flow in ``slot`` to now at its old rate, give it rate ``r``, predict its end."""
        now = self.now
        _, _, _, fl_rem, fl_t, fl_rate, fl_finish = self.flow_views
        rem = fl_rem[slot] - fl_rate[slot] * (now - fl_t[slot])
        if rem < 0.0:  # max(rem, 0.0) without the call: a NaN or -0.0 stays as it is
            rem = 0.0
        fl_rem[slot] = rem
        fl_t[slot] = now
        fl_rate[slot] = r
        fl_finish[slot] = end = now + rem / r if r > 0 else np.inf
        ends = self.ends
        if ends is not None:  # _push_ends inlined for speed
            self.end_of[slot] = end
            heapq.heappush(ends, (end, slot))

    def _set_loads(self, changed, new_load, new_count=None):
        """Account links ``changed`` up to now at their old load, then give them their new one.

        ``new_load`` and ``new_count`` hold the links that keep flows (None: one flow
        each); the others go to 0. One pass (:func:`kernels.apply_rates`' accounting, then the loads): busy
        and saturated time at the old load, then the new load, its peaks and series.
        """
        now = self.now
        cap, load, link_t, busy, saturated, peak_util, peak_flows, full = self.link_views
        track = self.series is not None
        moved = []
        for k in changed:
            dt = now - link_t[k]
            x = load[k]
            if x > 0:
                busy[k] += dt
            if x >= full[k]:
                saturated[k] += dt
            link_t[k] = now
            if k in new_load:
                y = load[k] = new_load[k]
                count = 1 if new_count is None else new_count[k]
                if count > peak_flows[k]:
                    peak_flows[k] = count
                util = y / cap[k]
                if util > peak_util[k]:
                    peak_util[k] = util
            else:  # no flow left: utilisation 0 (or NaN), never above its peak
                y = load[k] = 0.0
            if track and y != x:
                moved.append(k)
        if moved:
            self.series.append((np.full(len(moved), now), np.array(moved, np.int64),
                                np.array([new_load.get(k, 0.0) for k in moved])))

    def _push_ends(self, ends):
        """Record new predicted ends ``(time, slot)``; rebuild the heap if a batch left it stale."""
        if self.ends is None:
            active = np.flatnonzero(self.fl_active)
            self.end_of = dict(zip(active.tolist(), self.fl_finish[active].tolist()))
            self.ends = sorted((t, slot) for slot, t in self.end_of.items())  # a valid heap
            return
        for t, slot in ends:
            self.end_of[slot] = t
            heapq.heappush(self.ends, (t, slot))

