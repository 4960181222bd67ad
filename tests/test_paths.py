"""Several paths between two nodes: channels, ECMP hashing, parallel links (netsim.network.compiled)."""

import networkx as nx
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from netsim import TopologyError, Trace, TraceBuilder, simulate
from netsim.network.multipath import equal_cost_dag, path_counts, unrank_path
from netsim.network.compiled import Network
from netsim.engine import reference
from engines import result
from strategies import cases
from topologies import fat_tree, leaf_spine, torus

B, LAT, SIZE = 1e9, 1e-6, 1e6


def square():
    """Hosts a and c joined through b or d: two equal-cost paths a-b-c and a-d-c."""
    G = nx.Graph()
    G.add_nodes_from("ac", kind="host")
    G.add_nodes_from("bd", kind="switch")
    for u, v in ("ab", "bc", "ad", "dc"):
        G.add_edge(u, v, bandwidth=B, latency=LAT)
    return G


def two_messages(channels, src=(0, 0), dst=(1, 1), ranks=2):
    b = TraceBuilder(ranks)
    for s, d, c in zip(src, dst, channels):
        b.message(s, d, SIZE, channel=c)
    return b.build()


def test_channels_take_the_equal_cost_paths_in_order():
    net = Network(square())
    assert net.num_paths(0, 1) == 2
    # Path 0 takes the lowest predecessor (b) at c: today's route; channel 1 the other.
    assert [net.path("a", "c", ch) for ch in range(4)] == [
        ["a", "b", "c"], ["a", "d", "c"], ["a", "b", "c"], ["a", "d", "c"]]


@pytest.mark.parametrize("channels, seconds", [
    ((0, 1), 2 * LAT + SIZE / B),        # one path each: the full rate
    ((0, 0), 2 * LAT + 2 * SIZE / B),    # one path, max-min halves: 2x the time
    ((1, 3), 2 * LAT + 2 * SIZE / B),    # 1 mod 2 == 3 mod 2
])
def test_channel_routes_in_both_engines(channels, seconds):
    t = two_messages(channels)
    assert simulate(t, square()).makespan == pytest.approx(seconds, rel=1e-12)
    end = result(t, square(), by=reference).ops["end"].tolist()
    assert max(end) == pytest.approx(seconds, rel=1e-12)


@pytest.mark.parametrize("G", [fat_tree(4), torus((4, 4)), leaf_spine(3, 3, 2),
                               nx.DiGraph(nx.hypercube_graph(3))], ids=["fat_tree", "torus",
                                                                       "leaf_spine", "cube"])
def test_path_zero_is_the_single_route_of_before(G):
    if "bandwidth" not in next(iter(G.edges(data=True)))[2]:
        nx.set_edge_attributes(G, B, "bandwidth")
        nx.set_edge_attributes(G, LAT, "latency")
    net = Network(G)
    n = len(net.nodes)
    adj = [[] for _ in range(n)]
    for link, (u, v) in enumerate(zip(net.link_src.tolist(), net.link_dst.tolist())):
        adj[u].append((v, link, 1))  # every link has one latency here: cost = hops
    adj = [sorted(a) for a in adj]
    nodes = range(0, n, 3)
    for s in nodes:
        order, preds = equal_cost_dag(adj, s, set(range(n)), [-1] * n)
        counts = path_counts(order, preds)
        for d in nodes:
            # Unranked path 0 is the route the single-path Dijkstra of before finds.
            assert unrank_path(preds, counts, s, d, 0) == net.route(s, d)
            # The k paths are networkx's shortest paths, each once.
            paths = [[net.nodes[s]] + [net.nodes[net.link_dst[k]] for k in net.route(s, d, i)]
                     for i in range(net.num_paths(s, d))]
            expected = list(nx.all_shortest_paths(G, net.nodes[s], net.nodes[d]))
            assert sorted(map(tuple, paths)) == sorted(map(tuple, expected))


def test_fat_tree_channels_cross_every_core_switch():
    G = fat_tree(4)
    net = Network(G)
    s, d = net.node_of("host0"), net.node_of("host15")  # pods 0 and 3
    assert net.num_paths(s, d) == 4  # (k/2)^2 core switches
    cores = {next(n for n in net.path("host0", "host15", c) if str(n).startswith("core"))
             for c in range(4)}
    assert len(cores) == 4


def leaf_spine_pair():
    """2 leaves x 2 hosts, 2 spines, every link B: hosts 0, 1 on leaf0 send to 2, 3 on leaf1."""
    return leaf_spine(2, 2, 2, bandwidth=B, uplink_bandwidth=B, latency=LAT)


def spine_of(net, u, v, channel=0, ecmp=None, seed=0):
    return [n for n in net.path(u, v, channel, ecmp, seed) if n.startswith("spine")]


def test_leaf_spine_without_ecmp_one_spine_carries_both_flows():
    G = leaf_spine_pair()
    t = two_messages((0, 0), src=(0, 1), dst=(2, 3), ranks=4)
    net = Network(G)
    assert spine_of(net, "host0", "host2") == spine_of(net, "host1", "host3") == ["spine0"]
    # Both cross leaf0->spine0: max-min gives each B/2. Four hops of latency.
    assert simulate(t, G).makespan == pytest.approx(4 * LAT + 2 * SIZE / B, rel=1e-12)
    # Channels 0 and 1 spread them deterministically: each alone on its spine, full rate.
    t01 = two_messages((0, 1), src=(0, 1), dst=(2, 3), ranks=4)
    assert simulate(t01, G).makespan == pytest.approx(4 * LAT + SIZE / B, rel=1e-12)


