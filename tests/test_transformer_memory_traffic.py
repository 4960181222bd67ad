"""A transformer layer's compute time as matrix FLOPs at a rate plus memory traffic at HBM speed:
the bytes are Korthikanti et al.'s activation counts, the trace's ops take what the closed form
says, and without a bandwidth nothing changes."""

import pytest
from test_transformer_pipeline import RATE, UNIFORM, star

from netsim import simulate
from netsim.trace.core import COMPUTE
from workloads.errors import WorkloadError
from workloads.transformer.iteration import schedule
from workloads.transformer.closed import closed_form
from workloads.transformer.flops import (attention_stored_bytes, config, layer_forward_flops,
                                         layer_stored_bytes, mlp_stored_bytes)

BW = 2e9   # bytes/s: with RATE = 1 GFLOP/s, memory and FLOPs take comparable times here


def test_blocks_add_up_to_korthikanti_eq1_eq2_and_eq4():
    c = config(8, 64, 4, 32, 0, micro_batch=2, global_batch=16)
    s, b, h, a = 32, 2, 64, 4
    # section 4.1, t = 1: attention 11 sbh + 5 a s^2 b, MLP 19 sbh, two layer norms 4 sbh
    assert attention_stored_bytes(c) == 11 * s * b * h + 5 * a * s * s * b + 2 * s * b * h
    assert mlp_stored_bytes(c) == 19 * s * b * h + 2 * s * b * h
    for t in (1, 2, 4):
        eq2 = s * b * h * (10 + 24 / t + 5 * a * s / (h * t))
        eq4 = s * b * h * (34 / t + 5 * a * s / (h * t))
        assert layer_stored_bytes(c, t) == pytest.approx(eq2, rel=1e-15)
        assert layer_stored_bytes(c, t, True) == pytest.approx(eq4, rel=1e-15)


def test_fp32_doubles_the_values_and_keeps_the_byte_masks():
    c16 = config(1, 64, 4, 32, 0)
    c32 = c16._replace(precision="fp32")
    s, h, a = 32, 64, 4
    masks = 2 * s * h + a * s * s   # two dropout masks of b s h, one of a s^2 b, a byte each
    assert layer_stored_bytes(c32) - masks == 2 * (layer_stored_bytes(c16) - masks)


@pytest.mark.parametrize("recompute,passes,moves", [("full", 4, 3), ("none", 3, 2)])
def test_one_rank_takes_flops_at_the_rate_plus_korthikanti_bytes_at_the_bandwidth(
        recompute, passes, moves):
    # One rank, no communication: each layer of each micro-batch runs its FLOPs (forward,
    # backward = 2 forwards, [recomputed forward]) and moves Eq. 1's bytes once per pass
    # (written in the forward [and its recomputation], read in the backward).
    t = schedule(UNIFORM, recompute=recompute, device_flops=RATE, memory_bandwidth=BW)
    r = simulate(t, star(1), library="mpich")
    s, b, h, a = UNIFORM.seq, UNIFORM.micro_batch, UNIFORM.hidden, UNIFORM.heads
    eq1 = s * b * h * (34 + 5 * a * s / h)
    per_layer = passes * layer_forward_flops(UNIFORM) / RATE + moves * eq1 / BW
    expected = UNIFORM.global_batch * UNIFORM.layers * per_layer
    assert r.makespan == pytest.approx(expected, rel=1e-12)
    f = closed_form(UNIFORM, recompute=recompute, device_flops=RATE, memory_bandwidth=BW)
    assert f["time"] == pytest.approx(expected, rel=1e-12)


@pytest.mark.parametrize("kw", [
    dict(tp=2, pp=2, dp=2),
    dict(tp=2, pp=2, dp=1, pipeline="gpipe", recompute="none"),
    dict(tp=2, pp=2, dp=1, sequence_parallel=True),
    dict(tp=1, pp=2, dp=2, pipeline="interleaved", chunks=2),
    dict(tp=2, pp=2, dp=1, scatter_gather=True),
    dict(tp=2, pp=1, dp=2, zero=3),
])
def test_replay_is_the_closed_form_on_latency_only_links(kw):
    # infinite bandwidth, 1 us per link: nothing shares a link, so the replay is the
    # closed form's timeline with the memory ops' seconds in every chunk's compute
    lat = 1e-6
    t = schedule(UNIFORM, device_flops=RATE, memory_bandwidth=BW, **kw)
    r = simulate(t, star(t.ranks, 1e30, lat), library="mpich")
    ab = (2 * lat, 0.0)
    f = closed_form(UNIFORM, device_flops=RATE, memory_bandwidth=BW,
                    links={"tp": ab, "pp": ab, "dp": ab}, **kw)
    old = closed_form(UNIFORM, device_flops=RATE, links={"tp": ab, "pp": ab, "dp": ab}, **kw)
    assert f["compute"] > old["compute"]
    assert r.makespan == pytest.approx(f["time"], rel=1e-12)


def test_memory_ops_follow_each_block_and_carry_its_seconds():
    tp = 2
    old = schedule(UNIFORM, tp=tp, device_flops=RATE)
    new = schedule(UNIFORM, tp=tp, device_flops=RATE, memory_bandwidth=BW)
    # one memory op per block op and shard: attention and MLP, forward, recompute, backward
    assert (new.kind == COMPUTE).sum() == 2 * (old.kind == COMPUTE).sum()
    assert new.flops.sum() == old.flops.sum()
    memory = new.compute_seconds()[(new.kind == COMPUTE) & (new.flops == 0)].sum()
    m, l = UNIFORM.global_batch, UNIFORM.layers
    assert memory == pytest.approx(tp * m * l * 3 * layer_stored_bytes(UNIFORM, tp) / BW,
                                   rel=1e-12)
    assert new.metadata["memory_bandwidth"] == BW and "memory_bandwidth" not in old.metadata


def test_without_a_bandwidth_the_closed_form_is_the_flops_only_rule():
    f = closed_form(UNIFORM, tp=2, pp=2, device_flops=RATE)
    g = closed_form(UNIFORM, tp=2, pp=2, device_flops=RATE, memory_bandwidth=None)
    assert f == g
    assert f["compute"] == pytest.approx(
        UNIFORM.global_batch * 4 * 4 * layer_forward_flops(UNIFORM) / 4 / RATE, rel=1e-12)


@pytest.mark.parametrize("bad", [0, -1.0, float("nan"), "fast"])
def test_bad_bandwidth_is_refused_by_name(bad):
    with pytest.raises(WorkloadError, match="memory_bandwidth"):
        schedule(UNIFORM, device_flops=RATE, memory_bandwidth=bad)
    with pytest.raises(WorkloadError, match="memory_bandwidth"):
        closed_form(UNIFORM, device_flops=RATE, memory_bandwidth=bad)
