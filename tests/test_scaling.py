"""Saturation analysis (netsim.analysis.saturation), paradigm scaling (studies.scaling.paradigm), `netsim scale`."""

import csv
import json
import math

import numpy as np
import pytest

from netsim import TraceBuilder, simulate
from studies.cli.parser import main
from netsim.comm.collectives import ps_push_pull
from netsim.errors import NetsimError
from netsim.analysis.saturation import crossing, link_saturation, saturation_point, speedup
from topologies import star
from workloads import mlp
from studies.scaling.closed_forms import closed_form
from studies.scaling.paradigm import study
from studies.scaling.traces import first_iterations, record_at

TEN_GBE = 1.25e9  # bytes/s
LINK_LATENCY = 1e-6  # s, the star's default per link


# -- netsim.analysis.saturation ----------------------------------------------------------------------

def test_series_union_per_direction_equals_engine_saturated_time():
    # Every direction's saturated time rebuilt from the load series equals the engine's.
    t = ps_push_pull(6, 1e6, servers=2)
    r = simulate(t, star(8, bandwidth=1e9, latency=1e-6), link_series=True)
    rows = link_saturation(r, duplex=False)
    by_name = {row["link"]: row["saturated"] for row in rows}
    for s, d, sat, nbytes in zip(r.links["src"], r.links["dst"], r.links["saturated"],
                                 r.links["bytes"]):
        if nbytes > 0:
            assert by_name[f"{s}->{d}"] == pytest.approx(sat, rel=1e-12, abs=1e-15)


def test_duplex_link_saturated_in_and_out_counts_both_phases():
    # Push 4 x 1 MB into the server, then pull 4 x 1 MB out: each direction of the server's
    # link is saturated half of the time, the link all of it.
    P, n, bw = 4, 1e6, 1e9
    r = simulate(ps_push_pull(P, n), star(P + 1, bandwidth=bw, latency=0.0), link_series=True)
    top = link_saturation(r)[0]
    assert top["link"] == f"host{P}<->switch"
    assert top["saturated"] == pytest.approx(2 * P * n / bw)
    assert top["fraction"] == pytest.approx(1.0)
    per_dir = link_saturation(r, duplex=False)[0]
    assert per_dir["fraction"] == pytest.approx(0.5)


def test_without_series_duplex_falls_back_to_a_lower_bound():
    r = simulate(ps_push_pull(4, 1e6), star(5, bandwidth=1e9, latency=0.0))
    top = link_saturation(r)[0]
    assert not top["exact"] and top["fraction"] == pytest.approx(0.5)


def test_link_saturation_of_a_compute_only_run_is_empty():
    b = TraceBuilder(1)
    b.compute(0, seconds=1.0)
    assert link_saturation(simulate(b.build(), star(1), link_series=True)) == []


def test_crossing_and_speedup():
    assert crossing([1, 2, 3], [0.0, 1.0, 2.0], 1.5, log_x=False) == 2.5
    assert crossing([2, 8], [0.0, 1.0], 0.5) == pytest.approx(4.0)
    assert crossing([2, 4], [1.0, 2.0], 0.5) == 2.0
    with pytest.raises(NetsimError, match="increasing"):
        crossing([2, 2], [0, 1], 0.5)
    s, e = speedup([1, 2, 4, 8], [1.0, 1.0, 1.0, 1.0], 1.0)
    assert s == [1, 2, 4, 8] and e == [1, 1, 1, 1]
    with pytest.raises(NetsimError, match="T1"):
        speedup([1], [1.0], 0.0)


def test_saturation_point_rules():
    sp = saturation_point([2, 4, 8], [0.1, 0.6, 0.9], ["a", "b", "b"])
    assert (sp["P"], sp["link"], sp["reason"]) == (4, "b", "link")
    assert saturation_point([2, 4], [0.1, 0.2])["P"] is None
    # Strong scaling: the time stops falling before any link saturates.
    sp = saturation_point([2, 4, 8, 16], [0.1, 0.2, 0.3, 0.9], times=[4.0, 2.0, 2.5, 3.0],
                          strong=True)
    assert (sp["P"], sp["reason"]) == (8, "time stops falling")
    with pytest.raises(NetsimError, match="increasing"):
        saturation_point([4, 2], [0.1, 0.2])


# -- studies.scaling.paradigm -------------------------------------------------------------------

def test_first_iterations_keeps_a_valid_prefix():
    t = record_at("ps-sync", 2, iterations=3, dataset="iris")
    assert t.num_iterations == 3
    one = first_iterations(t, 1)
    assert one.num_iterations == 1 and one.num_messages == 4
    # The three iterations carry the same compute and bytes and each waits for the previous
    # one's pull, so the trace takes exactly three one-iteration makespans (rel 1e-9: only
    # the rounding of sums of ~1e-6 s terms separates them).
    for i in range(3):
        it = t.iteration == i
        assert t.size[it].sum() == t.size[t.iteration == 0].sum()
    assert simulate(t, star(3)).makespan == pytest.approx(
        3 * simulate(one, star(3)).makespan, rel=1e-9)


