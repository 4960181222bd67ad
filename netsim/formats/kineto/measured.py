"""A replay set against the run it came from: per-rank steps and per-collective kernel times.

An imported profile (:func:`netsim.formats.kineto.load.load_kineto`) carries what the
machine measured: each recorded rank's step times
(``metadata["measured_rank_step_times"]``) and each collective's kernel time on
every recorded member (``metadata["measured_collectives"]``, parallel to
``metadata["collectives"]``). :func:`compare` puts the replay beside them.

A measured collective kernel starts when its rank launched it and ends when
the data has moved, so it includes waiting for late peers; its minimum over
ranks and calls is the closest the profile comes to the transfer alone, and
the simulated time (from when the last member was ready to the call's end,
``Result.collectives``) is compared with that minimum.
"""

import numpy as np

from netsim.errors import TraceError
from netsim.formats.kineto.step_split import PARTS, replayed_split
from netsim.trace.core import HOST_GAP

__all__ = ["compare"]


def _mean_parts(per_step, keep):
    """Mean of each part over the compared steps (None where a step's part is unknown)."""
    a = np.array([[np.nan if x is None else x for x in row] for row in per_step], float)
    a = a.reshape(-1, len(PARTS))
    if keep is not None:
        a = a[[i for i in keep if i < len(a)]]
    if not len(a):
        return None
    return {p: (None if np.isnan(v) else float(v)) for p, v in zip(PARTS, a.mean(axis=0))}


def _add_split(rows, measured, replayed, keep):
    """Each rank row's ``split``: the parts of its step, measured and replayed."""
    for row in rows:
        m = (measured or {}).get("ranks", {}).get(str(row["rank"]))
        row["split"] = {"measured": None if m is None else _mean_parts(m, keep),
                        "replayed": _mean_parts(replayed[row["rank"]].tolist(), keep)}


def _rank_steps(trace, result):
    """rank -> replayed seconds of each iteration: its last op's end minus its previous one's."""
    niter = max(trace.num_iterations, 1)
    ends = np.zeros((trace.ranks, niter))
    np.maximum.at(ends, (trace.rank, trace.iteration), result.ops["end"])
    for op in np.flatnonzero(trace.spec >= 0):     # a collective ends on every member
        for g in trace.specs.group(int(trace.spec[op])):
            ends[g, trace.iteration[op]] = max(ends[g, trace.iteration[op]], result.ops["end"][op])
    ends = np.maximum.accumulate(ends, axis=1)
    return np.diff(np.concatenate([np.zeros((trace.ranks, 1)), ends], axis=1), axis=1)


