"""Every paradigm's closed form (issue 16 item 5), against the simulation where it is exact
and as the bound it is where it is not."""

import pytest

import netsim
import workloads
from studies.scaling.closed_forms import NO_CLOSED_FORM, closed_form
from topologies import star

TEN_GBE = 1.25e9  # bytes/s


def _both(name, **kw):
    t = workloads.record(name, epochs=1, **kw).trace
    G = star(t.ranks, bandwidth=TEN_GBE)
    return netsim.simulate(t, G).makespan / t.num_iterations, closed_form(t, G)


def test_every_paradigm_has_a_closed_form():
    assert NO_CLOSED_FORM == {}
    assert all(p.closed_form is not None for p in workloads.PARADIGMS.values())


def test_downpour_closed_form_bounds_equal_workers_with_one_server():
    # Equal workers, one server, fetch and push every step: the worst case is every
    # round's fetches at once on the server's link, compute, the pushes likewise, then
    # the server's P updates one after another; the first round fetches nothing. Truly
    # asynchronous workers (a fetch waits only for the worker's own last update) let
    # a fetch start while other workers' updates still run: a little less, never more.
    sim, cf = _both("ps-async", workers=4)
    assert sim <= cf["time"] and cf["time"] == pytest.approx(sim, rel=1e-4)
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


# -- the table of asymptotic costs (docs/studies.md) ---------------------------------------------

import re  # noqa: E402

import numpy as np  # noqa: E402

from netsim import costmodel  # noqa: E402
from netsim.trace.core import COMPUTE  # noqa: E402
from doc_pages import block  # noqa: E402
from studies.scaling.closed_forms import ASYMPTOTIC_ROWS, asymptotic_table  # noqa: E402


def _evaluate(formula, **names):
    """A table formula as Python: '2 (alpha + 4 P n beta)' -> '2 * (alpha + 4 * P * n * beta)'."""
    expr = formula.replace(" per round", "")
    expr = re.sub(r"(?<=[\w)])\s+(?=[\w(])", " * ", expr)
    return eval(expr, {"max": max}, names)   # the table's own text, from this repository


def test_table_of_asymptotic_costs_is_the_codes():
    assert block("studies.md", "asymptotic-table") == asymptotic_table()


@pytest.mark.parametrize("name, options", [
    ("ps-sync", {"servers": 1}), ("ps-sync", {"servers": 2}), ("allreduce", {}),
    ("model-averaging", {"period": 4}), ("admm", {"local_steps": 4}), ("ps-async", {})])
def test_each_table_formula_is_its_closed_form(name, options):
    # Iris, 4 workers of 30 samples, batch 8: 4 steps; n = 131 parameters.
    assert name in ASYMPTOTIC_ROWS
    t = workloads.record(name, workers=4, epochs=1, **options).trace
    G = star(t.ranks, bandwidth=TEN_GBE)
    cf = closed_form(t, G)
    alpha, beta = costmodel.alpha_beta(G, trace=t)
    F = t.metadata["device_flops"]
    sec = t.compute_seconds()
    tags = np.array(list(t.tags) + [""])[t.tag]
    fb = (t.kind == COMPUTE) & (t.rank == 0) & (t.iteration == 0) & np.isin(
        tags, ("forward", "backward"))
    C = sec[fb].sum() / (options.get("local_steps", 1))
    names = dict(alpha=alpha, beta=beta, n=131, P=4, S=options.get("servers", 1), C=C, F=F,
                 H=options.get("period", 1), K=options.get("local_steps", 1), n_push=1,
                 n_fetch=1)
    a = workloads.PARADIGMS[name].asymptotic
    comm = _evaluate(a.communication, **names)
    if name == "ps-async":
        # Steady state: the first of the 4 steps has nothing to fetch yet.
        comm -= (alpha + 4 * 4 * 131 * beta) / t.num_iterations
    assert cf["communication"] == pytest.approx(comm, rel=1e-9)
    assert cf["compute"] + cf["server"] == pytest.approx(_evaluate(a.computation, **names),
                                                         rel=1e-9)


@pytest.mark.parametrize("name", sorted(workloads.PARADIGMS))
def test_scale_puts_a_closed_form_beside_every_paradigms_simulation(name):
    # Issue 16: `netsim scale PARADIGM` (studies.scaling.paradigm.study) has a closed form
    # at every P for every paradigm.
    from studies.scaling.paradigm import study

    dataset = "sparse" if name == "ps-partitioned" else "iris"
    st = study(name, [2], star, iterations=1, dataset=dataset)
    r = st["records"][0]
    assert r["closed_form"] is not None and r["closed_form"] > 0 and r["time"] > 0
    assert st["closed_form_note"]