def test_closed_form_of_ps_sync_equals_its_simulation():
    # One server, no contention but the server's link: the closed form is exact.
    t = record_at("ps-sync", 8, iterations=2, dataset="iris")
    G = star(9, bandwidth=TEN_GBE, latency=LINK_LATENCY)
    cf = closed_form(t, G)
    r = simulate(t, G)
    assert cf["time"] == pytest.approx(r.makespan / 2, rel=1e-9)


def whole_value_excess(P, values=131, bandwidth=TEN_GBE):
    """Seconds a ring allreduce of whole float32 chunks takes over the closed form's even cut.

    On a star every rank's chunk travels on its own links; the chunk held by the first
    ``values % P`` ranks (ceil(values / P) values) travels all 2 (P - 1) steps on one
    dependency path, so each step takes ceil(values / P) instead of values / P values.
    """
    return 2 * (P - 1) * 4 * (math.ceil(values / P) - values / P) / bandwidth


def test_closed_form_of_allreduce_equals_its_simulation():
    # Iris: 131 gradient values (524 B) over 4 ranks, chunks of 33, 33, 33 and 32 values.
    t = record_at("allreduce", 4, iterations=2, dataset="iris")
    G = star(4, bandwidth=TEN_GBE, latency=LINK_LATENCY)
    assert closed_form(t, G)["time"] + whole_value_excess(4) == pytest.approx(
        simulate(t, G).makespan / 2, rel=1e-9)


def test_downpour_has_a_closed_form_and_an_unknown_paradigm_says_why():
    # Issue 16: every paradigm has a closed form, Downpour (ps-async) too; the reason is
    # left for a trace of a paradigm the registry does not know.
    t = record_at("ps-async", 2, iterations=1, dataset="iris")
    cf = closed_form(t, star(3))
    assert cf["time"] > 0 and cf["reason"] is None
    cf = closed_form(t.with_metadata(paradigm="gossip"), star(3))
    assert cf["time"] is None and "gossip" in cf["reason"]


def test_weak_scaling_of_allreduce_is_efficient_and_fits_a_law():
    st = study("allreduce", [2, 4, 8], star, iterations=1, dataset="iris")
    eff = [r["efficiency"] for r in st["records"]]
    assert all(0 < e <= 1 for e in eff) and eff == sorted(eff, reverse=True)
    for r in st["records"]:
        assert r["speedup"] == pytest.approx(r["P"] * st["T1"] / r["time"])
        assert r["closed_form"] + whole_value_excess(r["P"]) == pytest.approx(r["time"],
                                                                             rel=1e-9)
    # Ring closed form on a star: T = c + 2(P-1) alpha + 2 (P-1)/P n/B with alpha = 2 hops x
    # 1 us, n = 4 x 131 B (Iris), B = 10 GbE. The latency term 2(P-1) alpha (4, 12, 28 us) is
    # linear in P and dwarfs the (P-1)/P term (< 2 n/B = 0.84 us) and c (< 1 ns): law "P".
    assert st["fits"]["time"]["law"] == "P"


def test_strong_scaling_divides_the_compute():
    st = study("ps-sync", [2, 4], star, iterations=1, dataset="iris", strong=True,
               device_flops=1e8)
    c2, c4 = (r["compute"] for r in st["records"])
    assert c4 == pytest.approx(c2 / 2)
    assert st["records"][0]["speedup"] == pytest.approx(st["T1"] / st["records"][0]["time"])


# The acceptance case: `netsim scale ps-sync --topology star:bandwidth=10Gbps`, P = 2..256.
# A parameter server on a 10 GbE star saturates its own link when the communication time
# 2 P n / B reaches the compute time of an iteration. For the test to mean anything that
# crossing must fall inside 2..256, so compute per byte sent must be large enough. On a V100
# (15.7 TFLOP/s) ResNet-50 at 32 images per worker computes for 50 ms per step against
# 2 x 102 MB / 1.25 GB/s = 164 ms of communication per worker: the crossing is below P = 1.
# So: ResNet-50, 64 images per worker, on a 1 TFLOP/s device (the order of one CPU socket's
# FP32 rate: CPU clusters on 10 GbE are where parameter servers started); the crossing is at
# P ~ 9.6. A second case uses the digits MLP on a 1 GFLOP/s device (crossing P ~ 13.9).
TEN_GBE_STAR = "star:bandwidth=10Gbps"
WORKERS = [2, 4, 8, 16, 32, 64, 128, 256]


