"""netsim.comm.nccl.tuning against NCCL v2.30.7-1's constants and formulas, and a first validation.

Expected values are written out from src/graph/tuning.cc of NCCL v2.30.7-1, read by hand
from that release's source (``ncclTunerConstantsDefaults``, ``ncclTopoTuneModel``), as it
states them
(baseLat + steps * hwLat, nChannels * bw * protocol factor * ratio, ...), not taken
from the module's tables. The last part predicts every published measurement in
studies/data/nccl_measurements.csv from the tuning model and the link table
(:func:`predict_row`); run ``python tests/test_nccl_tuning.py`` for the error table.
"""

import csv
import math
import pathlib
import statistics

import pytest

from netsim.comm.nccl import search, tuning as nt
from netsim.comm.nccl.tuning import Comm, Graph, NcclModelError
from topologies import links, specs

DATA = pathlib.Path(__file__).parent.parent / "studies" / "data"  # package data of studies
GB = 1e9
US = 1e-6

A100 = Comm(8, 1, 80, {"ring": Graph(12, 20 * GB, 20 * GB), "tree": Graph(12, 20 * GB, 20 * GB)})
H100 = Comm(8, 1, 90, {"ring": Graph(12, 30 * GB, 30 * GB), "tree": Graph(12, 30 * GB, 30 * GB),
                       "nvls": Graph(8, 50 * GB, 50 * GB)})
TWO_NODES = Comm(16, 2, 90, {"ring": Graph(8, 48 * GB, 48 * GB), "tree": Graph(8, 48 * GB, 48 * GB),
                             "nvls_tree": Graph(8, 48 * GB, 48 * GB)})


# ---- bus factors and steps (nccl-tests PERFORMANCE.md; tuning.cc nsteps/nInterSteps)

@pytest.mark.parametrize("n", [2, 3, 8, 64])
def test_bus_factors(n):
    assert nt.bus_factor("allreduce", n) == pytest.approx(2 * (n - 1) / n)
    for op in ("allgather", "reduce_scatter", "alltoall"):
        assert nt.bus_factor(op, n) == pytest.approx((n - 1) / n)
    for op in ("broadcast", "reduce", "sendrecv"):
        assert nt.bus_factor(op, n) == 1.0


def test_steps():
    assert nt.steps("allreduce", 8) == (14, 0)
    assert nt.steps("allreduce", 32, 4) == (62, 6)   # v2.30.7-1: 2 (nNodes - 1)
    assert nt.steps("reduce_scatter", 32, 4) == (31, 3)
    assert nt.steps("broadcast", 32, 4) == (32, 4)


# ---- latencies (us): baseLat + hop counts x hwLat

def lat_us(comm, op, algo, proto):
    return nt.latency(comm, op, algo, proto) / US


def test_single_node_ring_and_tree_latencies():
    assert lat_us(A100, "allreduce", "ring", "LL") == pytest.approx(6.6 + 14 * 0.6)
    assert lat_us(A100, "allreduce", "ring", "LL128") == pytest.approx(14.0 + 14 * 1.9)
    assert lat_us(A100, "allreduce", "ring", "Simple") == pytest.approx(8.4 + 14 * 3.4)
    assert lat_us(A100, "allgather", "ring", "Simple") == pytest.approx(8.4 + 7 * 3.4)
    assert lat_us(A100, "broadcast", "ring", "LL") == pytest.approx(6.6 + 0.6)
    split = A100._replace(graphs={"ring": Graph(12, 20 * GB, 20 * GB, same_channels=False)})
    assert lat_us(split, "reduce", "ring", "LL") == pytest.approx(6.6 + 8 * 0.6)
    # Simple borrows the tree's NVLink hop, hwLatencies[NVLINK][TREE][SIMPLE] = 4.0.
    assert lat_us(split, "reduce", "ring", "Simple") == pytest.approx(8.4 + 8 * 4.0)
    assert lat_us(A100, "allreduce", "tree", "LL") == pytest.approx(6.8 + 2 * 7 * 0.6)
    assert lat_us(A100, "allreduce", "tree", "Simple") == pytest.approx(8.4 + 2 * 7 * 4.0)
    pci = Comm(8, 1, 80, {"ring": Graph(1, 15 * GB, 15 * GB, link="pci")})
    assert lat_us(pci, "allreduce", "ring", "LL") == pytest.approx(6.6 + 14 * 1.0)


