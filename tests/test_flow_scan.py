"""The compiled search for the flows a batch affects, against a global max-min solve.

A chain of flows, flow i crossing links i and i + 1, is one connected component:
a flow added at its head changes every rate down the chain. The batch path
(:meth:`FlowTable.rerate` with ``small=-1``, :func:`netsim.engine.kernels.component` and
its numpy sweeps, :func:`netsim.engine.vectorised.component`) must
find the whole chain, short or long, and its rates
must equal a max-min solve over every active flow (:func:`netsim.engine.maxmin.max_min_rates_small`)
and the incremental path's bit for bit. A flow on links of its own stays untouched.
"""

import numpy as np
import pytest

from netsim.engine.flows import FlowTable
from netsim.engine.maxmin import max_min_rates_small


def _chain(small, length, batch="compiled"):
    links = length + 3  # the chain's links 0..length, and two of the loner's
    cap = np.array([1e9 * (1 + (k % 3)) for k in range(links)])
    table = FlowTable(cap, hops=2, small=small, batch=batch)
    routes = np.array([[i, i + 1] for i in range(1, length)] + [[length + 1, length + 2]])
    slots = table.add(np.arange(len(routes)), np.full(len(routes), 1e6), routes)
    table.rerate(slots, slots[:0], slots[:0])
    before = table.fl_rate[slots].tolist()
    head = table.add(np.array([99]), np.array([1e6]), np.array([[0, 1]]))
    table.rerate(head, head[:0], head[:0])
    return table, cap, np.concatenate([slots, head]), before


@pytest.mark.parametrize("loops", ["compiled", "numpy"])
@pytest.mark.parametrize("length", [3, 12])
def test_batch_search_finds_the_whole_chain(length, loops):
    batch, cap, slots, before = _chain(-1, length, loops)
    incremental, _, _, _ = _chain(10 ** 6, length)
    # A global solve over every active flow by the plain-Python filling, not the
    # compiled one the batch path uses.
    routes = [[k for k in row if k != len(cap)] for row in batch.fl_links[slots].tolist()]
    expected = max_min_rates_small(routes, cap.tolist())
    assert batch.fl_rate[slots].tolist() == expected
    assert batch.fl_rate[slots].tolist() == incremental.fl_rate[slots].tolist()
    assert batch.load.tolist() == incremental.load.tolist()
    assert batch.first_finish == incremental.first_finish
    # The head shares link 1 with the chain's first flow: its rate moved; the loner's did not.
    assert batch.fl_rate[slots[0]] < before[0]
    assert batch.fl_rate[slots[-2]] == before[-1]


def test_link_lists_follow_flows_that_start_and_end():
    """The batch path's per-link lists, kept across instants, hold exactly the active flows."""
    rng = np.random.default_rng(1)
    L, hops = 12, 3
    # every instant a batch, on the compiled loops (the numpy ones keep no lists)
    table = FlowTable(np.full(L, 1e9), hops=hops, small=-1, batch="compiled")
    none = np.zeros(0, np.int64)
    for step in range(40):
        n = int(rng.integers(1, 6))
        routes = [rng.choice(L, size=int(rng.integers(1, hops + 1)), replace=False).tolist()
                  for _ in range(n)]
        padded = np.array([r + [L] * (hops - len(r)) for r in routes])
        sizes = rng.choice([1e5, 1e6, 3e6], size=n)
        slots = table.add(np.arange(n), sizes, padded)
        table.rerate(slots, none, none)
        table.now = table.first_finish
        _, finished, removed = table.pop_finished(table.now)
        table.rerate(none, finished, removed)
        assert table._lists is not None  # kept, not rebuilt, since the first batch
        head, nxt, _ = table._lists
        for k in range(L):
            found, e = set(), head[k]
            while e >= 0:
                found.add(int(e) // hops)
                e = nxt[e]
            active = np.flatnonzero(table.fl_active)
            assert found == {int(s) for s in active if k in table.fl_links[s]}
