"""NCCL calls that run alone, replayed once (netsim.comm.alone): the same replay as the full one.

The reference is the full replay of the same trace (every call expanded into its
flows), an independent path through the engine: the collapsed replay must give
the same op times (to 1e-12 of the makespan), the same link statistics and the
same counts, on every parallelism of a transformer iteration, and must expand a
class again whenever its calls overlap or share a link with other traffic.
"""

import numpy as np
import pytest

from netsim import TraceBuilder, simulate
from topologies import dgx_h100, gpu_cluster
from workloads.transformer.flops import config
from workloads.transformer.iteration import schedule
from workloads.transformer.moe import Moe


def _gpus(G, n):
    return [v for v, d in G.nodes(data=True) if d.get("kind") == "gpu"][:n]


def _same(full, fast):
    """Every op's times, every link's statistics and the counts agree."""
    span = full.makespan
    assert fast.makespan == pytest.approx(span, rel=1e-12)
    for k in ("start", "transfer", "end"):
        a, b = full.ops[k], fast.ops[k]
        assert (np.isnan(a) == np.isnan(b)).all()
        ok = ~np.isnan(a)
        assert np.abs(a[ok] - b[ok]).max(initial=0) <= 1e-12 * span
    for k in ("bytes", "messages", "busy", "saturated", "peak_util", "peak_flows"):
        np.testing.assert_allclose(fast.links[k], full.links[k], rtol=1e-12, atol=1e-12 * span)
    for k in ("compute", "communication", "exposed_communication", "idle"):
        np.testing.assert_allclose(fast.ranks[k], full.ranks[k], rtol=0, atol=1e-12 * span)
    assert fast.stats["messages"] == full.stats["messages"]
    assert fast.stats["bytes"] == pytest.approx(full.stats["bytes"], rel=1e-12)
    assert fast.bottlenecks(1)[0]["link"] == full.bottlenecks(1)[0]["link"]


# A 4-layer model, tensor parallelism filling each DGX H100, two machines.
C = config(4, 512, 8, 128, 1024, micro_batch=1, global_batch=8)
CASES = {
    "tp, 1f1b": dict(tp=8, pp=2),
    "tp, interleaved": dict(tp=8, pp=2, pipeline="interleaved", chunks=2),
    "tp, gpipe, no recompute": dict(tp=8, pp=2, pipeline="gpipe", recompute="none"),
    "tp, sequence parallel, scatter/gather": dict(tp=8, pp=2, sequence_parallel=True,
                                                  scatter_gather=True),
    "tp x dp": dict(tp=8, dp=2),
    "tp x dp, zero-1": dict(tp=8, dp=2, zero=1),
    "tp x dp, zero-3": dict(tp=8, dp=2, zero=3),
    "tp x dp, experts": dict(tp=8, dp=2, moe=Moe(4, 2), ep=2, sequence_parallel=True),
}


@pytest.mark.parametrize("case", list(CASES))
def test_collapsed_replay_is_the_full_one(case):
    G = gpu_cluster("dgx_h100", 2)
    t = schedule(C, device_flops=1e14, **CASES[case])
    full = simulate(t, G, placement=_gpus(G, t.ranks))
    fast = simulate(t, G, placement=_gpus(G, t.ranks), collapse=True)
    assert fast.expanded.alone.calls, "the tensor-parallel calls run alone on NVLink"
    assert fast.expanded.trace.num_ops < full.expanded.trace.num_ops
    _same(full, fast)


def _shared():
    b = TraceBuilder(2)
    c = b.collective("allreduce", [0, 1], 8e6)
    b.collective("allreduce", [0, 1], 8e6, deps=[c])
    b.message(0, 1, 64e6)   # on gpu0 -> gpu1's NVLink, during both calls
    return b.build()


def test_calls_sharing_a_link_with_a_message_stay_expanded():
    G, t = dgx_h100(), _shared()
    fast = simulate(t, G, placement=_gpus(G, t.ranks), collapse=True)
    assert not fast.expanded.alone.calls
    _same(simulate(t, G, placement=_gpus(G, t.ranks)), fast)


