"""Transformer training under TP x PP x DP: the replayed pipeline equals its closed form where
nothing contends, and the trace's bytes are the hand-counted activations and gradients."""

import networkx as nx
import pytest

from netsim import simulate
from workloads.transformer import pipeline
from workloads.errors import WorkloadError
from workloads.transformer.layout import Layout
from workloads.transformer.iteration import measure, schedule
from workloads.transformer.closed import closed_form
from workloads.transformer.flops import config, iteration_flops, layer_parameters

RATE = 1e9   # FLOP/s


def star(n, bandwidth=1e30, latency=0.0):
    """n hosts on one switch; the default links are contention-free (no time on the wire)."""
    G = nx.Graph()
    G.add_nodes_from((f"host{i}" for i in range(n)), kind="host")
    G.add_edges_from(((f"host{i}", "sw") for i in range(n)), bandwidth=bandwidth,
                     latency=latency)
    return G


UNIFORM = config(4, 64, 4, 32, 0, micro_batch=1, global_batch=16)   # no logit layer


@pytest.mark.parametrize("schedule_name", ["gpipe", "1f1b"])
@pytest.mark.parametrize("tp,pp,dp", [(1, 4, 1), (2, 2, 2), (1, 2, 4), (2, 4, 1), (1, 1, 2)])
@pytest.mark.parametrize("recompute", ["full", "none"])
def test_bubble_is_the_closed_form_without_contention(schedule_name, tp, pp, dp, recompute):
    t = schedule(UNIFORM, tp, pp, dp, pipeline=schedule_name, recompute=recompute,
                 device_flops=RATE)
    r = simulate(t, star(t.ranks), library="mpich")
    m = UNIFORM.global_batch // dp
    per_mb = (3 if recompute == "none" else 4) * 4 // pp * (24 * 32 * 64**2 + 4 * 32**2 * 64)
    ideal = m * per_mb / tp / RATE
    # GPipe's and 1F1B's bubble: (p - 1)/m of the ideal (Narayanan et al. SC'21, 2.2.1)
    assert r.makespan == pytest.approx(ideal * (1 + (pp - 1) / m), rel=1e-12)
    f = closed_form(UNIFORM, tp, pp, dp, device_flops=RATE, pipeline=schedule_name,
                    recompute=recompute)
    assert f["bubble"] == pytest.approx(ideal * (pp - 1) / m, rel=1e-12)
    assert f["compute"] == pytest.approx(ideal, rel=1e-12)


def test_tensor_parallel_allreduces_cost_the_ring_formula_on_a_star():
    # One stage, one replica: every block waits for its allreduce, MPICH's ring on a
    # star of identical links: 2 (P-1) (alpha + n beta / P) with alpha = 2 link latencies.
    t = schedule(UNIFORM, tp=4, device_flops=RATE)
    bw, lat = 50e9, 1e-6
    r = simulate(t, star(4, bw, lat), library="mpich")
    n = 32 * 64 * 2
    ring = 2 * 3 * (2 * lat + n / 4 / bw)
    calls = 16 * 4 * (2 + 2 + 2)     # micro-batches x layers x (fwd, recompute, bwd) x 2 blocks
    compute = 16 * 4 * 4 * (24 * 32 * 64**2 + 4 * 32**2 * 64) / 4 / RATE
    assert r.makespan == pytest.approx(compute + calls * ring, rel=1e-9)
    f = closed_form(UNIFORM, tp=4, device_flops=RATE, links={"tp": (2 * lat, 1 / bw)})
    assert f["time"] == pytest.approx(r.makespan, rel=1e-9)


def test_gradient_buckets_overlap_the_backward_as_the_closed_form_says():
    # Data parallel only: buckets of one layer each leave while later layers' backward runs;
    # only what is left after the last backward is exposed.
    c = config(4, 64, 4, 32, 0, global_batch=4)
    bucket = layer_parameters(c) * 2
    bw, lat = 1e9, 1e-6
    t = schedule(c, dp=2, bucket_bytes=bucket, device_flops=RATE)
    r = simulate(t, star(2, bw, lat), library="mpich")
    f = closed_form(c, dp=2, device_flops=RATE, bucket_bytes=bucket,
                    links={"dp": (2 * lat, 1 / bw)})
    assert f["dp"] > 0
    assert r.makespan == pytest.approx(f["time"], rel=1e-9)