def test_multi_node_latencies():
    # Ring: 30 steps, 2 (nNodes - 1) = 2 cross nodes; intra hops at least the net overhead
    # (1 us Intel, x3 Simple).
    assert lat_us(TWO_NODES, "allreduce", "ring", "Simple") == pytest.approx(8.4 + 28 * 3.4 + 2 * 14.0)
    assert lat_us(TWO_NODES, "allreduce", "ring", "LL") == pytest.approx(6.6 + 28 * 1.0 + 2 * 2.7)
    amd = TWO_NODES._replace(cpu_vendor="amd")
    assert lat_us(amd, "allreduce", "ring", "Simple") == pytest.approx(8.4 + 28 * 6.0 + 2 * 14.0)
    # Tree: 2 * ((ranks per node - 1) * intra + log2(nodes) * inter).
    assert lat_us(TWO_NODES, "allreduce", "tree", "LL") == pytest.approx(6.8 + 2 * (7 * 0.6 + 1 * 5.0))
    assert lat_us(TWO_NODES, "allreduce", "tree", "Simple") == pytest.approx(
        8.4 + 2 * (7 * 4.0 + 1 * 14))
    # NVLS tree: hwLatencies[NVLINK][NVLS_TREE] 25 + 2 log2(nodes) hwLatencies[NET][NVLS_TREE] 20.9.
    assert lat_us(TWO_NODES, "allreduce", "nvls_tree", "Simple") == pytest.approx(25 + 2 * 1 * 20.9)
    assert lat_us(H100, "allreduce", "nvls", "Simple") == pytest.approx(25)
    slow = TWO_NODES._replace(graphs={"ring": Graph(8, 48 * GB, 48 * GB, latency_inter=2 * US)})
    assert lat_us(slow, "allreduce", "ring", "Simple") == pytest.approx(8.4 + 28 * 3.4 + 2 * (14 + 2 + 2))


def test_one_rank_per_node_uses_the_tree_network_latency_and_runs_pat():
    # ppn == 1: interLat = hwLatencies[NET][TREE][p] for every algorithm ("fully exposed").
    # Ring LL, 4 nodes of one GPU: 6 steps, 6 cross nodes, interLat tree-LL 5.0 (not ring 2.7).
    four = Comm(4, 4, 80, {"ring": Graph(4, 12 * GB, 12 * GB), "tree": Graph(4, 12 * GB, 12 * GB)})
    assert lat_us(four, "allreduce", "ring", "LL") == pytest.approx(6.6 + 6 * 5.0)
    # PAT (allgather / reduce-scatter, Simple): baseLat 8.0 + log2(nodes) interLat / 3.5 + 2.8
    # nRanks, interLat the tree's Simple 14; bus bandwidth x 0.75, not converted to algbw.
    assert lat_us(four, "allgather", "pat", "Simple") == pytest.approx(8.0 + 2 * 14 / 3.5 + 4 * 2.8)
    assert bw_gb(four, "allgather", "pat", "Simple") == pytest.approx(4 * 12 * .75)
    assert bw_gb(four, "reduce_scatter", "pat", "LL") == 0.0
    assert bw_gb(four, "allreduce", "pat", "Simple") == 0.0
    assert bw_gb(TWO_NODES, "allgather", "pat", "Simple") == 0.0   # 8 ranks per node: off


# ---- bandwidths (GB/s): nChannels * bw, protocol caps, bus -> algorithm ratio

def bw_gb(comm, op, algo, proto):
    return nt.bandwidth(comm, op, algo, proto) / GB


def test_ring_bandwidths():
    bus = 12 * 20.0
    assert bw_gb(A100, "allreduce", "ring", "Simple") == pytest.approx(bus * 8 / 14)
    assert bw_gb(A100, "allreduce", "ring", "LL") == pytest.approx(min(87.7, bus * .5) * 8 / 14)
    assert bw_gb(A100, "allreduce", "ring", "LL128") == pytest.approx(min(bus * .92, 12 * 20.0) * 8 / 14)
    assert bw_gb(A100, "allgather", "ring", "Simple") == pytest.approx(bus * 8 / 7)
    one_per_node = Comm(2, 2, 80, {"ring": Graph(4, 12 * GB, 12 * GB)})  # v2.30.7-1: 0.92 at any ppn
    assert bw_gb(one_per_node, "allreduce", "ring", "LL128") == pytest.approx(min(48 * .92, 4 * 20.0) * 2 / 2)


