"""Today's machines: counts worked by hand, NVLink bandwidth read back against datasheets,
and a one-line error naming the limit for every bad option."""

import networkx as nx
import pytest

from netsim.errors import NcclModelError, TopologyError
from topologies import (
    dgx_b200,
    gb200_nvl72,
    gb300_nvl72,
    gpu_cluster,
    hgx_h800,
    l40s_box,
    mi300x,
)


def _per_gpu_nvlink_both_ways(G, gpu="gpu0"):
    """Bytes/s a GPU's NVLink edges carry, summed, both directions (as datasheets print)."""
    return 2 * sum(d["bandwidth"] for _, _, d in G.edges(gpu, data=True)
                   if d["technology"].startswith(("NVLink", "NVSwitch", "InfinityFabric")))


@pytest.mark.parametrize("build, datasheet_both_ways", [
    (dgx_b200, 1.8e12),      # Blackwell datasheet: fifth-generation NVLink, 1.8 TB/s
    (hgx_h800, 400e9),       # H800: NVLink 400 GB/s
    (gb200_nvl72, 1.8e12),   # GB200 NVL72: 1.8 TB/s per GPU
    (gb300_nvl72, 1.8e12),   # GB300 NVL72: 1.8 TB/s per GPU
    (mi300x, 896e9),         # MI300X platform: 7 Infinity Fabric links x 128 GB/s
])
def test_per_gpu_scale_up_bandwidth_is_the_datasheets(build, datasheet_both_ways):
    assert _per_gpu_nvlink_both_ways(build()) == pytest.approx(datasheet_both_ways)


def test_nvl72_rack_aggregate_is_130_tb_per_s():
    # NVIDIA: 130 TB/s of NVLink in the rack = 72 GPUs x 1.8 TB/s (129.6, printed rounded).
    G = gb200_nvl72()
    total = 2 * sum(d["bandwidth"] for _, _, d in G.edges(data=True))
    assert total == pytest.approx(72 * 1.8e12)
    assert G.nodes["nvswitch0"]["physical_switches"] == 18   # 9 switch trays x 2 chips
    assert G.nodes["nvswitch0"]["nvls"] is True
    assert sorted({G.nodes[f"gpu{i}"]["tray"] for i in range(72)}) == list(range(18))


@pytest.mark.parametrize("nvl", [4, 36, 72])
def test_nvl_rack_counts(nvl):
    G = gb200_nvl72(nvl=nvl)
    assert (G.number_of_nodes(), G.number_of_edges()) == (nvl + 1, nvl)
    assert nx.is_tree(G)


def test_two_racks_on_rails_worked_by_hand():
    # A rack with its NICs: 36 GPUs + 1 switch + 36 PCIe switches + 36 NICs = 109 nodes and
    # 36 NVLink + 36 GPU-PCIe + 36 NIC-PCIe = 108 edges; 2 racks, 36 rails, 1 spine:
    # 2 x 109 + 36 + 1 = 255 nodes, 2 x 108 + 2 x 36 (NIC-rail) + 36 (rail-spine) = 324 edges.
    G = gpu_cluster("gb200_nvl72", 2, options={"nvl": 36})
    assert (G.number_of_nodes(), G.number_of_edges()) == (255, 324)
    assert G.nodes["gpu36"]["node"] == 1 and G.nodes["gpu36"]["tray"] == 0
    assert G.edges["rail5", "spine"]["links"] == 2


@pytest.mark.parametrize("machine, nics, tech, gbps", [
    ("dgx_b200", 8, "NDR", 400), ("hgx_b200", 8, "NDR", 400), ("dgx_h200", 8, "NDR", 400),
    ("p5en", 16, "EFAv3", 200), ("hgx_h800", 8, "NDR", 400), ("a3", 4, "200GbE", 200),
    ("a3_mega", 8, "200GbE", 200), ("mi300x", 8, "NDR", 400),
    ("gb200_nvl72", 72, "NDR", 400), ("gb300_nvl72", 72, "XDR", 800),
])
def test_cluster_nics_are_the_vendors(machine, nics, tech, gbps):
    G = gpu_cluster(machine, 2)
    mine = [n for n, d in G.nodes(data=True) if d["kind"] == "nic" and d["node"] == 0]
    assert len(mine) == nics
    assert G.edges["n0.nic0", "rail0"]["technology"] == tech
    assert G.edges["n0.nic0", "rail0"]["bandwidth"] == gbps * 1e9 / 8


