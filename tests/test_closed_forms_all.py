"""Every paradigm's closed form (issue 16 item 5), against the simulation where it is exact
and as the bound it is where it is not."""

import pytest

import netsim
import workloads
from studies.closed_forms import NO_CLOSED_FORM, closed_form
from topologies import star

TEN_GBE = 1.25e9  # bytes/s


def _both(name, **kw):
    t = workloads.record(name, epochs=1, **kw).trace
    G = star(t.ranks, bandwidth=TEN_GBE)
    return netsim.simulate(t, G).makespan / t.num_iterations, closed_form(t, G)


def test_every_paradigm_has_a_closed_form():
    assert NO_CLOSED_FORM == {}
    assert all(p.closed_form is not None for p in workloads.PARADIGMS.values())


def test_downpour_closed_form_is_exact_for_lock_step_rounds_with_one_server():
    # Equal workers, one server, fetch and push every step: each round is fetch (all P at
    # once on the server's link), compute, push (likewise), then the server's P updates
    # one after another; the first round fetches nothing. No contention beyond the
    # server link's max-min share, so the closed form is the simulated time.
    sim, cf = _both("ps-async", workers=4)
    assert cf["time"] == pytest.approx(sim, rel=1e-12)
    assert cf["server"] > 0 and cf["communication"] > 0   # P serial updates, two phases


def test_downpour_closed_form_with_sparse_pushes_and_fetches():
    # n_push = 2, n_fetch = 3: the phases happen on every 2nd and 3rd step only; with
    # overlapping layers the simulation is within 0.01 % of it.
    sim, cf = _both("ps-async", workers=4, n_push=2, n_fetch=3)
    _, dense_cf = _both("ps-async", workers=4)
    assert cf["communication"] < dense_cf["communication"]
    assert cf["time"] == pytest.approx(sim, rel=1e-4)


def test_ringtmp_layer_pipeline_is_exact_with_one_microbatch():
    # 4 nodes, one layer each of 4-16-16-16-3: the forward and backward chains are
    # sequential, every message alone on its two star links.
    sim, cf = _both("ringtmp", workers=4)
    assert cf["time"] == pytest.approx(sim, rel=1e-12)
    assert cf["server"] == 0.0


def test_ringtmp_microbatches_closed_form_is_an_upper_bound():
    # m = 4: the flow-shop formula charges every micro-batch's latency on the slowest
    # stage (a message here); the simulation overlaps them, so it takes less.
    sim, cf = _both("ringtmp", workers=4, microbatches=4)
    assert sim < cf["time"]


def test_ringtmp_neuron_ring_steps_are_exact_when_widths_divide():
    # digits 64-64-10 over 2 nodes: every slice is even; each ring step's two messages
    # travel at once (the recording waits only for what a node has).
    sim, cf = _both("ringtmp", workers=2, dataset="digits", partition="neuron", hidden=(64,))
    assert cf["time"] == pytest.approx(sim, rel=1e-9)
