"""Scaling laws by term (netsim.analysis.scaling_laws): synthetic curves of known terms are classified."""

import numpy as np
import pytest

from netsim import costmodel
from netsim.errors import NetsimError
from netsim.analysis.scaling_laws import LAWS, collective_terms, fit_law, fit_terms

POW2 = np.array([2, 4, 8, 16, 32, 64], float)
RANGE = np.arange(2, 65, dtype=float)
F = {"(P-1)/P": lambda p: (p - 1) / p, "log2 P": np.log2, "sqrt P": np.sqrt, "P": lambda p: p,
     "P log2 P": lambda p: p * np.log2(p), "P^2": lambda p: p * p}
ALPHA, BETA = 2e-6, 8e-10  # a 10 GbE star: two hops of 1 us, 1 / 1.25e9 s per byte


@pytest.mark.parametrize("P", [POW2, RANGE], ids=["pow2", "2..64"])
@pytest.mark.parametrize("law", list(F))
def test_exact_laws_are_recovered(P, law):
    fit = fit_law(P, 3.0 + 2.0 * F[law](P))
    assert fit["law"] == law
    assert fit["a"] == pytest.approx(3.0) and fit["b"] == pytest.approx(2.0)
    assert fit["residual"] < 1e-12


@pytest.mark.parametrize("law", list(F))
def test_laws_survive_small_noise(law):
    # 0.1 % Gaussian noise on the 63 points of 2..64, where every law moves the curve by
    # far more than that; the seed is fixed, so the test is deterministic.
    rng = np.random.default_rng(1)
    y = (3.0 + 2.0 * F[law](RANGE)) * (1 + 1e-3 * rng.standard_normal(len(RANGE)))
    fit = fit_law(RANGE, y)
    assert fit["law"] == law
    assert 1e-4 < fit["residual"] < 1e-2


def test_constant_with_and_without_noise():
    assert fit_law(POW2, np.full(6, 7.0))["law"] == "constant"
    rng = np.random.default_rng(2)
    noisy = 7.0 * (1 + 1e-3 * rng.standard_normal(len(RANGE)))
    fit = fit_law(RANGE, noisy)
    assert fit["law"] == "constant" and fit["b"] == 0.0
    assert fit_law(POW2, np.zeros(6))["law"] == "zero"
    # Rounding errors far below REL_TOL do not make a constant grow.
    assert fit_law(POW2, 1.0 + 1e-13 * POW2)["law"] == "constant"


def _terms(formula, P, n=64e6, **kw):
    ts = [collective_terms(formula, int(p), n, ALPHA, BETA, **kw) for p in P]
    return {k: [t[k] for t in ts] for k in ("total", "latency", "bandwidth", "fill")}


@pytest.mark.parametrize("P", [POW2, RANGE], ids=["pow2", "2..64"])
def test_lp_with_k_tuned_per_P(P):
    # LP broadcast with k* re-optimised at each P: the latency term is the beta -> 0 limit
    # (k = 1): (P - 1) alpha, linear; the bandwidth term the alpha -> 0 limit (k -> inf):
    # n beta, constant; the fill is the rest, ~ 2 sqrt((P - 2) alpha n beta).
    t = _terms(costmodel.pipeline_broadcast, P)
    assert t["latency"] == pytest.approx((P - 1) * ALPHA, rel=1e-12)
    assert t["bandwidth"] == pytest.approx(np.full(len(P), 64e6 * BETA), rel=1e-9)
    fits = fit_terms(P, {k: t[k] for k in ("latency", "bandwidth")})
    assert fits["latency"]["law"] == "P" and fits["bandwidth"]["law"] == "constant"
    fill = np.array(t["fill"])
    assert fill[P > 2] == pytest.approx(2 * np.sqrt((P[P > 2] - 2) * ALPHA * 64e6 * BETA),
                                        rel=0.02)
    # The total is the tuned chain time (P + k* - 2)(alpha + n beta / k*).
    for p, total in zip(P, t["total"]):
        k = costmodel.optimal_segments(int(p), 64e6, ALPHA, BETA)
        assert total == pytest.approx((p + k - 2) * (ALPHA + 64e6 * BETA / k), rel=1e-12)


def test_lp_with_k_tuned_per_P_under_noise():
    rng = np.random.default_rng(3)
    t = _terms(costmodel.pipeline_broadcast, RANGE)
    noisy = {k: np.array(t[k]) * (1 + 1e-3 * rng.standard_normal(len(RANGE)))
             for k in ("latency", "bandwidth")}
    fits = fit_terms(RANGE, noisy)
    assert fits["latency"]["law"] == "P" and fits["bandwidth"]["law"] == "constant"


def test_lp_with_k_fixed_grows_linearly():
    # k fixed at the P = 64 optimum (1260): both terms are (P + k - 2) times a constant,
    # so both are linear in P (the slope of the bandwidth term is n beta / k), fill 0.
    t = _terms(costmodel.pipeline_broadcast, POW2, segments=1260)
    assert t["bandwidth"] == pytest.approx((POW2 + 1258) / 1260 * 64e6 * BETA, rel=1e-12)
    assert set(t["fill"]) == {0.0}
    fits = fit_terms(POW2, {k: t[k] for k in ("latency", "bandwidth")})
    assert fits["latency"]["law"] == "P" and fits["bandwidth"]["law"] == "P"


@pytest.mark.parametrize("noise", [0.0, 1e-3])
def test_mst_both_terms_log_P(noise):
    # Binomial broadcast: log2 P rounds of alpha + n beta (powers of two: exact log2 P).
    rng = np.random.default_rng(4)
    t = _terms(costmodel.binomial_broadcast, POW2)
    assert t["latency"] == pytest.approx(np.log2(POW2) * ALPHA)
    assert t["bandwidth"] == pytest.approx(np.log2(POW2) * 64e6 * BETA)
    noisy = {k: np.array(t[k]) * (1 + noise * rng.standard_normal(6))
             for k in ("latency", "bandwidth", "fill")}
    fits = fit_terms(POW2, noisy)
    assert fits["latency"]["law"] == fits["bandwidth"]["law"] == "log2 P"
    assert fits["fill"]["law"] == "zero"


def test_ring_and_reduction_terms():
    # Ring allreduce: 2 (P - 1) alpha (linear), 2 (P - 1) / P n beta, and a reduction term
    # (P - 1) / P n gamma of its own.
    ts = [collective_terms(costmodel.ring_allreduce, int(p), 1e6, ALPHA, BETA, gamma=1e-10)
          for p in POW2]
    assert [t["reduction"] for t in ts] == pytest.approx((POW2 - 1) / POW2 * 1e6 * 1e-10)
    fits = fit_terms(POW2, {k: [t[k] for t in ts] for k in ("latency", "bandwidth", "reduction")})
    assert [fits[k]["law"] for k in ("latency", "bandwidth", "reduction")] == [
        "P", "(P-1)/P", "(P-1)/P"]
    for t in ts:
        assert t["total"] == pytest.approx(t["latency"] + t["bandwidth"] + t["reduction"])


def test_bad_input():
    with pytest.raises(NetsimError, match="equal length"):
        fit_law([2, 4], [1.0])
    with pytest.raises(NetsimError, match="two distinct"):
        fit_law([4, 4], [1.0, 2.0])
    with pytest.raises(NetsimError, match="finite"):
        fit_law([2, 4, 8], [1.0, np.nan, 2.0])
    with pytest.raises(NetsimError, match=r"unknown law 'P\^3'"):
        fit_law([2, 4, 8], [1.0, 2.0, 3.0], laws=("P^3",))
    assert LAWS[0] == "constant"
