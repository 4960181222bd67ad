"""Topology validation, placement and routing."""

import networkx as nx
import pytest

from netsim import Network, TopologyError, TraceBuilder, check_topology, compute_nodes, simulate
from topologies import star


def G2(**attrs):
    G = nx.Graph()
    G.add_node("a", kind="host")
    G.add_node("b", kind="host")
    G.add_edge("a", "b", **attrs)
    return G


@pytest.mark.parametrize("attrs, needle", [
    ({}, "edge ('a', 'b') has no 'bandwidth'"),
    ({"bandwidth": 0.0}, "edge ('a', 'b') has bandwidth 0.0"),
    ({"bandwidth": -1.0}, "has bandwidth -1.0"),
    ({"bandwidth": float("nan")}, "has bandwidth nan"),
    ({"bandwidth": "10Gbps"}, "has bandwidth '10Gbps'"),
    ({"bandwidth": 1e9, "latency": -1e-6}, "has latency -1e-06"),
])
def test_bad_edges_are_named(attrs, needle):
    with pytest.raises(TopologyError, match="edge") as exc:
        Network(G2(**attrs))
    assert needle in str(exc.value)


def test_missing_latency_is_zero():
    assert Network(G2(bandwidth=1.0)).latency.tolist() == [0.0, 0.0]


def test_placement_errors():
    net = Network(star(3))
    with pytest.raises(TopologyError, match="node 'nowhere' is not in the topology"):
        net.placement(2, ["host0", "nowhere"])
    with pytest.raises(TopologyError, match="ranks 0 and 1 on the same node 'host1'"):
        net.placement(2, ["host1", "host1"])
    with pytest.raises(TopologyError, match="trace has 5 ranks but the topology has only 3"):
        net.placement(5)
    with pytest.raises(TopologyError, match="fewer than the trace's 3 ranks"):
        net.placement(3, ["host0"])


def test_disconnected_ranks():
    G = nx.Graph()
    for n in ("a", "b"):
        G.add_node(n, kind="host")
    G.add_edge("a", "s", bandwidth=1.0)
    with pytest.raises(TopologyError, match=r"ranks 0 \('a'\) and 1 \('b'\) have no path"):
        check_topology(G)
    b = TraceBuilder(2)
    b.message(0, 1, 1.0)
    with pytest.raises(TopologyError, match=r"ranks 0 \('a'\) and 1 \('b'\) have no path"):
        simulate(b.build(), G)


def test_multigraph_and_non_graph_rejected():
    with pytest.raises(TopologyError, match="multigraphs"):
        Network(nx.MultiGraph([("a", "b")]))
    with pytest.raises(TopologyError, match="networkx graph"):
        Network({"a": "b"})


def test_compute_nodes_order():
    G = nx.Graph()
    G.add_node("cpu0", kind="cpu")
    G.add_node("gpu1", kind="gpu")
    G.add_node("h", kind="host")
    G.add_node("gpu0", kind="gpu")
    assert compute_nodes(G) == ["gpu1", "gpu0"]  # gpus win, in graph order
    # No kind anywhere: the degree-1 nodes (a switch between two hosts is left out), and
    # every node when there is no leaf (a ring).
    assert compute_nodes(nx.path_graph(3)) == [0, 2]
    assert compute_nodes(nx.star_graph(4)) == [1, 2, 3, 4]
    assert compute_nodes(nx.cycle_graph(4)) == [0, 1, 2, 3]
    assert compute_nodes(nx.DiGraph([("a", "s"), ("s", "a"), ("s", "b"), ("b", "s")])) == ["a", "b"]
    # One kind anywhere turns the rule off: no gpu, no host, no compute node.
    G = nx.path_graph(3)
    G.nodes[1]["kind"] = "switch"
    assert compute_nodes(G) == []


def test_missing_latency_warns_and_is_zero():
    G = nx.Graph()
    G.add_edge("a", "s", bandwidth=1.0)
    G.add_edge("b", "s", bandwidth=1.0, latency=1e-6)
    with pytest.warns(UserWarning, match="^1 of 2 edges carry no latency: taken as 0 s$"):
        net = Network(G)
    assert sorted(net.latency.tolist()) == [0.0, 0.0, 1e-6, 1e-6]
    # A topology that gives every latency (a builder) warns about nothing.
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        Network(star(3))


def test_routes_are_cached_and_shortest_by_latency():
    G = nx.Graph()
    for n in "abc":
        G.add_node(n, kind="host")
    G.add_edge("a", "c", bandwidth=1.0, latency=5.0)
    G.add_edge("a", "b", bandwidth=1.0, latency=1.0)
    G.add_edge("b", "c", bandwidth=1.0, latency=1.0)
    net = Network(G)
    assert net.path("a", "c") == ["a", "b", "c"]  # 2 < 5 despite more hops
    assert (0, 2) in net._routes
