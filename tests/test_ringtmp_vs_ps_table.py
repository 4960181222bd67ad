"""Tables in the README are recomputed here, so the text cannot drift from the code.

A table produced by training runs is compared by structure and by value: what follows from
the model's shapes (names, worker count, seeds, bytes, byte ratios) exactly, accuracies within
``ACC_TOL``, since BLAS and numpy versions may round the last digits of a float32 training run
differently. The table is regenerated with the command in the README (see its RingTMP section).
"""

import pathlib
import re

import pytest

README = pathlib.Path(__file__).resolve().parent.parent / "README.md"

# Accuracy on Iris's 30 or digits' 360 test samples moves in steps of 1/30 or 1/360 per
# sample; a change of rounding flips at most a sample or two in one seed of five, which moves
# a mean of 5 seeds by at most 2/30/5 = 0.013. A model that stopped learning moves it by 0.5.
ACC_TOL = 0.015


def block(name):
    text = README.read_text()
    m = re.search(rf"<!-- {name}:start -->\n(.*?)\n<!-- {name}:end -->", text, re.S)
    assert m, f"README has no {name} block"
    return m.group(1)


def cells(table):
    """The table's rows (header and separator dropped) as lists of stripped cells."""
    lines = table.splitlines()
    return lines[0], [[c.strip() for c in line.strip("|").split("|")] for line in lines[2:]]


def mean_sd(cell):
    mean, sd = cell.split("±")
    return float(mean), float(sd)


def test_cells_parses_a_markdown_table():
    head, rows = cells("| a | b |\n|---|---|\n| x | 1.0 ± 0.5 |")
    assert head == "| a | b |" and rows == [["x", "1.0 ± 0.5"]]
    assert mean_sd(rows[0][1]) == (1.0, 0.5)


def test_ringtmp_vs_ps_table_matches_a_fresh_run():
    from workloads import ringtmp

    rows = ringtmp.compare()  # seeds 0-4, 8 workers, Iris and digits
    assert all(r["seeds"] >= 5 and r["workers"] == 8 for r in rows)
    assert {r["dataset"] for r in rows} == {"iris", "digits"}
    fresh_head, fresh = cells(ringtmp.format_table(rows))
    head, shown = cells(block("ringtmp-table"))
    assert head == fresh_head and len(shown) == len(fresh)
    for got, want in zip(shown, fresh):
        # dataset, partition, model, P, seeds, both byte counts and the byte ratio follow
        # from the layer shapes alone: exact.
        assert got[:8] == want[:8]
        for g, w in zip(got[8:], want[8:]):
            (gm, gs), (wm, ws) = mean_sd(g), mean_sd(w)
            assert gm == pytest.approx(wm, abs=ACC_TOL) and gs == pytest.approx(ws, abs=ACC_TOL)
