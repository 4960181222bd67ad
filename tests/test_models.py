"""Named model shapes, device presets, and traces re-sized to a named model."""

import numpy as np
import pytest

import netsim
from netsim.comm.library import mpich_wire
import workloads
from topologies import devices, star
from workloads import WorkloadError, mlp
from workloads.models import (MODELS, Model, UnknownModelError, bert_large, get_model, gpt2,
                              mlp_model, resize, resnet50, vgg16)
from workloads.plan.projection import ProjectionError

# -- totals against the published ones --------------------------------------------------------

# (model, published parameters, relative tolerance, source)
PUBLISHED_PARAMS = [
    ("resnet50", 25.6e6, 0.005, "He et al. 2016"),
    ("vgg16", 138e6, 0.005, "Simonyan & Zisserman 2015, Table 2"),
    ("bert-large", 340e6, 0.02, "Devlin et al. 2019 (rounded; 335.1 M counted)"),
    ("gpt2-small", 124e6, 0.005, "openai/gpt-2 checkpoint '124M'"),
    ("gpt2-medium", 355e6, 0.005, "openai/gpt-2 checkpoint '355M'"),
    ("gpt2-large", 774e6, 0.005, "openai/gpt-2 checkpoint '774M'"),
    ("gpt2-xl", 1558e6, 0.005, "openai/gpt-2 checkpoint '1558M'"),
]


@pytest.mark.parametrize("name, published, tol, source", PUBLISHED_PARAMS)
def test_parameter_totals_match_the_published_ones(name, published, tol, source):
    assert MODELS[name].params == pytest.approx(published, rel=tol), source
    assert MODELS[name].published_params == pytest.approx(published, rel=0.02)


def test_parameter_counts_are_exactly_the_reference_implementations():
    # torchvision resnet50 / vgg16, Hugging Face BertModel (bert-large) and GPT2Model.
    assert resnet50().params == 25_557_032
    assert vgg16().params == 138_357_544
    assert bert_large().params == 335_141_888
    assert gpt2("small").params == 124_439_808
    assert gpt2("xl").params == 1_557_611_200


def test_gpt2_paper_counts_are_smaller_than_the_checkpoints():
    # Radford et al. 2019, Table 2, lists 117M and 1542M: within 7 % of the checkpoints.
    assert gpt2("small").params == pytest.approx(117e6, rel=0.07)
    assert gpt2("xl").params == pytest.approx(1542e6, rel=0.02)


def test_cnn_flops_match_the_published_multiply_adds():
    # FLOPs here are 2 per multiply-add. torchvision: ResNet-50 4.09 G, VGG-16 15.47 G
    # multiply-adds per 224x224 image; He et al. quote "3.8 x 10^9" for ResNet-50 v1 and
    # "15.3 billion" for VGG-16.
    assert resnet50().flops / 2 == pytest.approx(4.09e9, rel=0.005)
    assert vgg16().flops / 2 == pytest.approx(15.47e9, rel=0.005)
    assert resnet50().flops / 2 == pytest.approx(4.1e9, rel=0.01)   # the brief's ~4.1 G
    assert vgg16().flops / 2 == pytest.approx(15.3e9, rel=0.015)


@pytest.mark.parametrize("model, L, h, s, V", [
    (bert_large(), 24, 1024, 512, 0),
    (gpt2("small"), 12, 768, 1024, 50257),
    (gpt2("xl"), 48, 1600, 1024, 50257),
    (gpt2("small", seq_len=128), 12, 768, 128, 50257),
])
def test_transformer_flops_follow_narayanan_et_al(model, L, h, s, V):
    # Forward FLOPs per sequence: 24 s L h^2 (1 + s / 6h) + 2 s h V (Narayanan et al. 2021);
    # BERT's pooler adds 2 h^2.
    expect = 24 * s * L * h * h * (1 + s / (6 * h)) + 2 * s * h * V
    extra = 2 * h * h if model.name == "bert-large" else 0
    assert model.flops == pytest.approx(expect + extra, rel=1e-12)
    # Close to the "2 N FLOPs per token" rule (Kaplan et al. 2020), which ignores attention.
    if s >= 512:
        assert model.flops / s == pytest.approx(2 * model.params, rel=0.15)


