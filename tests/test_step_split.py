"""Where each rank's step goes (compute, exposed communication, waiting, host gaps), measured
from a two-rank profile and from its replay, against splits worked by hand.

The profile (microseconds, one step, streams 7 for compute and 20 for NCCL):

    rank 0: gemm 0-100, allreduce 100-300, sgd 350-400
    rank 1: gemm 0-200, allreduce 200-300, sgd 300-350

The allreduce's last member arrives at 200 (rank 1's kernel start). By hand, measured:
rank 0 spans 400: compute 100 + 50, waiting 100-200, exposed communication 200-300, host gap
300-350; rank 1 spans 350: compute 200 + 50, exposed 200-300, no waiting, no gap.

Replayed on two GPUs behind a switch at 20 GB/s per link, no latency, MPICH's ring: the
1 MB allreduce takes 2 (P - 1) n / (P B) = 50 us once both are ready (200). The
import made rank 0's 50 us idle before sgd a host gap after the allreduce (stream 7 idled
until the allreduce ended, the last op to end before sgd started), rank 1's sgd waits for
the allreduce with no gap. So rank 0: gemm 0-100, waiting 100-200, transfer 200-250, host gap
250-300, sgd 300-350; rank 1: gemm 0-200, transfer 200-250, sgd 250-300.
"""

import json
import os

import networkx as nx
import numpy as np
import pytest

from netsim.formats.kineto.load import load_kineto
from netsim.formats.kineto.measured import compare
from netsim.result import simulate
from netsim.formats.kineto.step_split import PARTS, replayed_split, split

AR = {"Collective name": "allreduce", "In msg nelems": 250000, "Out msg nelems": 250000,
      "dtype": "Float", "Group size": 2, "Process Group Ranks": "[0, 1]"}
PROFILE = {0: [("gemm", 0, 100, 7), ("ncclDevKernel_AllReduce", 100, 200, 20), ("sgd", 350, 50, 7)],
           1: [("gemm", 0, 200, 7), ("ncclDevKernel_AllReduce", 200, 100, 20), ("sgd", 300, 50, 7)]}
#            span, compute, exposed, waiting, host gaps (us)
MEASURED = {0: [400, 150, 100, 100, 50], 1: [350, 250, 100, 0, 0]}
REPLAYED = {0: [350, 150, 50, 100, 50], 1: [300, 250, 50, 0, 0]}


def _write(directory, ranks=(0, 1)):
    for r in ranks:
        ev = [{"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#1", "ts": 0,
               "dur": 500}]
        for name, ts, dur, stream in PROFILE[r]:
            args = {"stream": stream, **(AR if name.startswith("nccl") else {})}
            ev.append({"ph": "X", "cat": "kernel", "name": name, "ts": ts, "dur": dur,
                       "args": args})
        doc = {"distributedInfo": {"rank": r, "world_size": 2}, "traceEvents": ev}
        with open(os.path.join(directory, f"rank{r}.json"), "w") as f:
            json.dump(doc, f)
    return directory


def _box():
    G = nx.Graph([("gpu0", "sw", {"bandwidth": 20e9, "latency": 0.0}),
                  ("gpu1", "sw", {"bandwidth": 20e9, "latency": 0.0})])
    nx.set_node_attributes(G, {"gpu0": "gpu", "gpu1": "gpu", "sw": "switch"}, "kind")
    return G


def _us(parts):
    return [round(parts[p] * 1e6, 6) if parts[p] is not None else None for p in PARTS]


def test_split_rule_on_hand_worked_intervals():
    # The rule itself: rank 0 computes 0-1 and 2-3 while its part of a call runs 1-6; rank 1
    # joins the call at 4. Rank 0: compute 2, waiting 1-2 and 3-4 = 2, exposed 4-6 = 2, no gap.
    s = split([0, 0, 0, 1], [0, 0, 0, 0], [0, 2, 1, 4], [1, 3, 6, 6], [-1, -1, 5, 5], 2, 1)
    assert s[0, 0].tolist() == [6, 2, 2, 2, 0]
    assert s[1, 0].tolist() == [2, 0, 2, 0, 0]
    # A call some member of which was not recorded (id < -1): waiting unknown, all exposed.
    s = split([0, 0], [0, 0], [0, 1], [1, 6], [-1, -7], 1, 1)
    assert s[0, 0, 2] == 5 and np.isnan(s[0, 0, 3])


def test_two_rank_profile_measured_and_replayed_split(tmp_path):
    trace = load_kineto(_write(tmp_path))
    c = compare(trace, simulate(trace, _box(), library="mpich"))
    for row in c["ranks"]:
        r = row["rank"]
        assert _us(row["split"]["measured"]) == MEASURED[r]
        assert _us(row["split"]["replayed"]) == REPLAYED[r]


def test_parts_add_up_to_the_span(tmp_path):
    trace = load_kineto(_write(tmp_path))
    s = replayed_split(trace, simulate(trace, _box(), library="mpich"))
    assert s[..., 1:].sum(axis=-1) == pytest.approx(s[..., 0], abs=1e-12)


def test_one_ranks_profile_cannot_tell_waiting(tmp_path):
    trace = load_kineto(_write(tmp_path, ranks=(0,)), symmetric=True)
    c = compare(trace, simulate(trace, _box(), library="mpich"))
    m = c["ranks"][0]["split"]["measured"]
    # rank 0's whole allreduce kernel (100-300) is exposed communication: its peer is unseen.
    assert _us(m) == [400, 150, 200, None, 50]


def test_replay_compare_json_has_the_split(tmp_path, capsys):
    from studies.cli.parser import main

    _write(tmp_path)
    npz = tmp_path / "job.npz"
    assert main(["import", "kineto", str(tmp_path), "-o", str(npz), "--quiet"]) == 0
    capsys.readouterr()
    assert main(["replay", str(npz), "--topology", "star:bandwidth=20GB/s,latency=0s",
                 "--compare", "--json", "--quiet"]) == 0
    rows = json.loads(capsys.readouterr().out)["compare"]["ranks"]
    assert [_us(r["split"]["measured"]) for r in rows] == [MEASURED[0], MEASURED[1]]
    assert main(["replay", str(npz), "--topology", "star:bandwidth=20GB/s,latency=0s",
                 "--compare", "--quiet"]) == 0
    assert "where each step goes" in capsys.readouterr().out
