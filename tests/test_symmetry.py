"""Identical replicas simulated once (netsim.network.symmetry, netsim.comm.replicas).

The reference is the full replay of every replica, an independent run of the
engine: the reduced replay must give its makespan, the simulated ranks' times
and every link's statistics to 1e-12, and refuse what is not a symmetry.
"""

import networkx as nx
import numpy as np
import pytest

from netsim import TraceBuilder, simulate
from netsim.network.compiled import as_network
from netsim.network.symmetry import SymmetryError, quotient
from studies.scaling.transformer import gpus_of, replay_point
from topologies import gpu_cluster
from workloads.transformer.flops import config, get_config
from workloads.transformer.iteration import schedule, shard_shift, shift
from workloads.transformer.layout import Layout


def _same(full, red, ranks):
    span = full.makespan
    assert red.makespan == pytest.approx(span, rel=1e-12)
    np.testing.assert_allclose(red.iteration_end, full.iteration_end, rtol=1e-12)
    for k in ("compute", "communication", "exposed_communication", "idle"):
        np.testing.assert_allclose(red.ranks[k][ranks], full.ranks[k][ranks], rtol=0,
                                   atol=1e-12 * span)
    for k in ("bytes", "busy", "saturated", "peak_util"):
        # every link the simulated machines use, and those the shift fixes, as the full run's
        used = red.links["bytes"] > 0
        np.testing.assert_allclose(red.links[k][used], full.links[k][used], rtol=1e-12,
                                   atol=1e-12 * span)


C = config(4, 512, 8, 128, 1024, micro_batch=1, global_batch=16)
CASES = {
    "tp 8, pp 2, dp 2": dict(tp=8, pp=2, dp=2, replicas=1),
    "tp 4, dp 4 (two replicas a machine)": dict(tp=4, pp=1, dp=4, replicas=2),
    "tp 8, pp 2, dp 2, interleaved": dict(tp=8, pp=2, dp=2, replicas=1, pipeline="interleaved",
                                          chunks=2),
    "tp 8, dp 2, sequence parallel, scatter/gather, pp 2": dict(
        tp=8, pp=2, dp=2, replicas=1, sequence_parallel=True, scatter_gather=True),
    "tp 8, dp 4, zero-1": dict(tp=8, pp=1, dp=4, replicas=1, zero=1),
    "tp 8, dp 4, zero-3": dict(tp=8, pp=1, dp=4, replicas=1, zero=3),
}


