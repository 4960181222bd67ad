"""netsim.nccl.simulate against hand-worked times on small plain graphs.

Every expected time is written out here from NCCL's cited constants
(netsim.comm.nccl.tuning: baseLat, hwLat; topo.h NVLink and PCIe figures) and the
bytes each link must carry; the simulation must reproduce it.
"""

import networkx as nx
import pytest

from netsim import nccl
from netsim.comm.nccl import hardware, model, tuning
from netsim.comm.nccl import NcclModelError
from topologies.devices import compute_capability

US = 1e-6
RING, TREE = tuning.NCCL_ALGO_ORDER.index("ring"), tuning.NCCL_ALGO_ORDER.index("tree")
NVL, PCI, NET = 0, 1, 2
EFF_V100 = tuning.nvlink_bw(70) / 25e9          # NCCL's 20 GB/s of a 25 GB/s NVLink2


def ring_latency(n, protocol, hw=NVL, steps=None):
    """tuning.cc: baseLat + nsteps x hwLat for a ring on one node (us -> s)."""
    p = tuning.PROTOCOLS.index(protocol)
    steps = 2 * (n - 1) if steps is None else steps
    return (tuning.BASE_LAT_US[RING][p] + steps * tuning.HW_LAT_US[hw][RING][p]) * US


def mesh(n, edges, model="V100", bw=25e9):
    G = nx.Graph()
    G.add_nodes_from((f"g{i}" for i in range(n)), kind="gpu", model=model, sm=compute_capability(model))
    for a, b in edges:
        G.add_edge(f"g{a}", f"g{b}", bandwidth=bw, latency=0.0)
    return G


def switch_box(n, model="H100", port=450e9, nvls=True):
    G = nx.Graph()
    G.add_nodes_from((f"g{i}" for i in range(n)), kind="gpu", model=model, sm=compute_capability(model))
    G.add_node("sw", kind="nvswitch", nvls=nvls)
    G.add_edges_from(((f"g{i}", "sw") for i in range(n)), bandwidth=port, latency=0.0)
    return G


@pytest.mark.parametrize("protocol", ["LL", "LL128", "Simple"])
def test_two_gpus_on_one_nvlink(protocol):
    G = mesh(2, [(0, 1)])
    S = 2**28
    r = nccl.simulate(G, "allreduce", S, algorithm="ring", protocol=protocol, channels=1)
    wire = {"LL": 2.0, "LL128": 16 / 15, "Simple": 1.0}[protocol]
    want = ring_latency(2, protocol) + S * 2 * (2 - 1) / 2 * wire / (25e9 * EFF_V100)
    assert r.makespan == pytest.approx(want, rel=1e-9)
    assert r.plan.algbw == pytest.approx(S / r.makespan)
    assert r.plan.busbw == pytest.approx(r.plan.algbw * 1.0)   # 2(n-1)/n = 1 for n = 2


def test_channels_over_link_disjoint_rings_divide_the_bandwidth_term():
    # K5 holds two edge-disjoint Hamiltonian cycles; each runs both ways: 4 rings.
    G = mesh(5, [(a, b) for a in range(5) for b in range(a + 1, 5)])
    S = 2**28
    times = {}
    for c in (1, 2, 4):
        r = nccl.simulate(G, "allreduce", S, algorithm="ring", protocol="Simple", channels=c)
        times[c] = r.makespan - ring_latency(5, "Simple")
    one = S * 2 * 4 / 5 / (25e9 * EFF_V100)
    assert times[1] == pytest.approx(one, rel=1e-9)
    assert times[2] == pytest.approx(one / 2, rel=1e-9)
    assert times[4] == pytest.approx(one / 4, rel=1e-9)
    assert len(hardware.rings(G, hardware.describe(G), 0, 4)) == 4


