"""A transformer block's compute time from its GEMMs' shapes: tile and wave quantisation worked
by hand, the memory roofline, the one calibration row per GPU, the FLOPs the shapes add up to,
the replay equal to the closed form, and a narrow tensor-parallel slice running below peak."""

import math

import pytest
from test_transformer_pipeline import star

from netsim import simulate
from netsim.costmodel.gemm import (TILE, calibrate, gemm_device, gemm_seconds, quantisation,
                                   tiles, waves)
from netsim.errors import NetsimError
from netsim.trace.core import COMPUTE
from topologies.devices import DeviceError, device_gemm
from workloads.errors import WorkloadError
from workloads.transformer.closed import closed_form
from workloads.transformer.flops import (attention_core_forward_flops, attention_forward_flops,
                                         config, get_config, logit_forward_flops,
                                         mlp_forward_flops)
from workloads.transformer.gemm import (achieved_flops, backward_gemms, block_flops,
                                        block_seconds, forward_gemms)
from workloads.transformer.iteration import schedule
from workloads.transformer.moe import moe

A100 = gemm_device(312e12, 2.039e12, 108)


def test_a_4096_cube_on_an_a100_fills_ten_waves_of_108():
    # 128 x 128 tiles: 32 x 32 = 1024 tiles; ceil(1024 / 108) = 10 waves of 108 slots
    assert tiles(4096, 4096, (128, 128)) == 1024
    assert waves(4096, 4096, 108, (128, 128)) == 10
    assert quantisation(4096, 4096, 108, (128, 128)) == 1024 / 1080
    # 256 x 128 tiles: 16 x 32 = 512 tiles in 5 waves, the same share
    assert (tiles(4096, 4096), waves(4096, 4096, 108)) == (512, 5)
    assert quantisation(4096, 4096, 108) == pytest.approx(512 / 540, rel=1e-15)
    t = gemm_seconds(4096, 4096, 4096, A100)
    assert t == pytest.approx(2 * 4096 ** 3 / (312e12 * 512 / 540), rel=1e-15)


def test_a_tp8_slice_of_gpt3_1_3b_fills_under_half_an_a100():
    # QKV: 2048 tokens x 3 * 2048 / 8 = 768 columns: 8 x 6 = 48 tiles of 256 x 128 (or 16 x 3
    # of 128 x 256), one wave of 108 SMs; the MLP's first matrix, 1024 columns: 64 tiles
    assert quantisation(2048, 768, 108) == pytest.approx(48 / 108, rel=1e-15)
    assert quantisation(2048, 1024, 108) == pytest.approx(64 / 108, rel=1e-15)
    # the whole model's on one GPU: 6144 columns, 8 x 48 = 384 tiles in 4 waves (432 slots)
    assert quantisation(2048, 6144, 108) == pytest.approx(384 / 432, rel=1e-15)
    # H100 SXM, 132 SMs: the same 48 tiles fill less of it
    assert quantisation(2048, 768, 132) == pytest.approx(48 / 132, rel=1e-15)


def test_the_tile_takes_the_better_orientation():
    # 128 rows, 27648 columns: 216 half-empty 256 x 128 tiles in 2 waves, or 108 full
    # 128 x 256 tiles in 1
    assert tiles(128, 27648) == 216 and tiles(128, 27648, TILE[::-1]) == 108
    assert quantisation(128, 27648, 108) == 1.0


def test_a_thin_gemm_is_memory_bound():
    # k = 8: 2 * 4096^2 * 8 FLOPs take under a microsecond, the 4096^2 output's bytes 16 us
    flops = 2 * 4096 * 4096 * 8
    moved = 2 * (4096 * 8 + 8 * 4096 + 4096 * 4096)
    assert flops / (312e12 * 512 / 540) < moved / 2.039e12
    assert gemm_seconds(4096, 4096, 8, A100) == moved / 2.039e12
    # a batch of them moves each one's bytes
    assert gemm_seconds(4096, 4096, 8, A100, batch=3) == 3 * moved / 2.039e12