def test_eight_gpu_machines_worked_by_hand():
    # One 8-GPU machine with NICs on 4 PCIe switches (2 GPUs each): 8 + 1 + 4 + R nodes.
    G = gpu_cluster("p5en", 1)   # R = 16: 29 nodes; 8 NVSwitch + 8 GPU-PCIe + 16 NIC-PCIe
    assert sum(1 for n in G if n.startswith("n0.")) == 1 + 4 + 16
    # the rail network of one machine: 16 rails + spine, 16 NIC-rail and 16 rail-spine edges
    assert (G.number_of_nodes(), G.number_of_edges()) == (29 + 17, 32 + 32)


def test_mi300x_is_the_complete_graph_and_nccl_refuses_it():
    G = mi300x()
    assert nx.is_isomorphic(G, nx.complete_graph(8))
    assert all(d["links"] == 1 for _, _, d in G.edges(data=True))
    from netsim import nccl
    with pytest.raises(NcclModelError, match="names model 'MI300X' but not its compute"):
        nccl.simulate(G, "allreduce", 1 << 20)


def test_l40s_box_has_no_nvlink():
    G = l40s_box()
    techs = {d["technology"] for _, _, d in G.edges(data=True)}
    assert techs == {"PCIe-gen4-x16", "UPI"}
    assert (G.number_of_nodes(), G.number_of_edges()) == (8 + 4 + 2, 8 + 4 + 1)


def test_nccl_runs_nvls_with_32_heads_on_one_nvl72_domain():
    # NCCL v2.30.7-1 search.cc: NVLS maxChannels = min(NCCL_MAX_NVLS_ARITY = 32, GPUs).
    from netsim import nccl
    plan = nccl.simulate(gb200_nvl72(), "allreduce", 1 << 30).plan
    assert (plan.algorithm, plan.channels) == ("nvls", 32)


def test_nccl_keeps_nvls_at_large_sizes_on_one_nvl72_domain():
    # v2.30.7-1 tuning.cc, the NVLS graph of search.cc (32 channels, bwIntra 20, bwInter 40
    # after pass 2): 32 x min(20 x 0.74 x 31/32 x 2, 40) x 72/142 = 465.2 GB/s against the
    # ring's 16 x 45 x 72/142 = 365.1 GB/s, so NVLS at every large size.
    from netsim import nccl
    for size in (1 << 31, 1 << 33):
        assert nccl.simulate(gb200_nvl72(), "allreduce", size).plan.algorithm == "nvls"


@pytest.mark.parametrize("call, limit", [
    (lambda: gb200_nvl72(nvl=30), "nvl (GPUs in the NVLink domain) must be a multiple of 4"),
    (lambda: gb300_nvl72(nvl=76), "from 4 to 72 (18 trays), got 76"),
    (lambda: gb200_nvl72(nvl="72"), "got '72'"),
    (lambda: gb200_nvl72(nodes=0), "gb200_nvl72: nodes (NVLink domains) must be an integer >= 1"),
    (lambda: gb300_nvl72(nodes=2, nic="NVLink5"), "nic must be a network technology"),
    (lambda: gb200_nvl72(nodes=2, network="torus"), "network must be one of rail, fat_tree"),
    (lambda: dgx_b200(nodes=0), "dgx_b200: nodes must be an integer >= 1"),
    (lambda: hgx_h800(nodes=1.5), "hgx_h800: nodes must be an integer"),
    (lambda: mi300x(nodes=-1), "mi300x: nodes must be an integer >= 1"),
    (lambda: l40s_box(gpus_per_switch=5), "l40s_box: gpus_per_switch (GPUs per PCIe switch) must "
                                          "be an integer in 1..4"),
    (lambda: l40s_box(p2p="yes"), "l40s_box: p2p must be True or False"),
    (lambda: gpu_cluster("a3", 2, options={"nvl": 36}), "machine a3 takes no options"),
    (lambda: gpu_cluster("gb200_nvl72", 2, options={"gpus": 4}), "takes only the options nvl"),
    (lambda: gpu_cluster("gb200_nvl72", 2, options={"nvl": 80}), "from 4 to 72"),
])
def test_bad_option_is_one_line_naming_the_limit(call, limit):
    with pytest.raises(TopologyError) as err:
        call()
    assert limit in str(err.value) and "\n" not in str(err.value)


def test_p5en_network_latency_is_the_efa_plugins_35_us():
    # aws-ofi-nccl src/platform-aws.cpp: p5en reports 35 us to NCCL, p5 75 us.
    from netsim.comm.nccl import hardware
    G = gpu_cluster("p5en", 2)
    nics = [n for n, d in G.nodes(data=True) if d["kind"] == "nic"]
    assert hardware.net_latency(G, nics) == 35e-6
    P5 = gpu_cluster("p5", 2)
    assert hardware.net_latency(P5, [n for n, d in P5.nodes(data=True) if d["kind"] == "nic"]) \
        == 75e-6
