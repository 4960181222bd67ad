"""Fused tensor-parallel chains (workloads.transformer.fused): the replay of the chains.

The reference is the replay of the same iteration written op by op (every block's
compute op and every tensor-parallel call; the calls collapsed where they run alone,
which tests/test_alone.py holds to the full expansion). The fused trace must give
the same makespan, the same end of every pipeline message and data-parallel call
(in the order both traces write them), the same link statistics and counts, with
every replica and with the replicas' and the shards' symmetries; and the replay must
refuse a fused trace whose calls do not run alone, which the study then writes op by
op.
"""

import numpy as np
import pytest

from netsim import simulate
from netsim.comm.alone import FusedNotAlone
from netsim.comm.priced import NcclPrices
from netsim.errors import TraceError
from studies.scaling.transformer import gpus_of, replay_point
from topologies import dgx_h100, gpu_cluster
from workloads.transformer.flops import config, get_config
from workloads.transformer.fused import NotFusable
from workloads.transformer.iteration import measure, schedule, shard_shift, shift
from workloads.transformer.layout import Layout
from workloads.transformer.moe import Moe

# A 4-layer model, tensor parallelism filling each DGX H100.
C = config(4, 512, 8, 128, 1024, micro_batch=1, global_batch=8)
CASES = {
    "tp 8, pp 2, 1f1b": dict(tp=8, pp=2),
    "interleaved": dict(tp=8, pp=2, pipeline="interleaved", chunks=2),
    "gpipe, no recompute": dict(tp=8, pp=2, pipeline="gpipe", recompute="none"),
    "selective recomputation": dict(tp=8, pp=2, recompute="selective"),
    "sequence parallel": dict(tp=8, pp=2, sequence_parallel=True),
    "memory traffic": dict(tp=8, pp=2, memory_bandwidth=3.35e12),
    "tp x dp": dict(tp=8, dp=2),
    "tp x dp, zero-1": dict(tp=8, dp=2, zero=1),
    "tp x pp x dp, two iterations": dict(tp=8, pp=2, dp=2, iterations=2),
}


def _pricer(G, n):
    place, prices = gpus_of(G)[:n], NcclPrices(G)
    return place, prices, lambda op, ranks, nbytes: prices.seconds(
        [place[x] for x in ranks], op, nbytes)


def _same(ref, fused, t_ref, t_fused):
    """Makespan, every message's and data-parallel call's end, links and counts agree."""
    span = ref.makespan
    assert fused.makespan == pytest.approx(span, rel=1e-12)
    for t, r in ((t_ref, ref), (t_fused, fused)):
        assert r.ops["end"].shape == (t.num_ops,)
    for sel in (lambda t: t.is_message,
                lambda t: t.is_collective & (t.tag == t.tags.index("dp")) if "dp" in t.tags
                else np.zeros(t.num_ops, bool)):
        a, b = ref.ops["end"][sel(t_ref)], fused.ops["end"][sel(t_fused)]
        assert a.shape == b.shape
        assert np.abs(a - b).max(initial=0) <= 1e-12 * span
    for k in ("bytes", "messages", "busy", "saturated", "peak_util", "peak_flows"):
        np.testing.assert_allclose(fused.links[k], ref.links[k], rtol=1e-12, atol=1e-12 * span)
    assert fused.stats["messages"] == ref.stats["messages"]
    assert fused.stats["bytes"] == pytest.approx(ref.stats["bytes"], rel=1e-12)
    assert fused.bottlenecks(1)[0]["link"] == ref.bottlenecks(1)[0]["link"]
    np.testing.assert_allclose(fused.iteration_end, ref.iteration_end, rtol=1e-12)