def test_dgx1_rings_spread_over_every_nvlink():
    # The DGX-1 cube-mesh: 6 NVLinks per GPU, NCCL's search gives 6 channels.
    pairs = {(0, 1): 1, (0, 2): 1, (0, 3): 2, (0, 4): 2, (1, 2): 2, (1, 3): 1, (1, 5): 2,
             (2, 3): 2, (2, 6): 1, (3, 7): 1, (4, 5): 1, (4, 6): 1, (4, 7): 2, (5, 6): 2,
             (5, 7): 1, (6, 7): 2}
    G = mesh(8, [])
    for (a, b), k in pairs.items():
        G.add_edge(f"g{a}", f"g{b}", bandwidth=k * 25e9, latency=0.0)
    S = 6 * 2**24
    r = nccl.simulate(G, "allreduce", S, algorithm="ring", protocol="Simple")
    assert r.plan.channels == 6
    per_ring = S / 6 * 2 * 7 / 8
    links = r.links
    for i in range(len(links["src"])):
        a, b = int(links["src"][i][1:]), int(links["dst"][i][1:])
        assert links["bytes"][i] == pytest.approx(pairs[min(a, b), max(a, b)] * per_ring)
    # Every link direction carries one ring per NVLink: the time is one ring's on one link.
    want = ring_latency(8, "Simple") + per_ring / (25e9 * EFF_V100)
    assert r.makespan == pytest.approx(want, rel=1e-9)


def pcie_pair(p2p):
    G = nx.Graph()
    G.add_nodes_from(["g0", "g1"], kind="gpu", model="A100", sm=80, p2p=p2p)
    G.add_node("sw", kind="pcie_switch"); G.add_node("cpu", kind="cpu")
    G.add_edges_from([("g0", "sw"), ("g1", "sw"), ("sw", "cpu")], bandwidth=16e9, latency=0.0)
    return G


def test_without_p2p_every_byte_goes_through_the_cpu():
    S = 2**26
    fast = nccl.simulate(pcie_pair(True), "allreduce", S, algorithm="ring", protocol="Simple")
    slow = nccl.simulate(pcie_pair(False), "allreduce", S, algorithm="ring", protocol="Simple")
    eff = 16e9 * hardware.PCIE_EFFICIENCY
    lat = ring_latency(2, "Simple", hw=PCI)
    # P2P: each GPU sends S/1 through the switch, one PCIe hop each way.
    assert fast.makespan == pytest.approx(lat + S / eff, rel=1e-9)
    # SHM: both GPUs write S up the one switch-CPU link: 2S in that direction.
    assert slow.makespan == pytest.approx(lat + 2 * S / eff, rel=1e-9)
    up = [i for i in range(len(slow.links["src"]))
          if (slow.links["src"][i], slow.links["dst"][i]) == ("sw", "cpu")]
    assert slow.links["bytes"][up[0]] == pytest.approx(2 * S)
    assert fast.links["bytes"][[i for i in range(len(fast.links["src"]))
                                if fast.links["src"][i] == "sw"
                                and fast.links["dst"][i] == "cpu"][0]] == 0


def two_machines(gpus=1, nic_bw=12.5e9, nvls=False, model="A100", tech="HDR"):
    G = nx.Graph()
    for m in range(2):
        G.add_nodes_from((f"m{m}g{i}" for i in range(gpus)), kind="gpu", model=model, sm=compute_capability(model), node=m)
    for m in range(2):
        if gpus > 1:
            G.add_node(f"m{m}sw", kind="nvswitch", nvls=nvls)
            for i in range(gpus):
                G.add_edge(f"m{m}g{i}", f"m{m}sw", bandwidth=300e9, latency=0.0)
        G.add_node(f"m{m}pci", kind="pcie_switch"); G.add_node(f"m{m}nic", kind="nic")
        G.add_edge(f"m{m}g0", f"m{m}pci", bandwidth=64e9, latency=0.0)
        G.add_edge(f"m{m}nic", f"m{m}pci", bandwidth=64e9, latency=0.0)
        G.add_edge(f"m{m}nic", "leaf", bandwidth=nic_bw, latency=0.0, technology=tech)
    G.nodes["leaf"]["kind"] = "switch"
    return G


