"""``netsim scale ps-sync`` explains a speed-up that prints as 0.00, on stderr.

The weak-scaling speed-up is S(P) = P T(1) / T(P): with the recording's MLP one worker's
compute per iteration is nanoseconds while an iteration waits microseconds on the server's
link, so S < 0.005. The hint names both times; their ratio is the study's own T(P) / T(1).
stdout stays the study's text (its digest is pinned in test_results_unchanged_by_moves).
"""

import json
import re

from studies.cli.parser import main
from studies.reports.text import format_study, speedup_hint


def test_the_hint_states_the_times_whose_ratio_makes_the_speedup_zero(capsys, tmp_path):
    png = str(tmp_path / "s.png")
    assert main(["scale", "ps-sync", "-P", "2,4", "--iterations", "2", "--json", "--png", png]) == 0
    st = json.loads(capsys.readouterr().out)
    for r in st["records"]:
        assert r["speedup"] == r["P"] * st["T1"] / r["time"] < 0.005  # the definition, S < 0.005
    hint = speedup_hint(st)
    ratio = float(re.search(r"is ([0-9.e+]+)x shorter", hint).group(1))
    assert abs(ratio / (st["records"][0]["time"] / st["T1"]) - 1) < 0.05  # two digits shown
    assert st["records"][0]["top_link"] in hint
    assert main(["scale", "ps-sync", "-P", "2,4", "--iterations", "2", "--png", png]) == 0
    out, err = capsys.readouterr()
    assert hint in err and "speed-up 0.00" not in out.split("\n\n", 1)[1]
    assert out == format_study(st) + "\n\ntopology star; wrote " + png + "\n"


def test_no_hint_when_the_speedup_shows():
    st = {"T1": 1e-3, "strong": False,
          "records": [{"P": 2, "speedup": 1.6, "time": 1.25e-3, "top_link": "a<->b"}]}
    assert speedup_hint(st) is None
