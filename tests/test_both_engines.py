"""The same checks through both engines: the main engine (SimPy-ordered, compiled batch path)
and the plain-Python reference engine return the same :class:`~netsim.engine.replay.Record`, so one
:class:`~netsim.Result` is built from either and held to the same expectations.

Hand-computed cases (a lone message, the parking lot, incast, a ring allreduce on a star
against its closed form) are checked on each engine's result; then the two results are
compared field by field (makespan, every op's start, transfer and end, every link
direction's bytes, messages, busy and saturated time, peak utilisation, peak flows and the
bytes its load series integrates to) on traces with and without contention.
"""

import networkx as nx
import numpy as np
import pytest

from engines import result
from netsim import TraceBuilder
from netsim.engine import replay as engine, reference
from netsim.comm.collectives import ps_push_pull, ring_allreduce
from netsim.costmodel import ring_allreduce as ring_closed_form
from netsim.engine.replay import Record
from random_cases import random_case
from topologies import star, two_tier

ENGINES = pytest.mark.parametrize("by", [engine, reference], ids=["engine", "reference"])
GB, MB = 1e9, 1e6


def path3():
    """hosts a - b - c in a line, 10 and 4 GB/s, no latency: the parking lot's links."""
    G = nx.Graph()
    G.add_nodes_from("abc", kind="host")
    G.add_edge("a", "b", bandwidth=10 * GB, latency=0.0)
    G.add_edge("b", "c", bandwidth=4 * GB, latency=0.0)
    return G


def link_of(r, src, dst):
    """Row of link direction src -> dst in ``r.links``."""
    rows = [i for i, (s, d) in enumerate(zip(r.links["src"], r.links["dst"]))
            if (s, d) == (src, dst)]
    assert len(rows) == 1
    return rows[0]


@ENGINES
def test_both_return_the_record(by):
    G, trace = random_case(3)
    from netsim import Network

    net = Network(G)
    rec = by.replay(trace, net, net.placement(trace.ranks), trace.compute_seconds())
    assert isinstance(rec, Record)
    assert rec.end.shape == rec.start.shape == rec.transfer.shape == (trace.num_ops,)
    assert rec.link_bytes.shape == rec.link_busy.shape == (net.num_links,)


@ENGINES
def test_a_lone_message_takes_latency_plus_bytes_over_bandwidth(by):
    b = TraceBuilder(2)
    b.message(0, 1, 100 * MB)
    r = result(b.build(), star(2, bandwidth=1.25 * GB, latency=1e-6), by)
    assert r.makespan == pytest.approx(2e-6 + 100 * MB / (1.25 * GB), rel=1e-12)
    assert r.ops["transfer"].tolist() == [pytest.approx(2e-6, rel=1e-12)]
    assert r.links["bytes"].sum() == 2 * 100 * MB  # host0 -> switch -> host1
    assert r.links["peak_flows"].max() == 1 and r.links["peak_util"].max() == pytest.approx(1.0)


@ENGINES
def test_the_parking_lot_gets_its_max_min_shares(by):
    # Flow x crosses a->b (10 GB/s) and b->c (4 GB/s), y only a->b, z only b->c, 2 GB each.
    # Max-min: b->c is the bottleneck, x and z get 2 GB/s, y the 8 GB/s x leaves on a->b.
    # y ends at 0.25 s; x and z at 1 s (nothing frees b->c before then).
    b = TraceBuilder(3)
    b.message(0, 2, 2 * GB)  # x
    b.message(0, 1, 2 * GB)  # y
    b.message(1, 2, 2 * GB)  # z
    r = result(b.build(), path3(), by)
    assert r.ops["end"].tolist() == pytest.approx([1.0, 0.25, 1.0], rel=1e-12)
    ab, bc = link_of(r, "a", "b"), link_of(r, "b", "c")
    assert r.links["peak_flows"][[ab, bc]].tolist() == [2, 2]
    assert r.links["busy"][[ab, bc]].tolist() == pytest.approx([1.0, 1.0], rel=1e-12)
    # a->b is full while y runs (0.25 s), then carries x alone at 2 of 10 GB/s.
    assert r.links["saturated"][[ab, bc]].tolist() == pytest.approx([0.25, 1.0], rel=1e-12)


