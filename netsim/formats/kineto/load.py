"""PyTorch profiler (Kineto) traces in: one Chrome-trace JSON per rank becomes a netsim trace.

``torch.profiler`` writes one JSON file (optionally gzipped) per rank: every GPU
kernel, memcpy and memset with its stream, start and duration; every NCCL (or
RCCL) collective kernel with its arguments (``Collective name``, ``In msg
nelems``, ``Out msg nelems``, ``dtype``, ``Group size``, ``Process Group Name``,
``Process Group Ranks``); and ``ProfilerStep#N`` annotations around each step.

What becomes what
-----------------
* A GPU kernel, memcpy or memset becomes a compute op lasting its measured
  duration, on its rank.
* An NCCL collective becomes one collective op over its process group
  (:mod:`netsim.trace.collop`), with the true byte count (element count x dtype size
  from the event's own arguments), kept whole for the replay's library to
  expand (:mod:`netsim.comm.library`: NCCL's plan on a GPU graph, else MPICH's
  schedules, ring by default). Its measured kernel time, which includes
  waiting for late peers, is not replayed: it goes into
  ``metadata["measured_collectives"]`` for a comparison
  (:func:`netsim.formats.kineto.measured.compare`).
* A point-to-point send or recv becomes one message, matched in order per
  (source, destination) pair.

Older profiles put no message arguments on the kernel: then the operation,
element count and dtype come from the CPU operator that launched it, found
through the launch's correlation id (:mod:`netsim.formats.kineto.comms`).

CPU-only profiles (DDP over gloo, as :mod:`workloads.torch_recorder` records
them) have no GPU events; then each thread is a stream, and its outermost
operators (``cpu_op`` and ``user_annotation`` events not nested in another of
the same thread) are its ops. gloo runs each collective on a worker thread as a
``gloo:<name>`` event; its payload is its ``Input Dims`` times the element size
of its ``Input type`` (so the profile needs ``record_shapes=True``), and its
group is the profile's one process group (gloo events do not name theirs; a
profile with several is refused). An operator that spans a collective of
another thread is taken to have blocked in ``wait()`` for it: it is cut into
the part before the collective started and the part after it ended.

Dependencies
------------
The profiler records *when* each op ran, not *what it waited for*. netsim keeps:

* program order within a CUDA stream: each op waits for the previous op of its
  stream;
* cross-stream waits visible in the timeline: an op that starts after its stream
  was idle waits for the op of another stream of the same rank that ended last
  during that idle interval (a compute stream waiting for a gradient
  allreduce, or a communication stream waiting for a gradient bucket);
* host time: what is left of the idle interval (kernel launch latency, Python,
  data loading, which the profiler records only on the CPU side) becomes a
  compute op tagged ``idle`` lasting exactly that gap (``gaps=False`` drops it).

Assumed rather than recorded: that the last op ending in an idle interval is
the one waited for (CUDA events recorded but not shown are not seen); that
collectives of a process group run in the same order on every rank (PyTorch
requires it); that kernels of different streams share the GPU without slowing
each other (a kernel keeps its measured duration); and, with ``symmetric=True``,
that every rank runs what the one recorded rank ran (data parallelism).

Steps
-----
``ProfilerStep#N`` annotations (CPU side) delimit steps; a GPU op belongs to the
step during which it was launched. ``steps`` keeps some of them; the kept steps
are netsim iterations 0, 1, ... and their measured durations go into
``trace.metadata["measured_step_times"]`` (seconds), so a replay can be
compared with what the machine did: on the steps the user selected, else on the
steady ones (warm-up, partial and empty steps left out,
:mod:`netsim.formats.kineto.steps`), listed in ``compared_steps``.
"""

import os
from bisect import bisect_right

import numpy as np

from netsim.checks import check_choice
from netsim.errors import TraceError
from netsim.formats.kineto.file import DTYPE_BYTES, read_profile
from netsim.formats.kineto.ranks import check_sequences
from netsim.formats.kineto.streams import kernel_table, place_of
from netsim.formats.kineto.steps import compared_steps
from netsim.trace.programs import FAMILIES, assemble
from netsim.trace.core import HOST_GAP
from netsim.formats.kineto.step_split import profile_split

