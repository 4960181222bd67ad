"""Hypothesis strategies: random topologies (trees, rings, random connected graphs) and
random valid traces (random DAGs of compute ops and messages)."""

import networkx as nx
from hypothesis import strategies as st

from netsim import TraceBuilder

bandwidths = st.one_of(st.sampled_from([1e3, 1.25e9, 1e13]), st.floats(1e3, 1e13))
latencies = st.one_of(st.just(0.0), st.sampled_from([1e-9, 1e-6, 1e-3]), st.floats(0.0, 1e-2))
# A message carries 0 bytes or at least 1 (Trace refuses sizes in (0, 1)).
sizes = st.one_of(st.sampled_from([0.0, 1.0, 1e12]), st.floats(1.0, 1e9))
seconds = st.one_of(st.just(0.0), st.floats(0.0, 10.0))


@st.composite
def topologies(draw, max_nodes=8):
    """A connected graph of hosts: a tree, a ring or a tree plus random extra links."""
    shape = draw(st.sampled_from(["tree", "ring", "random"]))
    n = draw(st.integers(2, max_nodes))
    directed = draw(st.booleans())
    G = nx.DiGraph() if directed else nx.Graph()
    for i in range(n):
        G.add_node(f"n{i}", kind="host")

    def link(a, b):
        G.add_edge(f"n{a}", f"n{b}", bandwidth=draw(bandwidths), latency=draw(latencies))
        if directed:
            G.add_edge(f"n{b}", f"n{a}", bandwidth=draw(bandwidths), latency=draw(latencies))

    if shape == "ring":
        for i in range(n):
            if n > 2 or i == 0:
                link(i, (i + 1) % n)
    else:
        for i in range(1, n):
            link(i, draw(st.integers(0, i - 1)))
        if shape == "random":
            for a, b in draw(st.lists(st.tuples(st.integers(0, n - 1), st.integers(0, n - 1)),
                                      max_size=n)):
                if a != b and not G.has_edge(f"n{a}", f"n{b}"):
                    link(a, b)
    return G


@st.composite
def traces(draw, ranks, max_ops=25):
    """A random DAG: each op waits for up to three earlier ops."""
    b = TraceBuilder(ranks)
    for i in range(draw(st.integers(1, max_ops))):
        deps = draw(st.lists(st.integers(0, i - 1), max_size=3, unique=True)) if i else []
        it = draw(st.integers(0, 2))
        if ranks > 1 and draw(st.booleans()):
            src = draw(st.integers(0, ranks - 1))
            dst = draw(st.integers(0, ranks - 2))
            dst += dst >= src  # any rank but src, without rejection sampling
            b.message(src, dst, draw(sizes), deps=deps, iteration=it)
        else:
            b.compute(draw(st.integers(0, ranks - 1)), seconds=draw(seconds), deps=deps, iteration=it)
    return b.build()


@st.composite
def cases(draw):
    G = draw(topologies())
    return G, draw(traces(G.number_of_nodes()))


@st.composite
def desync_traces(draw, ranks, max_steps=4):
    """Desynchronised traffic: per step, each rank waits a random compute gap, then sends.

    A ring (each step waits for the previous step's message received from the left
    neighbour) or independent chains (each rank waits only for its own last message).
    """
    ring = draw(st.booleans())
    b = TraceBuilder(ranks)
    last_sent = [None] * ranks
    for step in range(draw(st.integers(1, max_steps))):
        sent = []
        for r in range(ranks):
            deps = [d for d in (last_sent[r], last_sent[(r - 1) % ranks] if ring else None)
                    if d is not None]
            gap = b.compute(r, seconds=draw(seconds), deps=sorted(set(deps)), iteration=step)
            sent.append(b.message(r, (r + 1) % ranks, draw(sizes), deps=[gap], iteration=step))
        last_sent = sent
    return b.build()


@st.composite
def desync_cases(draw):
    G = draw(topologies(max_nodes=6))
    return G, draw(desync_traces(G.number_of_nodes()))
