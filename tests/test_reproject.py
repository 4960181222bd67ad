"""Projection of imported data-parallel profiles to another world size (netsim.trace.reproject)."""

import gzip
import json
import os

import numpy as np
import pytest

import netsim
from netsim.errors import TraceError
from netsim.formats.kineto.load import load_kineto
from netsim.trace.programs import assemble
from netsim.comm.library import mpich_wire
from netsim.trace.reproject import reproject
from studies.cli.parser import main

A100 = os.path.join(os.path.dirname(__file__), "data", "kineto", "hta_a100_ddp_rank0.json.gz")
ELEMENT = {"Float": 4, "Long": 8}  # bytes per element, written out independently of netsim.formats.kineto.load
A100_LINK = 300e9       # A100 datasheet: NVLink 600 GB/s total, 300 GB/s each way
NVLINK_HOP = 0.6e-6     # NCCL src/graph/tuning.cc hwLat[NVLINK][RING][LL]


def _box(P, bandwidth, latency):
    """P GPUs, each on its own full-duplex link to one switch."""
    G = netsim.nx.Graph()
    G.add_node("sw", kind="nvswitch")
    for g in range(P):
        G.add_node(f"gpu{g}", kind="gpu")
        G.add_edge(f"gpu{g}", "sw", bandwidth=bandwidth, latency=latency)
    return G


def _kernel(name, ts, dur, stream, **args):
    return {"ph": "X", "cat": "kernel", "name": name, "ts": ts, "dur": dur,
            "args": {"stream": stream, **args}}


def _allreduce(ts, dur, nelems, world):
    return _kernel("ncclKernel_AllReduce", ts, dur, 20, **{
        "Collective name": "allreduce", "In msg nelems": nelems, "Out msg nelems": nelems,
        "dtype": "Float", "Group size": world, "Process Group Name": "0",
        "Process Group Ranks": json.dumps(list(range(world)))})


def _profile(tmp_path, name, rank, world, gemm_us=100, nelems=1000):
    # gemm, the gradient allreduce on its own stream, 10 us of host time, sgd.
    doc = {"distributedInfo": {"rank": rank, "world_size": world}, "traceEvents": [
        _kernel("gemm", 0, gemm_us, 7), _allreduce(gemm_us, 50, nelems, world),
        _kernel("sgd", gemm_us + 60, 10, 7)]}
    p = tmp_path / name
    p.write_text(json.dumps(doc))
    return str(p)


def test_small_job_at_four_times_its_ranks_matches_the_ring_closed_form(tmp_path):
    t = load_kineto(_profile(tmp_path, "r0.json", 0, 2), symmetric=True)
    big = reproject(t, 8)
    assert big.ranks == 8 and big.metadata["world_size"] == 8
    assert big.metadata["collectives"] == [{"kind": "allreduce", "bytes": 4000.0,
                                            "group": list(range(8))}]
    n, P, B, a = 4000.0, 8, 4e9, 1e-6
    assert big.num_collectives == 1 and mpich_wire(big).total_bytes == pytest.approx(
        2 * (P - 1) * n)
    # 100 us gemm; ring allreduce 2 (P - 1) (2 a + n / (P B)) over two-hop paths; the 10 us
    # host gap; 10 us sgd. Every rank runs the same program.
    G = _box(P, B, a)
    want = 100e-6 + 2 * (P - 1) * (2 * a + n / P / B) + 20e-6
    assert netsim.simulate(big, G, library="mpich").makespan == pytest.approx(want, rel=1e-12)


def test_batch_scale_scales_measured_ops_and_keeps_host_gaps(tmp_path):
    t = load_kineto(_profile(tmp_path, "r0.json", 0, 2), symmetric=True)
    half = reproject(t, 4, batch_scale=0.5)   # the global batch of the 2-rank job kept
    n, P, B = 4000.0, 4, 4e9
    want = 50e-6 + 2 * (P - 1) * n / P / B + 10e-6 + 5e-6
    assert netsim.simulate(half, _box(P, B, 0.0), library="mpich").makespan == pytest.approx(
        want, rel=1e-12)
    assert half.metadata["projection"]["batch_scale"] == 0.5


