"""Seeded fuzzing of option combinations and sweep configs: a clean refusal or the work.

Every random command line either is refused with one line `netsim: error: ...` and exit 2
before the work starts (the work is replaced by a stub that raises `_WorkStarted`), or
reaches the work; no other exception, no traceback. Every random sweep config is either
refused with a `NetsimError` (one line through the CLI, before any point runs) or accepted
with points whose options the runners can use.
"""

import math

import numpy as np
import pytest

from netsim.errors import NetsimError
from studies.cli.parser import main


class _WorkStarted(BaseException):
    """Raised by the stubs standing in for the work: validation passed."""


def _stub(*args, **kwargs):
    raise _WorkStarted


VALUES = ["1", "0", "-1", "4", "33", "1e300", "nan", "inf", "-inf", "", ",", "1MB", "0B", "7",
          "two", "1..8", "0..8", "8..2", "1KB,2KB", "2.5", "true", "LL128", "ring", "../x",
          "/proc/x.png", "1GiB", "64MB", "-3", "1e-313"]

BASES = {  # valid command lines the fuzzer adds random options and values to
    "collective": [["collective", "ring", "-P", "4", "-n", "1MB"],
                   ["collective", "lp", "-P", "3", "-n", "64MB"],
                   ["collective", "allreduce", "--library", "nccl", "-n", "1MB"],
                   ["collective", "allgather", "--library", "nccl", "--sizes", "8B..1MB"]],
    "scale": [["scale", "-a", "ring", "-P", "2,4", "-n", "1MB"],
              ["scale", "ps-sync", "-P", "2,4"]],
}
OPTIONS = {
    "collective": ["--library", "--topology", "-P", "-n", "--sizes", "--factor", "--algorithm",
                   "--protocol", "--channels", "--segments", "--gamma", "--servers", "--json",
                   "--force"],
    "scale": ["-a", "-P", "-n", "--topology", "--segments", "--model", "--batch", "--device",
              "--device-flops", "--iterations", "--seed", "--set", "--library", "--dataset",
              "--strong", "--json", "--force", "--logy"],
}
FLAGS = {"--json", "--force", "--strong", "--logy"}
TOPOLOGIES = ["star", "dgx1", "pcie_box", "star:n=-1", "ring", "nope", "dgx_h100:nodes=2"]


def _argv(rng, command):
    bases = BASES[command]
    argv = list(bases[rng.integers(len(bases))])
    for opt in rng.choice(OPTIONS[command], size=rng.integers(0, 3), replace=False):
        argv.append(str(opt))
        if opt not in FLAGS:
            pool = TOPOLOGIES if opt == "--topology" else VALUES
            argv.append(pool[rng.integers(len(pool))])
    return argv


@pytest.mark.parametrize("command", sorted(OPTIONS))
def test_random_option_combinations_are_refused_or_reach_the_work(command, monkeypatch,
                                                                    capsys, tmp_path):
    import studies.cli.commands.collective as collective
    import studies.cli.commands.scale as scale

    monkeypatch.chdir(tmp_path)
    for module, name in ((collective, "compare"), (scale, "scale"), (scale, "study")):
        monkeypatch.setattr(module, name, _stub)
    monkeypatch.setattr(collective.nccl_report, "sweep", _stub)
    rng = np.random.default_rng(33)
    outcomes = {"refused": 0, "work": 0}
    for _ in range(150):
        argv = _argv(rng, command) + ["-q"]
        try:
            status = main(argv)
        except _WorkStarted:
            outcomes["work"] += 1
            capsys.readouterr()
            continue
        err = capsys.readouterr().err.strip()
        assert status == 2, (argv, status, err)
        assert len(err.splitlines()) == 1 and err.startswith("netsim: error: "), (argv, err)
        assert "Traceback" not in err and "np.float64" not in err, (argv, err)
        outcomes["refused"] += 1
    assert outcomes["refused"] and outcomes["work"], outcomes  # both paths were exercised


def _random_value(rng):
    pool = [1, 0, -3, 2, 2.5, float("nan"), float("inf"), "two", "", None, True, [1, 2], [],
            {"a": 1}, "1MB", "2..16", "ring", [2, 4], "star", "none", "0:10x", "lognormal:x"]
    return pool[rng.integers(len(pool))]