__all__ = ["load_kineto", "assemble", "DTYPE_BYTES"]

def _select_steps(prof, steps):
    """The kept (number, start, end) steps, in order; [] when the file has no step marks."""
    have = prof["steps"]
    if not have:
        if steps is not None:
            raise TraceError(f"{prof['path']}: no ProfilerStep#N marks to select steps from")
        return []
    keep = sorted(have) if steps is None else sorted(set(int(s) for s in steps))
    missing = [s for s in keep if s not in have]
    if missing:
        raise TraceError(f"{prof['path']}: ProfilerStep#{missing[0]} not in the trace "
                         f"(it has steps {sorted(have)})")
    return [(n, have[n][0], have[n][0] + have[n][1]) for n in keep]


def _program(prof, kept, algorithm, gaps, pg_seq_prefix=""):
    """One rank's records (see :func:`assemble`) from its GPU ops in the kept steps."""
    ops = []
    for op in prof["ops"]:
        t = prof["launch"].get(op["corr"], op["ts"])
        if kept:
            k = bisect_right([s[1] for s in kept], t) - 1
            if k < 0 or t >= kept[k][2]:
                continue
            op = dict(op, it=k)
        else:
            op = dict(op, it=0)
        if op["bad"]:
            raise TraceError(op["bad"])
        ops.append(op)
    if not ops:
        raise TraceError(f"{prof['path']}: no GPU events in the selected steps")
    ops.sort(key=lambda o: (o["ts"], str(o["stream"])))
    t0 = ops[0]["ts"]  # the GPU lags the CPU: time 0 is the first kept GPU op
    ends = []           # (end, record index) of every op so far, kept sorted
    last = {}           # stream -> (end, record index)
    recs, seq = [], {}
    for op in ops:
        prev_end, prev = last.get(op["stream"], (t0, None))
        deps = [] if prev is None else [prev]
        k = bisect_right(ends, (op["ts"], float("inf"))) - 1
        ready = prev_end
        if k >= 0 and ends[k][0] > prev_end:   # this stream idled until another op ended
            deps.append(ends[k][1])
            ready = ends[k][0]
        if gaps and op["ts"] > ready:
            recs.append({"op": "compute", "seconds": (op["ts"] - ready) / 1e6, "deps": deps,
                         "iteration": op["it"], "tag": HOST_GAP})
            deps = [len(recs) - 1]
        if op["comm"] is None:
            rec = {"op": "compute", "seconds": op["dur"] / 1e6, "tag": op["cat"]}
        else:
            kind, nbytes, group, pg, peer = op["comm"]
            if kind in ("send", "recv"):
                src, dst = (prof["rank"], peer) if kind == "send" else (peer, prof["rank"])
                n = seq[(src, dst)] = seq.get((src, dst), -1) + 1
                rec = {"op": kind, "key": (src, dst, n), "peer": peer, "nbytes": nbytes,
                       "tag": kind}
            else:
                n = seq[pg] = seq.get(pg, -1) + 1
                rec = {"op": "coll", "key": (pg, n), "group": group, "nbytes": nbytes,
                       "collective": FAMILIES[algorithm][kind], "tag": kind,
                       "measured": op["dur"] / 1e6}
        rec.update(deps=deps, iteration=op["it"], where=place_of(op),
                   at=(op["ts"], op["ts"] + op["dur"]))
        recs.append(rec)
        end = (op["ts"] + op["dur"], len(recs) - 1)
        ends.insert(bisect_right(ends, end), end)
        last[op["stream"]] = end
    return recs


def _paths(paths_or_dir):
    if isinstance(paths_or_dir, (str, os.PathLike)):
        p = os.fspath(paths_or_dir)
        if os.path.isdir(p):
            files = sorted(os.path.join(p, f) for f in os.listdir(p)
                           if f.endswith((".json", ".json.gz")))
            if not files:
                raise TraceError(f"{p}: no .json or .json.gz profiler traces in this directory")
            return files
        return [p]
    files = [os.fspath(p) for p in paths_or_dir]
    if not files:
        raise TraceError("no profiler trace files given")
    return files


