"""The seed papers' claims (studies.claims) and `netsim claims`."""

import json

import pytest

from studies.cli import main
from studies import claims, report

KEYS = {"claim", "source", "setup", "measured", "threshold", "value", "passed", "seconds"}


def _check_rows(rows):
    for r in rows:
        assert set(r) == KEYS
        assert r["claim"] and r["source"] and r["threshold"] and r["measured"]
        assert isinstance(r["passed"], bool) and r["seconds"] >= 0


def test_lp_claims_verdicts_follow_the_study(monkeypatch):
    # The numbers of pipelining_claims are checked exactly in test_studies.py; here only the
    # rows' verdict logic, on fake studies either side of each threshold.
    def fake(lp_law, spread, mst_law, r2, ratio):
        fit = lambda law, r2_, spread_: {"law": law, "r2": r2_, "spread": spread_,
                                         "no_single_law": r2_ is not None and r2_ < 0.95}
        return lambda **kw: {"lp": {"segments": 1260, "fit": fit(lp_law, None, spread)},
                             "mst": {"segments": None, "fit": fit(mst_law, r2, 1.0)},
                             "ratio": [{"nbytes": 1e8, "ratio": ratio, "limit": 2 * 63 / 64}]}

    monkeypatch.setattr(claims, "pipelining_claims", fake("constant", 0.049, "log2 P", 0.99, 1.8))
    rows = claims.lp_claims()
    _check_rows(rows)
    assert [r["value"] for r in rows] == [0.049, 0.99, 1.8]
    assert [r["passed"] for r in rows] == [True, True, True]
    monkeypatch.setattr(claims, "pipelining_claims", fake("P", 0.2, "P", 0.9, 1.79))
    assert [r["passed"] for r in claims.lp_claims()] == [False, False, False]


def test_ringtmp_claim_fails_honestly_and_reports_accuracy():
    row = claims.ringtmp_claim(seeds=1)[0]
    _check_rows([row])
    # Best configuration: digits 64-(32 x 7)-10 by layer on P = 8 nodes, n = 64*32+32 +
    # 6*(32*32+32) + 32*10+10 = 8746 parameters. Per step ps-sync moves 2 P 4n bytes; the
    # ring sends 7 activations forward and 7 gradients back, each (P x 8 rows) x 32 float32.
    assert row["value"] == pytest.approx(2 * 8 * 4 * 8746 / (2 * 7 * 64 * 32 * 4), rel=1e-12)
    assert row["passed"] == (row["value"] >= 8.0) and not row["passed"]
    assert row["measured"].count("acc delta") == 3


def test_pf_claims_traffic_and_speedup():
    traffic, speed = claims.pf_claims()
    _check_rows([traffic, speed])
    # ps-sync moves 2 P 4n bytes per step (push + pull of n = 64*64+64 + 64*10+10 = 4810
    # float32 values per worker, P = 4) over the same steps as PF.
    from workloads import pf

    pfr = pf.run(tau0=0.05, dataset="digits", hidden=(64,), epochs=3, workers=4, seed=0)
    ps_bytes = pfr.trace.num_iterations * 2 * 4 * 4 * 4810
    assert traffic["value"] == pytest.approx(ps_bytes / pfr.total_bytes, rel=1e-12)
    # The cut sits within 1 % of its 4.1x threshold, so the verdict is left to the claims
    # work; here the rule, and a band: the value-bounded filter at tau0 = 0.05 over 3 epochs
    # sends roughly a quarter of ps-sync's bytes. A filter that stopped filtering gives 1x.
    assert not traffic["passed"] or traffic["value"] >= 12.3 / 3.0
    assert 3.0 < traffic["value"] < 6.0
    assert speed["passed"] == (speed["value"] >= 4.3)
    # PF's traffic cut cannot give 4.3x where communication is 5.7x compute: at most
    # (1 + 5.7) / (1 + 5.7 / cut) = 2.8x, far below 4.3x.
    assert 1.0 < speed["value"] < (1 + 5.7) / (1 + 5.7 / traffic["value"]) + 0.1
    assert not speed["passed"]


