"""ZeRO-1/2/3 and FSDP in the transformer schedule: the bytes are ZeRO's communication analysis
(Rajbhandari et al. SC'20, section 7), and the replay equals the closed form without contention."""

import pytest
from test_transformer_pipeline import star

from netsim import simulate
from workloads.errors import WorkloadError
from workloads.transformer.iteration import measure, schedule
from workloads.transformer.closed import closed_form
from workloads.transformer.flops import config

RATE = 1e9


def wire_bytes(t):
    """Bytes every rank sends, summed, once MPICH's schedules expand the collectives."""
    return simulate(t, star(t.ranks), library="mpich").stats["bytes"]


def ops(t):
    return [t.specs.row(int(k)).op for k in t.spec[t.is_collective]]


C = config(2, 64, 4, 32, 128, micro_batch=1, global_batch=4)   # one micro-batch per replica
PSI = (2 * (12 * 64**2 + 13 * 64) + (128 + 32) * 64) * 2        # a replica's fp16 parameters


@pytest.mark.parametrize("dp", [2, 4])
def test_zero3_sends_1_5_times_the_allreduce_volume_and_fsdp_one_root_gather_less(dp):
    # ZeRO 7.2.2: an allgather before the forward, one before the backward, a reduce-scatter
    # of the gradients: 3 Psi against the allreduce's 2 Psi ((d - 1)/d Psi per rank each)
    c = C._replace(global_batch=dp)
    ddp = wire_bytes(schedule(c, dp=dp, device_flops=RATE))
    assert ddp == pytest.approx(2 * (dp - 1) * PSI, rel=1e-12)
    assert wire_bytes(schedule(c, dp=dp, zero=3, device_flops=RATE)) == pytest.approx(1.5 * ddp, rel=1e-12)
    # FSDP keeps the root unit (the 128 x 64 + 32 x 64 embeddings) gathered from its forward
    # to its backward: one allgather of it less, (d - 1)/d of its bytes from each of d ranks
    root = (128 + 32) * 64 * 2
    fsdp = wire_bytes(schedule(c, dp=dp, fsdp=True, device_flops=RATE))
    assert fsdp == pytest.approx(1.5 * ddp - (dp - 1) * root, rel=1e-12)


@pytest.mark.parametrize("zero", [1, 2])
def test_zero1_and_zero2_send_what_plain_data_parallelism_sends(zero):
    # ZeRO 7.2.1: reduce-scatter of the gradients, allgather of the updated parameters: 2 Psi
    t = schedule(C, dp=4, zero=zero, device_flops=RATE)
    assert wire_bytes(t) == pytest.approx(wire_bytes(schedule(C, dp=4, device_flops=RATE)), rel=1e-12)
    assert ops(t).count("allgather") == 1 and ops(t).count("allreduce") == 0
    assert measure(t)["dp"] == 2 * PSI      # the buckets' Psi reduce-scattered, Psi gathered


def test_zero3_gathers_every_unit_twice_per_micro_batch():
    c = C._replace(global_batch=8)          # m = 4 micro-batches per replica at dp = 2
    t = schedule(c, dp=2, zero=3)
    got = ops(t)
    assert got.count("allgather") == 4 * 2 * (2 + 1)
    assert got.count("reduce_scatter") == 2 + 1     # once per unit, after the last backward
    assert measure(t)["dp"] == 4 * 2 * PSI + PSI


@pytest.mark.parametrize("kw", [{"zero": 1}, {"zero": 2}, {"zero": 3}, {"fsdp": True}])
@pytest.mark.parametrize("pipeline", ["1f1b", "gpipe"])
def test_replay_is_the_closed_form_on_latency_only_links(kw, pipeline):
    # infinite bandwidth, 1 us per link: no two flows ever share, every op costs its latency
    c = C._replace(global_batch=8)
    lat, tp = 1e-6, 2
    t = schedule(c, tp=tp, dp=2, pipeline=pipeline, device_flops=RATE, **kw)
    r = simulate(t, star(t.ranks, 1e30, lat), library="mpich")
    ab = (2 * lat, 0.0)
    f = closed_form(c, tp=tp, dp=2, pipeline=pipeline, device_flops=RATE,
                    links={"tp": ab, "dp": ab}, **kw)
    assert f["dp"] > 0
    assert r.makespan == pytest.approx(f["time"], rel=1e-12)


def test_zero1_replay_is_the_closed_form_on_a_star_of_real_links():
    # one chain of reduce-scatters, then the allgather: nothing shares a link
    bw, lat = 1e9, 1e-6
    t = schedule(C, dp=2, zero=1, device_flops=RATE, bucket_bytes=PSI / 3)
    r = simulate(t, star(2, bw, lat), library="mpich")
    f = closed_form(C, dp=2, zero=1, device_flops=RATE, bucket_bytes=PSI / 3,
                    links={"dp": (2 * lat, 1 / bw)})
    assert r.makespan == pytest.approx(f["time"], rel=1e-9)


