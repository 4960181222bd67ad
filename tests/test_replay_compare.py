"""A replay set against the profile it came from: per-rank steps, per-collective kernel times."""

import json

import networkx as nx
import pytest

from conftest import one_line_error
from netsim import TraceBuilder, save_trace
from netsim.kineto import load_kineto
from netsim.measured import compare
from netsim.result import simulate
from studies.cli import main
from test_kineto import _coll, _kernel, _rank, _step, _write

B = 10e9          # bytes/s, each way on each link of the test star


def _star():
    G = nx.Graph()
    G.add_node("sw", kind="switch")
    for g in (0, 1):
        G.add_node(f"gpu{g}", kind="gpu")
        G.add_edge(f"gpu{g}", "sw", bandwidth=B, latency=0.0)
    return G


def _job(tmp_path, kernel_us=(50, 20)):
    """Two ranks: gemm then a 1 MB float allreduce whose kernel each rank measured."""
    for r, k in enumerate(kernel_us):
        _write(tmp_path, f"r{r}.json", _rank(r, [_step(1, 0, 250), _kernel("gemm", 0, 100, 7),
                                                 _coll(100, k, nelems=250_000)]))
    return load_kineto(str(tmp_path))


def test_per_rank_steps_and_collective_classes_against_the_ring(tmp_path):
    t = _job(tmp_path)
    c = compare(t, simulate(t, _star(), library="mpich"))
    # MPICH ring allreduce over P = 2: 2 (P - 1) chunks of n / P, each crossing two links at B
    # at once (a fluid flow): 2 * 0.5e6 / B = 100 us, after the 100 us gemm.
    ring = 2 * (2 - 1) * (1e6 / 2) / B
    assert [r["replayed"] for r in c["ranks"]] == pytest.approx([100e-6 + ring] * 2, rel=1e-9)
    assert [r["error"] for r in c["ranks"]] == pytest.approx([(100e-6 + ring) / 250e-6 - 1] * 2)
    (cls,) = c["collectives"]
    assert (cls["kind"], cls["bytes"], cls["calls"]) == ("allreduce", 1e6, 1)
    assert cls["measured_min"] == pytest.approx(20e-6) and cls["measured_median"] == \
        pytest.approx(35e-6)
    assert cls["simulated"] == pytest.approx(ring, rel=1e-9)
    assert cls["error"] == pytest.approx(ring / 20e-6 - 1, rel=1e-9)
    assert cls["plan"] == "mpich ring"


def test_measured_kernel_time_is_reported_never_replayed(tmp_path):
    fast, slow = tmp_path / "fast", tmp_path / "slow"
    fast.mkdir(), slow.mkdir()
    a, b = _job(fast, (50, 20)), _job(slow, (5000, 2000))
    ra, rb = simulate(a, _star()), simulate(b, _star())
    assert ra.makespan == rb.makespan
    assert b.metadata["measured_collectives"] == [[5000e-6, 2000e-6]]


def test_cli_compare_table_and_json(tmp_path, capsys):
    t = _job(tmp_path)
    p = str(tmp_path / "job.npz")
    save_trace(t, p)
    topo = "star:n=2,bandwidth=80Gbps,latency=0s"
    assert main(["replay", p, "--topology", topo, "--compare", "--library", "mpich"]) == 0
    out = capsys.readouterr().out
    assert "measured step ms" in out and "step error over ranks" in out and "mpich ring" in out
    assert main(["replay", p, "--topology", topo, "--compare", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert [r["rank"] for r in doc["compare"]["ranks"]] == [0, 1]


def test_cli_compare_without_measurements_is_one_line(tmp_path, capsys):
    b = TraceBuilder(2)
    b.message(0, 1, 1e6)
    p = str(tmp_path / "t.npz")
    save_trace(b.build(), p)
    one_line_error(capsys, ["replay", p, "--topology", "star:n=2", "--compare"],
                   "no measurements to compare")
