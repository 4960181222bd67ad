"""A small packet-level TCP simulator: the independent reference for ``transport="tcp"``.

ns-3 is not installed here, so this is a per-packet, per-ACK simulation written
from the protocol rules, sharing no code with :mod:`netsim.engine.tcp` (it reads only a
trace's columns). It replays a message-level trace (compute ops and messages
with their dependencies, as :mod:`netsim.comm.collectives` builds them) on a star of
hosts around one switch:

* **Links.** Every host has a full-duplex link to the switch of line rate
  ``rate`` (bytes/s) and propagation delay ``delay``. A packet is serialised at
  the line rate and forwarded only once wholly received (store-and-forward).
  Output queues are drop-tail FIFOs large enough never to drop (the loss-free
  runs the comparison is about). A host's own queue sends its pure ACKs before
  its data, as Linux's default ``fq_codel`` queueing discipline serves sparse
  flows first (RFC 8290 sec. 4.1); the switch's ports are plain FIFOs.
* **Framing.** A data segment carries up to ``MSS = MTU - 52`` bytes (IPv4 20,
  TCP 20, timestamps option 12: RFC 791, RFC 9293, RFC 7323) and costs its
  payload + 52 + 38 bytes on the wire (Ethernet preamble 7, SFD 1, MACs 12,
  EtherType 2, FCS 4, inter-frame gap 12: IEEE 802.3); a pure ACK costs 90.
* **TCP (Reno/NewReno slow start without loss).** One connection per (rank,
  peer, channel), opened before the run (no handshake), kept for the whole run.
  A message becoming ready appends its bytes to its connection's byte stream;
  segments are cut at MSS boundaries of the stream and sent as soon as the
  window allows (``TCP_NODELAY``, as collective libraries set it). The window
  starts at 10 segments (RFC 6928) and grows by one segment for every ACK of new
  data (RFC 5681 sec. 3.1, slow start; the threshold is never set without loss).
  The receiver acknowledges every segment at once. A connection that has sent
  nothing for longer than the retransmission timeout (200 ms, Linux's minimum)
  restarts from at most the initial window (RFC 5681 sec. 4.1).
* A message is delivered when its last byte reaches its receiver; a compute op
  takes its duration.

Not modelled, as in the fluid model it checks: loss and retransmission, delayed
ACKs, pacing, the receive window, HyStart, Cubic.

Run ``python benchmarks/tcp_reference.py`` to make the reference data and
compare netsim with it.
"""

import heapq
import math
from collections import deque

import numpy as np

__all__ = ["HEADERS", "ETHERNET", "INITIAL_WINDOW", "RTO", "simulate_packets"]

HEADERS = 20 + 20 + 12          # IPv4 + TCP + timestamps option (RFC 791, 9293, 7323)
ETHERNET = 7 + 1 + 6 + 6 + 2 + 4 + 12  # preamble, SFD, MACs, EtherType, FCS, gap (802.3)
INITIAL_WINDOW = 10             # segments (RFC 6928)
RTO = 0.2                       # s, Linux TCP_RTO_MIN

_ARRIVE, _TX_DONE, _OP_DONE = 0, 1, 2


class _Port:
    """One link direction's output queue: ACKs first at hosts, FIFO at the switch."""

    __slots__ = ("acks", "data", "busy", "to")

    def __init__(self, to):
        self.acks, self.data, self.busy, self.to = deque(), deque(), False, to


