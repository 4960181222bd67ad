"""Sync scheme x architecture (issue 16 item 6): workloads.paradigms.schemes and studies.claims.schemes."""

import numpy as np
import pytest

import netsim
from netsim.comm.library import mpich_wire
from netsim import costmodel
from studies.claims import schemes as study_mod
from studies.cli.parser import main
from topologies import star
from doc_pages import block, cells
from workloads import WorkloadError, mlp
from workloads.paradigms import model_averaging, schemes


def test_combinations_offered_and_refused_with_a_reason():
    combos = schemes.combinations()
    assert len(combos) == len(schemes.SCHEMES) * len(schemes.ARCHITECTURES) == 8
    refused = {(s, a) for s, a, why in combos if why}
    assert refused == {("ssp", "allreduce"), ("async", "allreduce")}
    for s, a in refused:
        with pytest.raises(WorkloadError, match=f"scheme '{s}' on architecture '{a}' is not "):
            schemes.run(s, a)
    with pytest.raises(WorkloadError, match="one master"):
        schemes.run("local-sgd", "ps", servers=2)
    with pytest.raises(WorkloadError, match="known schemes"):
        schemes.run("gossip", "ps")
    with pytest.raises(WorkloadError, match="unknown collective 'tree'"):
        study_mod.study(collective="tree")          # before any training


def test_local_sgd_trace_allreduces_the_model_every_H_steps():
    # 10 steps, H = 4: allreduces after steps 3, 7 and the last (9); a ring over P = 4 is
    # 2 P (P - 1) = 24 messages carrying 2 (P - 1) x 4n bytes in all.
    model = mlp.model_of((4, 16, 3))
    op = schemes.local_sgd_trace(4, model, 8, steps=10, period=4)
    coll = op.is_collective   # one allreduce op of the 4n bytes per averaging
    assert op.size[coll].tolist() == [4 * 131] * 3
    t = mpich_wire(op)        # MPICH's ring
    msg = t.is_message
    assert sorted(set(t.iteration[msg].tolist())) == [3, 7, 9]
    for it in (3, 7, 9):
        sel = msg & (t.iteration == it)
        assert sel.sum() == 24 and t.size[sel].sum() == pytest.approx(2 * 3 * 4 * 131)
    upd = (t.kind == netsim.COMPUTE) & (t.tag == t.tags.index("update"))
    assert upd.sum() == 10 * 4


def test_local_sgd_over_allreduce_trains_as_model_averaging_and_sends_less():
    kw = dict(dataset="iris", workers=4, epochs=2, seed=1)
    a = schemes.run("local-sgd", "allreduce", period=3, **kw)
    m = model_averaging.run(period=3, **kw)
    assert a.accuracy == m.accuracy and a.iterations == m.iterations
    assert a.extra["test_loss"] == m.extra["test_loss"]
    # Per averaging: the master moves 2 P x 4n bytes, the ring 2 (P - 1) x 4n.
    assert a.total_bytes / m.total_bytes == pytest.approx(3 / 4)
    assert a.trace.metadata["scheme"] == "local-sgd" and a.trace.metadata["servers"] == 0


def test_each_combination_runs_its_paradigm():
    kw = dict(dataset="iris", workers=2, epochs=1)
    got = {(s, a): schemes.run(s, a, **kw).paradigm
           for s, a, why in schemes.combinations() if not why}
    assert got == {("bsp", "ps"): "ps-sync", ("bsp", "allreduce"): "allreduce",
                   ("ssp", "ps"): "ps-async", ("async", "ps"): "ps-async",
                   ("local-sgd", "ps"): "model-averaging",
                   ("local-sgd", "allreduce"): "local-sgd-allreduce"}
    ssp = schemes.run("ssp", "ps", staleness=1, **kw)
    assert ssp.trace.metadata["hyper"]["ssp"] == 1


