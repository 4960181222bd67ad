"""Tensor-parallel collectives beside the compute (Megatron-LM's --tp-comm-overlap).

Under the overlap a block takes max(compute, allgather + reduce-scatter) instead of their sum:
with compute far longer than the collectives the iteration is the compute alone (the links of
the tensor-parallel group cost nothing), with compute far shorter it is the collectives alone;
and the closed form equals the replay where no two calls share a link.
"""

import pytest

from conftest import one_line_error
from studies.scaling.transformer import point
from topologies import dgx_h100, gpu_cluster
from workloads.errors import WorkloadError
from workloads.transformer.closed import closed_form
from workloads.transformer.flops import config, get_config
from workloads.transformer.iteration import schedule
from workloads.transformer.layout import layout

C = get_config("gpt3-1.3b", global_batch=32)
TP = (2e-6, 1 / 100e9)   # the tensor-parallel group's alpha and beta


@pytest.mark.parametrize("efficiency", [0.5, 0.02])       # collectives longer / shorter
@pytest.mark.parametrize("kw", [{}, dict(recompute="none"), dict(recompute="selective"),
                                dict(compute="gemm")])
def test_closed_form_is_the_replay_in_one_machine(efficiency, kw):
    r = point(C, layout(8, 1, 1), dgx_h100(), efficiency, simulate=True,
              sequence_parallel=True, tp_overlap=True, **kw)
    assert r["time"] == pytest.approx(r["simulated"], rel=1e-6)


def test_closed_form_is_the_replay_with_a_pipeline_across_machines():
    r = point(C, layout(8, 2, 1), gpu_cluster("dgx_h100", 2), 0.5, simulate=True,
              sequence_parallel=True, tp_overlap=True)
    assert r["time"] == pytest.approx(r["simulated"], rel=1e-6)
    plain = point(C, layout(8, 2, 1), gpu_cluster("dgx_h100", 2), 0.5, sequence_parallel=True)
    assert r["time"] < plain["time"] and r["tp_comm"] < plain["tp_comm"]


def _time(F, tp_links, overlap, **kw):
    c = config(4, 1024, 16, 256, 1000, global_batch=4)
    return closed_form(c, tp=4, pp=2, device_flops=F, links={"tp": tp_links},
                       sequence_parallel=True, tp_overlap=overlap, **kw)["time"]


@pytest.mark.parametrize("recompute", ["full", "none", "selective"])
def test_slow_compute_hides_every_collective(recompute):
    # 1 GFLOP/s: every block's compute is seconds, its collectives microseconds
    hidden = _time(1e9, TP, True, recompute=recompute)
    assert hidden == pytest.approx(_time(1e9, (0.0, 0.0), False, recompute=recompute),
                                   rel=1e-12)
    assert hidden < _time(1e9, TP, False, recompute=recompute)


def test_fast_compute_leaves_only_the_collectives():
    # 1e30 FLOP/s: compute takes no time; each block its collectives, as without overlap
    assert _time(1e30, TP, True) == pytest.approx(_time(1e30, TP, False), rel=1e-9)


@pytest.mark.parametrize("kw,match", [(dict(sequence_parallel=False), "sequence_parallel"),
                                      (dict(zero=3), "ZeRO-3"), (dict(fsdp=True), "ZeRO-3"),
                                      (dict(tp_overlap="yes"), "True or False")])
def test_what_is_not_modelled_is_refused(kw, match):
    args = {"sequence_parallel": True, "tp_overlap": True, **kw}
    for f in (schedule, closed_form):
        with pytest.raises(WorkloadError, match=match):
            f(C, tp=8, dp=2, **args)


@pytest.mark.parametrize("extra, needle", [
    (["--tp-overlap"], "tp_overlap needs sequence_parallel"),
    (["--overlap-param-gather"], "needs ZeRO-1 or ZeRO-2"),
])
def test_the_cli_refuses_in_one_line(capsys, extra, needle):
    one_line_error(capsys, ["scale", "transformer", "--config", "gpt3-1.3b", "--tp", "8", "-P",
                            "16", "--global-batch", "32", "--topology",
                            "gpu_cluster:machine=dgx_h100", *extra], needle)