def test_tree_and_nvls_bandwidths():
    simple = min(240 * .92, 12 * 24.0)
    assert bw_gb(A100, "allreduce", "tree", "Simple") == pytest.approx(simple * .5)
    assert bw_gb(A100, "allreduce", "tree", "LL") == pytest.approx(min(simple / 3.8, 87.7) * .5)
    assert bw_gb(A100, "allreduce", "tree", "LL128") == pytest.approx(min(simple * 7 / 9, 12 * 20.0) * .5)
    tree2 = min(384 * .92, 8 * 41.4)
    assert bw_gb(TWO_NODES, "allreduce", "tree", "LL128") == pytest.approx(
        min(tree2 * 120 / 128, 8 * 36.7) * .5)
    plain = A100._replace(graphs={"tree": Graph(12, 20 * GB, 20 * GB, tree_pattern=True)})
    assert bw_gb(plain, "allreduce", "tree", "Simple") == pytest.approx(simple * .85 * .5)
    # NVLS: per channel min(bwIntra x 0.85 (nvlsEfficiency, Hopper) x (nCh-1)/nCh x 2 for
    # allreduce (x (ppn-1)/ppn otherwise), bwInter (x2 for NVLS tree on <= 2 nodes),
    # perChMaxNVLSTreeBw for NVLS tree (Hopper: 57.7 on two nodes, 45.5 beyond)); ratio nRanks/nsteps.
    intra = 50 * .85 * 7 / 8
    assert bw_gb(H100, "allreduce", "nvls", "Simple") == pytest.approx(8 * min(intra * 2, 50) * 8 / 14)
    assert bw_gb(H100, "allgather", "nvls", "Simple") == pytest.approx(8 * min(intra * 7 / 8, 50))
    nvls2 = min(48 * .85 * 7 / 8 * 2, 48 * 2, 57.7)
    assert bw_gb(TWO_NODES, "allreduce", "nvls_tree", "Simple") == pytest.approx(8 * nvls2 * 16 / 30)
    three = TWO_NODES._replace(n_ranks=24, n_nodes=3)
    assert bw_gb(three, "allreduce", "nvls_tree", "Simple") == pytest.approx(8 * 45.5 * 24 / 46)
    one = H100._replace(graphs={"nvls": Graph(1, 50 * GB, 50 * GB)})   # needs >= 2 channels
    assert bw_gb(one, "allreduce", "nvls", "Simple") == 0.0
    assert bw_gb(three, "allreduce", "ring", "Simple") == pytest.approx(8 * 48 * 24 / 46)


def test_combinations_nccl_does_not_consider_have_zero_bandwidth():
    assert nt.bandwidth(A100, "broadcast", "tree", "Simple") == 0.0
    assert nt.bandwidth(A100, "allgather", "tree", "LL") == 0.0
    assert nt.bandwidth(H100, "allreduce", "nvls", "LL") == 0.0
    assert nt.bandwidth(H100, "allreduce", "nvls_tree", "Simple") == 0.0
    pci = Comm(8, 1, 89, {"ring": Graph(1, 15 * GB, 15 * GB, link="pci")})
    assert nt.bandwidth(pci, "allreduce", "ring", "LL128") == 0.0
    assert nt.algo_time(pci, "allreduce", "ring", "LL128", 1024) == math.inf


# ---- time and choice (ncclTopoGetAlgoTime)

def test_time_is_latency_plus_bytes_over_bandwidth():
    t = nt.algo_time(A100, "allreduce", "ring", "Simple", 2**30)
    assert t == pytest.approx((8.4 + 14 * 3.4) * US + 2**30 / (240 * 8 / 14 * GB))


