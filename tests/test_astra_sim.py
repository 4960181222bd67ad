"""netsim's exported Chakra traces run in ASTRA-sim's analytical backend.

Runs when ``NETSIM_ASTRA_SIM`` names ``AstraSim_Analytical_Congestion_Unaware`` built by
``tests/astra_sim/build.sh`` (skipped otherwise); the congestion-aware binary beside it is run
too when present (its figures differ by design, tested with their own closed forms). The
reference for the ring is an independent simulator: ASTRA-sim's own
analytical network on a switch with netsim's link bandwidth and latency
(``tests/astra_sim/astra.py`` says how the two networks are made equal). Both should also meet
the ring's closed form, 2 (P - 1) steps of (2 latencies + n / (P bandwidth)) on a star.
"""

import os
import sys

import pytest

pytest.importorskip("netsim.formats.et_def_pb2", reason="Chakra traces need the protobuf package")
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "astra_sim"))

import astra  # noqa: E402

BINARY = os.environ.get("NETSIM_ASTRA_SIM", "")
pytestmark = pytest.mark.skipif(
    not os.path.isfile(BINARY),
    reason="set NETSIM_ASTRA_SIM to AstraSim_Analytical_Congestion_Unaware "
           "(tests/astra_sim/build.sh)")


def _aware():
    path = os.path.join(os.path.dirname(BINARY), astra.BINARIES["aware"])
    return path if os.path.isfile(path) else None


def test_the_ring_agrees_with_netsim_within_one_percent(tmp_path):
    P, n = 8, 64e6
    trace = astra.ring_allreduce(P, n)
    ours = astra.netsim_makespan(trace)
    step = 2 * astra.LATENCY + n / P / astra.BANDWIDTH      # a message crosses two links
    assert ours == pytest.approx(2 * (P - 1) * step, rel=1e-9)
    finish = astra.run_astra(BINARY, trace, str(tmp_path / "unaware"))
    assert max(finish) == pytest.approx(ours, rel=0.01)
    assert min(finish) >= max(finish) - step    # every rank ends in the last step


@pytest.mark.skipif(_aware() is None, reason="no congestion-aware binary beside NETSIM_ASTRA_SIM")
def test_the_congestion_aware_backend_stores_and_forwards_whole_messages(tmp_path):
    """Its links pass a message on only once it has arrived whole (``Link::
    schedule_chunk_transmission``: each link takes latency + size / bandwidth), so a ring step
    costs two serialisations, not one: 2 (P - 1) x 2 (latency + n / (P bandwidth))."""
    P, n = 8, 64e6
    finish = astra.run_astra(_aware(), astra.ring_allreduce(P, n), str(tmp_path))
    expected = 2 * (P - 1) * 2 * (astra.LATENCY + n / P / astra.BANDWIDTH)
    assert max(finish) == pytest.approx(expected, rel=0.01)


def test_the_parameter_server_runs_with_one_send_at_a_time_per_npu(tmp_path):
    """ASTRA-sim lets an NPU have one communication node in flight, receives excepted
    (``HardwareResource::is_available``), so the server's pulls go one after another: per
    iteration one push and then W pulls, each 2 latencies + s / bandwidth (compute: 1 ns a
    node, as the ops carry FLOPs and no duration). netsim sends the W pulls together."""
    trace = astra.traces()["parameter server (ps-sync)"]
    sizes = {float(trace.size[i]) for i in range(trace.num_ops) if trace.is_message[i]}
    assert len(sizes) == 1
    (s,) = sizes
    workers = trace.ranks - 1
    iterations = len({int(i) for i in trace.iteration})
    message = 2 * astra.LATENCY + s / astra.BANDWIDTH
    finish = astra.run_astra(BINARY, trace, str(tmp_path))
    assert max(finish) == pytest.approx(iterations * (1 + workers) * message, rel=0.01)


@pytest.mark.parametrize("name", ["parameter server (ps-sync)",
                                  "imported profile (HTA A100 DDP)"])
def test_a_recorded_and_an_imported_trace_run_to_the_end(name, tmp_path):
    trace = astra.traces()[name]
    for kind in [BINARY, _aware()]:
        if kind:
            finish = astra.run_astra(kind, trace, str(tmp_path / os.path.basename(kind)))
            assert len(finish) == trace.ranks and min(finish) > 0   # run_astra raises on failure
