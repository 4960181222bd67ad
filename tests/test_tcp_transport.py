"""TCP's start-up on the fluid engine against its closed forms (netsim.engine.tcp).

The lone-transfer times are the slow-start latency of Cardwell, Savage & Anderson
("Modeling TCP latency", INFOCOM 2000) without loss and delayed ACKs: rounds of
``W_k = W_0 2^k`` segments one round trip apart while the window is below the
bandwidth-delay product, then the rest at the line rate. Each round trip and
segment time is worked from the link's line rate and the frame sizes of
TCP/IPv4 over Ethernet here, not read from the code under test.
"""

import networkx as nx
import pytest

from engines import result
from netsim import TraceBuilder, simulate
from netsim.errors import NetsimError
from random_cases import random_case

RAW = 12.5e9           # 100 Gb/s line rate, bytes/s
LAT = 1e-6             # per link
MSS = 1500 - 52        # IPv4 20 + TCP 20 + timestamps 12
FRAME = 1500 + 38      # + preamble, SFD, MACs, EtherType, FCS and gap
ACK = FRAME - MSS      # a pure ACK: headers and framing only
CAP = RAW * MSS / FRAME  # the payload rate
RTT = 2 * (FRAME / RAW + ACK / RAW) + 4 * LAT  # two hops, out and back
STORE = FRAME / RAW    # the first segment, serialised on the one hop beyond the bottleneck


def store(size):
    """The first segment's store-and-forward: a full frame, or a message below one MSS as one
    segment of its own size (its headers and framing the same ACK bytes); none for 0 bytes."""
    return 0.0 if size == 0 else (min(size, MSS) + ACK) / RAW


def star(n=2):
    G = nx.Graph()
    for i in range(n):
        G.add_node(f"h{i}", kind="host")
        G.add_edge(f"h{i}", "sw", bandwidth=RAW, latency=LAT, efficiency=MSS / FRAME, mtu=1500)
    G.nodes["sw"]["kind"] = "switch"
    return G


def slow_start_time(size, window=10 * MSS):
    """Cardwell et al.'s lone loss-free transfer: latency, rounds of doubling windows, the rest."""
    t, left = 2 * LAT + store(size), size
    while left > window and window / RTT < CAP:
        t += RTT
        left -= window
        window *= 2
    return t + left / CAP


def one_message(size):
    b = TraceBuilder(2)
    b.message(0, 1, size)
    return b.build()


@pytest.mark.parametrize("size", [0.0, 100.0, 1447.0, 1448.0, 10e3, 14480.0, 100e3, 1e6, 10e6,
                                  100e6])
def test_a_lone_transfer_takes_the_slow_start_closed_form(size):
    r = simulate(one_message(size), star(), transport="tcp")
    assert r.makespan == pytest.approx(slow_start_time(size), rel=1e-12)


def test_the_fluid_transport_is_the_default_and_unchanged():
    G, trace = star(), one_message(1e6)
    assert simulate(trace, G).to_json(ops=True) == simulate(trace, G, transport="fluid").to_json(
        ops=True)
    assert simulate(trace, G).makespan == pytest.approx(2 * LAT + 1e6 / CAP, rel=1e-12)


def _two_messages(first, second, gap):
    b = TraceBuilder(2)
    m = b.message(0, 1, first)
    c = b.compute(0, seconds=gap, deps=[m])
    b.message(0, 1, second, deps=[c])
    return b.build()


def test_a_connection_keeps_its_window_and_restarts_after_idle():
    # The first message (10 segments) fits the initial window; it leaves the window at
    # 20 segments, so 20 segments after a short gap go at once. After an idle period
    # longer than the 200 ms timeout the window is back to 10 (RFC 5681 sec. 4.1).
    first, second = 10 * MSS, 20 * MSS
    one = 2 * LAT + STORE + first / CAP
    short = simulate(_two_messages(first, second, 1e-3), star(), transport="tcp")
    assert short.ops["end"][2] == pytest.approx(one + 1e-3 + 2 * LAT + STORE + second / CAP,
                                                rel=1e-12)
    idle = simulate(_two_messages(first, second, 0.5), star(), transport="tcp")
    assert idle.ops["end"][2] == pytest.approx(one + 0.5 + slow_start_time(second), rel=1e-12)
    kept = simulate(_two_messages(first, second, 0.5), star(), transport="tcp",
                    tcp={"restart_after_idle": False})
    assert kept.ops["end"][2] == pytest.approx(one + 0.5 + 2 * LAT + STORE + second / CAP,
                                               rel=1e-12)


def test_the_handshake_delays_only_a_connections_first_message():
    # SYN and SYN-ACK: two pure ACK-sized packets' round trip (RFC 9293 sec. 3.5).
    handshake = 2 * 2 * ACK / RAW + 4 * LAT
    plain = simulate(_two_messages(1e3, 1e3, 1e-3), star(), transport="tcp")
    shake = simulate(_two_messages(1e3, 1e3, 1e-3), star(), transport="tcp",
                     tcp={"handshake": True})
    assert shake.ops["end"][0] == pytest.approx(plain.ops["end"][0] + handshake, rel=1e-12)
    gap = shake.ops["end"][2] - shake.ops["end"][0]
    assert gap == pytest.approx(plain.ops["end"][2] - plain.ops["end"][0], rel=1e-9)


def test_an_incast_reaches_its_share_in_the_first_round():
    # 8 senders of 1 MB into one host: the share CAP / 8 is below every initial window's
    # rate 10 MSS / RTT, so each flow leaves slow start at its first round trip and the
    # incast takes what the fluid one does: 8 MB through the sink's link.
    b = TraceBuilder(9)
    for i in range(8):
        b.message(i, 8, 1e6)
    assert 10 * MSS / RTT > CAP / 8
    r = simulate(b.build(), star(9), transport="tcp")
    assert r.makespan == pytest.approx(2 * LAT + STORE + 8e6 / CAP, rel=1e-12)


@pytest.mark.parametrize("options", [None, {"handshake": True, "rto": 1e-4}])
@pytest.mark.parametrize("seed", range(60))
def test_both_engine_paths_agree_bit_for_bit_over_tcp(seed, options):
    # The second options make connections shake hands and restart after 0.1 ms idle.
    G, trace = random_case(seed)
    for u, v in G.edges:
        G.edges[u, v]["mtu"] = 1500 if seed % 2 else 9000
        G.edges[u, v]["efficiency"] = 0.9
    fast = result(trace, G, link_series=True, transport="tcp", tcp=options)
    batch = result(trace, G, link_series=True, transport="tcp", tcp=options, small_event=-1)
    assert fast.to_json(ops=True) == batch.to_json(ops=True)
    for key in ("time", "link", "load"):
        assert fast.link_series[key].tobytes() == batch.link_series[key].tobytes()


@pytest.mark.parametrize("options, match", [
    ({"window": 4}, "unknown TCP option"),
    ({"initial_window": 0}, "initial_window"),
    ({"rto": -1.0}, "rto"),
    ({"handshake": "yes"}, "handshake"),
    ({"mtu": 40}, "mtu"),
])
def test_bad_tcp_options_are_refused(options, match):
    with pytest.raises(NetsimError, match=match):
        simulate(one_message(1e3), star(), transport="tcp", tcp=options)


def test_an_unknown_transport_and_options_without_tcp_are_refused():
    with pytest.raises(NetsimError, match="unknown transport 'udp'"):
        simulate(one_message(1e3), star(), transport="udp")
    with pytest.raises(NetsimError, match="transport='tcp'"):
        simulate(one_message(1e3), star(), tcp={"handshake": True})
