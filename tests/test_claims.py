"""The seed papers' claims (studies.claims.reproduce) and `netsim claims`."""

import json

import pytest

from studies.cli.parser import main
from studies.claims import reproduce as claims
from studies.reports import text as report

KEYS = {"claim", "source", "setup", "measured", "threshold", "value", "passed", "seconds",
        "verdict", "region", "seed"}
#: An accuracy half's row also carries its per-run differences and the data that would show it.
ACCURACY_KEYS = {"differences", "testable_on"}


def _check_rows(rows):
    for r in rows:
        assert set(r) - ACCURACY_KEYS == KEYS and set(r) - KEYS in (set(), ACCURACY_KEYS)
        assert r["claim"] and r["source"] and r["threshold"] and r["measured"]
        assert isinstance(r["passed"], bool) and r["seconds"] >= 0
        # "by construction" replaces PASS only: a claim that fails is a FAIL.
        assert r["verdict"] in ({"PASS", "by construction"} if r["passed"] else {"FAIL"})


def test_lp_claims_on_the_pcie_tree():
    # The LP paper's setting: 8 GPUs under 4 PCIe gen3 switches and 2 QPI sockets, LP with
    # k* tuned to each P. The bandwidth term of LP is its alpha -> 0 limit n beta (beta of a
    # PCIe gen3 x16 link, the narrowest on every path) at every P; MST's terms are
    # log2 P (alpha + n beta) at P = 2, 4, 8.
    from topologies.machines import pcie_tree
    from topologies.specs import PCIE_X16

    rows = claims.lp_claims()
    _check_rows(rows)
    lp, mst, ratio = rows
    assert lp["verdict"] == "by construction" and lp["value"] < 1e-9
    assert f"bandwidth term constant ({64e6 / PCIE_X16['gen3']:.3g} s)" in lp["measured"]
    assert "latency term P" in lp["measured"]
    assert mst["verdict"] == "by construction"
    assert "latency term log2 P, bandwidth term log2 P" in mst["measured"]
    # BE's scatter shares the switch uplinks and the QPI link on the tree, so BE / LP
    # exceeds the star's 2 (P - 1) / P = 1.75 at P = 8; the simulation against the formula:
    from netsim.analysis.collectives import compare

    G = pcie_tree()
    be = compare("be", G, 8, 1e9, saturation=False)
    lp8 = compare("lp", G, 8, 1e9, saturation=False)
    assert be["simulated"] > be["closed_form"] * 1.5 and be["limit"]
    assert ratio["value"] == pytest.approx(be["simulated"] / lp8["simulated"], rel=1e-12)
    assert ratio["value"] > 2 * 7 / 8 and ratio["passed"]


def test_lp_claims_fail_when_a_term_grows():
    # A topology whose narrowest link on the LP chain narrows with P: the bandwidth term
    # n beta(P) then grows, and the claim FAILs.
    import networkx as nx

    G = nx.Graph()
    for i in range(8):
        G.add_node(f"h{i}", kind="host")
        G.add_edge(f"h{i}", "sw", bandwidth=1e9 / (1 + i), latency=1e-6)
    rows = claims.lp_claims(nbytes=1e6, workers=(2, 4, 8), ratio_n=1e7, topology=G)
    _check_rows(rows)
    assert rows[0]["verdict"] == "FAIL" and rows[0]["value"] > 1


def test_ringtmp_byte_ratio_closed_form_matches_a_run():
    # The region's closed form n / ((P - 1) batch width) against real runs of both paradigms
    # at another point: digits, width 16, per-worker batch 4, 4 nodes.
    from studies.claims.regions import ringtmp_byte_ratio
    from workloads.paradigms import ps_sync, ringtmp

    common = dict(dataset="digits", workers=4, epochs=1, hidden=(16,) * 3, batch_size=4)
    r = ringtmp.run(partition="layer", **common)
    p = ps_sync.run(servers=1, **common)
    assert p.total_bytes / r.total_bytes == pytest.approx(
        ringtmp_byte_ratio(16, 4, nodes=4), rel=1e-12)


def test_ringtmp_claim_fails_honestly_and_reports_accuracy():
    row = claims.ringtmp_claim(seeds=1)[0]
    _check_rows([row])
    # Best configuration: digits 64-(32 x 7)-10 by layer on P = 8 nodes, n = 64*32+32 +
    # 6*(32*32+32) + 32*10+10 = 8746 parameters. Per step ps-sync moves 2 P 4n bytes; the
    # ring sends 7 activations forward and 7 gradients back, each (P x 8 rows) x 32 float32.
    assert row["value"] == pytest.approx(2 * 8 * 4 * 8746 / (2 * 7 * 64 * 32 * 4), rel=1e-12)
    assert row["passed"] == (row["value"] >= 8.0) and not row["passed"]
    assert row["measured"].count("acc delta") == 3


