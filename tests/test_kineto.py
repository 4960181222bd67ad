"""PyTorch profiler (Kineto) import: real public profiles, byte counts, replay, bad input."""

import gzip
import itertools
import json
import os

import numpy as np
import pytest

import netsim
from netsim import nccl
from netsim.errors import TraceError
from netsim.formats.kineto.load import load_kineto
from netsim.comm.library import mpich_wire

DATA = os.path.join(os.path.dirname(__file__), "data", "kineto")
A100 = os.path.join(DATA, "hta_a100_ddp_rank0.json.gz")
MI300X = os.path.join(DATA, "tracelens_mi300x_ddp_rank0.json.gz")
# Element sizes written out here, independently of netsim.formats.kineto.load.DTYPE_BYTES.
ELEMENT = {"Float": 4, "BFloat16": 2, "Long": 8}


def _events(path):
    return json.load(gzip.open(path))["traceEvents"]


def _collectives(path, step=None):
    """(kind, bytes) of every collective kernel, from the JSON, in start order.

    With ``step``, only kernels launched during that ProfilerStep (found through
    the launch's correlation id).
    """
    ev = _events(path)
    if step is not None:
        s = next(e for e in ev if e.get("cat") == "user_annotation"
                 and e["name"] == f"ProfilerStep#{step}")
        launch = {e["args"]["correlation"]: e["ts"] for e in ev if e.get("cat") == "cuda_runtime"}
    out = []
    for e in sorted(ev, key=lambda e: e.get("ts", 0)):
        a = e.get("args", {})
        if e.get("cat") != "kernel" or "Collective name" not in a:
            continue
        if step is not None and not s["ts"] <= launch[a["correlation"]] < s["ts"] + s["dur"]:
            continue
        out.append((a["Collective name"], a["In msg nelems"] * ELEMENT[a["dtype"]], e["dur"]))
    return out


def _nvswitch_box(P, bandwidth, latency):
    """P GPUs, each on its own full-duplex link to one switch (an NVSwitch board)."""
    G = netsim.nx.Graph()
    G.add_node("nvswitch", kind="nvswitch")
    for g in range(P):
        G.add_node(f"gpu{g}", kind="gpu")
        G.add_edge(f"gpu{g}", "nvswitch", bandwidth=bandwidth, latency=latency)
    return G


def _full_mesh(P, bandwidth, latency):
    """P GPUs with a direct full-duplex link between every pair (MI300X Infinity Fabric)."""
    G = netsim.nx.Graph()
    for g in range(P):
        G.add_node(f"gpu{g}", kind="gpu")
    for a, b in itertools.combinations(range(P), 2):
        G.add_edge(f"gpu{a}", f"gpu{b}", bandwidth=bandwidth, latency=latency)
    return G


# Hardware constants, with their public sources:
# A100 SXM4: NVLink 3, 600 GB/s total per GPU = 300 GB/s each way to the NVSwitch fabric
#   (NVIDIA A100 Tensor Core GPU datasheet, "NVLink: 600GB/s").
# MI300X: 7 Infinity Fabric links per GPU, 128 GB/s each (both ways together), 896 GB/s in all
#   (AMD Instinct MI300X data sheet): 64 GB/s each way between every pair of the 8 GPUs.
# Per-hop latency: NCCL's tuning model, src/graph/tuning.cc, hwLat[NVLINK][RING][LL] = 0.6 us
#   (the kernels in both traces use the ring LL or generic protocol); split over the two hops of
#   GPU-switch-GPU on the NVSwitch box.
A100_LINK = 300e9
MI300X_LINK = 64e9
NVLINK_HOP = 0.6e-6


@pytest.fixture(scope="module")
def a100():
    return load_kineto(A100, symmetric=True)


@pytest.fixture(scope="module")
def mi300x():
    return load_kineto(MI300X, symmetric=True, steps=[17])


