"""Invariants of the engine on random small topologies and traces (Hypothesis).

The bounded profile runs in CI; the extended one (10^4 examples per property) runs on
demand: ``HYPOTHESIS_PROFILE=extended python -m pytest tests/test_properties.py``.
The engine is compared with the plain-Python specification :mod:`netsim.engine.reference` on
random DAGs and on desynchronised traffic (rings and chains with random compute gaps).
"""

import math
import signal

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from engines import result
from netsim import Network, simulate
from netsim.engine import reference
from netsim.engine.maxmin import max_min_rates, max_min_rates_small
from random_cases import random_case
from strategies import cases, desync_cases


class _Timeout(Exception):
    pass


def bounded(run, *args, seconds=30, **options):
    """``run(*args, **options)``, failing instead of hanging if a replay does not terminate."""
    def alarm(signum, frame):
        raise _Timeout(f"replay did not finish within {seconds} s")

    old = signal.signal(signal.SIGALRM, alarm)
    signal.alarm(seconds)
    try:
        return run(*args, **options)
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)


def simulate_bounded(trace, G, seconds=30, **options):
    """simulate(), failing instead of hanging if a replay does not terminate."""
    return bounded(simulate, trace, G, seconds=seconds, **options)


def critical_path(trace, G):
    """Longest dependency chain, each message weighted by its uncontended Hockney time."""
    net = Network(G)
    nodes = net.placement(trace.ranks)
    secs = trace.compute_seconds()
    finish = np.zeros(trace.num_ops)
    for op in range(trace.num_ops):  # random_cases emits ops in dependency order
        deps = trace.deps(op)
        ready = finish[deps].max() if len(deps) else 0.0
        if trace.kind[op] == 1:
            links = net.route(int(nodes[trace.rank[op]]), int(nodes[trace.peer[op]]))
            lat = sum(float(net.latency[k]) for k in links)
            bw = min((float(net.bandwidth[k]) for k in links), default=math.inf)
            cost = lat + (trace.size[op] / bw if links and trace.size[op] else 0.0)
        else:
            cost = secs[op]
        finish[op] = ready + cost
    return finish.max() if trace.num_ops else 0.0


@given(cases())
def test_lower_bounds_utilisation_and_conservation(case):
    G, trace = case
    r = simulate_bounded(trace, G)
    lk = r.links
    tol = 1e-9
    # Makespan >= each link direction's bytes / bandwidth.
    assert r.makespan * (1 + tol) >= (lk["bytes"] / lk["bandwidth"]).max(initial=0.0)
    # Makespan >= the critical path with Hockney message times.
    assert r.makespan * (1 + tol) + 1e-15 >= critical_path(trace, G)
    # Utilisation never above 1.
    assert lk["peak_util"].max(initial=0.0) <= 1 + tol
    assert lk["mean_util"].max(initial=0.0) <= 1 + tol
    assert (lk["saturated"] <= lk["busy"] * (1 + tol) + 1e-15).all()
    assert (lk["busy"] <= r.makespan * (1 + tol) + 1e-15).all()
    # Bytes are conserved at every node: out - in = sent - received.
    net = Network(G)
    out = dict.fromkeys(net.nodes, 0.0)
    inn = dict.fromkeys(net.nodes, 0.0)
    for s, d, nbytes in zip(lk["src"], lk["dst"], lk["bytes"]):
        out[s] += nbytes
        inn[d] += nbytes
    sent = dict.fromkeys(net.nodes, 0.0)
    recv = dict.fromkeys(net.nodes, 0.0)
    msg = trace.is_message
    for src, dst, nbytes in zip(trace.rank[msg], trace.peer[msg], trace.size[msg]):
        sent[r.ranks["node"][src]] += nbytes
        recv[r.ranks["node"][dst]] += nbytes
    assert sum(sent.values()) == pytest.approx(sum(recv.values()))
    for node in net.nodes:
        # out - in cancels large totals: compare to the rounding of the largest term.
        scale = max(1.0, out[node], inn[node], sent[node], recv[node])
        assert out[node] - inn[node] == pytest.approx(sent[node] - recv[node], abs=1e-12 * scale)
    # Every op ran, and no op ended before it started.
    assert np.isfinite(r.ops["end"]).all()
    assert (r.ops["end"] >= r.ops["start"]).all()


@given(cases())
def test_same_input_same_result(case):
    G, trace = case
    assert simulate_bounded(trace, G).to_json(ops=True) == simulate_bounded(trace, G).to_json(ops=True)


@pytest.mark.parametrize("seed", range(200))
def test_engine_matches_reference_maxmin(seed):
    G, trace = random_case(seed)
    r = simulate(trace, G)
    ref = result(trace, G, reference)
    end = ref.ops["end"].tolist()
    assert r.ops["end"].tolist() == pytest.approx(end, rel=1e-9, abs=1e-15)
    busy, sat = ref.links["busy"].tolist(), ref.links["saturated"].tolist()
    assert r.links["busy"].tolist() == pytest.approx(busy, rel=1e-9, abs=1e-15)
    assert r.links["saturated"].tolist() == pytest.approx(sat, rel=1e-9, abs=1e-15)
    assert r.makespan == pytest.approx(max(end, default=0.0), rel=1e-9, abs=1e-15)


def integrated_bytes(r):
    """Bytes each link direction carried: the integral of its load series over time."""
    series = r.link_series
    out = np.zeros(len(r.links["bytes"]))
    order = np.lexsort((series["time"], series["link"]))
    link, t, load = series["link"][order], series["time"][order], series["load"][order]
    for k in np.unique(link):
        sel = link == k
        ts, xs = t[sel], load[sel]
        assert xs[-1] == 0.0  # every flow ended: the load is back to zero
        out[k] = float(np.sum(xs[:-1] * np.diff(ts)))
    return out


