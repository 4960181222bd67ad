"""The closed form's links of each parallelism: the data-parallel ring's slowest hop."""

import pytest

from studies.scaling.transformer import links_of
from topologies import dgx_h100
from workloads.transformer.layout import Layout


def test_a_data_parallel_group_across_machines_is_costed_on_the_network():
    # MPICH's ring: tp = 1 on two 8-GPU machines: the 16 replicas' ring crosses the network twice. Replicas
    # 0 and 1 share a machine (NVLink), so costing the ring on them would hide the network.
    two = dgx_h100(nodes=2)
    across = links_of(two, Layout(8, 1, 2), library="mpich")["dp"]  # replicas on gpu0 and gpu8
    nvlink = links_of(dgx_h100(), Layout(8, 1, 1))["tp"]  # one machine's NVSwitch
    assert across[1] > nvlink[1]                          # the network is the slower
    for L in (Layout(1, 1, 16), Layout(2, 1, 8)):
        alpha, beta = links_of(two, L, library="mpich")["dp"]
        # The same network bandwidth; the hop from rail 0 to another rail (gpu0 to gpu15,
        # as the ring's hop gpu7 -> gpu8) also crosses the spine, one more latency.
        assert beta == across[1] and alpha >= across[0]
    # Inside one machine the group never leaves NVLink.
    assert links_of(dgx_h100(), Layout(1, 1, 8))["dp"][1] < across[1]


def test_nccls_data_parallel_ring_stripes_over_its_members_nics():
    # NCCL's ring leaves each machine one channel per NIC, each through its own GPU's NIC
    # (one 400 Gb/s NIC per GPU on DGX H100): 16 replicas on two machines (tp 1) move their
    # ring at 8 NICs' rate, 8 replicas of tp 2 at 4 (the other tp shard's group has the
    # other 4 NICs), tp 8's one replica per machine at one NIC's. By hand: beta of one NDR
    # NIC 1 / 50e9 = 2e-11 s/B, so 2.5e-12, 5e-12 and 2e-11.
    two = dgx_h100(nodes=2)
    for L, beta in ((Layout(1, 1, 16), 2.5e-12), (Layout(2, 1, 8), 5e-12),
                    (Layout(8, 1, 2), 2e-11)):
        assert links_of(two, L)["dp"][1] == pytest.approx(beta, rel=1e-12)
        assert links_of(two, L, library="mpich")["dp"][1] == pytest.approx(2e-11, rel=1e-12)
    # one machine: the group never reaches a NIC, NVLink as before
    assert links_of(dgx_h100(), Layout(1, 1, 8))["dp"] == links_of(dgx_h100(), Layout(1, 1, 8),
                                                                   library="mpich")["dp"]
