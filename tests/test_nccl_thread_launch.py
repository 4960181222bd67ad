"""One host thread launching an NCCL call on every GPU of its machine in turn (nccl-tests -g N).

The expected delays are the closed form of serial launches: the machine's last kernel starts
after the launches of every GPU before it, so a call driven by one thread ends exactly that
much later than the same call with a process per GPU (nothing else in the plan changes).
"""

import networkx as nx
import pytest

from netsim import nccl
from netsim.errors import NcclModelError
from studies.validation import nccl as v
from topologies import dgx1, gpu_cluster, pcie_box
from topologies.devices import LAUNCH_LATENCY


def _pair(G, nbytes, **kw):
    proc = nccl.simulate(G, "allreduce", nbytes, launch="proc", **kw)
    thread = nccl.simulate(G, "allreduce", nbytes, launch="thread", **kw)
    return proc, thread


@pytest.mark.parametrize("nbytes", [8, 2**27])
def test_thread_launch_adds_the_launches_of_the_seven_gpus_after_the_first(nbytes):
    G = dgx1()
    proc, thread = _pair(G, nbytes)
    assert (thread.plan.algorithm, thread.plan.protocol, thread.plan.channels) == \
        (proc.plan.algorithm, proc.plan.protocol, proc.plan.channels)
    assert thread.makespan - proc.makespan == pytest.approx(7 * 1.83e-6, rel=1e-9)


def test_default_is_a_process_per_gpu_and_replays_bit_for_bit():
    G = pcie_box()
    assert nccl.simulate(G, "allreduce", 2**20).makespan == \
        nccl.simulate(G, "allreduce", 2**20, launch="proc").makespan


def test_each_machine_has_its_own_thread():
    # Two machines of 8 GPUs: each thread launches 8 kernels, the two side by side, so the
    # call waits 7 launches, not 15.
    G = gpu_cluster("dgx_a100", 2)
    proc, thread = _pair(G, 2**20)
    assert thread.makespan - proc.makespan == pytest.approx(7 * LAUNCH_LATENCY["A100"], rel=1e-9)


def test_the_first_launch_is_not_charged_and_the_slowest_machine_sets_the_wait():
    G = nx.Graph()
    times = {"a0": 5e-6, "a1": 1e-6, "a2": 2e-6, "b0": 1e-6, "b1": 1e-6}
    for g, t in times.items():
        G.add_node(g, kind="gpu", model="V100", sm=70, node=g[0], launch=t)
    G.add_edges_from([("a0", "a1"), ("a1", "a2"), ("a2", "a0"), ("b0", "b1")],
                     bandwidth=25e9, latency=0.0)
    G.add_edges_from([("a0", "b0"), ("a2", "b1")], bandwidth=12.5e9, latency=0.0)
    hw = nccl.hardware.describe(G)
    # machine a: 1 + 2 us after a0's launch; machine b: 1 us after b0's.
    assert nccl.launch.launch_delay(G, hw, "thread") == pytest.approx(3e-6)


def test_thread_launch_needs_every_gpu_to_say_its_launch_time():
    G = nx.Graph()
    G.add_node("g0", kind="gpu", launch=2e-6)
    G.add_node("g1", kind="gpu")
    G.add_edge("g0", "g1", bandwidth=25e9, latency=0.0)
    assert nccl.simulate(G, "allreduce", 8).makespan > 0     # proc never reads it
    with pytest.raises(NcclModelError, match="'g1' to carry launch"):
        nccl.simulate(G, "allreduce", 8, launch="thread")
    G.nodes["g1"]["launch"] = -1.0
    with pytest.raises(NcclModelError, match="got -1.0"):
        nccl.simulate(G, "allreduce", 8, launch="thread")
    with pytest.raises(NcclModelError, match="unknown launch mode 'threads'"):
        nccl.simulate(G, "allreduce", 8, launch="threads")


def test_machine_builders_give_every_gpu_its_models_launch_time():
    assert {G.nodes[n]["launch"] for G in [dgx1()] for n in G if G.nodes[n]["kind"] == "gpu"} \
        == {1.83e-6}
    assert {pcie_box().nodes[f"gpu{i}"]["launch"] for i in range(8)} == {2.7e-6}


def test_validation_simulates_thread_rows_with_one_thread_and_the_rest_per_process():
    rows = v.load()
    thread = next(r for r in rows if r["launch"] == "thread" and r["machine"] == "dgx1_v100")
    proc = next(r for r in rows if r["launch"] == "proc")
    G = v.machine("dgx1_v100")
    assert v.predict(thread).makespan == nccl.simulate(
        G, "allreduce", int(thread["bytes"]), launch="thread").makespan
    Gp = v.machine(proc["machine"], int(proc["nodes"]))
    gpus = [n for n, k in Gp.nodes(data="kind") if k == "gpu"][:int(proc["gpus"])]
    assert v.predict(proc).makespan == nccl.simulate(
        Gp, "allreduce", int(proc["bytes"]), ranks=gpus,
        algorithm=proc["nccl_algo"] or None).makespan
