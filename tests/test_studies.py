"""Studies: compare() on uncontended and contended topologies, scaling fits, the
linear-pipelining claims, plots, and bad input.

Expected numbers are derived by hand in each test, never from a simulation.
"""

import numpy as np
import pytest

from netsim import NetsimError, TopologyError, TraceError
from netsim.comm import collectives as C
from netsim import costmodel as M
from netsim.analysis import collectives as S
from studies.claims.reproduce import pipelining_claims
from topologies import star, two_tier

LAT, BW = 1e-6, 1.25e9  # 10 GbE, 1 us per link


def test_registries():
    assert list(S.NAMED_SCHEDULES) == list(S.FORMULAS)
    for name, gen in S.NAMED_SCHEDULES.items():
        assert S.FORMULAS[name] is getattr(M, gen.__name__)
    assert {g.__name__ for g in S.NAMED_SCHEDULES.values()} == set(C.__all__) - {"payloads"}
    with pytest.raises(TypeError):
        S.NAMED_SCHEDULES["mine"] = C.ring_allreduce  # read-only: no global mutable state


@pytest.mark.parametrize("name", list(S.NAMED_SCHEDULES))
def test_compare_on_a_star_has_no_gap(name):
    P = 5
    rec = S.compare(name, star(P + 1, bandwidth=BW, latency=LAT), P, 1e6, gamma=1e-10)
    assert rec["algorithm"] == name and rec["P"] == P
    assert rec["alpha"] == pytest.approx(2 * LAT) and rec["beta"] == pytest.approx(1 / BW)
    assert abs(rec["gap"]) < 1e-9
    assert rec["limit"] is None and rec["limit_peak_flows"] is None
    assert rec["contention_bound"] <= rec["simulated"]
    if name.startswith("lp"):
        assert rec["segments"] == M.optimal_segments(P, 1e6, 2 * LAT, 1 / BW)
    else:
        assert rec["segments"] is None


def test_compare_lp_with_given_segments():
    rec = S.compare("lp", star(8, bandwidth=BW, latency=LAT), 8, 1e6, segments=5)
    assert rec["segments"] == 5 and rec["messages"] == 35
    assert rec["closed_form"] == pytest.approx(11 * (2 * LAT + 1e6 / BW / 5))


def test_oversubscribed_uplink_is_named_as_the_limit():
    """Ring allreduce on two racks of 4 hosts with ranks alternating between racks.

    Every ring message crosses the core, so each step 4 messages share each
    uplink direction (bandwidth U = one host link, a 4:1 oversubscription):
    a step takes 4 l + (n / 8) / (U / 4), where 4 l is the 4-link path latency.
    Uncontended, the closed form has alpha = 4 l, beta = 1 / U: a step of
    4 l + (n / 8) / U. The uplink tor0 -> core carries 14 steps x 4 chunks of
    n / 8 = 7 n bytes, so the contention bound is 7 n / U, and the simulation
    is that plus 14 latencies.
    """
    U, n, P = BW, 100e6, 8
    G = two_tier(8, 4, bandwidth=BW, uplink_bandwidth=U, latency=LAT)
    placement = [f"host{(r % 2) * 4 + r // 2}" for r in range(P)]
    rec = S.compare("ring", G, P, n, placement=placement)
    c = n / P
    simulated = 14 * (4 * LAT + 4 * c / U)
    closed = 14 * (4 * LAT + c / U)
    bound = 7 * n / U
    assert rec["alpha"] == pytest.approx(4 * LAT) and rec["beta"] == pytest.approx(1 / U)
    assert rec["closed_form"] == pytest.approx(closed, rel=1e-12)
    assert rec["simulated"] == pytest.approx(simulated, rel=1e-9)
    assert rec["simulated"] > 3.9 * rec["closed_form"]
    assert rec["gap"] == pytest.approx(simulated / closed - 1, rel=1e-9)
    assert rec["contention_bound"] == pytest.approx(bound, rel=1e-12)
    assert rec["simulated"] == pytest.approx(bound + 14 * 4 * LAT, rel=1e-9)
    assert rec["simulated"] == pytest.approx(rec["contention_bound"], rel=1e-3)
    uplinks = {"tor0->core", "core->tor1", "tor1->core", "core->tor0"}
    assert rec["limit"] in uplinks and rec["bound_link"] in uplinks
    assert rec["limit_peak_flows"] == 4
    assert rec["limit_saturated"] == pytest.approx(14 * 4 * c / U, rel=1e-9)


