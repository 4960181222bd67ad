"""Memory per GPU of TP x PP x DP training: ZeRO's 16 bytes per parameter and Korthikanti et
al.'s activation counts, and the layout sweep that leaves out what does not fit."""

import json

import pytest

from studies.cli.parser import main
from workloads.transformer.flops import config, get_config, layer_stored_bytes
from workloads.transformer.memory import memory_per_gpu


def test_states_are_16_bytes_per_parameter_of_the_first_stage_shard():
    c = config(8, 64, 4, 32, 100, global_batch=8)
    m = memory_per_gpu(c, tp=2, pp=4, dp=1, recompute="none")
    # 2 layers' shards (split weights halved, 6 h whole) + the word embedding's half and
    # the whole position embedding
    params = 2 * ((12 * 64**2 + 7 * 64) / 2 + 6 * 64) + (100 / 2 + 32) * 64
    assert m["states"] == 16 * params


def test_activations_follow_korthikanti_eq2_and_eq4():
    c = config(8, 64, 4, 32, 0, micro_batch=2, global_batch=16)
    s, b, h, a, t = 32, 2, 64, 4, 4
    eq2 = s * b * h * (10 + 24 / t + 5 * a * s / (h * t))
    eq4 = s * b * h * (34 / t + 5 * a * s / (h * t))
    assert layer_stored_bytes(c, t) == pytest.approx(eq2)
    assert layer_stored_bytes(c, t, True) == pytest.approx(eq4)
    # 1F1B without recomputation: the first stage holds p micro-batches of L/p layers
    m = memory_per_gpu(c, tp=t, pp=4, dp=1, recompute="none")
    assert m["activations"] == pytest.approx(8 * layer_stored_bytes(c, t))
    # GPipe holds all m = 8 micro-batches of its 2 layers
    g = memory_per_gpu(c, tp=t, pp=4, dp=1, pipeline="gpipe", recompute="none")
    assert g["activations"] == pytest.approx(8 * 2 * layer_stored_bytes(c, t))
    # full recomputation: the 2 s b h input of each held layer, plus one layer being recomputed
    f = memory_per_gpu(c, tp=t, pp=4, dp=1)
    assert f["activations"] == pytest.approx(8 * 2 * s * b * h + layer_stored_bytes(c, t))


def test_sweep_leaves_out_layouts_that_do_not_fit(capsys, tmp_path):
    argv = ["scale", "transformer", "--config", "gpt3-13b", "--topology",
            "gpu_cluster:machine=dgx_h100", "-P", "64", "--sweep", "--efficiency", "0.5",
            "--json", "--png", str(tmp_path / "s.png")]
    assert main(argv) == 0
    every = json.loads(capsys.readouterr().out)["records"]
    assert main(argv + ["--memory", "80GB"]) == 0
    fit = json.loads(capsys.readouterr().out)["records"]
    assert all(r["memory"] <= 80e9 for r in fit)
    assert [r for r in every if r["memory"] <= 80e9] == fit and len(fit) < len(every)
    # 13B parameters at 16 bytes each cannot sit on one GPU: pure data parallelism is out
    assert 16 * 13e9 > 80e9 and not any(r["tp"] == r["pp"] == 1 for r in fit)


def test_zero_stages_reproduce_zero_figure_1():
    # Rajbhandari et al. SC'20 Figure 1: a 7.5B-parameter model on 64 GPUs holds 120, 31.4,
    # 16.6 and 1.9 GB of model states per GPU under DDP, P_os, P_os+g and P_os+g+p
    from workloads.transformer.memory import zero_state_bytes
    got = [round(7.5e9 * zero_state_bytes(z, 64) / 1e9, 1) for z in (0, 1, 2, 3)]
    assert got == [120.0, 31.4, 16.6, 1.9]
