"""TCP's start-up as a time-varying per-flow rate bound: slow start, store-and-forward, handshake.

With ``transport="tcp"`` (:func:`netsim.simulate`) each message is a TCP transfer
over its path; ``"fluid"`` (the default) is the plain flow model. The rules, each
from its source:

* **Segments.** The path MTU is the least ``mtu`` of the path's edges (the
  topology builders write it with ``efficiency``; 1500 bytes, RFC 894, where an
  edge has none). The MSS is the MTU less the IPv4 (20), TCP (20) and timestamps
  option (12) headers (RFC 791, RFC 9293, RFC 7323; Linux sends timestamps by
  default, ``net.ipv4.tcp_timestamps=1``). On a link of payload efficiency ``e``
  a frame costs ``MSS / e`` bytes of line rate, so a frame's overhead (headers,
  Ethernet framing and gap) is ``MSS / e - MSS``, which is also a pure ACK's size.
* **Round trip.** ``rtt`` is a full segment's serialisation, one way, plus an
  ACK's, back, on every hop (store-and-forward), plus twice the path latency.
* **Store-and-forward of the first segment.** Before the first byte flows at the
  bottleneck's rate, the first segment is serialised on every hop but the
  bottleneck: the message's latency grows by that much. The first segment is a
  full MSS, or the whole message when it is smaller (one segment of its own size,
  with the same headers and framing); a message of no bytes sends no segment.
* **Slow start** (RFC 5681 sec. 3.1): the congestion window starts at the
  initial window of 10 segments (RFC 6928; Linux ``TCP_INIT_CWND``,
  include/net/tcp.h) and grows by one segment per segment acknowledged
  (appropriate byte counting, RFC 3465; Linux ``tcp_slow_start``), so a window
  limited flow doubles it every round trip. With no loss the slow-start
  threshold is never set. In round ``k`` of a message (the instants ``t0 + k rtt``
  from when its first byte flows) its rate is bounded by ``W_k / rtt``; at each
  round-trip instant the engine measures what the flow moved in the round: if
  less than ``W_k`` its fair share held it back, the window is at least its
  share's bandwidth-delay product and the bound is lifted for good (it is the
  fluid flow from then on); otherwise ``W_(k+1) = W_k + moved``. When the bytes
  left fit in the window the bound is lifted too: the last window goes out at
  line rate, as an unpaced sender's burst does. So a bound changes only at
  round-trip instants, and only while the flow is in slow start.
* **Connections persist** per (rank, peer, channel), as collective libraries
  keep their sockets: a message starts with the window its connection ended
  the last one with (the initial window plus the segments acknowledged while in
  slow start; unbounded once a message has left slow start). Messages of one
  connection on the wire together each start from that window.
* **Restart after idle** (RFC 5681 sec. 4.1, option ``restart_after_idle``, on
  by default as in Linux, ``net.ipv4.tcp_slow_start_after_idle=1``): a
  connection idle for longer than the retransmission timeout starts again from
  at most the initial window. The timeout is Linux's minimum, 200 ms
  (``TCP_RTO_MIN``, include/net/tcp.h), which a data-centre round trip of
  microseconds leaves as it is.
* **Handshake** (option ``handshake``, off by default: collective libraries
  connect at initialisation): the first message of a connection waits one
  round trip of SYN and SYN-ACK (RFC 9293 sec. 3.5) before its first byte.

Not modelled: loss and retransmission (the time-outs of incast, at least 200 ms
each), Cubic's window growth after a loss (RFC 9438), HyStart's early exit from
slow start, delayed ACKs, pacing, and the receive window.
"""

import math

import numpy as np

from netsim.checks import check_choice
from netsim.errors import NetsimError
from netsim.engine.views import tcp_views

__all__ = ["DEFAULT_MTU", "INITIAL_WINDOW", "MIN_RTO", "TCP_IPV4_HEADERS", "TRANSPORTS", "Tcp",
           "check_transport", "path_timing", "tcp_options"]

#: The transports of a replay: the fluid flow model, or TCP's start-up on top of it.
TRANSPORTS = ("fluid", "tcp")
#: IPv4 header without options (RFC 791) + TCP header (RFC 9293) + the timestamps
#: option (RFC 7323: 10 bytes, padded with two NOPs to 12), as Linux sends by default.
TCP_IPV4_HEADERS = 20 + 20 + 12
#: IP MTU of an edge that names none: Ethernet's (RFC 894).
DEFAULT_MTU = 1500
#: Initial congestion window in segments (RFC 6928; Linux ``TCP_INIT_CWND``).
INITIAL_WINDOW = 10
#: Retransmission timeout that ends an idle period (Linux ``TCP_RTO_MIN``, HZ / 5).
MIN_RTO = 0.2
_DEFAULTS = {"initial_window": INITIAL_WINDOW, "restart_after_idle": True, "handshake": False,
             "rto": MIN_RTO, "mtu": None}
