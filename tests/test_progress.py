"""Progress bars on a terminal only, quiet elsewhere and under --quiet; hooks count right."""

import fcntl
import io
import json
import math
import os
import pty
import struct
import subprocess
import sys
import termios

import pytest

import workloads
from netsim import simulate
from studies.cli.parser import main
from netsim.comm.collectives import ring_allreduce
from netsim.progress import Progress, show_progress
from topologies import star


class Terminal(io.StringIO):
    def isatty(self):
        return True


def test_bar_only_on_a_terminal_and_not_when_quiet():
    pytest.importorskip("tqdm")
    assert show_progress(stream=Terminal()) and not show_progress(stream=io.StringIO())
    assert not show_progress(quiet=True, stream=Terminal())
    tty, pipe = Terminal(), io.StringIO()
    for stream in (tty, pipe):
        with Progress(5, "points", stream=stream, unit="point") as bar:
            for k in range(1, 6):
                bar(k)
    assert "points" in tty.getvalue() and "/5" in tty.getvalue()
    assert pipe.getvalue() == ""
    quiet = Terminal()
    with Progress(5, "points", show=False, stream=quiet) as bar:
        bar(5)
    assert quiet.getvalue() == "" and bar.done == 5


def test_simulate_progress_counts_every_op():
    trace = ring_allreduce(8, 1e6)
    with Progress(trace.num_ops, stream=io.StringIO()) as bar:
        simulate(trace, star(8), progress=bar)
    assert bar.done == trace.num_ops


@pytest.mark.parametrize("name", list(workloads.PARADIGMS))
def test_every_paradigm_reports_each_epoch_once(name):
    calls = []
    plain = workloads.record(name, epochs=2, seed=3)
    run = workloads.record(name, epochs=2, seed=3, progress=lambda e, n: calls.append((e, n)))
    assert calls == [(1, 2), (2, 2)]
    assert "progress" not in workloads.PARADIGMS[name].options  # not a paradigm option
    # The hook changes nothing about the run.
    assert run.trace.num_ops == plain.trace.num_ops and run.accuracy == plain.accuracy


def run_netsim(argv, stderr_tty):
    """Run the netsim CLI in a subprocess, its stderr on a pseudo-terminal or a pipe."""
    cmd = [sys.executable, "-m", "studies.cli.parser"] + argv
    env = dict(os.environ)
    if not stderr_tty:
        proc = subprocess.run(cmd, capture_output=True, text=True, env=env)
        return proc.returncode, proc.stdout, proc.stderr
    leader, follower = pty.openpty()
    # A new pseudo-terminal is 0 x 0 characters: give it a real terminal's size.
    fcntl.ioctl(follower, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 100, 0, 0))
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=follower, env=env)
    os.close(follower)
    chunks = []
    while True:
        try:
            data = os.read(leader, 4096)
        except OSError:  # the child closed the terminal
            break
        if not data:
            break
        chunks.append(data)
    out = proc.stdout.read().decode()
    proc.wait()
    os.close(leader)
    return proc.returncode, out, b"".join(chunks).decode(errors="replace")


# `netsim record ps-sync --epochs 3`: 3 epochs x ceil(30 / 8) steps x 4 workers x 2 messages.
PS_SYNC_MESSAGES = 3 * math.ceil(120 / 4 / 8) * 4 * 2


def test_cli_bar_on_a_terminal_quiet_under_quiet_or_a_pipe(monkeypatch, capsys):
    pytest.importorskip("tqdm")
    argv = ["record", "ps-sync", "--epochs", "3", "--json"]
    for quiet, tty in ((False, True), (True, True), (False, False)):
        err = Terminal() if tty else io.StringIO()
        monkeypatch.setattr(sys, "stderr", err)
        assert main(argv + (["--quiet"] if quiet else [])) == 0
        # stdout: results only. Iris: 120 training rows over 4 workers = 30 each, batches of
        # 8: ceil(30/8) = 4 steps per epoch; each step a push and a pull per worker.
        assert json.loads(capsys.readouterr().out)["messages"] == PS_SYNC_MESSAGES
        drawn = "recording ps-sync" in err.getvalue() and "epoch" in err.getvalue()
        assert drawn == (tty and not quiet), (quiet, tty, err.getvalue())


def test_cli_bar_in_a_real_terminal():
    # End to end: a separate process whose stderr is a pseudo-terminal draws the bar.
    pytest.importorskip("tqdm")
    code, out, err = run_netsim(["record", "ps-sync", "--epochs", "3", "--json"], stderr_tty=True)
    assert code == 0 and "recording ps-sync" in err and "epoch" in err
    assert json.loads(out)["messages"] == PS_SYNC_MESSAGES
