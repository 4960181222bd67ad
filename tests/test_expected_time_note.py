"""Long accepted work is announced once, before it starts, and never before a refusal.

A command prices its work while it checks its input (:mod:`studies.scaling.trace_size`,
:mod:`studies.scaling.run_length`); once every check has passed, one note on a terminal gives
the estimated CPU time (:func:`studies.cli.console.expect`). The notes' figures are the
estimates' own (the contract: the user reads what the refusal would have said), so the
tests compare them with :func:`studies.scaling.trace_size.check_fits` called directly, and check
where the note appears: after the checks, before the work, only on a terminal.
"""

import importlib
import io
import sys

import pytest

from studies.cli import console
from studies.cli.parser import main
from studies.scaling.run_length import EPOCH_SECONDS
from studies.scaling.trace_size import check_fits


class Terminal(io.StringIO):
    def isatty(self):
        return True


def run_cli(monkeypatch, capsys, argv, tty=True):
    """Exit status and stderr of ``netsim ARGV`` with stderr a terminal (or not)."""
    err = Terminal() if tty else io.StringIO()
    monkeypatch.setattr(sys, "stderr", err)
    code = main(argv)
    capsys.readouterr()
    return code, err.getvalue()


def spy(monkeypatch, command):
    """The (seconds, what) of every :func:`studies.cli.console.expect` call ``command`` makes."""
    module = importlib.import_module(f"studies.cli.commands.{command}")
    calls = []

    def recording(args, seconds, what):
        calls.append((seconds, what))
        return console.expect(args, seconds, what)

    monkeypatch.setattr(module, "expect", recording)
    return calls


NOTE = "of CPU by the work estimate"


def test_expect_shows_only_long_work():
    quiet = __import__("argparse").Namespace(quiet=True)
    assert console.expect(quiet, None, "x") is None
    assert console.expect(quiet, console.EXPECT_SECONDS * 0.99, "x") is None
    # 10 s, 5 min (300 s / 60), 2.5 h (9000 s / 3600): the units a person reads.
    assert console.expect(quiet, 10.0, "x") == f"x: about 10 s {NOTE} (benchmarks/README.md); " \
                                               "Ctrl-C stops it"
    assert "about 5 min" in console.expect(quiet, 300.0, "x")
    assert "about 2.5 h" in console.expect(quiet, 9000.0, "x")


def test_collective_announces_its_estimate_before_the_replay(monkeypatch, capsys):
    monkeypatch.setattr(console, "EXPECT_SECONDS", 0.0)   # every priced command announces
    calls = spy(monkeypatch, "collective")
    code, err = run_cli(monkeypatch, capsys, ["collective", "ring", "-P", "8", "-n", "1MB"])
    assert code == 0
    assert calls == [(check_fits("ring", 8, topology="star")["seconds"], "ring on P = 8")]
    assert f"ring on P = 8: about 0 s {NOTE}" in err and err.count(NOTE) == 1


def test_no_note_off_a_terminal_or_under_quiet(monkeypatch, capsys):
    monkeypatch.setattr(console, "EXPECT_SECONDS", 0.0)
    argv = ["collective", "ring", "-P", "8", "-n", "1MB"]
    assert NOTE not in run_cli(monkeypatch, capsys, argv, tty=False)[1]
    assert NOTE not in run_cli(monkeypatch, capsys, argv + ["--quiet"])[1]


def test_a_refused_larger_p_prints_no_note_for_the_smaller(monkeypatch, capsys):
    # Every P is checked before any note: P = 64 passes, 2,000,000 is refused (8e12
    # messages, ring_allreduce's 2 P (P - 1)), and the user reads the refusal alone.
    monkeypatch.setattr(console, "EXPECT_SECONDS", 0.0)
    code, err = run_cli(monkeypatch, capsys, ["scale", "-a", "ring", "-P", "64,2000000",
                                              "-n", "1MB"])
    assert code == 2 and NOTE not in err
    assert err.startswith("netsim: error: ring on P = 2000000 would be 8e+12 messages")


