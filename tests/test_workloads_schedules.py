"""Every paradigm's schedule reproduces its own recording: schedule(P0, measure(run().trace))."""

import collections

import numpy as np
import pytest

import workloads
from netsim import COMPUTE
from workloads.plan.frontier import Frontier
from workloads.plan.projection import PROJECTABLE


def _signatures(t):
    """Each op as a row (op ids aside): kind, rank, peer, bytes, FLOPs, iteration, tag."""
    tag = [t.tags[i] if i >= 0 else None for i in t.tag]
    return list(zip(t.kind.tolist(), t.rank.tolist(), t.peer.tolist(),
                    np.round(t.size, 6).tolist(), np.round(t.flops, 3).tolist(),
                    t.iteration.tolist(), tag))


def _graph(t):
    """Each op's row together with the multiset of the rows it waits for: the trace as a
    dependency graph, compared without op ids."""
    sig = _signatures(t)
    return collections.Counter(
        (sig[i], tuple(sorted(sig[j] for j in t.dep_idx[t.dep_ptr[i]:t.dep_ptr[i + 1]])))
        for i in range(t.num_ops))


CASES = [
    ("single", {"workers": 3}),
    ("ps-sync", {"servers": 2}),
    ("ps-sync", {"overlap": False}),
    ("ps-async", {"n_fetch": 2, "n_push": 3, "servers": 2}),
    ("allreduce", {"collective": "ring"}),
    ("allreduce", {"collective": "lp", "segments": 3}),
    ("model-averaging", {"period": 3}),
    ("admm", {"local_steps": 2}),
    ("admm", {"local_steps": 3}),          # the last round is cut short (5 steps)
    ("ringtmp", {"microbatches": 3}),
    ("ringtmp", {"hidden": (16,) * 5}),
    ("pf", {"servers": 2}),
    ("slimdp", {"servers": 2}),
    ("dgc", {"epochs": 6}),
]


@pytest.mark.parametrize("name, options", CASES)
def test_schedule_of_the_measured_recording_is_the_recording(name, options):
    opts = {"workers": 3, "epochs": 2, **options}
    t = workloads.record(name, **opts).trace
    entry = workloads.PARADIGMS[name]
    stats = entry.measure(t)
    s = entry.schedule(stats["recording"].P0, stats)
    assert s.ranks == t.ranks and s.num_iterations == t.num_iterations
    assert _graph(s) == _graph(t)
    assert s.total_bytes == t.total_bytes and len(s.dep_idx) == len(t.dep_idx)


def test_every_projectable_paradigm_has_a_schedule_case():
    assert {name for name, _ in CASES} == set(PROJECTABLE)


def test_the_graph_comparison_sees_a_moved_dependency():
    # Two traces with the same rows whose one message waits for different ops.
    def build(dep):
        b = Frontier(2)
        a = b.compute([0], 10.0, tag="x")
        c = b.compute([0], 20.0, tag="x")
        b.send([0], 1, 8.0, tag="m", deps=(np.array([1]), np.array([a[0] if dep else c[0]])))
        return b.build()

    assert _graph(build(True)) != _graph(build(False))
    assert collections.Counter(_signatures(build(True))) == collections.Counter(
        _signatures(build(False)))


@pytest.mark.parametrize("name", ["ps-sync", "allreduce", "model-averaging", "pf", "dgc"])
def test_a_run_with_unequal_worker_batches_schedules_each_workers_own_batch(name):
    # 120 Iris samples over 7 workers: shards of 18 and 17, all below batch_size 32, so
    # every worker's step takes its whole shard and the forward FLOPs differ by worker.
    t = workloads.record(name, workers=7, epochs=1, batch_size=32).trace
    shard = workloads.training.prepare("iris", 7, seed=0).shards
    per_sample = workloads.mlp.model_of(t.metadata["layers"]).flops
    fwd = (t.kind == COMPUTE) & (t.tag == t.tags.index("forward")) & (t.iteration == 0)
    # One forward op per layer: each worker's ops sum to the model's FLOPs for its batch.
    per_rank = np.bincount(t.rank[fwd], weights=t.flops[fwd], minlength=7)[:7]
    assert per_rank == pytest.approx([per_sample * len(shard[w]) for w in range(7)], rel=1e-12)
    assert np.bincount(t.rank[fwd])[:7].tolist() == [len(t.metadata["layers"]) - 1] * 7