def test_tree_across_two_machines_moves_each_byte_once_each_way():
    G = two_machines()
    S = 2**28
    # Double binary tree of 2 nodes: each node's head sends S/C up (reduce) or down
    # (broadcast) per channel, S in all, through its one NIC in each direction. NCCL's model
    # gives the tree 1 channel x 24 GB/s x 0.92 / 2 = 11.04 GB/s and, at 256 MiB
    # (log2(S / 64) = 22), treeCorrectionFactor[Simple][22] = 0.9 of it: the call also waits
    # S / 11.04 GB/s x (1 / 0.9 - 1). Forced on 2 channels, each held to that 11.04 GB/s
    # (22.08 together), the 12.5 GB/s NIC is what binds.
    r = nccl.simulate(G, "allreduce", S, algorithm="tree", protocol="Simple", channels=2)
    comm = tuning.Comm(2, 2, 80, {"tree": tuning.Graph(1, 1e9, 1e9)})
    lat = tuning.latency(comm, "allreduce", "tree", "Simple")
    assert tuning.bandwidth(model.setup(G).comm, "allreduce", "tree", "Simple") == \
        pytest.approx(11.04e9, rel=1e-12)
    assert r.makespan == pytest.approx(lat + S / 12.5e9 + S / 11.04e9 * (1 / 0.9 - 1), rel=1e-9)
    assert r.plan.nodes == 2 and r.plan.algorithm == "tree" and r.plan.channels == 2


def test_a_tree_channel_moves_its_share_at_nccls_own_tree_rate():
    # On the search's one channel, NCCL's tree figure (11.04 GB/s of algbw) is below the
    # 12.5 GB/s NIC: the channel's share moves at it, every flow of the channel held to it
    # times the part of the share the flow carries (half on each tree's network edge).
    G = two_machines()
    S = 2**28
    r = nccl.simulate(G, "allreduce", S, algorithm="tree", protocol="Simple")
    comm = tuning.Comm(2, 2, 80, {"tree": tuning.Graph(1, 1e9, 1e9)})
    lat = tuning.latency(comm, "allreduce", "tree", "Simple")
    assert r.plan.channels == 1
    assert r.makespan == pytest.approx(lat + S / 11.04e9 + S / 11.04e9 * (1 / 0.9 - 1), rel=1e-9)


def test_the_efa_plugins_latency_is_added_to_every_inter_node_step():
    # aws-ofi-nccl reports 75 us (ncclNetProperties.latency); tuning.cc adds it to the
    # NET hwLat of every inter-node step. Two machines of 2 GPUs, tree LL, 8 bytes:
    # baseLat 6.8 + 2 x (1 intra step x 0.6 + 1 inter step x (5.0 + 75)) us.
    # NCCL's own IB plugin reports none, so the HDR pair pays 5.0 per inter step.
    tree_ll = (TREE, tuning.PROTOCOLS.index("LL"))
    base, intra = tuning.BASE_LAT_US[tree_ll[0]][tree_ll[1]], tuning.HW_LAT_US[NVL][TREE][0]
    net = tuning.HW_LAT_US[NET][TREE][0]
    for tech, plugin in (("EFA", 75.0), ("HDR", 0.0)):
        r = nccl.simulate(two_machines(gpus=2, tech=tech), "allreduce", 8,
                          algorithm="tree", protocol="LL")
        assert r.plan.latency == pytest.approx((base + 2 * (intra + net + plugin)) * US)
        assert (base, intra, net) == (6.8, 0.6, 5.0)
    assert hardware.net_latency(two_machines(tech="EFA"), ["m0nic"]) == 75e-6


