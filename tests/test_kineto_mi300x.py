"""The facts behind the validation page's explanation of the MI300X row (predicted 50 % under
measured), read from the profile's own events: what rank 0's GPU did during ProfilerStep#17."""

import gzip
import json
import os

import pytest

MI300X = os.path.join(os.path.dirname(__file__), "data", "kineto",
                      "tracelens_mi300x_ddp_rank0.json.gz")
LINK = 64e9        # Infinity Fabric, each way between two MI300X (AMD data sheet, see test_kineto)
HOP = 0.6e-6       # NCCL src/graph/tuning.cc hwLat[NVLINK][RING][LL]


def _union(intervals):
    """Total length covered by a set of [start, end) intervals."""
    total, end = 0.0, float("-inf")
    for a, b in sorted(intervals):
        if b > end:
            total += b - max(a, end)
            end = b
    return total


@pytest.fixture(scope="module")
def step17():
    ev = json.load(gzip.open(MI300X))["traceEvents"]
    s = next(e for e in ev if e.get("name") == "ProfilerStep#17")
    launch = {e["args"]["correlation"]: e["ts"] for e in ev
              if e.get("cat") in ("cuda_runtime", "cuda_driver") and "correlation" in e["args"]}
    return [e for e in ev if e.get("cat") in ("kernel", "gpu_memcpy", "gpu_memset")
            and s["ts"] <= launch.get(e["args"].get("correlation"), e["ts"]) < s["ts"] + s["dur"]]


def test_most_of_the_gpu_step_is_only_the_allreduce_kernels(step17):
    span = (max(e["ts"] + e["dur"] for e in step17) - min(e["ts"] for e in step17)) / 1e3
    comm = [(e["ts"], e["ts"] + e["dur"]) for e in step17 if "Collective name" in e["args"]]
    comp = [(e["ts"], e["ts"] + e["dur"]) for e in step17 if "Collective name" not in e["args"]]
    busy_comp = _union(comp) / 1e3
    busy_any = _union(comm + comp) / 1e3
    assert span == pytest.approx(18.55, abs=0.01)
    assert busy_comp == pytest.approx(7.08, abs=0.01)
    assert busy_any - busy_comp == pytest.approx(11.36, abs=0.01)   # only RCCL running


def test_the_allreduce_kernels_wait_rather_than_move_data(step17):
    ar = [e for e in step17 if e["args"].get("Collective name") == "allreduce"]
    sizes = [2 * e["args"]["In msg nelems"] for e in ar]      # bfloat16
    secs = [e["dur"] * 1e-6 for e in ar]
    assert [a["args"]["dtype"] for a in ar] == ["BFloat16", "BFloat16"]
    # 3.1x the bytes in 1.3x the time: not bandwidth-bound ...
    assert sizes[1] / sizes[0] > 3 and secs[1] / secs[0] < 1.3
    # ... and 40x and 18x what a ring needs on the links: 2 (P - 1) (hop + n / (P B)).
    ring = [14 * (HOP + n / 8 / LINK) for n in sizes]
    assert secs[0] / ring[0] > 40 and secs[1] / ring[1] > 17
    # The second overlaps (almost) no compute and ends the step's communication.
    a, b = ar[1]["ts"], ar[1]["ts"] + ar[1]["dur"]
    overlap = sum(max(0.0, min(b, e["ts"] + e["dur"]) - max(a, e["ts"])) for e in step17
                  if "Collective name" not in e["args"])
    assert overlap < 15.0   # us, of an 8,657 us kernel