def test_bytes_are_the_hand_counted_activations_and_gradients():
    c = config(4, 64, 4, 32, 128, micro_batch=2, global_batch=16)
    tp, pp, dp = 2, 2, 2
    got = measure(schedule(c, tp, pp, dp))
    m = 16 // (2 * dp)
    act = 2 * 32 * 64 * 2                                   # b s h fp16 values
    assert got["microbatches"] == m
    # 2 allreduces per layer in forward, recompute and backward, per micro-batch and replica,
    # and one for the logit layer's input gradient
    assert got["tp_calls"] == dp * m * (4 * 6 + 1)
    assert got["tp"] == dp * m * (4 * 6 + 1) * act
    # every shard sends its activation forward and its gradient back across each boundary
    assert got["pp"] == dp * tp * m * (pp - 1) * 2 * act
    # one allreduce of every shard's parameters per replica group, 2 bytes each: per layer
    # the split weights (12 h^2 + 7 h) and, on each shard, the two layer norms and two
    # biases (6 h); the word embedding split (V h), the position embedding on each shard
    # (s h), and the last stage's copy of the word embedding (V h, tied)
    params = 4 * (12 * 64**2 + 7 * 64 + tp * 6 * 64) + 128 * 64 + tp * 32 * 64 + 128 * 64
    assert got["dp"] == params * 2


def test_sequence_parallel_moves_the_same_buffer_as_gather_and_scatter():
    c = config(2, 64, 4, 32, 0, global_batch=2)
    t = schedule(c, tp=2, sequence_parallel=True, recompute="none")
    ops = [t.specs.row(int(k)).op for k in t.spec[t.is_collective]]
    assert ops.count("allgather") == ops.count("reduce_scatter") == 2 * 2 * 2 * 2
    assert measure(t)["tp"] == len(ops) * 32 * 64 * 2


def test_1f1b_keeps_at_most_p_minus_stage_micro_batches_in_flight():
    p, m = 4, 8
    for s in range(p):
        live, peak = 0, 0
        for kind, _, _ in pipeline.order("1f1b", p, m, s):
            live += 1 if kind == "F" else -1
            peak = max(peak, live)
        assert peak == p - s
        assert sorted(pipeline.order("1f1b", p, m, s)) == sorted(
            pipeline.order("gpipe", p, m, s))


def test_flops_in_the_trace_add_up_to_narayanan_eq3():
    c = config(4, 64, 4, 32, 128, micro_batch=2, global_batch=16)
    for recompute in ("full", "none"):
        t = schedule(c, 2, 2, 2, recompute=recompute)
        assert t.flops.sum() == pytest.approx(iteration_flops(c, recompute), rel=1e-12)


def test_tensor_parallel_groups_are_adjacent_ranks_inside_a_machine():
    L = Layout(8, 4, 2)
    for s in range(4):
        for r in range(2):
            g = L.tp_group(s, r)
            assert g == tuple(range(g[0], g[0] + 8)) and g[0] % 8 == 0
    assert sorted(L.rank(s, r, k) for s in range(4) for r in range(2) for k in range(8)) \
        == list(range(64))


@pytest.mark.parametrize("kwargs,needle", [
    ({"tp": 3}, "heads"), ({"pp": 3}, "layers"), ({"dp": 3}, "global batch"),
    ({"pipeline": "zb"}, "pipeline schedule"), ({"recompute": "some"}, "recompute"),
    ({"pipeline": "interleaved", "pp": 2}, "chunks >= 2"), ({"chunks": 2}, "interleaved"),
    ({"pipeline": "interleaved", "chunks": 2}, "at least 2 pipeline stages"),
    ({"bucket_bytes": 0}, "bucket_bytes")])
def test_bad_options_are_refused_by_name(kwargs, needle):
    with pytest.raises(WorkloadError, match=needle):
        schedule(UNIFORM, **kwargs)


