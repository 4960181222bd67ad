"""The flow-level fluid engine: replays a trace on a network, SimPy ordering its events.

Model (SimGrid's CM02, see :mod:`netsim.engine.maxmin`):

* An op starts when every op it waits for has completed.
* A compute op occupies its rank for its duration. Ops of one rank that do not
  depend on each other may overlap, as kernels on separate streams do.
* A message takes the route of its (source, destination, channel) (see
  :mod:`netsim.network.compiled`; with ``ecmp="hash"`` the route its flow hashes to).
* A message first waits its path latency (the sum of its links' latencies), then
  transfers its bytes at its max-min fair share of every link direction it
  crosses. Rates are recomputed whenever a message starts or finishes, only for
  the messages connected to it through shared links. Alone on its path a message
  takes exactly ``latency + bytes / bottleneck bandwidth`` (Hockney). With
  ``sharing="priority"`` the shares are strict priority between the messages'
  ``priority`` classes instead, each class max-min on what the classes above it
  left (a starved flow waits at rate 0 until the link frees).
* A message is complete when its last byte arrives; ops waiting for it start at
  that instant. Zero-byte messages complete when their latency has elapsed; a
  message between ranks on one node completes at once.

Event handling: SimPy orders the events (by its own rule, inside its event loop); the
engine keeps the time. The event queue (a
:class:`~netsim.engine.environment.ReplayEnvironment`, the one place that reads SimPy's
internals: a heap of calls, each the heap entry of the SimPy timeout it stands for, run
inside one SimPy event) runs the replay in time order (equal times in the order they were
created), but its ``env.now`` adds up rounded delays and can
drift an ulp from the time an op is due. So the engine keeps its own exact clock,
``_Replay.now``: every distinct future instant ``t`` is one call of the queue,
created with the delay ``t - now`` and carrying ``t`` itself in its value, with
the ops whose wait ends then; the network keeps one pending wake-up for its next
flow completion, carrying its exact time the same way. Every time a result
reports (an op's start, transfer and end, a link's busy time) is such an exact
time, never ``env.now``. Everything that happens at one instant is gathered into
a single *settle* step (a zero-delay call, which runs after every call and event
already scheduled at that instant): it ends finished flows, releases dependent
ops and does one rate recomputation (:mod:`netsim.engine.flows`). An instant touching
at most ``small_event`` ops and flows (:data:`SMALL_EVENT` by default) runs in
plain Python, a larger one with compiled loops over the batch
(:mod:`netsim.engine.kernels`); both give bit-identical results. The plain-Python path
(:mod:`netsim.engine.small`) runs the usual desynchronised instant (one op due, or one
flow ending, alone on its links) in one pass from the queue's call, the general
form everything else. :func:`replay` returns
a :class:`Record`, the interface a second engine implements too: the plain
reference engine :func:`netsim.engine.reference.replay` returns the same record (and a
packet-level engine, say, would).

Numerics: a flow counts as finished once its predicted end is within
``FINISH_RTOL * t`` of the current time ``t`` (1e-12 relative, some 4,500
ulps), so floating-point residue such as 1e-13 bytes left never schedules an
extra event, and every scheduled delay exceeds the resolution of ``t``.
"""

from typing import NamedTuple, Optional

import numpy as np

from netsim.checks import check_array, check_callable, check_flag
from netsim.errors import DeadlockError, NetsimError, TraceError
from netsim.engine.flows import SATURATION, FlowTable, check_batch
from netsim.engine.maxmin import check_sharing
from netsim.network.compiled import route_loads
from netsim.engine.environment import ReplayEnvironment
from netsim.engine.small import FINISH_RTOL, advance_small, plain_callbacks
from netsim.engine import transport as _transport
from netsim.engine.tcp import check_transport, tcp_options
from netsim.engine.views import op_views
from netsim.trace.core import check_trace, successors

__all__ = ["FINISH_RTOL", "SATURATION", "SMALL_EVENT", "Record", "replay"]

#: Instants ending or starting at most this many ops and flows run in plain Python (the
#: incremental path); larger ones with compiled loops over the batch. The default of
#: :func:`replay`'s ``small_event``.
SMALL_EVENT = 8
_NO_OPS = np.zeros(0, np.int64)


