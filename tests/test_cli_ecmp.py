"""``netsim replay --ecmp``: two flows between the same pair of leaves of a 2-spine leaf-spine."""

import json

import pytest

from conftest import one_line_error
from netsim import TraceBuilder, save_trace
from studies.cli.parser import main

TOPO = "leaf_spine:leaves=2,spines=2,hosts_per_leaf=2,bandwidth=8Gbps,uplink_bandwidth=8Gbps,latency=1us"
SIZE, RATE, LAT = 1e6, 1e9, 1e-6


@pytest.fixture
def flows(tmp_path):
    b = TraceBuilder(4)
    b.message(0, 2, SIZE)  # host0 (leaf0) -> host2 (leaf1)
    b.message(1, 3, SIZE)  # host1 (leaf0) -> host3 (leaf1)
    p = tmp_path / "t.npz"
    save_trace(b.build(), p)
    return str(p)


def makespan(capsys, argv):
    assert main(argv) == 0
    return json.loads(capsys.readouterr().out)["makespan"]


def test_ecmp_off_shares_one_spine_and_hash_spreads(flows, capsys):
    off = makespan(capsys, ["replay", flows, "--topology", TOPO, "--json"])
    # Both flows cross leaf0->spine0: B/2 each, four hops of latency.
    assert off == pytest.approx(4 * LAT + 2 * SIZE / RATE, rel=1e-12)
    # Seed 0 hashes them onto different spines (tests/test_paths.py): full rate each.
    on = makespan(capsys, ["replay", flows, "--topology", TOPO, "--ecmp", "hash", "--json"])
    assert on == pytest.approx(4 * LAT + SIZE / RATE, rel=1e-12)


def test_ecmp_help_and_bad_values(flows, capsys):
    with pytest.raises(SystemExit):
        main(["replay", "--help"])
    out = capsys.readouterr().out
    assert "--ecmp {off,hash}" in out and "--ecmp-seed" in out
    one_line_error(capsys, ["replay", flows, "--topology", TOPO, "--ecmp", "split"],
                   "invalid choice: 'split'")
    one_line_error(capsys, ["replay", flows, "--topology", TOPO, "--ecmp", "hash",
                            "--ecmp-seed", "-1"], "ecmp seed")