def test_the_calibration_reproduces_its_benchmark_row():
    # stas00/ml-engineering MAMF table: A100 SXM 271.2 TFLOP/s at 1024x10240x5120 (4 x 80 =
    # 320 tiles in 3 waves: q = 320/324); H100 SXM 794.5 at 2048x2048x13312 (8 x 16 = 128
    # tiles, one wave of 132: q = 128/132)
    a, h = device_gemm("A100"), device_gemm("H100")
    assert a.efficiency == pytest.approx(271.2 / (312 * 320 / 324), rel=1e-14)
    assert h.efficiency == pytest.approx(794.5 / (989.5 * 128 / 132), rel=1e-14)
    for d, (m, n, k), rate in ((a, (1024, 10240, 5120), 271.2e12),
                               (h, (2048, 2048, 13312), 794.5e12)):
        assert 2 * m * n * k / gemm_seconds(m, n, k, d) == pytest.approx(rate, rel=1e-14)
    assert device_gemm("H200").efficiency == h.efficiency
    assert device_gemm("H200").memory_bandwidth == 4.8e12


def test_gpus_without_a_benchmark_row_and_bad_rows_are_refused():
    with pytest.raises(DeviceError, match="GEMM benchmark 'V100'"):
        device_gemm("V100")
    with pytest.raises(NetsimError, match="not a compute-bound"):
        calibrate(400e12, 4096, 4096, 4096, A100)   # above the peak
    with pytest.raises(NetsimError, match="sms"):
        gemm_device(312e12, 2e12, 0)


@pytest.mark.parametrize("name", ["gpt3-1.3b", "gpt3-175b", "llama3-8b", "llama3-70b"])
@pytest.mark.parametrize("tp", [1, 2, 8])
def test_the_shapes_add_up_to_the_published_flops(name, tp):
    c = get_config(name, micro_batch=2, global_batch=2)
    f = block_flops(c, tp)
    assert f["attention"] * tp == attention_forward_flops(c)
    assert f["mlp"] * tp == mlp_forward_flops(c)
    assert f["logit"] * tp == logit_forward_flops(c)
    assert f["core"] * tp == attention_core_forward_flops(c)
    for gemms in forward_gemms(c, tp).values():
        for g in gemms:
            back = backward_gemms(g)
            assert sum(2 * x.m * x.n * x.k * x.batch for x in back) == 4 * g.m * g.n * g.k * g.batch


def test_block_seconds_sum_their_gemms():
    c = get_config("gpt3-1.3b")
    t = block_seconds(c, 8, A100)
    T, h = 2048, 2048
    fwd = (gemm_seconds(T, 768, h, A100) + gemm_seconds(2048, 2048, 128, A100, batch=2)
           + gemm_seconds(2048, 128, 2048, A100, batch=2) + gemm_seconds(T, h, 256, A100))
    assert t["attention", "forward"] == pytest.approx(fwd, rel=1e-15)
    mlp_back = (gemm_seconds(T, h, 1024, A100) + gemm_seconds(h, 1024, T, A100)
                + gemm_seconds(T, 1024, h, A100) + gemm_seconds(1024, h, T, A100))
    assert t["mlp", "backward"] == pytest.approx(mlp_back, rel=1e-15)


@pytest.mark.parametrize("gpu", ["A100", "H100"])
def test_a_tp8_slice_of_gpt3_1_3b_runs_below_tp1(gpu):
    # the point: one global efficiency cannot follow this
    d, c = device_gemm(gpu), get_config("gpt3-1.3b")
    one, eight = achieved_flops(c, 1, d), achieved_flops(c, 8, d)
    for unit in ("attention", "mlp", "logit"):
        assert eight[unit] < one[unit]
    layer = {tp: sum(block_seconds(c, tp, d)[u, p] for u in ("attention", "mlp")
                     for p in ("forward", "backward")) for tp in (1, 8)}
    assert 8 * layer[8] > 1.5 * layer[1]   # eight shards spend over 1.5x the GPU-seconds
    # a GPT-3 175B slice at TP 8 keeps its GEMMs wide
    big = achieved_flops(get_config("gpt3-175b"), 8, d)
    assert big["mlp"] > eight["mlp"] and big["mlp"] > 0.7 * d.peak


TINY = gemm_device(2e12, 5e11, 4, efficiency=0.8, tile=(16, 16))
WITH_LOGIT = config(4, 64, 4, 32, 256, micro_batch=1, global_batch=16)
LAYERS = WITH_LOGIT._replace(vocab=0)   # every stage alike: the closed form is exact


