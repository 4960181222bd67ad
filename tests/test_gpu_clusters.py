"""GPU machines and multi-node clusters: counts and attributes derived from the datasheets.

Expected numbers are written out from the vendors' figures (NIC counts and Gb/s,
NVLink counts and GB/s), not read from topologies' tables.
"""

import math

import networkx as nx
import pytest

import netsim
import topologies
from netsim.errors import TopologyError
from studies.registry import parse_topology
from topologies import (dgx1, dgx_a100, dgx_h100, gpu_cluster, hgx_h200, links, pcie_box,
                        pcie_tree)
from topologies._validate import KINDS

GBIT = 1e9 / 8


def check_contract(G):
    """The graph attribute contract of topologies/__init__.py, for GPU machines."""
    assert type(G) is nx.Graph and nx.is_connected(G)
    for n, d in G.nodes(data=True):
        assert d["kind"] in KINDS, n
        if d["kind"] == "gpu":
            assert isinstance(d["node"], int) and isinstance(d["p2p"], bool)
            assert isinstance(d["model"], str) and isinstance(d["sm"], int)
        if d["kind"] == "nvswitch":
            assert isinstance(d["nvls"], bool)
    for u, v, d in G.edges(data=True):
        assert isinstance(d["bandwidth"], float) and d["bandwidth"] > 0
        assert isinstance(d["latency"], float) and d["latency"] >= 0
        assert isinstance(d["links"], int) and d["links"] >= 1, (u, v)
        name = d["technology"]
        if name in links.CPU_INTERCONNECT:
            per_link = links.CPU_INTERCONNECT[name]
        else:
            tech = links.technology(name)
            # An NVSwitch record is one GPU's whole port; every other record is one link.
            per_link = tech.bandwidth / d["links"] if tech.family == "nvswitch" else tech.bandwidth
        assert d["bandwidth"] == pytest.approx(d["links"] * per_link), (u, v)
    gpus = [n for n, k in G.nodes(data="kind") if k == "gpu"]
    assert gpus == [f"gpu{i}" for i in range(len(gpus))]
    assert list(G)[:len(gpus)] == gpus  # ranks first, in order


# ---------------------------------------------------------------- single machines


@pytest.mark.parametrize("build", [pcie_tree, dgx1, dgx_a100, dgx_h100, hgx_h200, pcie_box])
def test_every_machine_meets_the_contract(build):
    check_contract(build())


def test_existing_machines_gain_attributes_not_bandwidth():
    G = dgx1()
    # V100: compute capability 7.0; NVLink2 25 GB/s per link per direction, 1 or 2 links.
    assert {G.nodes[f"gpu{i}"]["sm"] for i in range(8)} == {70}
    assert G.edges["gpu0", "gpu3"]["links"] == 2 and G.edges["gpu0", "gpu3"]["bandwidth"] == 50e9
    assert sum(d["links"] for _, _, d in G.edges("gpu0", data=True)
               if d["technology"] == "NVLink2") == 6  # six NVLinks per V100
    assert G.edges["cpu0", "cpu1"]["technology"] == "QPI" and G.edges["cpu0", "cpu1"]["links"] == 2
    a, h = dgx_a100(), dgx_h100()
    # A100: 12 x 25 GB/s, NVSwitch gen2 without NVLS; H100: 18 x 25 GB/s, gen3 with NVLS.
    assert a.edges["gpu0", "nvswitch0"]["links"] == 12 and not a.nodes["nvswitch0"]["nvls"]
    assert h.edges["gpu0", "nvswitch0"]["links"] == 18 and h.nodes["nvswitch0"]["nvls"]
    assert h.edges["gpu0", "nvswitch0"]["technology"] == "NVSwitch3"
    assert (a.nodes["gpu0"]["sm"], h.nodes["gpu0"]["sm"]) == (80, 90)


def test_hgx_h200_is_an_h100_board_with_h200s():
    G = hgx_h200()
    # H200 datasheet: NVLink 900 GB/s both ways -> 450 GB/s per direction per GPU.
    assert G.edges["gpu3", "nvswitch0"]["bandwidth"] == 450e9
    assert (G.nodes["gpu3"]["model"], G.nodes["gpu3"]["sm"]) == ("H200", 90)
    assert nx.is_isomorphic(G, dgx_h100())


