"""ps-partitioned's closed form is the chain of round trips a worker makes to its servers.

A worker asks its servers one after another (its request to the next server waits for the
values of the one before), so an iteration is, with the workers in step:
``sum_s [(alpha + R_s beta) + (alpha + D_s beta)] + alpha + max_s U_s beta``, the first
request left out after the first iteration (it leaves with the previous push). Worked by hand
on digits at P = 4 with 2 servers on a 10 GbE star: every mini-batch of 64 digits touches the
same rows, ``r_s`` rows of server ``s`` (4 bytes a key, 40 bytes of values, 44 pushed).
"""

import pytest

import workloads
from studies.scaling.traces import record_at
from topologies import star
from netsim import simulate
from workloads.paradigms import ps, ps_partitioned
from workloads.plan.measure import tag_mask

ALPHA = 2e-6           # two hops of the star at 1 us
BETA = 1 / 1.25e9      # 10 Gb/s
P, C = 4, 10           # workers; digits' classes (floats per row)


@pytest.fixture(scope="module")
def digits4():
    return record_at("ps-partitioned", P, iterations=3, dataset="digits")


def _rows(t):
    """Rows each server holds for a worker's batch, from its 4-byte keys (iteration 0, worker 0)."""
    m = tag_mask(t, "pull-request") & (t.iteration == 0) & (t.rank == 0)
    return [int(b) // 4 for b in t.size[m]]


def test_hand_worked_chain_at_p4_equals_the_closed_form_and_the_simulation(digits4):
    t = digits4
    r0, r1 = _rows(t)
    # P flows share a server's link: P requests to server 0, P replies (40 bytes a row), ...
    req = [ALPHA + P * 4 * r * BETA for r in (r0, r1)]
    val = [ALPHA + P * 4 * C * r * BETA for r in (r0, r1)]
    push = ALPHA + P * 4 * (C + 1) * max(r0, r1) * BETA
    first = req[0] + val[0] + req[1] + val[1] + push
    later = val[0] + req[1] + val[1] + push          # server 0's request hidden
    by_hand = (first + 2 * later) / 3
    cf = ps_partitioned.closed_form(t, ALPHA, BETA)
    assert cf["communication"] == pytest.approx(by_hand, rel=1e-9)
    simulated = simulate(t, star(t.ranks)).makespan / t.num_iterations
    # The in-step chain is the simulation to 1 % (the hidden request shares server 0's link
    # with the push, a few hundred bytes the chain leaves out).
    assert cf["time"] == pytest.approx(simulated, rel=0.01)
    # The generic parameter-server form, one push and one pull phase over the mean bytes,
    # has 2 latencies where the chain has 5 (4 after the first iteration): far below.
    assert ps.closed_form(t, ALPHA, BETA)["time"] < 0.7 * simulated
    assert cf["gap"] is None   # every worker's messages alike: nothing to explain


def test_uneven_workers_are_explained_in_the_study():
    from studies.scaling.paradigm import study

    st = study("ps-partitioned", [8], star, iterations=1, dataset="sparse")
    r = st["records"][0]
    # METIS puts most of a worker's rows on one server: its replies from the busiest server
    # differ in size between workers, the workers fall out of step, and the hops overlap.
    assert r["time"] < 0.95 * r["closed_form"]
    (g,) = st["closed_form_gaps"]
    assert g["P"] == 8 and g["gap"] == pytest.approx(r["time"] / r["closed_form"] - 1)
    assert "in step" in g["why"] and "bytes" in g["detail"]
