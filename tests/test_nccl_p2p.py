"""Point-to-point calls (sendrecv, alltoall) on NCCL's p2p channels, by hand.

Channel counts follow NCCL v2.30.7-1's src/graph/connect.cc (ncclTopoPostset),
src/graph/paths.cc (ncclTopoComputeP2pChannels, ncclTopoGetNchannels) and src/enqueue.cc
(addP2pToPlan), worked out here step by step; each channel is
credited with the per-channel bandwidth of NCCL's ring graph (tuning.cc busBw =
nChannels x bw), and the times follow from the bytes each channel and port carries.
"""

import networkx as nx
import pytest

from netsim import nccl
from netsim.comm.nccl import p2p, tuning
from topologies import gpu_cluster
from topologies.devices import compute_capability

US = 1e-6
RING = tuning.NCCL_ALGO_ORDER.index("ring")
NVL = 0


def switch_box(n, model="A100", port=300e9):
    G = nx.Graph()
    G.add_nodes_from((f"g{i}" for i in range(n)), kind="gpu", model=model, sm=compute_capability(model))
    G.add_node("sw", kind="nvswitch", nvls=False)
    G.add_edges_from(((f"g{i}", "sw") for i in range(n)), bandwidth=port, latency=0.0)
    return G


def one_step(protocol):
    p = tuning.PROTOCOLS.index(protocol)
    return (tuning.BASE_LAT_US[RING][p] + tuning.HW_LAT_US[NVL][RING][p]) * US


def test_channels_of_eight_a100_on_an_nvswitch_by_hand():
    # Search: 12 channels of 20 GB/s (A100 port 12 x 20 GB/s); Postset doubles: 24;
    # p2pnChannels = pow2Up(24) = 32; per peer 2 x 240/20 = 24 -> pow2Up 32 -> min(32, 32).
    assert p2p.comm_channels(12, 80, 1, 240.0) == 24
    assert p2p.p2p_channels(24, [24], 8) == (32, 32)
    # nChannelsMin: 32 -> 16 -> 8 -> 4 (4 x 8 ranks = 32, not > 32). One machine, all
    # NVLink: stepSize 512 KiB, minPartSize 64 KiB, maxPartSize 16 MiB. 128 MiB: 32 MiB on
    # 4, 16 MiB on 8 -> 8 channels; 256 MiB -> 16; 512 MiB -> 32; 1 GiB stays at 32.
    step = p2p.step_size("nvlink", 1)
    assert step == 512 * 1024
    got = [p2p.send_channels(2**k, 8, 1, 32, 32, step) for k in (27, 28, 29, 30)]
    assert got == [8, 16, 32, 32]
    # A small send starts on no more channels than minPartSize-sized parts: 100 KiB -> 2.
    assert p2p.send_channels(100 * 1024, 8, 1, 32, 32, step) == 2


def test_a_peer_on_another_machine_gets_its_nics_channels():
    # Two DGX H100: 8 search channels at bwIntra 48 GB/s (> 45) on Hopper across machines:
    # Postset doubles to 16, not below 16 so not again. A GPU's NICs: one 400 Gb/s NIC
    # (NCCL: min(PCIe gen5 x16 48 GB/s, 50 GB/s) = 48) reaches its own PCIe path (48 GB/s),
    # so netCount 1, netBw 48: max(1, ceil(48 / 14)) = 4.
    assert p2p.comm_channels(8, 90, 2, 48.0) == 16
    assert p2p.net_peer_channels([48.0, 48.0], 48.0) == 4
    # p2pnChannels 16; per peer min(36, 4) = 4, and 4 x ceil(16 / 8) = 8 <= 16 keeps it.
    assert p2p.p2p_channels(16, [36, 4], 16, 2) == (16, 4)
    # 64 ranks: 4 x 8 > 16 halves it to 2.
    assert p2p.p2p_channels(16, [36, 4], 64, 2) == (16, 2)
    # Across machines: stepSize 128 KiB, parts 64..128 KiB; nChannelsMin 4 -> 2 -> 1
    # (1 x 16 = 16). 64 MiB (1 GiB alltoall over 16): 1 -> 2 -> 4, then 4 > 4 / 2 stops.
    step = p2p.step_size("nvlink", 2)
    assert p2p.send_channels(2**26, 16, 2, 16, 4, step) == 4
    assert p2p.send_channels(2**16, 16, 2, 16, 4, step) == 1
    G = gpu_cluster("dgx_h100", nodes=2)
    assert nccl.simulate(G, "alltoall", 2**30).plan.channels == 4
    assert nccl.simulate(G, "alltoall", 2**20).plan.channels == 1


def test_sendrecv_below_the_port_rate_is_held_by_its_channels():
    G = switch_box(8)
    S = 2**27                                   # 8 channels x 20 GB/s = 160 < 240 GB/s
    r = nccl.simulate(G, "sendrecv", S)
    assert (r.plan.algorithm, r.plan.protocol, r.plan.channels) == ("p2p", "Simple", 8)
    assert r.makespan == pytest.approx(one_step("Simple") + S / (8 * 20e9), rel=1e-9)


def test_sendrecv_with_more_channels_than_the_port_carries_is_held_by_the_port():
    G = switch_box(8)
    S = 2**28                                   # 16 x 20 GB/s = 320 > 240 GB/s port
    r = nccl.simulate(G, "sendrecv", S)
    assert r.plan.channels == 16
    assert r.makespan == pytest.approx(one_step("Simple") + S / 240e9, rel=1e-9)


def test_small_sends_use_ll_with_its_wire_format():
    G = switch_box(8)
    S = 16384                                   # one 16 KiB chunk: LL, 8 bytes per 4
    r = nccl.simulate(G, "sendrecv", S)
    assert (r.plan.protocol, r.plan.channels) == ("LL", 1)
    assert r.makespan == pytest.approx(one_step("LL") + 2 * S / 20e9, rel=1e-9)
    assert nccl.simulate(G, "sendrecv", S + 1).plan.protocol == "Simple"


def test_a_callers_channels_and_protocol_win():
    G = switch_box(8)
    S = 2**27
    r = nccl.simulate(G, "sendrecv", S, channels=2, protocol="Simple")
    assert r.plan.channels == 2
    assert r.makespan == pytest.approx(one_step("Simple") + S / (2 * 20e9), rel=1e-9)
    with pytest.raises(nccl.NcclModelError, match="channels"):
        nccl.simulate(G, "sendrecv", S, channels=0)


def test_bad_p2p_arguments_are_named():
    with pytest.raises(nccl.NcclModelError, match="n_ranks"):
        p2p.p2p_channels(24, [24], 1)
    with pytest.raises(nccl.NcclModelError, match="nbytes"):
        p2p.send_channels(0, 8, 1, 32, 32, 2**19)
