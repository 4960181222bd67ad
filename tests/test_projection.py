"""Projection of recorded traces to other worker counts (workloads.plan.projection)."""

import collections

import numpy as np
import pytest

import netsim
from netsim.comm.library import mpich_wire
import workloads
from netsim import TraceBuilder
from topologies import star
from workloads import WorkloadError, mlp
from workloads.plan.projection import PROJECTABLE, ProjectionError, project

TOL = 0.10   # the acceptance tolerance on bytes and on time per iteration


def _rows(t):
    """Every op as a comparable row (op ids and dependency order aside)."""
    tag = [t.tags[i] if i >= 0 else None for i in t.tag]
    return collections.Counter(zip(t.kind.tolist(), t.rank.tolist(), t.peer.tolist(),
                                   np.round(t.size, 6).tolist(), np.round(t.flops, 3).tolist(),
                                   t.iteration.tolist(), tag))


def _time_per_iteration(trace):
    return netsim.simulate(trace, star(trace.ranks)).iteration_times.mean()


# -- the acceptance test: P = 4 projected to 8 against a real P = 8 run -----------------------

ACCEPTANCE = [
    ("ps-sync", "iris", {}),
    ("allreduce", "iris", {"collective": "ring"}),
    ("ringtmp", "iris", {"deepen": True}),           # one layer per node (issue 16: asked)
    ("ringtmp", "iris", {"hidden": (16,) * 7}),      # one model at both P
    ("pf", "iris", {}),
    # DGC's warm-up lasts the recording's epochs at every P, not the run at P's own (see
    # test_dgc_warmup_lasts_the_recorded_epochs_at_every_P): the two agree without one.
    ("dgc", "iris", {"warmup_epochs": 0}),
    ("pf", "digits", {}),      # a model where the broadcast pass rate falls with P
]


@pytest.mark.parametrize("name, dataset, options", ACCEPTANCE)
def test_projection_from_4_to_8_matches_a_real_run_at_8(name, dataset, options):
    # Iris: 120 training samples, 4 steps per epoch at P = 4 and 2 at P = 8, so 10 and
    # 20 epochs give 40 iterations on both sides. Digits: 45 and 23 steps per epoch.
    e4, e8 = (10, 20) if dataset == "iris" else (2, 4)
    real4 = workloads.record(name, dataset=dataset, workers=4, epochs=e4, **options).trace
    real8 = workloads.record(name, dataset=dataset, workers=8, epochs=e8, **options).trace
    n = real8.num_iterations
    proj = project(real4, 8, iterations=n)
    assert proj.ranks == real8.ranks and proj.num_iterations == n
    assert proj.metadata["workers"] == 8 and proj.metadata["projection"]["from_workers"] == 4
    assert proj.total_bytes / n == pytest.approx(real8.total_bytes / n, rel=TOL)
    assert _time_per_iteration(proj) == pytest.approx(_time_per_iteration(real8), rel=TOL)


@pytest.mark.parametrize("name, options", [
    ("ps-sync", {}), ("allreduce", {}), ("ringtmp", {"deepen": True}),
    ("ringtmp", {"hidden": (16,) * 7}), ("dgc", {"warmup_epochs": 0}), ("slimdp", {}),
    ("ps-async", {}),
    ("model-averaging", {})])
def test_dense_and_scheduled_paradigms_project_exactly(name, options):
    # Their bytes at P = 8 are determined by the P = 4 run: same pattern, same sizes.
    real4 = workloads.record(name, workers=4, epochs=10, **options).trace
    real8 = workloads.record(name, workers=8, epochs=20, **options).trace
    proj = project(real4, 8, iterations=real8.num_iterations)
    assert _rows(proj) == _rows(real8)
    assert len(proj.dep_idx) == len(real8.dep_idx)


# -- P0 -> P0 reproduces the recording -------------------------------------------------------

IDENTITY = [
    ("single", {"workers": 3}),
    ("ps-sync", {"servers": 2}),
    ("ps-sync", {"overlap": False}),
    ("ps-async", {"n_fetch": 2, "n_push": 3, "servers": 2}),
    ("allreduce", {"collective": "ring"}),
    ("allreduce", {"collective": "be"}),
    ("allreduce", {"collective": "mst"}),
    ("allreduce", {"collective": "lp", "segments": 3}),
    ("model-averaging", {"period": 3}),
    ("admm", {"local_steps": 2}),
    ("ringtmp", {"microbatches": 3}),
    ("ringtmp", {"hidden": (16,) * 5}),
    ("pf", {"servers": 2}),
    ("slimdp", {"servers": 2}),
    ("dgc", {"epochs": 6}),
]


