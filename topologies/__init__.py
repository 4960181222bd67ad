"""Hardware topologies as networkx graphs.

Builders are plain functions returning an undirected :class:`networkx.Graph`:
an edge is a full-duplex link with ``bandwidth`` (bytes/s per direction) and
``latency`` (seconds); a node has a ``kind`` (``gpu``, ``host``, ``cpu``,
``pcie_switch``, ``nvswitch``, ``nic``, ``switch``); compute nodes come first,
in rank order; ``G.graph["name"]`` describes the graph. Link speeds and
latencies live in :mod:`topologies.specs` with their public sources.

Clusters: :func:`star`, :func:`two_tier`, :func:`leaf_spine`, :func:`fat_tree`,
:func:`ring`, :func:`torus`. Machines: :func:`pcie_tree`, :func:`dgx1`,
:func:`dgx_a100`, :func:`dgx_h100`, :func:`hgx_h200`, :func:`dgx_b200`,
:func:`hgx_h800`, :func:`pcie_box`, :func:`l40s_box` (:mod:`topologies.machines`),
:func:`mi300x` (:mod:`topologies.machines_mesh`), :func:`gb200_nvl72` and
:func:`gb300_nvl72` (NVLink-domain racks, :mod:`topologies.machines_nvl`). GPU
throughput presets: :func:`device_flops` (:mod:`topologies.devices`).

Examples
--------
>>> from topologies import star, link_speed
>>> star(8, bandwidth=link_speed("100GbE")).graph["name"]
'star(8 hosts, 100 Gbps)'
"""

from topologies import links, specs
from topologies.clusters import fat_tree, leaf_spine, ring, star, torus, two_tier
from topologies.devices import DEVICES, DeviceError, device_flops
from topologies.gpu_clusters import gpu_cluster
from topologies.machines import (
    dgx1,
    dgx_a100,
    dgx_b200,
    dgx_h100,
    hgx_h200,
    hgx_h800,
    l40s_box,
    pcie_box,
    pcie_tree,
)
from topologies.machines_mesh import mi300x
from topologies.machines_nvl import gb200_nvl72, gb300_nvl72
from topologies.specs import *  # noqa: F403 -- link speeds and latencies: the names of specs.__all__

# Names of the builders, for the CLI's name -> builder table.
BUILDERS = (
    "star",
    "two_tier",
    "leaf_spine",
    "fat_tree",
    "ring",
    "torus",
    "pcie_tree",
    "dgx1",
    "dgx_a100",
    "dgx_h100",
    "hgx_h200",
    "dgx_b200",
    "hgx_h800",
    "pcie_box",
    "l40s_box",
    "mi300x",
    "gb200_nvl72",
    "gb300_nvl72",
    "gpu_cluster",
)

__all__ = ["BUILDERS", *BUILDERS, *specs.__all__, "DEVICES", "DeviceError", "device_flops"]
