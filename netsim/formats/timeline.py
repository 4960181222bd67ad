"""Timelines: a simulated run in the Chrome trace event format, for ui.perfetto.dev.

:func:`write_timeline` turns a trace and its :class:`~netsim.result.Result`
into a JSON file that `Perfetto <https://ui.perfetto.dev>`_ and
``chrome://tracing`` open (the *Trace Event Format*: a ``traceEvents`` list,
times in microseconds).

Layout
------
* **One process per rank**, named ``rank R (node)``, in rank order. Its
  threads hold that rank's slices: ``compute`` (compute ops), ``send`` (one
  slice per message the rank sends) and ``recv`` (one slice per message it
  receives). A message is therefore two slices: a send slice on its source
  rank and a receive slice on its destination rank, both from the moment the
  message is ready (its dependencies are done) to the moment its last byte
  arrives; ``args.wire_us`` says when its first byte left (after the path
  latency). Slices on one track must not overlap in this format (Perfetto
  drops partly overlapping ones), and a rank may send several messages at
  once, so concurrent slices of one kind go to extra lanes (``send 2``,
  ``send 3``, ...) instead: a lane never holds two slices that overlap.
* **One counter track per link direction** (``u->v``) in a process named
  ``links``: its utilisation (load / bandwidth, 0 to 1) from every change of
  its load (needs ``simulate(..., link_series=True)``; without the series no
  counters are written). The time-weighted mean of a counter over the
  makespan equals the link's ``mean_util`` in :attr:`Result.links`.
* **Iteration boundaries** as global instant events ``iteration K end`` at
  :attr:`Result.iteration_end`.

Times are rounded to whole nanoseconds (Perfetto's resolution), so a slice
that ends when the next one on its lane begins never overlaps it.
"""

import heapq
import json

import numpy as np

from netsim.errors import NetsimError
from netsim.trace.core import COMPUTE
from netsim.trace.ops import touches

__all__ = ["timeline_events", "write_timeline"]

_NS = 1e9


def _ns(seconds):
    return np.rint(np.asarray(seconds, np.float64) * _NS).astype(np.int64)


def _us(ns):
    return int(ns) / 1000.0


def _lanes(group, start, end):
    """Lane of each interval so that no two intervals of one lane and group overlap.

    Intervals are half-open ``[start, end)`` in integer nanoseconds; each
    goes to the lowest-numbered free lane of its group (the fewest lanes
    possible, as in interval partitioning).
    """
    n = len(group)
    lane = np.zeros(n, np.int64)
    if not n:
        return lane
    order = np.lexsort((end, start, group))
    g, s, e = group[order].tolist(), start[order].tolist(), end[order].tolist()
    busy, free, used, current = [], [], 0, None
    for k in range(n):
        if g[k] != current:
            current, busy, free, used = g[k], [], [], 0
        while busy and busy[0][0] <= s[k]:  # lanes whose last slice has ended
            heapq.heappush(free, heapq.heappop(busy)[1])
        if free:
            ln = heapq.heappop(free)
        else:
            ln, used = used, used + 1
        lane[order[k]] = ln
        heapq.heappush(busy, (e[k], ln))
    return lane


def _check(trace, result):
    if len(result.ops["start"]) != trace.num_ops:
        raise NetsimError(f"the result has {len(result.ops['start'])} ops but the trace has "
                          f"{trace.num_ops}: simulate this trace first")