def test_units_chain_and_activations():
    r = resnet50()
    assert [l.name for l in r.layers][:3] == ["stem", "conv2_1", "conv2_2"]
    assert r.layers[0].activations == 56 * 56 * 64 and r.layers[-2].activations == 7 * 7 * 2048
    v = vgg16()
    assert v.layers[1].activations == 112 * 112 * 64 and v.layers[-1].activations == 1000
    for m in MODELS.values():
        assert all(l.params >= 0 and l.flops >= 0 and l.activations > 0 for l in m.layers)


def test_mlp_model_agrees_with_workloads_mlp():
    m = mlp_model((64, 16, 10))
    assert m.params == mlp.num_params((64, 16, 10))
    assert m.flops == mlp.forward_flops((64, 16, 10), 1).sum()


def test_get_model_names_and_errors():
    assert get_model("ResNet-50") is MODELS["resnet50"]
    assert get_model("GPT2_XL") is MODELS["gpt2-xl"]
    m = mlp_model((4, 3))
    assert get_model(m) is m
    with pytest.raises(UnknownModelError, match="unknown model 'alexnet'; known models: "
                                                "resnet50, vgg16, bert-large, gpt2-small"):
        get_model("alexnet")
    assert issubclass(UnknownModelError, WorkloadError)
    with pytest.raises(UnknownModelError, match="known sizes: small, medium, large, xl"):
        gpt2("huge")
    with pytest.raises(WorkloadError, match="seq_len"):
        bert_large(seq_len=0)
    assert isinstance(MODELS["vgg16"], Model)
    with pytest.raises(TypeError):
        MODELS["mine"] = m   # read-only


# -- devices -------------------------------------------------------------------------------------

def test_device_presets():
    assert devices.device_flops("V100") == workloads.V100_FP32_FLOPS == 15.7e12
    assert devices.device_flops("a100") == 19.5e12
    assert devices.device_flops("H100") == 67e12
    assert devices.device_flops("H100", "fp16") == pytest.approx(1979e12 / 2, rel=1e-3)
    assert devices.device_flops("A100", "tf32") == 156e12
    assert devices.device_flops("V100", "fp16") == 125e12
    for d in devices.DEVICES.values():
        assert d.fp32 > 0 and (d.fp16 is None or d.fp16 > d.fp32)


def test_device_errors():
    with pytest.raises(devices.DeviceError, match="known devices: V100, V100-PCIe, A100"):
        devices.device_flops("K80")
    with pytest.raises(devices.DeviceError, match="V100 has no tf32.*fp32, fp16"):
        devices.device_flops("V100", "tf32")
    with pytest.raises(devices.DeviceError, match="known precisions: fp32, tf32, fp16"):
        devices.device_flops("A100", "int8")
    assert issubclass(devices.DeviceError, netsim.errors.TopologyError)


# -- resize ------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def runs():
    return {name: workloads.record(name, workers=4, epochs=2).trace
            for name in ("allreduce", "ps-sync", "pf", "dgc", "ringtmp", "slimdp", "single")}


def test_resize_allreduce_bytes_and_flops(runs):
    t = runs["allreduce"]
    m = resnet50()
    r = resize(t, m, iterations=2)
    # One allreduce op of 4 n bytes per iteration; MPICH's ring moves 2 (P - 1) of it.
    assert r.size[r.is_collective].tolist() == [4 * m.params] * 2
    assert mpich_wire(r).total_bytes == pytest.approx(2 * 2 * 3 * 4 * m.params)
    fwd = r.flops[(r.tag == r.tags.index("forward")) & (r.rank == 0) & (r.iteration == 0)]
    # One forward op per unit, each its own FLOPs for batch 8 per worker.
    assert fwd.tolist() == (m.unit_flops * 8).tolist()
    assert fwd.sum() == pytest.approx(m.flops * 8, rel=1e-12)
    bwd = r.flops[(r.tag == r.tags.index("backward")) & (r.rank == 0) & (r.iteration == 0)]
    assert len(bwd) == len(m.layers) and bwd.sum() == pytest.approx(2 * 8 * m.flops)
    md = r.metadata
    assert md["model"] == "resnet50" and md["model_params"] == m.params and "layers" not in md


def test_resize_ps_sync_moves_the_model(runs):
    r = resize(runs["ps-sync"], "vgg16", iterations=1, workers=8, servers=2)
    assert r.ranks == 10 and r.num_messages == 2 * 8 * 2
    assert r.total_bytes == pytest.approx(2 * 8 * 4 * vgg16().params)