def test_tree_correction_factor_and_ring_plateau():
    # 64 B: log2(64 >> 6) = 0 -> Simple factor 0.9; 4 MiB: log2(65536) = 16 -> 0.7. 8 B:
    # 8 >> 6 is 0, whose log2Down is -1 (src/include/bitops.h), and ncclTopoGetAlgoTime
    # corrects only logSize >= 0: no factor.
    for size, factor in ((8, 1.0), (64, .9), (4 * 2**20, .7)):
        bw = nt.bandwidth(A100, "allreduce", "tree", "Simple") * factor
        expected = nt.latency(A100, "allreduce", "tree", "Simple") + size / bw
        assert nt.algo_time(A100, "allreduce", "tree", "Simple", size) == pytest.approx(expected)
    size = 2**30  # inter-node Simple ring allreduce, >= 64 B per rank-channel: latency x 1.4 (sm >= 80)
    lat = nt.latency(TWO_NODES, "allreduce", "ring", "Simple") * 1.4
    bw = nt.bandwidth(TWO_NODES, "allreduce", "ring", "Simple")
    assert nt.algo_time(TWO_NODES, "allreduce", "ring", "Simple", size) == pytest.approx(lat + size / bw)


def test_nvls_tree_correction_only_on_blackwell_with_x86_hosts():
    # v2.29+ ncclTopoGetAlgoTime: NVLS tree allreduce gets treeCorrectionFactor below 1 GiB
    # when minCompCap >= 100 and cpuArch is x86. 16 MiB: log2(2**24 >> 6) = 18 -> Simple 0.7;
    # 512 MiB: log2(2**23) = 23, the 24th column -> 0.9; 1 GiB: column 24, none.
    def comm(cc, vendor):
        return Comm(16, 2, cc, {"nvls_tree": Graph(8, 48 * GB, 48 * GB)}, vendor)
    assert nt.size_factors(comm(100, "intel"), "allreduce", "nvls_tree", "Simple", 2**24) == \
        (1.0, .7)
    assert nt.size_factors(comm(100, "amd"), "allreduce", "nvls_tree", "Simple", 2**29) == \
        (1.0, .9)
    assert nt.size_factors(comm(100, "intel"), "allreduce", "nvls_tree", "Simple", 2**30) == \
        (1.0, 1.0)
    assert nt.size_factors(comm(100, "arm"), "allreduce", "nvls_tree", "Simple", 2**24) == \
        (1.0, 1.0)
    assert nt.size_factors(comm(90, "intel"), "allreduce", "nvls_tree", "Simple", 2**24) == \
        (1.0, 1.0)
    c = comm(100, "intel")
    lat = nt.latency(c, "allreduce", "nvls_tree", "Simple")
    bw = nt.bandwidth(c, "allreduce", "nvls_tree", "Simple") * .7
    assert nt.algo_time(c, "allreduce", "nvls_tree", "Simple", 2**24) == \
        pytest.approx(lat + 2**24 / bw, rel=1e-12)


def test_small_calls_run_on_fewer_channels():
    # enqueue.cc topoGetAlgoInfo (v2.30.7-1): nc drops while nBytes < nc x nt x threshold.
    # Tree LL: nt 512, 8 B a thread -> 4096 B a channel; 16 KiB keeps 4 of 8, 64 KiB all 8.
    for size, nc in ((8, 1), (1024, 1), (16383, 3), (16384, 4), (20480, 5), (65536, 8)):
        assert nt.call_channels(TWO_NODES, "allreduce", "tree", "LL", size) == nc
    # Ring LL: 8 B a thread x 16 ranks, 512 threads -> 65536 B a channel.
    assert nt.call_channels(TWO_NODES, "allreduce", "ring", "LL", 4 * 65536) == 4
    # LL128: 640 threads x 8 B = 5120 B a channel; 1 MiB keeps all 8.
    assert nt.call_channels(TWO_NODES, "allreduce", "tree", "LL128", 20480) == 4
    assert nt.call_channels(TWO_NODES, "allreduce", "ring", "LL128", 2**20) == 8
    # Ring Simple on a graph of at most PCI_BW (12 GB/s) runs 256 threads: 16384 B a channel.
    pcie = Comm(8, 1, 86, {"ring": Graph(2, 6 * GB, 6 * GB, link="pci")})
    assert nt.call_channels(pcie, "allreduce", "ring", "Simple", 16384) == 1
    assert nt.call_channels(pcie, "allreduce", "ring", "Simple", 32768) == 2
    assert nt.call_channels(A100, "allreduce", "ring", "Simple", 32768 * 3) == 3   # 512 threads
    # NVLS keeps its channels whatever the size.
    assert nt.call_channels(H100, "allreduce", "nvls", "Simple", 8) == 8


