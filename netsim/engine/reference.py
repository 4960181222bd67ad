"""The readable specification of the engine: a plain-Python reference replay.

:func:`replay` takes the arguments of :func:`netsim.engine.replay.replay` and returns the
same :class:`~netsim.engine.replay.Record`, so a :class:`~netsim.Result` is built from
either engine alike (the second engine behind one interface that ARCHITECTURE
describes). It shares nothing with :mod:`netsim.engine.replay` but that record type and
the routing and placement (which are not what it checks): plain Python, no
SimPy, one global max-min solve over every active flow at every event, time
advanced from event to event. Slow and obviously correct: the textbook
progressive filling of Bertsekas & Gallager, *Data Networks*, 2nd ed., section
6.5.2, under SimGrid's CM02 semantics (a message waits its path latency, then
shares bandwidth; it is done when its last byte arrives, within the engine's
relative tolerance of 1e-12 of the current time). The property tests compare
the engine with it on random traces, field by field of the record.

``sharing="priority"`` is strict priority between classes of the ``priority``
column (larger first): the textbook filling, run class by class on the capacity
the classes above left.

Send queues (the trace's ``queue`` column): a queued message whose latency has
passed goes on the wire when the message before it on its queue has been
delivered, at once if it already has.
"""

import heapq
import math

import numpy as np

from netsim.engine.replay import Record
from netsim.errors import DeadlockError, TraceError
from netsim.engine.maxmin import check_sharing  # the name check only, not the allocation

__all__ = ["maxmin", "replay"]

SAT = 0.99


def maxmin(routes, cap, priority=None, bound=None):
    """Max-min fair rates by progressive filling, one flow and one link at a time.

    Parameters
    ----------
    routes : dict
        Flow -> list of the links it crosses.
    cap : dict
        Link -> capacity (bytes/s).
    priority : dict, optional
        Flow -> priority class; each class, highest first, is filled on what the
        classes above it left (strict priority).
    bound : dict, optional
        Flow -> its largest rate (bytes/s): a private link of that capacity that
        only the flow crosses.

    Returns
    -------
    dict
        Flow -> rate (bytes/s).

    Examples
    --------
    The parking lot: flow "a" crosses links 0 and 1, "b" link 0, "c" link 1.

    >>> sorted(maxmin({"a": [0, 1], "b": [0], "c": [1]}, {0: 10.0, 1: 4.0}).items())
    [('a', 2.0), ('b', 8.0), ('c', 2.0)]
    >>> routes, cap = {"a": [0, 1], "b": [0], "c": [1]}, {0: 10.0, 1: 4.0}
    >>> sorted(maxmin(routes, cap, {"a": 0, "b": 1, "c": 0}).items())
    [('a', 0.0), ('b', 10.0), ('c', 4.0)]
    >>> sorted(maxmin(routes, cap, bound={"b": 3.0}).items())
    [('a', 2.0), ('b', 3.0), ('c', 2.0)]
    """
    bound = bound or {}
    if priority:
        rate, left = {}, dict(cap)
        for p in sorted(set(priority.values()), reverse=True):
            cls = {f: r for f, r in routes.items() if priority[f] == p}
            got = maxmin(cls, left, bound={f: bound[f] for f in cls if f in bound})
            for f, r in got.items():
                for link in routes[f]:
                    left[link] = max(left[link] - r, 0.0)
            rate.update(got)
        return rate
    rate = {}
    left = dict(cap)
    unfrozen = set(routes)
    while unfrozen:
        count = {}
        for f in unfrozen:
            for link in routes[f]:
                count[link] = count.get(link, 0) + 1
        share = {link: left[link] / c for link, c in count.items()}
        level = min(list(share.values()) + [bound[f] for f in unfrozen if f in bound])
        tight = {link for link, s in share.items() if s <= level * (1 + 1e-12)}
        frozen = [f for f in unfrozen if any(link in tight for link in routes[f])
                  or bound.get(f, math.inf) <= level * (1 + 1e-12)]
        for f in frozen:
            rate[f] = level
            for link in routes[f]:
                left[link] = max(left[link] - level, 0.0)
        unfrozen.difference_update(frozen)
    return rate


