"""A layout that needs more memory per GPU than the GPU has is refused in one line, its need
split into weights, gradients, optimizer state and activations, each counted here by hand."""

import json

import pytest
from conftest import one_line_error

from studies.cli.parser import main
from studies.scaling.fit import OutOfMemory, capacity_of, check_memory, need
from topologies import dgx_h100
from topologies.devices import gpu_memory
from workloads.transformer.flops import config
from workloads.transformer.layout import Layout
from workloads.transformer.memory import state_parts, zero_state_bytes

GPT3_175B_PARAMETERS = 96 * (12 * 12288**2 + 13 * 12288) + 51200 * 12288 + 2048 * 12288


def test_need_by_part_counted_by_hand():
    # 4 layers, h 64, 4 heads, s 32, V 100 over tp 2, pp 2: the first stage holds 2 layer
    # shards ((12 h^2 + 7 h) / 2 + 6 h each) and the word embedding's half plus the positions
    c = config(4, 64, 4, 32, 100, micro_batch=2, global_batch=16)
    h, s, b, a, t = 64, 32, 2, 4, 2
    params = 2 * ((12 * h * h + 7 * h) // 2 + 6 * h) + (100 // 2 + 32) * h
    n = need(c, Layout(2, 2, 2), recompute="none")
    assert (n["weights"], n["gradients"], n["optimizer"]) == (2 * params, 2 * params,
                                                              12 * params)
    # 1F1B: the first stage holds p = 2 micro-batches of its 2 layers, Korthikanti's Eq. 2
    layer = s * b * h * (10 + 24 / t + 5 * a * s / (h * t))
    assert n["activations"] == pytest.approx(2 * 2 * layer, rel=1e-12)
    assert n["total"] == pytest.approx(16 * params + 4 * layer, rel=1e-12)
    # ZeRO-1 over dp 2: the optimizer state halves, the rest stays
    z = need(c, Layout(2, 2, 2), recompute="none", zero=1)
    assert (z["weights"], z["gradients"], z["optimizer"]) == (2 * params, 2 * params,
                                                              6 * params)


@pytest.mark.parametrize("zero", [0, 1, 2, 3])
def test_parts_add_up_to_zeros_bytes_per_parameter(zero):
    assert sum(state_parts(zero, 8)) == pytest.approx(zero_state_bytes(zero, 8), rel=1e-15)


def test_check_refuses_just_above_and_passes_at_the_need():
    c = config(4, 64, 4, 32, 100, micro_batch=2, global_batch=16)
    total = need(c, Layout(2, 2, 2))["total"]
    assert check_memory(c, Layout(2, 2, 2), total, "a test GPU")["total"] == total
    with pytest.raises(OutOfMemory, match="needs .* per GPU .* and a test GPU holds"):
        check_memory(c, Layout(2, 2, 2), total * (1 - 1e-9), "a test GPU")


def test_gpu_memory_from_the_topology_and_the_device():
    assert capacity_of(dgx_h100())[0] == 80 * 2**30 == gpu_memory("H100")
    assert capacity_of(dgx_h100(), "H200")[0] == 141 * 2**30


_175B = ["scale", "transformer", "--config", "gpt3-175b", "--tp", "1", "--pp", "1", "-P", "8",
         "--topology", "gpu_cluster:machine=dgx_h100", "--global-batch", "8"]


def test_gpt3_175b_on_one_gpu_per_replica_is_one_line(capsys):
    # every parameter on each GPU: 2 + 2 + 12 bytes of each of 174,615,822,336
    assert GPT3_175B_PARAMETERS == 174_615_822_336
    err = one_line_error(capsys, _175B, "at P = 8 (tp 1 x pp 1 x dp 8)",
                         f"weights {2 * GPT3_175B_PARAMETERS / 1e9:.0f} GB",
                         f"gradients {2 * GPT3_175B_PARAMETERS / 1e9:.0f} GB",
                         f"optimizer state {12 * GPT3_175B_PARAMETERS / 1e12:.1f} TB",
                         "an H100 (80 GiB, its datasheet)", "--no-memory-check")
    assert "349 GB" in err and "2.1 TB" in err


def test_going_on_anyway_or_with_more_memory(capsys):
    assert main(_175B + ["--no-memory-check", "--json"]) == 0
    rec = json.loads(capsys.readouterr().out)["records"][0]
    assert rec["memory"] > 16 * GPT3_175B_PARAMETERS > 80 * 2**30
    assert main(_175B + ["--memory", "4TB", "-q"]) == 0
    assert "not checked" not in capsys.readouterr().out


def test_the_device_sets_the_memory(capsys):
    # gpt3-6.7b on one GPU per replica: 16 B x 6.66e9 parameters and 1.5 GB of activations,
    # 108 GB: more than an H100's 80 GiB, less than an H200's 141 GiB
    argv = ["scale", "transformer", "--config", "gpt3-6.7b", "--tp", "1", "-P", "8",
            "--topology", "gpu_cluster:machine=dgx_h100", "--global-batch", "64", "-q"]
    one_line_error(capsys, argv, "and an H100 (80 GiB, its datasheet) holds")
    assert main(argv + ["--device", "H200"]) == 0
    capsys.readouterr()
