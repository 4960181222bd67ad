"""The RingTMP-against-the-parameter-server table of docs/studies.md, recomputed here, so the
text cannot drift from the code.

A table produced by training runs is compared by structure and by value: what follows from
the model's shapes (names, worker count, seeds, bytes, byte ratios) exactly, accuracies within
``ACC_TOL``, since BLAS and numpy versions may round the last digits of a float32 training run
differently. The table is regenerated with the command on that page (its RingTMP section).
"""

import pytest

from doc_pages import block, cells

# Accuracy on Iris's 30 or digits' 360 test samples moves in steps of 1/30 or 1/360 per
# sample; a change of rounding flips at most a sample or two in one seed of five, which moves
# a mean of 5 seeds by at most 2/30/5 = 0.013. A model that stopped learning moves it by 0.5.
ACC_TOL = 0.015


def mean_sd(cell):
    mean, sd = cell.split("±")
    return float(mean), float(sd)


def test_cells_parses_a_markdown_table():
    head, rows = cells("| a | b |\n|---|---|\n| x | 1.0 ± 0.5 |")
    assert head == "| a | b |" and rows == [["x", "1.0 ± 0.5"]]
    assert mean_sd(rows[0][1]) == (1.0, 0.5)


def test_the_table_has_the_header_and_a_row_per_configuration():
    from studies.claims import ringtmp_vs_ps

    head, shown = cells(block("studies.md", "ringtmp-table"))
    assert head == cells(ringtmp_vs_ps.format_table([]))[0]
    assert [row[:2] for row in shown] == [[c["dataset"], c["partition"]]
                                          for c in ringtmp_vs_ps.CONFIGS]


@pytest.mark.long
@pytest.mark.parametrize("index", range(3), ids=["iris-layer", "digits-layer", "digits-neuron"])
def test_ringtmp_vs_ps_row_matches_a_fresh_run(index):
    # One row of ringtmp_vs_ps.compare() (seeds 0-4, 8 workers) per test: a row depends on its own
    # configuration only, so the three train in parallel under pytest-xdist.
    from studies.claims import ringtmp_vs_ps

    cfg = ringtmp_vs_ps.CONFIGS[index]
    rows = ringtmp_vs_ps.compare(configs=[cfg])
    assert rows[0]["seeds"] >= 5 and rows[0]["workers"] == 8
    want = cells(ringtmp_vs_ps.format_table(rows))[1][0]
    got = cells(block("studies.md", "ringtmp-table"))[1][index]
    # dataset, partition, model, P, seeds, both byte counts and the byte ratio follow
    # from the layer shapes alone: exact.
    assert got[:8] == want[:8]
    for g, w in zip(got[8:], want[8:]):
        (gm, gs), (wm, ws) = mean_sd(g), mean_sd(w)
        assert gm == pytest.approx(wm, abs=ACC_TOL) and gs == pytest.approx(ws, abs=ACC_TOL)
