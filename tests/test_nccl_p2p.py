"""Point-to-point calls (sendrecv, alltoall) on NCCL's p2p channels, by hand.

Channel counts follow NCCL v2.21.5-1's src/graph/paths.cc (ncclTopoComputeP2pChannels)
and src/enqueue.cc (calcP2pChunkSize), worked out here step by step; each channel is
credited with the per-channel bandwidth of NCCL's ring graph (tuning.cc busBw =
nChannels x bw), and the times follow from the bytes each channel and port carries.
"""

import networkx as nx
import pytest

from netsim import nccl
from netsim.nccl import p2p, tuning
from topologies.devices import compute_capability

US = 1e-6
RING = tuning.ALGORITHMS.index("ring")
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
    # p2pnChannels = nextPow2(24) = 32; per peer 2 x 240/20 = 24 -> min(24, 24) -> 32.
    assert p2p.p2p_channels(12, [24], 8) == (32, 32)
    # nChannelsMin: 32 -> 16 -> 8 -> 4 (4 x 8 ranks = 32, not > 32). One machine, all
    # NVLink: stepSize 512 KiB, minSize 64 KiB, maxSize 16 MiB. 128 MiB: 32 MiB on 4,
    # 16 MiB on 8 -> 8 channels; 256 MiB -> 16; 512 MiB -> 32; 1 GiB stays at 32.
    step = p2p.step_size("nvlink", 1)
    assert step == 512 * 1024
    got = [p2p.send_channels(2**k, 8, 1, 32, 32, step) for k in (27, 28, 29, 30)]
    assert got == [8, 16, 32, 32]


def test_a_peer_on_another_machine_gets_two_channels_and_so_does_every_peer():
    # 16 ranks, 8 search channels -> 16; net: 2 x 16 = 32 <= 4 x 16 keeps 2; the least
    # over all pairs (the NVLink peer's 36 is more) is 2, for every peer.
    assert p2p.p2p_channels(8, [36, None], 16) == (16, 2)
    # 64 ranks: 2 x 64 > 4 x 16 halves the net peer to 1.
    assert p2p.p2p_channels(8, [36, None], 64) == (16, 1)
    # Across machines: stepSize 128 KiB, chunks 64..128 KiB; nChannelsMin 2 -> 1 (2 x 16 > 16).
    assert p2p.send_channels(2**20, 16, 2, 16, 2, p2p.step_size("nvlink", 2)) == 2
    assert p2p.send_channels(2**16, 16, 2, 16, 2, p2p.step_size("nvlink", 2)) == 1


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
        p2p.p2p_channels(12, [24], 1)
    with pytest.raises(nccl.NcclModelError, match="nbytes"):
        p2p.send_channels(0, 8, 1, 32, 32, 2**19)