class _Replay:
    """State of one replay: ops, their dependencies, its event queue. Use :func:`replay`."""

    def __init__(self, trace, net, nodes, seconds, progress=None, link_series=False, ecmp=None,
                 seed=0, priority=None, small_event=SMALL_EVENT, bound=None, tcp=None,
                 fused=True, batch="auto", exact=True):
        n = trace.num_ops
        self.small_event = small_event
        self.priority = None if priority is None else np.asarray(priority, np.int64)
        self.trace, self.net, self.nodes = trace, net, nodes
        self.progress = progress
        self.done = 0
        self.env = ReplayEnvironment()
        self.succ_ptr, self.succ = successors(trace)
        self.waiting = np.diff(trace.dep_ptr)
        if n < 2**31:   # op ids and dependency counts in 32 bits: 12 bytes fewer per op kept
            self.succ = self.succ.astype(np.int32)
            self.waiting = self.waiting.astype(np.int32)
        self.is_msg = trace.is_message
        self.dur = seconds
        msg = np.flatnonzero(self.is_msg)
        pair, links, lat = net.routes(nodes[trace.rank[msg]], nodes[trace.peer[msg]], placed=nodes,
                                      channel=trace.channel[msg], ecmp=ecmp, seed=seed)
        L = net.num_links
        self.L = L
        # Row -1 is a route of no links and no latency, for compute ops.
        self.pair_links = np.vstack([links, np.full((1, links.shape[1]), L, np.int64)])
        self.pair_lat = np.append(lat, 0.0)
        self.pair_empty = self.pair_links[:, 0] == L  # a route that crosses no link
        self.op_pair = np.full(n, -1, np.int64)
        self.op_pair[msg] = pair
        del msg, pair            # not kept: at 10^7 messages each is 80 MB
        self.bound = None if bound is None else np.asarray(bound, np.float64)
        self.tcp = self.ticking = None
        if tcp is not None:  # TCP's start-up (netsim.engine.tcp): a bound per flow, changed by ticks
            _transport.setup(self, net, tcp)
        # An op is instant on the wire if it has no bytes or no links to cross.
        self.size = trace.size
        self.start = np.full(n, np.nan)
        self.end = np.full(n, np.nan)
        self.xfer = np.full(n, np.nan)  # when the first byte leaves (latency elapsed)
        self.pending = {}  # exact time -> the lists of ops due then (its call's value)
        # The engine's exact clock. SimPy's env.now adds up rounded delays, so it can be
        # an ulp away from the time an op is due; results use the exact times.
        self.now = 0.0
        self.due = []
        self.settling = False
        self.flows = FlowTable(net.bandwidth, self.pair_links.shape[1], link_series, small_event,
                               priority is not None, batch, exact)
        self.wake_time = np.inf
        self.wake_token = 0
        self.settles = 0
        # The small path reads and writes single ops through memoryviews of the columns
        # above, by name (netsim.engine.views; every one is updated in place, never replaced).
        self.views = op_views(self)
        # Route index -> (padded link row, links without padding, whether it crosses no link).
        self._route_of = {}
        # Send queues: a queued message whose latency has passed waits here, keyed by the
        # message before it on its queue, until that one is delivered.
        self.qprev = None
        if (trace.queue >= 0).any():
            qprev = trace.queue_predecessors()
            self.qprev = qprev if (qprev >= 0).any() else None
        self.parked = {}
        # The callbacks of the calls of ops due and of the wake-up: the general path's, or in
        # the plain configuration the fused instants (netsim.engine.small), which fall back to them.
        self.on_due, self.on_wake = self._due, self._wake
        if fused and small_event >= 1 and self.tcp is None and self.priority is None and \
                self.bound is None and self.qprev is None and progress is None:
            self.on_due, self.on_wake = plain_callbacks(self)

    def _add_flows(self, ops):
        """Put messages ``ops`` on the wire; return their flow slots."""
        bound = np.inf if self.bound is None else self.bound[ops]
        if self.tcp is not None:
            ops, bound = _transport.enter(self, ops, np.broadcast_to(bound, ops.shape))
            if not len(ops):
                return ops
        slots = self.flows.add(ops, self.size[ops], self.pair_links[self.op_pair[ops]],
                               0 if self.priority is None else self.priority[ops], bound)
        if self.tcp is not None:
            for op, slot in zip(ops.tolist(), slots.tolist()):
                if op in self.tcp.state:
                    self.tcp.slot_of[op] = slot
        return slots

    # -- fixed-time events ------------------------------------------------------------------
    def _at(self, t, ops):
        """Run ``ops`` (their wait over) at exact time ``t``: one call of the queue per distinct t.

        The call's value lists the ops due then (arrays, or lists from the small
        path); later ops due at the same t join it, so everything due at one exact
        time is settled together.
        """
        lists = self.pending.get(t)
        if lists is None:
            lists = self.pending[t] = [ops]
            self.env.call_later(t - self.now, (t, lists), self.on_due)
        else:
            lists.append(ops)

    def _schedule(self, ops, times):
        """:meth:`_at` for ops with their own times, grouped by time (ascending)."""
        if len(ops) == 1:
            self._at(float(times[0]), ops)
            return
        # Usually all are due at one time (a step's messages wait the same latency):
        # found without np.unique (about 8 us), equal as np.unique finds them.
        listed = times.tolist()
        first = listed[0]
        if listed.count(first) == len(listed) and first == first:  # a NaN: np.unique
            self._at(first, ops)
            return
        uniq, inv = np.unique(times, return_inverse=True)
        if len(uniq) == 1:
            self._at(float(uniq[0]), ops)
            return
        order = np.argsort(inv, kind="stable")
        bounds = np.searchsorted(inv[order], np.arange(len(uniq) + 1))
        for i, t in enumerate(uniq.tolist()):
            self._at(t, ops[order[bounds[i]:bounds[i + 1]]])

    def _due(self, item):
        """A timed call ran: have its ops, ``item = (time, [ops, ...])``, settled at this instant."""
        del self.pending[item[0]]
        self._note(item)

    def _note(self, item):
        """Have ``(time, [ops, ...])`` settled at this instant, in one settle step with the rest."""
        if self.settling:
            self.due.append(item)
            return
        env = self.env
        if env.later_than_now():
            # Nothing else is scheduled at this instant: settle now, as the zero
            # delay call below would, one call sooner.
            self._instant(*item)
            return
        # A zero delay call made now comes after every call already scheduled at this
        # instant (equal times run in the order they were made, as in SimPy), so the settle step
        # sees them all.
        self.due.append(item)
        self.settling = True
        env.call_later(0, None, self._settle)

    def _wake(self, item):
        """The flow-completion wake-up ran: settle if it is still the current one."""
        token, t = item
        if token == self.wake_token:
            self.wake_time = np.inf
            self._note((t, ()))

    # -- one instant ---------------------------------------------------------------------
    def _settle(self, _value):
        """The zero-delay call of an instant with several events: settle them together."""
        self.settling = False
        items, self.due = self.due, []
        if len(items) == 1:
            self._instant(*items[0])
        else:
            self._instant(max(t for t, _ in items), [ops for _, lists in items for ops in lists])

    def _instant(self, now, due):
        """Process one instant: end finished flows, run what they release, re-rate, wake up.

        ``now`` is its exact time, ``due`` the lists of ops whose wait ends then.
        """
        self.settles += 1
        flows = self.flows
        if self.now > now:
            now = self.now
        self.now = flows.now = now
        limit = now + FINISH_RTOL * now
        if limit < flows.first_finish:  # no flow ends now (pop_few's first test, inlined for speed)
            ended = finished = removed = ()
        else:
            ended, finished, removed = flows.pop_few(limit)
        self._proceed(due, ended, finished, removed)

    def _proceed(self, due, ended, finished, removed):
        """The rest of :meth:`_instant` once the clock is set and flows ``finished`` popped:
        complete and release ops, re-rate, set the wake-up.

        ``ended`` are the finished flows' ops and ``removed`` the links they crossed.
        """
        flows, now = self.flows, self.now
        rebound = ()
        if self.tcp is not None:
            self.tcp.ended(ended, now)
            if self.ticking:
                rebound = _transport.retick(self)
        if len(finished) + sum(map(len, due)) <= self.small_event:
            if isinstance(finished, np.ndarray):  # a batch left the heap stale: arrays
                ended, finished, removed = ended.tolist(), finished.tolist(), removed.tolist()
            added, routes = advance_small(self, due, ended)
            if rebound:
                added = added + rebound
                routes = routes + [flows.fl_links[slot][flows.fl_links[slot] < self.L].tolist()
                                   for slot in rebound]
            if added or finished:
                flows.rerate(added, finished, removed, routes)
        else:
            if not len(finished):
                ended = finished = removed = _NO_OPS
            elif not isinstance(finished, np.ndarray) or finished.dtype != np.int64:
                ended, finished, removed = (np.asarray(x, np.int64)
                                            for x in (ended, finished, removed))
            added = self._advance_batch([np.asarray(ops, np.int64) for ops in due], ended)
            if rebound:
                added = np.concatenate([added, np.array(rebound, np.int64)])
            if len(added) or len(finished):
                flows.rerate(added, finished, removed)
        nxt = flows.first_finish
        if nxt < np.inf and nxt != self.wake_time:
            self.wake_token += 1
            self.wake_time = nxt
            self.env.call_later(max(nxt - now, 0.0), (self.wake_token, nxt), self.on_wake)

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
                ops = entering[0] if len(entering) == 1 else np.concatenate(entering)
                entering = []
                if self.qprev is not None:
                    ops = self._hold(ops)
                self.xfer[ops] = now
                instant = (self.size[ops] == 0) | self.pair_empty[self.op_pair[ops]]
                if np.count_nonzero(instant):  # (ndarray.any() costs 3x as much)
                    completed.append(ops[instant])
                    ops = ops[~instant]
                if len(ops):
                    added.append(self._add_flows(ops))
            if not completed:
                continue
            done = completed[0] if len(completed) == 1 else np.concatenate(completed)
            completed = []
            if not len(done):
                continue
            self.end[done] = now
            if self.parked:
                entering.append(self._unpark(done))
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
            nzero = np.count_nonzero(zero)
            if nzero:
                completed.append(ready[zero & ~m])
                entering.append(ready[zero & m])
            if nzero < len(zero):
                later = ~zero
                self._schedule(ready[later], now + wait[later])
        return np.concatenate(added) if added else np.zeros(0, np.int64)

    def _hold(self, ops):
        """The messages of ``ops`` free to go on the wire; the rest wait for their queue."""
        q = self.qprev[ops]
        held = q >= 0
        held[held] = np.isnan(self.end[q[held]])
        for op, before in zip(ops[held].tolist(), q[held].tolist()):
            self.parked[before] = op
        return ops[~held]

    def _unpark(self, done):
        """The queued messages that ops ``done`` (just delivered) were holding back."""
        keys = np.fromiter(self.parked, np.int64, len(self.parked))
        hit = done[np.isin(done, keys)].tolist()
        return np.array([self.parked.pop(op) for op in hit], np.int64)

    def _wait(self, ops):
        """What ops wait once ready: a compute op its duration, a message its path latency."""
        return np.where(self.is_msg[ops], self.pair_lat[self.op_pair[ops]], self.dur[ops])

    def _release(self, done):
        """Count ``done`` off their successors' waits; the successors now ready, ascending."""
        return self.flows.kernels().release(np.asarray(done, np.int64), self.succ_ptr, self.succ,
                                            self.waiting)

    # -- driver --------------------------------------------------------------------------
    def run(self):
        """Start the ops that wait for nothing, run SimPy to the end; return the :class:`Record`."""
        roots = np.flatnonzero(self.waiting == 0)
        if len(roots):
            self.start[roots] = 0.0
            self._schedule(roots, self._wait(roots))
        self.env.run()
        if np.isnan(self.end).any():
            raise self._deadlock()
        return self._record()

    def _record(self):
        """The measurements of a finished replay."""
        # Every flow has ended, so every load is back to 0 and busy/saturated are complete.
        L, flows = self.L, self.flows
        nbytes, count = _link_totals(self.pair_links[:-1], self.op_pair[self.is_msg],
                                     self.size[self.is_msg], L)
        series = None
        if flows.series is not None:
            chunks = flows.series or [(np.zeros(0), np.zeros(0, np.int64), np.zeros(0))]
            series = {"time": np.concatenate([c[0] for c in chunks]),
                      "link": np.concatenate([c[1] for c in chunks]),
                      "load": np.concatenate([c[2] for c in chunks])}
        return Record(
            start=self.start, transfer=self.xfer, end=self.end,
            makespan=float(self.end.max()) if len(self.end) else 0.0, nodes=self.nodes,
            link_bytes=nbytes, link_messages=count, link_busy=flows.busy[:L],
            link_saturated=flows.saturated[:L], link_peak_util=flows.peak_util[:L],
            link_peak_flows=flows.peak_flows[:L], link_series=series,
            settles=self.settles, rate_solves=flows.rate_solves)

    def _deadlock(self):
        """The error naming the first ops that can never run."""
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


