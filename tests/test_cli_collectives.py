"""`netsim collective`, `netsim scale` and `netsim demo` from the command line."""

import json

import pytest

from studies.cli.parser import main
from netsim.units import parse_workers


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
    # Hand-computed, default placement (rank r on host r, racks {0..3} and {4..7}), 1 us per
    # link, U = 2.5 Gbps = 3.125e8 B/s up, B = 1.25e9 B/s host links, n = 64e6 B:
    # halving step 1, partner r^4: all 8 messages of n/2 cross the racks, 4 per uplink
    # direction, U/4 each, 4 links: 4 l + (n/2)/(U/4). Steps 2 and 3 (partners r^2, r^1)
    # stay in the rack, one flow per host link: 2 l + (n/4)/B and 2 l + (n/8)/B. The
    # doubling allgather retraces them.
    n, U, B, lat = 64e6, 2.5e9 / 8, 10e9 / 8, 1e-6
    simulated = 2 * ((4 * lat + (n / 2) / (U / 4)) + (2 * lat + n / 4 / B)
                     + (2 * lat + n / 8 / B))
    assert rec["simulated"] == pytest.approx(simulated, rel=1e-9)
    # The closed form takes the worst pair's alpha = 4 l, beta = 1/U, uncontended:
    # 2 lg 8 alpha + 2 (7/8) n beta.
    assert rec["closed_form"] == pytest.approx(2 * 3 * 4 * lat + 2 * 7 / 8 * n / U, rel=1e-9)
    assert "core" in rec["limit"] and "tor" in rec["limit"]
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert "limited it" in out and rec["limit"] in out


def test_scale_classifies_lp_constant_mst_log(tmp_path, capsys):
    # Non-blocking 10 GbE star, n = 64 MB, LP with k fixed at the optimum for P = 64.
    png = tmp_path / "s.png"
    out = run_json(capsys, ["scale", "--algorithms", "lp,mst", "--workers", "2..64", "--bytes", "64MB",
                            "--topology", "star:bandwidth=10Gbps,latency=1us", "--segments", "1260",
                            "--png", str(png),
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
    # Bad -P lists ("8,4", ","): parse_workers, checked once in test_scaling.py.
])
def test_bad_input_one_line_exit_2(capsys, argv, needle):
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and err.startswith("netsim: error:") and needle in err, err


def test_parse_workers():
    assert parse_workers("2..64") == [2, 4, 8, 16, 32, 64]
    assert parse_workers("3,5,7") == [3, 5, 7]