@ENGINES
def test_incast_shares_the_sink_link_equally(by):
    # Four hosts send 1 MB each to host4 over 1 GB/s links: they share its link, 4 ms.
    b = TraceBuilder(5)
    for src in range(4):
        b.message(src, 4, MB)
    r = result(b.build(), star(5, bandwidth=GB, latency=0.0), by)
    assert r.ops["end"].tolist() == pytest.approx([4e-3] * 4, rel=1e-12)
    sink = link_of(r, "switch", "host4")
    assert r.links["peak_flows"][sink] == 4 and r.links["bytes"][sink] == 4 * MB


@ENGINES
def test_ring_allreduce_on_a_star_is_its_closed_form(by):
    P, n, bw, lat = 4, 64 * MB, 1.25 * GB, 1e-6
    r = result(ring_allreduce(P, n), star(P, bandwidth=bw, latency=lat), by)
    assert r.makespan == pytest.approx(ring_closed_form(P, n, 2 * lat, 1 / bw), rel=1e-12)


def integrated(r):
    """Bytes each link direction's load series integrates to."""
    s = r.link_series
    out = np.zeros(len(r.links["bytes"]))
    for k in np.unique(s["link"]):
        sel = np.flatnonzero(s["link"] == k)
        order = sel[np.argsort(s["time"][sel], kind="stable")]
        t, load = s["time"][order], s["load"][order]
        assert load[-1] == 0.0
        out[k] = float(np.sum(load[:-1] * np.diff(t)))
    return out


def contended_cases():
    """(name, graph, trace): shared links of several kinds, and random DAGs."""
    yield "ring on an oversubscribed two-tier", two_tier(8, per_rack=4, bandwidth=1.25 * GB,
                                                         uplink_bandwidth=0.3 * GB), \
        ring_allreduce(8, 16 * MB)
    yield "parameter server incast", star(7, bandwidth=1.25 * GB), ps_push_pull(6, 8 * MB)
    b = TraceBuilder(3)
    b.message(0, 2, 2 * GB)
    b.message(0, 1, 2 * GB)
    b.message(1, 2, 2 * GB)
    yield "parking lot", path3(), b.build()
    for seed in (0, 5, 11, 17, 42):
        G, trace = random_case(seed)
        yield f"random case {seed}", G, trace


@pytest.mark.parametrize("name, G, trace", list(contended_cases()),
                         ids=[c[0] for c in contended_cases()])
def test_both_engines_give_the_same_result(name, G, trace):
    main = result(trace, G, engine, link_series=True)
    ref = result(trace, G, reference, link_series=True)
    assert main.makespan == pytest.approx(ref.makespan, rel=1e-9, abs=1e-15)
    for col in ("start", "transfer", "end"):
        assert np.array_equal(np.isnan(main.ops[col]), np.isnan(ref.ops[col])), col
        done = ~np.isnan(main.ops[col])
        assert main.ops[col][done].tolist() == pytest.approx(ref.ops[col][done].tolist(),
                                                             rel=1e-9, abs=1e-15), col
    span = 1e-9 * ref.makespan + 1e-15
    for col in ("messages", "peak_flows"):  # counts: exact
        assert main.links[col].tolist() == ref.links[col].tolist(), col
    # Bytes are sums over the messages crossing a link, added in another order.
    assert main.links["bytes"].tolist() == pytest.approx(ref.links["bytes"].tolist(), rel=1e-12)
    for col in ("busy", "saturated"):
        assert main.links[col].tolist() == pytest.approx(ref.links[col].tolist(), rel=1e-9,
                                                         abs=span), col
    assert main.links["peak_util"].tolist() == pytest.approx(ref.links["peak_util"].tolist(),
                                                             rel=1e-9)
    # The load series differ in how they are cut (the reference re-solves every flow at
    # every instant), not in what they carry: each integrates to the link's bytes.
    scale = 1e-9 * max(1.0, float(ref.links["bytes"].max(initial=0.0)))
    assert integrated(main).tolist() == pytest.approx(integrated(ref).tolist(), abs=scale)
    assert integrated(ref).tolist() == pytest.approx(ref.links["bytes"].tolist(), abs=scale)
