"""The engine's side of per-flow rate bounds and of TCP's start-up (:mod:`netsim.engine.tcp`).

Plain functions over the engine's replay state (:mod:`netsim.engine.replay`): checking
a replay's static bounds, putting messages on the wire through their TCP
connections, and the round-trip instants at which a flow in slow start gets its
next bound. An instant's round-trip ticks are settled with everything else that
happens then: the flows that ended first, then the new bounds, then one rate
recomputation over the flows connected to any of them.
"""

import numpy as np

from netsim.errors import NetsimError
from netsim.engine.tcp import Tcp, path_timing

__all__ = ["check_bound", "enter", "retick", "setup", "tick_at"]


def check_bound(bound, trace):
    """``bound`` as one float per op of ``trace``, checked (None stays None).

    Raises
    ------
    NetsimError
        For a shape other than one per op, or a rate that is not > 0.

    Examples
    --------
    >>> from netsim import TraceBuilder
    >>> b = TraceBuilder(2); _ = b.message(0, 1, 1e6)
    >>> check_bound([5e8], b.build()).tolist()
    [500000000.0]
    >>> check_bound([0.0], b.build())
    Traceback (most recent call last):
    ...
    netsim.errors.NetsimError: bound of op 0 is 0.0: a rate must be > 0 bytes/s (inf for none)
    """
    if bound is None:
        return None
    b = np.asarray(bound, np.float64)
    if b.shape != (trace.num_ops,):
        raise NetsimError(f"bound needs one rate per op ({trace.num_ops}), got shape {b.shape}")
    bad = np.flatnonzero(~(b > 0))
    if len(bad):
        raise NetsimError(f"bound of op {int(bad[0])} is {float(b[bad[0]])!r}: a rate must be "
                          f"> 0 bytes/s (inf for none)")
    return b


def setup(rp, net, options):
    """Give replay ``rp`` its TCP connections; the path latencies grow by store-and-forward.

    The first segment, serialised on every hop but the bottleneck, is a full MSS for a message
    of at least one MSS; a smaller message is one segment of its own size, and a message of no
    bytes sends none. Such messages get a route of their own (the same links, the latency of
    their first segment), inserted before the last route, the empty one of compute ops.
    """
    mss, rtt, handshake, store = path_timing(net, rp.pair_links, options["mtu"])
    lat = rp.pair_lat + store
    msg = np.flatnonzero(rp.is_msg)
    route = rp.op_pair[msg]
    first = np.minimum(rp.trace.size[msg], mss[route])
    short = first < mss[route]
    if short.any():
        keys, inv = np.unique(np.column_stack([route[short].astype(np.float64), first[short]]),
                              axis=0, return_inverse=True)
        new = keys[:, 0].astype(np.int64)
        own = path_timing(net, rp.pair_links[new], options["mtu"], first=keys[:, 1])[3]
        n = len(lat) - 1
        rows = np.concatenate([np.arange(n), new, [n]])
        lat = np.concatenate([lat[:n], rp.pair_lat[new] + own, lat[n:]])
        rp.pair_links, rp.pair_empty = rp.pair_links[rows], rp.pair_empty[rows]
        mss, rtt, handshake = mss[rows], rtt[rows], handshake[rows]
        store = np.concatenate([store[:n], own, store[n:]])
        rp.op_pair[msg[short]] = n + inv.ravel()
    rp.pair_lat = lat
    timing = (mss, rtt, handshake, store)
    rp.tcp, rp.ticking = Tcp(rp.trace, rp.op_pair, timing, options), []


def enter(rp, ops, bound):
    """The messages of ``ops`` whose first byte flows now, with their bounds.

    A message whose connection is still shaking hands comes back when it is
    open; one in slow start gets its first round-trip instant. ``bound`` is each
    op's own bound (the replay's ``bound``), which the window's only lowers.
    """
    go, when, tcp_bound, rtt = rp.tcp.enter_many(ops, rp.now)
    for op, t in zip(ops[~go].tolist(), when.tolist()):
        rp._at(t, [op])
    ops = ops[go]
    timed = rtt == rtt
    for op, r in zip(ops[timed].tolist(), rtt[timed].tolist()):
        tick_at(rp, rp.now + r, op)
    return ops, np.minimum(bound[go], tcp_bound)


def tick_at(rp, t, op):
    """Run message ``op``'s round-trip instant at exact time ``t`` (a call of the queue)."""
    rp.env.call_later(t - rp.now, (t, op), lambda item: _tick(rp, item))


def _tick(rp, item):
    """A round-trip instant ran: note the message, have the instant settled."""
    t, op = item
    rp.ticking.append(op)
    rp._note((t, []))


def retick(rp):
    """Give the messages at this round-trip instant their next bounds; their flow slots.

    A message delivered already is skipped; one that left slow start gets no
    further instant.
    """
    tcp, flows, now = rp.tcp, rp.flows, rp.now
    ops, rp.ticking = sorted(rp.ticking), []
    slots = []
    for op in ops:
        slot = tcp.slot_of.get(op)
        if slot is None:
            continue
        left = max(float(flows.fl_rem[slot] - flows.fl_rate[slot] * (now - flows.fl_t[slot])),
                   0.0)
        b, rtt = tcp.tick(op, left)
        if rp.bound is not None:
            b = min(b, float(rp.bound[op]))
        flows.set_bound(slot, b)
        slots.append(slot)
        if rtt is None:
            del tcp.slot_of[op]
        else:
            tick_at(rp, now + rtt, op)
    return slots