def test_each_new_rank_runs_the_program_of_recorded_rank_q_mod_P(tmp_path):
    for r, gemm in ((0, 100), (1, 150)):
        _profile(tmp_path, f"r{r}.json", r, 2, gemm_us=gemm)
    t = load_kineto(str(tmp_path))
    big = reproject(t, 4)
    tags = np.array(big.tags + [""])[big.tag]
    gemm = np.flatnonzero((tags == "kernel") & (big.duration >= 100e-6))
    gemm = gemm[np.argsort(big.rank[gemm])]
    assert big.duration[gemm].tolist() == pytest.approx([100e-6, 150e-6, 100e-6, 150e-6])
    assert big.rank[gemm].tolist() == [0, 1, 2, 3]


def test_projection_to_the_recorded_world_size_is_the_same_trace():
    t = load_kineto(A100, symmetric=True, steps=[5])
    again = reproject(t, t.ranks)
    for col in ("kind", "rank", "peer", "size", "iteration", "dep_ptr", "dep_idx", "spec"):
        assert np.array_equal(getattr(again, col), getattr(t, col)), col
    assert np.array_equal(again.duration, t.duration, equal_nan=True)
    assert again.specs.rows() == t.specs.rows()


def _rewritten_at(world, tmp_path):
    """The A100 profile with its world size and every collective's group set to ``world``
    ranks: the same job's collectives described directly at ``world``."""
    doc = json.load(gzip.open(A100))
    doc["distributedInfo"]["world_size"] = world
    for e in doc["traceEvents"]:
        a = e.get("args", {})
        if "Collective name" in a:
            a["Group size"] = world
            a["Process Group Ranks"] = json.dumps(list(range(world)))
    p = tmp_path / f"a100_at_{world}.json"
    p.write_text(json.dumps(doc))
    return str(p)


def test_a100_projected_from_2_to_8_equals_the_job_built_directly_at_8(tmp_path):
    """Acceptance (issue 19, item 3): P -> 4P against the same job's collectives at 4P."""
    recorded = load_kineto(A100, symmetric=True, steps=[5])
    P = 4 * recorded.ranks
    projected = reproject(recorded, P)
    direct = load_kineto(_rewritten_at(P, tmp_path), symmetric=True, steps=[5])
    # Bytes, from the events' own arguments: a ring allreduce of n bytes moves 2 (P - 1) n,
    # a one-segment pipeline broadcast (P - 1) n.
    events = json.load(gzip.open(A100))["traceEvents"]
    s = next(e for e in events if e.get("name") == "ProfilerStep#5")
    launch = {e["args"]["correlation"]: e["ts"] for e in events if e.get("cat") == "cuda_runtime"}
    closed = 0.0
    for e in events:
        a = e.get("args", {})
        if e.get("cat") == "kernel" and "Collective name" in a and \
                s["ts"] <= launch[a["correlation"]] < s["ts"] + s["dur"]:
            n = a["In msg nelems"] * ELEMENT[a["dtype"]]
            closed += (2 if a["Collective name"] == "allreduce" else 1) * (P - 1) * n
    assert mpich_wire(projected).total_bytes == pytest.approx(closed, rel=1e-12)
    assert mpich_wire(direct).total_bytes == pytest.approx(closed, rel=1e-12)
    assert projected.num_ops == direct.num_ops and projected.ranks == direct.ranks == P
    G = _box(P, A100_LINK, NVLINK_HOP / 2)
    a, b = netsim.simulate(projected, G), netsim.simulate(direct, G)
    assert a.makespan == pytest.approx(b.makespan, rel=1e-12)
    assert np.allclose(a.iteration_times, b.iteration_times, rtol=1e-12, atol=0)
    # The measured step time belongs to the 2-rank job: kept apart, not compared.
    assert "measured_step_time" not in projected.metadata
    assert projected.metadata["projection"]["measured_step_time"] == \
        recorded.metadata["measured_step_time"]