def replay(trace, net, nodes, seconds, progress=None, link_series=False, ecmp=None, seed=0,
           sharing="maxmin", priority=None, bound=None):
    """Replay ``trace`` on ``net``, slowly and plainly; return the engine's :class:`Record`.

    The arguments are those of :func:`netsim.engine.replay.replay`. Each message takes the
    route of its (source, destination, channel), or of its flow's ECMP hash
    (:meth:`~netsim.network.compiled.Network.path_index`).

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
    ecmp, seed : optional
        As for :func:`netsim.engine.replay.replay`.
    sharing : {"maxmin", "priority"}
        Max-min fair sharing, or strict priority between the message classes.
    priority : sequence of int, optional
        Priority of each op (larger = more urgent); the trace's ``priority``
        column by default. Used only with ``sharing="priority"``.
    bound : sequence of float, optional
        The largest rate of each op's flow (bytes/s; inf: none).

    Returns
    -------
    Record
        As :func:`netsim.engine.replay.replay` returns it. Its counters count this
        engine's own work: ``settles`` the instants it stepped through,
        ``rate_solves`` its global max-min solves.

    Raises
    ------
    TraceError
        For a trace with collective ops (its library expands them first, as for the engine).
    DeadlockError
        If some ops can never run.

    Examples
    --------
    Two 1 MB messages into one host over 1 GB/s links with no latency: they share
    the sink's link and both end at 2 ms.

    >>> import networkx as nx
    >>> from netsim import Network, TraceBuilder
    >>> G = nx.Graph()
    >>> for h in "abc":
    ...     G.add_edge(h, "sw", bandwidth=1e9, latency=0.0)
    >>> G.nodes["sw"]["kind"] = "switch"
    >>> for h in "abc":
    ...     G.nodes[h]["kind"] = "host"
    >>> b = TraceBuilder(3); _ = b.message(0, 2, 1e6); _ = b.message(1, 2, 1e6)
    >>> trace, net = b.build(), Network(G)
    >>> rec = replay(trace, net, net.placement(3), trace.compute_seconds())
    >>> rec.end.round(12).tolist(), int(rec.link_peak_flows.max())
    ([0.002, 0.002], 2)
    """
    if trace.num_collectives:
        raise TraceError("the reference engine replays compute ops and messages; a trace with "
                         "collective ops is expanded by its library first (netsim.comm.library)")
    check_sharing(sharing)
    prio = None
    if sharing == "priority":
        prio = [int(x) for x in (trace.priority if priority is None else priority)]
    n = trace.num_ops
    succ = [[] for _ in range(n)]
    waiting = [0] * n
    for op in range(n):
        for d in trace.deps(op).tolist():
            succ[d].append(op)
            waiting[op] += 1
    cap = {k: float(b) for k, b in enumerate(net.bandwidth)}
    start_at, transfer, end = [math.nan] * n, [math.nan] * n, [None] * n
    timers = []  # (time, op): compute end or message latency end
    active = {}  # op -> remaining bytes
    route = {}
    busy = {k: 0.0 for k in cap}
    sat = {k: 0.0 for k in cap}
    peak_util = {k: 0.0 for k in cap}
    peak_flows = {k: 0 for k in cap}
    shown = {}  # link -> its load in the series, while not 0
    series = []  # (time, link, load) of every change of a link's load
    nbytes = {k: 0.0 for k in cap}
    count = {k: 0 for k in cap}
    now = 0.0
    done_ops = 0
    settles = solves = 0

    def start(op):
        start_at[op] = now
        if trace.kind[op] == 1:
            s, d = int(nodes[trace.rank[op]]), int(nodes[trace.peer[op]])
            path = net.path_index(s, d, int(trace.channel[op]), ecmp, seed) if s != d else 0
            route[op] = list(net.route(s, d, path))
            for link in route[op]:
                nbytes[link] += float(trace.size[op])
                count[link] += 1
            lat = sum(float(net.latency[k]) for k in route[op])
            heapq.heappush(timers, (now + lat, op))
        else:
            heapq.heappush(timers, (now + float(seconds[op]), op))

    qprev = trace.queue_predecessors().tolist()
    parked = {}  # a queued message whose latency passed -> waits for the one before it

    def go(op):
        """A message's latency has passed: on the wire, unless its queue holds it."""
        q = qprev[op]
        if q >= 0 and end[q] is None:
            parked[q] = op
            return
        transfer[op] = now
        if trace.size[op] > 0 and route[op]:
            active[op] = float(trace.size[op])
        else:
            finish(op)

    def finish(op):
        nonlocal done_ops
        end[op] = now
        if op in parked:   # the next message of its queue goes now
            go(parked.pop(op))
        done_ops += 1
        if progress is not None:
            progress(done_ops)
        for s in succ[op]:
            waiting[s] -= 1
            if waiting[s] == 0:
                start(s)

    def show(load):
        # A series row for every link whose load differs from the one last shown.
        for link in sorted(set(load) | set(shown)):
            x = load.get(link, 0.0)
            if x != shown.get(link, 0.0):
                series.append((now, link, x))
                if x:
                    shown[link] = x
                else:
                    del shown[link]

    for op in range(n):
        if waiting[op] == 0:
            start(op)
    while timers or active:
        settles += 1
        rates = {}
        if active:
            rates = maxmin({f: route[f] for f in active}, cap,
                           None if prio is None else {f: prio[f] for f in active},
                           None if bound is None else {f: float(bound[f]) for f in active})
            solves += 1
        load, flows = {}, {}
        for f, r in rates.items():
            for link in route[f]:
                load[link] = load.get(link, 0.0) + r
                flows[link] = flows.get(link, 0) + 1
        for link, x in load.items():
            peak_util[link] = max(peak_util[link], x / cap[link])
            peak_flows[link] = max(peak_flows[link], flows[link])
        show(load)
        t_next = min((now + active[f] / rates[f] for f in active if rates[f] > 0),
                     default=math.inf)
        if timers:
            t_next = min(t_next, timers[0][0])
        dt = t_next - now
        for f, r in rates.items():
            active[f] -= r * dt
        for link, x in load.items():
            if x <= 0:
                continue  # crossed only by starved flows of a lower priority class
            busy[link] += dt
            if x >= SAT * cap[link]:
                sat[link] += dt
        now = t_next
        # The engine's rule: done once the predicted end is within 1e-12 * now of now
        # (this also ends a flow whose remaining time underflows at time 0).
        done = [f for f in active
                if rates[f] > 0 and now + active[f] / rates[f] <= now + 1e-12 * now]
        for f in done:
            del active[f]
            finish(f)
        while timers and timers[0][0] <= now:
            _, op = heapq.heappop(timers)
            if trace.kind[op] == 1:
                go(op)
            else:
                finish(op)
    show({})
    stuck = [op for op in range(n) if end[op] is None]
    if stuck:
        raise DeadlockError(f"{len(stuck)} ops can never run: the first is op {stuck[0]}",
                            [{"op": op, "rank": int(trace.rank[op])} for op in stuck[:20]])
    links = range(len(cap))
    return Record(
        start=np.array(start_at), transfer=np.array(transfer), end=np.array(end, float),
        makespan=max(end, default=0.0), nodes=np.asarray(nodes),
        link_bytes=np.array([nbytes[k] for k in links]),
        link_messages=np.array([count[k] for k in links], np.int64),
        link_busy=np.array([busy[k] for k in links]),
        link_saturated=np.array([sat[k] for k in links]),
        link_peak_util=np.array([peak_util[k] for k in links]),
        link_peak_flows=np.array([peak_flows[k] for k in links], np.int64),
        link_series=None if not link_series else {
            "time": np.array([row[0] for row in series], float),
            "link": np.array([row[1] for row in series], np.int64),
            "load": np.array([row[2] for row in series], float)},
        settles=settles, rate_solves=solves)
