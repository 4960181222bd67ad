"""Every rank of a profiled job its own program: own durations, own step times, matched calls."""

import os

import numpy as np
import pytest

from netsim.errors import TraceError
from netsim.formats.kineto.load import load_kineto
from netsim.trace.core import COMPUTE
from test_kineto import _coll, _kernel, _rank, _step, _write

DATA = os.path.join(os.path.dirname(__file__), "data", "kineto")
GLOO = [os.path.join(DATA, f"gloo_cpu_ddp_rank{r}.json.gz") for r in (0, 1)]


def test_each_rank_keeps_its_own_kernels_steps_and_collective_kernel_times(tmp_path):
    # Rank 0: gemm 100 us then a 50 us allreduce; rank 1: gemm 130 us then a 20 us one.
    _write(tmp_path, "r0.json", _rank(0, [_step(1, 0, 200), _kernel("gemm", 0, 100, 7),
                                          _coll(100, 50)]))
    _write(tmp_path, "r1.json", _rank(1, [_step(1, 0, 180), _kernel("gemm", 0, 130, 7),
                                          _coll(130, 20)]))
    t = load_kineto(str(tmp_path))
    comp = np.flatnonzero(t.kind == COMPUTE)
    assert sorted(zip(t.rank[comp].tolist(), np.round(t.duration[comp] * 1e6, 9).tolist())) == \
        [(0, 100.0), (1, 130.0)]
    assert t.metadata["measured_rank_step_times"] == {"0": [200e-6], "1": [180e-6]}
    assert t.metadata["measured_collectives"] == [[50e-6, 20e-6]]
    assert t.num_collectives == 1


def test_steps_absent_on_some_ranks_are_refused(tmp_path):
    _write(tmp_path, "r0.json", _rank(0, [_step(1, 0, 200), _step(2, 200, 200), _coll(0, 5)]))
    _write(tmp_path, "r1.json", _rank(1, [_step(1, 0, 200), _coll(0, 5)]))
    with pytest.raises(TraceError, match=r"r1.json: rank 1 has steps \[1\], rank 0 has \[1, 2\]"):
        load_kineto(str(tmp_path))
    with pytest.raises(TraceError, match=r"r1.json: ProfilerStep#2 not in the trace"):
        load_kineto(str(tmp_path), steps=[2])


def test_two_files_claiming_one_rank_are_refused(tmp_path):
    _write(tmp_path, "a.json", _rank(0, [_coll(0, 5)]))
    _write(tmp_path, "b.json", _rank(0, [_coll(0, 5)]))
    with pytest.raises(TraceError, match=r"b.json: rank 0 also in .*a.json"):
        load_kineto(str(tmp_path))


def test_gloo_ranks_measure_their_own_steps():
    t = load_kineto(GLOO)
    steps = t.metadata["measured_rank_step_times"]
    assert sorted(steps) == ["0", "1"] and len(steps["0"]) == len(steps["1"]) == 3
    assert steps["0"] == t.metadata["measured_step_times"]
    assert all(len(m) == 2 for m in t.metadata["measured_collectives"])
