"""The GPUDirect RDMA flush: charged as time before Hopper only, always counted in NCCL's choice.

NCCL v2.30.7-1 ``ncclTopoNeedFlush`` (src/graph/paths.cc) flushes a GDR receive on GPUs
before compute capability 90 only; tuning.cc adds the flush (a second ``latencyInter``) to
every inter-node Simple step whatever the GPU. The expected latencies are tuning.cc's sums
worked by hand from its tables (``baseLat``, ``hwLat``) and the EFA plugin's 75 us.
"""

import pytest

from netsim.comm.nccl import model, tuning
from topologies import gpu_cluster


def _plan(machine, nbytes, **kw):
    return model.plan(model.setup(gpu_cluster(machine, 2)), "allreduce", nbytes, **kw)


def test_p5_nvls_tree_simple_is_charged_without_the_flush():
    # NVLS tree, 2 machines: intraLat 25 + 2 log2(2) (hwLat NET 20.9 + 75), no second 75.
    call = _plan("p5", 2**27)
    assert (call.algorithm, call.protocol) == ("nvls_tree", "Simple")
    assert call.latency == pytest.approx((25 + 2 * (20.9 + 75)) * 1e-6, rel=1e-12)


def test_p4d_tree_simple_is_charged_with_the_flush():
    # A100 (sm 80) flushes: tree 8.4 + 2 ((8 - 1) 4.0 + (14 + 75 + 75)).
    call = _plan("p4d", 2**30)
    assert (call.algorithm, call.protocol) == ("tree", "Simple")
    assert call.latency == pytest.approx((8.4 + 2 * (7 * 4.0 + 14 + 150)) * 1e-6, rel=1e-12)


def test_ring_simple_across_machines_drops_one_plugin_latency_per_inter_node_step():
    # 16 ranks on 2 machines: 30 steps, 2 of them across machines (v2.30.7-1); both charges
    # times the ring's "plateau" factor 1.4 (sm >= 80, 128 MiB is >= 64 B per rank-channel:
    # ncclTopoGetAlgoTime), so the flush's two 75 us come out 1.4 times.
    p5 = _plan("p5", 2**27, algorithm="ring", protocol="Simple")
    p4d = _plan("p4d", 2**27, algorithm="ring", protocol="Simple")
    assert p4d.latency - p5.latency == pytest.approx(1.4 * 2 * 75e-6, rel=1e-9)


def test_nccl_choice_still_counts_the_flush():
    # tuning_time is NCCL's own estimate, flush included, so the choice is tuning.cc's.
    s = model.setup(gpu_cluster("p5", 2))
    call = model.plan(s, "allreduce", 2**27)
    with_flush = tuning.latency(s.comm, "allreduce", "nvls_tree", "Simple")
    assert with_flush - call.latency == pytest.approx(2 * 75e-6, rel=1e-9)
    assert call.tuning_time == pytest.approx(
        tuning.algo_time(s.comm, "allreduce", "nvls_tree", "Simple", 2**27), rel=1e-12)


def test_ll_and_ll128_never_flush():
    # The flush is a Simple receive's; LL and LL128 charges are the same with or without it.
    s = model.setup(gpu_cluster("p4d", 2))
    for protocol in ("LL", "LL128"):
        assert tuning.latency(s.comm, "allreduce", "tree", protocol) == \
            tuning.latency(s.comm, "allreduce", "tree", protocol, flush=False)