def timeline_events(trace, result):
    """The Chrome trace events of a simulated run, one dict at a time.

    Parameters
    ----------
    trace : Trace
        The trace that was replayed.
    result : Result
        Its :func:`~netsim.result.simulate` result; with
        ``link_series=True`` for the link counters.

    Yields
    ------
    dict
        Metadata events (``ph`` ``"M"``: process and thread names and
        order), then complete events (``"X"``: ``cat`` ``"compute"``,
        ``"send"``, ``"recv"`` or ``"collective"`` (on every member, the call
        from its start to its end, named by op, library and algorithm), ``ts``
        and ``dur`` in microseconds,
        ``args.op`` the op's row in the trace), counter events (``"C"``:
        ``cat`` ``"link"``, ``args.util``) and iteration instants
        (``"i"``, ``cat`` ``"iteration"``).

    Raises
    ------
    NetsimError
        If the result is not of this trace.

    Examples
    --------
    >>> from netsim import TraceBuilder, simulate
    >>> import networkx as nx  # a star: hosts on one switch
    >>> G = nx.Graph()
    >>> G.add_nodes_from(["host0", "host1"], kind="host")
    >>> G.add_edges_from([(h, "switch") for h in list(G)], bandwidth=1e9, latency=1e-6)
    >>> b = TraceBuilder(2); _ = b.message(0, 1, 1e6)
    >>> tr = b.build()
    >>> r = simulate(tr, G, link_series=True)
    >>> ev = list(timeline_events(tr, r))
    >>> [(e["cat"], e["ts"], e["dur"]) for e in ev if e["ph"] == "X"]
    [('send', 0.0, 1002.0), ('recv', 0.0, 1002.0)]
    >>> sorted({e["name"] for e in ev if e["ph"] == "C"})
    ['host0->switch', 'host1->switch', 'switch->host0', 'switch->host1']
    """
    _check(trace, result)
    P = trace.ranks
    start, end = _ns(result.ops["start"]), _ns(result.ops["end"])
    wire = result.ops["transfer"]
    is_msg = trace.is_message
    comp = np.flatnonzero(trace.kind == COMPUTE)
    msg = np.flatnonzero(is_msg)
    c_ops, c_ranks = touches(trace)   # a collective shows on every member
    keep = trace.is_collective[c_ops]
    c_ops, c_ranks = c_ops[keep], c_ranks[keep]
    # Slices: (kind, rank, op). Kind 0 compute, 1 send, 2 recv, 3 collective: lane order.
    kinds = np.concatenate([np.zeros(len(comp), np.int64), np.ones(len(msg), np.int64),
                            np.full(len(msg), 2, np.int64), np.full(len(c_ops), 3, np.int64)])
    ops = np.concatenate([comp, msg, msg, c_ops])
    ranks = np.concatenate([trace.rank[comp], trace.rank[msg], trace.peer[msg],
                            c_ranks]).astype(np.int64)
    group = ranks * 4 + kinds
    lane = _lanes(group, start[ops], end[ops])
    # One thread per (rank, kind, lane), numbered in that order; tids unique in the file.
    nlanes = np.zeros(4 * P, np.int64)
    if len(group):
        np.maximum.at(nlanes, group, lane + 1)
    first_tid = np.concatenate([[1], 1 + np.cumsum(nlanes)])
    nodes = result.ranks["node"]
    names = ("compute", "send", "recv", "collective")
    for r in range(P):
        pid = r + 1
        yield {"ph": "M", "name": "process_name", "pid": pid, "tid": 0,
               "args": {"name": f"rank {r} ({nodes[r]})"}}
        yield {"ph": "M", "name": "process_sort_index", "pid": pid, "tid": 0,
               "args": {"sort_index": r}}
        for k in range(4):
            for ln in range(int(nlanes[4 * r + k])):
                tid = int(first_tid[4 * r + k] + ln)
                label = names[k] if ln == 0 else f"{names[k]} {ln + 1}"
                yield {"ph": "M", "name": "thread_name", "pid": pid, "tid": tid,
                       "args": {"name": label}}
                yield {"ph": "M", "name": "thread_sort_index", "pid": pid, "tid": tid,
                       "args": {"sort_index": tid}}
    links_pid = P + 1
    links_tid = int(first_tid[-1])
    yield {"ph": "M", "name": "process_name", "pid": links_pid, "tid": links_tid,
           "args": {"name": "links"}}
    yield {"ph": "M", "name": "process_sort_index", "pid": links_pid, "tid": links_tid,
           "args": {"sort_index": P}}
    # Slices, in time order. Columns become Python lists once: per-element numpy scalars
    # would dominate the loop for a million messages.
    tags = trace.tags
    order = np.lexsort((kinds, start[ops])).tolist()
    wire_ns = np.zeros(trace.num_ops, np.int64)
    wire_ns[msg] = _ns(wire[msg])
    start_l, end_l, wire_l = start.tolist(), end.tolist(), wire_ns.tolist()
    tag_l, iter_l, flops_l = trace.tag.tolist(), trace.iteration.tolist(), trace.flops.tolist()
    src_l, dst_l, size_l = trace.rank.tolist(), trace.peer.tolist(), trace.size.tolist()
    ops_l, kinds_l, ranks_l = ops.tolist(), kinds.tolist(), ranks.tolist()
    tid_l = (first_tid[group] + lane).tolist()
    c = result.collectives
    plan = {int(o): " ".join(x for x in (str(trace.specs.row(int(trace.spec[int(o)])).op),
                                          str(lib), str(alg)) if x and x != "none")
            for o, lib, alg in zip(c["op"], c["library"], c["algorithm"])}
    for k in order:
        op, kind = ops_l[k], kinds_l[k]
        s, e = start_l[op], end_l[op]
        tag = tags[tag_l[op]] if tag_l[op] >= 0 else ""
        args = {"op": op, "iteration": iter_l[op]}
        if kind == 0:
            name = tag or "compute"
            if flops_l[op]:
                args["flops"] = float(flops_l[op])
        elif kind == 3:
            name = plan.get(op, "collective") + (f" {tag}" if tag else "")
            args.update(bytes=float(size_l[op]))
        else:
            name = ("send" if kind == 1 else "recv") + (f" {tag}" if tag else "")
            args.update(src=src_l[op], dst=dst_l[op], bytes=float(size_l[op]),
                        wire_us=_us(wire_l[op]))
        yield {"ph": "X", "cat": names[kind], "name": name, "pid": ranks_l[k] + 1,
               "tid": tid_l[k], "ts": _us(s), "dur": _us(e - s), "args": args}
    # Link counters.
    series = result.link_series
    if series is not None:
        lk = result.links
        label = [f"{s}->{d}" for s, d in zip(lk["src"], lk["dst"])]
        when, link = _ns(series["time"]), series["link"]
        util = series["load"] / lk["bandwidth"][link]
        order = np.lexsort((when, link))
        bounds = np.searchsorted(link[order], np.arange(len(label) + 1)).tolist()
        when_l, util_l, order_l = when.tolist(), util.tolist(), order.tolist()
        for i, name in enumerate(label):
            rows = order_l[bounds[i]:bounds[i + 1]]
            if not rows or when_l[rows[0]] > 0:
                yield {"ph": "C", "cat": "link", "name": name, "pid": links_pid,
                       "tid": links_tid, "ts": 0.0, "args": {"util": 0.0}}
            for j in rows:
                yield {"ph": "C", "cat": "link", "name": name, "pid": links_pid,
                       "tid": links_tid, "ts": _us(when_l[j]), "args": {"util": util_l[j]}}
    # Iteration boundaries.
    for k, t in enumerate(_ns(result.iteration_end).tolist()):
        yield {"ph": "i", "s": "g", "cat": "iteration", "name": f"iteration {k} end",
               "pid": links_pid, "tid": links_tid, "ts": _us(t)}


