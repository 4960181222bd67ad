"""The closed form's links of each parallelism: the data-parallel ring's slowest hop."""

from studies.scaling.transformer import links_of
from topologies import dgx_h100
from workloads.transformer.layout import Layout


def test_a_data_parallel_group_across_machines_is_costed_on_the_network():
    # tp = 1 on two 8-GPU machines: the 16 replicas' ring crosses the network twice. Replicas
    # 0 and 1 share a machine (NVLink), so costing the ring on them would hide the network.
    two = dgx_h100(nodes=2)
    across = links_of(two, Layout(8, 1, 2))["dp"]        # replicas on gpu0 and gpu8
    nvlink = links_of(dgx_h100(), Layout(8, 1, 1))["tp"]  # one machine's NVSwitch
    assert across[1] > nvlink[1]                          # the network is the slower
    for L in (Layout(1, 1, 16), Layout(2, 1, 8)):
        alpha, beta = links_of(two, L)["dp"]
        # The same network bandwidth; the hop from rail 0 to another rail (gpu0 to gpu15,
        # as the ring's hop gpu7 -> gpu8) also crosses the spine, one more latency.
        assert beta == across[1] and alpha >= across[0]
    # Inside one machine the group never leaves NVLink.
    assert links_of(dgx_h100(), Layout(1, 1, 8))["dp"][1] < across[1]