def test_a100_collective_bytes_from_the_events_own_arguments(a100):
    expected = _collectives(A100)
    assert len(expected) == 21
    got = [(c["kind"], c["bytes"]) for c in a100.metadata["collectives"]]
    assert got == [(k, float(b)) for k, b, _ in expected]
    assert all(c["group"] == [0, 1] for c in a100.metadata["collectives"])
    # Ring allreduce of n bytes over P ranks: 2 (P - 1) messages of n / P from each rank,
    # 2 (P - 1) n in all; a one-segment pipeline broadcast: P - 1 messages of n.
    P = 2
    closed = sum(2 * (P - 1) * b if k == "allreduce" else (P - 1) * b for k, b, _ in expected)
    assert a100.num_collectives == 21 and mpich_wire(a100).total_bytes == pytest.approx(
        closed, rel=1e-12)
    assert a100.ranks == 2 and a100.num_iterations == 3
    assert a100.metadata["steps"] == [4, 5, 6]
    assert a100.metadata["device"] == "NVIDIA A100-PG509-200"


def test_mi300x_collective_bytes_from_the_events_own_arguments(mi300x):
    expected = _collectives(MI300X, step=17)
    assert [k for k, _, _ in expected] == ["broadcast", "broadcast", "allreduce", "allreduce"]
    got = [(c["kind"], c["bytes"]) for c in mi300x.metadata["collectives"]]
    assert got == [(k, float(b)) for k, b, _ in expected]
    P = 8
    closed = sum(2 * (P - 1) * b if k == "allreduce" else (P - 1) * b for k, b, _ in expected)
    assert mpich_wire(mi300x).total_bytes == pytest.approx(closed, rel=1e-12)
    assert mi300x.ranks == 8 and mi300x.metadata["steps"] == [17]


def test_steps_without_size_arguments_are_refused_naming_the_event():
    with pytest.raises(TraceError, match=r"tracelens_mi300x_ddp_rank0.json.gz: event #\d+ "
                                         r"'ncclDevKernel_Generic.*without 'Collective name'"):
        load_kineto(MI300X, symmetric=True, steps=[16, 17])


def test_compute_ops_keep_the_measured_kernel_durations(a100):
    ev = _events(A100)
    kernels = [e for e in ev if e.get("cat") in ("kernel", "gpu_memcpy", "gpu_memset")
               and "Collective name" not in e.get("args", {})]
    comp = (a100.kind == netsim.COMPUTE) & (a100.rank == 0)
    tags = np.array(a100.tags + [""])[a100.tag]
    measured = sorted(round(e["dur"] / 1e6, 12) for e in kernels)
    got = sorted(np.round(a100.duration[comp & np.isin(tags, ["kernel", "memcpy", "memset"])], 12))
    assert got == measured


def _replay(trace, graph, library="mpich"):
    result = netsim.simulate(trace, graph, library=library)
    predicted = float(np.mean(result.iteration_times))
    return result, predicted, trace.metadata["measured_step_time"]


def _collective_times(trace, result):
    """Simulated seconds of each collective: its end minus when its last member entered."""
    c = result.collectives
    return (c["end"] - c["ready"]).tolist()


def test_a100_replay_on_an_nvswitch_box_predicts_the_step_time(a100):
    P = a100.metadata["world_size"]
    result, predicted, measured = _replay(a100, _nvswitch_box(P, A100_LINK, NVLINK_HOP / 2))
    assert abs(predicted - measured) / measured < 0.10
    # Each simulated collective alone on the box: ring allreduce 2 (P-1) (alpha + n / (P B)),
    # a one-segment broadcast alpha + n / B, with alpha = the two hops' latency.
    coll = _collective_times(a100, result)
    closed = [2 * (P - 1) * (NVLINK_HOP + b / P / A100_LINK) if k == "allreduce"
              else NVLINK_HOP + b / A100_LINK for k, b, _ in _collectives(A100)]
    assert coll == pytest.approx(closed, rel=1e-9)


