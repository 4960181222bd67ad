"""A run without a steady state (PF, Slim-DP) is reported per phase with its trend per epoch,
and a window that is the warm-up's transient alone is warned about."""

import pytest

from studies.cli.parser import main
from studies.scaling.windows import plan_windows, trend
from workloads.plan.phases import Phases

PF = Phases(warmup=10, alike=False, what="filter settling")


def test_a_window_within_the_warm_up_is_warned_about_and_a_longer_one_is_not():
    (w,) = plan_windows(PF, 3, recorded=45)["warnings"]
    assert "transient alone" in w and "--iterations above 10" in w
    assert plan_windows(PF, 11, recorded=45)["warnings"] == []
    # A steady-state paradigm measures after its warm-up: never the transient.
    assert plan_windows(Phases(warmup=10), 3)["warnings"] == []


def test_epochs_and_halves_after_the_warm_up_are_phases_of_their_own():
    plan = plan_windows(PF, 90, recorded=45)
    spans = {p["phase"]: (p["start"], p["stop"]) for p in plan["phases"]}
    assert spans["epoch 1"] == (0, 45) and spans["epoch 2"] == (45, 90)
    assert spans["1st half"] == (10, 50) and spans["2nd half"] == (50, 90)
    # Slim-DP's period q = 10: halves in whole periods.
    sd = plan_windows(Phases(period=10, alike=False), 40, recorded=40)
    assert {p["phase"]: p["stop"] for p in sd["phases"]}["1st half"] == 20


def test_trend_per_epoch_from_the_halves_by_hand():
    # Halves of 40 iterations after the warm-up: their middles 40 apart; an epoch of 45.
    # 4.4 s then 3.3 s: -25 % over 40 iterations, -25 % x 45 / 40 per epoch.
    window = plan_windows(PF, 90, recorded=45)["window"]
    phases = [{"phase": "1st half", "time": 4.4}, {"phase": "2nd half", "time": 3.3}]
    assert trend(phases, window) == pytest.approx(-0.25 * 45 / 40)
    assert trend(phases, plan_windows(Phases(), 3)["window"]) is None


def test_pf_report_has_phases_the_trend_and_the_warning(tmp_path, capsys):
    main(["scale", "pf", "-P", "2", "--png", str(tmp_path / "p.png")])
    out = capsys.readouterr().out
    assert "1st half" in out and "2nd half" in out and "trend per recorded epoch" in out
    assert "quote the figure of the epochs you model" in out
    main(["scale", "pf", "-P", "2", "--iterations", "3", "--png", str(tmp_path / "p.png")])
    assert "transient alone" in capsys.readouterr().err