def simulate_packets(trace, hosts, rate, delay, mtu, nodes=None):
    """Replay ``trace`` packet by packet on a star of ``hosts`` hosts; each op's end.

    Parameters
    ----------
    trace : netsim.Trace
        Compute ops and messages only (no collective ops).
    hosts : int
        Hosts on the switch; rank ``r`` runs on host ``nodes[r]``.
    rate : float
        Line rate of every link direction, bytes/s.
    delay : float
        Propagation delay of every link, s.
    mtu : int
        IP MTU, bytes.
    nodes : sequence of int, optional
        The host of each rank (default: rank r on host r).

    Returns
    -------
    ndarray of float
        When each op ended (s).

    Examples
    --------
    One 1448-byte segment over two hops of 1.25 GB/s and 1 us: two frames of 1538
    bytes and two delays.

    >>> from netsim import TraceBuilder
    >>> b = TraceBuilder(2); _ = b.message(0, 1, 1448)
    >>> round(float(simulate_packets(b.build(), 2, 1.25e9, 1e-6, 1500)[0]) * 1e6, 4)
    4.4608
    """
    mss = mtu - HEADERS
    ack_wire = HEADERS + ETHERNET
    nodes = list(range(trace.ranks)) if nodes is None else [int(x) for x in nodes]
    n = trace.num_ops
    kind, rank, peer = trace.kind.tolist(), trace.rank.tolist(), trace.peer.tolist()
    chan, size = trace.channel.tolist(), trace.size.tolist()
    dur = trace.compute_seconds().tolist()
    ptr, dep = trace.dep_ptr.tolist(), trace.dep_idx.tolist()
    succ = [[] for _ in range(n)]
    waiting = [0] * n
    for op in range(n):
        for d in dep[ptr[op]:ptr[op + 1]]:
            succ[d].append(op)
            waiting[op] += 1
    end = [math.nan] * n
    # Ports: host h's uplink is port h (to the switch), the switch's port to h is hosts + h.
    up = [_Port(("switch", h)) for h in range(hosts)]
    down = [_Port(("host", h)) for h in range(hosts)]
    conns = {}    # (src, dst, channel) -> connection state
    heap, seq = [], [0]

    def push(t, what, data):
        seq[0] += 1
        heapq.heappush(heap, (t, seq[0], what, data))

    def transmit(port, now):
        if port.busy:
            return
        q = port.acks if port.acks else port.data
        if not q:
            return
        pkt = q.popleft()
        port.busy = True
        push(now + pkt[0] / rate, _TX_DONE, (port, pkt))

    def enqueue(port, pkt, now, ack):
        (port.acks if ack else port.data).append(pkt)
        transmit(port, now)

    def conn_of(key):
        c = conns.get(key)
        if c is None:
            # stream: bytes written; nxt: next byte to send; sent/acked: segments;
            # msgs: (end offset, op) in stream order; got: bytes received in order.
            c = conns[key] = {"stream": 0.0, "nxt": 0.0, "cwnd": INITIAL_WINDOW, "inflight": 0,
                              "last_send": -math.inf, "msgs": deque(), "got": 0.0}
        return c

    def send(key, now):
        c = conns[key]
        src, dst, _ = key
        if (c["inflight"] == 0 and c["nxt"] < c["stream"]
                and now - c["last_send"] > RTO):  # restart after idle (RFC 5681 sec. 4.1)
            c["cwnd"] = min(c["cwnd"], INITIAL_WINDOW)
        while c["inflight"] < c["cwnd"] and c["nxt"] < c["stream"]:
            # Cut at the next MSS boundary of the stream, or where the written bytes end.
            stop = min((math.floor(c["nxt"] / mss) + 1) * mss, c["stream"])
            payload = stop - c["nxt"]
            c["nxt"] = stop
            c["inflight"] += 1
            c["last_send"] = now
            enqueue(up[nodes[src]], (payload + HEADERS + ETHERNET, "data", key, stop), now, False)

    def start(op, now):
        if kind[op] == 1:
            s, d = nodes[rank[op]], nodes[peer[op]]
            if s == d or size[op] == 0:
                push(now, _OP_DONE, op)
                return
            key = (rank[op], peer[op], chan[op])
            c = conn_of(key)
            c["stream"] += size[op]
            c["msgs"].append((c["stream"], op))
            send(key, now)
        else:
            push(now + dur[op], _OP_DONE, op)

    def done(op, now):
        end[op] = now
        for s in succ[op]:
            waiting[s] -= 1
            if waiting[s] == 0:
                start(s, now)

    for op in range(n):
        if waiting[op] == 0:
            start(op, 0.0)
    while heap:
        now, _, what, data = heapq.heappop(heap)
        if what == _OP_DONE:
            done(data, now)
        elif what == _TX_DONE:
            port, pkt = data
            port.busy = False
            push(now + delay, _ARRIVE, (port.to, pkt))
            transmit(port, now)
        else:
            (where, h), pkt = data
            _, typ, key, offset = pkt
            if where == "switch":  # forward on the port to the packet's host
                target = nodes[key[1]] if typ == "data" else nodes[key[0]]
                enqueue(down[target], pkt, now, False)
            elif typ == "data":    # the receiver: deliver, then acknowledge at once
                c = conns[key]
                c["got"] = offset
                while c["msgs"] and c["msgs"][0][0] <= offset:
                    done(c["msgs"].popleft()[1], now)
                enqueue(up[h], (ack_wire, "ack", key, offset), now, True)
            else:                  # the sender: one segment acknowledged
                c = conns[key]
                c["inflight"] -= 1
                c["cwnd"] += 1     # slow start: one segment per ACK of new data
                send(key, now)
    return np.array(end)
