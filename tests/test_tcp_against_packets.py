"""``transport="tcp"`` against the stored packet-level reference (benchmarks/tcp_reference.py).

The reference makespans come from an independent per-packet, per-ACK simulation
(``benchmarks/tcp_packet.py``); the acceptance is a median |error| <= 1 % and a
worst <= 10 % over the loss-free runs.
"""

import json
import os
import statistics
import sys

import pytest

BENCH = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "benchmarks")
sys.path.insert(0, BENCH)

import tcp_reference  # noqa: E402  (benchmarks/ is not a package)
from tcp_packet import simulate_packets  # noqa: E402


def _stored():
    with open(tcp_reference.DATA) as f:
        return json.load(f)


@pytest.mark.parametrize("index", [0, 1, 10, 15, 30])
def test_the_stored_reference_is_what_the_packet_simulator_gives(index):
    ref = _stored()
    row = ref["cases"][index]
    trace, hosts = tcp_reference.trace_of(row)
    end = simulate_packets(trace, hosts, ref["rates"][row["rate"]], ref["delay"], row["mtu"])
    assert float(end.max()) == row["makespan"]


def test_tcp_transport_is_within_1_percent_median_and_10_percent_worst():
    errs = tcp_reference.compare()
    assert len(errs["tcp"]) == len(_stored()["cases"]) >= 50
    assert statistics.median(errs["tcp"]) <= 0.01
    assert max(errs["tcp"]) <= 0.10
    # The fluid model alone is far off where TCP is still opening its window.
    assert max(errs["fluid"]) > 0.10