# A round moved its whole window if it moved this share of it (float residue).
_FULL = 1 - 1e-9


def check_transport(transport):
    """``transport`` if it names one of :data:`TRANSPORTS`.

    Examples
    --------
    >>> check_transport("tcp")
    'tcp'
    >>> check_transport("udp")
    Traceback (most recent call last):
    ...
    netsim.errors.NetsimError: unknown transport 'udp'; known: fluid, tcp
    """
    check_choice(transport, "transport", TRANSPORTS, error=NetsimError)
    return transport


def tcp_options(options=None):
    """The TCP options with their defaults filled in, checked.

    Keys: ``initial_window`` (segments, >= 1), ``restart_after_idle`` (bool),
    ``handshake`` (bool), ``rto`` (s, > 0), ``mtu`` (bytes, > 52, or None: the
    edges' ``mtu``).

    Raises
    ------
    NetsimError
        For an unknown key or a bad value.

    Examples
    --------
    >>> tcp_options({"handshake": True})["handshake"], tcp_options()["initial_window"]
    (True, 10)
    >>> tcp_options({"window": 4})
    Traceback (most recent call last):
    ...
    netsim.errors.NetsimError: unknown TCP option 'window'; known: initial_window, \
restart_after_idle, handshake, rto, mtu
    """
    out = dict(_DEFAULTS)
    for key, value in (options or {}).items():
        check_choice(key, "TCP option", _DEFAULTS, error=NetsimError)
        out[key] = value
    for key in ("restart_after_idle", "handshake"):
        if not isinstance(out[key], bool):
            raise NetsimError(f"TCP option {key} must be true or false, got {out[key]!r}")
    iw, rto, mtu = out["initial_window"], out["rto"], out["mtu"]
    if isinstance(iw, bool) or not isinstance(iw, (int, float)) or not iw >= 1:
        raise NetsimError(f"TCP option initial_window must be >= 1 segment, got {iw!r}")
    if isinstance(rto, bool) or not isinstance(rto, (int, float)) or not 0 < rto < math.inf:
        raise NetsimError(f"TCP option rto must be a time > 0 s, got {rto!r}")
    if mtu is not None and (isinstance(mtu, bool) or not isinstance(mtu, (int, float))
                            or not TCP_IPV4_HEADERS < mtu < math.inf):
        raise NetsimError(f"TCP option mtu must exceed the {TCP_IPV4_HEADERS} header bytes, "
                          f"got {mtu!r}")
    return out


