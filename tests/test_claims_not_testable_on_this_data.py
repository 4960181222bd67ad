"""An accuracy half of a claim that the bundled data cannot show: "not testable on this data".

The rule (studies.claims.verdicts.within_spread): a mean accuracy difference within the sample
standard deviation of the per-run differences is no evidence either way. Checked here with
hand-made numbers.
"""

import pytest

from studies.claims.verdicts import NOT_TESTABLE, VERDICTS, format_counts, over_seeds, within_spread


def row_of(diff, seed, threshold=0.0):
    return {"claim": "c", "source": "s", "setup": "x", "measured": f"m{seed}",
            "threshold": f"difference >= {threshold}", "value": diff, "passed": diff >= threshold,
            "seconds": 0.1, "verdict": "PASS" if diff >= threshold else "FAIL", "region": "",
            "seed": seed, "differences": [diff], "testable_on": "would show on MNIST"}


def _fold(diffs):
    return over_seeds({s: [row_of(d, s)] for s, d in enumerate(diffs)})[0]


def test_a_difference_inside_the_spread_is_not_testable():
    # mean 0.001, sample std 0.0055: the seeds move the difference more than its size
    diffs = [-0.0056, 0.0028, 0.0028, 0.0084, -0.0028]
    got = within_spread(diffs)
    assert got["within"] and got["n"] == 5
    assert got["mean"] == pytest.approx(0.00112) and got["spread"] == pytest.approx(0.00546, abs=1e-5)
    row = _fold(diffs)
    assert row["verdict"] == NOT_TESTABLE and row["holds"] == 3 and row["n"] == 5
    assert row["spread"]["within"] and row["differences"] == diffs
    # exactly equal accuracies at every seed (DGC's warm-up on digits) cannot show a difference
    assert _fold([0.0] * 5)["verdict"] == NOT_TESTABLE


def test_a_difference_outside_the_spread_keeps_the_usual_verdict():
    assert not within_spread([0.02, 0.03, 0.025])["within"]
    assert _fold([0.02, 0.03, 0.025])["verdict"] == "PASS"
    assert _fold([-0.02, -0.03, -0.025])["verdict"] == "FAIL"
    # a difference just clear of its spread that straddles the threshold stays marginal
    assert _fold([-0.001, 0.01, 0.012, 0.011])["verdict"] == "marginal"
    # one run has no spread: its own verdict stands
    assert within_spread([0.0]) is None and _fold([0.0])["verdict"] == "PASS"


def test_rows_without_differences_are_untouched_and_counted_apart():
    plain = {k: v for k, v in row_of(0.0, 0).items() if k not in ("differences", "testable_on")}
    assert over_seeds({0: [plain], 1: [dict(plain, seed=1)]})[0]["verdict"] == "PASS"
    assert VERDICTS[-1] == NOT_TESTABLE
    assert format_counts([_fold([0.0, 0.0])]) == (
        "0 PASS, 0 by construction, 0 marginal, 0 FAIL, 1 not testable on this data")
