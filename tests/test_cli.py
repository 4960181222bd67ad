"""The command line: summaries, JSON, and one-line errors with exit status 2."""

import json
import subprocess
import sys

import networkx as nx
import pytest

from netsim import TraceBuilder, save_trace
from studies.cli.parser import main
from netsim.formats.graphio import write_topology
from conftest import one_line_error


@pytest.fixture
def trace_file(tmp_path):
    b = TraceBuilder(2)
    c = b.compute(0, seconds=1e-3)
    b.message(0, 1, 1.25e6, deps=[c])
    p = tmp_path / "t.json"
    save_trace(b.build(), p)
    return str(p)


def test_replay_json_matches_hockney(trace_file, capsys):
    # 1 ms compute, then 1.25 MB over two 10 Gbps (1.25e9 B/s) links of 1 us: 1 ms + 2 us + 1 ms.
    assert main(["replay", trace_file, "--topology", "star:n=2,bandwidth=10Gbps,latency=1us",
                 "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["makespan"] == pytest.approx(2e-3 + 2e-6, rel=1e-9)


def test_replay_table_and_csv(trace_file, tmp_path, capsys):
    csv = tmp_path / "links.csv"
    assert main(["replay", trace_file, "--topology", "star:n=2", "--csv", str(csv)]) == 0
    out = capsys.readouterr().out
    assert "makespan" in out and "bottleneck links" in out and "host0->switch" in out
    assert csv.read_text().startswith("src,dst,bandwidth")


def test_topology_describe_and_png(tmp_path, capsys, trace_file):
    png = tmp_path / "t.png"
    assert main(["topology", "two_tier:n=8,per_rack=4", "--png", str(png), "--result", trace_file]) == 0
    assert "compute nodes" in capsys.readouterr().out
    assert png.stat().st_size > 0


def write_json(tmp_path, ops, ranks=2):
    p = tmp_path / "bad.json"
    p.write_text(json.dumps({"ranks": ranks, "ops": ops}))
    return str(p)


@pytest.mark.parametrize("op, needle", [
    ({"type": "message", "src": 0, "dst": 3, "bytes": 1}, "unknown rank 3"),
    ({"type": "message", "src": 0, "dst": 1, "bytes": 1, "deps": [42]}, "depends on missing op 42"),
    ({"type": "message", "src": 0, "dst": 1, "bytes": -8}, "bytes must be finite and >= 0"),
    ({"type": "message", "src": 0, "dst": 1, "bytes": float("nan")}, "bytes must be finite"),
])
def test_bad_traces_exit_2(tmp_path, capsys, op, needle):
    path = write_json(tmp_path, [{"id": 0, **op}])
    one_line_error(capsys, ["replay", path, "--topology", "star:n=2"], needle)


def test_bad_topologies_exit_2(tmp_path, capsys, trace_file):
    one_line_error(capsys, ["replay", trace_file, "--topology", "star:n=2,bandwidth=0"], "bandwidth")
    one_line_error(capsys, ["replay", trace_file, "--topology", "moon"], "unknown topology 'moon'")
    one_line_error(capsys, ["replay", trace_file, "--topology", "star:n=2,colour=3"], "no option 'colour'")
    G = nx.Graph()
    G.add_node("a", kind="host")
    G.add_node("b", kind="host")
    G.add_edge("a", "s", bandwidth=1e9, latency=0.0)
    path = tmp_path / "split.json"
    write_topology(G, path)
    one_line_error(capsys, ["replay", trace_file, "--topology", str(path)],
                   "ranks 0 ('a') and 1 ('b') have no path between them")
    H = nx.Graph()
    H.add_edge("a", "b", bandwidth=0.0, latency=0.0)
    path = tmp_path / "zero.graphml"
    write_topology(H, path)
    one_line_error(capsys, ["replay", trace_file, "--topology", str(path)], "bandwidth 0.0")


def test_too_few_compute_nodes_and_usage(capsys, trace_file):
    one_line_error(capsys, ["replay", trace_file, "--topology", "star:n=1"], "only 1 compute nodes")
    one_line_error(capsys, ["replay"], "the following arguments are required")
    one_line_error(capsys, ["replay", "/nonexistent.json", "--topology", "star:n=2"], "not found")


def test_console_script_prints_no_traceback(tmp_path):
    path = write_json(tmp_path, [{"id": 0, "type": "message", "src": 0, "dst": 9, "bytes": 1}])
    proc = subprocess.run([sys.executable, "-m", "studies.cli.parser", "replay", path, "--topology", "star:n=2"],
                          capture_output=True, text=True)
    assert proc.returncode == 2
    assert "Traceback" not in proc.stderr and len(proc.stderr.strip().splitlines()) == 1


def test_cycle_and_blocked_message_are_named_exit_2(tmp_path, capsys):
    # Ops 1 and 2 wait for each other; message 3 waits for op 2 and so can never start.
    ops = [{"id": 0, "type": "compute", "rank": 0, "seconds": 1.0},
           {"id": 1, "type": "message", "src": 0, "dst": 1, "bytes": 8, "deps": [0, 2]},
           {"id": 2, "type": "message", "src": 1, "dst": 0, "bytes": 8, "deps": [1]},
           {"id": 3, "type": "message", "src": 1, "dst": 0, "bytes": 8, "deps": [2]}]
    path = write_json(tmp_path, ops)
    one_line_error(capsys, ["replay", path, "--topology", "star:n=2"], "dependency cycle among 2 ops")
    assert main(["replay", path, "--topology", "star:n=2"]) == 2
    err = capsys.readouterr().err
    assert "op 3 (message 1->0)" in err and "3 ops can never start" in err


def test_deadlock_error_lists_stuck_ops_one_per_line(monkeypatch, trace_file, capsys):
    from netsim import DeadlockError
    from studies.cli import parser as cli

    def stuck(*args, **kwargs):
        raise DeadlockError("2 ops can never run: ...", [
            {"op": 4, "rank": 0, "what": "message 0->1", "waits_for": [5]},
            {"op": 5, "rank": 1, "what": "compute on rank 1", "waits_for": [4]}])

    monkeypatch.setattr("netsim.result.simulate", stuck)
    assert cli.main(["replay", trace_file, "--topology", "star:n=2"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err[0] == "netsim: error: 2 ops can never run; the first of them:"
    assert err[1:] == ["  op 4 on rank 0: message 0->1, waits for ops [5]",
                       "  op 5 on rank 1: compute on rank 1, waits for ops [4]"]
