"""Tables in the README are recomputed here, so the text cannot drift from the code."""

import pathlib
import re

README = pathlib.Path(__file__).resolve().parent.parent / "README.md"


def block(name):
    text = README.read_text()
    m = re.search(rf"<!-- {name}:start -->\n(.*?)\n<!-- {name}:end -->", text, re.S)
    assert m, f"README has no {name} block"
    return m.group(1)


def test_ringtmp_vs_ps_table_matches_a_fresh_run():
    from workloads import ringtmp

    rows = ringtmp.compare()  # seeds 0-4, 8 workers, Iris and digits
    assert all(r["seeds"] >= 5 and r["workers"] == 8 for r in rows)
    assert {r["dataset"] for r in rows} == {"iris", "digits"}
    assert ringtmp.format_table(rows) == block("ringtmp-table")
