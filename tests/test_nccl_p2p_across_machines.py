"""A point-to-point call across machines waits for its receiver and for its proxy's posts.

Hand-worked from NCCL v2.30.7-1: the IB transport posts a send only after the receiver's
posted receive has crossed the network (src/transport/net_ib/p2p.cc), so a call of one step
pays two network latencies, each tuning.cc's tree ``hwLat[NET]`` (the exposed-latency row)
plus the plugin's; and the proxy posts each send and receive to another machine in turn,
``getNetOverhead`` each (1 us Intel, 2 us AMD, x3 for Simple, tuning.cc).
"""

import pytest

from netsim import nccl
from netsim.comm.nccl import p2p, tuning
from netsim.errors import NcclModelError
from topologies import dgx_h100, gpu_cluster

US = 1e-6
RING = tuning.NCCL_ALGO_ORDER.index("ring")
TREE = tuning.NCCL_ALGO_ORDER.index("tree")
LL, SIMPLE = tuning.PROTOCOLS.index("LL"), tuning.PROTOCOLS.index("Simple")


def test_posts_count_every_remote_send_and_receive():
    two = [0] * 8 + [1] * 8
    assert p2p.net_posts("alltoall", two) == 2 * 8
    four = [m for m in range(4) for _ in range(8)]
    assert p2p.net_posts("alltoall", four) == 2 * 24
    # the ring shift: ranks 7 and 15 send across, 0 and 8 receive across
    assert p2p.net_posts("sendrecv", two) == 1
    # one GPU a machine: every rank sends and receives across
    assert p2p.net_posts("sendrecv", [0, 1]) == 2
    assert p2p.net_posts("alltoall", [0] * 8) == 0


def test_alltoall_of_1_kib_on_two_dgx_h100_by_hand():
    # 64 B to each of 16 peers: LL on one channel. Latency: baseLat(ring, LL) 6.6, then
    # 16 posts x 1 us (Intel) + 2 x (hwLat NET tree LL 5.0 + 0 for NCCL's IB transport).
    r = nccl.simulate(gpu_cluster("dgx_h100", 2), "alltoall", 1024)
    assert (r.plan.protocol, r.plan.channels) == ("LL", 1)
    expected = tuning.BASE_LAT_US[RING][LL] + 16 * 1.0 + 2 * tuning.HW_LAT_US[2][TREE][LL]
    assert expected == pytest.approx(32.6)
    assert r.plan.latency == pytest.approx(expected * US, rel=1e-12)
    # the bytes themselves add little: 2 x 64 B a pair at tens of GB/s
    assert r.plan.latency < r.makespan < r.plan.latency + 2 * US


def test_the_efa_plugins_latency_is_paid_on_both_crossings():
    # p5: the EFA plugin reports 75 us (aws-ofi-nccl), each crossing pays it.
    r = nccl.simulate(gpu_cluster("p5", 2), "alltoall", 1024)
    expected = (tuning.BASE_LAT_US[RING][LL] + 16 * 1.0
                + 2 * (tuning.HW_LAT_US[2][TREE][LL] + 75.0))
    assert r.plan.latency == pytest.approx(expected * US, rel=1e-12)


def test_simple_posts_cost_three_overheads_and_a100_flushes():
    # 1 MiB alltoall on two DGX A100 (HDR): 64 KiB a peer, Simple. A100 (sm 80) flushes
    # each GPUDirect receive: one more network latency, 0 on NCCL's IB transport.
    r = nccl.simulate(gpu_cluster("dgx_a100", 2, nic="HDR"), "alltoall", 2**20)
    assert r.plan.protocol == "Simple"
    expected = tuning.BASE_LAT_US[RING][SIMPLE] + 16 * 3.0 + 2 * tuning.HW_LAT_US[2][TREE][SIMPLE]
    assert r.plan.latency == pytest.approx(expected * US, rel=1e-12)


def test_amd_hosts_post_at_twice_the_cost():
    assert p2p.latency("LL", "nvlink", 16, cpu_vendor="amd") == pytest.approx(
        (6.6 + 16 * 2.0 + 2 * 5.0) * US, rel=1e-12)


def test_one_machine_keeps_one_ring_step():
    # no peer across: baseLat + the NVLink ring hop, as before
    r = nccl.simulate(dgx_h100(), "alltoall", 1024)
    assert r.plan.latency == pytest.approx(
        (tuning.BASE_LAT_US[RING][LL] + tuning.HW_LAT_US[0][RING][LL]) * US, rel=1e-12)


def test_more_machines_post_more():
    # four machines: 24 remote peers, 48 posts; the latency grows by 32 us over two machines
    two = nccl.simulate(gpu_cluster("dgx_h100", 2), "alltoall", 1024).plan.latency
    four = nccl.simulate(gpu_cluster("dgx_h100", 4), "alltoall", 4096).plan.latency
    assert four - two == pytest.approx(32 * US, rel=1e-9)


def test_bad_arguments_are_named():
    with pytest.raises(NcclModelError, match="posts"):
        p2p.latency("LL", "nvlink", -1)
    with pytest.raises(NcclModelError, match="alltoall or sendrecv"):
        p2p.net_posts("allreduce", [0, 1])
    with pytest.raises(NcclModelError, match="protocol"):
        tuning.net_overhead("intel", "LL64")