def test_ring_across_two_machines_crosses_each_nic_once_per_channel():
    G = two_machines(gpus=2)
    S = 2**28
    r = nccl.simulate(G, "allreduce", S, algorithm="ring", protocol="Simple", channels=2)
    comm = tuning.Comm(4, 2, 80, {"ring": tuning.Graph(2, 1e9, 1e9, latency_inter=0.0)})
    lat = tuning.latency(comm, "allreduce", "ring", "Simple")
    # Each channel's ring crosses from machine 0 to 1 once and back once: per NIC
    # direction 2 channels x S/2 x 2(n-1)/n = 1.5 S. The latency is NCCL's times its ring
    # "plateau" factor, 1.4 on sm >= 80 for an inter-node Simple ring allreduce of >= 64 B
    # per rank-channel (ncclTopoGetAlgoTime, v2.30.7-1).
    assert r.makespan == pytest.approx(1.4 * lat + 1.5 * S / 12.5e9, rel=1e-9)


def test_nvls_moves_one_and_an_eighth_of_the_buffer_each_way_at_nvls_efficiency():
    # Forced on 16 channels, twice the search's 8, each channel's own rate (the next test)
    # adds up to twice NCCL's figure, so the port binds: 9/8 of the buffer each way.
    G = switch_box(8)
    S = 2**30
    r = nccl.simulate(G, "allreduce", S, channels=16)
    assert (r.plan.algorithm, r.plan.protocol, r.plan.channels) == ("nvls", "Simple", 16)
    port = 450e9 * tuning.nvlink_bw(90) / 25e9
    lat = tuning.HW_LAT_US[NVL][tuning.NCCL_ALGO_ORDER.index("nvls")][2] * US
    want = lat + S * 9 / 8 / (port * nccl.model.NVLS_EFFICIENCY[90])
    assert r.makespan == pytest.approx(want, rel=1e-9)


def test_nvls_channels_run_at_nccls_own_nvls_bandwidth_per_channel():
    # NCCL's search on 18 NVLinks at 20.6 GB/s finds 8 NVLS channels at bwIntra 40 and
    # bwInter 60 GB/s (9 x 40 fits the 370.8 GB/s port); tuning.cc gives each channel
    # min(bwIntra x 0.85 x (8 - 1) / 8 x 2, bwInter) = 59.5 GB/s of busbw, 8/14 of it
    # algbw. The channels together (272 GB/s) are below the port's 370.8 x 0.85 x 8/9
    # (280.2 GB/s), so they set the time.
    G = switch_box(8)
    S = 2**30
    r = nccl.simulate(G, "allreduce", S)
    assert (r.plan.algorithm, r.plan.channels) == ("nvls", 8)
    per_channel = min(40e9 * 0.85 * 7 / 8 * 2, 60e9) * 8 / 14
    lat = tuning.HW_LAT_US[NVL][tuning.NCCL_ALGO_ORDER.index("nvls")][2] * US
    assert r.makespan == pytest.approx(lat + S / (8 * per_channel), rel=1e-9)


def test_alltoall_posts_every_peer_at_once():
    G = switch_box(4, model="A100", port=300e9, nvls=False)
    S = 2**28
    r = nccl.simulate(G, "alltoall", S)
    port = 300e9 * tuning.nvlink_bw(80) / 25e9
    p = tuning.PROTOCOLS.index("Simple")
    lat = (tuning.BASE_LAT_US[RING][p] + tuning.HW_LAT_US[NVL][RING][p]) * US
    # Each GPU sends 3 of its 4 slices out of its port, all at once.
    assert r.makespan == pytest.approx(lat + S * 3 / 4 / port, rel=1e-9)
    assert r.plan.algorithm == "p2p" and r.plan.busbw == pytest.approx(r.plan.algbw * 3 / 4)


@pytest.mark.parametrize("op, hops, factor", [
    ("allgather", 4, 3 / 4), ("reduce_scatter", 4, 3 / 4), ("broadcast", 3, 1.0),
    ("reduce", 3, 1.0), ("sendrecv", 4, 1.0)])