def _random_config(rng):
    from studies.sweep.config import KNOWN_KEYS

    config = {"topologies": ["star"], "P": [2, 4]}
    if rng.random() < 0.5:
        config.update(collectives=["ring", "lp", "ps"][:rng.integers(1, 4)], bytes=["1MB"])
    else:
        config.update(paradigms=["ps-sync"])
    for key in rng.choice(sorted(KNOWN_KEYS), size=rng.integers(0, 3), replace=False):
        config[str(key)] = _random_value(rng)
    if rng.random() < 0.6:
        names = [n for key in ("collectives", "paradigms") if isinstance(config.get(key), list)
                 for n in config[key] if isinstance(n, str)]
        if names:
            keys = ["segments", "servers", "gamma", "lr", "momentum", "overlap", "batch_size"]
            config["options"] = {names[rng.integers(len(names))]: {
                keys[rng.integers(len(keys))]: _random_value(rng)}}
    return config


def test_random_sweep_configs_are_refused_or_give_usable_points():
    from studies.sweep.config import check_config, sweep_points

    rng = np.random.default_rng(2033)
    accepted = refused = 0
    for _ in range(300):
        raw = _random_config(rng)
        try:
            config = check_config(raw)
        except NetsimError as exc:
            assert "\n" not in str(exc), str(exc)
            refused += 1
            continue
        accepted += 1
        for name, opts in config["options"].items():
            for key, value in opts.items():
                if isinstance(value, (int, float)) and not isinstance(value, bool):
                    assert math.isfinite(value) and value >= 0, (raw, key, value)
                if key in ("segments", "servers"):
                    assert isinstance(value, int) and value >= 1, (raw, key, value)
        assert sweep_points(config)
    assert accepted and refused, (accepted, refused)


def test_random_sweep_config_files_are_refused_before_any_point(monkeypatch, capsys, tmp_path):
    pytest.importorskip("yaml")
    import studies.cli.commands.sweep as sweep

    monkeypatch.setattr(sweep, "run_sweep", _stub)
    rng = np.random.default_rng(7)
    texts = ["topologies: [star]\ncollectives: [ring]\nbytes: [1MB]\nP: [2]\n"]
    for _ in range(40):
        lines = texts[0].splitlines()
        i = rng.integers(len(lines))
        kind = rng.integers(4)
        if kind == 0:
            lines.append(lines[i])  # a key given twice
        elif kind == 1:
            lines[i] = lines[i][: rng.integers(len(lines[i]))]  # cut short
        elif kind == 2:
            lines.insert(i, "options: {ring: {gamma: .nan}}")
        else:
            lines[i] = lines[i].replace(":", " ", 1)
        path = tmp_path / f"c{_}.yaml"
        path.write_text("\n".join(lines) + "\n")
        try:
            status = main(["sweep", str(path), "-q"])
        except _WorkStarted:
            continue
        err = capsys.readouterr().err.strip()
        assert status == 2 and len(err.splitlines()) == 1, (path.read_text(), err)
    binary = tmp_path / "b.yaml"
    binary.write_bytes(bytes(rng.integers(0, 256, 512, dtype=np.uint8)))
    assert main(["sweep", str(binary)]) == 2


# Cases of the second adversarial round (a few hundred tried by hand-written lists; these are
# the refusals that involve this round's rules: one range per paradigm option, sizes up to
# 2^53 bytes, the estimate counting the topology and the replay's time).
ROUND_TWO = [
    (["record", "ps-sync", "--set", "momentum=2"], "momentum must be a number in [0, 1)"),
    (["record", "ps-sync", "--set", "batch_size=0"], "batch_size must be an integer >= 1"),
    (["record", "ps-sync", "--set", "device_flops=0"], "device_flops must be a finite number > 0"),
    (["record", "dgc", "--set", "final_sparsity=1"], "final_sparsity must be a number in [0, 1)"),
    (["record", "dgc", "--set", "lr_warmup_epochs=-2"], "lr_warmup_epochs must be an integer >= 0"),
    (["record", "ps-async", "--set", "ssp=-1"], "ssp must be an integer >= 0"),
    (["record", "slimdp", "--set", "beta=1.5"], "beta must be a number in [0, 1]"),
    (["record", "pf", "--set", "a=0"], "a must be a finite number > 0"),
    (["collective", "ring", "-P", "4", "-n", "1e300"], "over the largest accepted, 2^53"),
    (["collective", "ring", "-P", "4", "-n", "10PB"], "over the largest accepted, 2^53"),
    (["collective", "mst", "-P", "1000000", "-n", "1MB"], "s of CPU"),
    (["collective", "ps", "-P", "4", "-n", "1MB", "--servers", "100000000"], "8e+08 messages"),
    (["scale", "-a", "mst", "-P", "1048576", "-n", "1MB"], "s of CPU"),
]