def test_pcie_box_is_the_measured_rtx4090_server():
    G = pcie_box()
    # 8 GPUs on 2 sockets, each GPU on its own gen4 x16 port: 16 GT/s x 16 x 128/130 / 8.
    assert G.number_of_nodes() == 10 and G.number_of_edges() == 8 + 1
    assert [G.nodes[f"gpu{i}"]["socket"] for i in range(8)] == [0] * 4 + [1] * 4
    assert G.edges["gpu5", "cpu1"]["bandwidth"] == pytest.approx(16e9 * 16 * 128 / 130 / 8)
    # Three xGMI links of 18 GT/s x 2 bytes each way.
    assert G.edges["cpu0", "cpu1"]["bandwidth"] == pytest.approx(3 * 18e9 * 2)
    assert all(not G.nodes[f"gpu{i}"]["p2p"] and G.nodes[f"gpu{i}"]["sm"] == 89 for i in range(8))
    G = pcie_box(gpus=4, sockets=1, p2p=True, gpu="A100", gen="gen5")
    assert G.number_of_edges() == 4 and G.nodes["gpu0"]["p2p"] and G.nodes["gpu0"]["model"] == "A100"


# ---------------------------------------------------------------- clusters


def nic_edges(G, m):
    return [(u, v, d) for u, v, d in G.edges(data=True)
            if G.nodes[u]["kind"] == "nic" and G.nodes[u]["node"] == m
            and G.nodes[v]["kind"] == "switch"]


@pytest.mark.parametrize("machine, rails, gbps", [
    ("dgx1", 4, 100),       # DGX-1: 4 x EDR 100 Gb/s
    ("dgx_a100", 8, 200),   # DGX A100: 8 x HDR 200 Gb/s
    ("dgx_h100", 8, 400),   # DGX H100: 8 x ConnectX-7 NDR 400 Gb/s
    ("hgx_h100", 8, 400),   # HGX H100: 8 x ConnectX-7 400 Gb/s
    ("hgx_h200", 8, 400),   # HGX H200: 8 x 400 Gb/s
    ("p4d", 4, 100),        # p4d.24xlarge: 400 Gbps EFA = 4 x 100
    ("p5", 32, 100),        # p5.48xlarge: 3200 Gbps EFA = 32 x 100
    ("pcie_box", 1, 100),   # assumed one 100GbE port
])
def test_cluster_nics_match_the_datasheets(machine, rails, gbps):
    G = gpu_cluster(machine, 3)
    check_contract(G)
    assert len([n for n, k in G.nodes(data="kind") if k == "gpu"]) == 24
    for m in range(3):
        edges = nic_edges(G, m)
        assert len(edges) == rails
        assert sum(d["bandwidth"] for _, _, d in edges) == pytest.approx(rails * gbps * GBIT)
        assert sorted(G.nodes[u]["rail"] for u, _, _ in edges) == list(range(rails))
        assert {G.nodes[f"gpu{8 * m + i}"]["node"] for i in range(8)} == {m}


def test_dgx_h100_two_nodes_counted_by_hand():
    G = parse_topology("dgx_h100:nodes=2")
    assert nx.utils.graphs_equal(G, gpu_cluster("dgx_h100", 2))
    # Per machine: 8 GPUs + 1 NVSwitch + 4 PCIe switches + 8 NICs = 21 nodes; 8 NVSwitch
    # ports + 8 GPU-switch + 8 NIC-switch = 24 edges. Rail network: 8 rail leaves + 1 spine,
    # 16 NIC links and 8 leaf-spine bundles.
    assert G.number_of_nodes() == 2 * 21 + 9 and G.number_of_edges() == 2 * 24 + 16 + 8
    assert G.edges["n1.nic3", "rail3"]["bandwidth"] == 400 * GBIT
    assert G.edges["rail3", "spine"]["bandwidth"] == 2 * 400 * GBIT
    assert G.edges["rail3", "spine"]["links"] == 2
    assert G.edges["gpu10", "n1.pcie1"]["technology"] == "PCIe-gen5-x16"
    assert G.nodes["n1.nvswitch0"]["nvls"] and not G.nodes["spine"]["sharp"]