@pytest.mark.parametrize("c,kw", [
    (LAYERS, dict(tp=2, pp=2, dp=2)),
    (LAYERS, dict(tp=2, pp=2, dp=1, pipeline="gpipe", recompute="none")),
    (LAYERS, dict(tp=2, pp=2, dp=1, sequence_parallel=True, recompute="selective")),
    (LAYERS, dict(tp=1, pp=2, dp=2, pipeline="interleaved", chunks=2)),
    (LAYERS, dict(tp=2, pp=2, dp=1, scatter_gather=True, memory_bandwidth=2e9)),
    (LAYERS, dict(tp=2, pp=2, dp=2, zero=1, first_stage_layers=1)),
    (WITH_LOGIT, dict(tp=2, pp=1, dp=2)),
    (WITH_LOGIT, dict(tp=2, pp=1, dp=2, zero=3, recompute="selective")),
    (WITH_LOGIT, dict(tp=2, pp=1, dp=2, zero=2, sequence_parallel=True, memory_bandwidth=2e9)),
])
def test_replay_is_the_closed_form_with_gemm_seconds(c, kw):
    # latency-only links: nothing shares a link, so the replay is the closed form's timeline
    lat = 1e-6
    t = schedule(c, compute="gemm", device=TINY, **kw)
    r = simulate(t, star(t.ranks, 1e30, lat), library="mpich")
    ab = (2 * lat, 0.0)
    f = closed_form(c, compute="gemm", device=TINY, links={"tp": ab, "pp": ab, "dp": ab}, **kw)
    assert r.makespan == pytest.approx(f["time"], rel=1e-12)


def test_one_rank_is_the_sum_of_its_gemm_seconds():
    c = WITH_LOGIT
    g = block_seconds(c, 1, TINY)
    layer = sum(g[u, "forward"] * 2 + g[u, "backward"] for u in ("attention", "mlp"))
    expected = c.global_batch * (c.layers * layer + g["logit", "forward"]
                                 + g["logit", "backward"])
    f = closed_form(c, compute="gemm", device=TINY)
    assert f["time"] == pytest.approx(expected, rel=1e-13)
    r = simulate(schedule(c, compute="gemm", device=TINY), star(1), library="mpich")
    assert r.makespan == pytest.approx(expected, rel=1e-13)


def test_gemm_ops_carry_seconds_and_the_device():
    t = schedule(WITH_LOGIT, tp=2, compute="gemm", device=TINY)
    old = schedule(WITH_LOGIT, tp=2, device_flops=1e9)
    comp = t.kind == COMPUTE
    assert comp.sum() == (old.kind == COMPUTE).sum()
    assert t.flops[comp].sum() == 0 and (t.compute_seconds()[comp] > 0).all()
    assert t.metadata["compute"] == "gemm" and t.metadata["gemm_device"]["sms"] == 4
    assert "compute" not in old.metadata


def test_bad_compute_options_are_refused():
    with pytest.raises(WorkloadError, match="needs a device"):
        schedule(WITH_LOGIT, compute="gemm")
    with pytest.raises(WorkloadError, match="unknown compute 'roofline'"):
        closed_form(WITH_LOGIT, device_flops=1e9, compute="roofline")
    with pytest.raises(WorkloadError, match="fp16/bf16"):
        closed_form(WITH_LOGIT._replace(precision="fp32"), compute="gemm", device=TINY)
    c = config(4, 64, 4, 32, 0, global_batch=16)
    with pytest.raises(WorkloadError, match="mixture-of-experts"):
        closed_form(c, dp=2, compute="gemm", device=TINY, moe=moe(4), ep=2)
    assert math.isfinite(closed_form(c, compute="gemm", device=TINY)["time"])


def test_the_documented_table_of_achieved_tflops_is_recomputed():
    from doc_pages import DOCS

    text = (DOCS / "transformer.md").read_text()
    section = text[text.index("## Compute time from GEMM shapes"):text.index("## Closed form")]
    rows = [line.split("|")[1:-1] for line in section.splitlines()
            if line.startswith(("| A100 | gpt3", "| H100 | gpt3"))]
    assert len(rows) == 6
    for gpu, name, tp, *cells in (map(str.strip, r) for r in rows):
        d, c, tp = device_gemm(gpu), get_config(name), int(tp)
        a, s, f = achieved_flops(c, tp, d), block_seconds(c, tp, d), block_flops(c, tp)
        layer = 3 * (f["attention"] + f["mlp"]) / sum(
            s[u, p] for u in ("attention", "mlp") for p in ("forward", "backward"))
        want = [f"{a[u] / 1e12:.0f}" for u in ("attention", "mlp", "logit")]
        assert cells == want + [f"{layer / 1e12:.0f}", f"{layer / d.peak:.0%}"]
