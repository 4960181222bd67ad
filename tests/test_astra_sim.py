"""netsim's exported Chakra traces run in ASTRA-sim's analytical backend.

Runs when ``NETSIM_ASTRA_SIM`` names ``AstraSim_Analytical_Congestion_Unaware`` built by
``tests/astra_sim/build.sh``, or several such paths joined by ``os.pathsep`` (one per ASTRA-sim
commit: c459ab6 and 518bd51); skipped otherwise. The congestion-aware binary beside the first
is run too when present (its figures differ by design, tested with their own closed forms).
The reference is an independent simulator: ASTRA-sim's own analytical network on a switch with
netsim's link bandwidth and latency (``tests/astra_sim/astra.py`` says how the two networks
are made equal and which of ASTRA-sim's rules netsim's matched replay follows). Every case of
``astra.CASES`` must agree within 1 % in every build; the ring and the all-to-all also meet
their closed forms, 2 (P - 1) steps of (2 latencies + n / (P bandwidth)) and P - 1 such steps.
"""

import os
import sys

import pytest

pytest.importorskip("netsim.formats.et_def_pb2", reason="Chakra traces need the protobuf package")
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "astra_sim"))

import astra  # noqa: E402

BINARIES = [b for b in os.environ.get("NETSIM_ASTRA_SIM", "").split(os.pathsep) if b]
BINARY = BINARIES[0] if BINARIES else ""
pytestmark = pytest.mark.skipif(
    not BINARIES or not all(os.path.isfile(b) for b in BINARIES),
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
    trace = astra.CASES["paradigm: parameter server (ps-sync)"]()
    sizes = {float(trace.size[i]) for i in range(trace.num_ops) if trace.is_message[i]}
    assert len(sizes) == 1
    (s,) = sizes
    workers = trace.ranks - 1
    iterations = len({int(i) for i in trace.iteration})
    message = 2 * astra.LATENCY + s / astra.BANDWIDTH
    finish = astra.run_astra(BINARY, trace, str(tmp_path))
    assert max(finish) == pytest.approx(iterations * (1 + workers) * message, rel=0.01)


@pytest.mark.parametrize("name", [n for n in astra.CASES if n not in astra.NOT_HELD])
def test_every_case_agrees_with_netsims_matched_replay_within_one_percent(name, tmp_path):
    trace = astra.CASES[name]()
    ours = astra.netsim_matched(trace)
    for k, binary in enumerate(BINARIES):
        finish = astra.run_astra(binary, trace, str(tmp_path / str(k)))
        assert len(finish) == trace.ranks and min(finish) > 0   # run_astra raises on failure
        assert max(finish) == pytest.approx(ours, rel=0.01), binary


def test_a_ring_entered_at_different_times_runs_ahead_in_astra_sim(tmp_path):
    """No rendezvous in ASTRA-sim's ring (astra.NOT_HELD): ranks that entered send before the
    last one has, so each allreduce ends sooner than netsim's, which waits for every member
    (2 (P - 1) steps after the last rank's 1 ms of compute), but no sooner than P - 1 steps
    after it: the last rank's own chunk still has to reach every rank."""
    P, n, iterations = 4, 4e6, 3
    trace = astra.CASES["compute in seconds, ranks skewed"]()
    step = 2 * astra.LATENCY + n / P / astra.BANDWIDTH
    ours = astra.netsim_matched(trace)
    assert ours == pytest.approx(iterations * (1e-3 + 2 * (P - 1) * step), rel=1e-6)
    for k, binary in enumerate(BINARIES):
        theirs = max(astra.run_astra(binary, trace, str(tmp_path / str(k))))
        assert iterations * (1e-3 + (P - 1) * step) <= theirs < ours, binary


def test_all_to_all_sends_one_block_at_a_time():
    """``direct1`` (system.json): ASTRA-sim's AllToAll with a window of one block sends rank
    r's blocks to r + 1, r + 2, ... one after another, as MPICH's pairwise exchange: P - 1
    steps of 2 latencies + n / (P bandwidth) on the contention-free graph."""
    P, n = 8, 64e6
    trace = astra.CASES["all-to-all 8 x 64 MB"]()
    step = 2 * astra.LATENCY + n / P / astra.BANDWIDTH
    assert astra.netsim_matched(trace) == pytest.approx((P - 1) * step, rel=1e-9)


def test_the_aware_backend_runs_every_case_to_the_end(tmp_path):
    if _aware() is None:
        pytest.skip("no congestion-aware binary beside NETSIM_ASTRA_SIM")
    for name, make in astra.CASES.items():
        trace = make()
        finish = astra.run_astra(_aware(), trace, str(tmp_path / str(len(name))))
        assert len(finish) == trace.ranks and min(finish) > 0, name