def test_calls_sharing_links_with_other_calls_are_one_op_while_they_meet_nothing():
    # tp 4 x dp 2 in one machine: GPU 0's NVLink carries its TP group's calls and its DP
    # ring, one after the other: every call is kept as one op on the condition in time.
    G, t = dgx_h100(), schedule(C, tp=4, dp=2, device_flops=1e14)
    fast = simulate(t, G, placement=_gpus(G, t.ranks), collapse=True)
    alone = fast.expanded.alone
    assert alone.calls and set(alone.calls) == alone.timed
    _same(simulate(t, G, placement=_gpus(G, t.ranks)), fast)


def test_calls_that_met_other_traffic_in_time_are_expanded_again():
    # tp 4 x dp 16 on 8 machines: NCCL's NVLS tree for the data-parallel buckets shares
    # the GPUs' NVLink with the tensor-parallel calls of the last backward, at once.
    from netsim.comm.alone import shared_in_time
    from netsim.comm.library import expand
    from netsim.result import replay_expansion
    from workloads.transformer.flops import get_config

    c = get_config("gpt3-175b", global_batch=16, layers=2)
    G = gpu_cluster("dgx_h100", 8)
    t, place = schedule(c, 4, 1, 16, device_flops=1e14), _gpus(G, 64)
    x = expand(t, G, place, "auto", collapse=True)
    first = replay_expansion(t, x)
    met = shared_in_time(first.expanded_ops["start"], first.expanded_ops["end"], x)
    assert met and met <= x.alone.timed
    fast = simulate(t, G, placement=place, collapse=True)
    assert fast.expanded.alone.calls and not met & set(fast.expanded.alone.calls)
    _same(simulate(t, G, placement=place), fast)


def test_calls_of_one_group_that_overlap_are_expanded_again():
    # Two allreduces of one group at once share its links: collapsed, each would run
    # at full speed. The replay finds the overlap and replays with them expanded.
    G = dgx_h100()
    b = TraceBuilder(8)
    b.collective("allreduce", range(8), 64e6)
    b.collective("allreduce", range(8), 64e6)
    t = b.build()
    full = simulate(t, G, placement=_gpus(G, 8))
    fast = simulate(t, G, placement=_gpus(G, 8), collapse=True)
    assert not fast.expanded.alone.calls
    _same(full, fast)
    one = simulate(_one(), G, placement=_gpus(G, 8))
    assert full.makespan > 1.5 * one.makespan   # they did share: the check mattered


def _one():
    b = TraceBuilder(8)
    b.collective("allreduce", range(8), 64e6)
    return b.build()


def test_link_series_ecmp_and_tcp_replay_every_call_expanded():
    G = dgx_h100()
    t = _one()
    for kw in (dict(link_series=True), dict(ecmp="hash")):
        r = simulate(t, G, placement=_gpus(G, 8), collapse=True, **kw)
        assert r.expanded.alone is None


def test_a_planner_shared_with_a_closed_form_plans_the_replay_and_one_of_another_graph_is_refused():
    from netsim.comm.priced import NcclPrices
    from netsim.errors import TraceError

    G, t = dgx_h100(), _one()
    prices = NcclPrices(G)
    alone = prices.seconds(_gpus(G, 8), "allreduce", int(64e6))   # as a closed form prices it
    r = simulate(t, G, placement=_gpus(G, 8), collapse=True, planner=prices)
    full = simulate(t, G, placement=_gpus(G, 8)).makespan   # every flow of the call expanded
    assert r.makespan == pytest.approx(full, rel=1e-12)
    assert alone == pytest.approx(full, rel=1e-12)
    with pytest.raises(TraceError, match="another graph"):
        simulate(t, G, placement=_gpus(G, 8), planner=NcclPrices(dgx_h100()))
