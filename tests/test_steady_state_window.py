"""A scaling study measures the window that represents a run: DGC's steady state after its
warm-up, model averaging in whole periods, PF's whole recorded run (studies.scaling.windows,
workloads.plan.phases)."""

import json

import numpy as np
import pytest

import workloads
from studies.cli.parser import main
from studies.scaling.paradigm import study
from studies.scaling.traces import iteration_window, record_at
from studies.scaling.windows import plan_windows
from topologies import star
from workloads.plan.phases import Phases

TEN_GBE = 1.25e9                 # bytes/s, the star's default link
RESNET50_BYTES = 4 * 25_557_032  # float32 parameters of ResNet-50 (torchvision)
V100 = 15.7e12


# -- the windows a declaration gives -----------------------------------------------------------

def test_dgc_on_digits_is_measured_after_its_four_warmup_epochs():
    # Digits at P0 = 4, batch 8: ceil(1437 / 4 / 8) = 45 steps per recorded epoch; the
    # warm-up is 4 epochs, one stage each, and 3 iterations of each are simulated.
    plan = plan_windows(Phases(warmup=180, stages=(0, 45, 90, 135)))
    assert (plan["window"]["start"], plan["window"]["stop"]) == (180, 183)
    warm, steady = plan["phases"]
    assert warm["samples"] == [[0, 3, 45], [45, 3, 45], [90, 3, 45], [135, 3, 45]]
    assert steady["samples"] == [[180, 3, 3]] and plan["warnings"] == []


@pytest.mark.parametrize("period, asked, window, cuts", [
    (4, None, (0, 4), False),     # 3 iterations rounded up to one whole period
    (2, None, (0, 4), False),     # two whole periods
    (4, 8, (0, 8), False),
    (4, 3, (0, 3), True),         # kept as asked, with a warning
])
def test_a_periodic_paradigm_gets_whole_periods(period, asked, window, cuts):
    plan = plan_windows(Phases(period=period), iterations=asked)
    w = plan["window"]
    assert (w["start"], w["stop"], w["cuts_period"]) == (*window, cuts)
    assert bool(plan["warnings"]) == cuts and plan["phases"] == []


def test_a_paradigm_without_steady_state_gets_the_whole_recorded_run():
    # Slim-DP (q = 10, not alike) recorded over 45 iterations: 4 whole periods of 10.
    w = plan_windows(Phases(period=10, alike=False), recorded=45)["window"]
    assert (w["start"], w["stop"], w["phase"]) == (0, 40, "run")
    # PF: its settling (10 steps) and the rest of the run reported apart.
    plan = plan_windows(Phases(warmup=10, alike=False), iterations=90)
    assert [(p["start"], p["stop"]) for p in plan["phases"]] == [(0, 10), (10, 90)]


def test_an_iteration_window_is_a_run_of_its_own():
    t = record_at("ps-sync", 2, iterations=5, dataset="iris")
    w = iteration_window(t, 2, 4)
    keep = (t.iteration >= 2) & (t.iteration < 4)
    assert w.num_ops == int(keep.sum()) and w.num_iterations == 2
    assert w.size.tolist() == t.size[keep].tolist()
    assert w.metadata["window"] == [2, 4] and w.metadata["iterations"] == 2
    # Its first ops wait for nothing before the window: every dependency is inside it.
    assert (w.dep_idx < w.num_ops).all()
    assert iteration_window(w, 1, 2).metadata["window"] == [3, 4]


# -- DGC: the steady state is the run without a warm-up ----------------------------------------