def test_resize_keeps_measured_rates(runs):
    # PF and Slim-DP: bytes per parameter of every message carry over.
    for name in ("pf", "slimdp"):
        t = runs[name]
        n0 = mlp.num_params(t.metadata["layers"])
        r = resize(t, "gpt2-small")
        assert r.total_bytes / gpt2("small").params == pytest.approx(t.total_bytes / n0,
                                                                    rel=1e-9), name


def test_resize_dgc_applies_the_stage_density_per_unit(runs):
    from workloads.paradigms.dgc import values_per_layer, warmup_sparsity

    m = resnet50()
    r = resize(runs["dgc"], m, iterations=20)
    P, L = 4, len(m.layers)
    assert r.num_messages == 20 * P * (P - 1) * L
    sizes = [l.params for l in m.layers]
    for it in (0, 4, 19):      # 4 steps per Iris epoch at P = 4
        msg = r.is_message & (r.iteration == it)
        k = values_per_layer(sizes, warmup_sparsity(it // 4))
        assert r.size[msg].sum() == P * (P - 1) * 8 * sum(k)
    # After the warm-up, 0.1 % of ResNet-50's values: about 0.2 MB per message set.
    assert sum(values_per_layer(sizes, 0.999)) == pytest.approx(0.001 * m.params, rel=0.01)


def test_resize_ringtmp_sends_the_named_models_activations(runs):
    m = resnet50()
    r = resize(runs["ringtmp"], m, iterations=1)
    owned = np.array_split(np.arange(len(m.layers)), 4)
    acts = [m.layers[o[-1]].activations for o in owned[:-1]]
    assert r.num_messages == 6
    assert r.total_bytes == pytest.approx(2 * 32 * 4 * sum(acts))   # ring batch 4 x 8
    with pytest.raises(ProjectionError, match="resnet50 \\(18 layers\\) over 19 ring nodes"):
        resize(runs["ringtmp"], m, workers=19)


def test_resize_single_and_device(runs):
    t = runs["single"]
    dev = devices.device_flops("A100")
    r = resize(t, "bert-large", iterations=1, device_flops=dev)
    fwd = r.flops[r.tag == r.tags.index("forward")].sum()
    assert fwd == pytest.approx(4 * 8 * bert_large().flops)     # union batch of 4 x 8
    res = netsim.simulate(r, star(1))
    assert res.makespan == pytest.approx((3 * fwd + 4 * bert_large().params) / dev, rel=1e-9)


def test_resize_errors(runs):
    with pytest.raises(UnknownModelError, match="known models"):
        resize(runs["allreduce"], "alexnet")
    with pytest.raises(ProjectionError, match="already a projection"):
        resize(resize(runs["allreduce"], "vgg16", iterations=1), "vgg16")


def _critical_path(trace, alpha, beta):
    """Longest dependency chain, each message at its uncontended Hockney time alpha + n beta."""
    secs = trace.compute_seconds()
    finish = np.zeros(trace.num_ops)
    for op in range(trace.num_ops):
        deps = trace.deps(op)
        assert (deps < op).all()  # recorded traces list ops in dependency order
        ready = finish[deps].max() if len(deps) else 0.0
        finish[op] = ready + (alpha + trace.size[op] * beta if trace.kind[op] == 1 else secs[op])
    return finish.max()


def test_resized_traces_simulate(runs):
    from netsim.costmodel import alpha_beta, contention_bound
    from studies.scaling.closed_forms import closed_form

    v100 = devices.device_flops("V100")
    for name, t in runs.items():
        r = resize(t, "resnet50", workers=8, iterations=2, device_flops=v100)
        G = star(r.ranks)
        res = netsim.simulate(r, G)
        if name in ("ps-sync", "allreduce"):
            # One shared server link / contention-free ring on a star: the closed form is exact.
            per_iteration = closed_form(r, G)["time"]
            assert res.makespan == pytest.approx(r.num_iterations * per_iteration, rel=1e-9), name
        # Lower bounds of any schedule (rel 1e-9: the same sums in another order). On a star
        # every pair's path is alike, so alpha_beta's alpha + n beta is each message's time.
        alpha, beta = alpha_beta(G, ranks=r.ranks) if r.ranks > 1 else (0.0, 0.0)
        assert res.makespan * (1 + 1e-9) >= contention_bound(r, G)["seconds"], name
        assert res.makespan * (1 + 1e-9) >= _critical_path(r, alpha, beta), name