def path_timing(net, links, mtu=None, first=None):
    """Per route: MSS, round-trip time, handshake round trip and store-and-forward delay.

    Parameters
    ----------
    net : Network
    links : ndarray of int, shape (routes, hops)
        Each route's link directions, padded with ``net.num_links``.
    mtu : float, optional
        The IP MTU of every path (else the least ``mtu`` edge attribute on it,
        :data:`DEFAULT_MTU` where an edge has none).
    first : ndarray of float, optional
        Per route, the payload of the first segment whose store-and-forward ``store``
        gives (default a full MSS). A message smaller than the MSS is one segment of its
        own size, and a message of no bytes sends none (its ``store`` is 0).

    Returns
    -------
    mss, rtt, handshake, store : ndarray of float
        Bytes; seconds (module docstring). A route of no links has zeros.

    Examples
    --------
    Two hops of 1.25 GB/s line rate at MTU 1500 (efficiency 1448 / 1538) and 1 us:
    a 1538-byte frame takes 1.2304 us per hop, a 90-byte ACK 0.072 us.

    >>> import networkx as nx
    >>> from netsim.network.compiled import Network
    >>> G = nx.Graph()
    >>> G.add_edges_from([("a", "s"), ("s", "b")], bandwidth=1.25e9, latency=1e-6,
    ...                  efficiency=1448 / 1538, mtu=1500)
    >>> net = Network(G)
    >>> mss, rtt, hs, store = path_timing(net, np.array([list(net.route(0, 2))]))
    >>> mss.tolist(), [round(float(x[0]) * 1e6, 4) for x in (rtt, hs, store)]
    ([1448.0], [6.6048, 4.288, 1.2304])

    A first segment of 1000 bytes is a frame of 1090 bytes (its 90 of headers and framing):
    0.872 us on the hop before the bottleneck.

    >>> store = path_timing(net, np.array([list(net.route(0, 2))]), first=np.array([1e3]))[3]
    >>> round(float(store[0]) * 1e6, 4)
    0.872
    """
    links = np.asarray(links, np.int64)
    L = net.num_links
    real = links != L
    graph = net.graph
    edge_mtu = np.array([float(graph.edges[net.nodes[s], net.nodes[d]].get("mtu", DEFAULT_MTU))
                         for s, d in zip(net.link_src.tolist(), net.link_dst.tolist())] + [np.inf])
    eff = np.array([float(graph.edges[net.nodes[s], net.nodes[d]].get("efficiency", 1.0))
                    for s, d in zip(net.link_src.tolist(), net.link_dst.tolist())] + [1.0])
    cap = np.append(net.bandwidth, np.inf)
    lat = np.append(net.latency, 0.0)
    path_mtu = edge_mtu[links].min(axis=1) if mtu is None else np.full(len(links), float(mtu))
    mss = np.where(real.any(axis=1), path_mtu - TCP_IPV4_HEADERS, 0.0)
    # Per hop, in seconds: a frame of `mss` payload and a pure ACK, on the line rate.
    hop_mss = np.where(real, edge_mtu[links] - TCP_IPV4_HEADERS, 0.0)  # each edge's own MSS
    overhead = hop_mss / eff[links] - hop_mss  # per frame: headers, framing and gap
    frame = np.where(real, (mss[:, None] + overhead) * eff[links] / cap[links], 0.0)
    ack = np.where(real, overhead * eff[links] / cap[links], 0.0)
    one_way = np.where(real, lat[links], 0.0).sum(axis=1)
    rtt = (frame + ack).sum(axis=1) + 2 * one_way
    handshake = 2 * ack.sum(axis=1) + 2 * one_way
    bottleneck = np.where(real, cap[links], np.inf).argmin(axis=1)
    if first is not None:  # the first segment's own frame, not a full one (none for 0 bytes)
        first = np.asarray(first, np.float64)
        frame = np.where(real & (first[:, None] > 0),
                         (first[:, None] + overhead) * eff[links] / cap[links], 0.0)
    store = frame.sum(axis=1) - frame[np.arange(len(links)), bottleneck]
    return mss, rtt, handshake, store


