"""`--timeline-format kineto`: a simulated run as PyTorch profiler traces, read as HTA reads them.

HolisticTraceAnalysis' temporal breakdown (hta/analyzers/breakdown_analysis.py,
`get_temporal_breakdown`) takes a rank's GPU kernels (events with a stream), its span from the
first kernel's start to the last one's end, idle = span - the union of all kernels, compute =
the union of the kernels whose name is not communication (`^nccl`, ...) nor memory, and
non-compute = the rest. The first tests work that rule by hand on the written files; the last
runs HTA itself (`pip install netsim[hta]`; skipped without it). Both must give netsim's
per-rank compute, exposed communication and idle (over the rank's span) within 1 % of the span.
"""

import json
import os
import re

import numpy as np
import pytest

import netsim
from netsim.formats.kineto.timeline import write_kineto
from topologies import star


def _star(P, bandwidth):
    return star(P, bandwidth=bandwidth, latency=5e-5)


def _overlap():
    """Three ranks, two iterations: rank 0 computes 10 ms while sending 2 MB to rank 1 (the
    send overlaps the compute), rank 1 waits for it then computes 3 ms, rank 2 starts a 4 MB
    allreduce with rank 0 after 1 ms of compute; then the same again."""
    b = netsim.TraceBuilder(3)
    prev = {0: [], 1: [], 2: []}
    for it in range(2):
        c0 = b.compute(0, seconds=10e-3, deps=prev[0], iteration=it, tag="fwd")
        m = b.message(0, 1, 2e6, deps=prev[0], iteration=it)
        c1 = b.compute(1, seconds=3e-3, deps=[m] + prev[1], iteration=it, tag="bwd")
        c2 = b.compute(2, seconds=1e-3, deps=prev[2], iteration=it)
        a = b.collective("allreduce", [0, 2], 4e6, deps=[c0, c2], iteration=it)
        prev = {0: [a], 1: [c1], 2: [a]}
    return b.build(), _star(3, 1.25e9)


def _parameter_server():
    from workloads.paradigms import ps_sync

    # Slow links and devices (below) make every op last milliseconds: HTA keeps whole us.
    return ps_sync.run(epochs=1).trace, _star(5, 1.25e5)


CASES = {"overlap": _overlap, "parameter server": _parameter_server}


def _union(intervals):
    total, end = 0.0, -np.inf
    for s, e in sorted(intervals):
        if e > end:
            total += e - max(s, end)
            end = e
    return total


def _by_hand(path):
    """HTA's temporal-breakdown rule on one written file: (idle, compute, non-compute, span)
    in microseconds, and the kernels of each stream."""
    events = json.load(open(path))["traceEvents"]
    k = [e for e in events if e.get("cat") == "kernel"]
    every = [(e["ts"], e["ts"] + e["dur"]) for e in k]
    comp = [(e["ts"], e["ts"] + e["dur"]) for e in k if not e["name"].startswith("nccl")]
    span = max(e for _, e in every) - min(s for s, _ in every)
    busy = _union(every)
    streams = {}
    for e in k:
        streams.setdefault(e["args"]["stream"], []).append((e["ts"], e["ts"] + e["dur"]))
    return (span - busy, _union(comp), busy - _union(comp), span), streams


def _netsim(trace, result, r):
    """netsim's split of rank r over its own span (first op start to last op end), in us."""
    from netsim.formats.kineto.timeline import kernels

    k = kernels(trace, result)
    mine = k["rank"] == r
    span = (k["end"][mine].max() - k["start"][mine].min()) * 1e6
    busy = (result.makespan - result.ranks["idle"][r]) * 1e6
    return (span - busy, result.ranks["compute"][r] * 1e6,
            result.ranks["exposed_communication"][r] * 1e6, span)


@pytest.mark.parametrize("name", CASES)
def test_files_by_htas_rule_give_netsims_split(name, tmp_path):
    trace, G = CASES[name]()
    result = netsim.simulate(trace, G, device_flops=1e6)
    paths = write_kineto(trace, result, tmp_path)
    assert [os.path.basename(p) for p in paths] == [f"rank{r}.json" for r in range(trace.ranks)]
    for r, path in enumerate(paths):
        text = open(path).read()
        assert int(re.search(r'"rank":\s+(\d+)', text).group(1)) == r   # HTA's rank lookup
        got, streams = _by_hand(path)
        want = _netsim(trace, result, r)
        assert got == pytest.approx(want, abs=1e-3)      # us, written with 3 decimals
        for spans in streams.values():                    # a stream runs one kernel at a time
            spans.sort()
            assert all(a[1] <= b[0] + 1e-9 for a, b in zip(spans, spans[1:]))
        steps = [e for e in json.loads(text)["traceEvents"]
                 if e["name"].startswith("ProfilerStep#")]
        assert len(steps) == trace.num_iterations


def test_overlap_case_has_overlap_and_idle(tmp_path):
    """The hand-built case exercises every term: rank 0's send overlaps its compute (exposed
    communication below communication), rank 1 waits (idle within its span)."""
    trace, G = _overlap()
    result = netsim.simulate(trace, G)
    r = result.ranks
    assert r["exposed_communication"][0] < r["communication"][0]
    assert _netsim(trace, result, 1)[0] > 1e3     # rank 1 idles more than 1 ms in its span


@pytest.mark.parametrize("name", CASES)
def test_hta_temporal_breakdown_equals_netsims_split(name, tmp_path):
    pytest.importorskip("hta", reason="HolisticTraceAnalysis: pip install netsim[hta]")
    from hta.trace_analysis import TraceAnalysis

    trace, G = CASES[name]()
    result = netsim.simulate(trace, G, device_flops=1e6)
    write_kineto(trace, result, tmp_path)
    hta = TraceAnalysis(trace_dir=str(tmp_path), include_last_profiler_step=True)
    df = hta.get_temporal_breakdown(visualize=False).set_index("rank")
    assert sorted(df.index) == list(range(trace.ranks))
    for r in range(trace.ranks):
        idle, compute, exposed, span = _netsim(trace, result, r)
        row = df.loc[r]
        # HTA rounds event times down to whole microseconds: within 1 % of the span.
        assert row["kernel_time(us)"] == pytest.approx(span, abs=0.01 * span)
        assert row["idle_time(us)"] == pytest.approx(idle, abs=0.01 * span)
        assert row["compute_time(us)"] == pytest.approx(compute, abs=0.01 * span)
        assert row["non_compute_time(us)"] == pytest.approx(exposed, abs=0.01 * span)


def test_replay_writes_one_file_per_rank_and_refuses_a_format_without_a_path(tmp_path, capsys):
    from netsim import save_trace
    from studies.cli.parser import main

    trace, _ = _overlap()
    save_trace(trace, tmp_path / "t.npz")
    out = tmp_path / "run"
    assert main(["replay", str(tmp_path / "t.npz"), "--topology", "star", "--timeline", str(out),
                 "--timeline-format", "kineto", "--quiet"]) == 0
    assert sorted(os.listdir(out)) == ["rank0.json", "rank1.json", "rank2.json"]
    capsys.readouterr()
    assert main(["replay", str(tmp_path / "t.npz"), "--topology", "star",
                 "--timeline-format", "kineto"]) == 2
    assert "--timeline-format kineto needs --timeline DIR" in capsys.readouterr().err
