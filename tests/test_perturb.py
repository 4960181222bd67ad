"""Heterogeneity at replay time (netsim.trace.perturb): hand-worked makespans and the statistics of
the draws."""

import math

import networkx as nx
import numpy as np
import pytest

from netsim import TraceBuilder, simulate
from netsim.errors import UnitError
from netsim.trace.perturb import compute_factors, jitter_factors, perturb, scale_compute
from netsim.units import parse_jitter, parse_straggler

C, BW, NBYTES = 0.5, 1e9, 1e6  # seconds of compute, bytes/s, bytes per message


def lockstep(iterations=3, flops=False):
    """Two ranks: compute, then swap a message; the next step of each rank waits for both
    messages (a barrier), so a step lasts the slower rank's compute plus one message."""
    b = TraceBuilder(2, metadata={"device_flops": 1e9})
    front = [[], []]
    for it in range(iterations):
        c = [b.compute(r, flops=C * 1e9, deps=front[r], iteration=it) if flops else
             b.compute(r, seconds=C, deps=front[r], iteration=it) for r in (0, 1)]
        m01 = b.message(0, 1, NBYTES, deps=[c[0]], iteration=it)
        m10 = b.message(1, 0, NBYTES, deps=[c[1]], iteration=it)
        front = [[c[0], m01, m10], [c[1], m01, m10]]
    return b.build()


def link():
    G = nx.Graph()
    G.add_edge("a", "b", bandwidth=BW, latency=0.0)
    return G


@pytest.mark.parametrize("flops", [False, True])
@pytest.mark.parametrize("k", [1.0, 2.5, 10.0])
def test_one_straggler_on_two_ranks_scales_the_makespan_exactly(k, flops):
    # Each step takes the slower rank's compute, then a message alone in each direction of
    # the full-duplex link: T = iterations * (k C + n / B).
    t = perturb(lockstep(flops=flops), straggler=f"0:{k}x")
    res = simulate(t, link())
    assert res.makespan == pytest.approx(3 * (k * C + NBYTES / BW), rel=1e-12)
    # The fast rank sends at C and receives at k C: busy C plus the union of the two transfers,
    # n / B + min(n / B, (k - 1) C); it idles the rest of the step.
    idle = (k - 1) * C - min(NBYTES / BW, (k - 1) * C)
    assert res.ranks["idle"][1] == pytest.approx(3 * idle, rel=1e-9, abs=1e-12)


def test_device_speed_is_the_inverse_of_a_straggler_factor():
    a = simulate(perturb(lockstep(), speed=[0.25, 1.0]), link()).makespan
    b = simulate(perturb(lockstep(), straggler="0:4x"), link()).makespan
    assert a == b == pytest.approx(3 * (4 * C + NBYTES / BW), rel=1e-12)


def test_perturbing_keeps_messages_dependencies_and_records_itself():
    t = lockstep()
    p = perturb(t, jitter="lognormal:0.2", straggler="1:3x", seed=7)
    for col in ("kind", "rank", "peer", "size", "iteration", "dep_ptr", "dep_idx"):
        np.testing.assert_array_equal(getattr(p, col), getattr(t, col))
    assert p.metadata["perturbation"] == {"seed": 7, "jitter": "lognormal:0.2",
                                          "straggler": "1:3x"}
    assert perturb(t) is t


def test_draws_are_deterministic_for_a_seed_and_streams_are_independent():
    t = lockstep(iterations=200)
    a = compute_factors(t, jitter="lognormal:0.3", seed=5)
    np.testing.assert_array_equal(a, compute_factors(t, jitter="lognormal:0.3", seed=5))
    assert not np.array_equal(a, compute_factors(t, jitter="lognormal:0.3", seed=6))
    # Random stragglers draw from their own stream: adding them leaves the jitter unchanged.
    s = compute_factors(t, straggler="p=0.2:5x", seed=5)
    both = compute_factors(t, jitter="lognormal:0.3", straggler="p=0.2:5x", seed=5)
    np.testing.assert_allclose(both, a * s, rtol=1e-15)
    assert np.all(compute_factors(t, jitter="lognormal:0.3")[t.is_message] == 1.0)


