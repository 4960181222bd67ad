"""The route found from both ends equals the full Dijkstra's, tie-breaks included.

The reference is the full search of :class:`netsim.network.compiled.Network` (asked for
every node at once, it sweeps from the source and keeps every route it settles); the
other is :func:`netsim.network.search.route_toward` on the same compiled graph. Graphs are
random, with latencies drawn from a few values so that equal-cost paths abound, leaves
(dead ends), rails on some nodes, and directed graphs with unreachable pairs.
"""

import random

import networkx as nx
import pytest

from netsim.network.compiled import Network
from netsim.network.search import route_toward
from topologies import gpu_cluster


def _random_graph(seed, directed):
    rng = random.Random(seed)
    n = rng.randint(4, 30)
    G = nx.gnm_random_graph(n, rng.randint(n - 1, 3 * n), seed=seed, directed=directed)
    for v in list(G.nodes)[: rng.randint(0, 4)]:   # leaves hung on the graph
        G.add_edge(v, f"leaf{v}")
        if directed:
            G.add_edge(f"leaf{v}", v)
    for v in G.nodes:
        if rng.random() < 0.4:
            G.nodes[v]["rail"] = rng.randint(0, 2)
    for u, v in G.edges:
        G.edges[u, v].update(bandwidth=1e9, latency=rng.choice([0.0, 1e-6, 2e-6]))
    return G


def _compare(net, pairs):
    adj_r, dead_in = net._reverse()
    full = {}
    for s, d in pairs:
        if s not in full:
            ref = Network(net.graph)
            ref._sweep(s, set(range(len(net.nodes))))   # the sweep, not the two-ended search
            full[s] = ref._routes
        got = route_toward(net._adj, adj_r, net._src_list, net._dead_end, net.off_rail(s), s, d,
                           dead_in)
        assert got == full[s].get((s, d)), (s, d)


@pytest.mark.parametrize("seed", range(60))
@pytest.mark.parametrize("directed", [False, True])
def test_random_graphs_route_alike(seed, directed):
    net = Network(_random_graph(seed, directed))
    n = len(net.nodes)
    _compare(net, [(s, d) for s in range(n) for d in range(n) if s != d])


def test_a_rail_cluster_routes_alike():
    """Four DGX H100 machines on rails: every GPU to every other, each through its own NIC
    where latencies tie (the case the two-ended search is for)."""
    net = Network(gpu_cluster("dgx_h100", 4))
    gpus = [net.node_of(f"gpu{i}") for i in range(32)]
    _compare(net, [(s, d) for s in gpus[::3] for d in gpus if s != d])


def test_network_routes_use_it_and_agree():
    """``Network.routes`` takes the two-ended search for a source's few targets, the sweep
    for many: the routes are the same either way."""
    G = gpu_cluster("dgx_h100", 3)
    a, b = Network(G), Network(G)
    src = [a.node_of(f"gpu{i}") for i in range(24)]
    dst = [a.node_of(f"gpu{(i + 8) % 24}") for i in range(24)]
    b._solve = b._sweep
    pa, la, _ = a.routes(src, dst)
    pb, lb, _ = b.routes(src, dst)
    assert (la[pa] == lb[pb]).all()
    assert len(a._routes) == 24 < len(b._routes)    # only the routes asked for are kept
