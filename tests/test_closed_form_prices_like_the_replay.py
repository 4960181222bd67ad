"""The transformer closed form prices each collective as the replay runs it (NCCL on GPU nodes),
so on a contention-free layout it equals the simulation; where calls share links the record
names which class was slower than alone."""

import pytest

from studies.scaling.transformer import point
from topologies import dgx_h100, gpu_cluster
from workloads.transformer.flops import get_config
from workloads.transformer.layout import layout
from workloads.transformer.moe import moe

C = get_config("gpt3-1.3b", global_batch=32)


@pytest.mark.parametrize("tp,pp,dp,kw", [
    (8, 1, 1, {}),                                           # TP 8 on NVSwitch (NVLS)
    (8, 2, 1, {}),                                           # 1F1B across two machines
    (8, 2, 1, dict(pipeline="interleaved", chunks=2)),       # interleaved 1F1B
    (8, 1, 2, {}),                                           # DP rings across machines
    (8, 1, 2, dict(zero=1)),
    (8, 1, 2, dict(zero=3)),
    (8, 1, 2, dict(fsdp=True)),
])
def test_closed_form_is_the_nccl_replay_without_contention(tp, pp, dp, kw):
    G = dgx_h100() if tp * pp * dp == 8 else gpu_cluster("dgx_h100", 2)
    r = point(C, layout(tp, pp, dp), G, 0.5, simulate=True, **kw)
    assert r["time"] == pytest.approx(r["simulated"], rel=1e-6)
    assert r["why"] == "none: every call and hop as alone"


def test_experts_share_nics_across_machines_and_the_record_says_so():
    # the 8 shards' all-to-alls leave each machine through 4 NICs (NCCL's model sends
    # GPUs 2i and 2i + 1 through NIC 2i): each call is slower than alone
    r = point(C, layout(8, 1, 2), gpu_cluster("dgx_h100", 2), 0.5, simulate=True,
              moe=moe(4, every=2), ep=2, sequence_parallel=True)
    assert r["simulated"] > r["time"] * 1.01
    assert r["why"].startswith("ep alltoall: ")