N = 200_000


@pytest.mark.parametrize("sigma", [0.05, 0.1, 0.5])
def test_lognormal_jitter_has_mean_one_within_its_standard_error(sigma):
    # exp(N(-s^2/2, s)) has mean 1 and variance exp(s^2) - 1; the sample mean of N draws is
    # within 5 standard errors of 1 (a failure has probability < 1e-6).
    f = jitter_factors(f"lognormal:{sigma}", N, seed=3)
    se = math.sqrt(math.expm1(sigma ** 2) / N)
    assert abs(f.mean() - 1.0) < 5 * se
    # ... and the log of the factors has standard deviation sigma (chi-square: rel. se 1/sqrt(2N)).
    assert abs(np.log(f).std() / sigma - 1) < 5 / math.sqrt(2 * N)


def test_uniform_jitter_mean_variance_and_support():
    lo, hi = 0.5, 1.5
    f = jitter_factors("uniform:0.5,1.5", N, seed=11)
    assert lo <= f.min() and f.max() <= hi
    assert abs(f.mean() - 1.0) < 5 * (hi - lo) / math.sqrt(12 * N)
    # Var U(a, b) = (b - a)^2 / 12; the sample variance's se is about sqrt(4/5 / N) of it.
    assert abs(f.var() / ((hi - lo) ** 2 / 12) - 1) < 5 * math.sqrt(0.8 / N)


def test_random_stragglers_hit_a_binomial_number_of_ops():
    t = lockstep(iterations=20_000)  # 40,000 compute ops
    p = 0.01
    f = compute_factors(t, straggler=f"p={p}:5x", seed=2)
    n = int((~t.is_message).sum())
    hits = int((f == 5.0).sum())
    assert set(np.unique(f).tolist()) == {1.0, 5.0}
    assert abs(hits - n * p) < 5 * math.sqrt(n * p * (1 - p))


def test_scaling_ops_given_in_flops_keeps_the_device_rate_applicable():
    t = perturb(lockstep(flops=True), straggler="0:2x")
    assert simulate(t, link(), device_flops=2e9).makespan == pytest.approx(
        3 * (2 * C / 2 + NBYTES / BW), rel=1e-12)


@pytest.mark.parametrize("spec, match", [
    ("gamma:1", "unknown jitter"),
    ("lognormal", "takes 1 parameter"),
    ("lognormal:-0.1", "must be a number > 0"),
    ("uniform:2,1", "LO <= HI"),
    ("uniform:0,1", "must be a number > 0"),
])
def test_bad_jitter_specs_are_refused(spec, match):
    with pytest.raises(UnitError, match=match):
        parse_jitter(spec)


@pytest.mark.parametrize("spec, match", [
    ("zero:10x", "must look like R:Kx"),
    ("0:0x", "must be a number > 0"),
    ("p=1.5:2x", r"in \[0, 1\]"),
    ("0:2x,0:3x", "given twice"),
    ("0:10x,", "must look like"),
])
def test_bad_straggler_specs_are_refused(spec, match):
    with pytest.raises(UnitError, match=match):
        parse_straggler(spec)


def test_a_straggler_or_speed_the_trace_lacks_is_refused():
    with pytest.raises(UnitError, match="straggler rank 5 is not in the trace"):
        perturb(lockstep(), straggler="5:2x")
    with pytest.raises(UnitError, match="speed has 3 entries"):
        perturb(lockstep(), speed=[1, 1, 1])
    with pytest.raises(UnitError, match="speed of rank 1 must be a number > 0"):
        perturb(lockstep(), speed={1: 0})
    with pytest.raises(UnitError, match="factors must be"):
        scale_compute(lockstep(), np.zeros(lockstep().num_ops))
