"""GPU-side per-channel limits of ring LL and LL128 (tuning.cc llMaxBws, perChMaxRingLL128Bws).

Two H100 joined by 18 NVLinks (NCCL counts 18 x 20.6 GB/s = 370.8 GB/s): the link is
far faster than one channel of LL128 (36.7 GB/s) or LL (llMaxBw 141 GB/s over the
call's channels), so the time is the latency plus the bytes of a hop over the cap.
"""

import networkx as nx
import pytest

from netsim import nccl
from netsim.comm.nccl import limits, tuning

US = 1e-6
RING = tuning.NCCL_ALGO_ORDER.index("ring")


def h100_pair():
    G = nx.Graph()
    G.add_nodes_from(["g0", "g1"], kind="gpu", model="H100", sm=90)
    G.add_edge("g0", "g1", bandwidth=18 * 25e9, latency=0.0, links=18)
    return G


def ring_latency(protocol, steps=2):
    p = tuning.PROTOCOLS.index(protocol)
    return (tuning.BASE_LAT_US[RING][p] + steps * tuning.HW_LAT_US[0][RING][p]) * US


def test_ll128_ring_channel_is_held_to_per_ch_max_ring_ll128():
    S = 2**26
    r = nccl.simulate(h100_pair(), "allreduce", S, algorithm="ring", protocol="LL128", channels=1)
    # One hop carries S x 2(n-1)/n = S of data (16/15 of it on the wire, 39.1 of 370.8 GB/s).
    assert r.makespan == pytest.approx(ring_latency("LL128") + S / 36.7e9, rel=1e-9)


def test_ll_ring_shares_ll_max_bw_over_its_channels():
    S = 2**22
    r = nccl.simulate(h100_pair(), "allreduce", S, algorithm="ring", protocol="LL", channels=2)
    # Each channel: S/2 per hop at 141/2 GB/s (x2 on the wire: 282 of 370.8 GB/s).
    assert r.makespan == pytest.approx(ring_latency("LL") + (S / 2) / 70.5e9, rel=1e-9)


def test_simple_ring_is_held_by_the_link_only():
    S = 2**26
    r = nccl.simulate(h100_pair(), "allreduce", S, algorithm="ring", protocol="Simple", channels=1)
    assert r.makespan == pytest.approx(ring_latency("Simple") + S / (18 * 20.6e9), rel=1e-9)


def test_caps_by_generation_and_node_count():
    from types import SimpleNamespace as C
    v100, a100_2 = C(compcap=70, n_nodes=1, cpu_vendor="intel"), C(compcap=80, n_nodes=2,
                                                                   cpu_vendor="intel")
    assert limits.channel_cap(v100, "ring", "LL", 6) == pytest.approx(39e9 / 6)
    # Beyond one node llMaxBws' row is the CPU: Intel 39.0, AMD 22.5 GB/s at two nodes.
    assert limits.channel_cap(a100_2, "ring", "LL", 4) == pytest.approx(39e9 / 4)
    amd = C(compcap=80, n_nodes=2, cpu_vendor="amd")
    assert limits.channel_cap(amd, "ring", "LL", 4) == pytest.approx(22.5e9 / 4)
    assert limits.channel_cap(a100_2, "ring", "LL128", 4) == pytest.approx(20e9)
    assert limits.channel_cap(a100_2, "tree", "Simple", 4) is None
    assert tuning.LL_MAX_BW is limits.LL_MAX_BW      # one table, re-exported by tuning


def test_an_nvls_tree_channel_is_held_to_per_ch_max_nvls_tree():
    # Two DGX H100 (eight 400 Gb/s NDR rails each), 8 GiB: NCCL runs the NVLS tree on 8
    # channels. v2.30.7-1's perChMaxNVLSTreeBw for Hopper on two nodes, 57.7 GB/s of busbw a
    # channel, is 57.7 x 16 / 30 = 30.77 GB/s of algbw: each channel's share (1/8 of the
    # buffer) crosses the network at that rate, below the NICs' and NVLS's rates.
    from topologies import gpu_cluster
    n = 2**33
    r = nccl.simulate(gpu_cluster("dgx_h100", 2), "allreduce", n)
    assert (r.plan.algorithm, r.plan.channels) == ("nvls_tree", 8)
    # (plus the sub-microsecond wire latency of the links on the way)
    assert r.makespan == pytest.approx(r.plan.latency + n / 8 / (57.7e9 * 16 / 30), abs=1e-6)
    assert r.makespan > r.plan.latency + n / 8 / (57.7e9 * 16 / 30)
    # One node has no NVLS tree, and Ampere's row is the tree's (no NVLS there).
    assert limits.PER_CH_MAX_NVLS_TREE_BW[2] == (0.0, 57.7, 45.5)


def test_blackwell_rows_follow_tuning_cc():
    # NCCL v2.30.7-1 tuning.cc, Blackwell rows read by hand from ncclTunerConstantsDefaults:
    # llMaxBws 2 x (141, 45, 35); perChMaxRingLL128Bws 40; perChMaxTreeBws (70, 42.8, 24);
    # perChMaxNVLSTreeBws (0, 96, 80); nvlsEfficiency 0.74.
    from types import SimpleNamespace as C
    b200 = C(compcap=100, n_nodes=1, cpu_vendor="intel")
    assert limits.table_indices(b200) == (3, 3, 0)
    assert limits.channel_cap(b200, "ring", "LL", 2) == pytest.approx(2 * 141.0 / 2 * 1e9)
    assert limits.channel_cap(b200, "ring", "LL128", 16) == pytest.approx(40.0e9)
    two = C(compcap=100, n_nodes=2, n_ranks=16, cpu_vendor="intel")
    assert limits.channel_cap(two, "nvls_tree", "Simple", 8) == pytest.approx(96.0 * 16 / 30 * 1e9)
    assert limits.PER_CH_MAX_TREE_BW[3] == (70.0, 42.8, 24.0)
    assert limits.NVLS_EFFICIENCY[3] == 0.74


def test_the_cap_is_each_flows_rate_bound_not_an_edge():
    # LL128 on one channel: both hops bounded at 36.7 GB/s of data, 16/15 of it on the wire;
    # the replayed graph gains no node for the cap.
    r = nccl.simulate(h100_pair(), "allreduce", 2**26, algorithm="ring", protocol="LL128",
                      channels=1)
    x = r.expanded
    bounded = x.bound[x.bound < float("inf")]
    assert bounded.tolist() == pytest.approx([36.7e9 * 16 / 15] * 2, rel=1e-12)
    assert sorted(x.net.nodes) == ["g0", "g1"]


def test_two_calls_at_once_each_keep_their_own_channels_cap():
    # Two LL128 allreduces on the same pair, side by side in one trace: each ring hop is its
    # own flow bounded at 36.7 GB/s of data; the link (370.8 GB/s) carries all four flows at
    # 39.1 GB/s of wire each, so both calls end as one alone does.
    from netsim import TraceBuilder
    from netsim.comm.library import expand
    from netsim.result import replay_expansion

    S = 2**26
    b = TraceBuilder(2)
    b.collective("allreduce", [0, 1], S, algorithm="ring")
    b.collective("allreduce", [0, 1], S, algorithm="ring")
    t = b.build()
    x = expand(t, h100_pair(), library="nccl", nccl_options={"protocol": "LL128", "channels": 1})
    r = replay_expansion(t, x)
    assert r.collectives["protocol"].tolist() == ["LL128", "LL128"]
    assert r.makespan == pytest.approx(ring_latency("LL128") + S / 36.7e9, rel=1e-9)