def load_kineto(paths_or_dir, steps=None, algorithm="ring", symmetric=False, gaps=True):
    """Import PyTorch profiler traces (one Chrome-trace JSON per rank) as a netsim trace.

    See the module docstring for what the profiler records, what becomes what,
    and what netsim assumes about dependencies.

    Parameters
    ----------
    paths_or_dir : str, path or list of them
        A directory of ``.json``/``.json.gz`` files, one file, or a list of files;
        each file's rank is its ``distributedInfo.rank``.
    steps : iterable of int, optional
        ``ProfilerStep#N`` numbers to keep (default: all); they become
        iterations 0, 1, ... in that order.
    algorithm : {"ring", "recursive"}
        The MPICH schedules of the collectives (see :data:`netsim.trace.programs.FAMILIES`): the
        ring family is MPICH's default and leaves NCCL free to plan the calls
        on GPUs; ``"recursive"`` hints recursive doubling, halving and binomial
        trees, which only MPICH runs.
    symmetric : bool
        With one file of a ``world_size``-rank job: assume every rank ran what
        it ran (data parallelism; every collective must span the whole world).
    gaps : bool
        Keep each stream's idle time that no other op explains as host time.

    Returns
    -------
    Trace
        Metadata: ``source`` ("kineto"), ``files``, ``world_size``, ``device``
        (GPU model), ``gpus_per_host`` (devices listed by the profile),
        ``steps`` (numbers kept), ``measured_step_times`` and
        ``measured_step_time`` (their mean, seconds), ``compared_steps`` (the
        kept steps a replay is compared with: :func:`netsim.formats.kineto.steps.compared_steps`)
        and ``compared_note`` (which were left out and why), ``measured_rank_step_times``
        (rank -> each kept step's measured seconds, for each file's rank),
        ``collectives`` (per collective of the lowest rank: kind, bytes, group),
        ``measured_collectives`` (for each of them, the measured kernel seconds
        on every recorded member, which include waiting for late peers; None
        for a message), ``recovered`` (counts of calls read from launching
        operators, see :mod:`netsim.formats.kineto.comms`), ``symmetric``, ``algorithm``,
        ``profile_kernels`` (each kernel's device, stream and name, for the
        timeline: :mod:`netsim.formats.kineto.streams`; None for a CPU-only profile),
        ``measured_split`` (:func:`netsim.formats.kineto.step_split.profile_split`), ``dtypes``
        (the ``dtype`` arguments of the communication kernels: the payloads',
        which is not always the compute precision).

    Raises
    ------
    TraceError
        For damaged, truncated or foreign JSON, a file without GPU events, a
        communication kernel without size arguments, an unknown dtype, a group
        not matching the world size, a missing rank file, ranks whose
        collectives do not match: naming the file and the event.

    Examples
    --------
    >>> import json, os, tempfile
    >>> ev = lambda name, ts, dur, stream, **a: {"ph": "X", "cat": "kernel", "name": name,
    ...     "ts": ts, "dur": dur, "args": {"stream": stream, **a}}
    >>> ar = {"Collective name": "allreduce", "In msg nelems": 1000, "Out msg nelems": 1000,
    ...       "dtype": "Float", "Group size": 2, "Process Group Name": "0",
    ...       "Process Group Ranks": "[0, 1]"}
    >>> doc = {"distributedInfo": {"rank": 0, "world_size": 2}, "traceEvents": [
    ...     ev("gemm", 0, 100, 7), ev("ncclKernel_AllReduce", 100, 50, 20, **ar),
    ...     ev("sgd", 150, 10, 7)]}
    >>> p = os.path.join(tempfile.mkdtemp(), "rank0.json")
    >>> _ = open(p, "w").write(json.dumps(doc))
    >>> t = load_kineto(p, symmetric=True)
    >>> t.ranks, t.num_collectives, t.size[t.is_collective].tolist()   # one 4 kB allreduce
    (2, 1, [4000.0])
    """
    check_choice(algorithm, "algorithm", FAMILIES, error=TraceError)
    files = _paths(paths_or_dir)
    profs = [read_profile(p, len(files)) for p in files]
    world = profs[0]["world"]
    for prof in profs:
        if prof["world"] != world:
            raise TraceError(f"{prof['path']}: world size {prof['world']} but "
                             f"{profs[0]['path']} says {world}")
    by_rank = {}
    for prof in profs:
        if prof["rank"] in by_rank:
            raise TraceError(f"{prof['path']}: rank {prof['rank']} also in "
                             f"{by_rank[prof['rank']]['path']}")
        by_rank[prof["rank"]] = prof
    if symmetric and len(profs) != 1:
        raise TraceError(f"symmetric=True (netsim import --symmetric) takes one rank's file, "
                         f"got {len(profs)}")
    if not symmetric and len(by_rank) != world:
        missing = sorted(set(range(world)) - set(by_rank))
        raise TraceError(f"missing rank file for rank {missing[0]} of world size {world} "
                         f"(have ranks {sorted(by_rank)} from {len(files)} file(s); "
                         f"use symmetric=True, netsim import --symmetric, for one rank of a "
                         f"data-parallel job)")
    kept = {r: _select_steps(p, steps) for r, p in by_rank.items()}
    numbers = {r: [n for n, _, _ in k] for r, k in kept.items()}
    for r, p in by_rank.items():
        if numbers[r] != numbers[min(by_rank)]:
            raise TraceError(f"{p['path']}: rank {r} has steps {numbers[r]}, rank "
                             f"{min(by_rank)} has {numbers[min(by_rank)]}; choose steps every "
                             f"rank has with steps=")
    progs = {r: _program(p, kept[r], algorithm, gaps) for r, p in by_rank.items()}
    if not symmetric:
        check_sequences({r: by_rank[r]["path"] for r in progs}, progs)
    first = profs[0]
    if symmetric:
        for rec in progs[first["rank"]]:
            if rec["op"] in ("send", "recv") or (rec["op"] == "coll"
                                                  and sorted(rec["group"]) != list(range(world))):
                raise TraceError(f"{first['path']}: symmetric=True needs every collective over "
                                 f"the whole world of {world} ranks; found {rec['tag']} over "
                                 f"{rec.get('group', rec.get('peer'))}")
        progs = {r: progs[first["rank"]] for r in range(world)}
    k0 = kept[first["rank"]]
    measured = [(e - s) / 1e6 for _, s, e in k0]
    kernel = {}                    # collective key -> measured kernel seconds on each rank
    for r in sorted(by_rank):      # the files' own ranks (symmetric copies measured nothing)
        for rec in progs[r]:
            if rec["op"] == "coll":
                kernel.setdefault(rec["key"], []).append(rec["measured"])
    comm = [rec for rec in progs[min(progs)] if rec["op"] in ("coll", "send", "recv")]
    launched = np.bincount([rec["iteration"] for rec in progs[first["rank"]]
                            if rec.get("tag") != HOST_GAP], minlength=len(k0))[:len(k0)]
    compared, note = compared_steps(launched, selected=steps is not None,
                                    numbers=[n for n, _, _ in k0])
    coll = [{"kind": rec["tag"], "bytes": rec["nbytes"], "group": list(rec.get("group", []))}
            for rec in comm]
    coll_kernels = [kernel[rec["key"]] if rec["op"] == "coll" else None for rec in comm]
    by_rank_steps = {str(r): [(e - s) / 1e6 for _, s, e in kept[r]] for r in sorted(kept)}
    meta = {"source": "kineto", "files": [os.path.basename(p) for p in files],
            "world_size": world, "device": first["device"], "gpus_per_host": first["gpus"],
            "steps": [n for n, _, _ in k0], "measured_step_times": measured,
            "measured_step_time": float(np.mean(measured)) if measured else None,
            "measured_rank_step_times": by_rank_steps, "measured_collectives": coll_kernels,
            "compared_steps": compared, "compared_note": note,
            "collectives": coll, "symmetric": bool(symmetric), "algorithm": algorithm,
            "recovered": {k: sum(p["counts"][k] for p in profs) for k in first["counts"]},
            "dtypes": sorted(set().union(*(p["dtypes"] for p in profs)))}
    programs = [progs[r] for r in range(world)]
    trace, ids = assemble(programs, metadata=meta, return_ids=True)
    return trace.with_metadata(profile_kernels=kernel_table(programs, ids, trace),
                               measured_split=profile_split({r: progs[r] for r in by_rank},
                                                            len(k0)))
