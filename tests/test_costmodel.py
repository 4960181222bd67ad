"""Closed forms: exact against the engine on a non-blocking star, hand-checked values,
and the alpha-beta / contention helpers.

Every expected time comes from a formula (netsim.costmodel or a hand
computation written out here), never from a simulation.
"""

import inspect
import math

import networkx as nx
import pytest

from netsim import Network, NetsimError, TopologyError, TraceError, simulate
from netsim.comm import collectives as C
from netsim import costmodel as M
from topologies import star, two_tier

LAT, BW = 1e-6, 1.25e9  # 10 GbE, 1 us per link
ALPHA, BETA = 2 * LAT, 1 / BW  # host -> switch -> host

NAMES = [name for name in C.__all__ if name != "payloads"]


@pytest.fixture(scope="module")
def stars():
    cache = {}

    def get(hosts):
        if hosts not in cache:
            cache[hosts] = Network(star(hosts, bandwidth=BW, latency=LAT))
        return cache[hosts]

    return get


def variants(name):
    """Option sets to test for a generator: several k, gamma on and off, 1 and 3 servers."""
    params = inspect.signature(getattr(C, name)).parameters
    out = [{}]
    if "segments" in params:
        out = [{"segments": k} for k in (1, 4, 9)]
    if "gamma" in params:
        out = out + [{**out[-1], "gamma": 3e-10}]
    if "servers" in params:
        out = [{**o, "servers": s} for o in out for s in (1, 3)]
    return out


@pytest.mark.parametrize("P", [2, 3, 4, 5, 8, 16, 64])
@pytest.mark.parametrize("name", NAMES)
def test_simulation_equals_closed_form_on_a_star(name, P, stars):
    gen, formula = getattr(C, name), getattr(M, name)
    for nbytes in (1e3, 100e6):
        for opts in variants(name):
            trace = gen(P, nbytes, **opts)
            sim = simulate(trace, stars(trace.ranks)).makespan
            closed = formula(P, nbytes, alpha=ALPHA, beta=BETA, **opts)
            assert sim == pytest.approx(closed, rel=1e-6), (name, P, nbytes, opts)


def test_the_star_gives_alpha_and_beta():
    assert M.alpha_beta(star(3, bandwidth=BW, latency=LAT)) == (ALPHA, BETA)


# -- hand-computed values ------------------------------------------------------------------

a, b, g = 1e-6, 1e-9, 1e-10


def test_textbook_power_of_two_forms():
    n, P = 8e6, 8  # lg P = 3, (P - 1) / P = 7/8
    assert M.binomial_broadcast(P, n, a, b) == pytest.approx(3 * (a + n * b))
    assert M.binomial_reduce(P, n, a, b, g) == pytest.approx(3 * (a + n * b + n * g))
    assert M.recursive_doubling_allreduce(P, n, a, b, g) == pytest.approx(3 * (a + n * b + n * g))
    assert M.rabenseifner_allreduce(P, n, a, b, g) == pytest.approx(
        6 * a + 2 * 7 / 8 * n * b + 7 / 8 * n * g)
    # Terms: 6 a = 6 us, 2 (7/8) n b = 14 ms, (7/8) n g = 0.7 ms.
    assert M.rabenseifner_allreduce(P, n, a, b, g) == pytest.approx(6e-6 + 14e-3 + 0.7e-3)
    assert M.be_broadcast(P, n, a, b) == pytest.approx(6 * a + 2 * 7 / 8 * n * b)
    assert M.recursive_doubling_allgather(P, n, a, b) == pytest.approx(3 * a + 7 / 8 * n * b)
    assert M.recursive_halving_reduce_scatter(P, n, a, b, g) == pytest.approx(
        3 * a + 7 / 8 * n * (b + g))
    assert M.ring_allgather(P, n, a, b) == pytest.approx(7 * a + 7 / 8 * n * b)
    assert M.ring_allreduce(P, n, a, b, g) == pytest.approx(14 * a + 14 / 8 * n * b + 7 / 8 * n * g)
    assert M.alltoall(P, n, a, b) == pytest.approx(7 * (a + n * b / 8))


def test_non_power_of_two_forms():
    n, P = 6e6, 6  # p' = 4, rem = 2, L = 2, c = n / 6
    c = n / 6
    # MPICH's floor(lg p) + 2 steps, floor(lg p) + 1 reductions.
    assert M.recursive_doubling_allreduce(P, n, a, b, g) == pytest.approx(
        4 * (a + n * b) + 3 * n * g)
    assert M.rabenseifner_allreduce(P, n, a, b, g) == pytest.approx(
        (a + n * b + n * g) + (4 * a + 2 * 3 / 4 * n * b + 3 / 4 * n * g) + (a + n * b))
    assert M.be_broadcast(P, n, a, b) == pytest.approx(4 * a + 1.5 * n * b + a + n * b)
    # Core blocks of core rank 0 hold 2 chunks: steps carry (1+1) and (2+2) chunks.
    assert M.recursive_doubling_allgather(P, n, a, b) == pytest.approx(
        (a + c * b) + (2 * a + 6 * c * b) + (a + n * b))
    assert M.recursive_halving_reduce_scatter(P, n, a, b, g) == pytest.approx(
        (a + n * (b + g)) + (2 * a + 6 * c * (b + g)) + (a + c * b))
    assert M.binomial_broadcast(5, n, a, b) == pytest.approx(3 * (a + n * b))