def test_pf_claims_traffic_and_speedup():
    traffic, speed = claims.pf_claims()
    _check_rows([traffic, speed])
    # ps-sync moves 2 P 4n bytes per step (push + pull of n = 64*64+64 + 64*10+10 = 4810
    # float32 values per worker, P = 4) over the same steps as PF.
    from workloads.paradigms import pf

    pfr = pf.run(tau0=0.05, dataset="digits", hidden=(64,), epochs=3, workers=4, seed=0)
    ps_bytes = pfr.trace.num_iterations * 2 * 4 * 4 * 4810
    assert traffic["value"] == pytest.approx(ps_bytes / pfr.total_bytes, rel=1e-12)
    # The cut sits within 1 % of its 4.1x threshold, so the verdict is left to the claims
    # work; here the rule, and a band: the value-bounded filter at tau0 = 0.05 over 3 epochs
    # sends roughly a quarter of ps-sync's bytes. A filter that stopped filtering gives 1x.
    assert not traffic["passed"] or traffic["value"] >= 12.3 / 3.0
    assert 3.0 < traffic["value"] < 6.0
    assert speed["passed"] == (speed["value"] >= 4.3)
    # PF's traffic cut cannot give 4.3x where communication is 5.7x compute: at most
    # (1 + 5.7) / (1 + 5.7 / cut) = 2.8x, far below 4.3x.
    assert 1.0 < speed["value"] < (1 + 5.7) / (1 + 5.7 / traffic["value"]) + 0.1
    assert not speed["passed"]


def test_partition_claim_measures_the_favourable_setting():
    rows = claims.partition_claim()
    _check_rows(rows)
    row, speed = rows
    from studies.claims import metis_vs_random
    from workloads.paradigms import ps_partitioned

    c = metis_vs_random.compare(workers=16, servers=4, epochs=20, seed=0,
                                dataset_options={"locality": 1.0, "n_clusters": 16})
    assert row["value"] == pytest.approx(c["random"].total_bytes / c["metis"].total_bytes,
                                         rel=1e-12)
    assert row["value"] > 1  # the direction is the claim; Parsa's 90 % (10x) the threshold
    assert row["passed"] == (row["value"] >= 10.0)
    assert "arXiv:1505.04636" in row["source"]
    # The time row charges METIS its partitioning in modelled seconds: the edges of its two
    # graphs (one per non-zero, one per distinct worker-feature pair) at 1e6 edges per
    # second, linear in the edges (Karypis & Kumar 1998), so the ratio is exact per seed.
    import numpy as np
    import scipy.sparse

    from netsim import simulate
    from topologies import star
    from workloads.training import prepare

    X = scipy.sparse.csr_matrix(prepare("sparse", 16, 0, (), None, {"locality": 1.0,
                                                                     "n_clusters": 16}
                                        ).data.X_train)
    part = ps_partitioned.partition_samples(X, 16, 0)
    worker_of_nonzero = np.repeat(part, np.diff(X.indptr))
    edges = X.nnz + len(set(zip(worker_of_nonzero.tolist(), X.indices.tolist())))
    G = star(c["metis"].trace.ranks, bandwidth=1.25e9, latency=1e-6)
    t_random = simulate(c["random"].trace, G).makespan
    t_metis = simulate(c["metis"].trace, G).makespan
    assert speed["value"] == pytest.approx(t_random / (t_metis + edges / 1e6), rel=1e-12)
    assert f"(modelled: {edges} edges at 1e+06/s)" in speed["measured"]
    assert speed["value"] < t_random / t_metis
    assert speed["passed"] == (speed["value"] >= 1.6)



def test_partition_peak_claim_is_the_greatest_ratio_over_P():
    from studies.claims import metis_vs_random

    Ps = (4, 8)
    row, = claims.partition_peak_claim(workers=Ps, clusters=8)
    _check_rows([row])
    ratios = [metis_vs_random.compare(workers=P, servers=4, epochs=1, seed=0,
                                      dataset_options={"locality": 1.0, "n_clusters": 8}
                                      )["traffic_ratio"] for P in Ps]
    assert row["value"] == max(ratios)
    assert row["passed"] == (max(ratios) >= 14.0)
    assert "not in Parsa" in row["source"]
    where = [str(P) for P, r in zip(Ps, ratios) if r >= 14.0]
    assert row["measured"].endswith(f"at P = {', '.join(where)}" if where else "at no P")

