"""The engine against theory: Hockney times alone, hand-worked max-min shares together."""

import networkx as nx
import numpy as np
import pytest

from netsim import TraceBuilder, simulate
from netsim.engine.maxmin import max_min_rates

REL = 1e-9


def line(*caps, latency=0.0):
    """Nodes n0 - n1 - ... with the given link capacities; every node is a host."""
    G = nx.Graph()
    for i in range(len(caps) + 1):
        G.add_node(f"n{i}", kind="host")
    for i, c in enumerate(caps):
        G.add_edge(f"n{i}", f"n{i + 1}", bandwidth=float(c), latency=latency)
    return G


def star_graph(n, bw, lat):
    G = nx.Graph()
    G.add_node("sw", kind="switch")
    for i in range(n):
        G.add_node(f"h{i}", kind="host")
        G.add_edge(f"h{i}", "sw", bandwidth=bw, latency=lat)
    return G


def test_opposite_directions_do_not_interfere():
    # Full duplex: each direction has the whole bandwidth, so both take alpha + n/B.
    B, lat, n = 1e9, 2e-6, 5e6
    b = TraceBuilder(2)
    b.message(0, 1, n)
    b.message(1, 0, n)
    r = simulate(b.build(), line(B, latency=lat))
    assert r.ops["end"] == pytest.approx([lat + n / B] * 2, rel=REL)
    assert r.links["peak_flows"].tolist() == [1, 1]


def test_directed_edge_is_one_way():
    G = nx.DiGraph()
    G.add_edge("a", "b", bandwidth=1e3, latency=0.0)
    G.add_edge("b", "a", bandwidth=1e3, latency=0.0)
    b = TraceBuilder(2)
    b.message(0, 1, 1e3)
    b.message(1, 0, 1e3)
    r = simulate(b.build(), G)
    assert r.makespan == pytest.approx(1.0, rel=REL)


def test_n_messages_into_one_link_share_and_release():
    # Three senders into one host over a star: sizes 1, 2, 3 MB, every link B.
    # All three share the sink's downlink at B/3 until the 1 MB one ends at 3 MB/B;
    # the other two then get B/2 each: the 2 MB one has 1 MB left -> +2 MB/B;
    # the last has 1 MB left alone at B -> +1 MB/B. Every time also pays 2 latencies.
    B, lat, M = 1e9, 1e-6, 1e6
    b = TraceBuilder(4)
    for src, size in ((0, M), (1, 2 * M), (2, 3 * M)):
        b.message(src, 3, size)
    r = simulate(b.build(), star_graph(4, B, lat))
    t1 = 3 * M / B
    t2 = t1 + 2 * M / B
    t3 = t2 + M / B
    assert r.ops["end"] == pytest.approx([2 * lat + t for t in (t1, t2, t3)], rel=REL)
    sink = [i for i in range(len(r.links["dst"])) if r.links["dst"][i] == "h3"][0]
    assert r.links["peak_flows"][sink] == 3
    assert r.links["bytes"][sink] == 6 * M
    assert r.links["busy"][sink] == pytest.approx(t3, rel=REL)


def test_parking_lot_with_unequal_bottlenecks():
    # Links L1=10, L2=4, L3=6 (bytes/s) in a line n0-n1-n2-n3, no latency.
    # A: n0->n3 (10 B), B1: n0->n1 (16 B), B2: n1->n2 (2 B), B3: n2->n3 (8 B).
    # Max-min at t=0: L2 share 4/2=2 is the least -> A=B2=2; then B1=10-2=8, B3=6-2=4.
    # t=1: B2 done (2 B at 2). A has 8 left, B1 8, B3 4. Re-fill: L3 share 6/2=3 least
    #      -> A=B3=3; B1=10-3=7.
    # t=1+8/7=15/7: B1 done. A has 8-3*8/7=32/7, B3 4-24/7=4/7; rates stay A=B3=3.
    # t=15/7+(4/7)/3=7/3: B3 done. A has 4 left, alone: min(10,4,6)=4 -> +1 s.
    G = line(10, 4, 6)
    b = TraceBuilder(4)
    b.message(0, 3, 10)
    b.message(0, 1, 16)
    b.message(1, 2, 2)
    b.message(2, 3, 8)
    r = simulate(b.build(), G)
    assert r.ops["end"] == pytest.approx([10 / 3, 15 / 7, 1.0, 7 / 3], rel=REL)