def test_uncontended_two_tier_matches_the_worst_pair():
    """Default placement: one message per step crosses each uplink direction, alone.

    Rank 3's chain of 14 cross-rack sends is the longest path: 14 (4 l + (n / 8) / U),
    the closed form with the worst pair's alpha and beta.
    """
    U, n = BW / 2, 100e6
    G = two_tier(8, 4, bandwidth=BW, uplink_bandwidth=U, latency=LAT)
    rec = S.compare("ring", G, 8, n)
    assert rec["simulated"] == pytest.approx(14 * (4 * LAT + n / 8 / U), rel=1e-9)
    assert abs(rec["gap"]) < 1e-9 and rec["limit"] is None


def test_shared_server_link_in_ps():
    # Four workers push 1 MB to one server over a 4:1 shared link: hand-computed.
    rec = S.compare("ps", star(5, bandwidth=BW, latency=LAT), 4, 1e6)
    assert rec["ranks"] == 5 and rec["messages"] == 8
    assert rec["simulated"] == pytest.approx(2 * (2 * LAT + 4e6 / BW), rel=1e-9)
    assert rec["contention_bound"] == pytest.approx(4e6 / BW)


# -- scaling ----------------------------------------------------------------------------------

POW2 = np.array([2, 4, 8, 16, 32, 64], float)
RANGE = np.arange(2, 65, dtype=float)


@pytest.mark.parametrize("P", [POW2, RANGE], ids=["pow2", "2..64"])
@pytest.mark.parametrize("law, f", [("log2 P", np.log2), ("P", lambda p: p),
                                    ("(P-1)/P", lambda p: (p - 1) / p)])
def test_fit_scaling_recovers_exact_laws(P, law, f):
    fit = S.fit_scaling(P, 3.0 + 2.0 * f(P))
    assert fit["law"] == law
    assert fit["r2"] == pytest.approx(1.0)
    assert fit["a"] == pytest.approx(3.0) and fit["b"] == pytest.approx(2.0)
    assert not fit["no_single_law"]


def test_fit_scaling_constant_and_no_law():
    fit = S.fit_scaling(POW2, [1.0, 1.02, 1.01, 1.03, 1.0, 1.01])
    assert fit["law"] == "constant" and fit["r2"] is None and fit["b"] == 0.0
    assert fit["spread"] == pytest.approx(0.03)
    zigzag = S.fit_scaling(POW2, [1.0, 5.0, 1.0, 5.0, 1.0, 5.0])
    assert zigzag["no_single_law"]
    assert max(f["r2"] for f in zigzag["fits"].values()) < 0.95
    # A wider "flat" threshold turns a 10 % spread into a constant.
    assert S.fit_scaling(POW2, 1 + 0.1 * np.log2(POW2) / 6, flat=0.15)["law"] == "constant"


def test_fit_scaling_prefers_the_simplest_law_within_the_margin():
    # On P = 16..64, (P-1)/P and log2 P both fit a slowly saturating series well.
    P = np.array([16, 24, 32, 48, 64], float)
    T = 1 + 0.5 * (P - 1) / P + 1e-4 * np.log2(P)
    fit = S.fit_scaling(P, T, flat=0.0)
    assert fit["fits"]["(P-1)/P"]["r2"] > 0.99
    assert fit["law"] == "(P-1)/P"


def test_fit_scaling_bad_input():
    with pytest.raises(NetsimError, match="equal length"):
        S.fit_scaling([2, 4], [1.0])
    with pytest.raises(NetsimError, match="two distinct"):
        S.fit_scaling([4, 4, 4], [1.0, 2.0, 3.0])
    with pytest.raises(NetsimError, match="> 0"):
        S.fit_scaling([2, 4, 8], [1.0, 0.0, 2.0])


def test_scale_records_and_plot(tmp_path):
    recs = S.scale(["mst", "ring", "ps"], [2, 4, 8], 1e6,
                   lambda hosts: star(hosts, bandwidth=BW, latency=LAT))
    assert [(r["algorithm"], r["P"]) for r in recs] == [
        (a, p) for a in ("mst", "ring", "ps") for p in (2, 4, 8)]
    for r in recs:
        assert abs(r["gap"]) < 1e-9
    mst = [r["simulated"] for r in recs if r["algorithm"] == "mst"]
    assert mst == pytest.approx([k * (2 * LAT + 1e6 / BW) for k in (1, 2, 3)])
    out = S.plot_scale(recs, tmp_path / "scale.png", title="10 GbE star", logy=True)
    with open(out, "rb") as f:
        assert f.read(8) == b"\x89PNG\r\n\x1a\n"


