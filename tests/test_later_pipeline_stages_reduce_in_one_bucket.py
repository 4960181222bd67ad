"""Megatron-Core's DDP buckets only the first pipeline stage's gradients; every later stage
reduces its gradients in one bucket after its last backward (``stage_buckets="first"``)."""

import pytest

from studies.scaling.transformer import point
from topologies import dgx_h100
from workloads.errors import WorkloadError
from workloads.transformer.closed import closed_form
from workloads.transformer.flops import config, get_config
from workloads.transformer.iteration import measure, schedule
from workloads.transformer.layout import layout


def test_the_later_stage_sends_the_same_bytes_in_one_call_per_replica_group():
    # 4 layers on 2 stages, one bucket per gradient source: stage 0 holds layers 0-1, stage 1
    # layers 2-3 (no vocabulary: no embedding or logit gradients), so 2 + 2 calls become 2 + 1
    c = config(4, 64, 4, 32, 0, global_batch=4)
    every, first = (measure(schedule(c, pp=2, dp=2, bucket_bytes=1, stage_buckets=s))
                    for s in ("every", "first"))
    assert (every["dp_calls"], first["dp_calls"]) == (4, 3)
    assert first["dp"] == every["dp"] == 4 * (12 * 64 ** 2 + 13 * 64) * 2   # Narayanan Eq. 2


@pytest.mark.parametrize("gb", [8, 32])
def test_closed_form_is_the_replay_without_contention(gb):
    # 4 of gpt3-1.3b's 24 layers on the first stage, 20 on the last: the last stage's one
    # allreduce of 20 layers' gradients outlasts the first stage's drain, so it is exposed
    c = get_config("gpt3-1.3b", global_batch=gb)
    kw = dict(simulate=True, recompute="none", first_stage_layers=4)
    every = point(c, layout(1, 2, 4), dgx_h100(), 0.5, **kw)
    first = point(c, layout(1, 2, 4), dgx_h100(), 0.5, stage_buckets="first", **kw)
    assert first["time"] == pytest.approx(first["simulated"], rel=1e-9)
    assert first["why"] == "none: every call and hop as alone"
    # one bucket leaves when its last gradient is ready, as the last small one did, with more
    # bytes: never earlier
    assert first["dp_comm"] > every["dp_comm"]


def test_one_stage_is_the_first_stage():
    c = config(4, 64, 4, 32, 0, global_batch=4)
    kw = dict(dp=2, device_flops=1e12, bucket_bytes=1, links={"dp": (1e-6, 1e-9)})
    assert closed_form(c, stage_buckets="first", **kw) == closed_form(c, **kw)


@pytest.mark.parametrize("kw,match", [(dict(stage_buckets="last"), "unknown stage_buckets"),
                                      (dict(stage_buckets="first", pipeline="interleaved",
                                            chunks=2), "chunks per stage is not modelled")])
def test_what_is_not_modelled_is_refused(kw, match):
    c = config(4, 64, 4, 32, 0, global_batch=8)
    for f in (schedule, closed_form):
        with pytest.raises(WorkloadError, match=match):
            f(c, pp=2, dp=2, **kw)
