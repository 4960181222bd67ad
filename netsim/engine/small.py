"""The small-event path: an instant of a few ops in plain Python.

An instant that ends or starts at most ``small_event`` ops and flows runs here
rather than in compiled loops over the batch (:mod:`netsim.engine.replay`), bit-identical
to the batch path. :func:`advance_small` is its general form: every feature of the engine
(send queues, TCP's start-up, priority classes, rate bounds, link series, progress); the
engine calls it from its settle step, then re-rates through
:meth:`netsim.engine.flows.FlowTable.rerate`. The usual desynchronised instants of the
plain configuration (a compute op ends; a message goes on the wire alone on its links; a
flow ends and empties its links) have a *fused* form, :mod:`netsim.engine.fused`, which
runs each in one pass from the engine's queue and falls back to this one for anything
else; :func:`at_times` and :func:`route` serve both.

It reads the replay's columns by name (:mod:`netsim.engine.views`: the replay's
``views``) and schedules through the replay's ``_at``. Why each path exists and what
each may touch: ``docs/engine-design.md``.
"""

import numpy as np

from netsim.engine import transport as _transport

__all__ = ["FINISH_RTOL", "advance_small", "route"]

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
