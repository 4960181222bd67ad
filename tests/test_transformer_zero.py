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
def test_zero3_and_fsdp_send_1_5_times_the_allreduce_volume(dp):
    # ZeRO 7.2.2: an allgather before the forward, one before the backward, a reduce-scatter
    # of the gradients: 3 Psi against the allreduce's 2 Psi ((d - 1)/d Psi per rank each)
    c = C._replace(global_batch=dp)
    ddp = wire_bytes(schedule(c, dp=dp, device_flops=RATE))
    assert ddp == pytest.approx(2 * (dp - 1) * PSI, rel=1e-12)
    for kw in ({"zero": 3}, {"fsdp": True}):
        assert wire_bytes(schedule(c, dp=dp, device_flops=RATE, **kw)) == pytest.approx(1.5 * ddp, rel=1e-12)


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
])
def test_bad_sharding_is_refused_by_name(kwargs, needle):
    with pytest.raises(WorkloadError, match=needle):
        schedule(config(2, 64, 4, 32, 0, global_batch=4), **kwargs)