def test_parking_lot_rates_direct():
    # The same instant solved directly: [A, B1, B2, B3] = [2, 8, 2, 4].
    links = np.array([[0, 1, 2], [0, -1, -1], [1, -1, -1], [2, -1, -1]])
    assert max_min_rates(links, np.array([10.0, 4.0, 6.0])).tolist() == [2.0, 8.0, 2.0, 4.0]


def test_message_starting_while_another_is_in_flight():
    # Message 1 (n bytes) starts at 0; message 2 (n bytes) waits for a compute op of d
    # seconds, then both share the sink link. Transfers start after 2 latencies.
    # By d, message 1 has sent B*d; then both get B/2: message 1 ends after
    # 2(n - B d)/B more, i.e. at 2n/B - d; message 2 has then sent n - B d and
    # finishes its last B*d bytes alone at B: at 2n/B.
    B, lat, n, d = 1e9, 1e-6, 4e6, 1e-3
    b = TraceBuilder(3)
    m1 = b.message(0, 2, n)
    c = b.compute(1, seconds=d)
    m2 = b.message(1, 2, n, deps=[c])
    r = simulate(b.build(), star_graph(3, B, lat))
    assert r.ops["end"][m1] == pytest.approx(2 * lat + 2 * n / B - d, rel=REL)
    assert r.ops["end"][m2] == pytest.approx(2 * lat + 2 * n / B, rel=REL)
    assert r.ops["end"][c] == pytest.approx(d, rel=REL)


def test_zero_byte_message_takes_its_latency():
    b = TraceBuilder(2)
    b.message(0, 1, 0)
    r = simulate(b.build(), line(1e9, latency=3e-6))
    assert r.makespan == pytest.approx(3e-6, rel=REL)


def test_compute_ops_on_one_rank_may_overlap_and_dependencies_chain():
    b = TraceBuilder(1)
    a = b.compute(0, seconds=2.0)
    b.compute(0, seconds=3.0)  # independent: runs alongside
    b.compute(0, seconds=1.0, deps=[a])
    G = nx.Graph()
    G.add_node("h", kind="host")
    r = simulate(b.build(), G)
    assert r.ops["end"].tolist() == [2.0, 3.0, 3.0]
    assert r.ranks["compute"][0] == pytest.approx(3.0)
    assert r.ranks["idle"][0] == pytest.approx(0.0)


def test_flops_use_device_throughput():
    b = TraceBuilder(1, metadata={"device_flops": 1e12})
    b.compute(0, flops=5e12)
    G = nx.Graph()
    G.add_node("h", kind="host")
    assert simulate(b.build(), G).makespan == pytest.approx(5.0)
    assert simulate(b.build(), G, device_flops=1e13).makespan == pytest.approx(0.5)


def test_iteration_times_and_rank_accounting():
    # Iteration 0: compute 1 s then send 1e3 B at 1e3 B/s (1 s); iteration 1: compute 2 s.
    b = TraceBuilder(2)
    c = b.compute(0, seconds=1.0)
    m = b.message(0, 1, 1e3, deps=[c])
    b.compute(1, seconds=2.0, deps=[m], iteration=1)
    r = simulate(b.build(), line(1e3))
    assert r.iteration_times.tolist() == pytest.approx([2.0, 2.0])
    assert r.ranks["compute"].tolist() == pytest.approx([1.0, 2.0])
    assert r.ranks["communication"].tolist() == pytest.approx([1.0, 1.0])
    assert r.ranks["exposed_communication"].tolist() == pytest.approx([1.0, 1.0])
    assert r.ranks["idle"].tolist() == pytest.approx([2.0, 1.0])


def test_placement_and_same_node_message():
    b = TraceBuilder(2)
    b.message(0, 1, 1e6)
    G = star_graph(3, 1e9, 1e-6)
    r = simulate(b.build(), G, placement=["h2", "h0"])
    assert r.ranks["node"].tolist() == ["h2", "h0"]
    assert r.makespan == pytest.approx(2e-6 + 1e-3, rel=REL)


