"""A GPU's traffic to another machine leaves and enters through its own NIC where it has one.

A DGX H100 (and DGX A100) puts two GPUs and two NICs on each PCIe switch, so both NICs are
equally near either GPU; the GPU's own NIC carries its traffic (NCCL's ``ncclTopoGetLocalNet``).
Worked by hand: a TP 8 stage's eight pipeline sends from machine 0 (gpu k) to machine 1
(gpu 8 + k), n bytes each, at once. Each path is PCIe (gpu -> switch -> NIC, 0.1 us each),
NDR (NIC -> rail leaf -> NIC, 0.6 us each), PCIe again: 1.6 us. Through eight NICs, every send
has its NIC to itself, so each moves at the slowest link of its path, the NDR port's 400 Gb/s =
50e9 bytes/s (PCIe gen5 x16 carries 63 GB/s): 1.6 us + n / 50e9. Had two GPUs of a switch
shared one NIC, as least-latency routing's tie-break once made them, it would be n / 25e9.
"""

import networkx as nx
import pytest

from netsim import TraceBuilder, simulate
from netsim.errors import TopologyError
from netsim.network.compiled import Network
from studies.scaling.transformer import hop_of
from topologies import gpu_cluster
from workloads.transformer.layout import Layout

N = 1e9           # bytes per send
NDR = 400e9 / 8   # one NDR port, bytes/s
HDR = 200e9 / 8   # one HDR port (DGX A100)
LAT = 4 * 0.1e-6 + 2 * 0.6e-6   # four PCIe gen5 hops and two NDR hops


def _sends(pairs):
    b = TraceBuilder(16)
    for a, c in pairs:
        b.message(a, c, N)
    return b.build()


@pytest.mark.parametrize("back", [False, True])
def test_a_tp8_stage_hops_to_the_next_machine_at_every_nic_full_rate(back):
    G = gpu_cluster("dgx_h100", 2)
    pairs = [(8 + k, k) if back else (k, 8 + k) for k in range(8)]
    r = simulate(_sends(pairs), G)
    assert r.makespan == pytest.approx(LAT + N / NDR, rel=1e-12)
    net = Network(G)
    for a, c in pairs:   # each leaves and enters through its own NIC (the NIC of its rail)
        path = net.path(f"gpu{a}", f"gpu{c}")
        assert path[2] == f"n{a // 8}.nic{a % 8}" and path[4] == f"n{c // 8}.nic{c % 8}"


def test_the_closed_forms_hop_follows_the_route():
    # hop_of prices a stage's hops as they are routed: alpha the 1.6 us path, beta one NIC's.
    G = gpu_cluster("dgx_h100", 2)
    alpha, beta = hop_of(G, Layout(8, 2, 1))
    assert alpha == pytest.approx(LAT, rel=1e-12) and beta == pytest.approx(1 / NDR, rel=1e-12)
    # DGX A100: the same PCIe layout (gen4 links, 0.1 us each, 31.5 GB/s) and HDR NICs.
    alpha, beta = hop_of(gpu_cluster("dgx_a100", 2), Layout(8, 2, 1))
    assert beta == pytest.approx(1 / HDR, rel=1e-12)


def test_gpus_that_share_one_nic_still_share_it():
    # A DGX-1 has one EDR NIC (100 Gb/s = 12.5e9 B/s) per two GPUs: gpu0 and gpu1's sends to
    # the next machine both cross nic0, each at half its rate. PCIe gen3 x16 (15.75 GB/s)
    # is faster; latency 4 x 0.1 us + 2 x 0.6 us.
    G = gpu_cluster("dgx1", 2)
    r = simulate(_sends([(0, 8), (1, 9)]), G)
    assert r.makespan == pytest.approx(LAT + 2 * N / 12.5e9, rel=1e-12)


def test_the_source_rail_decides_only_among_equal_paths():
    # g0 on rail 0 reaches "far" in two hops through nic1 and in three through nic0: the
    # shorter path wins even though it leaves the rail.
    G = nx.Graph()
    G.add_nodes_from([("g0", {"rail": 0}), ("nic0", {"rail": 0}), ("nic1", {"rail": 1})])
    for u, v in [("g0", "nic1"), ("nic1", "far"), ("g0", "nic0"), ("nic0", "x"), ("x", "far")]:
        G.add_edge(u, v, bandwidth=1e9, latency=1e-6)
    assert Network(G).path("g0", "far") == ["g0", "nic1", "far"]


@pytest.mark.parametrize("rail", ["0", 1.0, True])
def test_a_rail_that_is_not_an_integer_is_refused(rail):
    G = nx.Graph()
    G.add_node("a", rail=rail)
    G.add_edge("a", "b", bandwidth=1e9, latency=1e-6)
    with pytest.raises(TopologyError, match="rail"):
        Network(G)