def test_choice_follows_size():
    assert nt.choose(A100, "allreduce", 8)[:2] == ("ring", "LL")
    assert nt.choose(A100, "allreduce", 2**30)[:2] == ("ring", "Simple")
    assert nt.choose(H100, "allreduce", 2**30)[:2] == ("nvls", "Simple")
    assert nt.choose(H100, "allgather", 2**30).algorithm in ("ring", "nvls")
    choice = nt.choose(TWO_NODES, "allreduce", 2**26)
    assert choice.time == min(nt.algo_time(TWO_NODES, "allreduce", a, p, 2**26)
                              for a in ("tree", "ring", "nvls", "nvls_tree") for p in nt.PROTOCOLS)


# ---- channels NCCL's search reaches (search.cc ladders + ncclTopoDupChannels)

def test_search_channels_on_known_machines():
    assert nt.search_channels(6 * 20e9 / 6, n_links=6, compcap=70) == (6, 20 * GB)   # no dup below 25
    assert nt.search_channels(240e9, compcap=80) == (12, 20 * GB)                   # 6 x 40, dup
    assert nt.search_channels(18 * 20.6e9, compcap=90) == (12, 30 * GB)             # 6 x 60, dup
    assert nt.search_channels(18 * 20.6e9, compcap=90, pattern="tree",
                              min_channels=12, max_channels=12) == (12, 30 * GB)    # cc 90, < 50: no dup
    assert nt.search_channels(12.5e9, n_links=16, net=True) == (16, 12 * GB)
    assert nt.search_channels(50e9, n_links=8, compcap=90, net=True) == (8, 48 * GB)


def test_nvls_search_in_one_domain_charges_the_head_twice_and_raises_bw_inter():
    # search.cc ncclTopoSearchTryNvls: every GPU's switch link gives bwIntra to each channel,
    # its head twice; channels = min(32, GPUs). DGX H100, 370.8 GB/s: 9 x 50 = 450 too much,
    # 9 x 40 = 360 fits; pass 2 lifts bwInter 50, 60 (the sm90 ladder's top).
    assert search.nvls_intra(18 * 20.6e9, 8, 90) == (8, 40 * GB, 60 * GB)
    # NVL72, 721.8 GB/s: the start is 20 (24 x 32 = 768 > 72/71 x 721.8 = 732), 33 x 20 = 660
    # fits; bwInter 24, 30, 40 = twice 20.
    assert search.nvls_intra(18 * 40.1e9, 72, 100) == (32, 20 * GB, 40 * GB)
    # DGX B200: 90 x 8 = 720 <= 824.9 starts at 90, 9 x 90 = 810 > 721.8, 9 x 80 = 720 fits;
    # bwInter 90, the sm100 ladder's top.
    assert search.nvls_intra(18 * 40.1e9, 8, 100) == (8, 80 * GB, 90 * GB)
    with pytest.raises(NcclModelError, match="nvls_intra"):
        nt.search_channels(18 * 20.6e9, compcap=90, pattern="nvls")


def test_search_raises_a_trees_intra_bandwidth_up_to_twice_the_network():
    # search.cc pass 2 ("increase bwIntra for trees"): up the inter-node ladder (sm80:
    # ..., 12, 15, 18, 20, 24, ...) while below 2 x bwInter and the channels still fit.
    assert nt.raise_tree_intra(12 * GB, 4, 240e9) == 24 * GB            # 4 x 24 <= 240
    assert nt.raise_tree_intra(12 * GB, 4, None) == 24 * GB             # one GPU a node
    assert nt.raise_tree_intra(24 * GB, 8, 240e9) == 30 * GB            # 8 x 48 > 240 x 8/7
    assert nt.raise_tree_intra(12 * GB, 4, 20e9, n_links=6, compcap=70) == 20 * GB  # one NVLink
    assert nt.raise_tree_intra(48 * GB, 8, 370.8e9, compcap=90) == 48 * GB  # top of the ladder


