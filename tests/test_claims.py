"""The seed papers' claims (workloads.claims) and `netsim claims`."""

import json

import pytest

from netsim.cli import main
from workloads import claims

KEYS = {"claim", "source", "setup", "measured", "threshold", "value", "passed", "seconds"}


def _check_rows(rows):
    for r in rows:
        assert set(r) == KEYS
        assert r["claim"] and r["source"] and r["threshold"] and r["measured"]
        assert isinstance(r["passed"], bool) and r["seconds"] >= 0


def test_lp_claims_pass_on_a_10gbe_star():
    rows = claims.lp_claims()
    _check_rows(rows)
    assert [r["passed"] for r in rows] == [True, True, True]
    assert rows[0]["value"] < 0.05                  # LP time spread over P = 2..64
    assert 1.8 <= rows[2]["value"] < 2 * 63 / 64    # BE / LP below its limit


def test_ringtmp_claim_fails_honestly_and_reports_accuracy():
    row = claims.ringtmp_claim(seeds=1)[0]
    _check_rows([row])
    assert not row["passed"]
    assert 1.0 < row["value"] < 8.0
    assert row["measured"].count("acc delta") == 3


def test_pf_claims_traffic_and_speedup():
    traffic, speed = claims.pf_claims()
    _check_rows([traffic, speed])
    assert traffic["value"] == pytest.approx(4.10, abs=0.01) and traffic["passed"]
    # PF's traffic cut cannot give 4.3x where communication is 5.7x compute: at most
    # (1 + 5.7) / (1 + 5.7 / 4.1) = 2.8x.
    assert 1.0 < speed["value"] < (1 + 5.7) / (1 + 5.7 / traffic["value"]) + 0.1
    assert not speed["passed"]


def test_partition_claim_measures_the_favourable_setting():
    row = claims.partition_claim()[0]
    _check_rows([row])
    assert 5 < row["value"] < 14 and not row["passed"]


def test_dgc_claim_after_warmup():
    row = claims.dgc_claim()[0]
    _check_rows([row])
    assert 270 <= row["value"] <= 600 and row["passed"]


def test_slimdp_claim():
    row = claims.slimdp_claim()[0]
    _check_rows([row])
    assert row["value"] > 1 and row["passed"]


def test_format_claims_shows_every_fail():
    rows = [{"claim": "a", "source": "s", "setup": "x", "measured": "m", "threshold": "t",
             "value": 1.0, "passed": False, "seconds": 0.0},
            {"claim": "b", "source": "s", "setup": "x", "measured": "m", "threshold": "t",
             "value": 1.0, "passed": True, "seconds": 0.0}]
    text = claims.format_claims(rows)
    assert "FAIL" in text and "PASS" in text
    md = claims.format_claims(rows, markdown=True)
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
    assert [r["passed"] for r in rows] == [True, True, True, False, True, False, False, True,
                                           True]