def test_other_ops_carry_the_bytes_nccl_tests_counts(op, hops, factor):
    G = switch_box(4, model="A100", port=300e9, nvls=False)
    S = 2**28
    r = nccl.simulate(G, op, S, protocol="Simple", channels=1)
    per_hop = S * (factor if op in ("allgather", "reduce_scatter") else 1.0)
    up = [i for i in range(len(r.links["src"])) if r.links["dst"][i] == "sw"]
    assert sum(r.links["bytes"][i] for i in up) == pytest.approx(hops * per_hop)
    assert r.plan.busbw == pytest.approx(r.plan.algbw * nccl.bus_factor(op, 4))


def test_default_ranks_are_the_gpus_in_graph_order_and_the_plan_is_read_only():
    G = switch_box(4, model="A100", port=300e9, nvls=False)
    r = nccl.simulate(G, "allreduce", 2**20)
    assert r.plan.ranks == 4 and r.plan.nodes == 1
    assert list(r.ranks["node"][:4]) == ["g0", "g1", "g2", "g3"]
    with pytest.raises(AttributeError):
        r.plan.channels = 3
    sub = nccl.simulate(G, "allreduce", 2**20, ranks=["g2", "g0"])
    assert sub.plan.ranks == 2


@pytest.mark.parametrize("call, match", [
    (lambda: nccl.simulate(switch_box(4, nvls=False), "allreduce", 8, algorithm="nvls"),
     "NVSwitch with nvls=True"),
    (lambda: nccl.simulate(mesh(2, [(0, 1)]), "allreduce", 8, algorithm="nvls"), "nvls"),
    (lambda: nccl.simulate(switch_box(4), "allreduce", 8, algorithm="tree"), "across machines"),
    (lambda: nccl.simulate(two_machines(), "allreduce", 8, algorithm="nvls"), "nvls"),
    (lambda: nccl.simulate(switch_box(4), "allscatter", 8), "unknown op"),
    (lambda: nccl.simulate(switch_box(4), "allreduce", 8, algorithm="bruck"), "unknown algorithm"),
    (lambda: nccl.simulate(switch_box(4), "allreduce", 8, protocol="LL64"), "unknown protocol"),
    (lambda: nccl.simulate(switch_box(4), "allreduce", 8, channels=0), "channels"),
    (lambda: nccl.simulate(switch_box(4), "allreduce", 0), "nbytes"),
    (lambda: nccl.simulate(switch_box(4), "allreduce", 8, ranks=["g0", "sw"]), "not a gpu"),
    (lambda: nccl.simulate(switch_box(4), "allreduce", 8, ranks=["g0"]), ">= 2"),
    (lambda: nccl.simulate(switch_box(4), "alltoall", 8, algorithm="ring"), "p2p"),
    (lambda: nccl.simulate(pcie_pair(False), "allreduce", 8, algorithm="nvls"), "peer-to-peer"),
])
def test_bad_input_names_what_is_missing(call, match):
    with pytest.raises(NcclModelError, match=match):
        call()


def test_several_machines_without_nics_is_an_error():
    G = mesh(2, [(0, 1)])
    G.nodes["g1"]["node"] = 1
    with pytest.raises(NcclModelError, match="no nic"):
        nccl.simulate(G, "allreduce", 8)


def test_link_classes_from_technology_or_kinds():
    G = two_machines(gpus=2)
    assert hardware.link_class(G, "m0g0", "m0sw") == "nvlink"
    assert hardware.link_class(G, "m0g0", "m0pci") == "pci"
    assert hardware.link_class(G, "m0nic", "leaf") == "net"
    hw = hardware.describe(G)
    assert hw.machines == ((0, 1), (2, 3)) and hw.nics == (("m0nic",), ("m1nic",))
    assert hw.rail_gpu == ((0,), (2,))


