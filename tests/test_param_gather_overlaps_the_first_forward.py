"""ZeRO-1's parameter allgather under the next forward, bucket by bucket (Megatron-LM's
--overlap-param-gather), against the allgather after the reduce-scatters.

Worked by hand: GPT with h = 1024, 4 layers, vocabulary 1000, sequence 256 on dp = 2 replicas,
one bucket per gradient source (bucket_bytes = 1). Forward order of the buckets: the
embedding (V h + s h parameters), then each layer (12 h^2 + 13 h). The first layer's block
opens the embedding's and layer 0's buckets, so it waits for both allgathers, one after the
other; with gathers far shorter than a layer's forward every later bucket's allgather ends
before the compute reaches it. So the overlapped iteration is the other's minus the allgather
of every parameter plus the two first buckets' allgathers, each a ring allgather of its bf16
bytes: (d - 1)(alpha + n beta / d) (Thakur et al. 2005).
"""

import pytest

from studies.scaling.transformer import point
from topologies import dgx_h100, gpu_cluster
from workloads.errors import WorkloadError
from workloads.transformer.closed import closed_form
from workloads.transformer.flops import config, get_config
from workloads.transformer.iteration import schedule
from workloads.transformer.layout import layout

H, V, S = 1024, 1000, 256
ALPHA, BETA = 1e-6, 1e-12


def _ring_allgather(params, d=2):
    return (d - 1) * (ALPHA + 2 * params * BETA / d)


def test_only_the_first_buckets_gathers_are_exposed():
    c = config(4, H, 16, S, V, global_batch=8, precision="bf16")
    kw = dict(tp=1, pp=1, dp=2, device_flops=1e12, links={"dp": (ALPHA, BETA)}, zero=1,
              bucket_bytes=1)
    after = closed_form(c, **kw)
    over = closed_form(c, param_gather="overlap", **kw)
    layer, embedding = 12 * H * H + 13 * H, V * H + S * H
    every = embedding + 4 * layer
    expected = (after["time"] - _ring_allgather(every) + _ring_allgather(embedding)
                + _ring_allgather(layer))
    assert over["time"] == pytest.approx(expected, rel=1e-12)
    assert over["dp"] < after["dp"]


@pytest.mark.parametrize("tp,dp,G,kw", [
    (8, 2, lambda: gpu_cluster("dgx_h100", 2), {}),
    (1, 8, dgx_h100, {}),
    (8, 2, lambda: gpu_cluster("dgx_h100", 2), dict(tp_overlap=True, sequence_parallel=True)),
])
def test_closed_form_is_the_replay_without_contention(tp, dp, G, kw):
    c = get_config("gpt3-1.3b", global_batch=32)
    r = point(c, layout(tp, 1, dp), G(), 0.5, simulate=True, zero=1, param_gather="overlap",
              **kw)
    assert r["time"] == pytest.approx(r["simulated"], rel=1e-6)
    assert r["why"] == "none: every call and hop as alone"


@pytest.mark.parametrize("kw,match", [(dict(zero=0), "ZeRO-1 or ZeRO-2"),
                                      (dict(zero=1, param_gather="early"), "unknown"),
                                      (dict(zero=1, pp=2, pipeline="interleaved", chunks=2),
                                       "chunks"),
                                      (dict(zero=1, pp=2, first_stage_layers=1), "uneven")])
def test_what_is_not_modelled_is_refused(kw, match):
    c = config(4, 64, 4, 32, 100, global_batch=8)
    args = {"dp": 2, "param_gather": "overlap", **kw}
    for f in (schedule, closed_form):
        with pytest.raises(WorkloadError, match=match):
            f(c, **args)
