"""HTA's temporal breakdown of every kind of timeline netsim writes equals netsim's own figures.

HolisticTraceAnalysis 0.5.0 (``pip install netsim[hta]``; skipped without it) reads the
``--timeline-format kineto`` directory of: a collective replayed as its ring's messages (64
kernels per rank, where ids 1..N broke HTA under pandas 3: netsim.formats.kineto.timeline),
a paradigm, a transformer under TP, PP, DP and sequence parallelism, and an imported profile
(tests/test_kineto_timeline_streams.py). Per rank, HTA's kernel time, idle, compute and
non-compute time are set against netsim's span, idle (within the span), compute and exposed
communication (:attr:`Result.ranks`, tests/test_kineto_timeline.py's ``_netsim``).

HTA reads times written with nanosecond decimals by rounding each kernel's start up and its
end down to whole microseconds (``round_down_time_stamps``, hta/common/trace_parser.py;
PyTorch #122425), so each figure moves by less than 2 us per kernel; a kernel shorter than a
microsecond that crosses no whole microsecond ends before it starts, and HTA's breakdown then
fails its own assertions (``non_compute_time >= 0``, hta/analyzers/breakdown_analysis.py).
With ``HTA_DISABLE_NS_ROUNDING=1`` (HTA's own switch) it keeps the written times, and the
figures agree to the file's 1 ns writing, on microsecond-scale runs too.
"""

import json

import pytest

import netsim
from netsim.comm.collectives import ring_allreduce
from netsim.formats.kineto.timeline import write_kineto
from topologies import star

pytest.importorskip("hta", reason="HolisticTraceAnalysis: pip install netsim[hta]")
from hta.trace_analysis import TraceAnalysis  # noqa: E402

from test_kineto_timeline import _netsim  # noqa: E402


def _ring():
    return ring_allreduce(17, 64e6), star(17, bandwidth=1.25e10, latency=1e-6), None


def _paradigm():
    from workloads.paradigms import ps_sync

    return ps_sync.run(epochs=1).trace, star(5, bandwidth=1.25e10, latency=1e-6), 1e9


def _transformer():
    from workloads.transformer import schedule
    from workloads.transformer.flops import Config

    c = Config(4, 256, 4, 128, 1000, micro_batch=1, global_batch=8)
    trace = schedule(c, tp=2, pp=2, dp=2, sequence_parallel=True, device_flops=1e13)
    return trace, star(8, bandwidth=1.25e10, latency=1e-6), None


CASES = {"ring of 17 ranks": _ring, "paradigm (ps-sync)": _paradigm,
         "transformer TP2 PP2 DP2 SP": _transformer}


def _breakdown(directory):
    hta = TraceAnalysis(trace_dir=str(directory), include_last_profiler_step=True)
    return hta.get_temporal_breakdown(visualize=False).set_index("rank")


def _kernels(path):
    return sum(e.get("cat") == "kernel" for e in json.load(open(path))["traceEvents"])


@pytest.mark.parametrize("rounding", [False, True], ids=["exact", "hta-rounding"])
@pytest.mark.parametrize("name", CASES)
def test_hta_breakdown_equals_netsims_figures(name, rounding, tmp_path, monkeypatch):
    trace, G, flops = CASES[name]()
    result = netsim.simulate(trace, G, device_flops=flops)
    paths = write_kineto(trace, result, tmp_path)
    monkeypatch.setenv("HTA_DISABLE_NS_ROUNDING", "0" if rounding else "1")
    df = _breakdown(tmp_path)
    assert sorted(df.index) == list(range(trace.ranks))
    for r, path in enumerate(paths):
        idle, compute, exposed, span = _netsim(trace, result, r)
        k = _kernels(path)
        tol = 2.0 * k if rounding else 1e-3 * k     # us: HTA's rounding, or the file's 1 ns
        row = df.loc[r]
        assert row["kernel_time(us)"] == pytest.approx(span, abs=2.0 if rounding else 1e-3)
        assert row["idle_time(us)"] == pytest.approx(idle, abs=tol)
        assert row["compute_time(us)"] == pytest.approx(compute, abs=tol)
        assert row["non_compute_time(us)"] == pytest.approx(exposed, abs=tol)


def test_the_ring_has_between_64_and_127_kernels_per_rank(tmp_path):
    """The case HTA refused before the correlation ids started above the event count."""
    trace, G, _ = _ring()
    paths = write_kineto(trace, netsim.simulate(trace, G), tmp_path)
    assert all(64 <= _kernels(p) <= 127 for p in paths)
    events = json.load(open(paths[0]))["traceEvents"]
    ids = [e["args"]["correlation"] for e in events if e.get("cat") == "kernel"]
    assert min(ids) > len(events) and len(set(ids)) == len(ids)