def test_alltoall_across_two_dgx_h100_stays_on_the_rails():
    from topologies import gpu_cluster

    G = gpu_cluster("dgx_h100", 2)
    S = 2**28
    r = nccl.simulate(G, "alltoall", S)
    links = r.links
    nic_up = [links["bytes"][i] for i in range(len(links["src"]))
              if links["src"][i].startswith("n0.nic") and links["dst"][i].startswith("rail")]
    # Each GPU sends S/16 to each of the 8 GPUs of the other machine through its own NIC.
    assert len(nic_up) == 8 and all(b == pytest.approx(8 * S / 16) for b in nic_up)
    spine = [links["bytes"][i] for i in range(len(links["src"])) if "spine" in
             (links["src"][i], links["dst"][i])]
    assert sum(spine) == 0


def test_an_edge_without_bandwidth_is_a_topology_error():
    from netsim import TopologyError

    G = mesh(2, [(0, 1)])
    del G.edges["g0", "g1"]["bandwidth"]
    with pytest.raises(TopologyError, match="bandwidth"):
        nccl.simulate(G, "allreduce", 8)


def four_machines(sharp):
    """One GPU and one 12.5 GB/s NIC per machine, on one switch (SHARP or not)."""
    G = nx.Graph()
    G.add_nodes_from((f"g{m}" for m in range(4)), kind="gpu", model="A100", sm=80)
    for m in range(4):
        G.nodes[f"g{m}"]["node"] = m
        G.add_node(f"nic{m}", kind="nic")
        G.add_edge(f"g{m}", f"nic{m}", bandwidth=64e9, latency=0.0)
        G.add_edge(f"nic{m}", "leaf", bandwidth=12.5e9, latency=0.0, technology="HDR")
    G.nodes["leaf"].update(kind="switch", sharp=sharp)
    return G


def test_double_binary_tree_over_four_machines():
    # One GPU and one NIC per machine on one switch. trees.cc's trees over 4 nodes:
    # tree 0 parents (-1, 2, 0, 2), tree 1 (mirror) (1, 3, 1, -1). Per channel each tree edge
    # carries S/C up and S/C down; with one channel per tree, machine 2 (inner in tree 0, a
    # leaf in tree 1) sends 3 S/2 + S/2 = 2 S through its NIC, as does machine 1.
    assert hardware.btree_parents(4) == [-1, 2, 0, 2]
    assert hardware.btree_parents(4, mirror=True) == [1, 3, 1, -1]
    G = four_machines(sharp=False)
    S = 2**28
    r = nccl.simulate(G, "allreduce", S, algorithm="tree", protocol="Simple", channels=2)
    comm = tuning.Comm(4, 4, 80, {"tree": tuning.Graph(2, 1e9, 1e9)})
    lat = tuning.latency(comm, "allreduce", "tree", "Simple")
    # NCCL's tree bandwidth beyond 2 nodes: 1 channel x bwInter 12 GB/s x 0.92 / 2 = 5.52
    # GB/s, of which treeCorrectionFactor[Simple][22] = 0.9 at 256 MiB: the call waits
    # S / 5.52 GB/s x (1 / 0.9 - 1) beside its flows.
    assert tuning.bandwidth(model.setup(G).comm, "allreduce", "tree", "Simple") == \
        pytest.approx(5.52e9, rel=1e-12)
    assert r.makespan == pytest.approx(lat + 2 * S / 12.5e9 + S / 5.52e9 * (1 / 0.9 - 1),
                                       rel=1e-9)
    out = {r.links["src"][i]: r.links["bytes"][i] for i in range(len(r.links["src"]))
           if r.links["dst"][i] == "leaf"}
    assert out == pytest.approx({"nic0": S, "nic1": 2 * S, "nic2": 2 * S, "nic3": S})