def test_partition_claim_measures_the_favourable_setting():
    row = claims.partition_claim()[0]
    _check_rows([row])
    from workloads import ps_partitioned

    c = ps_partitioned.compare(workers=16, servers=4, epochs=20, seed=0,
                               dataset_options={"locality": 1.0, "n_clusters": 16})
    assert row["value"] == pytest.approx(c["random"].total_bytes / c["metis"].total_bytes,
                                         rel=1e-12)
    assert row["value"] > 1  # the direction is the claim; the 14x is the threshold
    assert row["passed"] == (row["value"] >= 14.0)


def test_dgc_claim_after_warmup():
    row = claims.dgc_claim()[0]
    _check_rows([row])
    # Digits MLP 64-128-10: layers of 64*128+128 = 8320 and 128*10+10 = 1290 values; after
    # warm-up 0.1 % of each is kept: k = ceil(8.32) + ceil(1.29) = 9 + 2 = 11 values of
    # 8 bytes against 9610 dense float32 values.
    assert row["value"] == pytest.approx(4 * 9610 / (8 * 11), rel=1e-12)
    assert row["passed"] == (row["value"] >= 270) and row["passed"]


def test_slimdp_claim():
    row = claims.slimdp_claim()[0]
    _check_rows([row])
    # Per worker-step ps-sync moves 8n bytes (4n push + 4n pull, n = 4810 for 64-64-10);
    # Slim-DP K = round(0.3 n) = 1443 values, pushed at 8 bytes (value + index) and pulled
    # at 4: 12K. The step counts are equal, so the ratio is 8n / (12 K).
    assert row["value"] == pytest.approx(8 * 4810 / (12 * 1443), rel=1e-12)
    assert row["passed"]


def test_format_claims_shows_every_fail():
    rows = [{"claim": "a", "source": "s", "setup": "x", "measured": "m", "threshold": "t",
             "value": 1.0, "passed": False, "seconds": 0.0},
            {"claim": "b", "source": "s", "setup": "x", "measured": "m", "threshold": "t",
             "value": 1.0, "passed": True, "seconds": 0.0}]
    text = report.format_claims(rows)
    assert "FAIL" in text and "PASS" in text
    md = report.format_claims(rows, markdown=True)
    assert md.count("\n") == 3 and md.splitlines()[2].endswith("| FAIL |")


def test_cli_claims_exits_0_with_fails(monkeypatch, capsys):
    fake = [{"claim": "x", "source": "s", "setup": "u", "measured": "m", "threshold": ">= 8x",
             "value": 2.0, "passed": False, "seconds": 0.0}]
    monkeypatch.setattr(claims, "run_claims", lambda seed=0: fake)
    assert main(["claims"]) == 0
    out = capsys.readouterr()
    assert "FAIL" in out.out and "1 FAIL" in out.err
    assert main(["claims", "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == fake


def test_cli_claims_help_says_fail_is_not_an_error(capsys):
    with pytest.raises(SystemExit):
        main(["claims", "--help"])
    assert "exit status is 0" in " ".join(capsys.readouterr().out.split())


@pytest.mark.slow
def test_netsim_claims_full_run(capsys):
    # Its wall time is printed by the command itself (17 s on two cores).
    assert main(["claims", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert len(rows) == 9
    _check_rows(rows)
    # Verdict logic: a threshold ">= X" alone decides the row; with an accuracy condition
    # beside it a PASS still needs the value to reach X.
    for r in rows:
        if r["threshold"].startswith(">= "):
            x = float(r["threshold"].split()[1].rstrip("x"))
            if " and " in r["threshold"]:
                assert not r["passed"] or r["value"] >= x, r
            else:
                assert r["passed"] == (r["value"] >= x), r
    # The ratios derived in the tests above (RingTMP's is seed-independent).
    assert rows[3]["value"] == pytest.approx(2 * 8 * 4 * 8746 / (2 * 7 * 64 * 32 * 4))
    assert rows[7]["value"] == pytest.approx(4 * 9610 / (8 * 11))
    assert rows[8]["value"] == pytest.approx(8 * 4810 / (12 * 1443))