def _link_totals(routes, pair, sizes, num_links):
    """Bytes and messages per link direction, binned by route first.

    ``routes`` are the padded link rows of each route (pad ``num_links``), ``pair``
    the route of each message and ``sizes`` its bytes. A (messages x hops) matrix
    would be large.
    """
    nbytes = route_loads(pair, routes, num_links, sizes)
    count = route_loads(pair, routes, num_links)
    return nbytes, count.astype(np.int64)  # whole numbers, exact in float64


class Record(NamedTuple):
    """What one replay measured: the interface between an engine and :class:`~netsim.Result`.

    Per op (arrays indexed by op id, seconds): ``start`` (ready), ``transfer`` (first
    byte on the wire; NaN for compute ops) and ``end``. Per link direction (arrays
    indexed like the network's links): ``link_bytes``, ``link_messages``,
    ``link_busy`` (seconds with a load), ``link_saturated`` (seconds at >= 99 % of
    capacity), ``link_peak_util``, ``link_peak_flows``; ``link_series`` maps
    ``time``, ``link``, ``load`` to arrays of every load change (or is None).
    Counters: ``settles`` (instants processed) and ``rate_solves``. ``makespan`` is
    the last end and ``nodes`` the node hosting each rank.
    """

    start: np.ndarray
    transfer: np.ndarray
    end: np.ndarray
    makespan: float
    nodes: np.ndarray
    link_bytes: np.ndarray
    link_messages: np.ndarray
    link_busy: np.ndarray
    link_saturated: np.ndarray
    link_peak_util: np.ndarray
    link_peak_flows: np.ndarray
    link_series: Optional[dict]
    settles: int
    rate_solves: int


