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
  (:mod:`netsim.collop`), with the true byte count (element count x dtype size
  from the event's own arguments), kept whole for the replay's library to
  expand (:mod:`netsim.library`: NCCL's plan on a GPU graph, else MPICH's
  schedules, ring by default). Its measured kernel time, which includes
  waiting for late peers, is not replayed: it goes into
  ``metadata["measured_collectives"]`` for a comparison
  (:func:`netsim.measured.compare`).
* A point-to-point send or recv becomes one message, matched in order per
  (source, destination) pair.

Older profiles put no message arguments on the kernel: then the operation,
element count and dtype come from the CPU operator that launched it, found
through the launch's correlation id (:mod:`netsim.kineto_comms`).

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
:mod:`netsim.profile_steps`), listed in ``compared_steps``.
"""

import gzip
import json
import os
import re
from bisect import bisect_right

import numpy as np

from .checks import check_choice
from .errors import TraceError
from .kineto_comms import CPU_DTYPE_BYTES, from_operator, launcher, operator_index
from .kineto_formats import modern
from .kineto_ranks import check_sequences
from .kineto_streams import kernel_table, place_of
from .profile_steps import compared_steps
from .programs import ALGORITHMS, assemble
from .trace import HOST_GAP
from .step_split import profile_split

__all__ = ["load_kineto", "assemble", "DTYPE_BYTES", "ALGORITHMS"]

#: Bytes per element of the ``dtype`` names PyTorch writes into collective events.
DTYPE_BYTES = {
    "Float": 4, "Double": 8, "Half": 2, "BFloat16": 2, "ComplexFloat": 8, "ComplexDouble": 16,
    "Int": 4, "Long": 8, "Short": 2, "Char": 1, "Byte": 1, "Bool": 1,
    "Float8_e4m3fn": 1, "Float8_e5m2": 1, "Float8_e4m3fnuz": 1, "Float8_e5m2fnuz": 1,
    "UInt16": 2, "UInt32": 4, "UInt64": 8,
}

_KINDS = {"allreduce": "allreduce", "all_reduce": "allreduce", "barrier": "allreduce",
          "allgather": "allgather", "all_gather": "allgather", "allgather_base": "allgather",
          "all_gather_into_tensor": "allgather", "all_gather_base": "allgather",
          "allgather_into_tensor_coalesced": "allgather",
          "reduce_scatter": "reduce_scatter", "reduce_scatter_base": "reduce_scatter",
          "reduce_scatter_tensor": "reduce_scatter", "broadcast": "broadcast", "reduce": "reduce",
          "alltoall": "alltoall", "all_to_all": "alltoall", "alltoall_base": "alltoall",
          "all_to_all_single": "alltoall", "send": "send", "recv": "recv"}
_GPU_CATS = {"kernel": "kernel", "gpu_memcpy": "memcpy", "gpu_memset": "memset"}
_STEP = re.compile(r"ProfilerStep#(\d+)$")


# -- reading profiler files ----------------------------------------------------------------------

def _read(path):
    try:
        with open(path, "rb") as f:
            raw = f.read()
        if raw[:2] == b"\x1f\x8b":
            raw = gzip.decompress(raw)
        doc = json.loads(raw)
    except FileNotFoundError:
        raise TraceError(f"profiler trace not found: {path}") from None
    except RecursionError:
        raise TraceError(f"{path}: JSON nested too deeply") from None
    except Exception as exc:  # truncated gzip, bad UTF-8, bad JSON: all the input's fault
        reason = str(exc).splitlines()[0][:200] if str(exc) else ""
        raise TraceError(f"{path}: not a readable profiler trace ({type(exc).__name__}: "
                         f"{reason})") from None
    if isinstance(doc, list):
        doc = {"traceEvents": doc}
    if not isinstance(doc, dict) or not isinstance(doc.get("traceEvents"), list):
        raise TraceError(f"{path}: not a PyTorch profiler trace (no 'traceEvents' list)")
    return doc


def _num(ev, key, path, idx):
    v = ev.get(key)
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not np.isfinite(v) or v < 0:
        raise TraceError(f"{path}: event #{idx} {ev.get('name')!r} has invalid {key!r}: {v!r}")
    return float(v)


def _comm(ev, path, idx, rank, world):
    """(kind, nbytes, group ranks, pg name, peer) of a communication kernel."""
    a = ev["args"]
    where = f"{path}: event #{idx} {ev.get('name', '')[:60]!r}"
    raw = str(a["Collective name"])
    kind = _KINDS.get(raw.strip("_").lower())
    if kind is None:
        raise TraceError(f"{where}: unsupported collective {raw!r} "
                         f"(supported: {', '.join(sorted(set(_KINDS)))})")
    dtype = a.get("dtype")
    if dtype not in DTYPE_BYTES:
        raise TraceError(f"{where}: unknown dtype {dtype!r} (known: {', '.join(DTYPE_BYTES)})")
    n_in, n_out = a.get("In msg nelems"), a.get("Out msg nelems", a.get("In msg nelems"))
    for name, v in (("In msg nelems", n_in), ("Out msg nelems", n_out)):
        if isinstance(v, bool) or not isinstance(v, int) or v < 0:
            raise TraceError(f"{where}: {name!r} must be a count >= 0, got {v!r}")
    nelems = n_out if kind == "allgather" else max(n_in, n_out) if kind in ("send", "recv") \
        else n_in
    try:
        group = json.loads(a.get("Process Group Ranks", "null"))
    except (TypeError, ValueError):
        group = None
    size = a.get("Group size")
    if group is None and size == world:
        group = list(range(world))
    if (not isinstance(group, list) or not all(isinstance(g, int) and not isinstance(g, bool)
                                               for g in group)):
        raise TraceError(f"{where}: unreadable 'Process Group Ranks' "
                         f"{a.get('Process Group Ranks')!r}")
    if size is not None and size != len(group):
        raise TraceError(f"{where}: 'Group size' {size} does not match its "
                         f"{len(group)} 'Process Group Ranks' {group}")
    if len(set(group)) != len(group) or any(not 0 <= g < world for g in group) or \
            rank not in group:
        raise TraceError(f"{where}: process group {group} does not fit world size {world} "
                         f"with this file's rank {rank}")
    peer = None
    if kind in ("send", "recv"):
        p = a.get("Dst Rank" if kind == "send" else "Src Rank")
        if isinstance(p, bool) or not isinstance(p, int) or not 0 <= p < len(group):
            raise TraceError(f"{where}: {kind} without a valid peer rank ({p!r})")
        peer = group[p]
    return kind, float(nelems * DTYPE_BYTES[dtype]), group, str(a.get("Process Group Name",
                                                                      "default")), peer


def _cpu_ops(cpu, path, rank, world, info):
    """Ops of a CPU-only profile: the outermost events of each thread, gloo ones as collectives.

    gloo runs each collective on a worker thread as one ``gloo:<name>`` event whose
    ``Input Dims`` and ``Input type`` (recorded with ``record_shapes=True``) give its
    payload; the event does not name its process group, so the profile must have one.
    """
    ops, last = [], {}
    for idx, ev in sorted(cpu, key=lambda x: (x[1].get("ts", 0), -(x[1].get("dur") or 0))):
        name = ev.get("name")
        if not isinstance(name, str) or _STEP.match(name):
            continue
        ts, dur = _num(ev, "ts", path, idx), _num(ev, "dur", path, idx)
        stream = f"thread {ev.get('pid')}/{ev.get('tid')}"
        if ts < last.get(stream, -1.0):
            continue                       # nested in (or overlapping) the thread's last op
        last[stream] = ts + dur
        comm = None
        if name.startswith("gloo:"):
            comm = _gloo(ev, path, idx, rank, world, info)
        ops.append({"ts": ts, "dur": dur, "stream": stream, "cat": "cpu", "corr": None,
                    "comm": comm, "bad": None})
    # An operator that spans a collective of another thread blocked in wait() for it (DDP's
    # autograd hook launches the bucket's allreduce and the backward's end waits): keep the
    # part before the collective started and the part after it ended.
    colls = [(o["ts"], o["ts"] + o["dur"], o["stream"]) for o in ops if o["comm"]]
    out = []
    for o in ops:
        end = o["ts"] + o["dur"]
        inner = [(a, b) for a, b, st in colls if st != o["stream"] and o["ts"] < a and b < end]
        if o["comm"] or not inner:
            out.append(o)
            continue
        first, last = min(a for a, _ in inner), max(b for _, b in inner)
        out += [dict(o, dur=first - o["ts"]), dict(o, ts=last, dur=end - last)]
    return out


def _gloo(ev, path, idx, rank, world, info):
    """(kind, nbytes, group ranks, pg name, peer) of a ``gloo:<collective>`` CPU event."""
    a, where = ev.get("args") or {}, f"{path}: event #{idx} {ev['name'][:60]!r}"
    kind = _KINDS.get(ev["name"][5:].strip("_").lower())
    if kind is None or kind in ("send", "recv"):
        raise TraceError(f"{where}: unsupported gloo collective")
    dims, types = a.get("Input Dims"), a.get("Input type")
    if not isinstance(dims, list) or not isinstance(types, list) or not dims:
        raise TraceError(f"{where}: no 'Input Dims' and 'Input type' (profile with "
                         "record_shapes=True)")
    nbytes = 0
    for d, t in zip(dims, types):
        if t not in CPU_DTYPE_BYTES:
            raise TraceError(f"{where}: unknown dtype {t!r} (known: {', '.join(CPU_DTYPE_BYTES)})")
        if not isinstance(d, list) or not all(isinstance(x, int) and x >= 0 for x in d):
            raise TraceError(f"{where}: unreadable 'Input Dims' {dims!r}")
        nbytes += int(np.prod(d, dtype=np.int64)) * CPU_DTYPE_BYTES[t]
    pgs = info.get("pg_config") or [{"pg_name": "0", "ranks": list(range(world))}]
    if len(pgs) != 1:
        raise TraceError(f"{where}: gloo events do not name their process group and the "
                         f"profile has {len(pgs)}")
    group = pgs[0].get("ranks", list(range(world)))
    if sorted(group) != list(range(world)) or rank not in group:
        raise TraceError(f"{where}: process group {group} does not fit world size {world}")
    return kind, float(nbytes), list(group), str(pgs[0].get("pg_name", "0")), None


def _profile(path, doc, world_hint):
    """Per-file facts: rank, world size, GPU ops, steps, device name."""
    info = doc.get("distributedInfo") or {}
    rank = info.get("rank", 0)
    world = info.get("world_size", world_hint)
    for name, v in (("rank", rank), ("world_size", world)):
        if isinstance(v, bool) or not isinstance(v, int) or v < 0 or (name == "world_size" and v < 1):
            raise TraceError(f"{path}: distributedInfo {name} must be an integer, got {v!r}")
    if rank >= world:
        raise TraceError(f"{path}: rank {rank} outside world size {world}")
    launch, where, steps, ops, cpu = {}, {}, {}, [], []
    flows, dtypes = [], set()      # dtypes: of the collectives' payloads, for what-if
    for idx, ev in enumerate(doc["traceEvents"]):
        if not isinstance(ev, dict):
            raise TraceError(f"{path}: event #{idx} is not an object")
        ev = modern(ev)       # early profilers' names (netsim.kineto_formats)
        if ev.get("ph") == "s" and ev.get("cat") == "ac2g":   # CPU end of a launch flow
            flows.append(ev)
        if ev.get("ph") != "X":
            continue
        cat, name, args = ev.get("cat"), ev.get("name"), ev.get("args") or {}
        if not isinstance(args, dict):
            raise TraceError(f"{path}: event #{idx} {name!r} has non-object args")
        if cat in ("cuda_runtime", "cuda_driver") and "correlation" in args:
            launch[args["correlation"]] = _num(ev, "ts", path, idx)
            where[args["correlation"]] = (ev.get("pid"), ev.get("tid"), launch[args["correlation"]])
        elif cat in ("user_annotation", "cpu_op") and isinstance(name, str) and _STEP.match(name):
            n = int(_STEP.match(name).group(1))
            ts, dur = _num(ev, "ts", path, idx), _num(ev, "dur", path, idx)
            if dur > steps.get(n, (0, -1))[1]:
                steps[n] = (ts, dur)
        elif isinstance(cat, str) and cat.lower() in _GPU_CATS:
            ts, dur = _num(ev, "ts", path, idx), _num(ev, "dur", path, idx)
            stream = args.get("stream")
            if stream is None:
                raise TraceError(f"{path}: event #{idx} {name!r} has no stream")
            comm, bad = None, None
            if "Collective name" in args:
                comm = _comm(ev, path, idx, rank, world)
                dtypes.add(args["dtype"])
            elif isinstance(name, str) and re.match(r"(nccl|rccl)", name, re.I):
                # Refused only if a kept step holds it: profilers drop these arguments in
                # their first steps, which the caller can leave out with ``steps``.
                bad = (f"{path}: event #{idx} {name[:60]!r} is a communication kernel without "
                       f"'Collective name', 'In msg nelems' and 'dtype' arguments (newer PyTorch "
                       f"profilers record them) and without a launching operator (nccl:*, "
                       f"c10d::*, record_param_comms) found through its correlation id; select "
                       f"steps without it")
            ops.append({"ts": ts, "dur": dur, "stream": stream, "cat": _GPU_CATS[cat.lower()],
                        "corr": args.get("correlation"), "comm": comm, "bad": bad, "idx": idx,
                        "name": name, "device": args.get("device", ev.get("pid"))})
        elif cat in ("cpu_op", "user_annotation"):
            cpu.append((idx, ev))
    for ev in flows:            # the ac2g flow's id is the launch's correlation id
        if isinstance(ev.get("ts"), (int, float)):
            where.setdefault(ev.get("id"), (ev.get("pid"), ev.get("tid"), float(ev["ts"])))
    counts = _recover(ops, cpu, where, path, rank, world, info)
    if not ops and any(str(ev.get("name")).startswith("gloo:") for _, ev in cpu):
        ops = _cpu_ops(cpu, path, rank, world, info)   # a CPU-only job over gloo
    if not ops:
        raise TraceError(f"{path}: no GPU kernel, memcpy, memset or collective events")
    devices = [d.get("name") for d in doc.get("deviceProperties") or [] if isinstance(d, dict)]
    return {"path": path, "rank": rank, "world": world, "ops": ops, "launch": launch,
            "steps": steps, "device": devices[0] if devices else None, "gpus": len(devices),
            "counts": counts, "dtypes": dtypes}


def _recover(ops, cpu, where, path, rank, world, info):
    """Give communication kernels without arguments their call, from the launching operator.

    See :mod:`netsim.kineto_comms`. A kernel stays refused (``bad``) when no
    operator is found or it says too little; kernels launched by one operator
    become one call (the first kernel, spanning to the last one's end). Returns
    counts for the summary.
    """
    counts = {"from_operator": 0, "assumed_group": 0, "even_alltoall": 0, "merged_kernels": 0}
    todo = [op for op in ops if op["bad"]]
    if not todo:
        return counts
    index = operator_index(cpu)
    first, drop = {}, set()
    for op in todo:
        at = where.get(op["corr"])
        chain = launcher(index, *at) if at else []
        if not chain:
            continue
        what = f"{path}: event #{op['idx']} {op['name'][:60]!r}"
        try:
            kind, nbytes, group, pg, peer, notes = from_operator(
                chain, _KINDS, what, rank, world, info,
                lambda ev: _comm(ev, path, op["idx"], rank, world))
        except TraceError as exc:
            op["bad"] = str(exc)
            continue
        key = chain[0][2]           # the outermost communication operator
        if key in first:            # one more kernel of the same call
            lead = first[key]
            lead["dur"] = max(lead["ts"] + lead["dur"], op["ts"] + op["dur"]) - lead["ts"]
            drop.add(id(op))
            counts["merged_kernels"] += 1
            continue
        first[key] = op
        op.update(comm=(kind, nbytes, group, pg, peer), bad=None)
        counts["from_operator"] += 1
        counts["assumed_group"] += "group" in notes
        counts["even_alltoall"] += "even" in notes
    ops[:] = [op for op in ops if id(op) not in drop]
    return counts


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
                       "collective": ALGORITHMS[algorithm][kind], "tag": kind,
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
        The MPICH schedules of the collectives (see :data:`ALGORITHMS`): the
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
        kept steps a replay is compared with: :func:`netsim.profile_steps.compared_steps`)
        and ``compared_note`` (which were left out and why), ``measured_rank_step_times``
        (rank -> each kept step's measured seconds, for each file's rank),
        ``collectives`` (per collective of the lowest rank: kind, bytes, group),
        ``measured_collectives`` (for each of them, the measured kernel seconds
        on every recorded member, which include waiting for late peers; None
        for a message), ``recovered`` (counts of calls read from launching
        operators, see :mod:`netsim.kineto_comms`), ``symmetric``, ``algorithm``,
        ``profile_kernels`` (each kernel's device, stream and name, for the
        timeline: :mod:`netsim.kineto_streams`; None for a CPU-only profile),
        ``measured_split`` (:func:`netsim.step_split.profile_split`), ``dtypes``
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
    check_choice(algorithm, "algorithm", ALGORITHMS, error=TraceError)
    files = _paths(paths_or_dir)
    profs = [_profile(p, _read(p), len(files)) for p in files]
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
        raise TraceError(f"symmetric=True takes one rank's file, got {len(profs)}")
    if not symmetric and len(by_rank) != world:
        missing = sorted(set(range(world)) - set(by_rank))
        raise TraceError(f"missing rank file for rank {missing[0]} of world size {world} "
                         f"(have ranks {sorted(by_rank)} from {len(files)} file(s); "
                         f"use symmetric=True for one rank of a data-parallel job)")
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