def test_pipeline_forms():
    n, k = 1e6, 4
    tm = a + n * b / k
    assert M.pipeline_broadcast(5, n, k, a, b) == pytest.approx(7 * tm)
    assert M.pipeline_broadcast(2, n, k, a, b) == pytest.approx(k * a + n * b)
    assert M.pipeline_reduce(5, n, k, a, b) == M.pipeline_broadcast(5, n, k, a, b)
    # Reduction slower than the wire: the reducers set the pace.
    tc = n * 1e-8 / k
    assert tc > tm
    assert M.pipeline_reduce(5, n, k, a, b, 1e-8) == pytest.approx(4 * (tm + tc) + 3 * tc)
    assert M.pipeline_allreduce(5, n, k, a, b) == pytest.approx(14 * tm)
    # The paper's form counts one more segment time.
    assert M.linear_pipeline(5, n, k, a, b) - M.pipeline_broadcast(5, n, k, a, b) == \
        pytest.approx(tm)
    assert M.pipeline_broadcast(1, n, k, a, b) == 0.0


def test_parameter_server_forms():
    n = 1e6
    assert M.ps_push_pull(4, n, a, b) == pytest.approx(2 * (a + 4 * n * b))
    assert M.ps_push_pull(4, n, a, b, servers=2) == pytest.approx(2 * (a + 2 * n * b))
    # More servers than workers: each worker link carries all n bytes.
    assert M.ps_push_pull(2, n, a, b, servers=8) == pytest.approx(2 * (a + n * b))
    assert M.ps_push_pull(4, n, a, b, g, servers=2) == pytest.approx(
        2 * (a + 2 * n * b) + 3 * n / 2 * g)


def test_bandwidth_terms_meet_the_patarasuk_yuan_bound():
    for P in (2, 3, 8, 13, 64):
        bound = M.patarasuk_yuan_bound(P, 1e8, b)
        assert bound == pytest.approx(2 * (P - 1) / P * 1e8 * b)
        assert M.ring_allreduce(P, 1e8, 0.0, b) == pytest.approx(bound)
        assert M.rabenseifner_allreduce(P, 1e8, 0.0, b) >= bound * (1 - 1e-12)
        assert M.recursive_doubling_allreduce(P, 1e8, 0.0, b) >= bound * (1 - 1e-12)
    assert M.rabenseifner_allreduce(16, 1e8, 0.0, b) == pytest.approx(
        M.patarasuk_yuan_bound(16, 1e8, b))


def test_single_rank_costs_nothing():
    for name in NAMES:
        if name == "ps_push_pull":  # one worker still talks to its server
            continue
        params = inspect.signature(getattr(M, name)).parameters
        opts = {"segments": 3} if "segments" in params else {}
        assert getattr(M, name)(1, 1e6, alpha=a, beta=b, **opts) == 0.0


# -- optimal segments --------------------------------------------------------------------------

@pytest.mark.parametrize("P, n", [(3, 1e6), (8, 64e6), (64, 64e6), (16, 1e3), (2, 1e8), (40, 5e7)])
def test_optimal_segments_minimises_the_chain_time(P, n):
    k = M.optimal_segments(P, n, ALPHA, BETA)
    times = [M.pipeline_broadcast(P, n, j, ALPHA, BETA) for j in range(1, 5000)]
    assert M.pipeline_broadcast(P, n, k, ALPHA, BETA) == pytest.approx(min(times), rel=1e-12)
    if P > 2:
        assert abs(k - math.sqrt((P - 2) * n * BETA / ALPHA)) <= 1


def test_optimal_segments_edge_cases():
    assert M.optimal_segments(2, 1e9, ALPHA, BETA) == 1
    assert M.optimal_segments(10, 0, ALPHA, BETA) == 1
    assert M.optimal_segments(1000, 10, 1e-9, 1.0) == 10  # at most one byte per segment
    with pytest.raises(NetsimError, match="zero latency"):
        M.optimal_segments(8, 1e6, 0.0, BETA)


# -- alpha, beta and contention on a topology ------------------------------------------------------

