"""`netsim schemes --seeds A..B` reports every verdict as holds in k of N seeds (the claims'
fold, studies.claims.verdicts.over_seeds), and takes --model and --topology."""

import json

import pytest

from studies.cli.parser import main

ARGS = ["schemes", "--dataset", "iris", "--workers", "2", "--target", "0.5", "--max-epochs", "1"]


def test_every_verdict_is_k_of_n_and_k_counts_the_seeds_where_it_holds(tmp_path, capsys):
    main(ARGS + ["--seeds", "0..2", "--json", "--png", str(tmp_path / "s.png")])
    doc = json.loads(capsys.readouterr().out)
    runs = {int(s): rows for s, rows in doc["runs"].items()}
    assert sorted(runs) == [0, 1, 2] and doc["rows"] == runs[0]
    offered = [r for r in runs[0] if not r["reason"]]
    reach = [v for v in doc["verdicts"] if "reaches" in v["claim"]]
    assert len(reach) == len(offered) == 6   # 4 schemes x 2 architectures, 2 not offered
    for v, r in zip(reach, offered):
        k = sum(next(x for x in runs[s] if x["scheme"] == r["scheme"] and
                     x["architecture"] == r["architecture"])["reached"] for s in runs)
        assert (v["holds"], v["n"]) == (k, 3)
        assert v["verdict"] == ("PASS" if k == 3 else "FAIL" if k == 0 else "marginal")
    main(ARGS + ["--seeds", "0..2", "--png", str(tmp_path / "s.png")])
    out = capsys.readouterr().out
    results = [line for line in out.splitlines() if "holds in" in line]
    assert len(results) == len(doc["verdicts"]) and all(" of 3 seeds" in x for x in results)


def test_model_and_topology_replace_the_toy_and_the_two_machines(tmp_path, capsys):
    main(ARGS + ["--model", "resnet50", "--topology", "star:bandwidth=100Gbps", "--json",
                 "--png", str(tmp_path / "s.png")])
    rows = {(r["scheme"], r["architecture"]): r for r in json.loads(capsys.readouterr().out)}
    bsp = rows[("bsp", "allreduce")]
    assert set(k for k in bsp if k.startswith("time_")) == {"time_star:bandwidth=100Gbps"}
    # A ring allreduce of ResNet-50's float32 gradient (n = 25,557,032 parameters, He et al.
    # 2016): each of P = 2 workers sends 2 (P - 1) / P x 4 n bytes a step.
    n, P = 25_557_032, 2
    assert bsp["bytes"] / bsp["iterations"] == pytest.approx(P * 2 * (P - 1) / P * 4 * n,
                                                              rel=0.01)
    assert rows[("local-sgd", "allreduce")]["skipped"].startswith("not simulated as resnet50")
