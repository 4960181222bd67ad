"""The batch path's numpy loops and its compiled kernels give the same replay, bit for bit.

A replay runs its batch instants on numpy (:mod:`netsim.engine.vectorised`) until the work
would pay numba's load, then on the compiled kernels (:mod:`netsim.engine.kernels`); which
one runs must change only the speed. Every array of the :class:`Record` (op times, link
statistics, the link series) and both counters are compared with ``np.array_equal``, on
synchronous collectives, a jittered all-gather whose instants solve large components in
several rounds, random traces sent down the batch path at every instant, strict priority,
rate bounds and TCP; and a flow table that moves from numpy to compiled mid-way against
one that never moves.
"""

import sys

import numpy as np
import pytest

from netsim import Network
from netsim.comm.collectives import ring_allreduce
from netsim.engine import flows as flows_module
from netsim.engine.flows import FlowTable
from netsim.engine.replay import replay
from netsim.errors import NetsimError
from random_cases import jittered_allgather as _jittered_allgather
from random_cases import random_case, star as _star


def _records(trace, G, **options):
    net = Network(G)
    args = (trace, net, net.placement(trace.ranks), trace.compute_seconds())
    return [replay(*args, link_series=True, batch=batch, **options)
            for batch in ("numpy", "compiled")]


def _assert_same(a, b):
    for name, x, y in zip(a._fields, a, b):
        if isinstance(x, np.ndarray):
            assert x.dtype == y.dtype and np.array_equal(x, y, equal_nan=True), name
        elif isinstance(x, dict):
            assert x.keys() == y.keys(), name
            for k in x:
                assert np.array_equal(x[k], y[k], equal_nan=True), (name, k)
        else:
            assert x == y, name


@pytest.mark.parametrize("P", [4, 16, 33])
def test_a_synchronous_ring_is_the_same_on_both_loops(P):
    _assert_same(*_records(ring_allreduce(P, 1e6), _star(P)))


@pytest.mark.parametrize("seed", range(3))
def test_a_jittered_all_gather_is_the_same_on_both_loops(seed):
    _assert_same(*_records(_jittered_allgather(12, seed), _star(12)))


@pytest.mark.parametrize("seed", range(40))
def test_random_traces_with_every_instant_a_batch_are_the_same_on_both_loops(seed):
    G, trace = random_case(seed)
    _assert_same(*_records(trace, G, small_event=-1))


@pytest.mark.parametrize("seed", range(20))
def test_strict_priority_is_the_same_on_both_loops(seed):
    G, trace = random_case(seed)
    prio = np.random.default_rng(seed).integers(0, 3, trace.num_ops)
    _assert_same(*_records(trace, G, small_event=-1, sharing="priority", priority=prio))


@pytest.mark.parametrize("seed", range(20))
def test_rate_bounds_are_the_same_on_both_loops(seed):
    G, trace = random_case(seed)
    rng = np.random.default_rng(seed)
    bound = np.where(rng.random(trace.num_ops) < 0.5, 10 ** rng.uniform(3, 13, trace.num_ops),
                     np.inf)
    _assert_same(*_records(trace, G, small_event=-1, bound=bound))


def test_tcp_start_up_is_the_same_on_both_loops():
    _assert_same(*_records(_jittered_allgather(8, 5), _star(8), transport="tcp"))


def test_an_unknown_choice_of_loops_is_refused():
    G, trace = random_case(0)
    net = Network(G)
    with pytest.raises(NetsimError, match="unknown batch 'jit'"):
        replay(trace, net, net.placement(trace.ranks), trace.compute_seconds(), batch="jit")


def test_a_table_that_moves_to_the_compiled_loops_mid_way_agrees_with_both(monkeypatch):
    """Three tables in lock step: numpy only, compiled only, and "auto" with a threshold
    that its first batches pass (the kernels hidden from ``sys.modules``, as in a fresh
    process, so "auto" starts on numpy)."""
    monkeypatch.setattr(flows_module, "COMPILE_WORK", 3 * flows_module.BATCH_INSTANT_WORK)
    monkeypatch.delitem(sys.modules, "netsim.engine.kernels", raising=False)
    rng = np.random.default_rng(7)
    L, hops = 10, 3
    tables = [FlowTable(np.full(L, 1e9) * (1 + np.arange(L) % 4), hops=hops, small=-1,
                        link_series=True, batch=batch) for batch in ("numpy", "compiled", "auto")]
    none = np.zeros(0, np.int64)
    moved = []
    for step in range(30):
        n = int(rng.integers(1, 8))
        routes = [rng.choice(L, size=int(rng.integers(1, hops + 1)), replace=False).tolist()
                  for _ in range(n)]
        padded = np.array([r + [L] * (hops - len(r)) for r in routes])
        sizes = rng.choice([1e5, 1e6, 3e6], size=n)
        for table in tables:
            slots = table.add(np.arange(n), sizes, padded)
            table.rerate(slots, none, none)
            table.now = table.first_finish
            _, finished, removed = table.pop_finished(table.now)
            table.rerate(none, finished, removed)
        moved.append(tables[2].compiled)
        for table in tables[1:]:
            for name in ("fl_rem", "fl_rate", "fl_t", "fl_finish", "load", "busy", "saturated",
                         "peak_util", "peak_flows"):
                assert np.array_equal(getattr(table, name), getattr(tables[0], name)), name
            assert table.first_finish == tables[0].first_finish
    assert not moved[0] and moved[-1]  # "auto" began on numpy and moved
    assert not tables[0].compiled and tables[1].compiled
