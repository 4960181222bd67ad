"""A builder counts the nodes and edges its arguments make and refuses, before building
anything, a graph that could not be held (topologies._validate.check_size): a
TopologyError naming the builder and the arguments, where star(10**30) ran out of
memory or time."""

import pytest

import topologies
from netsim.errors import TopologyError
from topologies import _validate

# builder call -> the nodes plus edges it makes, worked by hand from its structure
COUNTS = [
    (lambda: topologies.star(100), 2 * 100 + 1),                       # hosts, switch; a link each
    (lambda: topologies.two_tier(10, 4), 10 + 3 + 1 + 10 + 3),         # 3 racks: tors, core
    (lambda: topologies.leaf_spine(4, 2, 3), 12 + 4 + 2 + 12 + 8),     # hosts, leaves, spines
    (lambda: topologies.fat_tree(4), 16 + 20 + 48),                     # k^3/4, 5k^2/4, 3k^3/4
    (lambda: topologies.torus((3, 4)), 12 + 24),                        # a link per node per dim
    (lambda: topologies.torus((2, 5)), 10 + 5 + 10),                    # size 2: half the links
    (lambda: topologies.pcie_tree(gpus_per_switch=2, switches_per_socket=2, sockets=2),
     8 + 4 + 2 + 8 + 4 + 1),                                            # gpus, switches, cpus
    (lambda: topologies.pcie_box(gpus=6, sockets=3), 6 + 3 + 6 + 3),    # 3 socket pairs
]


@pytest.mark.parametrize("build, elements", COUNTS)
def test_the_count_is_the_graphs_own(monkeypatch, build, elements):
    G = build()
    assert G.number_of_nodes() + G.number_of_edges() == elements
    # exactly enough memory for that count passes; a byte less is refused
    monkeypatch.setattr(_validate, "available_memory", lambda: elements * _validate.ELEMENT_BYTES)
    build()
    monkeypatch.setattr(_validate, "available_memory",
                        lambda: elements * _validate.ELEMENT_BYTES - 1)
    with pytest.raises(TopologyError, match="nodes and edges, at least"):
        build()


def test_a_cluster_counts_each_machine_and_its_rails(monkeypatch):
    # A rail cluster of v machines has v V + R + 1 nodes and v E + v R + R edges (V, E a
    # machine's with its R NICs; rails.cluster_of): the count checked is v (V + E + R),
    # the whole less the R rail switches, the spine and the R rail-spine links. For a DGX
    # H100 (R = 8) that is 53 v of its 53 v + 17.
    G = topologies.dgx_h100(nodes=3)
    assert G.number_of_nodes() + G.number_of_edges() == 53 * 3 + 17
    monkeypatch.setattr(_validate, "available_memory", lambda: 53 * 3 * _validate.ELEMENT_BYTES)
    topologies.dgx_h100(nodes=3)
    monkeypatch.setattr(_validate, "available_memory",
                        lambda: 53 * 3 * _validate.ELEMENT_BYTES - 1)
    with pytest.raises(TopologyError, match="^dgx_h100: nodes=3 makes 159 nodes and edges"):
        topologies.dgx_h100(nodes=3)
    with pytest.raises(TopologyError, match="^dgx_h100: nodes=3 makes 159 nodes"):
        topologies.gpu_cluster("dgx_h100", 3)


@pytest.mark.parametrize("call, message", [
    (lambda: topologies.star(10**12),
     "star: n=1000000000000 makes 2e+12 nodes and edges, at least 638 TB at 319 B each, "
     "over the 17.2 GB of memory available"),
    (lambda: topologies.ring(10**30),
     "ring: n=1000000000000000000000000000000 makes 2e+30 nodes and edges, at least "
     "6.38e+17 PB at 319 B each, over the 17.2 GB of memory available"),
    # 10^18 hosts, 1.25e12 switches: 4 x 2.5e17 + 1.25e12
    (lambda: topologies.fat_tree(10**6),
     "fat_tree: k=1000000 makes 1e+18 nodes and edges, at least 3.19e+05 PB at 319 B each, "
     "over the 17.2 GB of memory available"),
    # 2^100 nodes and, in each of the 100 dimensions of size 2, 2^99 links: 102 x 2^99
    (lambda: topologies.torus((2,) * 100),
     "torus: dims of 100 dimensions makes 6.47e+31 nodes and edges"),
    (lambda: topologies.pcie_box(gpus=10**12),
     "pcie_box: gpus=1000000000000, sockets=2 makes 2e+12 nodes and edges"),
])
def test_huge_counts_refused_in_one_line(monkeypatch, call, message):
    monkeypatch.setattr(_validate, "available_memory", lambda: 2**34)
    with pytest.raises(TopologyError) as exc:
        call()
    assert str(exc.value).startswith(message)
    assert isinstance(exc.value, ValueError) and "\n" not in str(exc.value)
