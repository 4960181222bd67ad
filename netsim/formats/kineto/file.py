"""One PyTorch profiler file read: its rank, world size, GPU ops, collectives and steps.

:func:`read_profile` is the first half of :func:`netsim.formats.kineto.load.load_kineto`
(whose docstring says what the profiler records and what becomes what): it
opens one Chrome-trace JSON file (optionally gzipped), rewrites early event
names into today's (:mod:`netsim.formats.kineto.older`), and collects

* every GPU kernel, memcpy and memset with its stream, start and duration, and
  for a communication kernel its call: kind, bytes (element count x dtype
  size), process group and peer, read from the kernel's own arguments or, in
  older profiles, from the operator that launched it
  (:mod:`netsim.formats.kineto.comms`);
* the ``ProfilerStep#N`` marks, the CUDA launches' times (by correlation id)
  and the device names;
* for a CPU-only profile over gloo, each thread's outermost operators, gloo's
  collectives among them.

Nothing here decides dependencies or steps: that is
:func:`netsim.formats.kineto.load.load_kineto`'s work.
"""

import gzip
import json
import re

import numpy as np

from netsim.errors import TraceError
from netsim.formats.kineto.comms import (CPU_DTYPE_BYTES, from_operator, group_ranks, launcher,
                                        operator_index)
from netsim.formats.kineto.older import modern

__all__ = ["read_profile", "DTYPE_BYTES", "STEP_MARK"]

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
#: A step mark's name, its number captured.
STEP_MARK = re.compile(r"ProfilerStep#(\d+)$")


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
    group = group_ranks(a, where)
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
        if not isinstance(name, str) or STEP_MARK.match(name):
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


def _distributed_info(doc, path):
    """The profile's ``distributedInfo`` ({} without one), its shape checked: an object whose
    ``pg_config``, if any, lists objects whose ``ranks`` are lists of integers."""
    info = doc.get("distributedInfo") or {}
    if not isinstance(info, dict):
        raise TraceError(f"{path}: distributedInfo must be an object, got {info!r}")
    pgs = info.get("pg_config")
    if pgs is not None and not (isinstance(pgs, list) and all(
            isinstance(g, dict) and isinstance(g.get("ranks", []), list)
            and all(isinstance(r, int) and not isinstance(r, bool) for r in g.get("ranks", []))
            for g in pgs)):
        raise TraceError(f"{path}: distributedInfo pg_config must be a list of objects with "
                         f"'ranks' lists of integers, got {pgs!r}")
    return info


def _profile(path, doc, world_hint):
    """Per-file facts: rank, world size, GPU ops, steps, device name."""
    info = _distributed_info(doc, path)
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
        if "ph" not in ev:   # every Trace Event Format event has its phase
            raise TraceError(f"{path}: event #{idx} {ev.get('name')!r} has no 'ph' (its phase, "
                             f"'X' for an operator or kernel); not a profiler's event")
        ev = modern(ev)       # early profilers' names (netsim.formats.kineto.older)
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
        elif (cat in ("user_annotation", "cpu_op") and isinstance(name, str)
              and STEP_MARK.match(name)):
            n = int(STEP_MARK.match(name).group(1))
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

    See :mod:`netsim.formats.kineto.comms`. A kernel stays refused (``bad``) when no
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


def read_profile(path, world_hint=1):
    """Read one profiler file: its rank, world size, GPU (or CPU-only) ops, steps and devices.

    Parameters
    ----------
    path : str or path
        A ``torch.profiler`` Chrome-trace JSON file, optionally gzipped.
    world_hint : int
        The world size to assume when the file has no ``distributedInfo``
        (the number of files given).

    Returns
    -------
    dict
        ``path``, ``rank``, ``world``, ``ops`` (one dict per GPU kernel, memcpy
        or memset in file order: ``ts``/``dur`` in microseconds, ``stream``,
        ``cat``, ``corr``, ``comm`` = (kind, bytes, group ranks, process group
        name, peer) or None, ``bad`` = why a communication kernel cannot be
        read, or None), ``launch`` (correlation id -> CPU launch time),
        ``steps`` (number -> (start, duration)), ``device`` and ``gpus`` (from
        ``deviceProperties``), ``counts`` (calls read from launching
        operators, :mod:`netsim.formats.kineto.comms`) and ``dtypes``.

    Raises
    ------
    TraceError
        For a missing, damaged or foreign file, a bad event, a group not fitting
        the world size, or a file without GPU or gloo events: naming the file
        and the event.

    Examples
    --------
    >>> import json, os, tempfile
    >>> ar = {"Collective name": "allreduce", "In msg nelems": 1000, "Out msg nelems": 1000,
    ...       "dtype": "Float", "Group size": 2, "Process Group Name": "0",
    ...       "Process Group Ranks": "[0, 1]", "stream": 20}
    >>> doc = {"distributedInfo": {"rank": 1, "world_size": 2}, "traceEvents": [
    ...     {"ph": "X", "cat": "kernel", "name": "ncclKernel_AllReduce", "ts": 5, "dur": 50,
    ...      "args": ar}]}
    >>> p = os.path.join(tempfile.mkdtemp(), "rank1.json")
    >>> _ = open(p, "w").write(json.dumps(doc))
    >>> prof = read_profile(p)
    >>> prof["rank"], prof["world"], prof["ops"][0]["comm"][:3]   # 1000 floats over ranks 0, 1
    (1, 2, ('allreduce', 4000.0, [0, 1]))
    """
    return _profile(path, _read(path), world_hint)
