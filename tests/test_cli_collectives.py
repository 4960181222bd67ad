"""`netsim collective`, `netsim scale` and `netsim demo` from the command line."""

import json

import pytest

from netsim.cli import main, parse_workers


def run_json(capsys, argv):
    assert main(argv) == 0
    return json.loads(capsys.readouterr().out)


def test_collective_on_a_star_matches_its_closed_form(capsys):
    rec = run_json(capsys, ["collective", "ring", "--workers", "8", "--bytes", "64MB", "--json"])
    assert abs(rec["gap"]) < 1e-6 and rec["limit"] is None


def test_collective_names_the_oversubscribed_uplink(capsys):
    # Rabenseifner allreduce over two racks of 4 hosts, 10 Gbps host links and one
    # 2.5 Gbps uplink per rack: its first halving step sends all 4 messages of each
    # rack across the uplink at once, which the uncontended closed form ignores.
    argv = ["collective", "rabenseifner", "-P", "8", "-n", "64MB", "--topology",
            "two_tier:n=8,per_rack=4,bandwidth=10Gbps,uplink_bandwidth=2.5Gbps"]
    rec = run_json(capsys, argv + ["--json"])
    assert rec["simulated"] > rec["closed_form"] * 1.01
    assert "core" in rec["limit"] and "tor" in rec["limit"]
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert "limited it" in out and rec["limit"] in out


def test_scale_classifies_lp_constant_mst_log(tmp_path, capsys):
    # Non-blocking 10 GbE star, n = 64 MB, LP with k fixed at the optimum for P = 64.
    png = tmp_path / "s.png"
    out = run_json(capsys, ["scale", "--algorithms", "lp,mst", "--workers", "2..64", "--bytes", "64MB",
                            "--topology", "star:bandwidth=10Gbps,latency=1us", "--png", str(png),
                            "--json"])
    assert out["fits"]["lp"]["law"] == "constant"
    assert out["fits"]["mst"]["law"] == "log2 P"
    assert png.stat().st_size > 0


def test_demo_prints_table_and_writes_png(tmp_path, capsys):
    png = tmp_path / "demo.png"
    assert main(["demo", "--png", str(png)]) == 0
    out = capsys.readouterr().out
    assert "ring" in out and "ps" in out and "scaling law" in out
    assert png.stat().st_size > 0


@pytest.mark.parametrize("argv, needle", [
    (["collective", "ring", "-P", "0", "-n", "1MB"], "P must be >= 1"),
    (["collective", "ring", "-P", "4", "-n", "-5"], "size"),
    (["collective", "lp", "-P", "4", "-n", "1MB", "-k", "0"], "segments"),
    (["collective", "tree", "-P", "4", "-n", "1MB"], "unknown algorithm 'tree'; known: mst"),
    (["collective", "ring", "-P", "9", "-n", "1MB", "--topology", "star:n=4"], "9 ranks but the topology has only 4"),
    (["scale", "-a", "lp,bogus"], "unknown algorithm 'bogus'"),
    (["scale", "-P", "8,4"], "strictly increasing"),
    (["scale", "-P", ","], "empty"),
])
def test_bad_input_one_line_exit_2(capsys, argv, needle):
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and err.startswith("netsim: error:") and needle in err, err


def test_parse_workers():
    assert parse_workers("2..64") == [2, 4, 8, 16, 32, 64]
    assert parse_workers("3,5,7") == [3, 5, 7]
