"""`netsim sweep`: a grid run on a real Dask LocalCluster, resumed, and refused on bad input."""

import csv
import json
import socket

import pytest

from netsim import NetsimError
from conftest import one_line_error
from netsim.analysis.collectives import compare
from studies.cli.parser import main
from studies.registry import topology_factory
from studies.sweep.run import plot_sweep, read_rows, run_point, run_sweep
from studies.sweep.config import COLUMNS, check_config, point_key, sweep_points

pytest.importorskip("distributed")
pytest.importorskip("yaml")

# 2 topologies x 2 collectives x 4 P = 16 points, small messages: quick to simulate.
CONFIG = """\
topologies:
  - star:bandwidth=10Gbps,latency=1us
  - two_tier:per_rack=2,bandwidth=10Gbps,uplink_bandwidth=10Gbps
collectives: [ring, rabenseifner]
bytes: [1MB]
P: 2..16
"""


@pytest.fixture
def config_file(tmp_path):
    path = tmp_path / "grid.yaml"
    path.write_text(CONFIG)
    return path


def rows_of(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def test_grid_on_a_local_cluster_then_resume(tmp_path, config_file):
    from studies.sweep.config import load_config

    cfg = load_config(config_file)
    out = tmp_path / "grid.csv"
    seen, log = [], []
    # A real LocalCluster of 2 workers (threads: a second to start, not several).
    first = run_sweep(cfg, out, jobs=2, processes=False, progress=lambda d, n: seen.append((d, n)),
                      log=log.append)
    assert first == {"points": 16, "skipped": 0, "ran": 16, "failed": 0, "output": str(out)}
    assert log == ["sweep: 16 points, 16 to simulate on a local cluster of 2 threads"]
    assert seen[0] == (0, 16) and seen[-1] == (16, 16)
    rows = rows_of(out)
    assert len(rows) == 16 and list(rows[0]) == list(COLUMNS)
    assert [point_key(r) for r in rows] == [point_key(p) for p in sweep_points(cfg)]  # grid order
    # Each row carries the inputs and the results, closed form included, as compare() gives them.
    r = next(r for r in rows if r["name"] == "ring" and r["P"] == "8" and "star" in r["topology"])
    want = compare("ring", topology_factory(r["topology"])(8), 8, 1e6)
    assert float(r["simulated"]) == want["simulated"]
    assert float(r["closed_form"]) == want["closed_form"]
    assert int(r["messages"]) == want["messages"] == 2 * 7 * 8
    assert r["top_link"] and 0 < float(r["saturated_fraction"]) <= 1 and r["error"] == ""
    before = out.read_text()
    # Rerun: every point is in the output already, so nothing is simulated (no cluster started).
    again = run_sweep(cfg, out, jobs=2, processes=False, log=log.append)
    assert again["ran"] == 0 and again["skipped"] == 16
    assert log[-1] == f"sweep: all 16 points are in {out} already"
    assert out.read_text() == before
    # Lose three rows: a rerun simulates exactly those three.
    with open(out, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=COLUMNS)
        w.writeheader()
        w.writerows(rows[3:])
    third = run_sweep(cfg, out, jobs=2, processes=False)
    assert (third["ran"], third["skipped"]) == (3, 13)
    assert len(rows_of(out)) == 16


@pytest.mark.slow
def test_local_cluster_of_processes(tmp_path, config_file):
    # The default: worker processes (a few seconds to start them).
    from studies.sweep.config import load_config

    out = tmp_path / "p.csv"
    counts = run_sweep(load_config(config_file), out, jobs=2)
    assert counts["ran"] == 16 and len(rows_of(out)) == 16


def test_cli_sweep_json_table_and_png(tmp_path, config_file, capsys):
    out, png = tmp_path / "s.csv", tmp_path / "s.png"
    argv = ["sweep", str(config_file), "-o", str(out), "--png", str(png), "--threads", "-j", "2"]
    assert main(argv + ["--json"]) == 0
    cap = capsys.readouterr()
    assert json.loads(cap.out)["ran"] == 16  # stdout: the JSON only
    assert "16 to simulate" in cap.err
    assert png.stat().st_size > 0
    assert main(argv) == 0
    cap = capsys.readouterr()
    assert "0 simulated now, 16 already in" in cap.out
    lines = cap.out.splitlines()
    header = lines[0]
    assert header.startswith("kind") and "closed form" in header
    assert all(len(line) <= len(lines[1]) for line in lines[2:18])  # aligned under the rule
    assert main(argv + ["--json", "--quiet"]) == 0
    cap = capsys.readouterr()
    assert json.loads(cap.out)["ran"] == 0 and cap.err == ""


def test_a_sweep_beside_another_dask_cluster_says_nothing_of_ports(tmp_path, config_file, capsys):
    # Dask's dashboard tried port 8787 and warned "Port 8787 is already in use" on stderr when
    # another sweep (any Dask cluster) held it: here a socket holds it, as a cluster would.
    holder = socket.socket()
    try:
        holder.bind(("", 8787))
        holder.listen()
    except OSError:  # already held by something else: the same situation
        pass
    try:
        out = tmp_path / "s.csv"
        assert main(["sweep", str(config_file), "-o", str(out), "--threads", "-j", "1",
                     "--png", "/dev/null"]) == 0
    finally:
        holder.close()
    err = capsys.readouterr().err
    assert "8787" not in err and "in use" not in err and "16 to simulate" in err


def test_unknown_key_lists_the_known_ones(tmp_path, capsys):
    path = tmp_path / "bad.yaml"
    path.write_text(CONFIG + "topolgies: [star]\n")
    one_line_error(capsys, ["sweep", str(path)], "unknown key 'topolgies'",
                   "known keys: topologies, collectives, bytes, paradigms")


def test_unreachable_scheduler_names_its_address(tmp_path, config_file, capsys):
    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    address = f"tcp://127.0.0.1:{port}"
    one_line_error(capsys, ["sweep", str(config_file), "-o", str(tmp_path / "o.csv"),
                            "--scheduler", address, "--timeout", "1"],
                   f"cannot reach the Dask scheduler at {address}")


def test_unwritable_output(tmp_path, config_file, capsys):
    one_line_error(capsys, ["sweep", str(config_file), "-o", str(tmp_path / "no" / "o.csv")],
                   "cannot write", "no/o.csv")
    foreign = tmp_path / "foreign.csv"
    foreign.write_text("a,b\n1,2\n")
    one_line_error(capsys, ["sweep", str(config_file), "-o", str(foreign)], "columns differ")


@pytest.mark.parametrize("raw, needle", [
    ({"topologies": ["star"], "collectives": ["tree"], "bytes": [1], "P": [2]},
     "unknown collective 'tree'"),
    ({"topologies": ["star"], "collectives": ["ring"], "P": [2]}, "collectives need bytes"),
    ({"topologies": ["moon"], "collectives": ["ring"], "bytes": [1], "P": [2]},
     "unknown topology 'moon'"),
    ({"topologies": ["star"], "collectives": ["ring"], "bytes": [1], "P": [4, 2]},
     "strictly increasing"),
    ({"topologies": ["star"], "paradigms": ["gossip"], "P": [2]}, "unknown paradigm 'gossip'"),
    ({"topologies": ["star"], "paradigms": ["ps-sync"], "P": [2], "options": {"ring": {}}},
     "not in collectives or paradigms"),
    ({"topologies": ["star"], "paradigms": ["ps-sync"], "P": [2],
      "options": {"ps-sync": {"colour": 1}}}, "ps-sync has no option 'colour'"),
    ({"topologies": ["star"], "paradigms": ["ps-sync"], "P": [2], "hidden": ["a,b"]},
     "hidden sizes look like"),
    ({"P": [2], "collectives": ["ring"]}, "missing key 'topologies'"),
    (["star"], "a sweep config is a mapping"),
])
def test_bad_configs(raw, needle):
    with pytest.raises(NetsimError, match=needle):
        check_config(raw)


def test_paradigm_points_record_and_report_time_per_iteration():
    cfg = check_config({"topologies": ["star:bandwidth=1Gbps"], "paradigms": ["ps-sync", "ringtmp"],
                        "hidden": [16], "P": [2, 4], "options": {"ps-sync": {"servers": 2}}})
    points = sweep_points(cfg)
    assert [(p["name"], p["P"], p["hidden"]) for p in points] == [
        ("ps-sync", 2, "16"), ("ps-sync", 4, "16"), ("ringtmp", 2, "16"), ("ringtmp", 4, "16")]
    from studies.scaling.paradigm import sweep_point

    runners = {"paradigm": sweep_point}  # the core knows no paradigm: the caller runs them
    assert "no runner for paradigm points" in run_point(points[1])["error"]
    ps = run_point(points[1], runners)
    assert ps["error"] is None and ps["ranks"] == 4 + 2
    assert ps["simulated"] == pytest.approx(ps["makespan"] / ps["iterations"])
    assert ps["accuracy"] is not None and ps["messages"] > 0
    bad = run_point(points[3], runners)  # 2 dense layers cannot be split over 4 ring nodes
    assert "without a layer" in bad["error"] and bad["simulated"] is None


def test_plot_marks_saturation_and_skips_errors(tmp_path):
    rows = [{"kind": "paradigm", "name": "ps-sync", "topology": "star", "P": p, "hidden": "16",
             "simulated": t, "closed_form": None, "saturated_fraction": f, "error": e}
            for p, t, f, e in [(2, 1.0, 0.2, None), (4, 1.5, 0.7, None), (8, None, None, "boom")]]
    png = tmp_path / "p.png"
    series = plot_sweep(rows, png)
    # Small multiples (issue 18): the topology names the panel, no longer every label.
    assert series == [{"label": "ps-sync hidden 16", "P": [2, 4], "simulated": [1.0, 1.5],
                       "closed_form": None, "saturation": 4, "panel": "paradigms on star"}]
    assert png.stat().st_size > 0
    assert read_rows(tmp_path / "absent.csv") == []


def test_ctrl_c_during_a_sweep_prints_one_line(tmp_path):
    # SIGINT to the whole process group, as a terminal's Ctrl-C does: the Dask worker processes
    # used to print ~66 lines of tracebacks before "netsim: interrupted".
    import os
    import signal
    import subprocess
    import sys

    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    cfg = tmp_path / "s.yaml"
    cfg.write_text("topologies: [star]\ncollectives: [ring, rabenseifner]\n"
                   "bytes: [1MB, 2MB, 3MB, 64MB, 128MB, 256MB]\n"
                   "P: [64, 100, 120, 127, 128, 129, 200, 255, 256, 257]\n")
    p = subprocess.Popen([sys.executable, "-m", "studies.cli.parser", "sweep", str(cfg), "-j", "2"],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                         cwd=tmp_path, start_new_session=True,
                         env={**os.environ, "PYTHONPATH": root})
    first = p.stderr.readline()  # logged once the cluster is up and the points are submitted
    assert first.startswith("sweep: 120 points"), first
    os.killpg(p.pid, signal.SIGINT)
    _, err = p.communicate(timeout=120)
    assert p.returncode == 130
    assert err == "netsim: interrupted\n", err