@pytest.mark.parametrize("name, options", IDENTITY)
def test_projecting_to_the_recorded_P_gives_the_recording(name, options):
    opts = {"workers": 3, "epochs": 2, **options}
    t = workloads.record(name, **opts).trace
    p = project(t, opts["workers"])
    assert _rows(p) == _rows(t)
    assert len(p.dep_idx) == len(t.dep_idx) and p.total_bytes == t.total_bytes
    G = star(t.ranks)
    a, b = netsim.simulate(t, G), netsim.simulate(p, G)
    np.testing.assert_allclose(b.iteration_times, a.iteration_times, rtol=1e-12, atol=1e-15)


def test_every_registered_paradigm_but_the_partitioned_one_is_projectable():
    assert set(PROJECTABLE) == set(workloads.PARADIGMS) - {"ps-partitioned"}


# -- the pattern at P ------------------------------------------------------------------------

@pytest.fixture(scope="module")
def recorded():
    return {name: workloads.record(name, workers=4, epochs=2).trace
            for name in ("ps-sync", "allreduce", "ringtmp", "pf", "dgc", "single")}


def test_ps_sync_pattern_and_weak_scaling(recorded):
    t = recorded["ps-sync"]
    p = project(t, 32, servers=4, iterations=3)
    assert p.ranks == 36 and p.num_iterations == 3
    assert p.num_messages == 3 * 2 * 32 * 4
    # Every push and pull carries the shard's float32 values: 4 bytes per parameter.
    n = mlp.num_params(t.metadata["layers"])
    assert p.total_bytes == 3 * 2 * 32 * 4 * n
    # Weak scaling: a worker computes what a recorded worker computes per iteration.
    def per_worker(tr, w):
        m = (tr.kind == netsim.COMPUTE) & (tr.rank == w) & (tr.iteration == 0)
        return sorted(tr.flops[m].tolist())
    assert per_worker(p, 31) == per_worker(t, 0)
    # Servers average P pushes: (P + 4) FLOPs per value of their shard.
    upd = (p.kind == netsim.COMPUTE) & (p.rank >= 32) & (p.iteration == 0)
    assert p.flops[upd].sum() == (32 + 4) * n
    md = p.metadata
    assert md["roles"] == ["worker"] * 32 + ["server"] * 4
    assert md["total_bytes"] == p.total_bytes and md["messages"] == p.num_messages


def test_ring_allreduce_pattern(recorded):
    p = mpich_wire(project(recorded["allreduce"], 16, iterations=2))
    assert p.num_messages == 2 * 2 * 16 * 15
    G = recorded["allreduce"].metadata["total_bytes"] / recorded["allreduce"].num_iterations / 6
    assert p.total_bytes == pytest.approx(2 * 2 * 15 * G)


def test_ringtmp_depth_and_batch_grow_with_P_when_asked():
    # Issue 16: the model deepens with P only with deepen=True; the default stays put.
    assert workloads.record("ringtmp", workers=4, epochs=1).trace.metadata["layers"] == \
        [4, 16, 16, 16, 3]
    t = workloads.record("ringtmp", workers=4, epochs=2, deepen=True).trace
    assert t.metadata["default_hidden"] is True
    p = project(t, 12, iterations=1)
    assert p.metadata["layers"] == [4] + [16] * 11 + [3]
    # 11 activations forward and 11 gradients back, each of a 12 x 8-sample batch of 16 values.
    assert p.num_messages == 22 and p.total_bytes == 22 * 96 * 16 * 4


def test_ringtmp_with_given_widths_keeps_its_model():
    t = workloads.record("ringtmp", workers=2, epochs=1, hidden=(16,) * 3).trace
    p = project(t, 4, iterations=1)
    assert p.metadata["layers"] == [4, 16, 16, 16, 3]
    with pytest.raises(ProjectionError, match="leaves a node without a layer"):
        project(t, 5)


# Values each DGC worker sends a peer per step on Iris's 4-16-3 MLP (layers of 80 and 51
# values), by warm-up stage: density 1/4, 1/16, 1/64, 1/256, then 0.1 %, at least one
# value per layer: 20 + 13, 5 + 4, 2 + 1, 1 + 1, 1 + 1 (Lin et al. 2018, section 3.3).
DGC_STAGE_VALUES = [33, 9, 3, 2, 2]


