"""The small-event path: an instant of a few ops in plain Python, and its fused form.

An instant that ends or starts at most ``small_event`` ops and flows runs here
rather than in compiled loops over the batch (:mod:`netsim.engine.replay`). Two forms,
bit-identical to each other and to the batch path:

* :func:`advance_small`, the general one: every feature of the engine (send
  queues, TCP's start-up, priority classes, rate bounds, link series, progress);
  the engine calls it from its settle step, then re-rates through
  :meth:`netsim.engine.flows.FlowTable.rerate`.
* :func:`plain_callbacks`, the *fused* one, for the plain configuration (none of
  those features but the link series): the callbacks of the engine's two kinds of
  call (ops due at an exact time, the network's wake-up) that run the usual
  desynchronised instant in one pass, without the layers of the general path. It
  handles three instants: a compute op ends and releases ops that wait a time;
  a message's latency ends and it goes on the wire alone on its links; a flow
  ends, its links become empty and what it releases waits a time. Anything else
  (several ops or flows at one instant, an op that waits nothing, a flow sharing
  a link, a stale heap after a batch, a settle step pending at this instant) it
  hands to the general path before changing any state (but the clock, which the
  general path's clamp sets to the same value), or, once a wake-up has ended its
  flows, to the engine's ``_Replay._proceed`` with what it popped.

The fused form does the same float operations in the same order as the general
one (the same clock and clamp, the same rate as the smallest capacity, the same
load accounting, the same calls made in the same order with the same times), so
every time, statistic, counter and call is the same; the tests replay the same
cases both ways and compare bit for bit. For speed, a call it makes goes straight
onto the environment's heap (:class:`~netsim.engine.environment.ReplayEnvironment`:
an entry ``(env.now + delay, next(env.ids), callback, value)``, what ``call_later``
pushes, without its checks: its callbacks run inside the environment's drain, and
every delay they make is at least 0).

Both forms read the replay's columns by name (:mod:`netsim.engine.views`: the replay's
``views``, the flow table's ``link_views`` and ``flow_views``). Why each path exists
and what each may touch: ``docs/engine-design.md``.
"""

import heapq
import math

import numpy as np

from netsim.engine import transport as _transport

__all__ = ["FINISH_RTOL", "advance_small", "plain_callbacks", "route"]

#: A flow counts as finished once its predicted end is within ``FINISH_RTOL * t`` of the
#: current time ``t`` (see :mod:`netsim.engine.replay`).
FINISH_RTOL = 1e-12


def advance_small(rp, due, ended):
    """The engine's ``_Replay._advance_batch`` for a few ops, in plain Python, in the same order.

    ``rp`` is the replay (:mod:`netsim.engine.replay`'s state).
    ``ended`` is a list of ops. Returns the flow slots of the messages that began
    transferring and their routes (links without padding), as lists.
    """
    now, flows, route_of = rp.now, rp.flows, rp._route_of
    (is_msg, op_pair, pair_lat, dur, size, start, end, xfer, succ_ptr, succ, waiting,
     priority, bound) = rp.views
    tcp, unbound = rp.tcp, rp.bound is None
    one_class = rp.priority is None
    qprev = rp.qprev
    completed, entering = list(ended), []
    for ops in due:
        for op in (ops if type(ops) is list else ops.tolist()):
            (entering if is_msg[op] else completed).append(op)
    added, routes = [], []
    while completed or entering:
        if entering:
            ops, entering = entering, []
            for op in ops:
                if qprev is not None:   # held until the one before it is delivered
                    q = int(qprev[op])
                    if q >= 0 and end[q] != end[q]:
                        rp.parked[q] = op
                        continue
                xfer[op] = now
                pair = op_pair[op]
                known = route_of.get(pair) or route(rp, pair)
                if size[op] == 0 or known[2]:
                    completed.append(op)  # instant on the wire
                else:  # on the wire, in the lowest free slot
                    prio = 0 if one_class else priority[op]
                    b = np.inf if unbound else bound[op]
                    rtt = None
                    if tcp is not None:
                        later, tb, rtt = tcp.enter(op, now)
                        if later is not None:  # still shaking hands
                            rp._at(later, [op])
                            continue
                        b = min(b, tb)
                    slot = flows.add_one(op, size[op], known[0], prio, b)
                    added.append(slot)
                    routes.append(known[1])
                    if rtt is not None:
                        tcp.slot_of[op] = slot
                        _transport.tick_at(rp, now + rtt, op)
        if not completed:
            continue
        done, completed = completed, []
        for op in done:
            end[op] = now
        if rp.parked:
            for op in done:
                if op in rp.parked:
                    entering.append(rp.parked.pop(op))
        if rp.progress is not None:
            rp.done += len(done)
            rp.progress(rp.done)
        # _release_small, inlined for speed: count done off their successors' waits.
        ready = []
        for op in done:
            for i in range(succ_ptr[op], succ_ptr[op + 1]):
                s = succ[i]
                waiting[s] -= 1
                if waiting[s] == 0:
                    ready.append(s)
        ready.sort()
        timed = []
        for op in ready:
            start[op] = now
            msg = is_msg[op]
            wait = pair_lat[op_pair[op]] if msg else dur[op]  # as _wait
            if wait == 0:
                (entering if msg else completed).append(op)
            else:
                timed.append((now + wait, op))
        at_times(rp, timed)
    return added, routes


