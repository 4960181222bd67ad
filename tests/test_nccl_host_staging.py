"""GPUs without peer-to-peer stage every transfer in host memory, which every transfer on that
socket shares.

Expected times are hand-worked max-min shares: a socket whose memory moves M bytes/s gives
M/2 to writes and M/2 to reads; k staged transfers into it share each half equally, and PCIe
links far faster than the memory leave the memory the only limit.
"""

import networkx as nx
import pytest

from netsim import nccl
from netsim.errors import NcclModelError
from topologies import dgx_a100, pcie_box

FAST = 1e13      # PCIe links far faster than any memory here: the memory is the bottleneck
M = 100e9        # the socket's memory bandwidth (reads and writes together)
N = 10**9        # bytes


def one_socket(n, memory=M):
    G = nx.Graph()
    G.add_node("cpu0", kind="cpu", **({} if memory is None else {"memory_bandwidth": memory}))
    for i in range(n):
        G.add_node(f"g{i}", kind="gpu", model="A100", sm=80, p2p=False)
        G.add_edge(f"g{i}", "cpu0", bandwidth=FAST, latency=0.0, technology="PCIe-gen4-x16")
    return G


def ring(G, op="allreduce", nbytes=N):
    return nccl.simulate(G, op, nbytes, algorithm="ring", protocol="Simple", channels=1)


@pytest.mark.parametrize("n", [2, 4])
def test_ring_allreduce_shares_the_sockets_memory(n):
    # Each of the n hops carries 2 (n-1)/n N and writes it into (then reads it from) the one
    # memory: n transfers share M/2 each way, so each runs at M / (2n).
    r = ring(one_socket(n))
    transfer = 2 * (n - 1) / n * N / (M / (2 * n))
    assert r.makespan - r.plan.latency == pytest.approx(transfer, rel=1e-9)


def test_without_memory_bandwidth_the_memory_is_no_limit():
    limited, free = ring(one_socket(2)), ring(one_socket(2, memory=None))
    assert free.makespan - free.plan.latency < (limited.makespan - limited.plan.latency) / 100


def two_sockets(memory_on):
    G = nx.Graph()
    for s in (0, 1):
        G.add_node(f"cpu{s}", kind="cpu", **({"memory_bandwidth": M} if s == memory_on else {}))
        G.add_node(f"g{s}", kind="gpu", model="A100", sm=80, p2p=False)
        G.add_edge(f"g{s}", f"cpu{s}", bandwidth=FAST, latency=0.0, technology="PCIe-gen4-x16")
    G.add_edge("cpu0", "cpu1", bandwidth=FAST, latency=0.0)
    return G


def test_the_buffer_is_in_the_receivers_memory():
    # A broadcast from g0 moves N from g0 to g1 only: NCCL's SHM buffer is on the receiver's
    # side (SHM_LOCALITY default), so only cpu1's memory limits it (one transfer: M/2).
    at_receiver = ring(two_sockets(memory_on=1), "broadcast")
    at_sender = ring(two_sockets(memory_on=0), "broadcast")
    assert at_receiver.makespan - at_receiver.plan.latency == pytest.approx(N / (M / 2), rel=1e-9)
    assert at_sender.makespan < at_receiver.makespan


def test_memory_bandwidth_must_be_positive_bytes_per_second():
    with pytest.raises(NcclModelError, match="memory_bandwidth must be bytes/s > 0, got 0"):
        ring(one_socket(2, memory=0))


def test_builders_give_epyc_sockets_their_memory_and_p2p_graphs_stage_nothing():
    G = pcie_box()
    assert {G.nodes[c]["memory_bandwidth"] for c in ("cpu0", "cpu1")} == {204.8e9}
    assert any("#mem" in str(src) for src in nccl.simulate(G, "allreduce", 2**27).links["src"])
    H = dgx_a100()
    assert not any("#mem" in str(src) for src in nccl.simulate(H, "allreduce", 2**27).links["src"])