@pytest.mark.parametrize("case", list(CASES))
def test_replicas_simulated_once_replay_as_all_of_them(case):
    kw = dict(CASES[case])
    k = kw.pop("replicas")
    L = Layout(kw["tp"], kw["pp"], kw["dp"])
    G = gpu_cluster("dgx_h100", max(1, L.world // 8))
    place = gpus_of(G)[:L.world]
    full = simulate(schedule(C, device_flops=1e14, **kw), G, placement=place, collapse=True)
    t = schedule(C, device_flops=1e14, replicas=k, **kw)
    red = simulate(t, G, placement=place, collapse=True,
                   symmetry=shift(L.tp, L.pp, L.dp, k))
    assert t.num_ops < schedule(C, device_flops=1e14, **kw).num_ops
    home = [L.rank(s, d, x) for s in range(L.pp) for d in range(k) for x in range(L.tp)]
    _same(full, red, home)


def _crossed():
    """Two machines of two GPUs, each GPU on its own NIC, GPU a's on switch S1 and
    GPU b's on S2; S1 and S2 joined by a 10 GB/s link no machine owns."""
    G = nx.Graph()
    for m in (0, 1):
        for g, sw in (("a", "S1"), ("b", "S2")):
            G.add_node(f"n{m}.g{g}", kind="gpu", node=m)
            G.add_node(f"n{m}.nic{g}", kind="nic", node=m)
            G.add_edge(f"n{m}.g{g}", f"n{m}.nic{g}", bandwidth=50e9, latency=1e-6)
            G.add_edge(f"n{m}.nic{g}", sw, bandwidth=50e9, latency=1e-6)
    G.add_edge("S1", "S2", bandwidth=10e9, latency=1e-6)
    return G, ["n0.ga", "n0.gb", "n1.ga", "n1.gb"]


def test_a_link_the_shift_fixes_carries_every_copy():
    # GPU a of each machine sends to GPU b of the other, both across S1 -> S2: the
    # shift of the machines fixes that link, and the two copies share it.
    G, place = _crossed()
    b = TraceBuilder(4)
    b.message(0, 3, 1e9)
    b.message(2, 1, 1e9)
    full = simulate(b.build(), G, placement=place)
    b = TraceBuilder(4)
    b.message(0, 3, 1e9)
    red = simulate(b.build(), G, placement=place, symmetry=[2, 3, 0, 1])
    assert full.makespan == pytest.approx(2e9 / 10e9 + 5e-6, rel=1e-9)   # half of 10 GB/s each
    assert red.makespan == pytest.approx(full.makespan, rel=1e-12)
    link = [i for i, (s, d) in enumerate(zip(full.links["src"], full.links["dst"]))
            if (s, d) == ("S1", "S2")]
    assert full.links["bytes"][link] == pytest.approx(2e9)   # both copies' bytes
    np.testing.assert_allclose(red.links["bytes"][link], full.links["bytes"][link])


def test_a_plan_that_is_no_symmetry_is_refused_and_the_study_replays_every_replica():
    # tp 2 x dp 16 over four machines: NCCL's data-parallel plan is a tree (NVLS tree)
    # rooted at one replica, which the shift does not map onto itself.
    c = get_config("gpt3-1.3b", global_batch=64)
    G = gpu_cluster("dgx_h100", 4)
    t = schedule(c, 2, 1, 16, device_flops=1e14, replicas=4)
    with pytest.raises(SymmetryError, match="not symmetric"):
        simulate(t, G, placement=gpus_of(G), collapse=True, symmetry=shift(2, 1, 16, 4))
    r, k, _, _ = replay_point(c, Layout(2, 1, 16), G, 1e14)
    assert k == 16 and r.makespan > 0


def _two_machines(bw1=50e9):
    G = nx.Graph()
    for m, bw in ((0, 50e9), (1, bw1)):
        G.add_node(f"gpu{m}", kind="gpu", node=m)
        G.add_node(f"n{m}.nic", kind="nic", node=m)
        G.add_edge(f"gpu{m}", f"n{m}.nic", bandwidth=bw, latency=1e-6)
        G.add_edge(f"n{m}.nic", "sw", bandwidth=50e9, latency=1e-6)
    net = as_network(G)
    return net, np.array([net.node_of("gpu0"), net.node_of("gpu1")])


def test_quotient_refuses_what_is_no_symmetry():
    net, placed = _two_machines()
    assert quotient(net, placed, [1, 0]).g == 2
    with pytest.raises(SymmetryError, match="permutation"):
        quotient(net, placed, [0, 0])
    with pytest.raises(SymmetryError, match="one length >= 2"):
        quotient(net, placed, [0, 1])
    net, placed = _two_machines(bw1=25e9)   # the machines differ
    with pytest.raises(SymmetryError, match="no like image"):
        quotient(net, placed, [1, 0])


def test_replicas_must_divide_dp():
    with pytest.raises(Exception, match="replicas 3 does not divide dp 4"):
        schedule(C, tp=1, pp=1, dp=4, replicas=3)


#: Layouts whose tensor shards are simulated once (``shards=1`` and the shift of shards
#: through a DGX H100's GPUs: next PCIe switch first, then the pair's other GPU).
SHARD_CASES = {
    "tp 8, pp 2, dp 2": dict(tp=8, pp=2, dp=2),
    "tp 8, dp 16 (NCCL's trees across 16 machines)": dict(tp=8, pp=1, dp=16, bucket_bytes=2**25),
    "tp 8, pp 2, dp 2, interleaved": dict(tp=8, pp=2, dp=2, pipeline="interleaved", chunks=2),
    "tp 8, dp 2, sequence parallel, scatter/gather, pp 2": dict(
        tp=8, pp=2, dp=2, sequence_parallel=True, scatter_gather=True),
    "tp 8, dp 4, zero-1": dict(tp=8, pp=1, dp=4, zero=1),
    "tp 8, dp 4, zero-3": dict(tp=8, pp=1, dp=4, zero=3),
    "tp 8, pp 2, dp 2, tp overlap": dict(tp=8, pp=2, dp=2, tp_overlap=True,
                                         sequence_parallel=True),
}
DGX_H100_SHARDS = [2, 3, 4, 5, 6, 7, 1, 0]   # 0 -> 2 -> 4 -> 6 -> 1 -> 3 -> 5 -> 7 -> 0


@pytest.mark.parametrize("case", list(SHARD_CASES))
def test_shards_simulated_once_replay_as_all_of_them(case):
    kw = dict(SHARD_CASES[case])
    L = Layout(kw["tp"], kw["pp"], kw["dp"])
    G = gpu_cluster("dgx_h100", L.world // 8)
    place = gpus_of(G)[:L.world]
    whole = schedule(C, device_flops=1e14, **kw)
    full = simulate(whole, G, placement=place, collapse=True)
    t = schedule(C, device_flops=1e14, shards=1, **kw)
    red = simulate(t, G, placement=place, collapse=True,
                   symmetry=shard_shift(L.tp, L.pp, L.dp, DGX_H100_SHARDS))
    assert t.num_ops < whole.num_ops
    _same(full, red, np.arange(L.world)[np.arange(L.world) % L.tp == 0])


def test_a_shift_of_shards_that_is_no_symmetry_is_refused():
    """GPU 1 -> 2 would send PCIe switch 0 (GPUs 0, 1) to two switches."""
    G = gpu_cluster("dgx_h100", 2)
    net = as_network(G)
    place = np.array([net.node_of(n) for n in gpus_of(G)])
    with pytest.raises(SymmetryError, match="no like image"):
        quotient(net, place, shard_shift(8, 1, 2, [1, 2, 3, 4, 5, 6, 7, 0]))


def test_replay_point_takes_the_shards_where_trees_break_the_replicas():
    """Data-parallel groups over 64 machines: NCCL's trees, no shift of replicas maps one
    onto itself; the shards are simulated once and the makespan is the full replay's."""
    c = get_config("gpt3-1.3b", global_batch=64, layers=2)
    G = gpu_cluster("dgx_h100", 64)
    r, k, s, t = replay_point(c, Layout(8, 1, 64), G, 1e14)
    assert (k, s) == (64, 1)
    full = simulate(schedule(c, 8, 1, 64, device_flops=1e14), G, placement=gpus_of(G),
                    collapse=True)
    assert r.makespan == pytest.approx(full.makespan, rel=1e-12)


def test_a_stride_of_shards_where_no_cycle_maps_the_tensor_plans():
    """tp 4, two replicas a machine over 8 machines: NCCL's data-parallel plan is an NVLS
    tree (no shift of replicas maps it onto itself), the tensor-parallel ring 0, 1, 2, 3
    shares NVLink with it and no cycle of the four shards that keeps the PCIe pairs maps the
    ring onto itself; the stride 2 (``0 <-> 2, 1 <-> 3``) does, and two shards of four are
    simulated: every rank's time and link statistics as the full replay's."""
    c = get_config("gpt3-175b", global_batch=16, layers=2)
    L = Layout(4, 1, 16)
    G = gpu_cluster("dgx_h100", L.world // 8)
    place = gpus_of(G)
    whole = schedule(c, L.tp, L.pp, L.dp, device_flops=1e14)
    full = simulate(whole, G, placement=place, collapse=True)
    with pytest.raises(SymmetryError, match="nvls_tree plan"):
        simulate(schedule(c, L.tp, L.pp, L.dp, device_flops=1e14, replicas=2), G,
                 placement=place, collapse=True, symmetry=shift(L.tp, L.pp, L.dp, 2))
    with pytest.raises(SymmetryError, match="not symmetric"):
        simulate(schedule(c, L.tp, L.pp, L.dp, device_flops=1e14, shards=1), G,
                 placement=place, collapse=True,
                 symmetry=shard_shift(L.tp, L.pp, L.dp, [2, 3, 1, 0]))
    t = schedule(c, L.tp, L.pp, L.dp, device_flops=1e14, shards=2)
    red = simulate(t, G, placement=place, collapse=True,
                   symmetry=shard_shift(L.tp, L.pp, L.dp, [2, 3, 0, 1]))
    assert t.num_ops < whole.num_ops
    _same(full, red, np.flatnonzero(np.arange(L.world) % L.tp < 2))
    r, k, s, _ = replay_point(c, L, G, 1e14)
    assert (k, s) == (16, 2)
    assert r.makespan == pytest.approx(full.makespan, rel=1e-12)
