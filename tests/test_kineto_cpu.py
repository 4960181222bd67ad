"""CPU-only profiles (DDP over gloo): a stored recording and synthetic files; no torch needed."""

import gzip
import json
import os

import numpy as np
import pytest

import netsim
from netsim.errors import TraceError
from netsim.formats.kineto.load import load_kineto
from netsim.trace.reproject import reproject

DATA = os.path.join(os.path.dirname(__file__), "data", "kineto")
GLOO = [os.path.join(DATA, f"gloo_cpu_ddp_rank{r}.json.gz") for r in (0, 1)]
# The recording's MLP 64 -> 128 -> 10 (tests/data/kineto/README.md): weights and biases,
# float32.
PARAMETER_BYTES = 4 * (64 * 128 + 128 + 128 * 10 + 10)


def _star(P, bandwidth, latency):
    G = netsim.nx.Graph()
    G.add_node("sw", kind="switch")
    for r in range(P):
        G.add_node(r, kind="host")
        G.add_edge(r, "sw", bandwidth=bandwidth, latency=latency)
    return G


def _ring(P, n, bandwidth, latency):
    """Ring allreduce of n bytes on a star: 2 (P - 1) steps of two hops and n / P bytes."""
    return 2 * (P - 1) * (2 * latency + n / P / bandwidth)


@pytest.fixture(scope="module")
def gloo():
    return load_kineto(GLOO)


def test_the_recorded_gloo_allreduces_carry_the_models_gradient(gloo):
    # From the files themselves: every gloo:all_reduce event's Input Dims, float32.
    for path in GLOO:
        ev = json.load(gzip.open(path))["traceEvents"]
        sizes = [4 * int(np.prod(e["args"]["Input Dims"][0])) for e in ev
                 if e.get("name") == "gloo:all_reduce"]
        assert sizes == [PARAMETER_BYTES] * 3
    assert [c["bytes"] for c in gloo.metadata["collectives"]] == [float(PARAMETER_BYTES)] * 3
    assert gloo.ranks == 2 and gloo.num_iterations == 3 and gloo.metadata["steps"] == [1, 2, 3]


def test_every_allreduce_is_on_the_critical_path(gloo):
    """DDP with one bucket: in this recording each gloo allreduce ran inside the backward's
    last operator (which blocked in wait() for it), so the operator is cut around it and each
    step waits for its allreduce: replays on two networks differ by three closed forms."""
    for P, t in ((2, gloo), (8, reproject(gloo, 8))):
        fast = netsim.simulate(t, _star(P, 1.25e9, 5e-6)).makespan
        slow = netsim.simulate(t, _star(P, 0.125e9, 5e-6)).makespan
        want = 3 * (_ring(P, PARAMETER_BYTES, 0.125e9, 5e-6) - _ring(P, PARAMETER_BYTES, 1.25e9,
                                                                     5e-6))
        assert slow - fast == pytest.approx(want, rel=1e-9)


def _op(name, ts, dur, tid, cat="cpu_op", **args):
    return {"ph": "X", "cat": cat, "name": name, "ts": ts, "dur": dur, "pid": 1, "tid": tid,
            "args": args}


def _gloo(ts, dur, dims=((1000,),), types=("float",)):
    return _op("gloo:all_reduce", ts, dur, 2, cat="user_annotation",
               **{"Input Dims": [list(d) for d in dims], "Input type": list(types)})


def _doc(rank, events, pgs=None):
    info = {"backend": "gloo", "rank": rank, "world_size": 2}
    if pgs is not None:
        info["pg_config"] = pgs
    return {"distributedInfo": info, "deviceProperties": [], "traceEvents": events}


def _write(tmp_path, docs):
    for r, d in enumerate(docs):
        (tmp_path / f"rank{r}.json").write_text(json.dumps(d))
    return str(tmp_path)


def test_outermost_operators_and_a_wait_inside_an_operator(tmp_path):
    # Main thread: forward [0, 100] with a nested op, backward [100, 500] which launches the
    # allreduce at 150 and waits until it ends at 450; then step [510, 530].
    events = [_op("forward", 0, 100, 1), _op("aten::mm", 10, 50, 1),
              _op("backward", 100, 400, 1), _gloo(150, 300), _op("step", 510, 20, 1)]
    t = load_kineto(_write(tmp_path, [_doc(0, events), _doc(1, events)]))
    r0 = (t.rank == 0) & (t.kind == netsim.COMPUTE)
    tags = np.array(t.tags + [""])[t.tag]
    cpu = np.flatnonzero(r0 & (tags == "cpu"))
    # forward 100, backward cut into 50 before the allreduce and 50 after it, step 20.
    assert np.round(t.duration[cpu] * 1e6, 9).tolist() == [100, 50, 50, 20]
    assert t.metadata["collectives"] == [{"kind": "allreduce", "bytes": 4000.0,
                                          "group": [0, 1]}]
    # 200 us of compute, 10 us host gap, the allreduce on the network, and nothing else.
    G = _star(2, 1e9, 1e-6)
    want = 100e-6 + 50e-6 + _ring(2, 4000, 1e9, 1e-6) + 50e-6 + 10e-6 + 20e-6
    assert netsim.simulate(t, G).makespan == pytest.approx(want, rel=1e-12)


@pytest.mark.parametrize("event, pgs, match", [
    (_op("gloo:all_reduce", 0, 5, 2, cat="user_annotation"), None,
     r"rank0.json: event #0 'gloo:all_reduce': no 'Input Dims' and 'Input type' "
     r"\(profile with record_shapes=True\)"),
    (_gloo(0, 5, types=("float128",)), None, r"event #0 'gloo:all_reduce': unknown dtype "
                                            r"'float128'"),
    (_gloo(0, 5), [{"pg_name": "0", "ranks": [0, 1]}, {"pg_name": "1", "ranks": [0]}],
     r"gloo events do not name their process group and the profile has 2"),
    (_op("gloo:gather", 0, 5, 2, cat="user_annotation"), None,
     r"event #0 'gloo:gather': unsupported gloo collective"),
])
def test_bad_gloo_events_name_the_file_and_event(tmp_path, event, pgs, match):
    d = _write(tmp_path, [_doc(0, [event], pgs), _doc(1, [event], pgs)])
    with pytest.raises(TraceError, match=match):
        load_kineto(d)