def _crossing(params, worker_flops, device):
    """P at which 2 (alpha + P n / B) = worker compute + server update, from first principles.

    n = 4 params bytes (float32); the server averages P shards and takes a momentum step:
    (P + 4) FLOPs per parameter.
    """
    n = 4.0 * params
    alpha = 2 * LINK_LATENCY
    # 2 alpha + 2 P n / B = worker_flops / device + (P + 4) params / device
    return (worker_flops / device + 4 * params / device - 2 * alpha) / (2 * n / TEN_GBE
                                                                       - params / device)


def _run_json(argv, png):
    import contextlib
    import io

    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(argv + ["--png", str(png), "--json"]) == 0
    assert png.stat().st_size > 0
    return json.loads(out.getvalue())


@pytest.fixture(scope="module")
def resnet_study(tmp_path_factory):
    return _run_json(["scale", "ps-sync", "--topology", TEN_GBE_STAR, "--workers", "2..256",
                      "--model", "resnet50", "--batch", "64", "--device-flops", "1e12",
                      "--iterations", "2"], tmp_path_factory.mktemp("resnet") / "ps.png")


@pytest.fixture(scope="module")
def mlp_study(tmp_path_factory):
    return _run_json(["scale", "ps-sync", "--topology", TEN_GBE_STAR, "--workers", "2..256",
                      "--set", "hidden=256", "--set", "batch_size=12", "--device-flops", "1e9",
                      "--iterations", "2"], tmp_path_factory.mktemp("mlp") / "ps.png")


def _resnet_crossing():
    from workloads.models import resnet50

    m = resnet50()
    return _crossing(m.params, 3 * m.flops * 64, 1e12)  # forward + backward (2 x forward)


def _mlp_crossing():
    layers = (64, 256, 10)
    flops = mlp.forward_flops(layers, 12).sum() + mlp.backward_flops(layers, 12).sum()
    return _crossing(mlp.num_params(layers), flops, 1e9)


@pytest.mark.parametrize("which", ["resnet", "mlp"])
def test_ps_sync_saturates_the_server_link_where_the_closed_form_says(which, request):
    st = request.getfixturevalue(f"{which}_study")
    p_star = {"resnet": _resnet_crossing, "mlp": _mlp_crossing}[which]()
    assert st["workers"] == WORKERS
    assert WORKERS[0] < p_star < WORKERS[-1]
    sat = st["saturation"]
    assert sat["reason"] == "link"
    # The server is rank P, placed on hostP: its link is the saturated one.
    assert sat["link"] == f"host{sat['P']}<->switch"
    assert "server" in sat["link_ranks"]
    # The first P of the grid at or beyond the crossing ...
    assert sat["P"] == min(p for p in WORKERS if p >= p_star)
    # ... and the interpolated crossings agree with first principles.
    assert st["closed_form_crossing"] == pytest.approx(p_star, rel=1e-6)
    assert sat["crossing"] == pytest.approx(p_star, rel=0.05)


def test_ps_sync_time_grows_linearly_and_efficiency_falls(resnet_study):
    st = resnet_study
    recs = st["records"]
    assert st["model"] == "resnet50"
    assert st["fits"]["time"]["law"] == "P"
    assert st["fits"]["compute"]["law"] == "constant"
    assert all(r["closed_form"] == pytest.approx(r["time"], rel=1e-6) for r in recs)
    eff = [r["efficiency"] for r in recs]
    assert eff == sorted(eff, reverse=True)
    for r in recs:
        assert r["speedup"] == pytest.approx(r["P"] * st["T1"] / r["time"])
    # One ResNet-50 gradient up and one model down per worker per iteration.
    from workloads.models import resnet50

    assert recs[0]["bytes_per_iteration"] == pytest.approx(2 * 2 * 4 * resnet50().params)


# -- `netsim scale PARADIGM` --------------------------------------------------------------

