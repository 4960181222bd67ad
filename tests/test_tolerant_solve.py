"""``replay(..., exact=False)``: the tolerance-bounded batch solve agrees with the exact replay.

:mod:`netsim.engine.tolerant` re-solves only the flows an instant changes and verifies
max-min's bottleneck conditions within a relative 1e-12; its results are held here to
the exact batch path and to the plain-Python reference engine
(:mod:`netsim.engine.reference`) within a relative 1e-9 on every op's start, first byte
and end, on random traces with every instant a batch, jittered all-gathers on stars
whose up and down links tie, rate bounds and TCP. Each check also asserts that the
tolerant solve ran (and succeeded) on the case, so that it cannot pass by falling back.
After every tolerant solve, each flow's known bottleneck (the link, or its rate bound,
where the solve verified its condition; an instant scans a link that changed only for the
flows that may have had it as theirs) is recomputed from the flow table's own rates, and
each link's counts from the flows (the ``known`` fixture): a stale bottleneck or a wrong
count would let the scan skip a flow whose rate must change.
Priority classes and the numpy loops always solve exactly: bit for bit the exact replay.
A fresh process (no compiled kernels loaded) gives the same bits as a warm one.
"""

import numpy as np
import pytest

from netsim import Network, TraceBuilder
from netsim.engine import reference
from netsim.engine import flows as flows_module
from netsim.engine import tolerant
from netsim.engine.replay import replay
from netsim.errors import NetsimError
from random_cases import jittered_allgather as _jittered_allgather
from random_cases import random_case, star as _star

RTOL = 1e-9


SAT = 1 - tolerant.TOLERANCE


def _check(table):
    """Every active flow's known bottleneck holds; the per-link counts are the flows'."""
    solver = table._solver
    if solver is None or solver.state is None or table._lists is None:
        return 0
    count, _, _, _, _, nb, nu, bn = solver.state
    pad = solver.pad
    active = np.flatnonzero(table.fl_active)
    rate, links = table.fl_rate, table.fl_links
    load = np.zeros(pad + 1)
    top = np.zeros(pad + 1)
    np.add.at(load, links[active].ravel(), np.repeat(rate[active], links.shape[1]))
    np.maximum.at(top, links[active].ravel(), np.repeat(rate[active], links.shape[1]))
    want_nb = np.zeros(pad + 1, np.int64)
    want_nu = np.zeros(pad + 1, np.int64)
    known = 0
    for s in active.tolist():
        b = int(bn[s])
        on = [k for k in links[s].tolist() if k != pad]
        if b < 0:
            for k in on:
                want_nu[k] += 1
            continue
        known += 1
        want_nb[b] += 1
        if b == pad:
            assert rate[s] >= table.fl_bound[s] * SAT * (1 - 1e-12), s
            continue
        assert b in on, (s, b)
        # saturated and the largest rate there, within the tolerance (and the rounding of
        # a sum of a few hundred rates)
        assert load[b] >= table.cap[b] * SAT * (1 - 1e-12), (s, b, load[b], table.cap[b])
        assert rate[s] >= top[b] * SAT * (1 - 1e-12), (s, b, rate[s], top[b])
    assert np.array_equal(nb[:pad], want_nb[:pad])
    assert np.array_equal(nu[:pad], want_nu[:pad])
    assert np.array_equal(count[:pad], np.bincount(links[active].ravel(),
                                                   minlength=pad + 1)[:pad])
    return known


@pytest.fixture
def known(monkeypatch):
    """After each tolerant solve that succeeded, checks the flow table's known bottlenecks
    and counts (:func:`_check`); the known bottlenecks seen at each."""
    seen = []
    rerate = flows_module.FlowTable._rerate_tolerant

    def checking(self, added, removed):
        done = rerate(self, added, removed)
        if done:
            seen.append(_check(self))
        return done

    monkeypatch.setattr(flows_module.FlowTable, "_rerate_tolerant", checking)
    return seen


@pytest.fixture
def solves(monkeypatch, known):
    """Counts the tolerant solves that succeeded during a test (each also checked by
    :func:`known`)."""
    done = []
    solve = tolerant.solve

    def counted(*args):
        out = solve(*args)
        done.append(bool(out[0]))
        return out

    monkeypatch.setattr(tolerant, "solve", counted)
    return done


