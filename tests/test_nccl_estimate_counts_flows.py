"""netsim collective --library nccl prices the flows of NCCL's plan, not only the graph's build
and route searches: an all-to-all on 1,152 GB200 GPUs (over a million flows, 22 s of CPU)
was priced below a second and ran unannounced. studies.scaling.trace_size.nccl_flow_count
is a lower bound of the plan's flows, checked here against the plans themselves."""

import pytest

from netsim.comm.priced import NcclPrices
from studies.cli.commands import collective
from studies.scaling import trace_size
from studies.scaling.trace_size import MESSAGE_SECONDS, PAIR_SECONDS, nccl_flow_count
from topologies import gb200_nvl72, gpu_cluster


@pytest.mark.parametrize("P", [8, 72])
def test_an_alltoall_inside_a_rack_is_a_flow_per_ordered_pair_and_channel(P):
    G = gb200_nvl72()
    gpus = [n for n, k in G.nodes(data="kind") if k == "gpu"][:P]
    plan = NcclPrices(G).plan(gpus, "alltoall", 64_000_000, None)
    # 4 channels at P = 8 (224 flows), 1 at P = 72 (5,112): the count is the one-channel case
    assert len(plan.flows) == plan.channels * P * (P - 1)
    assert nccl_flow_count("alltoall", P)[0] == P * (P - 1)


@pytest.mark.parametrize("op", ["alltoall", "allreduce", "allgather", "reduce_scatter", "broadcast", "reduce"])
def test_the_count_is_a_lower_bound_across_racks(op):
    G = gpu_cluster("gb200_nvl72", 2)
    gpus = [n for n, k in G.nodes(data="kind") if k == "gpu"]
    plan = NcclPrices(G).plan(gpus, op, 64_000_000, None)
    assert len(plan.flows) >= nccl_flow_count(op, 144)[0]


def test_the_command_prices_the_flows_at_each_size(monkeypatch):
    seen = {}

    def spy(ops, what, **kw):
        seen.update(ops=ops, what=what, pairs=kw.get("pairs"))
        raise SystemExit   # priced: nothing is built
    monkeypatch.setattr(collective, "check_ops", spy)
    from studies.cli.parser import main

    with pytest.raises(SystemExit):
        main(["collective", "alltoall", "--library", "nccl", "-P", "1152", "--sizes",
              "1MB..4MB", "--topology", "gpu_cluster:machine=gb200_nvl72"])
    # 1152 x 1151 flows at each of the 3 sizes 1, 2, 4 MB; as many distinct pairs, once
    assert seen["ops"] == 3 * 1152 * 1151 and seen["pairs"] == 1152 * 1151
    # what that prices at, before the graph's build and routes: 11.1 s + 8.6 s
    assert trace_size.replay_seconds(seen["ops"], 1152, 0, seen["pairs"]) == pytest.approx(
        3 * 1152 * 1151 * MESSAGE_SECONDS + 1152 * 1151 * PAIR_SECONDS)
