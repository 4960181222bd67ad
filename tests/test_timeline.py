"""Timelines in the Chrome trace event format: events match the simulated result."""

import json
from collections import defaultdict

import numpy as np
import pytest

import workloads
from netsim import NetsimError, TraceBuilder, save_trace, simulate
from studies.cli.parser import main
from netsim.comm.collectives import ring_allreduce
from netsim.formats.timeline import timeline_events, write_timeline
from topologies import star, two_tier

US = 1e6
TOL_US = 1e-3  # times are written to the nanosecond


def load(path):
    doc = json.loads(path.read_text())
    return doc, doc["traceEvents"]


def slices(events, cat):
    return [e for e in events if e["ph"] == "X" and e["cat"] == cat]


def check_against_result(trace, result, events):
    """Every op's slices sit on the right ranks at the simulated start and end times."""
    start, end = result.ops["start"], result.ops["end"]
    by_op = defaultdict(list)
    for e in events:
        if e["ph"] == "X":
            by_op[e["args"]["op"]].append(e)
    msg = trace.is_message
    assert len(slices(events, "send")) == len(slices(events, "recv")) == trace.num_messages
    assert len(slices(events, "compute")) == int((~msg).sum())
    for op in range(trace.num_ops):
        evs = by_op[op]
        assert len(evs) == (2 if msg[op] else 1)
        for e in evs:
            assert e["ts"] == pytest.approx(start[op] * US, abs=TOL_US)
            assert e["ts"] + e["dur"] == pytest.approx(end[op] * US, abs=TOL_US)
            rank = trace.peer[op] if e["cat"] == "recv" else trace.rank[op]
            assert e["pid"] == rank + 1
    # Iteration boundaries.
    marks = [e for e in events if e["ph"] == "i"]
    assert [e["ts"] for e in marks] == pytest.approx(list(result.iteration_end * US), abs=TOL_US)


def check_lanes(events):
    """No two slices of one track overlap (Perfetto drops partly overlapping ones)."""
    tracks = defaultdict(list)
    for e in events:
        if e["ph"] == "X":
            ns = round(e["ts"] * 1000), round((e["ts"] + e["dur"]) * 1000)
            tracks[e["pid"], e["tid"]].append(ns)
    for spans in tracks.values():
        spans.sort()
        for (s0, e0), (s1, e1) in zip(spans, spans[1:]):
            assert s1 >= e0


def check_counters(result, events):
    """One counter track per link direction; its time-weighted mean is the link's mean_util."""
    lk = result.links
    names = [f"{s}->{d}" for s, d in zip(lk["src"], lk["dst"])]
    series = defaultdict(list)
    for e in events:
        if e["ph"] == "C":
            series[e["name"]].append((e["ts"], e["args"]["util"]))
    assert sorted(series) == sorted(names)
    span = result.makespan * US
    for name, want in zip(names, lk["mean_util"]):
        pts = sorted(series[name], key=lambda p: p[0])  # stable: same-time samples keep order
        t = np.array([p[0] for p in pts] + [span])
        u = np.array([p[1] for p in pts])
        assert u.min() >= 0 and u.max() <= 1 + 1e-9
        mean = float((u * np.diff(t)).sum() / span)
        assert mean == pytest.approx(want, rel=1e-6, abs=1e-9), name


def test_ring_allreduce_timeline(tmp_path):
    P = 8
    trace = ring_allreduce(P, 8e6)
    result = simulate(trace, star(P, bandwidth=1.25e9, latency=1e-6), link_series=True)
    path = tmp_path / "ring.json"
    counts = write_timeline(trace, result, path)
    doc, events = load(path)
    assert len(events) == counts["events"]
    # A message event is one per message: its send slice (its receive slice is the other half).
    assert counts["messages"] == len(slices(events, "send")) == 2 * (P - 1) * P
    assert len(slices(events, "recv")) == 2 * (P - 1) * P
    check_against_result(trace, result, events)
    check_lanes(events)
    check_counters(result, events)
    assert counts["links"] == len(result.links["bytes"])
    names = {e["args"]["name"] for e in events if e["ph"] == "M" and e["name"] == "process_name"}
    assert {f"rank {r} (host{r})" for r in range(P)} <= names and "links" in names
    assert doc["otherData"]["makespan_s"] == result.makespan


def test_recorded_paradigm_timeline_with_compute_iterations_and_contention(tmp_path):
    # A parameter server behind an oversubscribed two-tier network: compute ops, several
    # iterations, pushes that overlap on one rank (extra lanes) and shared links.
    run = workloads.record("ps-sync", workers=4, epochs=1)
    trace = run.trace
    G = two_tier(trace.ranks, per_rack=2, bandwidth=1e8, uplink_bandwidth=5e7)
    result = simulate(trace, G, link_series=True)
    path = tmp_path / "ps.json"
    counts = write_timeline(trace, result, path)
    _, events = load(path)
    assert counts["iterations"] == trace.num_iterations > 1
    check_against_result(trace, result, events)
    check_lanes(events)
    check_counters(result, events)
    server = trace.ranks  # pid of the last rank (the server): it receives P pushes at once
    lanes = {e["tid"] for e in slices(events, "recv") if e["pid"] == server}
    assert len(lanes) > 1


def test_without_link_series_no_counters_and_mismatch_is_an_error():
    b = TraceBuilder(2)
    c = b.compute(0, seconds=1e-3)
    b.message(0, 1, 1e6, deps=[c])
    trace = b.build()
    result = simulate(trace, star(2, bandwidth=1e9, latency=0.0))
    events = list(timeline_events(trace, result))
    assert not [e for e in events if e["ph"] == "C"]
    assert [e["name"] for e in events if e["ph"] == "X"] == ["compute", "send", "recv"]
    with pytest.raises(NetsimError, match="simulate this trace first"):
        list(timeline_events(ring_allreduce(2, 1e6), result))


def test_cli_replay_timeline(tmp_path, capsys):
    trace_path = tmp_path / "ring.npz"
    save_trace(ring_allreduce(4, 1e6), trace_path)
    out = tmp_path / "tl.json"
    argv = ["replay", str(trace_path), "--topology", "star:n=4,bandwidth=10Gbps,latency=1us",
            "--timeline", str(out)]
    assert main(argv + ["--json"]) == 0
    cap = capsys.readouterr()
    result = json.loads(cap.out)  # stdout stays machine-readable
    assert "wrote" in cap.err and "ui.perfetto.dev" in cap.err
    _, events = load(out)
    assert len(slices(events, "send")) == 2 * 3 * 4
    assert max(e["ts"] + e.get("dur", 0) for e in events if "ts" in e) == pytest.approx(
        result["makespan"] * US, abs=TOL_US)
    assert main(argv + ["--quiet"]) == 0
    cap = capsys.readouterr()
    assert cap.err == "" and "makespan" in cap.out


def test_cli_replay_timeline_unwritable(tmp_path, capsys):
    trace_path = tmp_path / "ring.npz"
    save_trace(ring_allreduce(2, 1e6), trace_path)
    assert main(["replay", str(trace_path), "--topology", "star:n=2",
                 "--timeline", str(tmp_path / "missing" / "tl.json")]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and err.startswith("netsim: error: cannot write"), err