def test_two_p4d_nodes_choose_the_tree_for_large_allreduce():
    # Four 100 Gb/s EFA: ring and tree find 4 channels of 12 GB/s across nodes; the tree's
    # bwIntra rises to 24. On two nodes tuning.cc reads bwIntra for the tree:
    # tree Simple 0.5 x min(4 x 24 x 0.92, 4 x perChMaxTreeBw 23.6) = 44.16 GB/s against
    # ring Simple 4 x 12 x 16/30 = 25.6 GB/s, so NCCL runs the tree. Its latency is
    # 8.4 + 2 x (7 intra hops x 4.0 + 1 inter hop x (14 + 2 x 75)) us: v2.30.7-1's baseLat
    # Tree/Simple 8.4, hwLat NVLINK 4.0 and NET 14, plus the EFA plugin's 75 us
    # latencyInter, twice for Simple (the flush).
    from netsim import nccl
    from topologies import gpu_cluster
    res = nccl.simulate(gpu_cluster("p4d", 2), "allreduce", 2**30)
    assert (res.plan.algorithm, res.plan.protocol) == ("tree", "Simple")
    lat = (8.4 + 2 * (7 * 4.0 + (14 + 2 * 75))) * US
    assert res.plan.tuning_time == pytest.approx(lat + 2**30 / 44.16e9, rel=1e-6)


def test_nvlink_and_pci_bandwidths_follow_topo_h():
    assert [nt.nvlink_bw(cc) / GB for cc in (60, 70, 75, 80, 86, 89, 90, 100)] == [
        18.0, 20.0, 20.0, 20.0, 12.0, 20.0, 20.6, 40.1]
    assert nt.pci_bw("gen3") / GB == nt.PCI_BW == 16 * 60 / 80


# ---- bad input

@pytest.mark.parametrize("call, match", [
    (lambda: nt.bandwidth(A100, "allscatter", "ring", "LL"), "unknown op"),
    (lambda: nt.bandwidth(A100, "allreduce", "bruck", "LL"), "unknown algorithm"),
    (lambda: nt.bandwidth(A100, "allreduce", "ring", "LL64"), "unknown protocol"),
    (lambda: nt.bandwidth(A100, "allreduce", "collnet_direct", "Simple"), "CollNet"),
    (lambda: nt.latency(A100, "allreduce", "nvls", "Simple"), "no graph"),
    (lambda: nt.bandwidth(Comm(2, 4, 80, {}), "allreduce", "ring", "LL"), "n_nodes"),
    (lambda: nt.bandwidth(Comm(1, 1, 80, {}), "allreduce", "ring", "LL"), "n_ranks"),
    (lambda: nt.bandwidth(("8", 1), "allreduce", "ring", "LL"), "Comm"),
    (lambda: nt.algo_time(A100, "allreduce", "ring", "LL", 0), "nbytes"),
    (lambda: nt.choose(Comm(8, 1, 80, {"tree": A100.graphs["tree"]}), "broadcast", 8), "no algorithm"),
    (lambda: nt.search_channels(0.5e9), "no channel fits"),
    (lambda: nt.search_channels(-1.0), "link_bw"),
    (lambda: nt.search_channels(1e9, pattern="mesh"), "pattern"),
    (lambda: nt.pci_bw("gen9"), "PCIe generation"),
    (lambda: nt.bus_factor("gather", 4), "unknown op"),
])
def test_bad_input_is_named(call, match):
    with pytest.raises(NcclModelError, match=match):
        call()


# ---- first validation: published measurements vs the tuning model + link table

def _nvswitch_port(compcap, model):
    """NCCL's bandwidth of one GPU's NVSwitch port: its NVLinks x NCCL's per-link figure."""
    return specs.NVLINK_LINKS_PER_GPU[model] * nt.nvlink_bw(compcap)


def _nic(name):
    """NCCL takes a NIC's speed as reported (mbps / 8000 GB/s): the raw data rate, no framing."""
    return links.technology(name).bandwidth