@given(st.one_of(cases(), desync_cases()))
def test_bytes_conserved_by_the_rate_series(case):
    # Integrating each link direction's rate series gives its bytes; at every node the
    # bytes leaving minus those arriving equal what its ranks sent minus what they received.
    G, trace = case
    r = simulate_bounded(trace, G, link_series=True)
    carried = integrated_bytes(r)
    net = Network(G)
    balance = dict.fromkeys(net.nodes, 0.0)
    scale = dict.fromkeys(net.nodes, 1.0)
    slack = dict.fromkeys(net.nodes, 0.0)
    # A flow ends once within FINISH_RTOL * t of its predicted end, so up to
    # load * 1e-12 * t of its bytes are never integrated; every instant is also rounded
    # to the resolution of t. Allow 100 such terms per link direction.
    peak = r.links["peak_util"] * r.links["bandwidth"] * r.makespan
    for s, d, nbytes, worst in zip(r.links["src"], r.links["dst"], carried, peak):
        balance[s] += nbytes
        balance[d] -= nbytes
        scale[s] = max(scale[s], nbytes)
        scale[d] = max(scale[d], nbytes)
        slack[s] += 1e-10 * worst
        slack[d] += 1e-10 * worst
    msg = trace.is_message
    for src, dst, nbytes in zip(trace.rank[msg], trace.peer[msg], trace.size[msg]):
        a, b = r.ranks["node"][src], r.ranks["node"][dst]
        balance[a] -= nbytes
        balance[b] += nbytes
        scale[a] = max(scale[a], nbytes)
        scale[b] = max(scale[b], nbytes)
    for node in net.nodes:
        assert balance[node] == pytest.approx(0.0, abs=1e-9 * scale[node] + slack[node])


def assert_matches_reference(trace, G):
    r = simulate_bounded(trace, G)
    ref = result(trace, G, reference)
    end = ref.ops["end"].tolist()
    assert r.ops["end"].tolist() == pytest.approx(end, rel=1e-9, abs=1e-15)
    # Busy and saturated times are sums of differences of instants, each instant exact
    # to a relative 1e-9: a short interval late in a long run is exact to 1e-9 of the run.
    span = 1e-9 * max(end, default=0.0) + 1e-15
    busy, sat = ref.links["busy"].tolist(), ref.links["saturated"].tolist()
    assert r.links["busy"].tolist() == pytest.approx(busy, rel=1e-9, abs=span)
    assert r.links["saturated"].tolist() == pytest.approx(sat, rel=1e-9, abs=span)


@given(desync_cases())
def test_engine_matches_reference_on_desynchronised_traffic(case):
    assert_matches_reference(case[1], case[0])


@given(cases())
def test_engine_matches_reference_on_random_dags(case):
    assert_matches_reference(case[1], case[0])


@given(st.one_of(cases(), desync_cases()))
def test_incremental_and_batch_paths_agree_bit_for_bit(case):
    # The same replay with every event forced onto the compiled batch path.
    G, trace = case
    fast = bounded(result, trace, G, link_series=True)
    batch = bounded(result, trace, G, link_series=True, small_event=-1)
    assert fast.to_json(ops=True) == batch.to_json(ops=True)
    for key in ("time", "link", "load"):
        assert fast.link_series[key].tobytes() == batch.link_series[key].tobytes()


routes_and_caps = st.integers(1, 6).flatmap(lambda links: st.tuples(
    st.lists(st.lists(st.integers(0, links - 1), min_size=1, max_size=3, unique=True),
             min_size=1, max_size=10),
    st.lists(st.one_of(st.sampled_from([1e3, 1.25e9]), st.floats(1e3, 1e13)),
             min_size=links, max_size=links)))


@given(routes_and_caps)
def test_plain_python_max_min_equals_numpy_bit_for_bit(case):
    routes, caps = case
    hops = max(len(r) for r in routes)
    padded = np.array([r + [-1] * (hops - len(r)) for r in routes])
    expected = max_min_rates(padded, np.array(caps), pad=-1).tolist()
    assert max_min_rates_small(routes, caps) == expected


def test_sub_byte_messages_are_refused_and_the_smallest_message_stays_within_capacity():
    # A denormal size (2.2e-313 bytes, the extended profile's counterexample: a mean
    # utilisation of 1.0008 on 1.25e9 B/s) carries no byte: Trace refuses (0, 1).
    import networkx as nx

    from netsim import TraceBuilder
    from netsim.errors import TraceError

    for tiny in (5e-324, 2.2e-313, 0.5):
        b = TraceBuilder(2)
        b.message(0, 1, tiny)
        with pytest.raises(TraceError, match="op 0 has a size between 0 and 1 byte"):
            b.build()
    # The smallest valid message, 1 byte at 1e13 B/s: 1e-13 s, utilisation exactly 1.
    G = nx.Graph()
    G.add_node("a", kind="host")
    G.add_node("b", kind="host")
    G.add_edge("a", "b", bandwidth=1e13, latency=0.0)
    b = TraceBuilder(2)
    b.message(0, 1, 1.0)
    trace = b.build()
    assert result(trace, G, reference).ops["end"].tolist() == [pytest.approx(1e-13, rel=1e-12)]
    r = simulate_bounded(trace, G)
    assert r.ops["end"].tolist() == [pytest.approx(1e-13, rel=1e-12)]
    assert r.links["mean_util"].max() <= 1 + 1e-12
