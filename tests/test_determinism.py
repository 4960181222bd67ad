"""Same inputs, byte-identical outputs, across separate processes."""

import hashlib
import os
import subprocess
import sys

import pytest

SIMULATE = r"""
import hashlib, sys
import netsim
from netsim.comm import collectives
from topologies import two_tier
t = collectives.rabenseifner_allreduce(12, 3e7)
r = netsim.simulate(t, two_tier(12, 4, bandwidth=1.25e9, uplink_bandwidth=2e9, latency=1e-6))
sys.stdout.write(hashlib.sha256(r.to_json(ops=True).encode()).hexdigest())
"""

RECORD = r"""
import sys
import workloads
from netsim import save_trace
run = workloads.record(sys.argv[1], workers=4, epochs=2, seed=7)
save_trace(run.trace, sys.argv[2])
"""


def run(code, *args, hashseed):
    env = {**os.environ, "PYTHONHASHSEED": str(hashseed)}
    return subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True,
                          check=True, env=env).stdout


def test_result_json_identical_across_processes():
    assert run(SIMULATE, hashseed=1) == run(SIMULATE, hashseed=2)


@pytest.mark.long
def test_recording_twice_gives_identical_trace_files(tmp_path):
    for paradigm in ("ps-sync", "dgc"):
        files = []
        for i, hashseed in enumerate((3, 4)):
            path = tmp_path / f"{paradigm}{i}.npz"
            run(RECORD, paradigm, str(path), hashseed=hashseed)
            files.append(hashlib.sha256(path.read_bytes()).hexdigest())
        assert files[0] == files[1], paradigm
