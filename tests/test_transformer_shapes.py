"""Today's model shapes: MLP width and SwiGLU, grouped-query attention, untied embeddings, no
biases, RMSNorm and RoPE, each checked against counts worked by hand from the matrix shapes."""

import re

import pytest
from conftest import one_line_error

from workloads.errors import WorkloadError
from workloads.transformer.flops import (attention_forward_flops, attention_stored_bytes, config,
                                         get_config, iteration_flops, layer_parameters,
                                         mlp_forward_flops, mlp_stored_bytes, parameters)
from workloads.transformer.iteration import measure, schedule
from workloads.transformer.memory import memory_per_gpu
from workloads.transformer.stages import check_fit, shard_parameters
from workloads.transformer.layout import Layout

#: Llama 3 8B's public shape (Hugging Face meta-llama/Llama-3.1-8B config.json): no biases,
#: RMSNorm, RoPE, untied logit layer.
LLAMA8 = dict(layers=32, hidden=4096, heads=32, seq=8192, vocab=128256, ffn_hidden=14336,
              mlp="swiglu", kv_heads=8, bias=False, norm="rmsnorm", position="rope", tied=False)


def test_llama3_8b_has_8_03_billion_parameters_from_its_matrix_shapes():
    h, kv_width, f, V = 4096, 8 * 128, 14336, 128256
    q, k, v, o = h * h, h * kv_width, h * kv_width, h * h
    gate, up, down = h * f, h * f, f * h
    norms = 2 * h                                    # two RMSNorm gains per layer
    layer = q + k + v + o + gate + up + down + norms
    assert layer == 218_112_000
    model = 32 * layer + V * h + h * V               # embedding and the untied logit layer
    c = config(**LLAMA8)
    assert layer_parameters(c) == layer
    assert parameters(c) == model                    # Eq. 2 leaves the final norm out
    assert model + h == 8_030_261_248                # with it: Meta's 8.03 B
    assert round(parameters(c) / 1e9, 2) == 8.03
    assert get_config("llama3-8b") == config(**LLAMA8, precision="bf16")


def test_gqa_and_swiglu_flops_are_the_gemms_of_their_matrices():
    b, s, h, a, k, f = 2, 4, 8, 4, 2, 24
    c = config(1, h, a, s, 0, micro_batch=b, global_batch=b, ffn_hidden=f, mlp="swiglu", kv_heads=k)
    d = h // a
    qkv = 2 * b * s * h * (h + 2 * k * d)            # x [b s, h] times W [h, h + 2 k d]
    proj = 2 * b * s * h * h
    scores = values = 2 * b * s * s * h              # a query heads of d: a * 2 s^2 d each
    assert attention_forward_flops(c) == qkv + proj + scores + values == 2048 + 1024 + 512 + 512
    assert mlp_forward_flops(c) == 3 * 2 * b * s * h * f == 9216
    gelu = c._replace(mlp="gelu")
    assert mlp_forward_flops(gelu) == 2 * 2 * b * s * h * f


def test_the_defaults_are_gpt3s_shape_written_out():
    c = get_config("gpt3-13b", global_batch=64)
    explicit = c._replace(ffn_hidden=4 * c.hidden, kv_heads=c.heads)
    for fn in (attention_forward_flops, mlp_forward_flops, layer_parameters, parameters,
               attention_stored_bytes, mlp_stored_bytes):
        assert fn(explicit) == fn(c)
    assert iteration_flops(explicit) == iteration_flops(c)


@pytest.mark.parametrize("recompute", ["full", "none"])
def test_trace_flops_add_up_to_the_generalised_eq3(recompute):
    c = config(4, 64, 4, 32, 128, micro_batch=2, global_batch=16, ffn_hidden=96, mlp="swiglu",
               kv_heads=2)
    t = schedule(c, 2, 2, 2, recompute=recompute)
    # per layer and micro-batch, forward: QKV 2bsh(h + 2kd) + proj 2bsh^2 + 4bs^2h + 3 x 2bshf
    b, s, h = 2, 32, 64
    layer = 2 * b * s * h * (h + 2 * 2 * 16) + 2 * b * s * h * h + 4 * b * s * s * h \
        + 3 * 2 * b * s * h * 96
    logit = 2 * b * s * h * 128
    passes = 4 if recompute == "full" else 3
    assert t.flops.sum() == pytest.approx(8 * (4 * passes * layer + 3 * logit), rel=1e-12)
    assert iteration_flops(c, recompute) == pytest.approx(t.flops.sum(), rel=1e-12)


