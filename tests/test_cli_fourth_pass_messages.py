"""Messages a fresh adversarial pass found misleading, each now naming what the user gave:
an unknown NCCL --protocol was reported against "op 0" of an internal trace; stage sizes
with one pipeline stage spoke of "0 middle pipeline stages"; a one-GPU pcie_box complained
of the sockets option the user never gave (its default 2)."""

import pytest

from netsim.errors import TopologyError
from studies.cli.parser import main
from topologies import pcie_box


@pytest.mark.parametrize("argv, message", [
    (["collective", "allreduce", "--library", "nccl", "-n", "1MB", "--protocol", "LL256"],
     "netsim: error: unknown --protocol 'LL256'; known: LL, LL128, Simple\n"),
    (["scale", "transformer", "-P", "16", "--last-stage-layers", "3", "--quiet"],
     "netsim: error: --first-stage-layers and --last-stage-layers split the layers over "
     "pipeline stages: they need --pp 2 or more (with --pp 1 one stage holds every layer)\n"),
    (["collective", "broadcast", "--library", "nccl", "-n", "1MB", "--topology",
      "pcie_box:gpus=1"],
     "netsim: error: pcie_box: sockets=2 is more than gpus=1: each socket holds at least one "
     "GPU; give sockets=1, or more gpus\n"),
])
def test_one_line_naming_the_option_given(capsys, argv, message):
    assert main(argv) == 2
    assert capsys.readouterr().err == message


def test_a_one_gpu_box_with_one_socket_builds():
    G = pcie_box(gpus=1, sockets=1)   # a GPU and a CPU, one PCIe link
    assert (G.number_of_nodes(), G.number_of_edges()) == (2, 1)
    with pytest.raises(TopologyError, match="sockets=3 is more than gpus=2"):
        pcie_box(gpus=2, sockets=3)
