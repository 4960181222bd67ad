"""Layer-wise computation, gradient buckets, tensor partitions and priorities
(workloads.overlap, the ``overlap`` options of ps-sync and allreduce)."""

import numpy as np
import pytest

import workloads
from netsim import COMPUTE, costmodel, simulate
from netsim.comm.library import mpich_wire
from topologies import star
from workloads.paradigms import allreduce, ps_sync
from workloads import mlp
from workloads.errors import WorkloadError
from workloads.overlap import pieces
from workloads.plan.measure import Recording
from workloads.plan.projection import project

RATE = 1e9          # FLOP/s of the test device
BW = 2.5e8          # bytes/s of every link direction of the star, no latency
MODEL = mlp.model_of((64, 256, 64))   # two dense layers
N0, N1 = 4 * (64 * 256 + 256), 4 * (256 * 64 + 64)   # gradient bytes of layer 0 and 1
BATCH = 8


def _allreduce(overlap, iterations=1, **hyper):
    rec = Recording(2, 0, iterations, MODEL, np.array([BATCH, BATCH]),
                    {"collective": "ring", "overlap": overlap, **hyper}, {})
    return allreduce.schedule(2, {"recording": rec, "bpv": 4.0}, iterations=iterations)


def _ring(nbytes):
    return costmodel.ring_allreduce(2, nbytes, 0.0, 1.0 / BW)


def test_bucketed_allreduce_hides_exactly_the_layers_computed_after_it():
    # Forward F0 + F1, backward of layer 1 (2 F1), then layer 1's bucket (DDP: the bucket
    # closes once it holds bucket_bytes = N1) is allreduced while layer 0 back-propagates
    # (2 F0 = 524 us > ring time of N1 = 263 us: hidden), then layer 0's bucket, then its
    # update (4 FLOPs per value). Without overlap the whole gradient goes after the whole
    # backward pass and one update of every value follows.
    f0, f1 = (2 * 64 * 256 * BATCH / RATE,) * 2
    u0, u1 = 4 * N0 / 4 / RATE, 4 * N1 / 4 / RATE
    assert 2 * f0 > _ring(N1)
    bucketed = f0 + f1 + 2 * f1 + 2 * f0 + _ring(N0) + u0
    fused = f0 + f1 + 2 * f1 + 2 * f0 + _ring(N0 + N1) + u0 + u1
    assert fused - bucketed == pytest.approx(_ring(N1) + u1, rel=1e-9)
    G = star(2, bandwidth=BW, latency=0.0)
    t = _allreduce("bucketed", bucket_bytes=N1)
    assert simulate(t, G, device_flops=RATE).makespan == pytest.approx(bucketed, rel=1e-12)
    t = _allreduce("none")
    assert simulate(t, G, device_flops=RATE).makespan == pytest.approx(fused, rel=1e-12)
    # Two iterations: the second forward of layer 0 waits for layer 0's update, the last.
    t = _allreduce("bucketed", iterations=2, bucket_bytes=N1)
    assert simulate(t, G, device_flops=RATE).makespan == pytest.approx(2 * bucketed, rel=1e-12)


def test_next_forward_of_a_layer_waits_only_for_its_own_parameters():
    t = _allreduce("layerwise", iterations=2)
    fwd = np.flatnonzero((t.kind == COMPUTE) & (t.tag == t.tags.index("forward"))
                         & (t.iteration == 1) & (t.rank == 0))
    upd = np.flatnonzero((t.kind == COMPUTE) & (t.tag == t.tags.index("update"))
                         & (t.iteration == 0) & (t.rank == 0))
    # Pieces go last layer first: update 0 is layer 1's, update 1 layer 0's.
    bwd0 = np.flatnonzero((t.tag == t.tags.index("backward")) & (t.iteration == 0)
                          & (t.rank == 0))[-1]
    assert sorted(t.deps(fwd[0]).tolist()) == sorted([bwd0, upd[1]])
    assert sorted(t.deps(fwd[1]).tolist()) == sorted([fwd[0], upd[0]])


@pytest.mark.parametrize("name", ["allreduce", "ps-sync"])
@pytest.mark.parametrize("overlap", ["none", "layerwise", "bucketed", "priority"])
def test_every_mode_moves_the_same_bytes_and_flops(name, overlap):
    opts = {"bucket_bytes": 300, "partition_bytes": 100}
    base = workloads.record(name, workers=3, epochs=1, overlap="none").trace
    run = workloads.record(name, workers=3, epochs=1, overlap=overlap, **opts)
    t = run.trace
    # Collective ops counted as MPICH's messages (paradigms with messages: the same).
    assert mpich_wire(t).total_bytes == pytest.approx(mpich_wire(base).total_bytes, rel=1e-12)
    assert run.total_bytes == pytest.approx(mpich_wire(t).total_bytes, rel=1e-12)
    for tag in ("forward", "backward", "update"):
        f = lambda tr: tr.flops[(tr.kind == COMPUTE) & (tr.tag == tr.tags.index(tag))].sum()
        assert f(t) == pytest.approx(f(base), rel=1e-12), tag
    # One forward op per layer and rank and iteration, in every mode.
    fwd = (t.kind == COMPUTE) & (t.tag == t.tags.index("forward"))
    assert fwd.sum() == 3 * t.num_iterations * (len(t.metadata["layers"]) - 1)


def test_overlapped_ps_sync_is_not_slower_and_layerwise_is_faster():
    G = star(5, bandwidth=1.25e6, latency=1e-6)
    t = {ov: workloads.record("ps-sync", workers=4, epochs=1, overlap=ov).trace
         for ov in ("none", "layerwise")}
    none, layer = (simulate(t[k], G).makespan for k in ("none", "layerwise"))
    assert layer < none