class Tcp:
    """The connections of one replay and the slow-start state of their messages.

    The engine (:mod:`netsim.engine.replay`) calls :meth:`enter` when a message's first
    byte would flow, :meth:`tick` at each of its round-trip instants while it is
    in slow start and :meth:`ended` when it is delivered.

    Parameters
    ----------
    trace : Trace
    route : ndarray of int
        The route index of each op (-1 for compute ops).
    timing : tuple of ndarray
        :func:`path_timing` of the routes.
    options : dict
        :func:`tcp_options`.

    Examples
    --------
    A 1 MB message on a path of MSS 1000 and 10 us round trips starts bounded at
    its initial window of 10 kB per round trip, the round after at 20 kB.

    >>> from netsim import TraceBuilder
    >>> b = TraceBuilder(2); _ = b.message(0, 1, 1e6)
    >>> one = lambda x: np.array([x])
    >>> tcp = Tcp(b.build(), one(0), (one(1000.0), one(1e-5), one(1e-5), one(0.0)),
    ...           tcp_options())
    >>> later, bound, rtt = tcp.enter(0, 0.0)
    >>> later, round(bound), rtt
    (None, 1000000000, 1e-05)
    >>> bound, rtt = tcp.tick(0, 1e6 - 1e4)
    >>> round(bound), rtt
    (2000000000, 1e-05)
    """

    def __init__(self, trace, route, timing, options):
        self.mss, self.rtt, self.handshake_rtt, _ = timing
        self.route = np.asarray(route, np.int64)
        self.iw = float(options["initial_window"])
        self.restart = options["restart_after_idle"]
        self.rto = float(options["rto"])
        self.size = trace.size
        # One integer per (rank, peer, channel): peer -1 (compute ops) and channels >= 0 fit.
        peer = trace.peer.astype(np.int64) + 1
        channel = trace.channel.astype(np.int64)
        key = (trace.rank.astype(np.int64) * (trace.ranks + 1) + peer) * (
            int(channel.max(initial=0)) + 1) + channel
        self.conn = np.unique(key, return_inverse=True)[1].ravel().astype(np.int64)
        n = int(self.conn.max()) + 1 if len(self.conn) else 0
        self.cwnd = np.full(n, self.iw)    # segments; inf once a message left slow start
        self.last = np.full(n, -np.inf)    # when the connection last delivered a message
        self.busy = np.zeros(n, np.int64)  # its messages on the wire
        # When it is open: NaN until its first message starts the handshake.
        self.opened = np.full(n, np.nan if options["handshake"] else -np.inf)
        self.state = {}                    # op in slow start -> [window bytes, bytes left, rtt]
        self.slot_of = {}                  # op in slow start -> its flow slot
        # Single ops go through memoryviews of the same columns, by name (Python floats and
        # ints at about half numpy's cost per element: netsim.engine.views); batches through
        # numpy.
        self.views = tcp_views(self)

    def enter(self, op, now):
        """Message ``op``'s first byte would flow at ``now``.

        Returns ``(later, bound, rtt)``: ``later`` the time to come back at (the
        handshake still running) or None; its rate bound (bytes/s, inf: none);
        the time to its first round-trip instant, or None if it is not bounded.
        :meth:`enter_many` does the same for many messages at once.
        """
        conn, route, size, mss, rtt, handshake_rtt, cwnd, last, busy, opened = self.views
        c, pair = conn[op], route[op]
        if opened[c] != opened[c]:  # NaN: the first message starts the handshake
            opened[c] = now + handshake_rtt[pair]
        if opened[c] > now:
            return opened[c], math.inf, None
        if self.restart and not busy[c] and now - last[c] > self.rto:
            cwnd[c] = min(cwnd[c], self.iw)
        busy[c] += 1
        window = cwnd[c] * mss[pair]
        if size[op] <= window:
            return None, math.inf, None
        self.state[op] = [window, size[op], rtt[pair]]
        return None, window / rtt[pair], rtt[pair]

    def enter_many(self, ops, now):
        """:meth:`enter` for an array of messages, with the same float operations.

        Returns ``(go, later, bounds, rtts)``: which of ``ops`` start now; when
        the others (still waiting for their handshake) come back; for those that
        start, their bounds and the time to their first round-trip instant (NaN:
        not bounded).
        """
        c, pair = self.conn[ops], self.route[ops]
        new = np.isnan(self.opened[c])
        if new.any():
            self.opened[c[new]] = now + self.handshake_rtt[pair[new]]
        go = ~(self.opened[c] > now)
        later = self.opened[c[~go]]
        ops, c, pair = ops[go], c[go], pair[go]
        if self.restart:
            idle = (self.busy[c] == 0) & (now - self.last[c] > self.rto)
            self.cwnd[c[idle]] = np.minimum(self.cwnd[c[idle]], self.iw)
        np.add.at(self.busy, c, 1)
        window = self.cwnd[c] * self.mss[pair]
        size = self.size[ops]
        slow = size > window
        rtt = np.where(slow, self.rtt[pair], np.nan)
        bounds = np.full(len(ops), np.inf)
        bounds[slow] = window[slow] / rtt[slow]
        for op, w, n, r in zip(ops[slow].tolist(), window[slow].tolist(), size[slow].tolist(),
                               rtt[slow].tolist()):
            self.state[op] = [w, n, r]
        return go, later, bounds, rtt

    def tick(self, op, left):
        """A round-trip instant of ``op`` with ``left`` bytes still to send.

        Returns the new bound and the time to the next instant (None once out of
        slow start).
        """
        state = self.state[op]
        window, before, rtt = state
        moved = before - left
        if moved < _FULL * window:  # its share held it back: it has left slow start
            del self.state[op]
            self.cwnd[self.conn[op]] = math.inf
            return math.inf, None
        window += moved
        if left <= window:          # the rest goes in this window, at line rate
            del self.state[op]
            return math.inf, None
        state[0], state[1] = window, left
        return window / rtt, rtt

    def ended(self, ops, now):
        """Messages ``ops`` (a list, or an array for many) were delivered at ``now``.

        Their connections' windows grow by the segments acknowledged (while in
        slow start) and remember when they were last used.
        """
        if self.state:
            for op in (ops.tolist() if isinstance(ops, np.ndarray) else ops):
                self.state.pop(op, None)
                self.slot_of.pop(op, None)
        if isinstance(ops, np.ndarray) and len(ops) > 8:
            c = self.conn[ops]
            np.subtract.at(self.busy, c, 1)
            self.last[c] = now
            grow = self.cwnd[c] < math.inf
            segments = np.ceil(self.size[ops[grow]] / self.mss[self.route[ops[grow]]])
            np.add.at(self.cwnd, c[grow], segments)
            return
        conn, route, size, mss, _, _, cwnd, last, busy, _ = self.views
        for op in (ops.tolist() if isinstance(ops, np.ndarray) else ops):
            c = conn[op]
            busy[c] -= 1
            last[c] = now
            if cwnd[c] < math.inf:
                cwnd[c] += math.ceil(size[op] / mss[route[op]])