def test_claims_refused_after_pricing_prints_no_note(monkeypatch, capsys):
    # Two seeds at studies.scaling.run_length.SEED_SECONDS = 15 s each: 30 s, above the default
    # EXPECT_SECONDS, priced before the --png check that refuses the command.
    code, err = run_cli(monkeypatch, capsys, ["claims", "--seeds", "0..1", "--png", "x.txt"])
    assert code == 2 and NOTE not in err and err.startswith("netsim: error:")


def test_record_announces_its_epochs(monkeypatch, capsys):
    monkeypatch.setattr(console, "EXPECT_SECONDS", 0.0)
    calls = spy(monkeypatch, "record")
    code, err = run_cli(monkeypatch, capsys, ["record", "ps-sync", "--epochs", "3", "--json"])
    assert code == 0 and "recording ps-sync: about 0 s" in err and err.count(NOTE) == 1
    # Three epochs at studies.scaling.run_length.EPOCH_SECONDS each (the default width prices below).
    assert calls == [(pytest.approx(3 * EPOCH_SECONDS, rel=1e-12), "recording ps-sync")]


def test_paradigm_scaling_announces_points_beyond_the_probe(monkeypatch, capsys):
    monkeypatch.setattr(console, "EXPECT_SECONDS", 0.0)
    calls = spy(monkeypatch, "scale")
    code, err = run_cli(monkeypatch, capsys, ["scale", "ps-sync", "-P", "32", "--iterations",
                                              "1", "--png", "/dev/null"])
    assert code == 0 and err.count(NOTE) == 1 and "ps-sync at P = 32: about" in err
    assert len(calls) == 1 and calls[0][0] > 0
    # Within the probe sizes only the training is priced (one iteration at
    # studies.scaling.run_length.EPOCH_SECONDS, the least priced unit), and announced once.
    calls.clear()
    code, err = run_cli(monkeypatch, capsys, ["scale", "ps-sync", "-P", "4", "--iterations", "1",
                                              "--png", "/dev/null"])
    assert code == 0 and err.count(NOTE) == 1 and "ps-sync at P = 4: about 0 s" in err
    assert len(calls) == 1 and calls[0][0] >= EPOCH_SECONDS


@pytest.mark.parametrize("argv", [["scale", "-a", "ring,mst", "-P", "8,16", "-n", "1MB",
                                   "--png", "/dev/null"]])
def test_scale_announces_the_sum_once(monkeypatch, capsys, argv):
    monkeypatch.setattr(console, "EXPECT_SECONDS", 0.0)
    calls = spy(monkeypatch, "scale")
    code, err = run_cli(monkeypatch, capsys, argv)
    total = sum(check_fits(a, P, topology="star")["seconds"] for a in ("ring", "mst")
                for P in (8, 16))
    assert code == 0 and err.count(NOTE) == 1
    assert calls == [(pytest.approx(total, rel=1e-12), "ring, mst at P = 8, 16")]


def test_record_prices_the_paradigms_default_epochs(monkeypatch, capsys):
    # No --epochs: ps-sync's default run of 30 epochs (workloads.PARADIGMS), each at
    # studies.scaling.run_length.EPOCH_SECONDS; it was priced as one epoch.
    monkeypatch.setattr(console, "EXPECT_SECONDS", 0.0)
    calls = spy(monkeypatch, "record")
    code, _ = run_cli(monkeypatch, capsys, ["record", "ps-sync", "--json"])
    assert code == 0
    assert calls == [(pytest.approx(30 * EPOCH_SECONDS, rel=1e-12), "recording ps-sync")]