def test_leaf_spine_ecmp_hash_spreads_flows_and_collides_as_hashing_does():
    G = leaf_spine_pair()
    net = Network(G)
    t = two_messages((0, 0), src=(0, 1), dst=(2, 3), ranks=4)
    apart = 0
    seeds = range(64)
    for seed in seeds:
        a = spine_of(net, "host0", "host2", ecmp="hash", seed=seed)
        b = spine_of(net, "host1", "host3", ecmp="hash", seed=seed)
        r = simulate(t, net, ecmp="hash", ecmp_seed=seed)
        end = result(t, G, ecmp="hash", ecmp_seed=seed, by=reference).ops["end"].tolist()
        if a != b:
            apart += 1
            # Different spines: each flow alone on every link, time = bytes / host rate.
            expected = 4 * LAT + SIZE / B
        else:
            expected = 4 * LAT + 2 * SIZE / B
        assert r.makespan == pytest.approx(expected, rel=1e-12)
        assert max(end) == pytest.approx(expected, rel=1e-12)
    # Two flows over two spines land apart with probability 1/2: 64 seeds give 32 +- 4
    # (binomial sd); 16..48 is a 4-sd band.
    assert 16 <= apart <= 48
    # The default seed 0 happens to put them apart (the example of the model page, docs/model.md).
    assert spine_of(net, "host0", "host2", ecmp="hash") == ["spine1"]
    assert spine_of(net, "host1", "host3", ecmp="hash") == ["spine0"]


def test_ecmp_hash_is_per_flow_and_deterministic():
    net = Network(leaf_spine_pair())
    s, d = net.node_of("host0"), net.node_of("host2")
    picks = {net.path_index(s, d, 0, "hash", 7) for _ in range(3)}
    assert len(picks) == 1
    per_channel = {net.path_index(s, d, c, "hash", 7) for c in range(32)}
    assert per_channel == {0, 1}
    # A pair with one path ignores the hash.
    assert net.path_index(net.node_of("host0"), net.node_of("host1"), 5, "hash", 7) == 0


def two_gpus(**attrs):
    G = nx.Graph()
    G.add_nodes_from(["gpu0", "gpu1"], kind="gpu")
    G.add_edge("gpu0", "gpu1", bandwidth=B, latency=LAT, **attrs)
    return G


def test_parallel_links_are_one_link_of_summed_bandwidth():
    # Two parallel links of rate B each: the edge's bandwidth is their sum, 2B;
    # ``links`` only counts them and is never multiplied in again.
    G = two_gpus(links=2)
    G.edges["gpu0", "gpu1"]["bandwidth"] = 2 * B
    assert Network(G).bandwidth.tolist() == [2 * B, 2 * B]
    one = two_messages((0,), src=(0,), dst=(1,))
    assert simulate(one, G).makespan == pytest.approx(LAT + SIZE / (2 * B), rel=1e-12)
    both = two_messages((0, 1))  # two channels share the merged link: B each
    assert simulate(both, G).makespan == pytest.approx(LAT + SIZE / B, rel=1e-12)
    end = result(both, G, by=reference).ops["end"].tolist()
    assert max(end) == pytest.approx(LAT + SIZE / B, rel=1e-12)


@pytest.mark.parametrize("attrs, match", [
    ({"links": 0}, "has links 0: it must be an integer >= 1 "
                   "\\(the number of parallel links its bandwidth sums\\)"),
    ({"links": 1.5}, "has links 1.5"),
    ({"links": True}, "has links True"),
    ({"efficiency": 0}, "has efficiency 0: it must be a number in \\(0, 1\\]"),
    ({"efficiency": 1.01}, "has efficiency 1.01"),
    ({"efficiency": "high"}, "has efficiency 'high'"),
])
def test_bad_links_and_efficiency_are_named(attrs, match):
    with pytest.raises(TopologyError, match=match):
        Network(two_gpus(**attrs))


def test_bad_ecmp_options_are_named():
    t = two_messages((0,), src=(0,), dst=(1,))
    with pytest.raises(TopologyError, match="unknown ecmp 'split'"):
        simulate(t, square(), ecmp="split")
    with pytest.raises(TopologyError, match="ecmp seed"):
        simulate(t, square(), ecmp="hash", ecmp_seed=-1)


def test_multigraph_error_points_to_links():
    with pytest.raises(TopologyError, match="'links' count"):
        Network(nx.MultiGraph([(0, 1)]))


@given(cases(), st.lists(st.integers(0, 5), min_size=1), st.sampled_from([None, "hash"]),
       st.integers(0, 2**32))
def test_engine_matches_reference_with_channels_and_ecmp(case, channels, ecmp, seed):
    """Random DAGs whose messages carry random channels, on random graphs (rings and
    graphs with extra links have equal-cost paths): the engine ends every op when the
    plain-Python reference does, both routing by the same (src, dst, channel) rule."""
    G, t = case
    ch = np.resize(np.asarray(channels, np.int16), t.num_ops)
    t = Trace(t.ranks, t.kind, t.rank, t.peer, t.size, t.duration, t.flops, t.iteration, t.tag,
              t.dep_ptr, t.dep_idx, tags=t.tags, channel=np.where(t.is_message, ch, 0))
    r = simulate(t, G, ecmp=ecmp, ecmp_seed=seed)
    end = result(t, G, ecmp=ecmp, ecmp_seed=seed, by=reference).ops["end"].tolist()
    assert r.ops["end"].tolist() == pytest.approx(end, rel=1e-9, abs=1e-15)
