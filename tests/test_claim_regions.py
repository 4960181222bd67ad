"""Where each claim holds (studies.claims.regions) and `netsim claims --quick --png`."""

import pytest

from studies.claims import regions as R
from studies.claims import reproduce as claims
from studies.cli.parser import main


def test_lp_be_region_tends_to_the_bandwidth_limit():
    r = R.lp_be_region()
    # Every column grows with n towards 2 (P - 1) / P (LP k* tuned: n beta + fill; BE:
    # 2 (P - 1) / P n beta + 2 log2 P alpha on the star), and stays below it.
    for j, P in enumerate(r["xs"]):
        col = [row[j] for row in r["values"]]
        assert col == sorted(col) and col[-1] < 2 * (P - 1) / P
    assert r["holds"] == [[v >= 1.8 for v in row] for row in r["values"]]
    assert r["holds"][-1][-1] and not r["holds"][0][-1]


def test_ringtmp_region_is_width_over_batch():
    r = R.ringtmp_region()
    # n / (7 b w): at width 32, n = 64*32+32 + 6 (32*32+32) + 32*10+10 = 8746.
    j = r["xs"].index(32)
    for b, row in zip(r["ys"], r["values"]):
        assert row[j] == pytest.approx(8746 / (7 * b * 32), rel=1e-12)
        assert row == sorted(row)  # grows with the width, about as width / batch
    assert [row[0] for row in r["values"]] == sorted((row[0] for row in r["values"]),
                                                     reverse=True)
    assert r["how"] == "closed form"


def test_dgc_ratios_match_a_run():
    from workloads.paradigms import dgc

    d = dgc.run(dataset="iris", hidden=(64,), epochs=6, workers=2, seed=0)
    after, whole = R.dgc_ratios(d.trace.metadata["layers"], epochs=6)
    assert after == pytest.approx(d.extra["stages"][-1]["compression_ratio"], rel=1e-12)
    assert whole == pytest.approx(d.extra["compression_ratio"], rel=1e-12)


def test_pf_region_cut_matches_the_runs():
    from workloads.paradigms import pf, ps_sync

    r = R.pf_region(quick=True, dataset="iris", hidden=(8,))
    # The cut after 1 epoch at tau0 = 0.05: a 1-epoch PF run sends the first epoch's bytes
    # of the longer run (same seed, same batches), ps-sync its fixed 2 P 4 n per step.
    one = pf.run(dataset="iris", hidden=(8,), epochs=1, workers=4, seed=0, tau0=0.05)
    ps = ps_sync.run(dataset="iris", hidden=(8,), epochs=1, workers=4, seed=0)
    assert r["values"][0][0] == pytest.approx(ps.total_bytes / one.total_bytes, rel=1e-9)


def test_format_and_plot_regions(tmp_path):
    regs = [R.ringtmp_region(quick=True), R.dgc_region(quick=True)]
    text = R.format_region(regs[0])
    assert "*" in text and "per-worker batch" in text
    out = R.plot_regions(regs, tmp_path / "r.png")
    with open(out, "rb") as f:
        assert f.read(8) == b"\x89PNG\r\n\x1a\n"


def test_cli_claims_quick_prints_regions_and_png(monkeypatch, capsys, tmp_path):
    reg = R.ringtmp_region(quick=True)
    fake = [{"claim": "x", "source": "s", "setup": "u", "measured": "m", "threshold": ">= 8x",
             "value": 2.0, "passed": False, "seconds": 0.0, "verdict": "FAIL", "region": reg},
            {"claim": "y", "source": "s", "setup": "u", "measured": "m", "threshold": "t",
             "value": 1.0, "passed": True, "seconds": 0.0, "verdict": "by construction",
             "region": "by construction everywhere"}]
    for row in fake:
        row["seed"] = None
    seen = {}

    def run_claim_seeds(seeds, quick=False, **options):
        seen["quick"] = quick
        return {s: fake for s in seeds}

    monkeypatch.setattr(claims, "run_claim_seeds", run_claim_seeds)
    png = tmp_path / "map.png"
    assert main(["claims", "--quick", "--seeds", "0", "--png", str(png)]) == 0
    out = capsys.readouterr().out
    assert seen["quick"] and png.stat().st_size > 0
    cells = sum(h for row in reg["holds"] for h in row)
    assert "by construction" in out and f"holds in {cells} of 9 cells" in out
    assert R.format_region(reg) in out