def test_a_paradigm_refused_by_its_study_prints_no_simulating_note(monkeypatch, capsys):
    # ps-async with n_push = 10^6 at P = 64 is grown from its traces at the probe sizes and
    # refused by the study's own estimate (over the hour allowed); the note "simulating ..."
    # came before that refusal, so a terminal read two lines for one error.
    code, err = run_cli(monkeypatch, capsys, ["scale", "ps-async", "-P", "64", "--set",
                                              "n_push=1000000"])
    assert code == 2 and err.startswith("netsim: error: ps-async at P = 64")
    assert len(err.splitlines()) == 1 and "simulating" not in err
    code, err = run_cli(monkeypatch, capsys, ["scale", "ps-sync", "-P", "4", "--iterations", "1",
                                              "--png", "/dev/null"])
    assert code == 0 and "simulating ps-sync at P = 4 ..." in err   # accepted: still noted


TRANSFORMER = ["scale", "transformer", "-P", "16", "--topology", "gpu_cluster:machine=dgx_h100",
               "--config", "gpt3-13b:layers=4"]


def test_transformer_prices_every_timeline_its_closed_form_walks(monkeypatch, capsys):
    from studies.scaling.run_length import LAYER_SECONDS, PASS_SECONDS
    from studies.scaling.trace_size import check_ops

    monkeypatch.setattr(console, "EXPECT_SECONDS", 0.0)
    calls = spy(monkeypatch, "scale_transformer")
    code, err = run_cli(monkeypatch, capsys, TRANSFORMER + ["--pp", "2", "--global-batch", "64"])
    assert code == 0 and err.count(NOTE) == 1
    # tp 8 x pp 2 of 16 GPUs: dp 1, m = 64 micro-batches, 2 m pp = 256 passes; two stages
    # (the embedding on the first, the logit layer on the last) are uneven, so the closed
    # form walks them 4 times (workloads.transformer.closed.timelines); the 4 layers are
    # walked by the layouts' check and by the one point: 8 layer walks; and the topology.
    topology = check_ops(0, "x", topology="gpu_cluster:machine=dgx_h100", ranks=16,
                         passes=1)["seconds"]
    assert calls == [(pytest.approx(256 * 4 * PASS_SECONDS + 8 * LAYER_SECONDS + topology,
                                    rel=1e-12), "transformer at P = 16")]


def test_transformer_refused_by_its_options_prints_no_note(monkeypatch, capsys):
    # ZeRO-1 over dp 1 (tp 8 x pp 2 of 16 GPUs) was refused by the closed form after the
    # note had been printed; every check of the closed form's options now runs first.
    monkeypatch.setattr(console, "EXPECT_SECONDS", 0.0)
    code, err = run_cli(monkeypatch, capsys, TRANSFORMER + ["--pp", "2", "--global-batch", "64",
                                                            "--zero", "1"])
    assert code == 2 and NOTE not in err
    assert err == "netsim: error: ZeRO-1 shards over data-parallel replicas; dp is 1\n"


def test_a_model_of_too_many_layers_is_refused_before_its_layers_are_listed(capsys):
    from conftest import one_line_error

    # 10^9 layers at studies.scaling.run_length.LAYER_BYTES = 134 B: 1.34e11 B = 134 GB
    one_line_error(capsys, TRANSFORMER[:-1] + ["gpt3-13b:layers=1000000000", "--global-batch",
                                               "16"],
                   "would hold 1e+09 layers, 134 GB at 134 B each, over the")


def test_topology_announces_the_build_of_a_large_spec(monkeypatch, capsys):
    from studies.scaling.trace_size import BUILD_SECONDS

    monkeypatch.setattr(console, "EXPECT_SECONDS", 0.0)
    calls = spy(monkeypatch, "topology")
    code, err = run_cli(monkeypatch, capsys, ["topology", "star:n=64", "--png", "/dev/null"])
    assert code == 0 and err.count(NOTE) == 1
    hand = 1 + 2 * 64   # a star of 64 hosts: 65 nodes and 64 edges
    assert calls == [(pytest.approx(hand * BUILD_SECONDS, rel=1e-12),
                      f"building star:n=64 ({hand:.3g} nodes and edges)")]
    # the straight line through the probes at 8 (17 elements) and 16 (33) gives it
    # exactly, where the power law through them gave 33 (33/17)^2 = 124.3
    # (studies.registry._growth)
