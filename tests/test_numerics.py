"""Extremes: 1 B to 1 TB, 1 kB/s to 10 TB/s, zero latency; the safety net for stuck ops."""

import networkx as nx
import numpy as np
import pytest

from netsim import DeadlockError, Network, TraceBuilder, simulate
from netsim.engine.replay import replay

REL = 1e-9


def pair(bw, lat):
    G = nx.Graph()
    G.add_node("a", kind="host")
    G.add_node("b", kind="host")
    G.add_edge("a", "b", bandwidth=bw, latency=lat)
    return G


@pytest.mark.parametrize("nbytes", [1.0, 1e3, 1e9, 1e12])
@pytest.mark.parametrize("bw", [1e3, 1.25e9, 1e13])
@pytest.mark.parametrize("lat", [0.0, 1e-6])
def test_hockney_across_extremes(nbytes, bw, lat):
    b = TraceBuilder(2)
    b.message(0, 1, nbytes)
    r = simulate(b.build(), pair(bw, lat))
    assert r.makespan == pytest.approx(lat + nbytes / bw, rel=REL)
    assert np.isfinite(r.links["busy"]).all() and (r.links["busy"] >= 0).all()


def test_one_byte_and_one_terabyte_share_a_slow_link():
    # 1 kB/s, no latency: both at 500 B/s until the byte is through at 2 ms;
    # the terabyte then has 1e12 - 1 bytes left alone at 1e3 B/s.
    b = TraceBuilder(2)
    b.message(0, 1, 1.0)
    b.message(0, 1, 1e12)
    r = simulate(b.build(), pair(1e3, 0.0))
    assert r.ops["end"].tolist() == pytest.approx([2e-3, 2e-3 + (1e12 - 1) / 1e3], rel=REL)


def test_many_equal_messages_end_together_without_residue():
    # 1000 equal messages of 4/3 bytes (not a whole number, not exact in binary) on
    # 10 TB/s: floating residue must not leave stragglers or loop; all end at n*size/bw.
    b = TraceBuilder(2)
    for _ in range(1000):
        b.message(0, 1, 4 / 3)
    r = simulate(b.build(), pair(1e13, 0.0))
    assert r.ops["end"] == pytest.approx(np.full(1000, 1000 * 4 / 3 / 1e13), rel=REL)
    # One settle per distinct instant: t = 0 (all 1000 start, no latency) and the common
    # finish (all within FINISH_RTOL of it). Rates are solved once, at t = 0: at the finish
    # no flow is left to share the link.
    assert r.stats["settles"] == 2 and r.stats["rate_solves"] == 1


def test_stuck_ops_raise_deadlock_error_naming_them():
    # Bypass load-time validation to build a cycle (ops 0 <-> 1) with op 2 waiting on it.
    b = TraceBuilder(2)
    b.message(0, 1, 10)
    b.message(1, 0, 10, deps=[0])
    b.compute(0, seconds=1.0, deps=[1])
    t = b.build()
    t.dep_ptr = np.array([0, 1, 2, 3])
    t.dep_idx = np.array([1, 0, 1])
    net = Network(pair(1e3, 0.0))
    with pytest.raises(DeadlockError, match="3 ops can never run") as exc:
        replay(t, net, net.placement(2), t.compute_seconds())
    assert [s["op"] for s in exc.value.stuck] == [0, 1, 2]
    assert exc.value.stuck[2]["waits_for"] == [1]