def test_a100_replay_with_nccl_runs_each_call_as_the_lone_call(a100):
    # On GPUs the default library is NCCL: each collective of the profile, once its last
    # member has entered, takes what netsim.nccl.simulate gives that call alone on the box
    # (the calls of this profile never overlap one another).
    P = a100.metadata["world_size"]
    G = _nvswitch_box(P, A100_LINK, NVLINK_HOP / 2)
    result = netsim.simulate(a100, G)
    assert set(result.collectives["library"].tolist()) == {"nccl"}
    lone = [nccl.simulate(G, k, int(b)).makespan for k, b, _ in _collectives(A100)]
    assert _collective_times(a100, result) == pytest.approx(lone, rel=1e-9)


def test_mi300x_replay_on_a_full_mesh(mi300x):
    P = mi300x.metadata["world_size"]
    result, predicted, measured = _replay(mi300x, _full_mesh(P, MI300X_LINK, NVLINK_HOP))
    expected = _collectives(MI300X, step=17)
    coll = _collective_times(mi300x, result)
    # Each allreduce, once its last member has entered: 2 (P - 1) ring steps of one hop.
    ring = [(i, 2 * (P - 1) * (NVLINK_HOP + b / P / MI300X_LINK))
            for i, (k, b, _) in enumerate(expected) if k == "allreduce"]
    assert [coll[i] for i, _ in ring] == pytest.approx([c for _, c in ring], rel=1e-9)
    # The recorded RCCL allreduce kernels took 6.7 and 8.7 ms for 5.7 and 17.6 MB, some 40 times
    # what the links need: their time includes waiting for the seven other ranks, which this
    # one-rank profile does not show. The replay is therefore faster than the machine.
    kernels = sum(d for k, _, d in expected if k == "allreduce") * 1e-6
    assert kernels > 20 * sum(c for _, c in ring)
    assert predicted < measured


# -- synthetic files: structure and bad input -----------------------------------------------

def _kernel(name, ts, dur, stream, **args):
    return {"ph": "X", "cat": "kernel", "name": name, "ts": ts, "dur": dur,
            "args": {"stream": stream, **args}}


def _coll(ts, dur, nelems=1000, dtype="Float", ranks="[0, 1]", size=2, name="allreduce"):
    return _kernel("ncclKernel_AllReduce_RING_LL", ts, dur, 20, **{
        "Collective name": name, "In msg nelems": nelems, "Out msg nelems": nelems,
        "dtype": dtype, "Group size": size, "Process Group Name": "0",
        "Process Group Ranks": ranks})


def _step(n, ts, dur):
    return {"ph": "X", "cat": "user_annotation", "name": f"ProfilerStep#{n}", "ts": ts, "dur": dur}


def _write(tmp_path, name, doc, gz=False):
    p = tmp_path / name
    data = json.dumps(doc).encode()
    p.write_bytes(gzip.compress(data) if gz else data)
    return str(p)


def _rank(r, events, world=2):
    return {"distributedInfo": {"rank": r, "world_size": world}, "traceEvents": events}


def test_streams_and_cross_stream_waits(tmp_path):
    # Stream 7: gemm [0, 100], then sgd at 160 (it waited for the allreduce on stream 20,
    # which ended at 150, and then 10 us of host time).
    events = [_kernel("gemm", 0, 100, 7), _coll(100, 50), _kernel("sgd", 160, 10, 7)]
    for r in range(2):
        _write(tmp_path, f"rank{r}.json", _rank(r, events))
    t = load_kineto(str(tmp_path))
    tags = np.array(t.tags)[t.tag]
    r0 = t.rank == 0
    gemm, = np.flatnonzero(r0 & (tags == "kernel") & (t.duration == 100e-6))
    sgd, = np.flatnonzero(r0 & (tags == "kernel") & (t.duration == 10e-6))
    idle, = np.flatnonzero(r0 & (tags == "idle"))
    coll, = np.flatnonzero(t.is_collective)
    assert t.duration[idle] == pytest.approx(10e-6)
    assert gemm in t.deps(coll).tolist()               # the collective waits for the gradient
    assert sorted(t.deps(idle).tolist()) == sorted([gemm, coll])  # its stream idled until then
    assert t.deps(sgd).tolist() == [idle]
    # Replay on a link of 4 GB/s: 100 us + ring allreduce of 4 kB over 2 ranks
    # (2 (alpha + 2000 B / 4 GB/s) = 1 us) + 10 us idle + 10 us sgd.
    G = _nvswitch_box(2, 4e9, 0.0)
    assert netsim.simulate(t, G, library="mpich").makespan == pytest.approx(
        100e-6 + 1e-6 + 20e-6, rel=1e-9)