def at_times(rp, timed):
    """The engine's ``_Replay._schedule`` for the small path: ``timed`` are ``(time, op)``
    pairs; one ``_Replay._at`` per distinct time, ascending, its ops in the order given."""
    if len(timed) == 1:  # the usual desynchronised case: one op, one time
        rp._at(timed[0][0], [timed[0][1]])
    elif timed:
        later = {}
        for t, op in timed:
            later.setdefault(t, []).append(op)
        for t in sorted(later):
            rp._at(t, later[t])


def route(rp, pair):
    """Route ``pair``'s padded link row, its links without padding and whether it
    crosses no link (as the batch path tests it), cached."""
    row = rp.pair_links[pair]
    links = row.tolist()
    known = rp._route_of[pair] = (row, tuple(k for k in links if k != rp.L),
                                   links[0] == rp.L)
    return known


def plain_callbacks(rp):
    """The fused instants of replay ``rp``: its calls ``(on_due, on_wake)``.

    ``on_due`` runs a call of the engine's ``_Replay._at``, whose value is the exact
    time and the lists of ops due then; ``on_wake`` the network's wake-up, whose value
    is its token and exact time. Each runs the usual instant itself, as the general
    path would (see the module docstring), and hands anything else to ``rp._due`` /
    ``rp._wake`` / ``rp._instant``, or, after a wake-up popped its flows, to
    ``rp._proceed``. Only for the plain configuration: no TCP, priority classes, rate
    bounds, send queues or progress.

    Parameters
    ----------
    rp : netsim.engine.replay._Replay
        The replay's state, with its flow table, views and event queue set up.

    Returns
    -------
    tuple of callable
        ``(on_due, on_wake)``.

    Examples
    --------
    The same replay with and without the fused instants, bit for bit:

    >>> import networkx as nx
    >>> import netsim
    >>> from netsim import Network, TraceBuilder
    >>> G = nx.star_graph(2)
    >>> nx.set_node_attributes(G, "host", "kind"); G.nodes[0]["kind"] = "switch"
    >>> nx.set_edge_attributes(G, 1e9, "bandwidth"); nx.set_edge_attributes(G, 1e-6, "latency")
    >>> b = TraceBuilder(2)
    >>> gap = b.compute(0, 1e-3); m = b.message(0, 1, 1e6, deps=[gap])
    >>> trace, net = b.build(), Network(G)
    >>> runs = [netsim.engine.replay.replay(trace, net, net.placement(2), trace.compute_seconds(), fused=f)
    ...         for f in (True, False)]
    >>> runs[0].end.tolist() == runs[1].end.tolist(), runs[0].settles == runs[1].settles
    (True, True)
    """
    env, flows, pending = rp.env, rp.flows, rp.pending
    (is_msg, op_pair, pair_lat, dur, size, start, end, xfer, succ_ptr, succ, waiting,
     _, _) = rp.views
    cap, load, link_t, busy, saturated, peak_util, peak_flows, full = flows.link_views
    general_due, general_wake, proceed, instant = rp._due, rp._wake, rp._proceed, rp._instant
    later_than_now, calls, ids = env.later_than_now, env.calls, env.ids
    heappush, heappop, inf = heapq.heappush, heapq.heappop, math.inf
    lone = {}  # route -> (padded row, links, sorted links), or None: empty or a link twice
    links_of = [None, None]  # FlowTable.fl_links and a flat memoryview of it
    track = flows.series is not None
    order = {}  # a route's links -> its distinct links, ascending

    def alone(pair):
        """What a lone flow on route ``pair`` needs, or None if the route crosses no link
        or a link twice: its padded row (a memoryview), its links, its distinct links
        ascending each with its utilisation at the flow's rate, the rate (the smallest
        capacity of its links, as FlowTable.rerate's lone flow) and the load it puts on
        each link (as _set_loads adds it)."""
        row, links, empty = rp._route_of.get(pair) or route(rp, pair)
        if empty or len(set(links)) != len(links):
            return None
        r = min(map(cap.__getitem__, links))
        y = 0.0 + r
        return memoryview(row), links, [(k, y / cap[k]) for k in sorted(links)], r, y

    def at(t, ops, now, clock):
        """:meth:`_Replay._at`: ``ops`` due at exact time ``t``, joining its call if any."""
        lists = pending.get(t)
        if lists is None:
            lists = pending[t] = [ops]
            heappush(calls, (clock + (t - now), next(ids), on_due, (t, lists)))
        else:
            lists.append(ops)

    def release(op, now, clock):
        """Count ``op`` off its successors' waits and schedule the ops it makes ready, if
        each waits a time (True); otherwise change nothing (False), as the general path
        runs an op that waits nothing at once."""
        lo, hi = succ_ptr[op], succ_ptr[op + 1]
        if hi - lo == 1:  # a compute op's message, a message in a chain
            s = succ[lo]
            w = waiting[s]
            if w != 1:
                waiting[s] = w - 1
                return True
            wait = pair_lat[op_pair[s]] if is_msg[s] else dur[s]
            if not wait > 0:
                return False  # waits nothing (or a NaN or negative wait: the general path's)
            waiting[s] = 0
            start[s] = now
            t = now + wait
            lists = pending.get(t)  # at(), written out
            if lists is None:
                lists = pending[t] = [[s]]
                heappush(calls, (clock + (t - now), next(ids), on_due, (t, lists)))
            else:
                lists.append([s])
            return True
        if hi - lo == 2:  # a message in a ring: its sender's next op and its receiver's
            a, b = succ[lo], succ[lo + 1]
            if b < a:
                a, b = b, a  # ready ops ascending, as the general path sorts them
            wa, wb = waiting[a], waiting[b]
            if a != b and wa != 1 and wb != 1:
                waiting[a] = wa - 1
                waiting[b] = wb - 1
                return True
            if a != b:
                ta = tb = 1.0
                if wa == 1:
                    ta = pair_lat[op_pair[a]] if is_msg[a] else dur[a]
                if wb == 1:
                    tb = pair_lat[op_pair[b]] if is_msg[b] else dur[b]
                if not (ta > 0 and tb > 0):
                    return False  # waits nothing (or NaN, negative: the general path's)
                waiting[a] = wa - 1
                waiting[b] = wb - 1
                if wa != 1:
                    start[b] = now
                    at(now + tb, [b], now, clock)
                elif wb != 1:
                    start[a] = now
                    at(now + ta, [a], now, clock)
                else:  # both: grouped by time, ascending
                    start[a] = start[b] = now
                    ta, tb = now + ta, now + tb
                    if ta == tb:
                        at(ta, [a, b], now, clock)
                    elif ta < tb:
                        at(ta, [a], now, clock)
                        at(tb, [b], now, clock)
                    else:
                        at(tb, [b], now, clock)
                        at(ta, [a], now, clock)
                return True
        after = [succ[i] for i in range(lo, hi)]
        if len(set(after)) != len(after):
            return False  # an op listed twice among the waits of another
        ready = sorted(s for s in after if waiting[s] == 1)
        timed = []
        for s in ready:
            wait = pair_lat[op_pair[s]] if is_msg[s] else dur[s]
            if wait == 0:
                return False
            timed.append((now + wait, s))
        for s in after:
            waiting[s] -= 1
        for s in ready:
            start[s] = now
        at_times(rp, timed)
        return True

    def set_loads(changed, now, y):
        """FlowTable._set_loads for the links of ``changed``, ``(link, utilisation)`` pairs in
        ascending order, that each now carry one flow at load ``y`` with that utilisation,
        or none (``y`` 0.0, utilisation None)."""
        moved = [] if track else None
        for k, util in changed:  # accounted to now at the old load, then the new one
            dt = now - link_t[k]
            x = load[k]
            if x > 0:
                busy[k] += dt
            if x >= full[k]:
                saturated[k] += dt
            link_t[k] = now
            load[k] = y
            if util is not None:  # a load and one flow: the peaks (util: y / cap[k])
                if 1 > peak_flows[k]:
                    peak_flows[k] = 1
                if util > peak_util[k]:
                    peak_util[k] = util
            if track and y != x:
                moved.append(k)
        if moved:  # the series' chunk, as _set_loads appends it
            flows.series.append((np.full(len(moved), now), np.array(moved, np.int64),
                                 np.full(len(moved), y)))

    def wake(now, clock):
        """The heap's first valid end as FlowTable.rerate finds it, then the wake-up for it
        as the end of the engine's instant sets it."""
        ends, end_of = flows.ends, flows.end_of
        if ends is None:  # (a batch re-rate left no heap: it set first_finish)
            nxt = flows.first_finish
        else:
            while ends and end_of.get(ends[0][1]) != ends[0][0]:
                heappop(ends)  # stale: the flow was re-rated or has ended
            flows.first_finish = nxt = ends[0][0] if ends else inf
        if nxt < inf and nxt != rp.wake_time:
            rp.wake_token = token = rp.wake_token + 1
            rp.wake_time = nxt
            delay = nxt - now
            if 0.0 > delay:  # max(delay, 0.0) without the call
                delay = 0.0
            heappush(calls, (clock + delay, next(ids), on_wake, (token, nxt)))

    def on_due(item):
        t, lists = item
        # Nothing else due now (as _Replay._note tests it, then calls _instant) and one list
        if rp.settling or not later_than_now() or len(lists) != 1:
            return general_due(item)
        del pending[t]  # (first: an op released now may be due at t again, in a new call)
        ops = lists[0]
        if len(ops) != 1:
            return instant(t, lists)
        op = ops[0] if type(ops) is list else int(ops[0])  # an array from the batch path
        now = rp.now if rp.now > t else t  # the engine's clamp
        if not now + FINISH_RTOL * now < flows.first_finish:
            return instant(t, lists)  # a flow ends now too
        # (the clock may move before a fallback: the general path's clamp finds the same now)
        rp.now = flows.now = now
        clock = env.now
        if not is_msg[op]:  # a compute op ends
            if not release(op, now, clock):
                return instant(t, lists)
            rp.settles += 1
            end[op] = now
            nxt = flows.first_finish  # no flow changed: the wake-up stays unless it was inf
            if nxt < inf and nxt != rp.wake_time:
                wake(now, clock)
            return None
        pair = op_pair[op]
        known = lone.get(pair, False)
        if known is False:
            known = lone[pair] = alone(pair)
        on_link, free, sz = flows.on_link, flows._free, size[op]
        ends = flows.ends
        if known is None or sz == 0 or on_link is None or not free or ends is None:
            return instant(t, lists)
        row, links, changed, r, y = known
        for k in links:
            if on_link[k]:
                return instant(t, lists)  # shares a link: the general re-rate
        # A message goes on the wire alone on its links: FlowTable.add_one, then rerate's
        # lone flow (its smallest capacity) and _set_loads' one flow per link.
        rp.settles += 1
        xfer[op] = now
        slot = heappop(free)
        flows._lists = None  # the batch path's lists: rebuilt when next needed
        fl_active, fl_op, _, fl_rem, fl_t, fl_rate, fl_finish = flows.flow_views
        fl_active[slot] = True
        fl_op[slot] = op  # (its priority class is 0 and its bound inf: plain configuration)
        if links_of[0] is not flows.fl_links:  # replaced when the slots grow
            links_of[:] = flows.fl_links, memoryview(flows.fl_links.reshape(-1))
        hops = len(row)
        links_of[1][slot * hops:slot * hops + hops] = row  # fl_links[slot] = row
        flows.route[slot] = links
        for k in links:
            on_link[k].add(slot)
        flows.rate_solves += 1  # (its rate r: the smallest capacity of its links)
        rem = sz - 0.0 * (now - now)  # _set_rate on the flow add_one just filled
        if rem < 0.0:
            rem = 0.0
        fl_rem[slot] = rem
        fl_t[slot] = now
        fl_rate[slot] = r
        fl_finish[slot] = e = now + rem / r if r > 0 else inf
        end_of = flows.end_of
        end_of[slot] = e
        heappush(ends, (e, slot))
        set_loads(changed, now, y)
        wake(now, clock)
        return None

    def on_wake(item):
        token, t = item
        if token != rp.wake_token:
            return None
        ends = flows.ends  # then as on_due
        if rp.settling or not later_than_now() or ends is None or flows.on_link is None:
            return general_wake(item)
        now = rp.now if rp.now > t else t
        limit = now + FINISH_RTOL * now
        if limit < flows.first_finish:
            return general_wake(item)
        rp.wake_time = inf
        rp.settles += 1
        rp.now = flows.now = now
        clock = env.now
        # FlowTable.pop_few, with its heap current
        finished, end_of = [], flows.end_of
        while ends and ends[0][0] <= limit:
            te, slot = heappop(ends)
            if end_of.get(slot) == te:
                del end_of[slot]
                finished.append(slot)
        flows._lists = None  # (finished is never empty: limit >= first_finish)
        route_map, free = flows.route, flows._free
        fl_active, fl_op, _, _, _, fl_rate, fl_finish = flows.flow_views
        if len(finished) != 1:  # pop_few's lists, for the general path
            finished.sort()
            ended, removed = [], []
            for slot in finished:
                ended.append(fl_op[slot])
                removed.extend(route_map[slot])
                fl_active[slot] = False
                fl_finish[slot] = inf
                fl_rate[slot] = 0.0
                if free is not None:
                    heappush(free, slot)
            return proceed((), ended, finished, removed)
        slot = finished[0]
        op, links = fl_op[slot], route_map[slot]
        fl_active[slot] = False
        fl_finish[slot] = inf
        fl_rate[slot] = 0.0
        if free is not None:
            heappush(free, slot)
        if not release(op, now, clock):
            return proceed((), [op], finished, list(links))
        end[op] = now
        on_link = flows.on_link
        for k in links:
            if len(on_link[k]) != 1:  # others stay on its links: the general re-rate
                flows.rerate([], finished, list(links), [])
                return wake(now, clock)
        # FlowTable.rerate's lone finished flow: no rate to solve, its links' loads to 0.
        del route_map[slot]
        for k in links:
            on_link[k].discard(slot)
        changed = order.get(links)
        if changed is None:
            changed = order[links] = [(k, None) for k in sorted(set(links))]
        set_loads(changed, now, 0.0)
        return wake(now, clock)

    return on_due, on_wake
