"""--straggler, --jitter and --seed in `netsim replay` and `netsim scale`, and the sweep keys
straggler and jitter: perturbation at replay time from the command line."""

import json

import pytest

from conftest import one_line_error
from netsim import NetsimError, TraceBuilder, save_trace
from studies.cli.parser import main
from studies.scaling.paradigm import sweep_point
from studies.registry import topology_factory
from studies.sweep.config import check_config, sweep_points

TOPO = "star:n=2,bandwidth=8Gbps,latency=0s"   # 1 GB/s per link direction, no latency


@pytest.fixture
def trace_file(tmp_path):
    # Two ranks compute 1 s, then rank 0 sends 1 MB to rank 1: the flow crosses both 1 GB/s
    # hops of the star at once (fluid model, no latency), 1 ms.
    b = TraceBuilder(2)
    a = b.compute(0, seconds=1.0)
    b.compute(1, seconds=1.0)
    b.message(0, 1, 1e6, deps=[a])
    path = tmp_path / "t.npz"
    save_trace(b.build(), path)
    return str(path)


def _json(capsys, argv):
    assert main(argv) == 0
    return json.loads(capsys.readouterr().out)


def test_replay_with_a_straggler_scales_its_compute(trace_file, capsys):
    plain = _json(capsys, ["replay", trace_file, "--topology", TOPO, "--json"])
    slow = _json(capsys, ["replay", trace_file, "--topology", TOPO, "--json", "--straggler", "0:10x"])
    assert plain["makespan"] == pytest.approx(1.0 + 1e-3, rel=1e-12)
    assert slow["makespan"] == pytest.approx(10.0 + 1e-3, rel=1e-12)
    assert slow["metadata"]["perturbation"] == {"seed": 0, "straggler": "0:10x"}
    # Rank 1 waits 9 s for the message of the slow rank 0.
    assert slow["ranks"]["idle"][1] == pytest.approx(9.0, rel=1e-12)


def test_replay_jitter_is_deterministic_for_a_seed(trace_file, capsys):
    argv = ["replay", trace_file, "--topology", TOPO, "--json", "--jitter", "lognormal:0.5"]
    a = _json(capsys, argv + ["--seed", "4"])
    assert a == _json(capsys, argv + ["--seed", "4"])
    assert a["makespan"] != _json(capsys, argv + ["--seed", "5"])["makespan"]


def test_replay_text_names_the_perturbation(trace_file, capsys):
    assert main(["replay", trace_file, "--topology", TOPO, "--straggler", "p=1:2x",
                 "--jitter", "uniform:1,1", "--seed", "2"]) == 0
    out = capsys.readouterr().out
    assert "makespan                  2 s" in out
    assert "perturbed at replay: straggler p=1:2x, jitter uniform:1,1 (seed 2)" in out


@pytest.mark.parametrize("extra, needle", [
    (["--straggler", "0:10"], None),  # the x is optional: accepted
    (["--straggler", "zero:10x"], "--straggler: straggler 'zero:10x'"),
    (["--straggler", "2:10x"], "straggler rank 2 is not in the trace (ranks 0..1)"),
    (["--straggler", "p=2:3x"], "probability P must be in [0, 1]"),
    (["--jitter", "normal:0.1"], "--jitter: unknown jitter 'normal:0.1'"),
    (["--jitter", "uniform:1"], "takes 2 parameter(s)"),
    (["--jitter", "lognormal:0.1", "--seed", "-1"], "--seed must be an integer"),
])
def test_replay_refuses_bad_specs_in_one_line(trace_file, capsys, extra, needle):
    argv = ["replay", trace_file, "--topology", TOPO] + extra
    if needle is None:
        assert main(argv) == 0
        capsys.readouterr()
    else:
        one_line_error(capsys, argv, needle)


def test_replay_of_a_ps_async_trace_reports_staleness(tmp_path, capsys):
    path = str(tmp_path / "pa.npz")
    rec = _json(capsys, ["record", "ps-async", "--workers", "4", "--epochs", "1", "-o", path,
                         "--json"])
    assert (rec["mean_staleness"], rec["max_staleness"]) == (1.5, 3)  # the training's
    out = _json(capsys, ["replay", path, "--topology", "star", "--json"])
    # Equal speeds: the training's round-robin staleness 0..3, mean 1.5.
    assert out["staleness"] == {"mean_updates": 1.5, "max_updates": 3, "max_steps": 0}
    assert main(["replay", path, "--topology", "star", "--straggler", "0:10x"]) == 0
    line = capsys.readouterr().out.splitlines()[-1]
    assert line.startswith("staleness (ps-async): ") and "steps behind" in line


def test_help_lists_the_options(capsys):
    for command in ("replay", "scale"):
        with pytest.raises(SystemExit):
            main([command, "--help"])
        out = capsys.readouterr().out
        assert "--straggler R:Kx|p=P:Kx" in out and "--jitter DIST:PARAMS" in out
        assert "lognormal:SIGMA" in out and "--seed" in out


def test_scale_with_a_straggler_slows_every_point(tmp_path, capsys):
    base = ["scale", "ps-sync", "-P", "2,4", "--dataset", "iris", "--iterations", "2",
            "--topology", "star", "--png", str(tmp_path / "s.png"), "--json",
            "--device-flops", "1e7"]
    plain = _json(capsys, base)
    slow = _json(capsys, base + ["--straggler", "0:10x"])
    assert slow["perturbation"] == {"straggler": "0:10x", "seed": 0}
    for p, s in zip(plain["records"], slow["records"]):
        assert s["time"] > 5 * p["time"]                  # compute-bound at 10 MFLOP/s
        assert s["closed_form"] == p["closed_form"]       # the closed form is unperturbed
    one_line_error(capsys, ["scale", "-a", "ring", "-P", "2", "--png", str(tmp_path / "c.png"),
                            "--straggler", "0:2x"], "give a PARADIGM")
    one_line_error(capsys, base + ["--jitter", "gamma:2"], "unknown jitter 'gamma:2'")


def test_sweep_keys_make_points_and_slow_the_straggler_ones():
    cfg = check_config({"topologies": ["star"], "paradigms": ["ps-sync"], "P": [2],
                        "straggler": ["none", "0:10x"], "jitter": "uniform:1,1",
                        "options": {"ps-sync": {"device_flops": 1e9}}})
    points = sweep_points(cfg)
    assert [json.loads(p["options"]) for p in points] == [
        {"device_flops": 1e9, "jitter": "uniform:1,1"},
        {"device_flops": 1e9, "jitter": "uniform:1,1", "straggler": "0:10x"}]
    for p in points:
        p.update(dataset="iris", epochs=1, seed=0)
    plain, slow = (sweep_point(p, topology_factory("star")) for p in points)
    assert slow["simulated"] > 5 * plain["simulated"]
    assert slow["closed_form"] == plain["closed_form"]


@pytest.mark.parametrize("raw, needle", [
    ({"straggler": "0:0x"}, "straggler: straggler factor K"),
    ({"jitter": ["lognormal:0.1", 3]}, "jitter must be a spec string or none"),
    ({"jitter": "poisson:1"}, "unknown jitter"),
])
def test_bad_sweep_perturbations_are_refused(raw, needle):
    with pytest.raises(NetsimError, match=needle):
        check_config({"topologies": ["star"], "paradigms": ["ps-sync"], "P": [2], **raw})
    with pytest.raises(NetsimError, match="no point uses it"):
        check_config({"topologies": ["star"], "collectives": ["ring"], "bytes": [1], "P": [2],
                      "straggler": "0:2x"})
