"""The flow-level fluid engine: a SimPy event loop that replays a trace on a network.

Model (SimGrid's CM02, see :mod:`netsim.maxmin`):

* An op starts when every op it waits for has completed.
* A compute op occupies its rank for its duration. Ops of one rank that do not
  depend on each other may overlap, as kernels on separate streams do.
* A message first waits its path latency (the sum of its links' latencies), then
  transfers its bytes at its max-min fair share of every link direction it
  crosses. Rates are recomputed whenever a message starts or finishes, only for
  the messages connected to it through shared links. Alone on its path a message
  takes exactly ``latency + bytes / bottleneck bandwidth`` (Hockney).
* A message is complete when its last byte arrives; ops waiting for it start at
  that instant. Zero-byte messages complete when their latency has elapsed; a
  message between ranks on one node completes at once.

Event handling: every distinct future instant is one SimPy timeout that carries
all the ops whose wait ends then; the network keeps one pending wake-up for its
next flow completion. Everything that happens at one instant is gathered into a
single *settle* step (scheduled with a priority after all ordinary events), which
releases dependent ops and does one rate recomputation.

Numerics: a flow counts as finished once its predicted end is within
``FINISH_RTOL * t`` of the current time ``t`` (1e-12 relative, some 4,500
ulps), so floating-point residue such as 1e-13 bytes left never schedules an
extra event, and every scheduled delay exceeds the resolution of ``t``.
"""

import heapq

import numpy as np
import simpy
from simpy.events import Event

from .errors import DeadlockError
from .maxmin import max_min_rates, max_min_rates_small
from .trace import _ranges, _successors

__all__ = ["FINISH_RTOL", "SATURATION", "replay"]

FINISH_RTOL = 1e-12
SATURATION = 0.99  # a link direction is saturated at >= 99 % of its capacity
_NONE = np.zeros(0, np.int64)
_LATE = 2  # SimPy priority after NORMAL (1): settle runs after every event of its instant
_SWEEPS = 4  # closure sweeps over the active flows before solving connected components
_SMALL = 8  # events adding or ending at most this many flows use the incremental index
_SMALL_SOLVE = 16  # components of at most this many flows are solved in plain Python


def _closure(links, mark, pad):
    """Rows of ``links`` connected to a marked link through shared links; marks their links.

    Flows are edges between the links they cross (each joined to its first link), so
    the answer is the connected components that hold a marked link.
    """
    # Imported here: scipy.sparse costs a third of a second at import, and most runs
    # never reach a chain long enough to need it.
    from scipy.sparse import coo_matrix
    from scipy.sparse.csgraph import connected_components

    valid = links != pad
    ids, node = np.unique(links[valid], return_inverse=True)
    idx = np.full(links.shape, -1, np.int64)
    idx[valid] = node.reshape(-1)
    first = idx[:, 0]  # a flow crosses at least one real link
    rest = idx[:, 1:]
    u = np.repeat(first, rest.shape[1])
    v = rest.ravel()
    real = v >= 0
    graph = coo_matrix((np.ones(int(real.sum()), np.int8), (u[real], v[real])),
                       shape=(len(ids), len(ids)))
    ncomp, label = connected_components(graph, directed=False)
    hit = np.zeros(ncomp, bool)
    hit[label[mark[ids]]] = True
    mark[ids[hit[label]]] = True
    return hit[label[first]]


class _Settle(Event):
    """An event already triggered, processed after all ordinary events of its instant."""

    def __init__(self, env, callback):
        # Same initialisation as simpy.Timeout, with a later priority.
        self.env = env
        self.callbacks = [callback]
        self._value = None
        self._ok = True
        env.schedule(self, _LATE, 0)


