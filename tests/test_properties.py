"""Invariants of the engine on random small topologies and traces (Hypothesis).

The bounded profile runs in CI; the extended one (10^4 examples per property) runs on
demand: ``HYPOTHESIS_PROFILE=extended python -m pytest tests/test_properties.py``.
"""

import math
import signal

import numpy as np
import pytest
from hypothesis import given

from netsim import Network, simulate
from random_cases import random_case
from reference import reference_replay
from strategies import cases


class _Timeout(Exception):
    pass


def simulate_bounded(trace, G, seconds=30):
    """simulate(), failing instead of hanging if a replay does not terminate."""
    def alarm(signum, frame):
        raise _Timeout(f"replay did not finish within {seconds} s")

    old = signal.signal(signal.SIGALRM, alarm)
    signal.alarm(seconds)
    try:
        return simulate(trace, G)
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)


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
    end, links = reference_replay(trace, G)
    assert r.ops["end"].tolist() == pytest.approx(end, rel=1e-9, abs=1e-15)
    busy = [links[k][0] for k in range(len(links))]
    sat = [links[k][1] for k in range(len(links))]
    assert r.links["busy"].tolist() == pytest.approx(busy, rel=1e-9, abs=1e-15)
    assert r.links["saturated"].tolist() == pytest.approx(sat, rel=1e-9, abs=1e-15)
    assert r.makespan == pytest.approx(max(end, default=0.0), rel=1e-9, abs=1e-15)