def test_tie_break_prefers_fewer_hops_then_node_order():
    # a-b direct (latency 2) versus a-c-b (1 + 1): equal latency, direct has fewer hops.
    G = nx.Graph()
    for n in "abcd":
        G.add_node(n, kind="host")
    G.add_edge("a", "b", bandwidth=1.0, latency=2.0)
    G.add_edge("a", "c", bandwidth=1.0, latency=1.0)
    G.add_edge("c", "b", bandwidth=1.0, latency=1.0)
    from netsim import Network
    net = Network(G)
    assert net.path("a", "b") == ["a", "b"]
    # Two equal 2-hop routes a-c-d and a-b-d: the lower-ordered predecessor (b) wins.
    H = nx.Graph()
    for n in "abcd":
        H.add_node(n)
    for u, v in (("a", "c"), ("c", "d"), ("a", "b"), ("b", "d")):
        H.add_edge(u, v, bandwidth=1.0, latency=1.0)
    assert Network(H).path("a", "d") == ["a", "b", "d"]


def test_same_input_same_json():
    b = TraceBuilder(3)
    for i in range(3):
        b.message(i, (i + 1) % 3, 1e6 * (i + 1))
    t = b.build()
    G = star_graph(3, 1e9, 1e-6)
    assert simulate(t, G).to_json() == simulate(t, G).to_json()


# -- one message on the catalogue's machines: Hockney with the spec constants ---------------

def one_message(G, src, dst, nbytes):
    b = TraceBuilder(2)
    b.message(0, 1, nbytes)
    return simulate(b.build(), G, placement=[src, dst]).makespan


def test_one_message_on_star_two_tier_and_pcie_tree():
    from topologies import CPU_INTERCONNECT, PCIE_LATENCY, PCIE_X16, SOCKET_LATENCY, pcie_tree, star, two_tier

    n = 64e6
    # Star: host -> switch -> host, two links.
    assert one_message(star(4, bandwidth=1.25e9, latency=1e-6), "host0", "host3", n) == \
        pytest.approx(2e-6 + n / 1.25e9, rel=REL)
    # Two-tier, across racks: host -> tor0 -> core -> tor1 -> host, four links; the
    # 0.5 GB/s uplink is the bottleneck.
    G = two_tier(8, 4, bandwidth=1.25e9, uplink_bandwidth=0.5e9, latency=2e-6)
    assert one_message(G, "host0", "host5", n) == pytest.approx(4 * 2e-6 + n / 0.5e9, rel=REL)
    # Same rack: two links at host bandwidth.
    assert one_message(G, "host0", "host1", n) == pytest.approx(2 * 2e-6 + n / 1.25e9, rel=REL)
    # PCIe tree, across sockets: gpu0 -> pcie0 -> cpu0 -> cpu1 -> pcie2 -> gpu4:
    # four PCIe gen3 x16 links and one QPI link; PCIe (15.75 GB/s) < QPI (19.2 GB/s).
    G = pcie_tree(gen="gen3")
    expect = 4 * PCIE_LATENCY + SOCKET_LATENCY + n / min(PCIE_X16["gen3"], CPU_INTERCONNECT["QPI"])
    assert one_message(G, "gpu0", "gpu4", n) == pytest.approx(expect, rel=REL)


def test_link_series_integrates_to_bytes_and_progress_counts_ops():
    # The series is piecewise constant: integrating each link's load over time gives
    # the bytes it carried. Progress reports reach the number of ops.
    b = TraceBuilder(4)
    for src, size in ((0, 1e6), (1, 2e6), (2, 3e6)):
        b.message(src, 3, size)
    seen = []
    r = simulate(b.build(), star_graph(4, 1e9, 1e-6), link_series=True, progress=seen.append)
    ls = r.link_series
    for link in range(len(r.links["bytes"])):
        sel = ls["link"] == link
        t = np.append(ls["time"][sel], r.makespan)
        area = float(np.sum(np.diff(t) * ls["load"][sel]))
        assert area == pytest.approx(r.links["bytes"][link], rel=1e-9, abs=1e-6)
    assert seen[-1] == 3
