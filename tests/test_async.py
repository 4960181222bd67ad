"""True asynchrony in ps-async (Downpour) and SSP: independence of the workers' chains, a
straggler applied at replay time (netsim.trace.perturb), staleness from the replay's op times."""

import networkx as nx
import numpy as np
import pytest

import netsim
import workloads
from netsim.trace.perturb import perturb
from netsim.result import active_idle
from topologies import star
from workloads.paradigms import ps_async, ps_sync
from workloads.errors import WorkloadError

P, K, STEPS, BATCH, FLOPS = 4, 10, 10, 256, 1e9


def _trace(module, **options):
    """A recorded run on digits projected to STEPS steps of BATCH samples per worker."""
    r = workloads.record("ps-async" if module is ps_async else "ps-sync", workers=P, epochs=1,
                         dataset="digits", **options)
    return module.schedule(P, module.measure(r.trace), iterations=STEPS, batch_size=BATCH)


def _replay(trace, straggler=f"0:{K}x"):
    # A network so fast that only compute counts: 1 PB/s, no latency (transfers of a few kB
    # take ~1e-11 s against ~2 ms of compute per step).
    G = star(trace.ranks, bandwidth=1e15, latency=0.0)
    return netsim.simulate(perturb(trace, straggler=straggler), G, device_flops=FLOPS)


def _per_step(trace, rank, tags):
    names = list(trace.tags)
    sel = (trace.rank == rank) & np.isin(trace.tag, [names.index(t) for t in tags])
    return float(trace.compute_seconds(FLOPS)[sel].sum()) / STEPS


@pytest.mark.parametrize("options", [
    {"workers": 4}, {"workers": 3, "servers": 2}, {"workers": 5, "n_fetch": 2, "n_push": 3,
                                                   "servers": 2},
    {"workers": 4, "n_fetch": 3, "n_push": 2}, {"workers": 4, "ssp": 1},
])
def test_replay_staleness_at_equal_speeds_is_the_trainings(options):
    # The training applies each round's pushes in worker order rotated by the round; the
    # replay ends them at one instant and staleness() breaks the tie in that order.
    r = workloads.record("ps-async", epochs=1, dataset="iris", **options)
    st = ps_async.staleness(r.trace, netsim.simulate(r.trace, star(r.trace.ranks)))
    for s in range(options.get("servers", 1)):
        assert st["updates"][st["server"] == s].tolist() == r.extra["staleness"]
    assert int(st["updates"].max()) == r.extra["max_staleness"]


def test_a_workers_chain_depends_only_on_its_own_exchanges():
    t = _trace(ps_async, servers=2)
    names = list(t.tags)
    push, upd, fetch = (np.flatnonzero(t.tag == names.index(x)) for x in ("push", "update", "fetch"))
    owner = np.where(t.is_message & (t.rank >= P), t.peer, t.rank)  # a fetch is its worker's
    for u in upd:
        deps = t.deps(u)
        assert len(deps) == 1 and deps[0] in push      # an update waits for its push alone
        owner[u] = t.rank[deps[0]]
    for f in fetch:
        assert set(owner[t.deps(f)].tolist()) == {t.peer[f]}


def test_one_straggler_leaves_async_workers_busy_but_sync_workers_idle():
    # ps-sync: every step waits for the straggler; a fast worker computes c, then waits for
    # the slow one's K c and the server's averaging u: idle ((K-1) c + u) / (K c + u).
    sync = _trace(ps_sync)
    res = _replay(sync)
    c, u = _per_step(sync, 1, ("forward", "backward")), _per_step(sync, P, ("update",))
    done, idle = active_idle(res, sync)
    expected = ((K - 1) * c + u) / (K * c + u)
    np.testing.assert_allclose(idle[1:P] / res.makespan, expected, rtol=1e-6)
    assert expected > 0.9 * (K - 1) / K
    # ps-async: a fast worker waits only for the server's update of its own push (u_a, one
    # push: 5 FLOPs per value) before its next fetch, STEPS - 1 times: it is done (its last
    # push sent) at STEPS c + (STEPS - 1) u_a, and idle (STEPS - 1) u_a of that.
    asy = _trace(ps_async)
    res = _replay(asy)
    c = _per_step(asy, 1, ("forward", "backward"))
    ua = _per_step(asy, P, ("update",)) / P
    done, idle = active_idle(res, asy)
    np.testing.assert_allclose(done[1:P], STEPS * c + (STEPS - 1) * ua, rtol=1e-6)
    np.testing.assert_allclose(idle[1:P], (STEPS - 1) * ua, rtol=1e-6)
    assert np.all(idle[1:P] / done[1:P] < 0.05)
    # The straggler's K c per step, then the update of its push, is the run.
    np.testing.assert_allclose(res.makespan, STEPS * (K * c + ua), rtol=1e-6)
    # Their pushes are stale by up to (P - 1) K updates of the fast workers between the
    # straggler's fetch and push: its own staleness grows with K.
    st = ps_async.staleness(asy, res)
    assert st["updates"][st["worker"] == 0].max() >= (P - 1) * (K - 1)