@pytest.mark.parametrize("schedule_name", ["gpipe", "1f1b"])
@pytest.mark.parametrize("pp", [2, 4])
def test_pipeline_hops_cost_the_exact_timeline_on_a_star(schedule_name, pp):
    # Stage to stage alone on its links: each hop is Hockney's alpha + n beta, and the
    # schedule's own timeline (1F1B waits for gradients in its steady state) is the replay.
    bw, lat = 1e9, 1e-6
    t = schedule(UNIFORM, pp=pp, pipeline=schedule_name, device_flops=RATE)
    r = simulate(t, star(pp, bw, lat), library="mpich")
    hop = 2 * lat + 32 * 64 * 2 / bw
    m, per = 16, 4 * 4 // pp * (24 * 32 * 64**2 + 4 * 32**2 * 64) / RATE
    expected = pipeline.timeline(schedule_name, pp, m, per / 4, 3 * per / 4, hop)[0]
    if schedule_name == "gpipe":
        assert expected == pytest.approx((m + pp - 1) * per + 2 * (pp - 1) * hop, rel=1e-12)
    assert r.makespan == pytest.approx(expected, rel=1e-12)
    f = closed_form(UNIFORM, pp=pp, pipeline=schedule_name, device_flops=RATE,
                    links={"pp": (2 * lat, 1 / bw)})
    assert f["time"] == pytest.approx(r.makespan, rel=1e-12)


@pytest.mark.parametrize("pp,chunks,dp", [(2, 2, 1), (4, 2, 1), (2, 4, 1), (2, 2, 2)])
def test_interleaved_bubble_is_p_minus_1_over_v_m(pp, chunks, dp):
    # Narayanan et al. SC'21 2.2.2: v chunks per stage cut the bubble to (p - 1)/(v m).
    c = config(8, 64, 4, 32, 0, global_batch=8 * dp)
    t = schedule(c, pp=pp, dp=dp, pipeline="interleaved", chunks=chunks, device_flops=RATE)
    r = simulate(t, star(t.ranks), library="mpich")
    m = 8
    ideal = m * 4 * 8 // pp * (24 * 32 * 64**2 + 4 * 32**2 * 64) / RATE
    assert r.makespan == pytest.approx(ideal * (1 + (pp - 1) / (chunks * m)), rel=1e-12)
    f = closed_form(c, pp=pp, dp=dp, pipeline="interleaved", chunks=chunks, device_flops=RATE)
    assert f["time"] == pytest.approx(r.makespan, rel=1e-12)
    assert f["bubble_fraction"] == (pp - 1) / (chunks * m)


def test_interleaved_hops_cost_the_exact_timeline_on_a_star():
    bw, lat = 1e9, 1e-6
    c = config(8, 64, 4, 32, 0, global_batch=8)
    t = schedule(c, pp=2, pipeline="interleaved", chunks=2, device_flops=RATE)
    r = simulate(t, star(2, bw, lat), library="mpich")
    f = closed_form(c, pp=2, pipeline="interleaved", chunks=2, device_flops=RATE,
                    links={"pp": (2 * lat, 1 / bw)})
    assert f["pp"] > 0 and f["time"] == pytest.approx(r.makespan, rel=1e-12)
    # each stage sends every chunk's activation on, and the last stage wraps to the first
    assert measure(t)["pp"] == 8 * (2 * 2 - 1) * 2 * 32 * 64 * 2


def test_scatter_gather_sends_a_tp_th_and_allgathers_it_at_the_receiver():
    # Narayanan et al. SC'21 4.1: each of the t shards sends b s h / t across, and the
    # receiving shards allgather the b s h buffer before they use it.
    c = config(4, 64, 4, 32, 0, micro_batch=1, global_batch=8)
    tp, pp, dp = 2, 2, 2
    t = schedule(c, tp, pp, dp, scatter_gather=True)
    act, m = 32 * 64 * 2, 8 // dp
    sel = t.tag == t.tags.index("pp")
    ops = [t.specs.row(int(k)).op for k in t.spec[sel & t.is_collective]]
    # one allgather per received activation or gradient: m x (p - 1) boundaries x 2 ways
    assert ops.count("allgather") == dp * m * (pp - 1) * 2
    messages = t.size[sel & t.is_message]
    assert len(messages) == dp * tp * m * (pp - 1) * 2 and set(messages) == {act / tp}
    assert measure(t)["pp"] == len(messages) * act / tp + ops.count("allgather") * act


