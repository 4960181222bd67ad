"""Uneven pipeline stages, Megatron-LM's first/last stage layers: the split follows Megatron's
rule, the replay equals the closed form where nothing contends, an even split is unchanged."""

import pytest
from conftest import one_line_error
from test_transformer_pipeline import RATE, star

from netsim import simulate
from workloads.errors import WorkloadError
from workloads.transformer.closed import closed_form
from workloads.transformer.flops import config, layer_stored_bytes
from workloads.transformer.iteration import schedule
from workloads.transformer.memory import memory_per_gpu
from workloads.transformer.stages import shard_parameters, stage_layers

#: Ten layers, no logit layer: every layer alike, so a stage's time is its layer count's.
TEN = config(10, 64, 4, 32, 0, global_batch=8)
LAYER = 24 * 32 * 64**2 + 4 * 32**2 * 64   # forward FLOPs of one layer, Narayanan's count


@pytest.mark.parametrize("args,split", [
    ((126, 16, 7, 7), (7,) + (8,) * 14 + (7,)),     # Llama 3 405B on 16 stages
    ((10, 4, 1, None), (1, 3, 3, 3)), ((10, 4, None, 4), (2, 2, 2, 4)),
    ((10, 2, 4, 6), (4, 6)), ((8, 4, None, None), (2, 2, 2, 2))])
def test_split_follows_megatrons_rule(args, split):
    assert stage_layers(*args) == split


@pytest.mark.parametrize("args,needle", [
    ((126, 16, 6, 6), "114 layers left for 14 middle pipeline stages do not split evenly"),
    ((10, 3, 5, 5), "0 layers left for 1 middle pipeline stages"),
    ((10, 2, 4, 4), "2 layers left for 0 middle pipeline stages"),
    ((10, 4, 8, 4), "first_stage_layers 8, last_stage_layers 4 exceed the model's 10 layers"),
    ((10, 1, 5, 5), "need pp >= 2"), ((10, 4, 0, None), "first_stage_layers")])
def test_a_split_megatron_refuses_is_refused_by_its_constraint(args, needle):
    with pytest.raises(WorkloadError, match=needle):
        stage_layers(*args)


@pytest.mark.parametrize("schedule_name", ["gpipe", "1f1b"])
@pytest.mark.parametrize("tp,dp,first,last", [(1, 1, 1, None), (2, 1, 1, 3), (1, 2, None, 4),
                                             (2, 2, 4, 2)])
def test_replay_is_the_closed_form_without_contention(schedule_name, tp, dp, first, last):
    kw = dict(pipeline=schedule_name, device_flops=RATE, first_stage_layers=first,
              last_stage_layers=last)
    t = schedule(TEN, tp, 4, dp, **kw)
    r = simulate(t, star(t.ranks), library="mpich")
    f = closed_form(TEN, tp, 4, dp, **kw)
    assert f["time"] == pytest.approx(r.makespan, rel=1e-12)
    assert f["time"] == pytest.approx(sum(f[k] for k in ("compute", "bubble", "tp", "pp",
                                                          "dp", "ep")), rel=1e-12)
    if schedule_name == "gpipe":
        # every stage once to fill and drain, the slowest (n layers) m - 1 times more:
        # (10 + (m - 1) n) layers' forward, recomputed forward and backward (4 x LAYER)
        n, m = max(stage_layers(10, 4, first, last)), 8 // dp
        assert r.makespan == pytest.approx((10 + (m - 1) * n) * 4 * LAYER / tp / RATE,
                                           rel=1e-12)
        assert f["compute"] == pytest.approx(m * n * 4 * LAYER / tp / RATE, rel=1e-12)


@pytest.mark.parametrize("schedule_name", ["gpipe", "1f1b"])
def test_hops_between_uneven_stages_cost_the_exact_timeline(schedule_name):
    bw, lat = 1e9, 1e-6
    kw = dict(pipeline=schedule_name, device_flops=RATE, first_stage_layers=1,
              last_stage_layers=3)
    t = schedule(TEN, pp=4, **kw)
    r = simulate(t, star(4, bw, lat), library="mpich")
    f = closed_form(TEN, pp=4, links={"pp": (2 * lat, 1 / bw)}, **kw)
    assert f["pp"] > 0
    assert f["time"] == pytest.approx(r.makespan, rel=1e-12)


def test_an_even_split_given_as_first_and_last_is_bit_identical():
    c = config(8, 64, 4, 32, 128, global_batch=8)
    links = {"pp": (1e-6, 1e-9), "dp": (1e-6, 1e-9), "tp": (1e-6, 1e-10)}
    even = closed_form(c, 2, 4, 2, device_flops=RATE, links=links)
    given = closed_form(c, 2, 4, 2, device_flops=RATE, links=links, first_stage_layers=2,
                        last_stage_layers=2)
    assert given == even
    a = schedule(c, 2, 4, 2)
    b = schedule(c, 2, 4, 2, first_stage_layers=2, last_stage_layers=2)
    assert (a.flops == b.flops).all() and (a.size == b.size).all()
    assert memory_per_gpu(c, 2, 4, 2, first_stage_layers=2) == memory_per_gpu(c, 2, 4, 2)


def test_memory_is_the_fullest_stages():
    # 1F1B, no recomputation: stage i holds min(4 - i, m) micro-batches of its layers,
    # (1, 3, 3, 3) layers: 4 x 1, 3 x 3, 2 x 3, 1 x 3 layers' activations: stage 1 holds most
    got = memory_per_gpu(TEN, pp=4, recompute="none", first_stage_layers=1)
    assert got["states"] == 16 * 3 * shard_parameters(TEN, 1)
    assert got["activations"] == 9 * layer_stored_bytes(TEN)


_T = ["scale", "transformer", "--topology", "gpu_cluster:machine=dgx_h100", "--config",
      "llama3-405b", "--tp", "8", "--pp", "16", "-P", "128", "--global-batch", "128"]


def test_cli_splits_llama3_405b_over_16_stages(capsys):
    from studies.cli.parser import main
    # under full recomputation the first stage holds 16 micro-batches' inputs of its 7
    # layers: 90 GB per GPU, more than an H100's 80 GiB; computed past the memory check
    assert main(_T + ["--first-stage-layers", "7", "--last-stage-layers", "7",
                      "--no-memory-check"]) == 0
    assert "stages of 7, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 7 layers" \
        in capsys.readouterr().out


@pytest.mark.parametrize("extra,needle", [
    ([], "126 layers do not split over 16 pipeline stages"),
    (["--first-stage-layers", "6", "--last-stage-layers", "6"],
     "114 layers left for 14 middle pipeline stages do not split evenly"),
    (["--first-stage-layers", "7", "--last-stage-layers", "7", "--pipeline", "interleaved"],
     "first/last stage layers need the 1f1b or gpipe schedule"),
    (["--first-stage-layers", "7", "--sweep"], "--sweep tries even splits only")])
def test_cli_refuses_a_bad_split_in_one_line(capsys, extra, needle):
    # a sweep tries every tp and pp itself: the given --tp 8 --pp 16 would be refused first
    argv = _T[:6] + _T[10:] if "--sweep" in extra else _T
    one_line_error(capsys, argv + extra, needle)
