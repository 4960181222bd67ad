"""The replay's state as named records: memoryviews of its op, link and flow columns.

The plain-Python paths of the engine (:mod:`netsim.engine.small`, the incremental path of
:mod:`netsim.engine.flows`) read and write single values of the replay's numpy columns.
Memoryviews of the columns give plain Python floats and ints at about half numpy's cost
per element, on the same memory: every column is updated in place, never replaced (but
the flow columns, which :class:`~netsim.engine.flows.FlowTable` renews with their views
when it grows its slots).

Three groups, each one :class:`~typing.NamedTuple` built here, in one function:

* :class:`OpViews`, per op (and per route for ``pair_lat``): the replay's
  (:mod:`netsim.engine.replay`) ``_Replay.views``;
* :class:`LinkViews`, per link direction: :attr:`FlowTable.link_views`;
* :class:`FlowViews`, per flow slot: :attr:`FlowTable.flow_views`;
* :class:`TcpViews`, per op, route and connection: ``Tcp.views`` (:mod:`netsim.engine.tcp`),
  with ``transport="tcp"``.

Each field is named as the column it views. A hot function reads a record by unpacking
it into locals once per call (one attribute load and one unpack, as a plain tuple costs),
with locals named as the fields and ``_`` for the fields it skips, so that a reader sees
which column each local is; ``tests/test_engine_state_by_name.py`` holds every unpacking
in the engine to the fields' names and order, so reordering a record fails there rather
than silently elsewhere.
"""

from typing import NamedTuple

import numpy as np

__all__ = ["FlowViews", "LinkViews", "OpViews", "TcpViews", "flow_views", "link_views",
           "op_views", "tcp_views"]


class OpViews(NamedTuple):
    """Per-op columns of a replay (``succ_ptr`` has one more entry, ``pair_lat`` is per route)."""

    is_msg: memoryview    # bool: a message (else a compute op)
    op_pair: memoryview   # int64: its route (-1, the empty route, for compute ops)
    pair_lat: memoryview  # float64, per route: the path latency
    dur: memoryview       # float64: a compute op's duration
    size: memoryview      # float64: a message's bytes
    start: memoryview     # float64: when it was ready (NaN before)
    end: memoryview       # float64: when it ended (NaN before)
    xfer: memoryview      # float64: when its first byte left (NaN before, and for compute ops)
    succ_ptr: memoryview  # int64: CSR offsets of its successors
    succ: memoryview      # int32 or int64: the successors
    waiting: memoryview   # int32 or int64: the ops it still waits for
    priority: memoryview  # int64: its priority class (one 0 if none)
    bound: memoryview     # float64: its flow's rate bound (one inf if none)


class LinkViews(NamedTuple):
    """Per-link-direction columns of a :class:`~netsim.engine.flows.FlowTable`, pad included."""

    cap: memoryview         # float64: capacity (bytes/s; inf for the pad)
    load: memoryview        # float64: the sum of its flows' rates
    link_t: memoryview      # float64: when its statistics were last brought up to date
    busy: memoryview        # float64: seconds with a load
    saturated: memoryview   # float64: seconds at >= SATURATION of capacity
    peak_util: memoryview   # float64: largest load / capacity
    peak_flows: memoryview  # int64: most flows at once
    full: memoryview        # float64: SATURATION * cap, the load from which it is saturated


class FlowViews(NamedTuple):
    """Per-slot columns of a :class:`~netsim.engine.flows.FlowTable`."""

    fl_active: memoryview  # bool: the slot holds a flow
    fl_op: memoryview      # int64: the flow's op
    fl_prio: memoryview    # int64: its priority class
    fl_rem: memoryview     # float64: bytes left at fl_t
    fl_t: memoryview       # float64: when fl_rem was last brought up to date
    fl_rate: memoryview    # float64: its rate (bytes/s)
    fl_finish: memoryview  # float64: its predicted end (inf if none)


class TcpViews(NamedTuple):
    """Per-op, per-route and per-connection columns of TCP's start-up (:mod:`netsim.engine.tcp`)."""

    conn: memoryview           # int64, per op: its connection
    route: memoryview          # int64, per op: its route
    size: memoryview           # float64, per op: its bytes
    mss: memoryview            # float64, per route: the segment size
    rtt: memoryview            # float64, per route: the round trip
    handshake_rtt: memoryview  # float64, per route: the handshake's round trip
    cwnd: memoryview           # float64, per connection: the window (segments; inf: left slow start)
    last: memoryview           # float64, per connection: when it last delivered a message
    busy: memoryview           # int64, per connection: its messages on the wire
    opened: memoryview         # float64, per connection: when it is open (NaN: not yet asked)


def op_views(rp):
    """The :class:`OpViews` of replay ``rp`` (:mod:`netsim.engine.replay`'s ``_Replay``)."""
    return OpViews(
        is_msg=memoryview(rp.is_msg), op_pair=memoryview(rp.op_pair),
        pair_lat=memoryview(rp.pair_lat), dur=memoryview(rp.dur), size=memoryview(rp.size),
        start=memoryview(rp.start), end=memoryview(rp.end), xfer=memoryview(rp.xfer),
        succ_ptr=memoryview(rp.succ_ptr), succ=memoryview(rp.succ),
        waiting=memoryview(rp.waiting),
        priority=memoryview(np.zeros(1, np.int64) if rp.priority is None else rp.priority),
        bound=memoryview(np.full(1, np.inf) if rp.bound is None else rp.bound))


def link_views(table, full):
    """The :class:`LinkViews` of flow table ``table``; ``full`` is SATURATION * its capacities."""
    return LinkViews(
        cap=memoryview(table.cap), load=memoryview(table.load), link_t=memoryview(table.link_t),
        busy=memoryview(table.busy), saturated=memoryview(table.saturated),
        peak_util=memoryview(table.peak_util), peak_flows=memoryview(table.peak_flows),
        full=memoryview(full))


def flow_views(table):
    """The :class:`FlowViews` of flow table ``table``'s current slot columns."""
    return FlowViews(
        fl_active=memoryview(table.fl_active), fl_op=memoryview(table.fl_op),
        fl_prio=memoryview(table.fl_prio), fl_rem=memoryview(table.fl_rem),
        fl_t=memoryview(table.fl_t), fl_rate=memoryview(table.fl_rate),
        fl_finish=memoryview(table.fl_finish))


def tcp_views(tcp):
    """The :class:`TcpViews` of TCP state ``tcp`` (:class:`netsim.engine.tcp.Tcp`)."""
    return TcpViews(
        conn=memoryview(tcp.conn), route=memoryview(tcp.route), size=memoryview(tcp.size),
        mss=memoryview(tcp.mss), rtt=memoryview(tcp.rtt),
        handshake_rtt=memoryview(tcp.handshake_rtt), cwnd=memoryview(tcp.cwnd),
        last=memoryview(tcp.last), busy=memoryview(tcp.busy), opened=memoryview(tcp.opened))