def test_local_sgd_allreduce_closed_form_is_its_simulation():
    # digits 64-6-10: n = 460 values, whole float32 quarters over P = 4 (no rounding of
    # the ring's chunks); every link of the star carries one message at a time.
    r = schemes.run("local-sgd", "allreduce", dataset="digits", workers=4, epochs=1,
                    hidden=(6,), period=4)
    assert mlp.num_params(r.trace.metadata["layers"]) == 460
    G = star(4, bandwidth=1.25e9)
    alpha, beta = costmodel.alpha_beta(G, trace=r.trace)
    cf = schemes.closed_form(r.trace, alpha, beta)
    assert cf["time"] == pytest.approx(netsim.simulate(r.trace, G).makespan / r.iterations,
                                       rel=1e-9)


def _page_rows():
    return cells(block("studies.md", "schemes-table"))


def test_schemes_table_matches_a_fresh_study():
    # Regenerated with: python -c 'from studies import schemes as s;
    # print(s.format_table(s.study(), s.TARGET))'. Bytes, epochs and simulated times are
    # deterministic; accuracies within a test sample or two of another BLAS.
    rows = study_mod.study()
    head, fresh = study_mod.format_table(rows, study_mod.TARGET).splitlines()[0], None
    fresh = [[c.strip() for c in ln.strip("|").split("|")]
             for ln in study_mod.format_table(rows, study_mod.TARGET).splitlines()[2:]]
    shown_head, shown = _page_rows()
    assert shown_head == head and len(shown) == len(fresh)
    for got, want in zip(shown, fresh):
        assert got[:5] == want[:5] and got[6:] == want[6:]
        if want[5]:
            assert float(got[5]) == pytest.approx(float(want[5]), abs=0.006)
    offered = [r for r in rows if not r["reason"]]
    assert all(r["reached"] for r in offered)
    # The closed form is each run's simulated time to within 0.2 % where MPICH runs the
    # collectives (every row on 10 GbE, the parameter server's on the PCIe box). The
    # allreduce rows on the PCIe box run as NCCL calls, their closed form NCCL's tuning
    # model: within 3 % (the model's bus bandwidth against the replay's links).
    for r in offered:
        for topo in study_mod.TOPOLOGIES:
            nccl = topo == "PCIe" and r["architecture"] == "allreduce"
            assert r[f"closed_{topo}"] == pytest.approx(r[f"time_{topo}"],
                                                        rel=3e-2 if nccl else 2e-3)
    by = {(r["scheme"], r["architecture"]): r for r in offered}
    # The trade-off: local SGD sends a quarter of BSP's bytes per step (H = 4), the ring
    # 3/4 of the master's; Downpour needs more epochs than BSP on the same model.
    assert by[("local-sgd", "ps")]["bytes"] < by[("bsp", "allreduce")]["bytes"]
    assert by[("async", "ps")]["epochs"] > by[("bsp", "ps")]["epochs"]


def test_cli_schemes_prints_the_table_and_writes_a_png(tmp_path, capsys):
    png = tmp_path / "s.png"
    assert main(["schemes", "--target", "0.5", "--max-epochs", "1", "--dataset", "iris",
                 "--png", str(png)]) == 0
    out = capsys.readouterr().out
    assert "| local-sgd | allreduce | local-sgd-allreduce |" in out and png.stat().st_size > 0
    assert main(["schemes", "--target", "1.5"]) == 2
    assert "--target" in capsys.readouterr().err


def test_study_reports_progress_per_combination():
    from studies.claims.schemes import _ten_gbe, study

    calls = []
    only = [("async", "allreduce"), ("bsp", "ps")]  # one not offered, one trained
    rows = study(target=0.5, dataset="iris", max_epochs=1, topologies={"10GbE": _ten_gbe},
                 only=only, progress=lambda done, total: calls.append((done, total)))
    assert len(rows) == 2 and calls == [(1, 2), (2, 2)]