def replay(trace, net, nodes, seconds, progress=None, link_series=False, ecmp=None, seed=0,
           sharing="maxmin", priority=None, small_event=SMALL_EVENT, bound=None,
           transport="fluid", tcp=None, fused=True, batch="auto", exact=True):
    """Replay ``trace`` on ``net`` and return its :class:`Record`.

    ``sharing="maxmin"`` (the default) shares every link direction max-min fairly
    among the flows crossing it. ``sharing="priority"`` is strict priority with
    work conservation: on every link direction the flows of the highest priority
    class share by max-min, each lower class gets what the classes above left
    (nothing where they fill the link), so an urgent message that starts while a
    less urgent one is on the wire overtakes it (:func:`netsim.engine.maxmin.max_min_rates`).
    With one class it is max-min exactly.

    Parameters
    ----------
    trace : Trace
        The ops.
    net : Network
        Links, routes and latencies.
    nodes : ndarray of int
        The node hosting each rank.
    seconds : ndarray of float
        The duration of each op (compute ops; ignored for messages).
    progress : callable, optional
        Called as ``progress(ops_done)`` as ops complete.
    link_series : bool
        Keep every change of a link direction's load.
    ecmp : {None, "hash"}, optional
        How messages spread over equal-cost paths (:meth:`Network.path_index`):
        None (default) by channel, ``"hash"`` by a per-flow hash of ``seed``.
    seed : int, optional
        The ECMP hash seed.
    sharing : {"maxmin", "priority"}
        The bandwidth-sharing model.
    priority : ndarray of int, optional
        Priority of each op (larger = more urgent) with ``sharing="priority"``;
        the trace's ``priority`` column by default.
    small_event : int, optional
        Instants that start or end at most this many ops and flows take the
        plain-Python path, larger ones the compiled batch path
        (:data:`SMALL_EVENT` by default). Both give bit-identical results, so
        this changes only the speed; -1 sends every instant down the batch path
        (the tests compare the two that way).
    bound : ndarray of float, optional
        The largest rate of each op's flow (bytes/s, > 0; inf: none; ignored for
        compute ops): max-min sharing respects it (:mod:`netsim.engine.maxmin`).
    transport : {"fluid", "tcp"}
        ``"tcp"`` adds TCP's start-up to every message (:mod:`netsim.engine.tcp`):
        store-and-forward of the first segment, slow start as a rate bound
        changed at round-trip instants, persistent connections.
    tcp : dict, optional
        The TCP options (:func:`netsim.engine.tcp.tcp_options`), with ``transport="tcp"``.
    fused : bool
        In the plain configuration (no TCP, priority classes, rate bounds, send
        queues or progress), run the usual one-op instants in one
        pass (:func:`netsim.engine.small.plain_callbacks`). Bit-identical either way, so
        this changes only the speed; False runs every small instant through the
        general path (the tests compare the two that way).
    batch : {"auto", "numpy", "compiled"}
        The loops of the batch path: numpy (:mod:`netsim.engine.vectorised`) until
        the replay's batch work would pay numba's load, then the compiled kernels
        (:mod:`netsim.engine.kernels`), which serve from the start if the process has
        loaded them already (``"auto"``); or always one of them. Bit-identical
        either way, so this changes only the speed.
    exact : bool
        True (default): every instant's rates, ends and link statistics are the
        float operations of :mod:`netsim.engine.reference`, bit for bit. False: a
        large batch on the compiled loops re-solves only the flows whose rates it
        changes, verified by max-min's bottleneck conditions
        (:mod:`netsim.engine.tolerant`), and falls back to the exact solve past a
        size; results then agree with the exact ones within a relative 1e-9 rather
        than bit for bit. Much faster where jitter or a straggler spreads a
        collective's starts over many instants. It loads the compiled kernels at the
        first batch instant (numba's load, about 0.5 s in a fresh process), so that its
        results never depend on what the process had loaded; with ``batch="numpy"`` or
        priority classes every instant solves exactly.

    Returns
    -------
    Record

    Raises
    ------
    DeadlockError
        If some ops can never run.
    NetsimError
        For an unknown ``sharing``, ``transport`` or ``batch``, TCP options without TCP,
        an ``exact`` or ``link_series`` that is not a bool, or arguments of the wrong
        kind (``net`` not a Network, ``nodes`` or ``seconds`` not one number per rank or op).

    Examples
    --------
    >>> import networkx as nx
    >>> from netsim import TraceBuilder
    >>> from netsim.network.compiled import Network
    >>> G = nx.Graph()
    >>> G.add_node("a", kind="host"); G.add_node("b", kind="host")
    >>> G.add_edge("a", "b", bandwidth=1e9, latency=1e-6)
    >>> b = TraceBuilder(2); _ = b.message(0, 1, 1e6)
    >>> trace, net = b.build(), Network(G)
    >>> rec = replay(trace, net, net.placement(2), trace.compute_seconds())
    >>> round(rec.makespan, 12), rec.link_bytes.tolist()
    (0.001001, [1000000.0, 0.0])
    """
    check_trace(trace)
    if not callable(getattr(net, "routes", None)):   # a Network, or a Quotient of one
        raise NetsimError(f"net must be a netsim.network.compiled.Network (Network(G)), got "
                          f"{type(net).__name__} {net!r:.40}")
    nodes = check_array(nodes, "nodes (the node of each rank)", trace.ranks)
    seconds = check_array(seconds, "seconds (each op's duration)", trace.num_ops, "iuf")
    check_callable(progress, "progress", "progress(ops_done)")
    link_series = check_flag(link_series, "link_series")
    if trace.num_collectives:
        raise TraceError("the engine replays compute ops and messages; a trace with "
                         "collective ops is expanded by its library first (netsim.simulate)")
    prio = None
    if check_sharing(sharing) == "priority":
        prio = trace.priority if priority is None else priority
    if check_transport(transport) == "fluid" and tcp is not None:
        raise NetsimError("TCP options need transport='tcp'")
    options = tcp_options(tcp) if transport == "tcp" else None
    if not isinstance(exact, (bool, np.bool_)):
        raise NetsimError(f"exact must be True or False, got {type(exact).__name__} {exact!r:.40}")
    return _Replay(trace, net, nodes, seconds, progress, link_series, ecmp, seed, prio,
                   small_event, _transport.check_bound(bound, trace), options, fused,
                   check_batch(batch), bool(exact)).run()