@pytest.mark.parametrize("kwargs,needle", [
    ({"zero": 4}, "unknown ZeRO stage"),
    ({"zero": 1, "fsdp": True}, "FSDP"),
    ({"zero": 2, "dp": 1}, "dp is 1"),
    ({"zero": 3, "dp": 2, "pp": 2}, "needs pp 1"),
    ({"zero": 3, "dp": 2, "inflight_allgathers": 0}, "inflight_allgathers"),
])
def test_bad_sharding_is_refused_by_name(kwargs, needle):
    with pytest.raises(WorkloadError, match=needle):
        schedule(config(2, 64, 4, 32, 0, global_batch=4), **kwargs)


# Two layers of 49,984 parameters (vocab 0: no root unit), dp 2, one micro-batch, no
# recomputation: a layer's forward takes 1 ms at this rate (3,407,872 FLOPs), its backward
# 2 ms; on a star of these links a 2-rank ring allgather or reduce-scatter of a layer (each
# rank sends half of its 99,968 bytes) takes 3 ms.
TWO = config(2, 64, 4, 32, 0, micro_batch=1, global_batch=2)
TWO_RATE, TWO_BW = 3407872 / 1e-3, 49984 / 3e-3


@pytest.mark.parametrize("limit,expected", [(2, 18e-3), (1, 20e-3)])
@pytest.mark.parametrize("kw", [{"zero": 3}, {"fsdp": True}])
def test_two_layers_on_two_ranks_follow_fsdp_stream_and_rate_limiter(kw, limit, expected):
    # one stream, in issue order; AG(k) waits for the free event the limiter dequeues.
    # limit 2: AG0 0-3, F0 3-4 | AG1 3-6, F1 6-7 | backward: AG1 (waits F0's free, 4) 6-9,
    #   AG0 prefetched (one event queued: no wait) 9-12, B1 9-11, RS1 12-15, B0 12-14,
    #   RS0 15-18: 18 ms.
    # limit 1: AG1 waits F0 (4) 4-7, F1 7-8 | AG1 waits F1 (8) 8-11, AG0 11-14, B1 11-13,
    #   RS1 14-17, B0 14-16, RS0 17-20: 20 ms.
    t = schedule(TWO, dp=2, recompute="none", device_flops=TWO_RATE, inflight_allgathers=limit,
                 **kw)
    r = simulate(t, star(2, TWO_BW), library="mpich")
    f = closed_form(TWO, dp=2, recompute="none", device_flops=TWO_RATE,
                    links={"dp": (0.0, 1 / TWO_BW)}, inflight_allgathers=limit, **kw)
    assert r.makespan == pytest.approx(expected, rel=1e-9)
    assert f["time"] == pytest.approx(expected, rel=1e-9)
    assert f["compute"] == pytest.approx(6e-3, rel=1e-12)


def test_allgather_bound_when_a_layer_gathers_slower_than_it_computes():
    # 8 layers over dp 8 on a star, each 8-rank ring allgather or reduce-scatter of a layer
    # (7/8 of 99,968 bytes from each rank) taking 10 x a layer's 1 ms forward: the one stream
    # carries 2 allgathers and a reduce-scatter per layer back to back, its first allgather
    # before any compute and the last reduce-scatter after the last backward's
    c = config(8, 64, 4, 32, 0, micro_batch=1, global_batch=8)
    g = 10e-3
    bw = 7 / 8 * 99968 / g
    t = schedule(c, dp=8, recompute="none", device_flops=TWO_RATE, fsdp=True)
    r = simulate(t, star(8, bw), library="mpich")
    f = closed_form(c, dp=8, recompute="none", device_flops=TWO_RATE,
                    links={"dp": (0.0, 1 / bw)}, fsdp=True)
    assert r.makespan == pytest.approx(3 * 8 * g, rel=1e-9)    # 240 ms; compute is 24 ms
    assert f["time"] == pytest.approx(r.makespan, rel=1e-9)
    assert f["dp"] == pytest.approx(3 * 8 * g - 24e-3, rel=1e-9)


def test_without_the_limiter_the_stream_rules_still_hold():
    # inflight_allgathers None (limit_all_gathers=False): the 2-layer case's allgathers wait
    # for nothing but the stream; the same 18 ms there (the stream is never idle)
    t = schedule(TWO, dp=2, recompute="none", device_flops=TWO_RATE, fsdp=True,
                 inflight_allgathers=None)
    assert simulate(t, star(2, TWO_BW), library="mpich").makespan == pytest.approx(18e-3,
                                                                                  rel=1e-9)