def test_collnet_chain_sends_each_byte_once_each_way_through_every_nic():
    # SHARP: each machine's head sends S/C per channel to the switch, which reduces and
    # returns S/C: every NIC carries S each way whatever the machine count (the double
    # binary tree above puts 2 S through the inner machines' NICs). Latency (tuning.cc of
    # NCCL v2.30.7-1): 2 (ppn - 1) intraLat + interLat = 0 + 14 us, since at one rank per
    # node interLat is the tree's hwLatencies[NET][TREE][SIMPLE] ("fully exposed").
    S = 2**28
    r = nccl.simulate(four_machines(True), "allreduce", S, algorithm="collnet_chain")
    assert (r.plan.algorithm, r.plan.protocol) == ("collnet_chain", "Simple")
    assert r.plan.latency == pytest.approx(14 * US)
    assert r.makespan == pytest.approx(14 * US + S / 12.5e9, rel=1e-9)
    out = {r.links["src"][i]: r.links["bytes"][i] for i in range(len(r.links["src"]))
           if r.links["dst"][i] == "leaf"}
    assert out == pytest.approx({f"nic{m}": S for m in range(4)})
    # NCCL's own choice takes it for large sizes: 0.5 x C x bwIntra against the tree's
    # 0.5 x 0.92 x C x bwInter (more than two nodes), with no slower latency to pay back.
    assert nccl.simulate(four_machines(True), "allreduce", S).plan.algorithm == "collnet_chain"
    assert nccl.simulate(four_machines(False), "allreduce", S).plan.algorithm != "collnet_chain"


def test_pat_allgather_moves_bruck_volume_through_every_nic():
    # One GPU per machine: NCCL v2.30.7-1 enables PAT (ncclPatEnable). Its peers sit 2**d
    # ranks away; over four machines dimension 1 carries S/4 and dimension 2 S/2 out of
    # every NIC (Bruck's allgather volume, (n-1)/n S in all), so each 12.5 GB/s uplink
    # stays busy for 3/4 S / 12.5 GB/s after NCCL's PAT latency.
    S = 2**28
    for op in ("allgather", "reduce_scatter"):
        r = nccl.simulate(four_machines(False), op, S, algorithm="pat")
        assert (r.plan.algorithm, r.plan.protocol) == ("pat", "Simple")
        assert r.makespan == pytest.approx(r.plan.latency + 0.75 * S / 12.5e9, rel=1e-9)
        out = {r.links["src"][i]: r.links["bytes"][i] for i in range(len(r.links["src"]))
               if r.links["dst"][i] == "leaf"}
        assert out == pytest.approx({f"nic{m}": 0.75 * S for m in range(4)})
    with pytest.raises(NcclModelError, match="pat runs allgather and reduce_scatter"):
        nccl.simulate(four_machines(False), "allreduce", S, algorithm="pat")


def test_collnet_chain_tuning_follows_tuning_cc():
    # Two nodes of 8 H100, CollNet chain graph of 8 channels at bwIntra 48 GB/s: busBw
    # 8 x 48 (bwIntra at any node count), algbw half of it; latency 2 x 7 x hwLat
    # NVLink CollNetChain/Simple 2.8 + hwLat NET 30 us (baseLat 0). Allreduce and Simple only.
    comm = tuning.Comm(16, 2, 90, {"collnet_chain": tuning.Graph(8, 48e9, 24e9)})
    assert tuning.bandwidth(comm, "allreduce", "collnet_chain", "Simple") == pytest.approx(192e9)
    assert tuning.latency(comm, "allreduce", "collnet_chain", "Simple") == pytest.approx(
        (2 * 7 * 2.8 + 30) * US)
    assert tuning.bandwidth(comm, "allreduce", "collnet_chain", "LL") == 0.0
    assert tuning.bandwidth(comm, "allgather", "collnet_chain", "Simple") == 0.0


def test_collnet_chain_needs_sharp_switches():
    with pytest.raises(NcclModelError, match="collnet_chain needs network switches with sharp"):
        nccl.simulate(four_machines(False), "allreduce", 2**20, algorithm="collnet_chain")