@pytest.mark.parametrize("case", list(CASES))
def test_fused_chains_replay_as_the_blocks_op_by_op(case):
    kw = CASES[case]
    L = Layout(kw["tp"], kw.get("pp", 1), kw.get("dp", 1))
    G = gpu_cluster("dgx_h100", L.world // 8)
    place, prices, price = _pricer(G, L.world)
    ref_t = schedule(C, device_flops=1e14, **kw)
    fused_t = schedule(C, device_flops=1e14, tp_seconds=price, **kw)
    ref = simulate(ref_t, G, placement=place, collapse=True, planner=prices)
    fused = simulate(fused_t, G, placement=place, collapse=True, planner=prices)
    assert fused_t.num_ops * 2 < ref_t.num_ops
    assert sum(row[3] for row in fused_t.metadata["fused_tp"]) > 0
    _same(ref, fused, ref_t, fused_t)
    assert measure(fused_t)["tp"] == measure(ref_t)["tp"]
    assert measure(fused_t)["tp_calls"] == measure(ref_t)["tp_calls"]


def test_gemm_compute_fuses_its_seconds():
    from topologies.devices import device_gemm
    G = gpu_cluster("dgx_h100", 2)
    place, prices, price = _pricer(G, 16)
    kw = dict(tp=8, pp=2, compute="gemm", device=device_gemm("H100"))
    ref_t, fused_t = (schedule(C, **kw), schedule(C, tp_seconds=price, **kw))
    _same(simulate(ref_t, G, placement=place, collapse=True, planner=prices),
          simulate(fused_t, G, placement=place, collapse=True, planner=prices), ref_t, fused_t)


@pytest.mark.parametrize("reduce", ["replicas", "shards"])
def test_fused_with_the_replicas_and_the_shards_symmetry(reduce):
    """The reduced replay of a fused trace against the reduced replay op by op, and both
    against the replay of every rank."""
    kw = dict(tp=8, pp=2, dp=2)
    G = gpu_cluster("dgx_h100", 4)
    place, prices, price = _pricer(G, 32)
    full = simulate(schedule(C, device_flops=1e14, **kw), G, placement=place, collapse=True,
                    planner=prices)
    sub, sigma = ((dict(replicas=1), shift(8, 2, 2, 1)) if reduce == "replicas" else
                  (dict(shards=1), shard_shift(8, 2, 2, [2, 3, 4, 5, 6, 7, 1, 0])))
    ref_t = schedule(C, device_flops=1e14, **sub, **kw)
    fused_t = schedule(C, device_flops=1e14, tp_seconds=price, **sub, **kw)
    ref, fused = (simulate(t, G, placement=place, collapse=True, planner=prices, symmetry=sigma)
                  for t in (ref_t, fused_t))
    _same(ref, fused, ref_t, fused_t)
    assert fused.makespan == pytest.approx(full.makespan, rel=1e-12)


def test_replay_point_fuses_and_equals_the_replay_op_by_op():
    c = get_config("gpt3-1.3b", global_batch=64, layers=4)
    G = gpu_cluster("dgx_h100", 64)
    r, k, s, t = replay_point(c, Layout(8, 2, 32), G, 1e14)
    assert t.metadata.get("fused_tp") and (k, s) == (32, 1)   # shards, NCCL's trees
    full = simulate(schedule(c, 8, 2, 32, device_flops=1e14), G, placement=gpus_of(G),
                    collapse=True)
    assert r.makespan == pytest.approx(full.makespan, rel=1e-12)


def test_calls_that_do_not_run_alone_refuse_the_fused_trace_and_the_study_writes_it_op_by_op():
    # tp 4 x dp 2 in one machine: GPU 0's NVLink carries its TP calls and its DP ring.
    G = dgx_h100()
    place, prices, price = _pricer(G, 8)
    fused_t = schedule(C, tp=4, dp=2, device_flops=1e14, tp_seconds=price)
    with pytest.raises(FusedNotAlone, match="witness does not run alone"):
        simulate(fused_t, G, placement=place, collapse=True, planner=prices)
    with pytest.raises(TraceError, match="collapse=True only"):
        simulate(fused_t, G, placement=place, planner=prices)
    r, _, _, t = replay_point(C, Layout(4, 1, 2), G, 1e14)
    assert "fused_tp" not in t.metadata
    ref = simulate(schedule(C, tp=4, dp=2, device_flops=1e14), G, placement=place)
    assert r.makespan == pytest.approx(ref.makespan, rel=1e-12)


def test_seconds_other_than_the_plan_alone_are_refused():
    G = gpu_cluster("dgx_h100", 2)
    place, prices, price = _pricer(G, 16)
    t = schedule(C, tp=8, pp=2, device_flops=1e14,
                 tp_seconds=lambda op, ranks, n: 1.000001 * price(op, ranks, n))
    with pytest.raises(FusedNotAlone, match="summed at"):
        simulate(t, G, placement=place, collapse=True, planner=prices)


@pytest.mark.parametrize("kw, what", [
    (dict(tp=8, dp=2, zero=3), "ZeRO-3"),
    (dict(tp=8, dp=2, moe=Moe(4, 2), ep=2, sequence_parallel=True), "experts"),
    (dict(tp=8, pp=2, sequence_parallel=True, tp_overlap=True), "overlap"),
    (dict(tp=8, pp=2, sequence_parallel=True, scatter_gather=True), "scatter/gather"),
    (dict(tp=1, dp=2), "tp = 1"),
])
def test_what_reads_a_chain_apart_is_not_fused(kw, what):
    with pytest.raises(NotFusable, match=what):
        schedule(C, device_flops=1e14, tp_seconds=lambda *a: 1e-5, **kw)


def test_flops_without_a_rate_are_not_fused():
    with pytest.raises(NotFusable, match="device_flops"):
        schedule(C, tp=8, pp=2, tp_seconds=lambda *a: 1e-5)