def machine_comm(machine, n_nodes):
    """The Comm NCCL would build: graphs from :func:`search_channels` on the machine's links."""
    per_node = 72 if machine == "gb200_nvl72" else 8   # one NVL72 rack: one NVLink domain
    single = {
        "dgx1_v100": dict(link_bw=nt.nvlink_bw(70), n_links=6, compcap=70),  # six single NVLinks
        "a100_nvswitch": dict(link_bw=_nvswitch_port(80, "A100"), compcap=80),
        "h100_nvswitch": dict(link_bw=_nvswitch_port(90, "H100"), compcap=90),
        "gb200_nvl72": dict(link_bw=_nvswitch_port(100, "GB200"), compcap=100, n_gpus=72),
        "b200_nvswitch": dict(link_bw=_nvswitch_port(100, "B200"), compcap=100),
        # No P2P: every hop goes GPU-CPU over PCIe gen4 and between sockets over AMD's link.
        "pcie_4090": dict(link_bw=min(nt.pci_bw("gen4"), nt.CPU_LINK_BW["amd"] * GB), compcap=89),
    }
    multi = {  # NVSwitch machines joined by NIC rails: (compcap, NIC technology, NICs per node)
        "p4dn_efa": (80, "EFA", 4), "h100_ndr": (90, "NDR", 8), "h20_ndr": (90, "NDR", 8),
        "a100_roce": (80, "RoCE-100G", 16), "p4de_efa": (80, "EFA", 4),
        "h100_efa": (90, "EFA", 32), "h100_roce": (90, "RoCE-200G", 16),
        "a100_hdr": (80, "HDR", 8), "b200_roce": (100, "RoCE-400G", 8),
        "h200_roce": (90, "RoCE-400G", 8),
    }
    graphs = {}
    if machine in single:
        kw = single[machine]
        cc = kw["compcap"]
        link = "pci" if machine == "pcie_4090" else "nvlink"
        n, bw = nt.search_channels(**kw)
        graphs["ring"] = Graph(n, bw, bw, link=link)
        n, bw = nt.search_channels(**kw, pattern="tree", min_channels=n, max_channels=n)
        graphs["tree"] = Graph(n, bw, bw, link=link)
        if machine in ("h100_nvswitch", "gb200_nvl72", "b200_nvswitch"):  # NVLS: min(32, GPUs) heads
            n, intra, inter = search.nvls_intra(kw["link_bw"], per_node, cc)
            graphs["nvls"] = Graph(n, intra, inter)
        return Comm(per_node, 1, cc, graphs, "amd" if machine == "pcie_4090" else "intel")
    cc, nic, n_nics = multi[machine]
    kw = dict(link_bw=_nic(nic), n_links=n_nics, compcap=cc, net=True)
    n, bw = nt.search_channels(**kw)
    graphs["ring"] = Graph(n, bw, bw)
    n, bw = nt.search_channels(**kw, pattern="tree", min_channels=n, max_channels=n)
    graphs["tree"] = Graph(n, bw, bw)
    if cc >= 90:  # NVLS across nodes runs as NVLS tree, one channel per NIC rail
        n, bw = nt.search_channels(**kw, pattern="nvls", max_channels=32)
        graphs["nvls_tree"] = Graph(n, bw, bw)
    return Comm(per_node * n_nodes, n_nodes, cc, graphs)


def predict_row(row):
    """Predicted (time in s, algorithm, protocol) of one measurement row."""
    comm = machine_comm(row["machine"], int(row["nodes"]))
    assert comm.n_ranks == int(row["gpus"])
    nbytes = int(row["bytes"])
    if row["nccl_algo"]:  # the poster forced NCCL_ALGO: NCCL picks only the protocol
        algo = row["nccl_algo"]
        proto = min(nt.PROTOCOLS, key=lambda p: nt.algo_time(comm, row["op"], algo, p, nbytes))
        return nt.algo_time(comm, row["op"], algo, proto, nbytes), algo, proto
    choice = nt.choose(comm, row["op"], nbytes)
    return choice.time, choice.algorithm, choice.protocol


def load(name="nccl_measurements.csv"):
    with open(DATA / name, newline="") as f:
        return list(csv.DictReader(f))


def validation(rows):
    """Per-row absolute relative error of the predicted time, with the median and worst."""
    report = []
    for row in rows:
        t, algo, proto = predict_row(row)
        measured = float(row["time_us"]) * US
        report.append((abs(t - measured) / measured, t, algo, proto, row))
    errors = [r[0] for r in report]
    return report, statistics.median(errors), max(errors)