def test_cli_scale_paradigm_json_csv_png(tmp_path, capsys):
    png, out_csv = tmp_path / "ps.png", tmp_path / "ps.csv"
    argv = ["scale", "ps-sync", "--topology", "star:bandwidth=10Gbps", "--workers", "2,4,8",
            "--dataset", "iris", "--iterations", "1", "--device-flops", "1e8",
            "--png", str(png), "--csv", str(out_csv)]
    assert main(argv + ["--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert [r["P"] for r in doc["records"]] == [2, 4, 8]
    assert {"saturation", "fits", "closed_form_crossing", "T1"} <= set(doc)
    assert png.stat().st_size > 0
    with open(out_csv) as f:
        rows = list(csv.DictReader(f))
    assert [int(r["P"]) for r in rows] == [2, 4, 8] and "efficiency" in rows[0]
    assert main(argv) == 0
    text = capsys.readouterr().out
    assert "speed-up" in text and "scaling law" in text and "closed form" in text


def test_cli_scale_device_preset_sets_the_compute_rate(tmp_path, capsys):
    base = ["scale", "ps-sync", "-P", "2,4", "--model", "resnet50", "--batch", "32",
            "--iterations", "1", "--png", str(tmp_path / "d.png"), "--json"]
    assert main(base + ["--device", "V100"]) == 0
    v100 = json.loads(capsys.readouterr().out)
    assert main(base + ["--device", "A100:tf32"]) == 0
    a100 = json.loads(capsys.readouterr().out)
    from workloads.models import resnet50

    assert v100["T1"] == pytest.approx(3 * resnet50().flops * 32 / 15.7e12)
    assert a100["T1"] == pytest.approx(3 * resnet50().flops * 32 / 156e12)


def test_cli_scale_collectives_still_work(tmp_path, capsys):
    assert main(["scale", "-a", "ring", "-P", "2,4", "--png", str(tmp_path / "c.png"),
                 "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    # Default star (10 GbE: beta = 0.8 ns/B, alpha = 2 hops x 1 us), n = 64 MB. Ring closed
    # form T = 2(P-1) alpha + 2 (P-1)/P n beta: T(2) = 4 us + 51.2 ms, T(4) = 12 us + 76.8 ms.
    alpha, nbeta = 2e-6, 64e6 * 8e-10
    for rec in out["records"]:
        P = rec["P"]
        assert rec["simulated"] == pytest.approx(2 * (P - 1) * (alpha + nbeta / P), rel=1e-9)
    # Spread ~50% > the 5% "constant" threshold, and through two points every law fits with
    # R^2 = 1, so fit_scaling picks the simplest non-constant law.
    assert out["fits"]["ring"]["law"] == "(P-1)/P"


@pytest.mark.parametrize("argv, needle", [
    (["scale", "ps-sync", "-P", "2,4", "--model", "resnet9000"], "unknown model 'resnet9000'"),
    (["scale", "ps-sync", "-P", "2,4", "--batch", "0"], "batch must be"),
    (["scale", "ps-sync", "-P", ","], "empty"),
    (["scale", "ps-sync", "-P", "8,4"], "strictly increasing"),
    (["scale", "ps-sync", "-P", "0,2"], ">= 1"),
    (["scale", "gossip", "-P", "2,4"], "unknown paradigm 'gossip'"),
    (["scale", "ps-sync", "-a", "ring"], "--algorithms is for collectives"),
    (["scale", "ps-sync", "-P", "2", "--set", "bogus=1"], "ps-sync options are"),
    (["scale", "ps-sync", "-P", "2", "--device", "TPU"], "unknown device 'TPU'"),
    (["scale", "ps-sync", "-P", "2", "--device", "V100", "--device-flops", "1e9"], "not both"),
])
def test_cli_scale_bad_input_one_line_exit_2(capsys, argv, needle):
    assert main(argv) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("netsim: error:") and needle in err[0], err


def test_a_trace_that_cannot_be_projected_says_why(tmp_path, capsys):
    # ps-partitioned traffic depends on a METIS placement at P: not projectable.
    from netsim import save_trace

    path = tmp_path / "t.npz"
    save_trace(record_at("ps-partitioned", 2, iterations=1, dataset="iris"), path)
    assert main(["scale", str(path), "-P", "2,4", "--png", str(tmp_path / "x.png")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1, err
    err = err[0]
    assert err.startswith("netsim: error:") and "project" in err and "ps-partitioned" in err, err


def test_a_saved_trace_is_projected_to_each_p(tmp_path, capsys):
    from netsim import save_trace

    path = tmp_path / "t.npz"
    save_trace(record_at("ps-sync", 2, iterations=2, dataset="iris"), path)
    assert main(["scale", str(path), "-P", "2,4,8", "--png", str(tmp_path / "x.png"),
                 "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert [r["source"] for r in doc["records"]] == ["projected"] * 3


def test_recorded_iteration_count_is_respected():
    t = record_at("model-averaging", 2, iterations=5, dataset="iris", period=2)
    assert t.num_iterations == 5
    # Averaging every period = 2 local steps: iterations 1 and 3 each carry P models up and
    # P averages down, 4 bytes per parameter of the Iris model (4 -> 16 -> 3: 131
    # parameters); the other iterations send nothing.
    P, n_params = 2, 4 * 16 + 16 + 16 * 3 + 3
    for i in range(5):
        sent = t.is_message & (t.iteration == i)
        assert sent.sum() == (2 * P if (i + 1) % 2 == 0 else 0), i
        assert np.all(t.size[sent] == 4 * n_params), i