def test_steps_mark_iterations_and_select(tmp_path):
    events = [_step(1, 0, 50), _step(2, 50, 60),
              {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "ts": 10, "dur": 1,
               "args": {"correlation": 1}},
              {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "ts": 55, "dur": 1,
               "args": {"correlation": 2}},
              # Launched in step 1 and 2; the GPU runs them later.
              _kernel("a", 20, 40, 7, correlation=1), _kernel("b", 60, 30, 7, correlation=2)]
    p = _write(tmp_path, "r.json.gz", _rank(0, events, world=1), gz=True)
    t = load_kineto(p)
    assert t.iteration.tolist() == [0, 1]             # a, then b right after it: no idle op
    assert t.metadata["measured_step_times"] == pytest.approx([50e-6, 60e-6])
    only = load_kineto(p, steps=[2])
    assert only.num_ops == 1 and only.duration[0] == pytest.approx(30e-6)
    with pytest.raises(TraceError, match=r"ProfilerStep#9 not in the trace \(it has steps \[1, 2\]\)"):
        load_kineto(p, steps=[9])


def test_point_to_point_messages_match_in_order(tmp_path):
    def p2p(kind, ts, peer):
        key = "Dst Rank" if kind == "send" else "Src Rank"
        return _kernel(f"ncclKernel_SendRecv_{kind}", ts, 5, 30, **{
            "Collective name": kind, "In msg nelems": 256, "Out msg nelems": 256,
            "dtype": "Half", "Group size": 2, "Process Group Name": "0",
            "Process Group Ranks": "[0, 1]", key: peer})
    _write(tmp_path, "a.json", _rank(0, [p2p("send", 0, 1), p2p("send", 10, 1)]))
    _write(tmp_path, "b.json", _rank(1, [p2p("recv", 0, 0), p2p("recv", 10, 0)]))
    t = load_kineto(str(tmp_path))
    assert t.num_messages == 2 and t.total_bytes == 2 * 512
    m = np.flatnonzero(t.is_message)
    assert t.rank[m].tolist() == [0, 0] and t.peer[m].tolist() == [1, 1]


@pytest.mark.parametrize("doc, match", [
    ({"foo": 1}, r"bad.json: not a PyTorch profiler trace \(no 'traceEvents' list\)"),
    (_rank(0, [{"ph": "X", "cat": "cpu_op", "name": "aten::mm", "ts": 0, "dur": 1}], world=1),
     r"bad.json: no GPU kernel, memcpy, memset or collective events"),
    (_rank(0, [_coll(0, 5, size=3)]), r"event #0 'ncclKernel_AllReduce_RING_LL': 'Group size' 3 "
                                      r"does not match its 2 'Process Group Ranks'"),
    (_rank(0, [_coll(0, 5, ranks="[0, 1, 2]", size=3)]),
     r"event #0 .*process group \[0, 1, 2\] does not fit world size 2"),
    (_rank(0, [_coll(0, 5, dtype="Float42")]), r"event #0 .*unknown dtype 'Float42'"),
    (_rank(0, [_kernel("ncclKernel_AllReduce_RING_LL_Sum_float", 0, 5, 20)], world=1),
     r"event #0 'ncclKernel_AllReduce.*without 'Collective name'"),
    (_rank(0, [_coll(0, 5, name="gather")]), r"event #0 .*unsupported collective 'gather'"),
])
def test_bad_input_names_the_file_and_event(tmp_path, doc, match):
    p = _write(tmp_path, "bad.json", doc)
    with pytest.raises(TraceError, match=match):
        load_kineto(p, symmetric=doc.get("distributedInfo", {}).get("world_size", 1) > 1)


