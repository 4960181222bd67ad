"""Extreme link values and stragglers on absent ranks are refused before any work.

A link's latency is compared as whole femtoseconds in 64-bit integers (2^63 fs, about
9223 s): beyond netsim.units.MAX_LATENCY the conversion would overflow (a numpy
RuntimeWarning reached the user at 1e4 s and 1e300 s); below netsim.units.MIN_BANDWIDTH
a transfer's time is infinite (a 1 GB message at 1e-300 B/s was "ops that can never run").
A sweep's straggler naming a rank that a point at a small P does not have was an error
row after the grid ran.
"""

import warnings

import networkx as nx
import pytest

from conftest import one_line_error
from netsim.errors import NetsimError, TopologyError
from netsim.network.compiled import Network
from netsim.units import MAX_LATENCY, MIN_BANDWIDTH


@pytest.mark.parametrize("spec, needle", [
    ("star:latency=1e300s", "over the longest accepted, 3600 s"),
    ("star:latency=1e4s", "over the longest accepted, 3600 s"),
    ("star:bandwidth=1e-300Bps", "under the slowest accepted, 0.001 bytes/s"),
    ("star:bandwidth=1e-4Bps", "under the slowest accepted"),
])
def test_extreme_link_values_are_one_line(spec, needle, capsys):
    one_line_error(capsys, ["collective", "ring", "-P", "4", "-n", "1GB", "--topology", spec],
                   needle)


@pytest.mark.parametrize("attrs, needle", [
    ({"bandwidth": 1e9, "latency": 1e300}, "latency"),
    ({"bandwidth": 1e9, "latency": MAX_LATENCY * 1.01}, "latency"),
    ({"bandwidth": 1e-300, "latency": 0.0}, "bandwidth"),
])
def test_a_graph_with_extreme_edges_is_refused(attrs, needle):
    G = nx.Graph()
    G.add_edge("a", "b", **attrs)
    with pytest.raises(TopologyError, match=needle):
        Network(G)


def test_the_bounds_themselves_give_the_closed_form_without_warnings(capsys):
    """At the largest latency and the smallest bandwidth the ring's time is Hockney's,
    2 (P - 1) (alpha + n / (P beta)) on a star (two links per hop: alpha is 2 x latency),
    and no RuntimeWarning is raised on the way."""
    from netsim.analysis.collectives import compare
    from topologies import star

    P, n = 4, 1e3
    for lat, bw in ((MAX_LATENCY, 1e9), (1e-6, MIN_BANDWIDTH)):
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            out = compare("ring", star(P, bandwidth=bw, latency=lat), P, n)
        hockney = 2 * (P - 1) * (2 * lat + n / P / bw)
        assert out["simulated"] == pytest.approx(hockney, rel=1e-9)


def test_a_sweep_straggler_on_an_absent_rank_is_refused_with_the_point(tmp_path, capsys):
    from studies.sweep.config import check_config

    with pytest.raises(NetsimError, match=r"rank 7, but the point allreduce at P = 4 on star "
                                          r"has ranks 0\.\.3 only"):
        check_config({"topologies": ["star"], "paradigms": ["allreduce"], "P": [4, 8],
                      "straggler": ["7:10x"]})
    # ps-sync at P = 4 has a server, rank 4: naming it is fine, rank 5 is not
    check_config({"topologies": ["star"], "paradigms": ["ps-sync"], "P": [4], "straggler": "4:2x"})
    with pytest.raises(NetsimError, match="ps-sync at P = 4 on star has ranks 0..4 only"):
        check_config({"topologies": ["star"], "paradigms": ["ps-sync"], "P": [4],
                      "straggler": "5:2x"})
    path = tmp_path / "s.yaml"
    path.write_text("topologies: [star]\nparadigms: [allreduce]\nP: [4, 8]\n"
                    "straggler: ['7:10x']\n")
    one_line_error(capsys, ["sweep", str(path), "-o", str(tmp_path / "s.csv")], "rank 7")
    assert not (tmp_path / "s.csv").exists()  # refused before the first point


def test_a_torus_too_large_and_a_deeply_nested_config_are_one_line(capsys, tmp_path):
    # dims=100000x100000: 1e10 nodes, extended from tori of 4x4 and 8x8 (never built)
    one_line_error(capsys, ["topology", "torus:dims=100000x100000"], "dims=100000x100000",
                   "over the")
    deep = tmp_path / "deep.json"
    deep.write_text("[" * 100000 + "]" * 100000)
    one_line_error(capsys, ["sweep", str(deep)], "nested too deeply")
