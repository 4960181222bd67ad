"""Per-flow rate bounds: hand-worked max-min shares, both engine paths and the reference.

A bound is a private link of that capacity crossed by its flow alone (SimGrid's
variable bound), so each expected share below is worked by hand as max-min over the
links plus those private links.
"""

import networkx as nx
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engines import result
from netsim import Network, TraceBuilder
from netsim.engine import replay as engine, reference
from netsim.errors import NetsimError
from netsim.engine.maxmin import max_min_rates, max_min_rates_small
from random_cases import random_case

INF = np.inf
# The parking lot: flow 0 crosses links 0 and 1, flow 1 link 0, flow 2 link 1.
LINKS = np.array([[0, 1], [0, -1], [1, -1]])
CAP = np.array([10.0, 4.0])


@pytest.mark.parametrize("bound, expected", [
    # No bound: the textbook shares.
    ((INF, INF, INF), [2.0, 8.0, 2.0]),
    # Flow 1 at 3: link 0 has 7 left, flow 0 still meets link 1's share 4 / 2 = 2.
    ((INF, 3.0, INF), [2.0, 3.0, 2.0]),
    # Flow 2 at 1: link 1 gives flow 0 the other 3; link 0 gives flow 1 10 - 3 = 7.
    ((INF, INF, 1.0), [3.0, 7.0, 1.0]),
    # Flow 0 at 0.5: the others take what is left on their link, 9.5 and 3.5.
    ((0.5, INF, INF), [0.5, 9.5, 3.5]),
    # Bounds above every share change nothing.
    ((100.0, 100.0, 100.0), [2.0, 8.0, 2.0]),
])
def test_bounds_give_the_hand_worked_max_min_shares(bound, expected):
    routes = [[0, 1], [0], [1]]
    assert max_min_rates(LINKS, CAP, bound=np.array(bound)).tolist() == expected
    assert max_min_rates_small(routes, CAP.tolist(), bound=list(bound)) == expected
    got = reference.maxmin(dict(enumerate(routes)), {0: 10.0, 1: 4.0}, bound=dict(enumerate(bound)))
    assert [got[f] for f in range(3)] == pytest.approx(expected, rel=1e-12)


def test_a_bound_holds_within_its_priority_class():
    # Flow 1 urgent but bounded at 6: it takes 6 of link 0; the low class shares the rest:
    # link 1 gives flows 0 and 2 two each, link 0's 4 left is more than flow 0's 2.
    prio = np.array([0, 1, 0])
    bound = np.array([INF, 6.0, INF])
    assert max_min_rates(LINKS, CAP, priority=prio, bound=bound).tolist() == [2.0, 6.0, 2.0]
    assert max_min_rates_small([[0, 1], [0], [1]], CAP.tolist(), priority=prio.tolist(),
                               bound=bound.tolist()) == [2.0, 6.0, 2.0]


def _incast():
    G = nx.Graph()
    for h in ("a", "b", "c"):
        G.add_node(h, kind="host")
        G.add_edge(h, "sw", bandwidth=1e9, latency=0.0)
    G.nodes["sw"]["kind"] = "switch"
    b = TraceBuilder(3)
    b.message(0, 2, 1e6)
    b.message(1, 2, 1e6)
    return G, b.build()


@pytest.mark.parametrize("by, options", [(engine, {}), (engine, {"small_event": -1}),
                                         (reference, {})])
def test_a_bounded_message_leaves_the_rest_of_the_link_to_the_other(by, options):
    # Both 1 MB messages share the sink's 1 GB/s link; message 0 is bounded at 0.25 GB/s,
    # so message 1 gets 0.75 GB/s and ends at 1e6 / 0.75e9 = 1.333 ms. Message 0 has
    # moved 0.333 MB by then and takes the full link for the rest: 0.667 MB / 1 GB/s
    # would end at 2 ms, but its bound keeps it at 0.25 GB/s: it ends at 4 ms.
    G, trace = _incast()
    r = result(trace, G, by, bound=[0.25e9, np.inf], **options)
    assert r.ops["end"].tolist() == pytest.approx([4e-3, 1e-3 / 0.75], rel=1e-12)


def test_bad_bounds_are_refused():
    G, trace = _incast()
    net = Network(G)
    with pytest.raises(NetsimError, match="one rate per op"):
        engine.replay(trace, net, net.placement(3), trace.compute_seconds(), bound=[1e9])
    with pytest.raises(NetsimError, match="must be > 0"):
        engine.replay(trace, net, net.placement(3), trace.compute_seconds(), bound=[1e9, -1.0])


def _random_bounds(trace, seed):
    """A bound on about half the ops, spread over the random cases' bandwidths."""
    rng = np.random.default_rng(seed)
    b = 10 ** rng.uniform(3, 13, trace.num_ops)
    return np.where(rng.random(trace.num_ops) < 0.5, b, np.inf)


@pytest.mark.parametrize("seed", range(120))
def test_bounded_replays_match_the_reference_and_both_paths_agree_bit_for_bit(seed):
    G, trace = random_case(seed)
    bound = _random_bounds(trace, seed)
    fast = result(trace, G, bound=bound, link_series=True)
    batch = result(trace, G, bound=bound, link_series=True, small_event=-1)
    assert fast.to_json(ops=True) == batch.to_json(ops=True)
    ref = result(trace, G, reference, bound=bound)
    end = ref.ops["end"].tolist()
    assert fast.ops["end"].tolist() == pytest.approx(end, rel=1e-9, abs=1e-15)


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 6).flatmap(lambda links: st.tuples(
    st.lists(st.lists(st.integers(0, links - 1), min_size=1, max_size=3, unique=True),
             min_size=1, max_size=10),
    st.lists(st.floats(1e3, 1e13), min_size=links, max_size=links),
    st.lists(st.one_of(st.just(np.inf), st.floats(1e2, 1e14)), min_size=10, max_size=10))))
def test_bounded_plain_python_max_min_equals_compiled_bit_for_bit(case):
    routes, caps, bounds = case
    bounds = bounds[:len(routes)]
    hops = max(len(r) for r in routes)
    padded = np.array([r + [-1] * (hops - len(r)) for r in routes])
    rates = max_min_rates(padded, np.array(caps), pad=-1, bound=np.array(bounds))
    assert max_min_rates_small(routes, caps, bound=bounds) == rates.tolist()
    # Invariants: within every bound and every link's capacity.
    assert (rates <= np.array(bounds)).all()
    for k, c in enumerate(caps):
        assert sum(r for r, route in zip(rates, routes) if k in route) <= c * (1 + 1e-9)