def _dp_trace(groups, P=4):
    progs = [[{"op": "compute", "seconds": 1e-3, "deps": [], "tag": "kernel"}]
             + [{"op": "coll", "key": j, "collective": "ring_allreduce", "group": g,
                 "nbytes": 1e6, "deps": [0], "tag": "allreduce"}
                for j, g in enumerate(groups) if r in g] for r in range(P)]
    meta = {"algorithm": "ring", "collectives": [{"kind": "allreduce", "bytes": 1e6, "group": g}
                                                 for g in groups if 0 in g]}
    return assemble(progs, meta)


def test_refusals_name_the_reason(tmp_path):
    with pytest.raises(TraceError, match=r"collective #1 \(allreduce of 1000000.0 bytes\) is "
                                         r"over the sub-group \[0, 1\] of the 4 ranks"):
        reproject(_dp_trace([[0, 1, 2, 3], [0, 1], [2, 3]]), 8)
    b = netsim.TraceBuilder(2)
    b.message(0, 1, 10)
    with pytest.raises(TraceError, match=r"no list of its collectives"):
        reproject(b.build(), 4)
    one = _dp_trace([[0]], P=1)
    with pytest.raises(TraceError, match=r"recorded at one rank"):
        reproject(one, 4)
    t = _dp_trace([[0, 1, 2, 3]])
    lying = t.with_metadata(collectives=[{"kind": "allreduce", "bytes": 2e6,
                                          "group": [0, 1, 2, 3]}])
    with pytest.raises(TraceError, match=r"collective ops \(1\) are not the ones its metadata "
                                         r"lists \(1\), in order"):
        reproject(lying, 8)
    with pytest.raises(TraceError, match=r"ranks must be an integer >= 1, got 0"):
        reproject(t, 0)
    with pytest.raises(TraceError, match=r"batch_scale"):
        reproject(t, 4, batch_scale=0)


def test_point_to_point_messages_are_refused(tmp_path):
    def p2p(kind, peer):
        key = "Dst Rank" if kind == "send" else "Src Rank"
        return _kernel(f"ncclKernel_SendRecv_{kind}", 0, 5, 30, **{
            "Collective name": kind, "In msg nelems": 256, "Out msg nelems": 256,
            "dtype": "Float", "Group size": 2, "Process Group Name": "0",
            "Process Group Ranks": "[0, 1]", key: peer})
    for r, ev in ((0, p2p("send", 1)), (1, p2p("recv", 0))):
        (tmp_path / f"r{r}.json").write_text(json.dumps(
            {"distributedInfo": {"rank": r, "world_size": 2}, "traceEvents": [ev]}))
    t = load_kineto(str(tmp_path))
    with pytest.raises(TraceError, match=r"collective #0 is a point-to-point send"):
        reproject(t, 4)


def test_cli_import_with_ranks_then_replay(tmp_path, capsys):
    src = _profile(tmp_path, "r0.json", 0, 2)
    out = tmp_path / "big.npz"
    assert main(["import", "kineto", src, "--symmetric", "--ranks", "8", "-o", str(out),
                 "-q"]) == 0
    t = netsim.load_trace(out)
    assert t.ranks == 8 and mpich_wire(t).total_bytes == pytest.approx(2 * 7 * 4000.0)
    small = tmp_path / "small.npz"
    assert main(["import", "kineto", src, "--symmetric", "-o", str(small), "-q"]) == 0
    topo = "star:bandwidth=4GB/s,latency=1us"
    assert main(["replay", str(small), "--ranks", "8", "--topology", topo, "--json"]) == 0
    got = json.loads(capsys.readouterr().out)
    want = 100e-6 + 2 * 7 * (2e-6 + 4000 / 8 / 4e9) + 20e-6   # as in the closed-form test
    assert got["makespan"] == pytest.approx(want, rel=1e-12)
    assert main(["replay", str(small), "--ranks", "0", "--topology", topo]) == 2
    assert "ranks must be an integer >= 1, got 0" in capsys.readouterr().err
    assert main(["import", "kineto", src, "--batch-scale", "2", "-o", str(out)]) == 2