@pytest.mark.parametrize("argv, needle", ROUND_TWO)
def test_round_two_cases_are_refused_in_one_line(argv, needle, capsys, monkeypatch, tmp_path):
    from conftest import one_line_error

    monkeypatch.chdir(tmp_path)
    one_line_error(capsys, argv, needle)


@pytest.mark.parametrize("argv, needle", [
    (["demo", "--png", "/proc/x.png"], "cannot write /proc/x.png"),    # no header line first
    (["scale", "-a", ",", "-P", "2,4"], "--algorithms ',' names none"),  # was two empty tables
])
def test_round_two_fixes_give_one_line(argv, needle, capsys, monkeypatch, tmp_path):
    from conftest import one_line_error

    monkeypatch.chdir(tmp_path)
    one_line_error(capsys, argv, needle)
    if argv[0] == "demo":
        one_line_error(capsys, ["demo", "--png", str(tmp_path)], "Is a directory")


# Cases of the third adversarial round (248 tried by a hand-written list against a fresh clone;
# these are the ones that hung, printed a warning or a traceback, and are refused now).
ROUND_THREE = [
    (["collective", "ring", "-P", "4", "-n", "1MB", "--topology", "star:latency=1e300s"],
     "over the longest accepted"),
    (["collective", "ring", "-P", "4", "-n", "1GB", "--topology", "star:bandwidth=1e-300Bps"],
     "under the slowest accepted"),
    # 2 (4 - 1) x 1e8 messages an epoch over allreduce's default 30 epochs
    (["record", "allreduce", "--set", "collective=lp", "--set", "segments=100000000"],
     "1.8e+10 messages"),
    (["record", "ps-sync", "--epochs", "100000000"], "--force"),
    (["claims", "--seeds", "0..4294967295"], "over the 100000 accepted"),
    (["overlap", "--workers", "2..1048576"], "overlap at P = "),
    (["topology", "torus:dims=100000x100000"], "dims=100000x100000"),
]


@pytest.mark.parametrize("argv, needle", ROUND_THREE)
def test_round_three_cases_are_refused_in_one_line(argv, needle, capsys, monkeypatch, tmp_path):
    from conftest import one_line_error

    monkeypatch.chdir(tmp_path)
    one_line_error(capsys, argv, needle)


# Cases of the fourth adversarial round: accepted and ignored before, refused now.
ROUND_FOUR = [
    (["record", "--list", "--epochs", "3"], "--list lists every paradigm; it takes no --epochs"),
    (["topology", "--list", "--png", "x.png"], "--list lists every builder; it takes no --png"),
    (["demo", "--png", "x.txt"], "cannot write x.txt: a picture is a PNG"),
    (["topology", "star:n=4", "--png", "x.PNG.gz"], "its file name must end in .png"),
    (["record", "ps-async", "--set", "ssp=100000"], "ssp must be at most steps - 1 = 119"),
    (["record", "model-averaging", "--set", "period=100000"], "period must be at most steps"),
    (["record", "dgc", "--epochs", "2", "--set", "warmup_epochs=5"],
     "warmup_epochs must be at most epochs = 2"),
    (["record", "ps-sync", "--set", "batch_size=1000000"], "batch_size must be at most samples"),
]


@pytest.mark.parametrize("argv, needle", ROUND_FOUR)
def test_round_four_cases_are_refused_in_one_line(argv, needle, capsys, monkeypatch, tmp_path):
    from conftest import one_line_error

    monkeypatch.chdir(tmp_path)
    one_line_error(capsys, argv, needle)
    assert list(tmp_path.iterdir()) == []
