"""Topologies round-trip through node-link JSON and GraphML: same graph, same simulation."""

import networkx as nx
import pytest

from netsim import TopologyError, simulate
from netsim.comm.collectives import alltoall, ring_allreduce
from netsim.formats.graphio import read_topology, write_topology
from topologies import dgx1, two_tier, torus


def directed_ring():
    G = nx.DiGraph(name="one-way ring of 4 hosts")
    for i in range(4):
        G.add_node(i, kind="host", coord=(i, 0))
        G.add_edge(i, (i + 1) % 4, bandwidth=1e9 * (i + 1), latency=1e-6, span=(i, i + 1))
    return G


CASES = {
    "dgx1": dgx1(),
    "dgx1_nics": dgx1(nics=True),
    "two_tier": two_tier(8, per_rack=4),
    "torus": torus((2, 4)),
    "directed_int_nodes": directed_ring(),
}


def same_graph(G, H):
    assert type(G) is type(H)
    assert G.graph == H.graph
    assert list(G.nodes) == list(H.nodes)  # same ids, same order: ranks are placed in it
    assert nx.is_isomorphic(G, H, node_match=dict.__eq__, edge_match=dict.__eq__)
    for n, data in G.nodes(data=True):
        assert H.nodes[n] == data, n
    for u, v, data in G.edges(data=True):
        assert H.edges[u, v] == data, (u, v)


@pytest.mark.parametrize("fmt", ["json", "graphml"])
@pytest.mark.parametrize("name", list(CASES))
def test_round_trip_keeps_graph_and_makespan(tmp_path, name, fmt):
    G = CASES[name]
    path = tmp_path / f"{name}.{fmt}"
    write_topology(G, path)
    H = read_topology(path)
    same_graph(G, H)
    P = 4 if G.is_directed() else 8
    for trace in (ring_allreduce(P, 8e6), alltoall(P, 1e6)):
        assert simulate(trace, H).makespan == simulate(trace, G).makespan


def test_torus_coords_come_back_as_tuples(tmp_path):
    for fmt in ("json", "graphml"):
        path = tmp_path / f"t.{fmt}"
        write_topology(torus((2, 2, 2)), path)
        assert read_topology(path).nodes["host7"]["coord"] == (1, 1, 1)


def test_bad_files_are_topology_errors(tmp_path):
    bad = tmp_path / "bad.graphml"
    bad.write_text("<graphml><oops")
    with pytest.raises(TopologyError, match="not a valid topology"):
        read_topology(bad)
    with pytest.raises(TopologyError, match="not found"):
        read_topology(tmp_path / "missing.json")
    with pytest.raises(TopologyError, match="use .json or .graphml"):
        write_topology(dgx1(), tmp_path / "g.gml")
