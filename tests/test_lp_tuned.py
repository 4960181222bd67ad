"""LP segments tuned to each P (k*) in `netsim scale`, collectives and the allreduce paradigm."""

import json

import pytest

from studies.cli.parser import main

BW, ALPHA = 1.25e9, 2e-6  # the default star: 10 GbE links of 1 us, two hops per message


def test_scale_allreduce_lp_on_resnet50_bandwidth_term_flat(tmp_path, capsys):
    # BSP-SGD of ResNet-50 (25,557,032 float32 parameters: n = 102.2 MB) with LP allreduce
    # (pipelined reduce + broadcast). With k* tuned to each P the bandwidth term is its
    # alpha -> 0 limit 2 n beta at every P, and the latency term its beta -> 0 limit
    # 2 (P - 1) alpha; the fill 2 x ~2 sqrt((P - 2) alpha n beta) is the rest.
    argv = ["scale", "allreduce", "--set", "collective=lp", "--model", "resnet50",
            "-P", "2,8,32", "--iterations", "1", "--png", str(tmp_path / "a.png"), "--json"]
    assert main(argv) == 0
    lp = json.loads(capsys.readouterr().out)
    n = 4 * 25_557_032
    for r in lp["records"]:
        P = r["P"]
        assert r["closed_bandwidth"] == pytest.approx(2 * n / BW, rel=1e-9)
        assert r["closed_latency"] == pytest.approx(2 * (P - 1) * ALPHA, rel=1e-9)
        assert r["time"] == pytest.approx(r["closed_form"], rel=1e-6)  # a star: no contention
        if P > 2:
            assert r["closed_fill"] == pytest.approx(
                4 * ((P - 2) * ALPHA * n / BW) ** 0.5, rel=0.01)
    assert [r["segments"] for r in lp["records"]] == [1, 495, 1108]
    assert lp["terms"]["bandwidth"]["law"] == "constant"
    # The whole iteration grows by the fill only: 5 % from P = 2 to 32 (it was 8x with k = 4).
    t = [r["time"] for r in lp["records"]]
    assert t[-1] / t[0] < 1.06
    argv[3] = "collective=ring"
    assert main(argv) == 0
    ring = json.loads(capsys.readouterr().out)
    # For large n LP is as fast as ring up to the ratio of their bandwidth terms, P / (P - 1)
    # (2 n beta against 2 (P - 1) / P n beta), plus the fill: at P = 32 within 9 % (1.08x; it was 8x with k = 4).
    for a, b in zip(lp["records"], ring["records"]):
        P = a["P"]
        bound = b["time"] * P / (P - 1) + a["closed_fill"] + a["closed_latency"]
        assert a["time"] <= bound * (1 + 1e-9)
    assert lp["records"][-1]["time"] / ring["records"][-1]["time"] < 1.09


def test_scale_collectives_tune_k_per_P_by_default(tmp_path, capsys):
    # Without --segments LP uses k* at each P; its term laws: latency linear, bandwidth
    # constant (n beta), and no contention on the star.
    out = json.loads(_run(capsys, ["scale", "-a", "lp", "-P", "2..16", "-n", "64MB", "--png",
                                   str(tmp_path / "s.png"), "--json"]))
    ks = [r["segments"] for r in out["records"]]
    assert ks == [1, 226, 392, 599]  # round(sqrt((P - 2) n beta / alpha)), n beta / alpha = 25600
    terms = out["fits"]["lp"]["terms"]
    assert terms["latency"]["law"] == "P" and terms["bandwidth"]["law"] == "constant"
    assert terms["contention"]["law"] == "zero"


def _run(capsys, argv):
    assert main(argv) == 0
    return capsys.readouterr().out


def test_sweep_point_tunes_lp_segments():
    # A sweep's allreduce point with collective lp and no segments gets k* (the optimum of
    # the exact chain time), so its closed form is at most that of any fixed k, e.g. 4.
    from netsim import costmodel
    from studies.scaling.paradigm import sweep_point
    from topologies import star

    def point(options):
        return sweep_point({"name": "allreduce", "P": 8, "hidden": "64", "dataset": "digits",
                            "epochs": 1, "seed": 0, "options": json.dumps(options)}, star)

    tuned, fixed = point({"collective": "lp"}), point({"collective": "lp", "segments": 4})
    assert tuned["closed_form"] < fixed["closed_form"]
    assert tuned["accuracy"] == fixed["accuracy"]  # the same training run
    # 64-64-10 digits MLP: n = 4 (64*64+64 + 64*10+10) = 19240 bytes; k* on the default star.
    k = costmodel.optimal_segments(8, 19240, ALPHA, 1 / BW)
    assert tuned["messages"] % (2 * 7 * k) == 0 and fixed["messages"] % (2 * 7 * 4) == 0