def write_timeline(trace, result, path, progress=None):
    """Write a simulated run as a Chrome trace event JSON file (opens in ui.perfetto.dev).

    Events are written one by one, so a run of millions of messages never
    becomes one big list in memory. See the module docstring for the layout.

    Parameters
    ----------
    trace : Trace
        The trace that was replayed.
    result : Result
        Its result; ``simulate(..., link_series=True)`` for link counters.
    path : str or path-like
        The ``.json`` file to write.
    progress : callable, optional
        Called as ``progress(events_written)`` every 10,000 events and at the
        end (see :class:`netsim.progress.Progress`).

    Returns
    -------
    dict
        Counts of what was written: ``events`` (all), ``slices`` (compute,
        send and receive), ``messages`` (one per message: its send slice),
        ``counters`` (counter samples), ``links`` (counter tracks) and
        ``iterations`` (instants).

    Raises
    ------
    NetsimError
        If the result is not of this trace, or the file cannot be written.

    Examples
    --------
    >>> import json, os, tempfile
    >>> from netsim import TraceBuilder, simulate
    >>> import networkx as nx  # a star: hosts on one switch
    >>> G = nx.Graph()
    >>> G.add_nodes_from(["host0", "host1"], kind="host")
    >>> G.add_edges_from([(h, "switch") for h in list(G)], bandwidth=1e9, latency=1e-6)
    >>> b = TraceBuilder(2); c = b.compute(0, seconds=1e-3); _ = b.message(0, 1, 1e6, deps=[c])
    >>> tr = b.build()
    >>> r = simulate(tr, G, link_series=True)
    >>> p = os.path.join(tempfile.mkdtemp(), "run.json")
    >>> counts = write_timeline(tr, r, p)
    >>> counts["slices"], counts["messages"], counts["links"]
    (3, 1, 4)
    >>> len(json.load(open(p))["traceEvents"]) == counts["events"]
    True
    """
    _check(trace, result)
    counts = {"events": 0, "slices": 0, "messages": 0, "counters": 0, "links": 0,
              "iterations": 0}
    tracks = set()
    other = {"generator": "netsim", "makespan_s": float(result.makespan), "ranks": trace.ranks,
             "messages": trace.num_messages, "time_unit": "us"}
    try:
        with open(path, "w") as f:
            f.write('{"otherData": ' + json.dumps(other) + ',\n"traceEvents": [\n')
            sep = ""
            for ev in timeline_events(trace, result):
                f.write(sep + json.dumps(ev, separators=(",", ":")))
                sep = ",\n"
                counts["events"] += 1
                ph = ev["ph"]
                if ph == "X":
                    counts["slices"] += 1
                    counts["messages"] += ev["cat"] == "send"
                elif ph == "C":
                    counts["counters"] += 1
                    tracks.add(ev["name"])
                elif ph == "i":
                    counts["iterations"] += 1
                if progress is not None and counts["events"] % 10_000 == 0:
                    progress(counts["events"])
            f.write("\n]}\n")
        if progress is not None:
            progress(counts["events"])
    except OSError as exc:
        raise NetsimError(f"cannot write {path}: {exc.strerror or exc}") from None
    counts["links"] = len(tracks)
    return counts
