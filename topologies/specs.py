"""Link speeds and latencies: an alias of :mod:`topologies.links`, kept for old imports.

Every constant, its public source and :func:`link_speed` live in
:mod:`topologies.links`; this module re-exports the rate tables and latencies
under their old names and holds nothing of its own.

Examples
--------
>>> from topologies import links, specs
>>> specs.ETHERNET is links.ETHERNET and specs.link_speed is links.link_speed
True
"""

from topologies.links import (
    CPU_INTERCONNECT,
    ETHERNET,
    ETHERNET_LATENCY,
    INFINIBAND,
    INFINIBAND_LATENCY,
    NVLINK,
    NVLINK_LATENCY,
    NVLINK_LINKS_PER_GPU,
    PCIE_LATENCY,
    PCIE_RATE,
    PCIE_X16,
    SOCKET_LATENCY,
    link_speed,
)

__all__ = [
    "ETHERNET",
    "INFINIBAND",
    "PCIE_X16",
    "PCIE_RATE",
    "NVLINK",
    "NVLINK_LINKS_PER_GPU",
    "CPU_INTERCONNECT",
    "ETHERNET_LATENCY",
    "INFINIBAND_LATENCY",
    "PCIE_LATENCY",
    "NVLINK_LATENCY",
    "SOCKET_LATENCY",
    "link_speed",
]
