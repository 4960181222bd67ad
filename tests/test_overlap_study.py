"""The overlap study (studies.scaling.overlap) and its command, ``netsim overlap``."""

import json

import pytest

from doc_pages import block, cells
from netsim import costmodel
from studies.cli.parser import main
from studies.scaling.overlap import overlap_study
from topologies import ETHERNET, ETHERNET_LATENCY


@pytest.fixture(scope="module")
def resnet():
    return {r["overlap"]: r for r in overlap_study(models=("resnet50",), networks=("10GbE",),
                                                   workers=(4,))}


def test_none_exposes_the_whole_ring_allreduce(resnet):
    # Nothing overlaps: the step is compute + the fused ring allreduce of 4 x params bytes,
    # 2 (P-1) alpha + 2 (P-1)/P n beta with alpha two hops of latency, beta 1 / 10 GbE.
    r = resnet["none"]
    from workloads.models import get_model
    n = 4.0 * get_model("resnet50").params
    ring = costmodel.ring_allreduce(4, n, 2 * ETHERNET_LATENCY, 1.0 / ETHERNET["10GbE"])
    assert r["fused_comm"] == ring
    assert r["closed_exposed"] == pytest.approx(ring, rel=1e-9)
    assert r["exposed"] == pytest.approx(ring, rel=1e-3)


def test_overlap_modes_hide_communication_and_agree_with_their_closed_forms(resnet):
    none = resnet["none"]["time"]
    for mode in ("layerwise", "bucketed", "priority"):
        r = resnet[mode]
        assert r["compute"] == pytest.approx(resnet["none"]["compute"], rel=1e-12)
        assert r["time"] < none and r["speedup"] == pytest.approx(none / r["time"])
    # Priority lets the first layer's chunks overtake: the next forward pass starts
    # earliest; its closed form (preemptive priority on one channel) is within 1 %.
    assert resnet["priority"]["time"] <= min(resnet[m]["time"] for m in ("layerwise",
                                                                         "bucketed"))
    assert resnet["priority"]["exposed"] == pytest.approx(resnet["priority"]["closed_exposed"],
                                                          rel=1e-2)
    # DDP's buckets go one after another on one stream: exactly the closed form of pieces
    # sent one at a time, first ready first (up to whole-float32 chunking of the ring).
    for mode in ("layerwise", "bucketed"):
        assert resnet[mode]["exposed"] == pytest.approx(resnet[mode]["closed_exposed"],
                                                        rel=1e-5)


def test_the_command_prints_the_table_and_names_bad_modes(capsys):
    assert main(["overlap", "--models", "resnet50", "--networks", "100GbE", "-P", "2",
                 "--modes", "none,layerwise", "--json", "--quiet"]) in (0, None)
    recs = json.loads(capsys.readouterr().out)
    assert [(r["overlap"], r["P"]) for r in recs] == [("none", 2), ("layerwise", 2)]
    assert main(["overlap", "--modes", "fused", "-P", "2", "--quiet"]) == 2
    assert "unknown overlap 'fused'" in capsys.readouterr().err


@pytest.mark.slow
def test_speedup_table_matches_a_fresh_study():
    # The table of speed-ups over none (docs/studies.md) is the default study, rounded to 2
    # decimals.
    recs = overlap_study()
    _, rows = cells(block("studies.md", "overlap-table"))
    names = {"ResNet-50": "resnet50", "BERT-large": "bert-large"}
    for row in rows:
        model, net = row[0].split(", ")
        got = {mode: [float(x) for x in cell.split(" / ")]
               for mode, cell in zip(("layerwise", "bucketed", "priority"), row[4:7])}
        for mode, shown in got.items():
            fresh = [r["speedup"] for r in recs if r["model"] == names[model]
                     and r["network"] == net.replace(" ", "") and r["overlap"] == mode]
            assert shown == [round(x, 2) for x in fresh], (row[0], mode)


def test_speedup_table_at_p4_on_10gbe_matches(resnet):
    # The fast twin of the slow test below for one cell per mode: the ResNet-50, 10 GbE row of
    # docs/studies.md at P = 4 (the middle of "2 / 4 / 8") is this study rounded to 2 decimals.
    _, rows = cells(block("studies.md", "overlap-table"))
    row = next(r for r in rows if r[0] == "ResNet-50, 10 GbE")
    assert row[1] == "2 / 4 / 8"
    for mode, cell in zip(("layerwise", "bucketed", "priority"), row[4:7]):
        assert float(cell.split(" / ")[1]) == round(resnet[mode]["speedup"], 2), mode


def test_progress_counts_every_simulation_once():
    # 1 model x 1 network x 2 P x 2 modes = 4 runs, reported one by one up to the total.
    calls = []
    overlap_study(models=("resnet50",), networks=("10GbE",), workers=(2, 4),
                  modes=("none", "layerwise"), progress=lambda done, total: calls.append(
                      (done, total)))
    assert calls == [(1, 4), (2, 4), (3, 4), (4, 4)]
