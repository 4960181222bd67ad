"""`netsim import` / `netsim export`: profiles and Chakra files through the CLI."""

import os
import pathlib
import re

import pytest

from netsim import TraceBuilder, load_trace, save_trace, simulate
from studies.cli.parser import main
from studies.registry import parse_topology

A100 = pathlib.Path(__file__).parent / "data" / "kineto" / "hta_a100_ddp_rank0.json.gz"


def test_import_kineto_then_replay_shows_the_measured_step_time(tmp_path, capsys):
    out = tmp_path / "a100.npz"
    assert main(["import", "kineto", str(A100), "--symmetric", "--steps", "4..6",
                 "-o", str(out), "-q"]) == 0
    t = load_trace(out)
    assert t.metadata["source"] == "kineto" and t.metadata["steps"] == [4, 5, 6]
    assert t.num_iterations == 3
    topo = "star:bandwidth=300GB/s,latency=300ns"
    assert main(["replay", str(out), "--topology", topo]) == 0
    text = capsys.readouterr().out
    # The same replay in process: the row is the simulated mean iteration against the
    # profile's own mean step time.
    r = simulate(t, parse_topology(f"star:n={t.ranks},bandwidth=300GB/s,latency=300ns"))
    measured = t.metadata["measured_step_time"]
    want = 100 * (r.iteration_times.mean() - measured) / measured
    got = re.search(r"difference\s+([+-][\d.]+) %", text)
    assert "measured step (profile)" in text and got
    assert float(got.group(1)) == pytest.approx(want, abs=0.05)


def test_export_then_import_chakra_replays_the_same(tmp_path, capsys):
    b = TraceBuilder(3)
    a = b.compute(0, seconds=1e-3)
    m = b.message(0, 1, 4e6, deps=[a])
    b.message(1, 2, 2e6, deps=[m])
    src = tmp_path / "t.npz"
    save_trace(b.build(), src)
    assert main(["export", "chakra", str(src), "-o", str(tmp_path / "et"), "-q"]) == 0
    assert sorted(os.listdir(tmp_path / "et")) == [f"chakra.{r}.et" for r in range(3)]
    back = tmp_path / "back.npz"
    assert main(["import", "chakra", str(tmp_path / "et"), "-o", str(back), "-q"]) == 0
    G = parse_topology("star:n=3,bandwidth=1GB/s,latency=1us")
    # 1 ms compute, then 4 MB and 2 MB one after the other, each over two 1 us hops.
    want = 1e-3 + (2e-6 + 4e6 / 1e9) + (2e-6 + 2e6 / 1e9)
    assert simulate(load_trace(back), G).makespan == pytest.approx(want, rel=1e-9)


@pytest.mark.parametrize("argv, needle", [
    (["import", "kineto", "x", "-o", "t.npz", "--steps", "5..2"], "--steps must be A..B"),
    (["import", "chakra", "d", "-o", "t.npz", "--steps", "2..3"], "applies to kineto"),
    (["import", "chakra", "nowhere", "-o", "t.npz"], "nowhere"),
    (["import", "kineto", "missing.json", "-o", "t.npz"], "missing.json"),
    (["export", "chakra", "missing.npz", "-o", "et"], "missing.npz"),
])
def test_bad_input_is_one_line_and_exit_2(argv, needle, tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("netsim: error:") and needle in err and "\n" not in err