@pytest.mark.parametrize("kw, match", [
    (dict(op="allgather", algorithm="tree"), "no tree"),
    (dict(op="allreduce", algorithm="nvls_tree", protocol="LL"), "no nvls_tree with LL"),
    (dict(op="broadcast", algorithm="nvls_tree"), "no nvls_tree"),
])
def test_combinations_nccl_does_not_run_are_refused(kw, match):
    G = two_machines(gpus=2, nvls=True, model="H100")
    with pytest.raises(NcclModelError, match=match):
        nccl.simulate(G, kw.pop("op"), 2**20, **kw)


@pytest.mark.parametrize("machine, nodes, op", [
    ("p4d", 4, "alltoall"), ("p5", 2, "allgather"), ("p5", 2, "reduce_scatter"),
    ("p4d", 4, "allreduce")])
def test_a_tiny_call_over_many_ranks_moves_whole_bytes(machine, nodes, op):
    # 8 bytes over 32 ranks (alltoall) or over p5's 16 rail channels split into less than a
    # byte a flow; each flow that moves data moves at least one byte (it used to be a
    # TraceError), so the call is latency-bound: a few bytes at GB/s and 0.1 us of wire
    # latency a hop on top of the latency charged.
    import numpy as np
    from topologies import gpu_cluster
    r = nccl.simulate(gpu_cluster(machine, nodes), op, 8)
    assert 0 < r.makespan - r.plan.latency < 5 * US
    carried = np.asarray(r.links["messages"]) > 0
    assert (np.asarray(r.links["bytes"])[carried] >= np.asarray(r.links["messages"])[carried]).all()


def test_a_gpu_that_names_a_model_but_not_its_sm_is_refused():
    # The core keeps no table of GPU products (topologies.devices does): a node that says
    # model="H100" without sm would otherwise be read as the default sm 80, silently wrong.
    G = nx.Graph()
    G.add_nodes_from(["g0", "g1"], kind="gpu", model="H100")
    G.add_edge("g0", "g1", bandwidth=25e9, latency=1e-6)
    with pytest.raises(nccl.NcclModelError, match="names model 'H100' but not its compute"):
        nccl.simulate(G, "allreduce", 1 << 20)
    nx.set_node_attributes(G, compute_capability("H100"), "sm")
    assert nccl.simulate(G, "allreduce", 1 << 20).makespan > 0


def test_nvls_needs_two_of_the_groups_gpus_on_a_machine():
    # ncclNvlsInit (transport/nvls.cc, NCCL v2.30.7-1) returns with nvlsSupport = 0 when the
    # communicator's topology holds fewer than 2 GPUs: a group of one GPU per DGX H100
    # (NVLS-capable NVSwitches) has no nvls_tree to choose; two GPUs per machine have it.
    from topologies import gpu_cluster

    G = gpu_cluster("dgx_h100", 4)
    one = [f"gpu{8 * m}" for m in range(4)]
    two = [f"gpu{8 * m + i}" for m in range(4) for i in (0, 1)]
    from netsim.comm.nccl.model import setup

    assert "nvls_tree" not in setup(G, one).comm.graphs
    assert "nvls_tree" in setup(G, two).comm.graphs
    with pytest.raises(NcclModelError, match="at least 2 of the group's GPUs"):
        nccl.simulate(G, "allreduce", 2**25, ranks=one, algorithm="nvls_tree")


def test_a_cpu_node_of_vendor_arm_makes_the_hosts_arm():
    # NCCL's cpuArch ARM (Grace): the NVLS-tree size correction of Blackwell is x86's only.
    G = nx.Graph()
    G.add_nodes_from(["g0", "g1"], kind="gpu", sm=100)
    G.add_node("c0", kind="cpu", vendor="arm")
    G.add_edges_from([("g0", "c0"), ("g1", "c0")], bandwidth=64e9, latency=0.0)
    assert hardware.describe(G).cpu_vendor == "arm"
    G.nodes["c0"]["vendor"] = "intel"
    assert hardware.describe(G).cpu_vendor == "intel"
