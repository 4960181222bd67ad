"""The small-event path's fused instants (netsim.engine.small.plain_callbacks) against its general
form: the same replay both ways agrees bit for bit, counters included, and the fused form
does take the usual desynchronised instants."""

import networkx as nx
from hypothesis import given
from hypothesis import strategies as st

from engines import result
from netsim import Network, TraceBuilder
from netsim.engine import replay as engine
from strategies import cases, desync_cases
from test_properties import bounded


def _same(a, b):
    assert a.to_json(ops=True) == b.to_json(ops=True)
    assert a.stats["settles"] == b.stats["settles"]
    assert a.stats["rate_solves"] == b.stats["rate_solves"]
    if a.link_series is not None:
        for key in ("time", "link", "load"):
            assert a.link_series[key].tobytes() == b.link_series[key].tobytes()


@given(st.one_of(cases(), desync_cases()), st.booleans())
def test_fused_and_general_small_instants_agree_bit_for_bit(case, series):
    G, trace = case
    fused = bounded(result, trace, G, link_series=series)
    general = bounded(result, trace, G, link_series=series, fused=False)
    _same(fused, general)


def _chain(steps, gap=1e-3, nbytes=1e6):
    """Rank 0 alternates a compute gap and a message to rank 1, each after the one before."""
    G = nx.Graph()
    G.add_node("a", kind="host")
    G.add_node("b", kind="host")
    G.add_edge("a", "b", bandwidth=1e9, latency=1e-6)
    b = TraceBuilder(2)
    last = ()
    for _ in range(steps):
        last = [b.message(0, 1, nbytes, deps=[b.compute(0, gap, deps=last)])]
    return G, b.build()


def test_a_desynchronised_chain_runs_all_but_its_first_wire_entry_fused(monkeypatch):
    # Each message is three instants (its gap ends; its latency ends and it goes on the
    # wire alone; its last byte arrives and its link empties), each one the fused form
    # handles, but for the first wire entry: the flow table builds its per-link index and
    # heaps lazily, on the general path. So 1 general settle step of 3 * steps; without
    # the fused form, all of them.
    G, trace = _chain(4)
    general_instants = []
    plain = engine._Replay._instant

    def counted(self, now, due):
        general_instants.append(now)
        return plain(self, now, due)

    monkeypatch.setattr(engine._Replay, "_instant", counted)
    fused = result(trace, G, link_series=True)
    assert (fused.stats["settles"], len(general_instants)) == (12, 1)
    general = result(trace, G, link_series=True, fused=False)
    assert (general.stats["settles"], len(general_instants)) == (12, 1 + 12)
    _same(fused, general)
    # Hockney per message: gap + latency + bytes / bandwidth, one after the other.
    assert fused.makespan == general.makespan
    assert abs(fused.makespan - 4 * (1e-3 + 1e-6 + 1e-3)) < 1e-15


def test_shared_links_and_simultaneous_ends_fall_back_to_the_general_form():
    # Two ranks send to a third at once: the second message shares the downlink (the
    # general re-rate), and both end together (a wake-up that pops two flows).
    G = nx.star_graph(3)
    nx.set_node_attributes(G, "host", "kind")
    G.nodes[0]["kind"] = "switch"
    nx.set_edge_attributes(G, 1e9, "bandwidth")
    nx.set_edge_attributes(G, 1e-6, "latency")
    b = TraceBuilder(3)
    for src in (0, 1):
        b.message(src, 2, 1e6, deps=[b.compute(src, 1e-3)])
    trace = b.build()
    net = Network(G)
    runs = [engine.replay(trace, net, net.placement(3), trace.compute_seconds(), fused=f)
            for f in (True, False)]
    assert runs[0].end.tobytes() == runs[1].end.tobytes()
    assert runs[0].settles == runs[1].settles
    # Max-min: both share the 1 GB/s downlink at 0.5 GB/s, 2 ms after their latency.
    assert abs(runs[0].makespan - (1e-3 + 2e-6 + 2e-3)) < 1e-15