def test_pieces_follow_ddp_buckets_and_p3_priorities():
    m = mlp.model_of((4, 16, 16, 3))   # units of 80, 272, 51 values
    assert pieces(m, "none").values.tolist() == [403]
    # DDP: units last first, a bucket closes once it holds bucket_bytes.
    assert pieces(m, "bucketed", bucket_bytes=204).values.tolist() == [51, 272, 80]
    assert pieces(m, "bucketed", bucket_bytes=205).values.tolist() == [323, 80]
    p = pieces(m, "priority", partition_bytes=400)   # 100 values a chunk
    assert p.values.tolist() == [51, 100, 100, 72, 80]
    assert p.priority.tolist() == [0, 1, 1, 1, 2]    # the first layer most urgent
    assert (p.lo[1:] >= 0).all() and sorted(zip(p.lo, p.hi))[-1][1] == 403
    with pytest.raises(WorkloadError, match="partition_bytes"):
        pieces(m, "priority", partition_bytes=0)
    with pytest.raises(WorkloadError, match="unknown overlap 'async'"):
        workloads.record("allreduce", workers=2, epochs=1, overlap="async")


def test_priority_mode_gives_its_messages_the_priority_of_their_layer():
    t = workloads.record("allreduce", workers=2, epochs=1, overlap="priority",
                         partition_bytes=100).trace
    U = len(t.metadata["layers"]) - 1
    coll = t.is_collective
    assert set(t.priority[coll].tolist()) == set(range(U))
    assert not t.priority[~coll].any()
    # The collective's messages take its priority when a library expands it.
    w = mpich_wire(t)
    assert set(w.priority[w.is_message].tolist()) == set(range(U))


@pytest.mark.parametrize("name", ["ps-sync", "allreduce"])
def test_a_recording_in_pieces_projects_with_the_same_bytes_per_value(name):
    t = workloads.record(name, workers=2, epochs=1, overlap="layerwise").trace
    p = project(t, 8, iterations=2)
    n = mlp.num_params(t.metadata["layers"])
    # ps-sync: each of 8 workers pushes and pulls 4 n bytes; ring: 2 (P - 1) x 4 n bytes.
    per_iteration = 2 * 8 * 4 * n if name == "ps-sync" else 2 * 7 * 4 * n
    assert mpich_wire(p).total_bytes == pytest.approx(2 * per_iteration, rel=1e-12)
    assert p.metadata["hyper"]["overlap"] == "layerwise"


def test_the_first_layers_chunk_overtakes_and_the_next_forward_starts_earlier():
    # Two layers, P = 2, ring (two steps of half the piece each way), 1e8 B/s, no latency.
    # Layer 1's piece (R1 = N1 / BW = 657.92 us) starts when its backward ends, t_a; layer 0's
    # (R0 = 665.6 us) when layer 0's backward ends, t_b = t_a + 2 f0 (524.288 us later). At
    # t_b layer 1's piece is in its second step with r = R1 - 2 f0 = 133.632 us of it left.
    # Strict priority: layer 0's piece takes the link, arrives at t_b + R0; its update
    # (u0) and then the next forward of layer 0. Max-min: the two share until layer 1's
    # remainder is done (2 r), so layer 0's piece arrives r later.
    bw = 1e8
    f0 = f1 = 2 * 64 * 256 * BATCH / RATE
    R0, R1 = N0 / bw, N1 / bw
    r = R1 - 2 * f0
    assert R1 / 2 < 2 * f0 < R1 and r < R0 / 2          # the case worked out above
    u0 = N0 / RATE                                       # 4 FLOPs per value, N0 / 4 values
    t_b = f0 + f1 + 2 * f1 + 2 * f0
    t = _allreduce("priority", iterations=2)
    fwd = np.flatnonzero((t.tag == t.tags.index("forward")) & (t.iteration == 1)
                         & (t.rank == 0))[0]
    G = star(2, bandwidth=bw, latency=0.0)
    start = {s: simulate(t, G, device_flops=RATE, sharing=s).ops["start"][fwd]
             for s in ("priority", "maxmin")}
    assert start["priority"] == pytest.approx(t_b + R0 + u0, rel=1e-12)
    assert start["maxmin"] == pytest.approx(t_b + r + R0 + u0, rel=1e-12)


def test_two_ddp_buckets_on_one_stream_equal_the_sequential_closed_form():
    # Two buckets (the 204-byte last layer, then the 320-byte first), P = 2, ring, 1e8 B/s,
    # no latency, after the whole backward pass (compute
    # gets a huge rate so that every bucket is ready at once): the stream sends bucket 1,
    # then bucket 0, each at the ring closed form; together they take their sum.
    t = workloads.record("allreduce", workers=2, epochs=1, overlap="bucketed",
                         bucket_bytes=200, device_flops=1e30).trace
    coll = np.flatnonzero(t.is_collective)
    per_iter = coll[t.iteration[coll] == 0]
    assert len(per_iter) == 2
    G = star(2, bandwidth=1e8, latency=0.0)
    r = simulate(t, G)
    # Whole float32 values: each of the 2 (P - 1) ring steps carries the larger chunk,
    # ceil(v / P) values (204 B = 51 values: 26 and 25; 320 B: 40 and 40).
    values = t.size[per_iter] / 4
    want = sum(2 * (2 - 1) * np.ceil(v / 2) * 4 / 1e8 for v in values)
    start = r.collectives["start"][:2].min()
    assert r.collectives["end"][1] - start == pytest.approx(want, rel=1e-9)
    # The second waits for the first: it starts when the first ends.
    assert r.collectives["ready"][1] == pytest.approx(r.collectives["end"][0], rel=1e-12)