def test_damaged_files(tmp_path):
    raw = open(A100, "rb").read()
    p = tmp_path / "cut.json.gz"
    p.write_bytes(raw[:len(raw) // 2])
    with pytest.raises(TraceError, match=r"cut.json.gz: not a readable profiler trace"):
        load_kineto(str(p), symmetric=True)
    q = tmp_path / "half.json"
    q.write_bytes(gzip.decompress(raw)[:5000])
    with pytest.raises(TraceError, match=r"half.json: not a readable profiler trace \(JSONDecodeError"):
        load_kineto(str(q))
    with pytest.raises(TraceError, match=r"profiler trace not found: .*nope.json"):
        load_kineto(str(tmp_path / "nope.json"))


def test_missing_rank_file(tmp_path):
    _write(tmp_path, "rank0.json", _rank(0, [_coll(0, 5)]))
    with pytest.raises(TraceError, match=r"missing rank file for rank 1 of world size 2"):
        load_kineto(str(tmp_path))


def test_ranks_whose_collectives_differ_are_refused(tmp_path):
    _write(tmp_path, "rank0.json", _rank(0, [_coll(0, 5, nelems=1000)]))
    _write(tmp_path, "rank1.json", _rank(1, [_coll(0, 5, nelems=999)]))
    with pytest.raises(TraceError, match=r"rank1.json: rank 1's collective #0 of process group "
                                         r"'0' is allreduce of 3996 bytes over \[0, 1\]; "
                                         r".*rank0.json \(rank 0\) has allreduce of 4000 bytes"):
        load_kineto(str(tmp_path))
    _write(tmp_path, "rank1.json", _rank(1, [_kernel("gemm", 0, 5, 7)]))
    with pytest.raises(TraceError, match=r"rank1.json: rank 1 has no collective of process "
                                         r"group '0'; .*rank0.json \(rank 0\) has 1"):
        load_kineto(str(tmp_path))
    _write(tmp_path, "rank1.json", _rank(1, [_coll(0, 5), _coll(10, 5)]))
    with pytest.raises(TraceError, match=r"rank0.json: rank 0 ends process group '0' after 1 "
                                         r"collectives; .*rank1.json \(rank 1\) goes on with #1"):
        load_kineto(str(tmp_path))


def test_recursive_algorithm_option():
    ring = load_kineto(A100, symmetric=True, steps=[4])
    rec = load_kineto(A100, symmetric=True, algorithm="recursive", steps=[4])
    expected = _collectives(A100, step=4)
    # Over 2 ranks both move 2 n per allreduce and n per broadcast, but recursive doubling
    # sends n in one message each way where the ring sends n / 2 twice each way.
    closed = sum(2 * b if k == "allreduce" else b for k, b, _ in expected)
    rec, ring = mpich_wire(rec), mpich_wire(ring)
    assert rec.total_bytes == pytest.approx(closed) and ring.total_bytes == pytest.approx(closed)
    nall = sum(k == "allreduce" for k, _, _ in expected)
    assert ring.num_messages - rec.num_messages == 2 * nall
    with pytest.raises(TraceError, match="unknown algorithm 'tree'"):
        load_kineto(A100, algorithm="tree")


def test_imported_trace_saves_with_its_measured_step_times(mi300x, tmp_path):
    p = str(tmp_path / "mi300x.npz")
    netsim.save_trace(mi300x, p)
    back = netsim.load_trace(p)
    for key in ("measured_step_times", "measured_step_time", "device", "world_size", "collectives"):
        assert back.metadata[key] == mi300x.metadata[key]
    assert back.num_ops == mi300x.num_ops and back.specs.rows() == mi300x.specs.rows()
    assert np.array_equal(back.size, mi300x.size)