def _replays(trace, G, **options):
    net = Network(G)
    args = (trace, net, net.placement(trace.ranks), trace.compute_seconds())
    exact = replay(*args, batch="compiled", **options)
    inexact = replay(*args, batch="compiled", exact=False, **options)
    return exact, inexact, args


def _close(a, b, makespan):
    """Times within RTOL of each other, relative to themselves or the makespan (near 0)."""
    both = ~np.isnan(a)
    assert np.array_equal(both, ~np.isnan(b))
    np.testing.assert_allclose(a[both], b[both], rtol=RTOL, atol=RTOL * makespan)


def _agree(x, y):
    for name in ("start", "transfer", "end"):
        _close(getattr(x, name), getattr(y, name), x.makespan)
    assert y.makespan == pytest.approx(x.makespan, rel=RTOL)
    np.testing.assert_allclose(x.link_bytes, y.link_bytes, rtol=1e-12)  # (summed alike)
    np.testing.assert_allclose(x.link_busy, y.link_busy, rtol=RTOL, atol=RTOL * x.makespan)
    assert np.array_equal(x.link_peak_flows, y.link_peak_flows)


@pytest.mark.parametrize("seed", range(60))
def test_random_traces_with_every_instant_a_batch_agree_with_the_exact_and_reference(
        seed, solves):
    G, trace = random_case(seed)
    exact, inexact, args = _replays(trace, G, small_event=-1)
    _agree(exact, inexact)
    _agree(reference.replay(*args), inexact)
    if trace.num_messages > 1:
        assert all(solves) or not solves  # (these small cases never give up)


@pytest.mark.parametrize("seed", range(100, 140))
def test_random_traces_with_rate_bounds_agree_with_the_exact_and_reference(seed, solves):
    G, trace = random_case(seed)
    rng = np.random.default_rng(seed)
    bound = np.where(rng.random(trace.num_ops) < 0.5, rng.uniform(1e3, 1e9, trace.num_ops),
                     np.inf)
    exact, inexact, args = _replays(trace, G, small_event=-1, bound=bound)
    _agree(exact, inexact)
    _agree(reference.replay(*args, bound=bound), inexact)


@pytest.mark.parametrize("uneven", [False, True])
@pytest.mark.parametrize("seed", range(4))
def test_a_jittered_all_gather_on_a_star_agrees(seed, uneven, solves, known):
    """Equal links tie (a flow's up and down links share alike): the verification's hard case."""
    G = _star(10, uneven)
    exact, inexact, args = _replays(_jittered_allgather(10, seed), G)
    _agree(exact, inexact)
    _agree(reference.replay(*args), inexact)
    assert sum(solves) >= 5  # the tolerant solve did the instants, not the fallback
    assert max(known) > 0  # and knew bottlenecks


@pytest.mark.parametrize("seed", range(4))
def test_equal_sizes_make_every_rate_tie_and_still_agree(seed, solves):
    exact, inexact, _ = _replays(_jittered_allgather(12, seed, sizes=(2e5,)), _star(12, False))
    _agree(exact, inexact)
    assert sum(solves) >= 5


@pytest.mark.parametrize("seed", range(6))
def test_rate_bounds_agree(seed, solves):
    trace = _jittered_allgather(8, seed)
    rng = np.random.default_rng(seed)
    bound = np.where(rng.random(trace.num_ops) < 0.4, rng.uniform(5e7, 5e8, trace.num_ops),
                     np.inf)
    exact, inexact, args = _replays(trace, _star(8), bound=bound, small_event=2)
    _agree(exact, inexact)
    _agree(reference.replay(*args, bound=bound), inexact)
    assert sum(solves) >= 5


@pytest.mark.parametrize("seed", range(3))
def test_tcp_agrees(seed, solves):
    exact, inexact, _ = _replays(_jittered_allgather(8, seed), _star(8), transport="tcp",
                                 small_event=2)
    _agree(exact, inexact)
    assert any(solves)