@pytest.mark.parametrize("P", [2, 4, 8, 16])
def test_dgc_warmup_lasts_the_recorded_epochs_at_every_P(recorded, P):
    # The recording: Iris at P0 = 4, batch 8: ceil(120 / 4 / 8) = 4 steps per epoch, two
    # epochs (stages 0 and 1 recorded; 2, 3 and the final one from the warm-up schedule).
    # The run's iteration i is in stage i // 4 at every P: the same training progress.
    t = recorded["dgc"]
    L = len(t.metadata["layers"]) - 1
    p = project(t, P, iterations=22)
    assert p.num_messages == 22 * P * (P - 1) * L
    per_iteration = np.bincount(p.iteration, weights=p.size * p.is_message)
    expect = [P * (P - 1) * 8 * DGC_STAGE_VALUES[min(i // 4, 4)] for i in range(22)]
    assert per_iteration.tolist() == expect
    # A window later in the run: iterations 14..17 are stages 3, 3, 4, 4.
    w = project(t, P, iterations=4, start=14)
    assert w.metadata["window"] == [14, 18]
    assert np.bincount(w.iteration, weights=w.size * w.is_message).tolist() == expect[14:18]


def test_dgc_declares_its_warmup_in_recorded_epochs(recorded):
    from workloads.paradigms.dgc import phases

    p = phases(recorded["dgc"])
    assert (p.warmup, p.stages, p.period, p.alike) == (16, (0, 4, 8, 12), 1, True)
    # The same declaration from a projection to any P and batch (ResNet-50 sizes).
    from workloads.models import resize

    assert phases(resize(recorded["dgc"], "resnet50", workers=64, batch_size=64,
                         iterations=1)) == p
    # A final sparsity that the third stage already reaches (density 1/64 <= 0.02): the
    # warm-up is the two epochs before it.
    short = workloads.record("dgc", workers=4, epochs=1, final_sparsity=0.98).trace
    assert (phases(short).warmup, phases(short).stages) == (8, (0, 4))


def test_a_window_of_a_recording_is_not_projected_again():
    from studies.scaling.traces import record_at

    cut = record_at("ps-sync", 2, iterations=2, start=3, dataset="iris")
    with pytest.raises(ProjectionError, match="starts at iteration 3 of its run"):
        project(cut, 4)


def test_pf_broadcast_follows_the_averaging_model(recorded):
    from workloads.paradigms.pf import broadcast_scale as _broadcast_scale

    t = recorded["pf"]
    same = project(t, 4)
    assert same.total_bytes == t.total_bytes
    big = project(t, 64)
    bcast = lambda tr: tr.size[tr.is_message & (tr.tag == tr.tags.index("broadcast"))].sum()
    push = lambda tr: tr.size[tr.is_message & (tr.tag == tr.tags.index("push"))].sum()
    # Pushes: worker w sends as recorded worker w mod 4, so 16 copies of the recording's.
    assert push(big) == pytest.approx(16 * push(t))
    # Averaging model: pass rate f + (1 - f)/sqrt(P), so the scale from P0 to P is
    # (f + (1-f)/sqrt(P)) / (f + (1-f)/sqrt(P0)); 1 at P = P0 or f = 1.
    scale = lambda f, P, P0: (f + (1 - f) / P ** 0.5) / (f + (1 - f) / P0 ** 0.5)
    assert _broadcast_scale(0.3, 4, 4) == 1.0 and _broadcast_scale(1.0, 64, 4) == 1.0
    assert _broadcast_scale(0.3, 64, 4) == pytest.approx((0.3 + 0.7 / 8) / (0.3 + 0.7 / 2))
    # Broadcasts: the recorded ones, each scaled by the model's factor for P = 64.
    f = _signal_share(t)
    assert 0.0 <= f <= 1.0
    assert bcast(big) / 64 == pytest.approx(bcast(t) / 4 * scale(f, 64, 4))


def _signal_share(t):
    """The signal share f fitted to a pf recording: ratio(P0) = f + (1 - f) / sqrt(P0)."""
    P0 = t.metadata["workers"]
    is_tag = lambda name: t.is_message & (t.tag == t.tags.index(name))
    ratio = t.size[is_tag("broadcast")].sum() / t.size[is_tag("push")].sum()
    g0 = P0 ** -0.5
    return min(1.0, max(0.0, (ratio - g0) / (1 - g0)))


def test_iterations_beyond_the_recording_repeat_its_last_epoch(recorded):
    t = recorded["pf"]
    n = t.num_iterations                  # 2 epochs of 4 steps
    p = project(t, 4, iterations=n + 6)
    push = lambda tr, i: tr.size[tr.is_message & (tr.iteration == i)].sum()
    for k in range(6):
        assert push(p, n + k) == push(t, n - 4 + k % 4)


def test_single_projects_the_union_batch(recorded):
    t = recorded["single"]
    p = project(t, 16, iterations=2)
    assert p.ranks == 1 and p.num_messages == 0 and p.metadata["workers"] == 16
    fwd = lambda tr: tr.flops[(tr.tag == tr.tags.index("forward")) & (tr.iteration == 0)].sum()
    assert fwd(p) == pytest.approx(4 * fwd(t))   # 16 virtual workers instead of 4


def test_batch_size_and_device_flops(recorded):
    t = recorded["ps-sync"]
    p = project(t, 8, batch_size=32, device_flops=19.5e12, iterations=1)
    f = lambda tr: tr.flops[(tr.tag == tr.tags.index("forward")) & (tr.rank == 0)
                            & (tr.iteration == 0)].sum()
    assert f(p) == pytest.approx(4 * f(t))
    assert p.metadata["device_flops"] == 19.5e12
    assert p.metadata["projection"]["batch_size"] == 32


def test_servers_are_resharded(recorded):
    t = recorded["pf"]
    p = project(t, 4, servers=3)
    assert p.ranks == 7
    # Same pass rates, spread over 3 shards: push bytes unchanged.
    push = lambda tr: tr.size[tr.is_message & (tr.tag == tr.tags.index("push"))].sum()
    assert push(p) == pytest.approx(push(t))


def test_projects_to_1024(recorded):
    p = project(recorded["ps-sync"], 1024)
    assert p.ranks == 1025 and p.num_iterations == recorded["ps-sync"].num_iterations
    r = project(recorded["allreduce"], 1024, iterations=1)
    assert r.num_collectives == 1 and r.group(int(np.flatnonzero(r.is_collective)[0])).size == 1024
    assert mpich_wire(r).num_messages == 2 * 1024 * 1023
    d = project(recorded["dgc"], 1024, iterations=1)
    assert d.num_messages == 1024 * 1023 * 2


# -- what cannot be projected ------------------------------------------------------------------

def test_errors_say_why():
    assert issubclass(ProjectionError, WorkloadError)
    part = workloads.record("ps-partitioned", dataset="sparse", workers=2, epochs=1).trace
    with pytest.raises(ProjectionError, match="ps-partitioned.*METIS"):
        project(part, 8)
    with pytest.raises(ProjectionError, match="no 'paradigm'"):
        project(TraceBuilder(2).build(), 4)
    t = workloads.record("allreduce", workers=2, epochs=1).trace
    for bad in (0, -3, 2.5, True, "8"):
        with pytest.raises(ProjectionError, match="P must be an integer >= 1"):
            project(t, bad)
    with pytest.raises(ProjectionError, match="already a projection"):
        project(project(t, 4), 8)
    with pytest.raises(ProjectionError, match="no servers"):
        project(t, 4, servers=2)
    with pytest.raises(ProjectionError, match="iterations must be"):
        project(t, 4, iterations=0)
    with pytest.raises(ProjectionError, match="device_flops"):
        project(t, 4, device_flops=-1.0)
    neuron = workloads.record("ringtmp", workers=2, epochs=1, partition="neuron").trace
    with pytest.raises(ProjectionError, match="neuron"):
        project(neuron, 4)
    unknown = TraceBuilder(2, metadata={"paradigm": "gossip"}).build()
    with pytest.raises(ProjectionError, match="projectable paradigms: single"):
        project(unknown, 4)


def test_projection_of_a_cut_recording_keeps_its_warmup_bytes():
    # A DGC recording cut to 10 of its iterations (4 steps per epoch on Iris at P0 = 4,
    # batch 8: 120 samples / 4 workers / 8 = ceil(3.75) = 4) keeps its own per-stage
    # bytes when projected to the same P: steps per epoch come from (N, P0, b), not from
    # iterations // epochs.
    from studies.scaling.traces import record_at

    def per_iter(tr):
        return np.bincount(tr.iteration, weights=tr.size).tolist()

    t = record_at("dgc", 4, iterations=10, dataset="iris")
    assert per_iter(project(t, 4)) == per_iter(t)
    # PF beyond the recording repeats the last whole epoch (4 steps), not 10 // 3 = 3.
    p = record_at("pf", 4, iterations=10, dataset="iris")
    long = per_iter(project(p, 4, iterations=14))
    assert long[:10] == per_iter(p) and long[10:] == per_iter(p)[6:10]