# -- the linear-pipelining claims (arXiv:1611.04255) --------------------------------------------

@pytest.fixture(scope="module")
def claims():
    """10 GbE star (1.25e9 B/s, 1 us per link), n = 64 MB, P = 2, 4, ..., 64;
    LP with k fixed at the optimum for P = 64 (1260 segments);
    BE / LP ratio at P = 64 for n = 100 kB .. 100 MB."""
    return pipelining_claims()


def test_lp_broadcast_is_constant_in_P(claims):
    lp = claims["lp"]
    assert lp["segments"] == 1260
    # Exact chain time (P + k - 2)(alpha + n beta / k): 4.9 % apart from P = 2 to 64.
    alpha, beta, n, k = 2 * LAT, 1 / BW, 64e6, 1260
    want = [(p + k - 2) * (alpha + n * beta / k) for p in (2, 4, 8, 16, 32, 64)]
    assert [r["simulated"] for r in lp["records"]] == pytest.approx(want, rel=1e-9)
    assert lp["fit"]["spread"] == pytest.approx(62 / 1260, rel=1e-6)
    # 4.9 % lies within 2 % of the 5 % "flat" rule, so only the rule is checked here; the
    # verdict is the claims' business.
    assert (lp["fit"]["law"] == "constant") == (lp["fit"]["spread"] < 0.05)


def test_mst_broadcast_grows_as_log_P(claims):
    mst = claims["mst"]
    assert mst["fit"]["law"] == "log2 P" and mst["fit"]["r2"] == pytest.approx(1.0)
    assert mst["fit"]["b"] == pytest.approx(2 * LAT + 64e6 / BW)


def test_be_over_lp_ratio_approaches_two(claims):
    rows = claims["ratio"]
    ratios = [r["ratio"] for r in rows]
    assert ratios == sorted(ratios)  # grows with n
    assert ratios[0] < 1 < ratios[-1]  # latency-bound small messages favour BE
    assert rows[-1]["limit"] == pytest.approx(2 * 63 / 64)
    assert ratios[-1] < rows[-1]["limit"]
    # The largest size against the closed forms (BE; LP at its optimal k), which a star
    # reproduces exactly; 1.82 lies too near the claim's 1.8 to assert the verdict here.
    n, alpha, beta = rows[-1]["nbytes"], 2 * LAT, 1 / BW
    k = M.optimal_segments(64, n, alpha, beta)
    want = M.be_broadcast(64, n, alpha, beta) / M.pipeline_broadcast(64, n, k, alpha, beta)
    assert ratios[-1] == pytest.approx(want, rel=1e-9)
    # From the closed forms at a size too large to simulate here: nearer still.
    n, alpha, beta = 1e10, 2 * LAT, 1 / BW
    k = M.optimal_segments(64, n, alpha, beta)
    far = M.be_broadcast(64, n, alpha, beta) / M.pipeline_broadcast(64, n, k, alpha, beta)
    assert ratios[-1] < far < 2 * 63 / 64


# -- bad input ---------------------------------------------------------------------------------

def test_bad_input():
    G = star(4)
    with pytest.raises(NetsimError, match="unknown algorithm 'bogus'; known: mst, ") as info:
        S.compare("bogus", G, 4, 1e6)
    assert type(info.value) is NetsimError and "\n" not in str(info.value)
    with pytest.raises(TraceError, match="P must be an integer >= 1"):
        S.compare("ring", G, 0, 1e6)
    with pytest.raises(TraceError, match="nbytes must be"):
        S.compare("ring", G, 4, -1)
    with pytest.raises(TraceError, match="segments must be an integer >= 1"):
        S.compare("lp", G, 4, 1e6, segments=0)
    with pytest.raises(TopologyError, match="5 ranks but the topology has only 4"):
        S.compare("ring", G, 5, 1e6)
    with pytest.raises(TopologyError, match="5 ranks but the topology has only 4"):
        S.compare("ps", G, 4, 1e6)
    with pytest.raises(NetsimError, match="unknown algorithm"):
        S.scale(["ring", "nope"], [2], 1e6, star)
    # Zero bytes: only latency is left. 2(P-1) = 6 dependent ring steps, each message
    # crossing 2 links (host -> switch -> host) of the star's default 1 us.
    assert S.compare("ring", G, 4, 0)["simulated"] == pytest.approx(6 * 2 * LAT, rel=1e-9)