class _Replay:
    """State of one replay. Internal: use :func:`netsim.simulate`."""

    def __init__(self, trace, net, nodes, seconds, progress=None, link_series=False):
        n = trace.num_ops
        self.trace, self.net, self.nodes = trace, net, nodes
        self.progress = progress
        self.done = 0
        # Optional record of every link-load change: (time, link, bytes/s) chunks.
        self.series = [] if link_series else None
        self.env = simpy.Environment()
        self.succ_ptr, self.succ = _successors(trace)
        self.waiting = np.diff(trace.dep_ptr)
        self.is_msg = trace.is_message
        self.dur = seconds
        msg = np.flatnonzero(self.is_msg)
        pair, links, lat = net.routes(nodes[trace.rank[msg]], nodes[trace.peer[msg]], placed=nodes)
        L = net.num_links
        self.L = L
        # Row -1 is a route of no links and no latency, for compute ops.
        self.pair_links = np.vstack([links, np.full((1, links.shape[1]), L, np.int64)])
        self.pair_lat = np.append(lat, 0.0)
        self.op_pair = np.full(n, -1, np.int64)
        self.op_pair[msg] = pair
        # An op is instant on the wire if it has no bytes or no links to cross.
        self.size = trace.size
        self.start = np.full(n, np.nan)
        self.end = np.full(n, np.nan)
        self.xfer = np.full(n, np.nan)  # when the first byte leaves (latency elapsed)
        self.calendar = {}
        self.now = 0.0
        self.due = []
        self.settling = False
        # Flow slots.
        self.hops = self.pair_links.shape[1]
        self.cap = np.concatenate([net.bandwidth, [np.inf]])
        self._alloc(64)
        # Link statistics, indexed by link direction (plus the dummy pad link L).
        self.load = np.zeros(L + 1)
        self.link_t = np.zeros(L + 1)
        self.busy = np.zeros(L + 1)
        self.saturated = np.zeros(L + 1)
        self.peak_util = np.zeros(L + 1)
        self.peak_flows = np.zeros(L + 1, np.int64)
        self._mark = np.zeros(L + 1, bool)
        self.wake_time = np.inf
        # Predicted flow ends as a heap of (time, slot), valid where end_of[slot] == time;
        # None after a batch re-rate until the next small one rebuilds it.
        self.ends = None
        self.end_of = {}
        self.first_finish = np.inf  # the earliest predicted end of an active flow
        self.wake_token = 0
        self.on_link = None  # per-link sets of flow slots, see _index
        self.route = {}
        self.settles = 0
        self.rate_solves = 0

    # -- flow slots ---------------------------------------------------------------------
    def _alloc(self, size):
        old = getattr(self, "fl_active", None)
        k = 0 if old is None else len(old)
        grow = size - k

        def ext(name, fill, dtype, shape=()):
            arr = np.full((grow,) + shape, fill, dtype)
            cur = getattr(self, name, None)
            setattr(self, name, arr if cur is None else np.concatenate([cur, arr]))

        ext("fl_active", False, bool)
        ext("fl_op", -1, np.int64)
        ext("fl_rem", 0.0, np.float64)
        ext("fl_t", 0.0, np.float64)
        ext("fl_rate", 0.0, np.float64)
        ext("fl_finish", np.inf, np.float64)
        ext("fl_links", self.L, np.int64, (self.hops,))

    def _add_flows(self, ops):
        """Put messages ``ops`` on the wire in the lowest free flow slots; return the slots."""
        if len(ops) == 1:
            slot = int(self.fl_active.argmin())  # the first free slot, if there is one
            if not self.fl_active[slot]:
                op = int(ops[0])
                self.fl_active[slot] = True
                self.fl_op[slot] = op
                self.fl_rem[slot] = self.size[op]
                self.fl_t[slot] = self.now
                self.fl_rate[slot] = 0.0
                self.fl_links[slot] = self.pair_links[self.op_pair[op]]
                return np.array([slot], np.int64)
        free = np.flatnonzero(~self.fl_active)
        if len(free) < len(ops):
            self._alloc(max(2 * len(self.fl_active), len(self.fl_active) + len(ops)))
            free = np.flatnonzero(~self.fl_active)
        slots = free[:len(ops)]
        self.fl_active[slots] = True
        self.fl_op[slots] = ops
        self.fl_rem[slots] = self.size[ops]
        self.fl_t[slots] = self.now
        self.fl_rate[slots] = 0.0
        self.fl_links[slots] = self.pair_links[self.op_pair[ops]]
        return slots

    # -- the calendar of fixed-time events -----------------------------------------------
    def _at(self, t, ops):
        entry = self.calendar.get(t)
        if entry is None:
            self.calendar[t] = [ops]
            simpy.Timeout(self.env, t - self.now).callbacks.append(lambda _e, t=t: self._due(t))
        else:
            entry.append(ops)

    def _schedule(self, ops, times):
        if len(ops) == 1:
            self._at(float(times[0]), ops)
            return
        uniq, inv = np.unique(times, return_inverse=True)
        if len(uniq) == 1:
            self._at(float(uniq[0]), ops)
            return
        order = np.argsort(inv, kind="stable")
        bounds = np.searchsorted(inv[order], np.arange(len(uniq) + 1))
        for i, t in enumerate(uniq.tolist()):
            self._at(t, ops[order[bounds[i]:bounds[i + 1]]])

    def _due(self, t):
        self.due.append(t)
        if not self.settling:
            self.settling = True
            _Settle(self.env, self._settle)

    def _wake(self, token, t):
        if token == self.wake_token:
            self.wake_time = np.inf
            self._due(t)

    # -- one instant ---------------------------------------------------------------------
    def _settle(self, _event):
        """Process one instant: end finished flows, run what they release, re-rate, wake up."""
        self.settling = False
        self.settles += 1
        now = max(self.due)
        self.now = now = max(now, self.now)
        due = []
        for t in self.due:
            due.extend(self.calendar.pop(t, ()))
        self.due = []
        finished = self._finished(now + FINISH_RTOL * now)
        if len(finished):
            removed = self.fl_links[finished].ravel()  # read now: new flows may reuse the slots
            ended = self.fl_op[finished]
            self.fl_active[finished] = False
            self.fl_finish[finished] = np.inf
            self.fl_rate[finished] = 0.0
        else:
            removed = ended = finished
        if len(finished) + sum(len(ops) for ops in due) <= _SMALL:
            added = self._advance_small(due, ended.tolist())
        else:
            added = self._advance_batch(due, ended)
        if len(added) or len(finished):
            self._rerate(added, finished, removed)
            self.first_finish = self._first_finish()
        nxt = self.first_finish
        if nxt < np.inf and nxt != self.wake_time:
            self.wake_token += 1
            self.wake_time = nxt
            token = self.wake_token
            simpy.Timeout(self.env, max(nxt - now, 0.0)).callbacks.append(
                lambda _e, token=token, t=nxt: self._wake(token, t))

    def _finished(self, limit):
        """Slots of the flows predicted to end by ``limit``, ascending."""
        if limit < self.first_finish:
            return _NONE
        if self.ends is None:
            return np.flatnonzero(self.fl_finish <= limit)
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
            return float(self.fl_finish.min())  # never empty: there are always flow slots
        ends, end_of = self.ends, self.end_of
        while ends and end_of.get(ends[0][1]) != ends[0][0]:
            heapq.heappop(ends)  # stale: the flow was re-rated or has ended
        return ends[0][0] if ends else np.inf

    def _advance_batch(self, due, ended):
        """Complete the ops due now and the messages of flows ``ended``; start what they release.

        Ops released with nothing to wait for run at once, in as many rounds as
        needed. Returns the flow slots of the messages that began transferring.
        """
        now = self.now
        completed, entering = [ended], []
        for ops in due:
            m = self.is_msg[ops]
            completed.append(ops[~m])
            entering.append(ops[m])
        added = []
        while completed or entering:
            if entering:
                ops = np.concatenate(entering)
                entering = []
                self.xfer[ops] = now
                instant = (self.size[ops] == 0) | (self.pair_links[self.op_pair[ops], 0] == self.L)
                if instant.any():
                    completed.append(ops[instant])
                    ops = ops[~instant]
                if len(ops):
                    added.append(self._add_flows(ops))
            if not completed:
                continue
            done = np.concatenate(completed)
            completed = []
            if not len(done):
                continue
            self.end[done] = now
            if self.progress is not None:
                self.done += len(done)
                self.progress(self.done)
            ready = self._release(done)
            if not len(ready):
                continue
            self.start[ready] = now
            m = self.is_msg[ready]
            wait = self._wait(ready)
            zero = wait == 0
            if zero.any():
                completed.append(ready[zero & ~m])
                entering.append(ready[zero & m])
            later = ~zero
            if later.any():
                self._schedule(ready[later], now + wait[later])
        return np.concatenate(added) if added else np.zeros(0, np.int64)

    def _advance_small(self, due, ended):
        """:meth:`_advance_batch` for a few ops, in plain Python, in the same order."""
        now = self.now
        is_msg, L = self.is_msg, self.L
        completed, entering = list(ended), []
        for ops in due:
            for op in ops.tolist():
                (entering if is_msg[op] else completed).append(op)
        added = []
        while completed or entering:
            if entering:
                ops, entering = entering, []
                fresh = []
                for op in ops:
                    self.xfer[op] = now
                    if self.size[op] == 0 or self.pair_links[self.op_pair[op], 0] == L:
                        completed.append(op)
                    else:
                        fresh.append(op)
                if fresh:
                    added.extend(self._add_flows(np.array(fresh, np.int64)).tolist())
            if not completed:
                continue
            done, completed = completed, []
            for op in done:
                self.end[op] = now
            if self.progress is not None:
                self.done += len(done)
                self.progress(self.done)
            later = {}
            for op in self._release_small(done):
                self.start[op] = now
                msg = is_msg[op]
                wait = float(self.pair_lat[self.op_pair[op]] if msg else self.dur[op])
                if wait == 0:
                    (entering if msg else completed).append(op)
                else:
                    later.setdefault(now + wait, []).append(op)
            for t in sorted(later):
                self._at(t, np.array(later[t], np.int64))
        return added

    def _release_small(self, done):
        """:meth:`_release` for a few ops, in plain Python: the ops now ready, ascending."""
        ptr, succ, waiting = self.succ_ptr, self.succ, self.waiting
        ready = []
        for op in done:
            for s in succ[ptr[op]:ptr[op + 1]].tolist():
                waiting[s] -= 1
                if waiting[s] == 0:
                    ready.append(s)
        return sorted(ready)

    def _wait(self, ops):
        """What ops wait once ready: a compute op its duration, a message its path latency."""
        return np.where(self.is_msg[ops], self.pair_lat[self.op_pair[ops]], self.dur[ops])

    def _release(self, done):
        lo = self.succ_ptr[done]
        succ = self.succ[_ranges(lo, self.succ_ptr[done + 1] - lo)]
        if len(succ) <= 1:
            self.waiting[succ] -= 1
            return succ[self.waiting[succ] == 0]
        uniq, counts = np.unique(succ, return_counts=True)
        self.waiting[uniq] -= counts
        return uniq[self.waiting[uniq] == 0]

    def _rerate(self, added, finished, removed):
        """Recompute max-min rates for the flows connected to the flows that started or ended.

        ``added`` and ``finished`` are flow slots, ``removed`` the links the finished
        flows crossed (their slots may already hold new flows).

        A few changed flows take the incremental path (the per-link index, plain
        Python); a large batch (the steps of a synchronous collective) the
        vectorised one over the active flows. Both give identical results.
        """
        if len(added) + len(finished) <= _SMALL:
            added = added.tolist() if isinstance(added, np.ndarray) else added
            comp, changed = self._component(added, finished.tolist(), removed.tolist())
            if len(comp) <= _SMALL_SOLVE:
                self._rerate_small(comp, changed)
                return
            comp, changed = np.array(comp, np.int64), np.array(changed, np.int64)
        else:
            self.on_link = None  # stale: rebuilt when the next small event needs it
            self.ends = None
            comp, changed = self._component_scan(np.asarray(added, np.int64), removed)
        self._rerate_batch(comp, changed)

    def _index(self):
        """The flows crossing each link direction, and each active flow's links.

        Kept incrementally by small events; rebuilt from the active flows after a
        batch invalidated it.
        """
        if self.on_link is None:
            L = self.L
            self.on_link = [set() for _ in range(L)]
            self.route = {}
            active = np.flatnonzero(self.fl_active)
            for slot, links in zip(active.tolist(), self.fl_links[active].tolist()):
                route = self.route[slot] = tuple(k for k in links if k != L)
                for k in route:
                    self.on_link[k].add(slot)
        return self.on_link, self.route

    def _component(self, added, finished, removed):
        """Flows sharing a link, transitively, with an added or finished flow; their links.

        Updates the per-link index with ``added`` and ``finished`` first; ``removed``
        are the links of the finished flows. Returns
        two sorted lists: flow slots whose rates may change, and the link
        directions whose load may change.
        """
        on_link, route = self._index()
        L = self.L
        marked = {k for k in removed if k != L}
        for slot in finished:
            for k in route.pop(slot, ()):
                on_link[k].discard(slot)
        for slot in added:
            links = route[slot] = tuple(k for k in self.fl_links[slot].tolist() if k != L)
            for k in links:
                on_link[k].add(slot)
            marked.update(links)
        comp = set()
        stack = list(marked)
        while stack:
            for slot in on_link[stack.pop()]:
                if slot not in comp:
                    comp.add(slot)
                    for k in route[slot]:
                        if k not in marked:
                            marked.add(k)
                            stack.append(k)
        return sorted(comp), sorted(marked)

    def _component_scan(self, added, removed):
        """Vectorised :meth:`_component` over every active flow, for large batches."""
        L = self.L
        mark = self._mark  # all False between calls
        mark[removed] = True
        mark[self.fl_links[added].ravel()] = True
        mark[L] = False
        active = np.flatnonzero(self.fl_active)
        links = self.fl_links[active]
        sel = mark[links].any(axis=1)
        # Close over flows sharing a link with a marked link. A few sweeps settle the usual
        # case; a long chain of flows (one per sweep) is left to a connected-components solve.
        for _ in range(_SWEEPS):
            new = links[sel].ravel()
            grow = ~mark[new]
            grow &= new != L
            if not grow.any():
                break
            mark[new[grow]] = True
            sel = mark[links].any(axis=1)
        else:
            sel = _closure(links, mark, L)
        changed = np.flatnonzero(mark)
        mark[changed] = False
        return active[sel], changed

    def _account(self, changed):
        """Add busy and saturated time of ``changed`` link directions up to now."""
        now = self.now
        dt = now - self.link_t[changed]
        load = self.load[changed]
        self.busy[changed] += np.where(load > 0, dt, 0.0)
        self.saturated[changed] += np.where(load >= SATURATION * self.cap[changed], dt, 0.0)
        self.link_t[changed] = now

    def _rerate_batch(self, comp, changed):
        """Solve the rates of flows ``comp`` with numpy and set the loads of ``changed`` links.

        ``comp`` is sorted by slot and ``changed`` by link; every link of ``comp``
        is in ``changed``.
        """
        now = self.now
        self._account(changed)
        ncl = len(changed)
        if len(comp):
            rem = self.fl_rem[comp] - self.fl_rate[comp] * (now - self.fl_t[comp])
            np.maximum(rem, 0.0, out=rem)
            self.fl_rem[comp] = rem
            self.fl_t[comp] = now
            links = self.fl_links[comp]
            rates = max_min_rates(links, self.cap, pad=self.L)
            self.rate_solves += 1
            self.fl_rate[comp] = rates
            finish = now + rem / rates
            self.fl_finish[comp] = finish
            if self.ends is not None:
                self._push_ends(zip(finish.tolist(), comp.tolist()))
            flat = links.ravel()
            real = flat != self.L
            pos = np.searchsorted(changed, flat[real])
            new_load = np.bincount(pos, weights=np.repeat(rates, self.hops)[real], minlength=ncl)
            new_count = np.bincount(pos, minlength=ncl)
        else:
            new_load = np.zeros(ncl)
            new_count = np.zeros(ncl, np.int64)
        self._set_loads(changed, new_load, new_count)

    def _set_loads(self, changed, new_load, new_count):
        """Record new loads and flow counts of link directions ``changed`` (array, sorted)."""
        if self.series is not None:
            moved = new_load != self.load[changed]
            if moved.any():
                self.series.append((np.full(int(moved.sum()), self.now), changed[moved],
                                    new_load[moved]))
        self.load[changed] = new_load
        util = new_load / self.cap[changed]
        np.maximum(self.peak_util[changed], util, out=util)
        self.peak_util[changed] = util
        self.peak_flows[changed] = np.maximum(self.peak_flows[changed], new_count)

    def _rerate_small(self, comp, changed):
        """:meth:`_rerate_batch` for a few flows, in plain Python with the same float operations."""
        now = self.now
        load, cap, link_t = self.load, self.cap, self.link_t
        for k in changed:
            dt = now - float(link_t[k])
            x = float(load[k])
            if x > 0:
                self.busy[k] += dt
            if x >= SATURATION * float(cap[k]):
                self.saturated[k] += dt
            link_t[k] = now
        new_load = dict.fromkeys(changed, 0.0)
        new_count = dict.fromkeys(changed, 0)
        if comp:
            route = self.route
            routes = [route[slot] for slot in comp]
            rates = max_min_rates_small(routes, cap)
            self.rate_solves += 1
            fl_rem, fl_rate, fl_t, fl_finish = self.fl_rem, self.fl_rate, self.fl_t, self.fl_finish
            ends = []
            for slot, links, r in zip(comp, routes, rates):
                rem = float(fl_rem[slot]) - float(fl_rate[slot]) * (now - float(fl_t[slot]))
                rem = max(rem, 0.0)
                fl_rem[slot] = rem
                fl_t[slot] = now
                fl_rate[slot] = r
                fl_finish[slot] = end = now + rem / r
                ends.append((end, slot))
                for k in links:
                    new_load[k] += r
                    new_count[k] += 1
            self._push_ends(ends)
        if self.series is not None:
            moved = [k for k in changed if new_load[k] != float(load[k])]
            if moved:
                self.series.append((np.full(len(moved), now), np.array(moved, np.int64),
                                    np.array([new_load[k] for k in moved])))
        for k in changed:
            x = new_load[k]
            load[k] = x
            util = x / float(cap[k])
            if util > self.peak_util[k]:
                self.peak_util[k] = util
            if new_count[k] > self.peak_flows[k]:
                self.peak_flows[k] = new_count[k]

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

    # -- driver --------------------------------------------------------------------------
    def run(self):
        roots = np.flatnonzero(self.waiting == 0)
        if len(roots):
            self.start[roots] = 0.0
            self._schedule(roots, self._wait(roots))
        self.env.run()
        if np.isnan(self.end).any():
            raise self._deadlock()
        # Every flow has ended, so every load is back to 0 and busy/saturated are complete.
        self.makespan = float(self.end.max()) if len(self.end) else 0.0
        return self

    def _deadlock(self):
        stuck = np.flatnonzero(np.isnan(self.end))
        t = self.trace
        lines = []
        for op in stuck[:20].tolist():
            deps = t.deps(op)
            pending = deps[np.isnan(self.end[deps])].tolist()
            what = (f"message {t.rank[op]}->{t.peer[op]}" if self.is_msg[op]
                    else f"compute on rank {t.rank[op]}")
            lines.append({"op": op, "rank": int(t.rank[op]), "what": what, "waits_for": pending})
        first = "; ".join(f"op {s['op']} ({s['what']}) waits for {s['waits_for']}" for s in lines[:3])
        return DeadlockError(f"{len(stuck)} ops can never run: {first}", lines)


def replay(trace, net, nodes, seconds, progress=None, link_series=False):
    """Run the engine; return the finished internal state (see :func:`netsim.simulate`).

    ``progress(ops_done)`` is called as ops complete; with ``link_series`` every
    change of a link direction's load is kept for timelines.
    """
    return _Replay(trace, net, nodes, seconds, progress, link_series).run()