def test_dgc_claim_after_warmup():
    row, whole, warmup = claims.dgc_claim()
    _check_rows([row, whole, warmup])
    # Digits MLP 64-128-10: layers of 64*128+128 = 8320 and 128*10+10 = 1290 values; after
    # warm-up 0.1 % of each is kept: k = ceil(8.32) + ceil(1.29) = 9 + 2 = 11 values of
    # 8 bytes against 9610 dense float32 values.
    assert row["value"] == pytest.approx(4 * 9610 / (8 * 11), rel=1e-12)
    assert row["passed"] == (row["value"] >= 270) and row["passed"]
    assert row["verdict"] == "by construction"
    # Over the whole run the four warm-up epochs (25 %, 6.25 %, ... kept) dominate the bytes:
    # the closed form of claim_regions.dgc_ratios, from the layer sizes alone.
    from studies.claims.regions import dgc_ratios

    assert whole["value"] == pytest.approx(dgc_ratios((64, 128, 10))[1], rel=1e-12)
    assert whole["value"] < 20 and whole["verdict"] == "FAIL"
    # The warm-up's accuracy half: the same run against DGC without warm-up, one difference.
    assert warmup["differences"] == [warmup["value"]] and "MNIST" in warmup["testable_on"]
    assert f"({warmup['value']:+.4f})" in warmup["measured"]


def test_slimdp_claim():
    row, ablation = claims.slimdp_claim()
    _check_rows([row, ablation])
    # The ablation: the same alpha with every value random (beta = 0) or the core alone.
    from workloads.paradigms import slimdp

    common = dict(dataset="digits", hidden=(64,), epochs=3, workers=4, seed=0, alpha=0.3)
    best = max(slimdp.run(beta=0.0, **common).accuracy, slimdp.run(beta=1.0, **common).accuracy)
    assert ablation["value"] == pytest.approx(slimdp.run(**common).accuracy - best, abs=1e-12)
    assert ablation["passed"] == (ablation["value"] >= 0)
    # Per worker-step ps-sync moves 8n bytes (4n push + 4n pull, n = 4810 for 64-64-10);
    # Slim-DP K = round(0.3 n) = 1443 values, pushed at 8 bytes (value + index) and pulled
    # at 4: 12K. The step counts are equal, so the ratio is 8n / (12 K).
    assert row["value"] == pytest.approx(8 * 4810 / (12 * 1443), rel=1e-12)
    assert row["passed"]


def test_format_claims_shows_every_fail():
    rows = [{"claim": "a", "source": "s", "setup": "x", "measured": "m", "threshold": "t",
             "value": 1.0, "passed": False, "seconds": 0.0},
            {"claim": "b", "source": "s", "setup": "x", "measured": "m", "threshold": "t",
             "value": 1.0, "passed": True, "seconds": 0.0}]
    text = report.format_claims(rows)
    assert "FAIL" in text and "PASS" in text
    md = report.format_claims(rows, markdown=True)
    assert md.count("\n") == 3 and md.splitlines()[2].endswith("| FAIL |")


def _fake_runs(monkeypatch, per_seed):
    """Make run_claim_seeds return hand-built rows: {claim: [(value, passed, verdict)] per
    seed}; a claim of one tuple takes no seed. Returns what each call was given."""
    seen = []

    def row(claim, i, seed):
        vals = per_seed[claim]
        value, passed, verdict = vals[min(i, len(vals) - 1)]
        return {"claim": claim, "source": "s", "setup": "u", "measured": f"m{seed}",
                "threshold": ">= 4.1x", "value": value, "passed": passed, "seconds": 0.5,
                "verdict": verdict, "region": "", "seed": None if len(vals) == 1 else seed}

    def fake(seeds, quick=False, jobs=2, only=None, progress=None, log=None):
        seen.append({"seeds": list(seeds), "quick": quick, "jobs": jobs, "only": only})
        return {s: [row(c, i, s) for c in per_seed] for i, s in enumerate(seeds)}
    monkeypatch.setattr(claims, "run_claim_seeds", fake)
    return seen