def test_dgc_steady_state_equals_a_run_without_warmup_and_its_warmup_is_apart():
    P = [2, 4, 8]
    warm = study("dgc", P, star, dataset="iris")
    none = study("dgc", P, star, dataset="iris", warmup_epochs=0)
    # Iris at P0 = 4: 4 steps per recorded epoch, the warm-up 16 iterations at every P.
    assert warm["window"]["start"] == 16 and none["window"]["start"] == 0
    for a, b, p in zip(warm["records"], none["records"], P):
        # After the warm-up every worker sends each peer one value of each of the two
        # layers, 8 bytes each (99.9 % sparsity, at least one value per layer).
        assert a["bytes_per_iteration"] == b["bytes_per_iteration"] == p * (p - 1) * 2 * 8
        assert a["time"] == pytest.approx(b["time"], rel=1e-12)
        assert a["closed_form"] == pytest.approx(b["closed_form"], rel=1e-12)
        phase = {x["phase"]: x for x in a["phases"]}
        assert phase["steady"]["time"] == a["time"]
        assert phase["warm-up"]["time"] >= a["time"]
        assert phase["warm-up"]["simulated"] == [[0, 3], [4, 3], [8, 3], [12, 3]]
        assert b["phases"] == []
    assert "over iterations 16-18, the steady state after the warm-up" in \
        warm["closed_form_note"]


# -- model averaging: whole periods -----------------------------------------------------------

def _averaging(**kw):
    return study("model-averaging", [2], lambda n: star(n, bandwidth=TEN_GBE), model="resnet50",
                 batch=64, device_flops=V100, dataset="iris", **kw)


def test_model_averagings_exposed_communication_is_amortised_over_its_period():
    # P = 2 workers send their ResNet-50 to the master and get the average back: the
    # master's link carries 2 P n bytes per averaging, one averaging every H = 4 steps.
    st = _averaging()
    r = st["records"][0]
    assert st["window"]["iterations"] == 4 and st["warnings"] == []
    expect = 2 * 2 * RESNET50_BYTES / TEN_GBE / 4            # 81.8 ms
    assert r["exposed"] == pytest.approx(expect, rel=0.01)
    assert r["closed_communication"] == pytest.approx(expect, rel=0.01)


def test_a_window_that_cuts_the_period_is_flagged():
    # Three iterations end the run after the third step, which averages: one averaging in
    # 3 steps instead of 4, and both the simulation and the closed form say so.
    st = _averaging(iterations=3)
    r = st["records"][0]
    assert st["window"]["cuts_period"] is True
    assert "cuts the period of 4 iterations" in st["warnings"][0]
    expect = 2 * 2 * RESNET50_BYTES / TEN_GBE / 3            # 109 ms
    assert r["exposed"] == pytest.approx(expect, rel=0.01)
    assert r["closed_communication"] == pytest.approx(expect, rel=0.01)


def test_cli_warns_on_stderr_and_in_the_json(tmp_path, capsys):
    argv = ["scale", "model-averaging", "-P", "2", "--dataset", "iris", "--iterations", "3",
            "--png", str(tmp_path / "m.png")]
    assert main(argv + ["--json"]) == 0
    out = capsys.readouterr()
    doc = json.loads(out.out)
    assert doc["window"]["cuts_period"] and doc["warnings"]
    assert "warning: the window of 3 iterations cuts the period" in out.err
    assert main(argv) == 0
    assert "window: iterations 0-2, the steady state: 0.75 periods of 4" in \
        capsys.readouterr().out


# -- PF: the whole recorded run, recorded as long as the window --------------------------------

def test_pf_is_measured_over_the_whole_recorded_run_recorded_as_long_as_asked():
    st = study("pf", [4], star, dataset="digits", iterations=90)
    w = st["window"]
    assert (w["start"], w["stop"], w["phase"]) == (0, 90, "run")
    # the warm-up, the run after it, each recorded epoch, the halves after the warm-up
    assert [(p["start"], p["stop"]) for p in st["records"][0]["phases"]] == \
        [(0, 10), (10, 90), (0, 45), (45, 90), (10, 50), (50, 90)]
    # At the recorded P the projection is the recording itself: two epochs of 45 steps,
    # not one epoch played twice.
    rec = workloads.record("pf", dataset="digits", workers=4, epochs=2).trace
    assert rec.num_iterations == 90
    assert st["records"][0]["bytes_per_iteration"] == pytest.approx(rec.total_bytes / 90,
                                                                    rel=1e-12)
    one = workloads.record("pf", dataset="digits", workers=4, epochs=1).trace
    assert not np.isclose(rec.total_bytes, 2 * one.total_bytes)
