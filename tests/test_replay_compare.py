"""A replay set against the profile it came from: per-rank steps, per-collective kernel times."""

import json

import networkx as nx
import pytest

from conftest import one_line_error
from netsim import TraceBuilder, save_trace
from netsim.formats.kineto.load import load_kineto
from netsim.formats.kineto.measured import compare
from netsim.result import simulate
from studies.cli.parser import main
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


TOPO = "star:n=2,bandwidth=80Gbps,latency=0s"


def _saved_job(tmp_path):
    p = str(tmp_path / "job.npz")
    save_trace(_job(tmp_path), p)
    return p


def test_cli_compare_table_and_json(tmp_path, capsys):
    p, topo = _saved_job(tmp_path), TOPO
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


def test_whatif_compute_scale_and_host_gaps(tmp_path):
    from netsim.trace.whatif import whatif

    # Rank r: gemm [0, 100], 30 us of host time, then the allreduce at 130 us.
    for r in (0, 1):
        _write(tmp_path, f"r{r}.json", _rank(r, [_step(1, 0, 250), _kernel("gemm", 0, 100, 7),
                                                 _coll(130, 40, nelems=250_000)]))
    t = load_kineto(str(tmp_path))
    ring = 2 * (2 - 1) * (1e6 / 2) / B
    steps = {}
    for scale, gaps in ((1.0, "keep"), (0.5, "keep"), (1.0, "drop"), (0.5, "drop")):
        r = simulate(whatif(t, scale, gaps), _star(), library="mpich")
        steps[scale, gaps] = r.makespan
    assert steps[1.0, "keep"] == pytest.approx(100e-6 + 30e-6 + ring, rel=1e-9)
    assert steps[0.5, "keep"] == pytest.approx(50e-6 + 30e-6 + ring, rel=1e-9)
    assert steps[1.0, "drop"] == pytest.approx(100e-6 + ring, rel=1e-9)
    assert steps[0.5, "drop"] == pytest.approx(50e-6 + ring, rel=1e-9)


def test_cli_whatif_options(tmp_path, capsys):
    p, topo = _saved_job(tmp_path), TOPO
    assert main(["replay", p, "--topology", topo, "--library", "mpich", "--json"]) == 0
    base = json.loads(capsys.readouterr().out)["makespan"]
    assert main(["replay", p, "--topology", topo, "--library", "mpich", "--json",
                 "--compute-scale", "0.5"]) == 0
    assert json.loads(capsys.readouterr().out)["makespan"] == pytest.approx(base - 50e-6)
    one_line_error(capsys, ["replay", p, "--topology", topo, "--compute-scale", "-1"],
                   "--compute-scale")


def test_compare_uses_the_steady_steps_the_summary_uses(tmp_path):
    # Three steps of 250 us each but the first 400 us (a 250 us gemm, warm-up): the import
    # leaves step 1 out (netsim.formats.kineto.steps), and so must --compare, for both sides.
    for r in (0, 1):
        ev = [_step(1, 0, 400), _kernel("gemm", 0, 250, 7), _coll(250, 50, nelems=250_000)]
        for n, t0 in ((2, 400), (3, 650)):
            ev += [_step(n, t0, 250), _kernel("gemm", t0, 100, 7),
                   _coll(t0 + 100, 50, nelems=250_000)]
        _write(tmp_path, f"r{r}.json", _rank(r, ev))
    t = load_kineto(str(tmp_path))
    assert t.metadata["compared_steps"] == [1, 2]
    c = compare(t, simulate(t, _star(), library="mpich"))
    ring = 2 * (2 - 1) * (1e6 / 2) / B
    assert [r["measured"] for r in c["ranks"]] == pytest.approx([250e-6] * 2)
    # A steady step replays as the 100 us host gap before it (kept as host time), the 100 us
    # gemm and the ring; the warm-up step would be 250 us of gemm and the ring, no gap.
    steady = 100e-6 + 100e-6 + ring
    assert [r["replayed"] for r in c["ranks"]] == pytest.approx([steady] * 2, rel=1e-9)
