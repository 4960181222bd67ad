"""Older PyTorch profiles: communication kernels sized by the CPU operator that launched them."""

import gzip
import json
import os

import numpy as np
import pytest

from netsim.errors import TraceError
from netsim.formats.kineto.load import load_kineto
from netsim.comm.library import mpich_wire

DATA = os.path.join(os.path.dirname(__file__), "data", "kineto")
OLD_A100 = os.path.join(DATA, "hta_old_a100_rank3.json.gz")
OLD_SAMPLED = os.path.join(DATA, "hta_old_sampled_rank0.json.gz")
# Element sizes of the C++ names, written out here independently of netsim.formats.kineto.comms.
ELEMENT = {"float": 4, "c10::Half": 2, "long int": 8, "int": 4}


def _expected(path, step):
    """(kind, bytes) of each NCCL kernel launched in ``step``, read straight from the JSON.

    The kernel's ``correlation`` finds its ``cudaLaunchKernel``; the ``nccl:<op>``
    annotation on that thread around the launch gives the op and its input.
    """
    ev = json.load(gzip.open(path))["traceEvents"]
    s = next(e for e in ev if e.get("name") == f"ProfilerStep#{step}")
    launch = {e["args"]["correlation"]: e for e in ev if e.get("cat") == "cuda_runtime"}
    nccl_ops = [e for e in ev if str(e.get("name", "")).startswith("nccl:")]
    out = []
    for k in sorted(ev, key=lambda e: e.get("ts", 0)):
        if k.get("cat") != "kernel" or not k["name"].startswith("ncclKernel"):
            continue
        r = launch[k["args"]["correlation"]]
        if not s["ts"] <= r["ts"] < s["ts"] + s["dur"]:
            continue
        op, = [e for e in nccl_ops if e["tid"] == r["tid"]
               and e["ts"] <= r["ts"] <= e["ts"] + e["dur"]]
        n = int(np.prod(op["args"]["Input Dims"][0])) * ELEMENT[op["args"]["Input type"][0]]
        out.append(({"nccl:all_to_all": "alltoall", "nccl:all_reduce": "allreduce"}[op["name"]],
                    float(n)))
    return out


@pytest.fixture(scope="module")
def old_a100():
    return load_kineto(OLD_A100, symmetric=True, steps=[1010])


def test_older_kernels_take_op_and_bytes_from_their_launching_operator(old_a100):
    expected = _expected(OLD_A100, 1010)
    assert len(expected) == 10
    got = [(c["kind"], c["bytes"]) for c in old_a100.metadata["collectives"]]
    assert got == expected
    # No process group in the file: every call is over the world of 8 (distributedInfo).
    assert all(c["group"] == list(range(8)) for c in old_a100.metadata["collectives"])
    assert old_a100.metadata["recovered"]["from_operator"] == 60      # 6 steps x 10 calls
    assert old_a100.metadata["recovered"]["assumed_group"] == 60
    assert old_a100.metadata["recovered"]["even_alltoall"] == 42
    # MPICH's ring allreduce moves 2 (P-1)/P n in all per rank, its all-to-all (P-1)/P n.
    P = 8
    closed = sum(P * 2 * (P - 1) / P * b if k == "allreduce" else P * (P - 1) / P * b
                 for k, b in expected)
    assert mpich_wire(old_a100).total_bytes == pytest.approx(closed, rel=1e-9)


def test_a_gather_over_a_sub_group_the_profile_does_not_name_is_refused():
    # c10d::_allgather_base_ output [1073741824] over input [16777216]: 64 ranks, in a world
    # of 128 whose groups the file does not list.
    with pytest.raises(TraceError, match=r"hta_old_sampled_rank0.json.gz: event #\d+ .*"
                                         r"'c10d::_allgather_base_' gathers over 64 ranks.*"
                                         r"assumed 128 ranks"):
        load_kineto(OLD_SAMPLED, symmetric=True)


def _profile(tmp_path, ops, kernels, world=2):
    """One rank's file: CPU operators on thread 1, launches and NCCL kernels."""
    ev = [{"ph": "X", "cat": "user_annotation", "name": name, "ts": ts, "dur": dur, "pid": 1,
           "tid": 1, "args": args} for name, ts, dur, args in ops]
    for i, (launch_ts, ts, dur) in enumerate(kernels):
        ev.append({"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "ts": launch_ts,
                   "dur": 1, "pid": 1, "tid": 1, "args": {"correlation": 100 + i}})
        ev.append({"ph": "X", "cat": "kernel", "name": "ncclKernel_SendRecv_RING_SIMPLE",
                   "ts": ts, "dur": dur, "pid": 0, "tid": 7,
                   "args": {"stream": 7, "correlation": 100 + i}})
    p = tmp_path / "rank0.json"
    p.write_text(json.dumps({"distributedInfo": {"rank": 0, "world_size": world},
                             "traceEvents": ev}))
    return str(p)


def test_grouped_sendrecv_kernels_of_one_all_to_all_are_one_call(tmp_path):
    op = ("nccl:all_to_all", 0, 50, {"Input Dims": [[1000]], "Input type": ["float"]})
    p = _profile(tmp_path, [op], [(10, 100, 20), (12, 110, 30)])
    t = load_kineto(p, symmetric=True)
    assert t.num_collectives == 1 and t.size[t.is_collective].tolist() == [4000.0]
    assert t.metadata["recovered"] == {"from_operator": 1, "assumed_group": 1,
                                       "even_alltoall": 1, "merged_kernels": 1}


def test_record_param_comms_with_arguments_is_read_like_a_kernel(tmp_path):
    args = {"Collective name": "allgather", "In msg nelems": 10, "Out msg nelems": 20,
            "dtype": "Half", "Group size": 2, "Process Group Name": "0",
            "Process Group Ranks": "[0, 1]"}
    p = _profile(tmp_path, [("record_param_comms", 0, 50, args)], [(10, 100, 20)])
    t = load_kineto(p, symmetric=True)
    assert t.size[t.is_collective].tolist() == [40.0]     # 20 halves out
    assert t.metadata["recovered"]["assumed_group"] == 0


def test_a_profile_without_shapes_is_refused_naming_record_shapes(tmp_path):
    p = _profile(tmp_path, [("nccl:all_reduce", 0, 50, {})], [(10, 100, 20)])
    with pytest.raises(TraceError, match=r"rank0.json: event #\d+ 'ncclKernel_SendRecv.*"
                                         r"'nccl:all_reduce' has no 'Input Dims'.*"
                                         r"record_shapes=True"):
        load_kineto(p, symmetric=True)


def test_allgather_from_nccl_annotation_is_one_ranks_share_times_the_group(tmp_path):
    op = ("nccl:_all_gather_base", 0, 50, {"Input Dims": [[8, 4]], "Input type": ["float"]})
    p = _profile(tmp_path, [op], [(10, 100, 20)], world=4)
    t = load_kineto(p, symmetric=True)
    assert t.size[t.is_collective].tolist() == [8 * 4 * 4 * 4.0]