@pytest.mark.parametrize("s", [1, 2, 3])
def test_ssp_staleness_never_exceeds_its_bound_and_reaches_it(s):
    t = _trace(ps_async, ssp=s)
    st = ps_async.staleness(t, _replay(t))
    assert st["clocks"].max() == s          # the fast workers run s steps ahead, no more
    free = ps_async.staleness(_trace(ps_async), _replay(_trace(ps_async)))
    assert free["clocks"].max() > s         # without the bound they run further ahead


def test_ssp_zero_is_lock_step():
    t = _trace(ps_async, ssp=0)
    res = _replay(t)
    st = ps_async.staleness(t, res)
    assert st["clocks"].max() == 0
    names = list(t.tags)
    start, end = res.ops["start"], res.ops["end"]
    fwd, upd = (t.tag == names.index("forward")), (t.tag == names.index("update"))
    for step in range(1, STEPS):
        # Every forward of a step starts after every update of the step before.
        assert start[fwd & (t.iteration == step)].min() >= end[upd & (t.iteration == step - 1)].max()
    # ... so the fast workers wait for the straggler every step, as in BSP.
    done, idle = active_idle(res, t)
    assert np.all(idle[1:P] / done[1:P] > 0.85)


def test_ssp_needs_a_fetch_and_a_push_every_step():
    with pytest.raises(WorkloadError, match="ssp=1 needs n_fetch=1 and n_push=1"):
        workloads.record("ps-async", workers=2, epochs=1, ssp=1, n_push=2)
    with pytest.raises(WorkloadError, match="ssp"):
        workloads.record("ps-async", workers=2, epochs=1, ssp=-1)


def test_async_training_converges_and_ssp_trains_the_same_interleaving():
    a = workloads.record("ps-async", workers=4, epochs=5, dataset="digits")
    b = workloads.record("ps-async", workers=4, epochs=5, dataset="digits", ssp=0)
    assert a.accuracy > 0.85 and np.isfinite(a.extra["test_loss"])
    # The round-robin interleaving never lets a worker run ahead: it meets every SSP bound.
    assert b.accuracy == a.accuracy and b.extra["staleness"] == a.extra["staleness"]


def test_active_idle_of_a_rank_that_finishes_early():
    # Rank 1 computes 1 s, then 1 s after rank 0's 3 s: done at 4 s, idle 2 s while active.
    b = netsim.TraceBuilder(3)
    a = b.compute(0, seconds=3.0)
    b.compute(1, seconds=1.0)
    b.compute(1, seconds=1.0, deps=[a])
    b.compute(2, seconds=0.5)
    G = nx.complete_graph(3)
    nx.set_edge_attributes(G, 1e9, "bandwidth")
    nx.set_edge_attributes(G, 0.0, "latency")
    done, idle = active_idle(netsim.simulate(b.build(), G), b.build())
    assert done.tolist() == [3.0, 4.0, 0.5] and idle.tolist() == [0.0, 2.0, 0.0]


def test_straggler_table_of_the_traces_page_is_what_the_replays_give():
    from doc_pages import block, cells

    _, rows = cells(block("traces.md", "stragglers"))
    cases = {"ps-sync (BSP)": (ps_sync, {}), "ps-async, SSP s = 0": (ps_async, {"ssp": 0}),
             "ps-async, SSP s = 2": (ps_async, {"ssp": 2}), "ps-async (Downpour)": (ps_async, {})}
    assert [r[0] for r in rows] == list(cases)
    for label, idle_cell, done_cell, stale_cell in rows:
        module, options = cases[label]
        t = _trace(module, **options)
        res = _replay(t)
        done, idle = active_idle(res, t)
        assert idle_cell == f"{100 * (idle[1:P] / done[1:P]).mean():.2f} %"
        assert done_cell == f"{done[1:P].mean() / res.makespan:.3f} of the run"
        if module is ps_async:
            st = ps_async.staleness(t, res)
            assert stale_cell == f"{st['updates'].max()} / {st['clocks'].max()}"
