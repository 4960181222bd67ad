"""The transport reaches every entry point: the CLI's replay and scale, a sweep's grid."""

import json
import subprocess
import sys

import pytest

from netsim import TraceBuilder, save_trace
from netsim.errors import NetsimError
from studies.sweep.run import run_point
from studies.sweep.config import check_config, sweep_points


def _cli(*args):
    return subprocess.run([sys.executable, "-m", "studies.cli.parser", *args], capture_output=True,
                          text=True)


def test_replay_over_tcp_is_slower_for_a_message_still_opening_its_window(tmp_path):
    # 1 MB at 100 Gb/s with 1 us links: the window of 10 segments takes several round
    # trips to cover the bandwidth-delay product, which the fluid model never pays.
    b = TraceBuilder(2)
    b.message(0, 1, 1e6)
    path = tmp_path / "t.npz"
    save_trace(b.build(), str(path))
    spans = {}
    for transport in ("fluid", "tcp"):
        out = _cli("replay", str(path), "--topology", "star:bandwidth=100Gbps,mtu=1500",
                   "--transport", transport, "--json")
        assert out.returncode == 0, out.stderr
        spans[transport] = json.loads(out.stdout)["makespan"]
    assert spans["tcp"] > spans["fluid"] * 1.02


def test_an_unknown_transport_is_one_line_and_exit_2(tmp_path):
    out = _cli("scale", "-a", "ring", "-P", "2", "--transport", "udp", "--png",
               str(tmp_path / "s.png"))
    assert out.returncode == 2
    assert out.stderr.strip().splitlines()[-1].startswith("netsim: error:")
    assert "Traceback" not in out.stderr


def test_a_sweep_runs_each_transport_as_a_point():
    cfg = check_config({"topologies": ["star:bandwidth=100Gbps,mtu=1500"],
                        "collectives": ["ring"], "bytes": ["1MB"], "P": [4],
                        "transport": ["fluid", "tcp"]})
    points = sweep_points(cfg)
    assert [p["options"] for p in points] == [None, json.dumps({"transport": "tcp"})]
    fluid, tcp = (run_point(p)["simulated"] for p in points)
    assert tcp > fluid
    with pytest.raises(NetsimError, match="unknown transport 'udp'"):
        check_config({"topologies": ["star"], "collectives": ["ring"], "bytes": ["1MB"],
                      "P": [4], "transport": ["udp"]})