def test_the_link_series_agrees_in_its_loads():
    exact, inexact, _ = _replays(_jittered_allgather(8, 0), _star(8), link_series=True)
    _agree(exact, inexact)
    for x, y in ((exact.link_series, inexact.link_series),):
        # every load the exact replay reached, the inexact one reached within RTOL
        for link in np.unique(x["link"]).tolist():
            a = np.unique(x["load"][x["link"] == link])
            b = np.unique(y["load"][y["link"] == link])
            near = np.abs(a[:, None] - b[None, :]) <= RTOL * np.maximum(np.abs(a[:, None]), 1)
            assert near.any(axis=1).all(), link


def test_priority_classes_and_the_numpy_loops_solve_exactly(solves):
    trace = _jittered_allgather(8, 1)
    net = Network(_star(8))
    args = (trace, net, net.placement(8), trace.compute_seconds())
    prio = np.arange(trace.num_ops) % 3
    for options in ({"sharing": "priority", "priority": prio, "batch": "compiled"},
                    {"batch": "numpy"}):
        a = replay(*args, **options)
        b = replay(*args, exact=False, **options)
        for name in ("start", "transfer", "end", "link_busy", "link_saturated"):
            assert np.array_equal(getattr(a, name), getattr(b, name), equal_nan=True), name
    assert not solves


def test_a_solve_by_hand():
    """Flows 0 and 1 share link 0 (10 B/s); flow 1 also crosses link 1 (4 B/s), flow 0
    link 2 (100 B/s). Flow 0 was alone at 10; flow 1 joins: link 1 caps it at 4, flow 0
    gets the 6 left (max-min: 6 and 4), and only the two flows and links 0-2 are touched."""
    from netsim.engine.kernels import index_add

    links = np.array([[0, 2], [0, 1]])
    pad = 3
    head, nxt, prv = np.full(4, -1), np.zeros(4, np.int64), np.zeros(4, np.int64)
    index_add(np.array([0, 1]), links, pad, head, nxt, prv)
    cap, rate = np.array([10.0, 4.0, 100.0, np.inf]), np.array([10.0, 0.0])
    load = np.array([10.0, 0.0, 10.0, 0.0])
    state = tolerant.new_state(np.array([2, 1, 1, 0]), 2)
    tolerant.exact_links(np.array([0]), np.array([0, 2]), links, rate, state, pad, True)
    z, b, i = np.zeros, (lambda n: np.zeros(n, bool)), (lambda: np.zeros(4, np.int64))
    ok, comp, rates, changed, new_load, _ = tolerant.solve(
        np.array([1]), np.zeros(0, np.int64), head, nxt, links, rate, np.zeros(0), cap, load,
        state, pad, 8, 100, tolerant.TOLERANCE, 1 + 1e-12, b(2), b(4), i(), z(2), z(4), z(4),
        z(4), z(4), z(4), i(), i())
    assert ok
    assert dict(zip(comp.tolist(), rates.tolist())) == {0: 6.0, 1: 4.0}
    assert changed.tolist() == [0, 1, 2]
    assert new_load.tolist() == [10.0, 4.0, 6.0]


def test_exact_must_be_a_bool():
    b = TraceBuilder(2)
    b.message(0, 1, 1e3)
    trace = b.build()
    net = Network(_star(2))
    with pytest.raises(NetsimError, match="exact must be True or False"):
        replay(trace, net, net.placement(2), trace.compute_seconds(), exact="no")


_CHILD = """
import sys
from netsim import Network
from netsim.engine.replay import replay
from random_cases import jittered_allgather, star
trace = jittered_allgather(10, 3)
net = Network(star(10, False))
assert "netsim.engine.kernels" not in sys.modules
rec = replay(trace, net, net.placement(10), trace.compute_seconds(), exact=False)
print(" ".join(x.hex() for x in rec.end.tolist()))
"""


def test_results_do_not_depend_on_what_the_process_had_loaded():
    """A fresh process (no compiled kernels loaded) gives the bits of a warm one."""
    import os
    import subprocess
    import sys

    here = os.path.dirname(os.path.abspath(__file__))
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        [os.path.dirname(here), here, os.environ.get("PYTHONPATH", "")]))
    out = subprocess.run([sys.executable, "-c", _CHILD], capture_output=True, text=True,
                         env=env, check=True).stdout.split()
    net = Network(_star(10, False))
    trace = _jittered_allgather(10, 3)
    rec = replay(trace, net, net.placement(10), trace.compute_seconds(), exact=False)
    assert out == [x.hex() for x in rec.end.tolist()]