def test_cli_claims_exits_0_with_fails(monkeypatch, capsys):
    seen = _fake_runs(monkeypatch, {"x": [(2.0, False, "FAIL")]})
    assert main(["claims", "--seeds", "0"]) == 0
    out = capsys.readouterr()
    assert "FAIL" in out.out
    assert "0 PASS, 0 by construction, 0 marginal, 1 FAIL, 0 not testable on this data at seed 0" in out.err
    assert main(["claims", "--seeds", "0", "--json"]) == 0
    row, = json.loads(capsys.readouterr().out)
    assert (row["claim"], row["value"], row["verdict"], row["holds"], row["n"]) == (
        "x", 2.0, "FAIL", 0, 1)
    assert seen[0] == {"seeds": [0], "quick": False, "jobs": 2, "only": None}
    # --quiet: the counts line is a note for people, and a success leaves stderr empty
    assert main(["claims", "--seeds", "0", "-q"]) == 0
    out = capsys.readouterr()
    assert "FAIL" in out.out and out.err == ""


def test_cli_claims_over_seeds_counts_each_verdict_apart(monkeypatch, capsys):
    # Hand-built per-seed values at seeds 0..4: one claim straddles its threshold.
    seen = _fake_runs(monkeypatch, {
        "cut": [(4.10, True, "PASS"), (4.21, True, "PASS"), (4.27, True, "PASS"),
                (3.77, False, "FAIL"), (4.09, False, "FAIL")],
        "shape": [(437.0, True, "by construction")],
        "alpha": [(2.22, True, "PASS")] * 5,
        "lp": [(3.1, True, "PASS")],
        "speed": [(2.8, False, "FAIL")] * 5})
    assert main(["claims", "--seeds", "0..4", "--markdown", "-j", "3", "--only", "pf,lp"]) == 0
    out = capsys.readouterr()
    assert seen[-1] == {"seeds": [0, 1, 2, 3, 4], "quick": False, "jobs": 3,
                        "only": ["pf", "lp"]}
    lines = out.out.splitlines()
    assert "measured (seed 0)" in lines[0] and "value over seeds 0..4" in lines[0]
    assert lines[2].endswith("| mean 4.09, 3.77..4.27 (N = 5) | - | marginal: holds in 3 of 5 "
                             "seeds |")
    assert lines[3].endswith("| 437 (one run: takes no seed) | - | by construction: one run "
                             "(takes no seed) |")
    assert lines[6].endswith("| FAIL: holds in 0 of 5 seeds |")
    assert "2 PASS, 1 by construction, 1 marginal, 1 FAIL, 0 not testable on this data at seeds 0..4" in out.err
    assert main(["claims", "--seeds", "0,3", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert [p["seed"] for p in rows[0]["per_seed"]] == [0, 3]
    assert [p["value"] for p in rows[0]["per_seed"]] == [4.10, 4.21]
    assert rows[1]["per_seed"] == [{"seed": None, "value": 437.0, "passed": True,
                                    "verdict": "by construction", "measured": "m0",
                                    "seconds": 0.5}]


@pytest.mark.parametrize("argv, needle", [
    (["--seeds", "5..2"], "seeds range '5..2' must be A..B with 0 <= A <= B"),
    (["--seeds", "x"], "seeds must look like 0..4 or 0,3,7, got 'x'"),
    (["--seeds", "1,1"], "seed list must be strictly increasing"),
    (["--only", "pf,nope"], "--only takes names among lp, ringtmp, pf, partition, partition-peak, dgc, slimdp"),
    (["--jobs", "0"], "--jobs must be an integer >= 1"),
])
def test_cli_claims_bad_input_is_one_line_before_any_work(monkeypatch, capsys, argv, needle):
    from conftest import one_line_error

    def boom(*a, **k):
        raise AssertionError("work started before the options were checked")
    monkeypatch.setattr(claims, "run_claim_seeds", boom)
    one_line_error(capsys, ["claims"] + argv, needle)


def test_cli_claims_two_seeds_of_pf_are_two_real_runs(capsys):
    # Real runs in two processes: each seed's values are those of pf_claims at that seed, and
    # the verdict is k of N of their own verdicts.
    assert main(["claims", "--seeds", "0..1", "--only", "pf", "--quick", "--json"]) == 0
    out = capsys.readouterr()
    rows = json.loads(out.out)
    assert [r["claim"].split(":")[0] for r in rows] == ["PF traffic", "PF speed-up"]
    direct = {s: claims.pf_claims(seed=s) for s in (0, 1)}
    for i, r in enumerate(rows):
        assert [p["seed"] for p in r["per_seed"]] == [0, 1] and r["n"] == 2
        assert [p["value"] for p in r["per_seed"]] == [direct[s][i]["value"] for s in (0, 1)]
        k = sum(direct[s][i]["passed"] for s in (0, 1))
        assert r["holds"] == k
        assert r["verdict"] == {0: "FAIL", 1: "marginal", 2: "PASS"}[k]
        assert r["value"] == pytest.approx((r["per_seed"][0]["value"]
                                            + r["per_seed"][1]["value"]) / 2)
    assert rows[0]["region"]["seed"] == 0  # the map is drawn at the first seed
    assert "claims: 3 runs of pf at 2 seeds in 2 processes" in out.err
    assert "at seeds 0, 1 in" in out.err


def test_cli_claims_a_claim_without_seed_runs_once(capsys):
    assert main(["claims", "--seeds", "0..2", "--only", "lp", "--quick", "--json", "-j",
                 "1"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert len(rows) == 3
    for r in rows:
        assert r["n"] == 3 and len(r["per_seed"]) == 1 and r["per_seed"][0]["seed"] is None
        assert r["holds"] == (3 if r["per_seed"][0]["passed"] else 0)
    assert [r["verdict"] for r in rows] == ["by construction", "by construction", "PASS"]


def test_run_claim_seeds_refuses_bad_seeds_and_names():
    from netsim.errors import NetsimError

    for seeds in ([], [1, 1], [-1]):
        with pytest.raises(NetsimError, match="seed"):
            claims.run_claim_seeds(seeds, only=["lp"])
    with pytest.raises(NetsimError, match="no claim experiment nope"):
        claims.run_claim_seeds([0], only=["nope"])


def test_ctrl_c_during_claims_prints_one_line():
    # SIGINT to the whole process group, as a terminal's Ctrl-C does: the worker processes
    # ignore it and the command stops them, so one line and status 130, no tracebacks.
    import os
    import signal
    import subprocess
    import sys

    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    p = subprocess.Popen([sys.executable, "-m", "studies.cli.parser", "claims", "--only", "partition",
                          "--seeds", "0..5"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         text=True, start_new_session=True,
                         env={**os.environ, "PYTHONPATH": root})
    first = p.stderr.readline()  # logged just before the workers start
    if first.startswith("claims over 6 seeds: about"):  # the estimate, said first (90 s)
        first = p.stderr.readline()
    assert first.startswith("claims: 7 runs of partition at 6 seeds in 2 processes"), first
    os.killpg(p.pid, signal.SIGINT)
    out, err = p.communicate(timeout=120)
    assert p.returncode == 130
    assert err == "netsim: interrupted\n", err
    assert out == ""


def test_cli_claims_help_says_fail_is_not_an_error(capsys):
    with pytest.raises(SystemExit):
        main(["claims", "--help"])
    assert "exit status is 0" in " ".join(capsys.readouterr().out.split())


@pytest.mark.slow
def test_netsim_claims_full_run(capsys):
    # Its wall time is printed by the command itself. The default is seeds 0..4.
    from studies.claims.verdicts import VERDICTS

    assert main(["claims", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert len(rows) == 12
    for r in rows:
        assert set(r) == KEYS | {"low", "high", "n", "holds", "per_seed"}
        assert r["n"] == 5 and r["verdict"] in VERDICTS
        assert r["low"] <= r["value"] <= r["high"]
        free = r["seed"] is None
        assert [p["seed"] for p in r["per_seed"]] == ([None] if free else [0, 1, 2, 3, 4])
        k = sum(p["passed"] for p in r["per_seed"]) * (5 if free else 1)
        assert r["holds"] == k and r["passed"] == (k == 5)
        assert (r["verdict"] == "marginal") == (0 < k < 5)
        # Verdict logic at each seed: a threshold ">= X" alone decides the run; with an
        # accuracy condition beside it a PASS still needs the value to reach X.
        for p in r["per_seed"]:
            if r["threshold"].startswith(">= "):
                x = float(r["threshold"].split()[1].rstrip("x"))
                if " and " in r["threshold"]:
                    assert not p["passed"] or p["value"] >= x, r
                else:
                    assert p["passed"] == (p["value"] >= x), r
        assert r["region"], r  # a region record or a sentence for every claim
    by = {r["claim"]: r for r in rows}
    # The ratios derived in the tests above (RingTMP's is seed-independent, the other two
    # follow from the shapes at every seed).
    assert by["RingTMP bytes <= 1/8 of the parameter server's"]["value"] == pytest.approx(
        2 * 8 * 4 * 8746 / (2 * 7 * 64 * 32 * 4))
    dgc = by["DGC: 270x-600x gradient compression without losing accuracy"]
    assert dgc["low"] == dgc["high"] == pytest.approx(4 * 9610 / (8 * 11))
    slim = by["Slim-DP saves communication without loss of accuracy"]
    assert slim["low"] == slim["high"] == pytest.approx(8 * 4810 / (12 * 1443))