def test_stored_bytes_change_only_in_k_v_and_the_mlp_tensors():
    b, s, h, a, e = 2, 32, 64, 4, 2
    c = config(1, h, a, s, 0, micro_batch=b, global_batch=b, ffn_hidden=96, mlp="swiglu", kv_heads=1)
    kd = 16                                          # one key/value head of h / a
    whole = s * b * h * (2 * e + 1)                  # norm and QKV inputs, dropout mask
    q, k, v, proj_in = s * b * h * e, s * b * kd * e, s * b * kd * e, s * b * h * e
    scores = a * s * s * b * (2 * e + 1)             # softmax out, dropout out, mask
    assert attention_stored_bytes(c) == whole + q + k + v + proj_in + scores
    assert attention_stored_bytes(c, 2) == whole + (q + k + v + proj_in + scores) / 2
    swiglu_in, down_in = s * b * 2 * 96 * e, s * b * 96 * e
    assert mlp_stored_bytes(c) == whole + swiglu_in + down_in
    assert mlp_stored_bytes(c, 4, True) == (whole + swiglu_in + down_in) / 4


def test_tensor_parallel_shards_split_kv_heads_and_the_mlp_width():
    h, f = 64, 96
    c = config(1, h, 4, 8, 0, ffn_hidden=f, mlp="swiglu", kv_heads=2)
    qkv = h * (h + 2 * 2 * 16) + (h + 2 * 2 * 16)    # column-parallel weight and bias
    mlp = 3 * h * f + 2 * f                          # gate and up biases split, down's whole
    split = qkv + h * h + mlp
    whole = 2 * 2 * h + 2 * h                        # two LayerNorms, two row-parallel biases
    assert shard_parameters(c, 2) == split // 2 + whole
    assert shard_parameters(c, 1) == layer_parameters(c) == split + whole


@pytest.mark.parametrize("changes,tp,needle", [
    ({"kv_heads": 2}, 4, "2 key/value heads (kv_heads) do not split over tp 4"),
    ({"ffn_hidden": 90}, 4, "the MLP's width ffn_hidden 90 does not split over tp 4")])
def test_tensor_parallelism_needs_kv_heads_and_ffn_to_split(changes, tp, needle):
    c = config(2, 64, 4, 8, 0, **changes)
    with pytest.raises(WorkloadError, match=re.escape(needle)):
        check_fit(c, Layout(tp, 1, 1))


def test_tensor_parallel_traffic_stays_b_s_h_per_block():
    base = config(2, 64, 4, 32, 0, global_batch=4)
    gqa = base._replace(ffn_hidden=96, mlp="swiglu", kv_heads=2)
    a, b = measure(schedule(base, tp=2)), measure(schedule(gqa, tp=2))
    assert a["tp"] == b["tp"] > 0 and a["tp_calls"] == b["tp_calls"]


def test_untied_logit_layer_has_its_own_gradient_and_state_on_one_stage():
    c = config(2, 64, 4, 32, 128, global_batch=4)
    untied = c._replace(tied=False)
    m, u = memory_per_gpu(c, tp=2, pp=1), memory_per_gpu(untied, tp=2, pp=1)
    assert u["states"] - m["states"] == 16 * 128 * 64 / 2
    # pp > 1: the last stage holds the logit layer's shard either way, the first stage neither
    assert memory_per_gpu(untied, pp=2) == memory_per_gpu(c, pp=2)
    assert measure(schedule(untied, dp=2))["dp"] - measure(schedule(c, dp=2))["dp"] \
        == 128 * 64 * 2         # V h more fp16 gradients in the buckets


@pytest.mark.parametrize("spec,needle", [
    ("gpt3-1.3b:kv_heads=3", "heads 16 is not a multiple of kv_heads 3"),
    ("gpt3-1.3b:kv_heads=8,ffn_hidden=5004", "ffn_hidden 5004 does not split over tp 8"),
    ("gpt3-1.3b:kv_heads=4", "4 key/value heads (kv_heads) do not split over tp 8"),
    ("gpt3-1.3b:mlp=relu", "unknown mlp 'relu'; known: gelu, swiglu")])