def test_measurements_cover_the_brief():
    rows = load()
    assert len(rows) >= 24
    assert {"dgx1_v100", "a100_nvswitch", "h100_nvswitch", "pcie_4090"} <= {r["machine"] for r in rows}
    assert any(int(r["nodes"]) >= 2 for r in rows)
    sizes = [int(r["bytes"]) for r in rows]
    assert min(sizes) == 8 and max(sizes) >= 2**30
    for r in load() + load("nccl_measurements_holdout.csv"):
        assert r["source_url"].startswith("https://") and r["quote"]
        # The quoted line holds the posted time and busbw, and algbw = size / time.
        assert r["time_us"].rstrip("0").rstrip(".") in r["quote"] and r["busbw_GBps"] in r["quote"]
        assert int(r["bytes"]) / (float(r["time_us"]) * 1e3) == pytest.approx(
            float(r["algbw_GBps"]), abs=0.006, rel=1e-3)


def test_every_row_gets_a_finite_prediction_and_the_summary_is_the_median_and_max():
    rows = load()
    report, median, worst = validation(rows)
    errors = sorted(r[0] for r in report)
    assert len(report) == len(rows) and all(math.isfinite(e) for e in errors)
    half = len(errors) // 2  # the median of a sorted list, by hand
    middle = errors[half] if len(errors) % 2 else (errors[half - 1] + errors[half]) / 2
    assert median == pytest.approx(middle) and worst == errors[-1]
    forced = [r for r in report if r[4]["nccl_algo"]]
    assert forced and all(r[2] == r[4]["nccl_algo"] for r in forced)


def test_holdout_rows_load_and_predict():
    report, _, worst = validation(load("nccl_measurements_holdout.csv"))
    assert len(report) == 3 and math.isfinite(worst)


def test_reported_allreduce_rows_load_and_predict():
    # Rows their sources report as problems (p4dn over EFA, two-node H100 NDR, H20 NVLS):
    # not counted, but the tuning model still predicts them.
    rows = [r for r in load("nccl_measurements_reported.csv") if r["op"] == "allreduce"]
    report, _, worst = validation(rows)
    assert len(report) == 10 and math.isfinite(worst)
    assert {r[4]["machine"] for r in report} == {"p4dn_efa", "h100_ndr", "h20_ndr"}


def main():
    for name in ("nccl_measurements.csv", "nccl_measurements_holdout.csv",
                 "nccl_measurements_reported.csv"):
        report, median, worst = validation([r for r in load(name) if r["op"] == "allreduce"])
        print(f"{name}: median |error| {median:.1%}, worst {worst:.1%}")
        for err, t, algo, proto, row in sorted(report, key=lambda r: -r[0]):
            print(f"  {row['machine']:14} {row['gpus']:>3} {int(row['bytes']):>12} B  "
                  f"measured {float(row['time_us']):>10.1f} us  predicted {t / US:>10.1f} us  "
                  f"{algo}/{proto:6}  {err:6.1%}")


if __name__ == "__main__":
    main()


def test_nvls_runs_only_allreduce_past_32_local_ranks_and_collnet_chain_stops_at_8():
    # v2.30.7-1 enqueue.cc updateCollCostTable: NVLS/NVLS tree skipped for other ops when
    # localRanks > NCCL_MAX_NVLS_ARITY (32); CollNet chain when maxLocalRanks > 7 + 1.
    nvl72 = Comm(72, 1, 100, {"ring": Graph(16, 45e9, 45e9), "nvls": Graph(32, 20e9, 40e9)})
    assert nt.bandwidth(nvl72, "allgather", "nvls", "Simple") == 0.0
    assert nt.bandwidth(nvl72, "reduce_scatter", "nvls", "Simple") == 0.0
    # allreduce: 32 x min(20 x 0.74 x 31/32 x 2, 40) x 72 / 142 GB/s
    assert nt.bandwidth(nvl72, "allreduce", "nvls", "Simple") == pytest.approx(
        32 * (20 * 0.74 * 31 / 32 * 2) * 72 / 142 * GB, rel=1e-6)
    nvl32 = Comm(32, 1, 100, {"ring": Graph(16, 45e9, 45e9), "nvls": Graph(32, 20e9, 40e9)})
    assert nt.bandwidth(nvl32, "allgather", "nvls", "Simple") > 0
    graph = Graph(8, 24e9, 24e9)
    wide = Comm(32, 2, 90, {"tree": graph, "collnet_chain": graph})
    narrow = Comm(16, 2, 90, {"tree": graph, "collnet_chain": graph})
    assert nt.bandwidth(wide, "allreduce", "collnet_chain", "Simple") == 0.0
    assert nt.bandwidth(narrow, "allreduce", "collnet_chain", "Simple") > 0