def test_alpha_beta_on_two_tier():
    G = two_tier(8, 4, bandwidth=BW, uplink_bandwidth=BW / 4, latency=LAT)
    # All pairs: the worst path crosses the core (4 links) and a 4x slower uplink.
    assert M.alpha_beta(G) == (pytest.approx(4 * LAT), pytest.approx(4 / BW))
    # Within a rack: two host links.
    assert M.alpha_beta(G, placement=["host0", "host1", "host2"]) == (
        pytest.approx(2 * LAT), pytest.approx(1 / BW))
    # Only the pairs the trace uses: a broadcast chain inside rack 0.
    t = C.pipeline_broadcast(4, 1e6, segments=2)
    assert M.alpha_beta(G, trace=t) == (pytest.approx(2 * LAT), pytest.approx(1 / BW))
    assert M.alpha_beta(G, ranks=1) == (0.0, 0.0)


def test_alpha_beta_on_a_hand_built_graph():
    G = nx.Graph()
    G.add_nodes_from(["a", "b", "c"], kind="host")
    G.add_node("s", kind="switch")
    G.add_edge("a", "s", bandwidth=1e9, latency=1e-6)
    G.add_edge("b", "s", bandwidth=2e9, latency=3e-6)
    G.add_edge("c", "s", bandwidth=4e9, latency=5e-6)
    alpha, beta = M.alpha_beta(G)
    assert alpha == pytest.approx(8e-6) and beta == pytest.approx(1e-9)
    alpha, beta = M.alpha_beta(G, placement=["b", "c"])
    assert alpha == pytest.approx(8e-6) and beta == pytest.approx(1 / 2e9)


def test_contention_bound_by_hand():
    # All-to-all of 4 MB on 4 hosts: each host link direction carries 3 blocks of 1 MB.
    cb = M.contention_bound(C.alltoall(4, 4e6), star(4, bandwidth=1e9))
    assert cb["seconds"] == pytest.approx(3e-3) and cb["bytes"] == pytest.approx(3e6)
    # PS with one server: its link carries 4 pushes (in) and 4 pulls (out) of 1 MB.
    t = C.ps_push_pull(4, 1e6)
    loads = M.link_loads(t, star(5, bandwidth=1e9))
    assert sorted(loads.tolist())[-2:] == [4e6, 4e6]
    assert loads.sum() == pytest.approx(2 * t.total_bytes)  # two hops per message
    cb = M.contention_bound(t, star(5, bandwidth=1e9))
    assert cb["link"] in ("host4->switch", "switch->host4")
    assert M.contention_bound(C.ring_allreduce(1, 1e6), star(1))["link"] is None


# -- bad input -------------------------------------------------------------------------

def test_bad_input():
    with pytest.raises(NetsimError, match="alpha must be"):
        M.ring_allreduce(4, 1e6, -1e-6, b)
    with pytest.raises(NetsimError, match="beta must be"):
        M.ring_allreduce(4, 1e6, a, float("inf"))
    with pytest.raises(TraceError, match="P must be an integer >= 1, got 0$"):
        M.ring_allreduce(0, 1e6, a, b)
    with pytest.raises(TraceError, match="nbytes must be"):
        M.binomial_broadcast(4, -5, a, b)
    with pytest.raises(TraceError, match="segments must be an integer >= 1, got 0$"):
        M.pipeline_broadcast(4, 1e6, 0, a, b)
    with pytest.raises(TraceError, match="servers must be an integer >= 1, got 0$"):
        M.ps_push_pull(4, 1e6, a, b, servers=0)
    with pytest.raises(TopologyError, match="only 4 compute nodes"):
        M.alpha_beta(star(4), ranks=5)
    with pytest.raises(TopologyError, match="only 2 compute nodes"):
        M.contention_bound(C.ring_allreduce(3, 1e6), star(2))
    assert M.hockney(0, 0, 0) == 0.0  # alpha + n beta with every term 0


def test_routed_loads_agree_with_the_engine_and_the_bound_with_a_run():
    # Two implementations that must agree: the cost model routes the trace itself, the
    # engine records the bytes each link direction carried while replaying it.
    G = two_tier(8, per_rack=4, bandwidth=1e9, uplink_bandwidth=2e9)
    t = C.alltoall(8, 8e6)
    run = simulate(t, G)
    loads = M.link_loads(t, G)
    assert loads == pytest.approx(run.links["bytes"], rel=1e-12)
    # Rack uplinks carry the 4 x 4 cross-rack blocks of 1 MB each way, at 2 GB/s: 8 ms;
    # host links 7 MB at 1 GB/s: 7 ms. The bound is the uplink's.
    names = [f"{s}->{d}" for s, d in zip(run.links["src"], run.links["dst"])]
    from_run = M.busiest_link(run.links["bytes"], run.links["bandwidth"], names)
    assert from_run == M.contention_bound(t, G)
    assert from_run["seconds"] == pytest.approx(16e6 / 2e9) and from_run["bytes"] == 16e6