def compare(trace, result):
    """Measured against replayed, per rank and per collective class (operation, bytes).

    Parameters
    ----------
    trace : Trace
        An imported profile (its metadata holds the measurements).
    result : Result
        Its replay (:func:`netsim.result.simulate`).

    Returns
    -------
    dict
        ``ranks``: one row per recorded rank: ``rank``, ``measured`` and
        ``replayed`` (mean step, seconds, over the steps the import compares:
        ``metadata["compared_steps"]``, :mod:`netsim.formats.kineto.steps`), ``error`` (replayed / measured - 1),
        ``compute`` and ``host_gaps`` (seconds per step of the rank's kernels
        and of its idle gaps kept as host time, the same in both), ``split``
        (``measured`` and ``replayed``: the mean over the compared steps of
        each part of :data:`netsim.formats.kineto.step_split.PARTS`, the rank's GPU span of
        the step and its compute, exposed communication, waiting and host
        gaps, :mod:`netsim.formats.kineto.step_split`; ``measured`` None for a trace
        imported without it, its waiting None where the profile cannot tell); ``steps``:
        median and worst absolute error over ranks; ``collectives``: one row
        per class: ``kind``, ``bytes``, ``calls``, ``measured_min`` and
        ``measured_median`` (kernel seconds over ranks and calls),
        ``simulated`` (median seconds), ``error`` (simulated / measured_min
        - 1), ``plan``.

    Raises
    ------
    TraceError
        For a trace without the measurements of an imported profile.

    Examples
    --------
    >>> import json, os, tempfile
    >>> import networkx as nx
    >>> from netsim.formats.kineto.load import load_kineto
    >>> from netsim.result import simulate
    >>> ar = {"Collective name": "allreduce", "In msg nelems": 250000, "Out msg nelems": 250000,
    ...       "dtype": "Float", "Group size": 2, "Process Group Ranks": "[0, 1]"}
    >>> k = lambda name, ts, dur, **a: {"ph": "X", "cat": "kernel", "name": name, "ts": ts,
    ...                                 "dur": dur, "args": {"stream": 7, **a}}
    >>> step = {"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#1", "ts": 0, "dur": 200}
    >>> d = tempfile.mkdtemp()
    >>> for r in (0, 1):
    ...     doc = {"distributedInfo": {"rank": r, "world_size": 2},
    ...            "traceEvents": [step, k("gemm", 0, 100), k("nccl", 100, 100, **ar)]}
    ...     _ = open(os.path.join(d, f"r{r}.json"), "w").write(json.dumps(doc))
    >>> t = load_kineto(d)
    >>> G = nx.Graph([("gpu0", "sw", {"bandwidth": 10e9, "latency": 0.0}),
    ...               ("gpu1", "sw", {"bandwidth": 10e9, "latency": 0.0})])
    >>> nx.set_node_attributes(G, {"gpu0": "gpu", "gpu1": "gpu", "sw": "switch"}, "kind")
    >>> c = compare(t, simulate(t, G, library="mpich"))   # ring: 2 (P-1) n / (P B) = 100 us
    >>> [round(x["replayed"] * 1e6) for x in c["ranks"]], c["collectives"][0]["bytes"]
    ([200, 200], 1000000.0)
    """
    md = trace.metadata
    steps = md.get("measured_rank_step_times")
    if not steps or "measured_collectives" not in md:
        raise TraceError("the trace holds no measurements to compare with (import a PyTorch "
                         "profile with netsim import kineto)")
    replayed = _rank_steps(trace, result)
    niter = max(trace.num_iterations, 1)
    # The steps compared are the import's (netsim.formats.kineto.steps: the selected ones, else the
    # steady ones), the same the replay summary compares; all for a trace that names none.
    keep = md.get("compared_steps")
    tags = np.array(list(trace.tags) + [""])[trace.tag]
    comp = trace.kind == 0
    gaps = trace.tagged(HOST_GAP)
    rows = []
    for r in sorted(steps, key=int):
        rk = int(r)
        mine = comp & (trace.rank == rk)
        mine_steps = steps[r] if keep is None else [steps[r][i] for i in keep if i < len(steps[r])]
        meas = float(np.mean(mine_steps)) if mine_steps else float("nan")
        rep = float(np.mean(replayed[rk] if keep is None else replayed[rk][keep]))
        rows.append({"rank": rk, "measured": meas, "replayed": rep, "error": rep / meas - 1,
                     "compute": float(trace.duration[mine & ~gaps].sum() / niter),
                     "host_gaps": float(trace.duration[mine & gaps].sum() / niter)})
    _add_split(rows, md.get("measured_split"), replayed_split(trace, result), keep)
    errs = np.abs([x["error"] for x in rows])
    classes = {}
    for c, m in zip(md.get("collectives", []), md["measured_collectives"]):
        if m is not None:
            classes.setdefault((c["kind"], float(c["bytes"])), {"measured": [], "sim": [],
                                                                 "plan": set()})["measured"] += m
    calls = result.collectives
    for i, op in enumerate(np.asarray(calls["op"], np.int64)):
        key = (tags[op], float(trace.size[op]))
        if key in classes:
            classes[key]["sim"].append(float(calls["end"][i] - calls["ready"][i]))
            plan = [str(calls[k][i]) for k in ("library", "algorithm", "protocol")
                    if str(calls[k][i])] + ([f"{int(calls['channels'][i])}ch"]
                                            if int(calls["channels"][i]) else [])
            classes[key]["plan"].add(" ".join(plan))
    out = []
    for (kind, nbytes), v in sorted(classes.items()):
        lo = float(np.min(v["measured"]))
        sim = float(np.median(v["sim"])) if v["sim"] else float("nan")
        out.append({"kind": kind, "bytes": nbytes, "calls": len(v["sim"]), "measured_min": lo,
                    "measured_median": float(np.median(v["measured"])), "simulated": sim,
                    "error": sim / lo - 1 if lo > 0 else float("nan"),
                    "plan": ", ".join(sorted(v["plan"]))})
    return {"ranks": rows, "steps": {"median_error": float(np.median(errs)),
                                     "worst_error": float(np.max(errs))},
            "collectives": out}
