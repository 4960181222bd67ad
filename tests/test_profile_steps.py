"""The measured step an imported profile's replay is compared with: steady steps, or the chosen.

A synthetic one-rank profile whose steps are known by construction: ProfilerStep#1 is a slow
warm-up (300 us, a 275 us kernel), #2-#4 are alike (100 us each, one 80 us kernel launched
5 us into the step), #5 is empty (2 ms of host time, no kernel), as the profiler's stop leaves
it. The steady step is 100 us; the mean over every step is 520 us.
"""

import json
import re

import pytest

from netsim import simulate
from netsim.formats.kineto.load import load_kineto
from netsim.formats.kineto.steps import compared_steps
from studies.cli.parser import main
from studies.reports.text import summary
from topologies import star


def _profile(tmp_path):
    steps = [(1, 0, 300), (2, 300, 100), (3, 400, 100), (4, 500, 100), (5, 600, 2000)]
    kernels = [(10, 275), (305, 80), (405, 80), (505, 80)]   # each ends 15 us before its step
    ev = [{"ph": "X", "cat": "user_annotation", "name": f"ProfilerStep#{n}", "ts": ts, "dur": d}
          for n, ts, d in steps]
    for c, (ts, d) in enumerate(kernels):
        ev.append({"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "ts": ts - 1,
                   "dur": 1, "args": {"correlation": c}})
        ev.append({"ph": "X", "cat": "kernel", "name": "gemm", "ts": ts, "dur": d,
                   "args": {"stream": 7, "correlation": c}})
    path = tmp_path / "rank0.json"
    path.write_text(json.dumps({"distributedInfo": {"rank": 0, "world_size": 1},
                                "traceEvents": ev}))
    return str(path)


def test_steady_steps_leave_out_warm_up_and_the_empty_last_step(tmp_path):
    t = load_kineto(_profile(tmp_path))
    assert t.metadata["measured_step_times"] == pytest.approx([300e-6, 1e-4, 1e-4, 1e-4, 2e-3])
    assert t.metadata["compared_steps"] == [1, 2, 3]
    assert t.metadata["compared_note"] == ("left out: ProfilerStep#1 (warm-up), "
                                           "ProfilerStep#5 (empty)")
    text = summary(simulate(t, star(1)))
    # Steps 2-4 replay at 100 us each: each kernel ends 15 us before its step ends and the
    # next starts 5 us into the next step, a 20 us host gap, then 80 us of kernel.
    assert re.search(r"measured step \(profile\)\s+100 us", text)
    assert re.search(r"simulated, same steps\s+100 us", text)
    assert re.search(r"difference\s+[+-]0\.0 %", text)
    assert "compared steps            3 of 5; left out: ProfilerStep#1 (warm-up), " \
           "ProfilerStep#5 (empty)" in text


def test_chosen_steps_are_compared_as_chosen(tmp_path):
    t = load_kineto(_profile(tmp_path), steps=[1, 2, 5])
    assert t.metadata["compared_steps"] == [0, 1]      # #5 launched nothing: never compared
    text = summary(simulate(t, star(1)))
    assert re.search(r"measured step \(profile\)\s+200 us", text)   # (300 + 100) / 2


def test_the_replay_command_says_which_steps_it_compares(tmp_path, capsys):
    out = tmp_path / "t.npz"
    assert main(["import", "kineto", _profile(tmp_path), "-o", str(out), "-q"]) == 0
    assert main(["replay", str(out), "--topology", "star"]) == 0
    assert "left out: ProfilerStep#1 (warm-up), ProfilerStep#5 (empty)" in capsys.readouterr().out


@pytest.mark.parametrize("counts, keep", [
    ([10], [0]), ([10, 10], [1]), ([0, 10, 10], [2]), ([10, 10, 10, 3], [1, 2]),
    ([10, 12, 12, 12], [1, 2, 3]), ([3, 10], [1])])
def test_the_rule_on_op_counts(counts, keep):
    assert compared_steps(counts)[0] == keep
