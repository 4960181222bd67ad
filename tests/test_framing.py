"""Framing in the core: a link's ``efficiency`` edge attribute scales its capacity."""

import networkx as nx
import pytest

from netsim import TopologyError, TraceBuilder, simulate
from netsim.comm.collectives import ring_allreduce
from netsim.network.compiled import Network
from netsim.engine import reference
from engines import result
from topologies import fat_tree, leaf_spine, star, two_tier

RATE, LAT, SIZE = 1.25e9, 1e-6, 100e6


def tcp_ipv4_over_ethernet(mtu):
    """Payload share of the line rate, recomputed here from the header sizes.

    IEEE 802.3 frame around an MTU-byte payload: preamble 7 + SFD 1 + destination MAC 6
    + source MAC 6 + EtherType 2 + FCS 4 + inter-packet gap 12 bytes; inside it IPv4 20
    (RFC 791) + TCP 20 (RFC 9293) + timestamps option 12 (RFC 7323, padded).
    """
    return (mtu - 20 - 20 - 12) / (mtu + 7 + 1 + 6 + 6 + 2 + 4 + 12)


def bulk():
    b = TraceBuilder(2)
    b.message(0, 1, SIZE)
    return b.build()


@pytest.mark.parametrize("mtu", [1500, 9000])
def test_10gbe_star_bulk_transfer_runs_at_the_payload_rate(mtu):
    G = star(2, bandwidth=RATE, latency=LAT, mtu=mtu)
    eff = tcp_ipv4_over_ethernet(mtu)
    assert eff == pytest.approx({1500: 1448 / 1538, 9000: 8948 / 9038}[mtu], rel=1e-15)
    expected = 2 * LAT + SIZE / (RATE * eff)
    assert simulate(bulk(), G).makespan == pytest.approx(expected, rel=1e-12)
    end = result(bulk(), G, by=reference).ops["end"].tolist()
    assert end[0] == pytest.approx(expected, rel=1e-12)


def test_no_mtu_keeps_the_raw_bandwidth_and_the_same_graph():
    G = star(2, bandwidth=RATE, latency=LAT)
    assert not any("efficiency" in d for _, _, d in G.edges(data=True))
    assert simulate(bulk(), G).makespan == pytest.approx(2 * LAT + SIZE / RATE, rel=1e-12)
    assert nx.utils.graphs_equal(G, star(2, bandwidth=RATE, latency=LAT, mtu=None))


@pytest.mark.parametrize("build", [
    lambda mtu: star(4, mtu=mtu),
    lambda mtu: two_tier(4, 2, mtu=mtu),
    lambda mtu: leaf_spine(2, 2, 2, mtu=mtu),
    lambda mtu: fat_tree(4, mtu=mtu),
])
def test_every_ethernet_cluster_builder_frames_every_link(build):
    plain, framed = Network(build(None)), Network(build(1500))
    eff = tcp_ipv4_over_ethernet(1500)
    assert framed.bandwidth == pytest.approx(plain.bandwidth * eff, rel=1e-15)
    assert "MTU 1500" in build(1500).graph["name"]


def test_a_collective_gets_the_framing_too():
    # Ring allreduce of S bytes on P hosts of a star: 2 (P - 1) steps, each a chunk of
    # S / P bytes per host link direction, one flow each: 2 hops of latency + S / (P B eff).
    P, S = 4, 64e6
    eff = tcp_ipv4_over_ethernet(1500)
    G = star(P, bandwidth=RATE, latency=LAT, mtu=1500)
    expected = 2 * (P - 1) * (2 * LAT + S / P / (RATE * eff))
    assert simulate(ring_allreduce(P, S), G).makespan == pytest.approx(expected, rel=1e-12)


@pytest.mark.parametrize("mtu, match", [
    (40, "star: mtu 40 is not a TCP/IPv4-over-Ethernet MTU"),
    (1500.0, "mtu 1500.0"),
    ("jumbo", "mtu 'jumbo'"),
])
def test_bad_mtu_is_named(mtu, match):
    with pytest.raises(TopologyError, match=match):
        star(2, mtu=mtu)


def test_unknown_technology_is_refused_by_the_efficiency_function():
    from topologies.links import payload_efficiency

    with pytest.raises(TopologyError, match="Token Ring"):
        payload_efficiency("Token Ring", 1500)