@pytest.mark.parametrize("schedule_name", ["gpipe", "1f1b"])
def test_scatter_gather_replay_is_the_closed_form_on_latency_only_links(schedule_name):
    # Infinite bandwidth, 1 us per link: no flow ever shares, so every collective and
    # message costs its latency alone and the replay is the closed form's timeline.
    lat = 1e-6
    t = schedule(UNIFORM, 2, 2, 1, pipeline=schedule_name, scatter_gather=True,
                 device_flops=RATE)
    r = simulate(t, star(4, 1e30, lat), library="mpich")
    ab = (2 * lat, 0.0)
    f = closed_form(UNIFORM, 2, 2, 1, pipeline=schedule_name, scatter_gather=True,
                    device_flops=RATE, links={"tp": ab, "pp": ab})
    assert f["pp"] > 0
    assert r.makespan == pytest.approx(f["time"], rel=1e-12)


# Context parallelism: each sequence over cp ranks, keys and values passed in a ring beside the
# attention core (workloads.transformer.context.ring, Transformer Engine v2.5's ring attention).

@pytest.mark.parametrize("cp", [2, 4])
@pytest.mark.parametrize("tp,pp,dp,schedule_name,recompute", [
    (1, 1, 1, "1f1b", "none"), (2, 1, 2, "1f1b", "full"), (2, 2, 1, "1f1b", "full"),
    (1, 2, 2, "gpipe", "selective"), (2, 2, 1, "interleaved", "full")])
@pytest.mark.parametrize("latency", [3e-4, 3e-6])
def test_context_parallel_replay_is_the_closed_form_without_contention(
        cp, tp, pp, dp, schedule_name, recompute, latency):
    # Latency-only links: nothing shares bandwidth. At 3e-4 s a ring step's exchange (2 link
    # latencies) outlasts its compute and the rings are exposed; at 3e-6 s the compute hides it.
    t = schedule(UNIFORM, tp, pp, dp, cp=cp, pipeline=schedule_name, recompute=recompute,
                 chunks=2 if schedule_name == "interleaved" else 1, device_flops=RATE)
    assert t.ranks == tp * cp * pp * dp
    r = simulate(t, star(t.ranks, 1e30, latency), library="mpich")
    links = {k: (2 * latency, 0.0) for k in ("tp", "pp", "dp", "cp")}
    f = closed_form(UNIFORM, tp, pp, dp, cp=cp, pipeline=schedule_name, recompute=recompute,
                    chunks=2 if schedule_name == "interleaved" else 1, device_flops=RATE,
                    links=links)
    assert r.makespan == pytest.approx(f["time"], rel=1e-6)
    assert (f["cp"] > 0) == (latency == 3e-4)


def test_context_parallel_ring_on_real_links_is_the_closed_form_when_alone():
    # cp 4 and tp 2 on a star of 1 GB/s links, gradients in one bucket after the backward
    # (nothing else on the wire while the rings run): the rings' messages alone, at
    # alpha + n beta each
    bw, lat = 1e9, 1e-6
    t = schedule(UNIFORM, 2, 1, 1, cp=4, bucket_bytes=1e30, device_flops=RATE)
    r = simulate(t, star(t.ranks, bw, lat), library="mpich")
    f = closed_form(UNIFORM, 2, 1, 1, cp=4, bucket_bytes=1e30, device_flops=RATE,
                    links={k: (2 * lat, 1 / bw) for k in ("tp", "dp", "cp")})
    assert r.makespan == pytest.approx(f["time"], rel=1e-6)


