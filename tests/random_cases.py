"""Random small topologies and traces, from a seed, for property and equivalence tests."""

import networkx as nx
import numpy as np

from netsim import TraceBuilder

BANDWIDTHS = (1e3, 1e6, 1.25e9, 3e9, 1e10, 1e13)
LATENCIES = (0.0, 1e-7, 1e-6, 5e-6, 1e-3)


def random_topology(rng, nodes=None, directed=False):
    """A random connected graph: a random tree plus a few extra links."""
    n = int(nodes or rng.integers(2, 9))
    G = nx.DiGraph() if directed else nx.Graph()
    for i in range(n):
        G.add_node(f"n{i}", kind="host")

    def link(u, v):
        G.add_edge(u, v, bandwidth=float(rng.choice(BANDWIDTHS)), latency=float(rng.choice(LATENCIES)))
        if directed:
            G.add_edge(v, u, bandwidth=float(rng.choice(BANDWIDTHS)), latency=float(rng.choice(LATENCIES)))

    for i in range(1, n):
        link(f"n{i}", f"n{int(rng.integers(0, i))}")
    for _ in range(int(rng.integers(0, n))):
        a, b = rng.choice(n, size=2, replace=False)
        if not G.has_edge(f"n{a}", f"n{b}"):
            link(f"n{a}", f"n{b}")
    return G


def random_trace(rng, ranks, ops=None, max_deps=3):
    """A random DAG of compute ops and messages over ``ranks`` ranks."""
    n = int(ops or rng.integers(1, 30))
    b = TraceBuilder(ranks)
    for i in range(n):
        k = int(rng.integers(0, min(i, max_deps) + 1))
        deps = sorted(set(rng.choice(i, size=k, replace=False).tolist())) if k else []
        it = int(rng.integers(0, 3))
        if ranks > 1 and rng.random() < 0.7:
            src, dst = rng.choice(ranks, size=2, replace=False)
            size = float(rng.choice([0.0, 1.0, 1e3, 1e6, rng.uniform(1, 1e7)]))
            b.message(int(src), int(dst), size, deps=deps, iteration=it)
        else:
            b.compute(int(rng.integers(0, ranks)), seconds=float(rng.choice([0.0, 1e-6, rng.uniform(0, 1e-2)])),
                      deps=deps, iteration=it)
    return b.build()


def random_case(seed):
    """(graph, trace) from a seed."""
    rng = np.random.default_rng(seed)
    G = random_topology(rng, directed=bool(rng.random() < 0.2))
    return G, random_trace(rng, G.number_of_nodes())


def star(P, uneven=True):
    """P hosts on one switch, 1 us links of 1.25 GB/s times 1, 2, 3 in turn (``uneven``) or
    all equal (so that a flow's up and down links tie)."""
    G = nx.Graph()
    for i in range(P):
        G.add_node(f"h{i}", kind="host")
        G.add_edge(f"h{i}", "s", bandwidth=1.25e9 * ((1 + i % 3) if uneven else 1), latency=1e-6)
    return G


def jittered_allgather(P, seed, sizes=(1e5, 3e5, 1e6)):
    """Every rank computes a random time, then sends one of ``sizes`` to every other rank."""
    rng = np.random.default_rng(seed)
    b = TraceBuilder(P)
    for r in range(P):
        c = b.compute(r, seconds=float(rng.uniform(0, 1e-3)))
        for d in range(P):
            if d != r:
                b.message(r, d, float(rng.choice(sizes)), deps=[c])
    return b.build()
