"""Throughput of parameter-server runs: samples/s, updates/s and time to N updates.

A hand-built two-worker run whose step time is known in closed form, and the semantics of
asynchrony: with one worker 4x slower, Downpour's server keeps applying the other workers' pushes,
so it applies updates faster and reaches the BSP run's update count sooner than synchronous SGD.
"""

import networkx as nx
import pytest

from netsim import TraceBuilder, simulate
from studies.scaling.paradigm import study
from studies.reports.text import format_study
from studies.scaling.throughput import throughput
from topologies import star

C, N_BYTES, BW, LAT = 2e-3, 2.5e6, 1.25e9, 1e-4   # compute, push/fetch bytes, link, latency
P, B, STEPS = 2, 16, 5


def _tiny():
    """P equal workers, a server linked to each directly: compute, push, update, fetch."""
    b = TraceBuilder(P + 1, metadata={"workers": P, "servers": 1, "hyper": {"batch_size": B}})
    for w in range(P):
        prev = ()
        for t in range(STEPS):
            c = b.compute(w, seconds=C, deps=prev, iteration=t, tag="backward")
            p = b.message(w, P, N_BYTES, deps=[c], iteration=t, tag="push")
            u = b.compute(P, seconds=0.0, deps=[p], iteration=t, tag="update")
            prev = [b.message(P, w, N_BYTES, deps=[u], iteration=t, tag="fetch")]
    G = nx.Graph()
    G.add_nodes_from(range(P + 1), kind="host")
    G.add_edges_from([(w, P) for w in range(P)], bandwidth=BW, latency=LAT)
    trace = b.build()
    return trace, simulate(trace, G)


def test_equal_workers_give_the_exact_samples_per_second():
    # No link is shared, so a step is C + 2 (latency + n / bandwidth) = 2 + 2 (0.1 + 2) = 6.2 ms.
    step = C + 2 * (LAT + N_BYTES / BW)
    f = throughput(*_tiny())
    assert f["samples_per_s"] == pytest.approx(P * B / step, rel=1e-9)
    assert f["updates_per_s"] == pytest.approx(P / step, rel=1e-9)
    # The updates of step k end at k * step - (latency + n / bandwidth), two at a time:
    # the 5th update is the first of step 3.
    assert f["target_updates"] == STEPS
    assert f["time_to_target"] == pytest.approx(3 * step - (LAT + N_BYTES / BW), rel=1e-9)


def test_without_update_ops_there_is_no_throughput():
    b = TraceBuilder(2)
    b.message(0, 1, 1e3)
    G = nx.Graph()
    G.add_nodes_from(range(2), kind="host")
    G.add_edge(0, 1, bandwidth=BW, latency=LAT)
    assert throughput(b.build(), simulate(b.build(), G)) is None


@pytest.fixture(scope="module")
def straggled():
    common = dict(iterations=4, dataset="iris", device_flops=1e7,
                  perturbation={"straggler": "0:4x", "seed": 0})
    return {name: study(name, [4], star, **common) for name in ("ps-sync", "ps-async")}


def test_async_outpaces_sync_with_a_straggler(straggled):
    sync, downpour = (straggled[k]["records"][0] for k in ("ps-sync", "ps-async"))
    # Compute dominates (10 MFLOP/s), so the straggler sets the pace of every BSP step.
    assert sync["compute"] > sync["exposed"]
    assert downpour["updates_per_s"] > sync["updates_per_s"]
    # The fast workers' pushes reach the BSP run's update count before BSP does.
    assert downpour["target_updates"] == sync["target_updates"] == 4
    assert downpour["time_to_target"] < sync["time_to_target"]


def test_report_prints_throughput_for_async_only(straggled):
    assert "updates/s" in format_study(straggled["ps-async"])
    assert "updates/s" not in format_study(straggled["ps-sync"])