def test_context_parallel_ring_worked_by_hand():
    # One layer (h 64, 4 heads, s 32, b 1), cp 2, no recomputation, on latency-only links of
    # 0.3 ms: a message takes c = 0.6 ms (two links). Per rank: the attention's GEMMs
    # 2 b s h (3 h + h) / 2 = 524,288 FLOPs, its core 4 b s^2 h / 2 = 131,072 in 2 steps of
    # x = 65,536 FLOPs; the MLP 16 b s h^2 / 2 = 1,048,576 FLOPs; at 1 GFLOP/s.
    c = config(1, 64, 4, 32, 0)
    x, c_msg = 65_536 / RATE, 6e-4
    forward = 524_288 / RATE + (x + max(x, c_msg)) + 1_048_576 / RATE
    backward = 2 * 1_048_576 / RATE + 2 * 524_288 / RATE + 2 * max(2 * x, c_msg)
    allreduce = 2 * c_msg   # the gradient over the 2 ranks: MPICH's ring, 2 steps
    t = schedule(c, cp=2, recompute="none", bucket_bytes=1e30, device_flops=RATE)
    r = simulate(t, star(2, 1e30, 3e-4), library="mpich")
    assert r.makespan == pytest.approx(forward + backward + allreduce, rel=1e-12)


def test_context_parallel_flops_and_bytes_by_hand():
    # 4 layers (h 64, 4 heads of which 2 key/value heads, s 32), b 2, B 8, tp 2, cp 2, pp 2,
    # dp 1: m = 4 micro-batches
    c = config(4, 64, 4, 32, 128, micro_batch=2, global_batch=8, kv_heads=2)
    tp, cp, pp = 2, 2, 2
    for recompute in ("full", "none", "selective"):
        t = schedule(c, tp, pp, 1, cp=cp, recompute=recompute)
        # every rank 1/(tp cp) of its stage: the ranks together are Narayanan's Eq. 3 (with
        # GQA's narrower QKV GEMM, iteration_flops)
        assert t.flops.sum() == pytest.approx(iteration_flops(c, recompute), rel=1e-12)
        got = measure(t)
        # keys and values of a rank: 2 b (s / cp) (k / tp) d values of 2 bytes
        kv = 2 * 2 * 16 * 1 * 16 * 2
        # per layer and micro-batch on each of the tp x cp ranks: forward cp - 1 messages of
        # kv, backward 2 (cp - 1) kv, a recomputed forward (or core) cp - 1 more
        again = recompute != "none"
        per = (cp - 1) * kv * (1 + 2 + again)
        assert got["cp"] == 4 * 4 * tp * cp * per
        assert got["cp_calls"] == 4 * 4 * tp * cp * (cp - 1) * (1 + 2 + again)
    # the pipeline sends a rank's own s / cp tokens: b (s / cp) h values
    assert got["pp"] == 4 * tp * cp * (pp - 1) * 2 * (2 * 16 * 64 * 2)


def test_context_parallel_ranks_are_megatrons_order():
    # "tp-cp-ep-dp-pp": rank = ((stage dp + replica) cp + j) tp + shard. tp 2, cp 2, dp 2:
    # the rings join ranks 2 apart in blocks of 4; each shard's gradients are reduced over
    # the dp x cp = 4 ranks that hold it
    c = config(2, 64, 4, 32, 0, global_batch=4)
    t = schedule(c, 2, 1, 2, cp=2, recompute="none")
    msg = t.is_message
    assert set(zip(t.rank[msg].tolist(), t.peer[msg].tolist())) == {
        (0, 2), (2, 0), (1, 3), (3, 1), (4, 6), (6, 4), (5, 7), (7, 5)}
    groups = {t.specs.row(int(k)).group for k, tag in zip(t.spec[t.is_collective],
                                                         t.tag[t.is_collective])
              if t.tags[tag] == "dp"}
    assert groups == {(0, 2, 4, 6), (1, 3, 5, 7)}


@pytest.mark.parametrize("kwargs,needle", [
    ({"cp": 3}, "sequence 32 does not split over cp 3"),   # 32 % 6
    ({"cp": 0}, "cp must be an integer >= 1"),
    ({"cp": 2, "fsdp": True, "dp": 2}, "with ZeRO-3 or FSDP is not modelled"),
    ({"cp": 2, "replicas": 1}, "replicas or shards"),
    ({"cp": 2, "tp_seconds": lambda op, ranks, nbytes: 0.0}, "fused tensor-parallel chains"),
    ({"cp": 2, "dp": 3}, "global batch")])
def test_context_parallel_bad_options_are_refused_by_name(kwargs, needle):
    with pytest.raises(WorkloadError, match=needle):
        schedule(UNIFORM, **kwargs)