def test_cli_refuses_bad_shapes_in_one_line(capsys, spec, needle):
    one_line_error(capsys, ["scale", "transformer", "--topology", "gpu_cluster:machine=dgx_h100",
                            "-P", "8", "--config", spec], needle)


def _llama_parameters(layers, h, heads, f, V=128256, kv=8):
    """Llama's count from its matrices: q, o (h x h), k, v (h x kv d), three h x f, two RMSNorm
    gains per layer, the embedding, the untied logit layer and the final RMSNorm."""
    d = h // heads
    layer = 2 * h * h + 2 * h * kv * d + 3 * h * f + 2 * h
    return layers * layer + 2 * V * h + h


@pytest.mark.parametrize("name,shape,billions", [
    ("llama3-8b", (32, 4096, 32, 14336), 8.03), ("llama3-70b", (80, 8192, 64, 28672), 70.55),
    ("llama3-405b", (126, 16384, 128, 53248), 405.85)])
def test_named_llama3_models_have_their_public_shapes_and_sizes(name, shape, billions):
    c = get_config(name)
    assert (c.layers, c.hidden, c.heads, c.ffn) == shape
    assert (c.kv, c.vocab, c.seq, c.mlp, c.precision) == (8, 128256, 8192, "swiglu", "bf16")
    assert not c.bias and not c.tied and c.norm == "rmsnorm" and c.position == "rope"
    by_hand = _llama_parameters(*shape)
    assert parameters(c) + c.hidden == by_hand       # Eq. 2 leaves the final norm out
    assert round(by_hand / 1e9, 2) == billions       # Meta's 8B, 70B and 405B


@pytest.mark.parametrize("tp,pp,dp", [(1, 1, 1), (2, 2, 2), (1, 4, 1)])
def test_selective_recomputation_runs_the_attention_core_again(tp, pp, dp):
    from netsim import simulate
    from test_transformer_pipeline import RATE, star
    from workloads.transformer.closed import closed_form
    c = config(4, 64, 4, 32, 0, global_batch=8, ffn_hidden=96, mlp="swiglu", kv_heads=2)
    b, s, h, m = 1, 32, 64, 8 // dp
    core = 2 * b * s * s * h + 2 * b * s * s * h     # Q K^T and scores x V, a heads of d each
    t = schedule(c, tp, pp, dp, recompute="selective", device_flops=RATE)
    none = schedule(c, tp, pp, dp, recompute="none")
    assert t.flops.sum() - none.flops.sum() == pytest.approx(8 * 4 * core, rel=1e-12)
    assert iteration_flops(c, "selective") == pytest.approx(t.flops.sum(), rel=1e-12)
    r = simulate(t, star(t.ranks), library="mpich")
    f = closed_form(c, tp, pp, dp, device_flops=RATE, recompute="selective")
    assert f["time"] == pytest.approx(r.makespan, rel=1e-12)
    # no collective of its own: the same tensor-parallel traffic as without recomputation
    assert measure(t)["tp"] == measure(none)["tp"]
    if pp == 1:   # one stage: the layers' forward, backward and cores back to back
        layer = attention_forward_flops(c) + mlp_forward_flops(c)
        assert r.makespan == pytest.approx(m * 4 * (3 * layer + core) / tp / RATE, rel=1e-12)


def test_selective_recomputation_stores_all_but_the_attention_core():
    c = config(4, 64, 4, 32, 0, global_batch=8)
    b, s, h, a = 1, 32, 64, 4
    # Korthikanti Eq. 6 with sequence parallelism: 34 s b h / t; Eq. 2 less 5 a s^2 b / t
    assert memory_per_gpu(c, 2, recompute="selective", sequence_parallel=True)["activations"] \
        == 4 * 34 * s * b * h / 2
    assert memory_per_gpu(c, 2, recompute="none")["activations"] \
        - memory_per_gpu(c, 2, recompute="selective")["activations"] == 4 * 5 * a * s * s * b / 2
