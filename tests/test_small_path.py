"""The plain-Python flow calls of the small-event path against the numpy ones.

:meth:`FlowTable.add_one`, :meth:`FlowTable.pop_few` and :meth:`FlowTable.rerate`
with lists (and routes) must leave a table exactly as :meth:`FlowTable.add`,
:meth:`FlowTable.pop_finished` and :meth:`FlowTable.rerate` with arrays do: the same
slots, rates, predicted ends and link statistics, bit for bit, also when numpy calls
come in between (the free-slot heap and the heap of ends go stale and are rebuilt).
"""

import numpy as np
import pytest

from netsim.engine.flows import FlowTable
from netsim.engine.maxmin import max_min_rates_small

CAP = np.array([1e9, 2e9, 3e9, 1e9, 5e8, 2e9, 1e9])
PAD = len(CAP)
ROUTES = [(0, 1), (1, 2), (3, PAD), (4, 5), (5, 6), (2, 0), (6, PAD), (3, 4)]


def _state(table):
    """Every column a replay reads back, as plain lists."""
    return {name: getattr(table, name).tolist() for name in (
        "fl_active", "fl_op", "fl_rem", "fl_rate", "fl_finish", "fl_links", "load", "busy",
        "saturated", "peak_util", "peak_flows")} | {"first_finish": table.first_finish,
                                                     "rate_solves": table.rate_solves}


def _numpy_step(table, ops, limit):
    """End what ends by ``limit``, start ``ops``: the numpy calls."""
    ended, finished, removed = table.pop_finished(limit)
    rows = np.array([ROUTES[op % len(ROUTES)] for op in ops], np.int64).reshape(-1, 2)
    added = table.add(np.array(ops, np.int64), np.full(len(ops), 1e6 + 1e5 * len(ops)), rows)
    if len(added) or len(finished):
        table.rerate(added, finished, removed)
    return ended.tolist()


def _python_step(table, ops, limit):
    """The same with the small path's calls, one flow at a time."""
    ended, finished, removed = table.pop_few(limit)
    if isinstance(finished, np.ndarray):  # the heap was stale: the numpy answer
        ended, finished, removed = ended.tolist(), finished.tolist(), removed.tolist()
    added, routes = [], []
    for op in ops:
        row = ROUTES[op % len(ROUTES)]
        added.append(table.add_one(op, 1e6 + 1e5 * len(ops), np.array(row, np.int64)))
        routes.append(tuple(k for k in row if k != PAD))
    if added or finished:
        table.rerate(added, finished, removed, routes)
    return list(ended)


@pytest.mark.parametrize("small", [8, 2])  # 2: some steps take the batch path in between
def test_small_path_calls_match_numpy_calls(small):
    rng = np.random.default_rng(7)
    by_numpy = FlowTable(CAP, hops=2, small=small)
    by_python = FlowTable(CAP, hops=2, small=small)
    op = 0
    for step in range(60):
        now = 1e-4 * step
        by_numpy.now = by_python.now = now
        ops = list(range(op, op + int(rng.integers(0, 4))))
        op += len(ops)
        limit = now + 1e-12 * now
        assert _numpy_step(by_numpy, ops, limit) == _python_step(by_python, ops, limit)
        assert _state(by_numpy) == _state(by_python)
    assert by_numpy.rate_solves > 0


def test_add_one_takes_the_lowest_free_slot_after_numpy_calls():
    table = FlowTable(CAP, hops=2)
    rows = np.array([ROUTES[i] for i in range(5)], np.int64)
    slots = table.add(np.arange(5), np.array([1e12, 1e12, 1e6, 1e6, 1e6]), rows)
    table.rerate(slots, slots[:0], slots[:0])
    table.now = 1.0  # the three small flows have ended, the two large ones not
    _, finished, _ = table.pop_finished(table.now)
    assert finished.tolist() == [2, 3, 4]
    assert table.add_one(9, 1e6, rows[0]) == 2
    table.add(np.array([10]), np.array([1e6]), rows[:1])  # takes slot 3 behind add_one's heap
    assert table.add_one(11, 1e6, rows[0]) == 4
    assert table.fl_op[:5].tolist() == [0, 1, 9, 10, 11]


@pytest.mark.parametrize("route", [(0,), (3, 4), (4, 5, 6), (2, 0, 1)])
def test_one_flow_gets_what_the_solver_gives(route):
    table = FlowTable(CAP, hops=3)
    row = np.array(route + (PAD,) * (3 - len(route)), np.int64)
    slot = table.add_one(0, 1e6, row)
    table.rerate([slot], (), (), [route])
    assert table.fl_rate[slot] == max_min_rates_small([route], CAP)[0]
    assert table.fl_rate[slot] == CAP[list(route)].min()
