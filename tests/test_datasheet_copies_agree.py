"""A datasheet figure the layering makes the core repeat equals its home in ``topologies``.

The core may not import ``topologies`` (the layers point down only), yet the NCCL model needs
one NVLink's data rate to count the links of an edge that gives only its ``bandwidth``: so
:data:`netsim.comm.nccl.hardware.NVLINK_RATE` repeats, by compute capability, the NVLink
generations' figures whose home is :data:`topologies.links.NVLINK`. These tests keep the
copy equal to the home.
"""

import pytest

from netsim.comm.nccl import hardware
from topologies.devices import compute_capability
from topologies.links import NVLINK, NVLINK_LINKS_PER_GPU

# The NVLink generation of each GPU with NVLink (the whitepapers cited in topologies.links).
_GENERATION = {"P100": "NVLink1", "V100": "NVLink2", "A100": "NVLink3", "H100": "NVLink4",
               "H200": "NVLink4", "H800": "NVLink4", "B200": "NVLink5", "GB200": "NVLink5",
               "GB300": "NVLink5"}


@pytest.mark.parametrize("model", sorted(NVLINK_LINKS_PER_GPU))
def test_nccl_models_nvlink_rate_is_the_datasheets(model):
    cc = compute_capability(model)
    key = 100 if cc >= 100 else cc  # topo.h has one Blackwell row, SM100 (sm 103 reads it)
    assert hardware.NVLINK_RATE[key] == NVLINK[_GENERATION[model]]


def test_every_nvlink_generation_of_the_datasheets_is_known_to_the_core():
    assert set(_GENERATION.values()) == set(NVLINK)