def test_fat_tree_counted_by_hand_and_routes():
    G = gpu_cluster("dgx_a100", 3, network="fat_tree")
    # 3 x 21 nodes + 3 leaves + 1 spine; 3 x 24 + 3 x 8 NIC links + 3 leaf bundles of 8 HDR.
    assert G.number_of_nodes() == 67 and G.number_of_edges() == 99
    assert G.edges["leaf2", "spine"]["bandwidth"] == 8 * 200 * GBIT
    net = netsim.Network(G)
    rail = netsim.Network(gpu_cluster("dgx_a100", 3))

    def hops(network, a, b):
        return len(network.route(network.node_of(a), network.node_of(b)))

    # GPU 0 of two machines: same rail = gpu-pcie-nic-rail-nic-pcie-gpu (6 links); the
    # fat tree adds the spine (8 links); inside a machine the NVSwitch (2 links).
    assert hops(rail, "gpu0", "gpu8") == 6 and hops(net, "gpu0", "gpu8") == 8
    assert hops(rail, "gpu0", "gpu1") == 2


def test_nic_override_and_sharp():
    G = gpu_cluster("dgx_h100", 2, nic="RoCE-200G")
    assert G.edges["n0.nic0", "rail0"]["bandwidth"] == 200 * GBIT
    assert G.edges["n0.nic0", "rail0"]["technology"] == "RoCE-200G"
    G = gpu_cluster("dgx_h100", 2, sharp=True)
    assert all(G.nodes[s]["sharp"] for s in G if G.nodes[s]["kind"] == "switch")
    G = parse_topology("pcie_box:nodes=2,nic=25GbE,p2p=true")
    assert G.nodes["gpu9"]["p2p"] and G.edges["n1.nic0", "rail0"]["bandwidth"] == 25 * GBIT


def test_one_node_stays_the_plain_machine():
    assert nx.utils.graphs_equal(dgx_h100(nodes=1), dgx_h100())
    assert gpu_cluster("dgx_h100", 1).number_of_nodes() == 21 + 9


@pytest.mark.parametrize("call, message", [
    (lambda: gpu_cluster("dgx9", 2), "machine must be one of"),
    (lambda: gpu_cluster("dgx_h100", 0), "nodes must be an integer >= 1, got 0"),
    (lambda: gpu_cluster("dgx_h100", 2, network="torus"), "network must be one of rail, fat_tree"),
    (lambda: gpu_cluster("dgx_h100", 2, nic="NVLink4"), "nic must be a network technology"),
    (lambda: gpu_cluster("dgx_h100", 2, nic="warp"), "unknown link technology 'warp'"),
    (lambda: gpu_cluster("p4d", 2, sharp=True), "sharp needs InfiniBand"),
    (lambda: gpu_cluster("p4d", 2, options={"gpus": 4}), "takes no options"),
    (lambda: dgx_h100(nodes=0), "dgx_h100: nodes must be"),
    (lambda: pcie_box(sockets=9), "sockets=9 is more than gpus=8"),
    (lambda: pcie_box(gpu="TPU"), "gpu must be one of"),
    (lambda: pcie_tree(p2p="yes"), "p2p must be True or False"),
])
def test_bad_cluster_arguments_are_named(call, message):
    with pytest.raises(TopologyError, match=message):
        call()


def test_new_builders_are_registered():
    for name in ("pcie_box", "hgx_h200", "gpu_cluster"):
        assert name in topologies.BUILDERS and callable(getattr(topologies, name))
    assert math.isclose(links.technology("EFA").bandwidth, 100 * GBIT)


def one_message_time(G, src, dst, nbytes):
    b = netsim.TraceBuilder(2)
    b.message(0, 1, nbytes)
    return netsim.simulate(b.build(), G, placement=[src, dst]).makespan


@pytest.mark.parametrize("build, src, dst, hops, per_direction", [
    (dgx1, "gpu0", "gpu3", 1, 2 * 25e9),      # NV2: two NVLink2 of 25 GB/s, bandwidth is the sum
    (dgx_h100, "gpu0", "gpu1", 2, 18 * 25e9),  # 18 NVLink4 into the NVSwitch, 450 GB/s per GPU
])
def test_bundled_edges_carry_their_bandwidth_once(build, src, dst, hops, per_direction):
    # An edge's `bandwidth` is the whole bundle and `links` only counts its physical links: a
    # lone message takes hops x 100 ns + n / (links x one link's rate), not k times faster.
    n = 10**9
    expected = hops * 100e-9 + n / per_direction
    assert one_message_time(build(), src, dst, n) == pytest.approx(expected, rel=1e-9)
