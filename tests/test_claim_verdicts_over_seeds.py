"""Verdicts over seeds (studies.claims.verdicts): k of N, marginal, by construction, the counts.

Every case is hand-built per-seed rows, so each verdict is known before the fold runs.
"""

import pytest

from netsim.errors import NetsimError
from studies.claims.verdicts import (VERDICTS, count_verdicts, format_claims_over_seeds,
                                    format_counts, over_seeds, seeds_label)
from studies.reports.text import format_claims


def _row(claim, value, passed, seed, verdict=None, threshold=">= 4.1x"):
    return {"claim": claim, "source": "s", "setup": "x", "measured": f"{claim} = {value}",
            "threshold": threshold, "value": float(value), "passed": passed, "seconds": 1.0,
            "verdict": verdict or ("PASS" if passed else "FAIL"), "region": "", "seed": seed}


def _runs(per_seed):
    """{seed: rows} from {claim: [(value, passed, verdict or None), ... one per seed]}."""
    seeds = range(len(next(iter(per_seed.values()))))
    return {s: [_row(c, *vals[s][:2], s, *vals[s][2:]) for c, vals in per_seed.items()]
            for s in seeds}


def test_k_of_n_and_the_four_verdicts():
    # PF's traffic cut over seeds 0..4 as issue-level numbers: 3.77..4.27 around 4.10, two
    # seeds below: marginal, held in 3 of 5, never PASS or FAIL.
    cut = [(4.10, True), (4.21, True), (4.27, True), (3.77, False), (4.09, False)]
    always = [(2.22, True)] * 5
    never = [(2.76, False), (2.8, False), (2.82, False), (2.63, False), (2.76, False)]
    built = [(437, True, "by construction")] * 5
    rows = over_seeds(_runs({"cut": cut, "always": always, "never": never, "built": built}))
    by = {r["claim"]: r for r in rows}
    assert [(r["verdict"], r["holds"], r["n"]) for r in rows] == [
        ("marginal", 3, 5), ("PASS", 5, 5), ("FAIL", 0, 5), ("by construction", 5, 5)]
    assert by["cut"]["value"] == pytest.approx((4.10 + 4.21 + 4.27 + 3.77 + 4.09) / 5)
    assert (by["cut"]["low"], by["cut"]["high"]) == (3.77, 4.27)
    assert not by["cut"]["passed"] and by["always"]["passed"] and by["built"]["passed"]
    assert [p["value"] for p in by["cut"]["per_seed"]] == [4.10, 4.21, 4.27, 3.77, 4.09]
    assert [p["seed"] for p in by["cut"]["per_seed"]] == [0, 1, 2, 3, 4]
    assert by["cut"]["seconds"] == 5.0
    assert by["cut"]["measured"] == "cut = 4.1"  # the first seed's words
    assert count_verdicts(rows) == {"PASS": 1, "by construction": 1, "marginal": 1, "FAIL": 1,
                                    "not testable on this data": 0}


def test_by_construction_that_fails_at_one_seed_is_marginal():
    # DGC's ratio is by construction but its accuracy condition is trained: one seed that
    # loses accuracy makes the row a plain FAIL there, and the claim marginal over seeds.
    built = [(437, True, "by construction")] * 3 + [(437, False)]
    row, = over_seeds(_runs({"dgc": built}))
    assert (row["verdict"], row["holds"], row["n"]) == ("marginal", 3, 4)
    # Holding at every seed, by construction at some and plainly at others, is a PASS.
    mixed = [(437, True, "by construction"), (437, True)]
    assert over_seeds(_runs({"dgc": mixed}))[0]["verdict"] == "PASS"


def test_a_claim_that_takes_no_seed_runs_once_and_holds_at_every_seed_or_none():
    lp = _row("lp", 3.1, True, None)
    ring = _row("ring", 4.88, False, None)
    runs = {s: [lp, ring, _row("pf", 4.0 + s / 10, True, s)] for s in (0, 3, 7)}
    rows = over_seeds(runs)
    assert [(r["verdict"], r["holds"], r["n"], len(r["per_seed"])) for r in rows] == [
        ("PASS", 3, 3, 1), ("FAIL", 0, 3, 1), ("PASS", 3, 3, 3)]
    assert rows[0]["per_seed"][0]["seed"] is None and rows[0]["seconds"] == 1.0


def test_one_seed_keeps_the_run_verdicts_and_todays_table():
    runs = _runs({"a": [(4.2, True)], "b": [(437, True, "by construction")],
                  "c": [(2.0, False)]})
    rows = over_seeds(runs)
    assert [r["verdict"] for r in rows] == ["PASS", "by construction", "FAIL"]
    assert [r["value"] for r in rows] == [4.2, 437.0, 2.0]
    for markdown in (False, True):
        assert format_claims_over_seeds(rows, [0], markdown) == format_claims(runs[0], markdown)


def test_footer_counts_by_construction_apart_from_pass():
    # The 12 claims as one seed gave them: 3 PASS, 3 by construction, 6 FAIL (the old
    # footer said "6 PASS, 6 FAIL").
    verdicts = ["by construction"] * 2 + ["PASS", "FAIL", "PASS", "FAIL", "PASS", "FAIL",
                                          "by construction", "FAIL", "FAIL", "FAIL"]
    rows = [{"claim": str(i), "verdict": v} for i, v in enumerate(verdicts)]
    assert format_counts(rows) == "3 PASS, 3 by construction, 0 marginal, 6 FAIL, 0 not testable on this data"
    assert list(count_verdicts([])) == list(VERDICTS)
    with pytest.raises(NetsimError, match="verdict 'OK'"):
        count_verdicts([{"claim": "x", "verdict": "OK"}])


def test_table_over_seeds_states_mean_spread_n_and_k_of_n():
    runs = _runs({"cut": [(4.10, True), (3.77, False), (4.27, True)],
                  "same": [(2.22, True)] * 3})
    md = format_claims_over_seeds(over_seeds(runs), [0, 1, 2], markdown=True).splitlines()
    assert md[0] == ("| claim | source | setup | measured (seed 0) | threshold | value over "
                     "seeds 0..2 | where it holds | result |")
    assert md[2].endswith("| mean 4.05, 3.77..4.27 (N = 3) | - | marginal: holds in 2 of 3 "
                          "seeds |")
    assert md[3].endswith("| 2.22 at each of 3 seeds | - | PASS: holds in 3 of 3 seeds |")
    text = format_claims_over_seeds(over_seeds(runs), [0, 1, 2])
    assert "marginal: holds in 2 of 3 seeds" in text and "setup" not in text


def test_a_trained_region_names_its_seed_in_the_table():
    region = {"x": "tau0", "y": "epochs", "holds": [[True, False]], "seed": 0}
    runs = {s: [dict(_row("pf", 4.1, True, s), region=region)] for s in (0, 1)}
    md = format_claims_over_seeds(over_seeds(runs), [0, 1], markdown=True)
    assert "| holds in 1 of 2 cells of epochs x tau0 (seed 0) |" in md


def test_runs_of_other_claims_are_refused():
    runs = {0: [_row("a", 1, True, 0)], 1: [_row("b", 1, True, 1)]}
    with pytest.raises(NetsimError, match="seed 1 has other claims than seed 0"):
        over_seeds(runs)
    with pytest.raises(NetsimError, match="no runs"):
        over_seeds({})


def test_seeds_label():
    assert seeds_label(range(5)) == "0..4"
    assert seeds_label([0, 1]) == "0, 1" and seeds_label([2, 4, 5]) == "2, 4, 5"
