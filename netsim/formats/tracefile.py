"""Trace files: JSON (one object per op, for people) and ``.npz`` (the columns, for size).

Both carry a header with the schema version (:data:`SCHEMA`), the number of
ranks, the tag names and the metadata, to which the netsim version is added on
save. Saving the same trace twice gives the same bytes.

Schema versions
---------------
``netsim-trace/3`` (written today) adds each message's send ``queue`` (the
``.npz`` column ``queue``, the JSON key on message ops, omitted when -1) and
collective ops (:mod:`netsim.trace.collop`):
the ``.npz`` column ``spec`` and the table of specifications as arrays
``spec_op``, ``spec_group_ptr``, ``spec_group_idx``, ``spec_root``,
``spec_algorithm``, ``spec_segments``, ``spec_element``; in JSON an op of
``"type": "collective"`` with keys ``op``, ``group``, ``bytes`` and optionally
``root``, ``algorithm``, ``segments``, ``element``, ``priority``. Schema-1 and
schema-2 files hold no collectives and load exactly as before.
``netsim-trace/2`` adds the message columns ``channel`` and
``priority`` (``.npz`` arrays; JSON keys on message ops, omitted when 0).
``netsim-trace/1`` files, which have neither, still load: every op gets
channel 0 and priority 0, which replays exactly as before. A schema-1 file
that carries either column is refused as malformed. A file without a
``schema`` key is read as the current schema.
"""

import json
import math
import zipfile

import numpy as np

from netsim.checks import check_int
from netsim.trace.collop import Specs
from netsim.errors import TraceError
from netsim.formats.whole import write_whole
from netsim.trace.core import COLLECTIVE, MAX_RANKS, MESSAGE, Trace, TraceBuilder, check_trace

__all__ = ["SCHEMA", "load_trace", "save_trace", "check_trace_name"]

SCHEMA = "netsim-trace/3"
_COLUMNS = ("kind", "rank", "peer", "size", "duration", "flops", "iteration", "tag",
            "channel", "priority", "spec", "queue", "dep_ptr", "dep_idx")
_SPEC_ARRAYS = tuple(f"spec_{c}" for c in Specs.COLUMNS)
# The columns each readable schema may carry (schema 1 predates channel and priority,
# schema 2 collectives).
_SCHEMA_COLUMNS = {"netsim-trace/1": frozenset(_COLUMNS) - {"channel", "priority", "spec",
                                                            "queue"},
                   "netsim-trace/2": frozenset(_COLUMNS) - {"spec", "queue"},
                   SCHEMA: frozenset(_COLUMNS) | frozenset(_SPEC_ARRAYS)}


def _version():
    from netsim import __version__

    return __version__


def check_trace_name(path):
    """The format a trace file's name asks for, ``"npz"`` or ``"json"``, or why there is none.

    Checked before the work that makes a trace (a recording, an import), so that a
    name :func:`save_trace` cannot write is refused before it, not after.

    Parameters
    ----------
    path : str or os.PathLike

    Returns
    -------
    str

    Raises
    ------
    TraceError
        For a name ending in neither ``.json`` nor ``.npz``.

    Examples
    --------
    >>> check_trace_name("run.npz")
    'npz'
    >>> check_trace_name("run.txt")
    Traceback (most recent call last):
    ...
    netsim.errors.TraceError: unknown trace format for 'run.txt': use .json or .npz
    """
    path = str(path)
    if not path.endswith((".npz", ".json")):
        raise TraceError(f"unknown trace format for {path!r}: use .json or .npz")
    return path.rsplit(".", 1)[1]


def save_trace(trace, path):
    """Save a trace as JSON (``.json``) or compressed numpy columns (``.npz``).

    Saving the same trace twice writes the same bytes (the ``.npz`` members
    carry a fixed timestamp). The file is written whole or not at all
    (:func:`netsim.formats.whole.write_whole`): an interrupted save leaves ``path`` as
    it was.

    Parameters
    ----------
    trace : Trace
    path : str or os.PathLike
        Ends in ``.json`` or ``.npz``.

    Raises
    ------
    TraceError
        For another file extension, or a path that cannot be written.

    Examples
    --------
    >>> import tempfile, os
    >>> b = TraceBuilder(2); _ = b.message(0, 1, 8); t = b.build()
    >>> p = os.path.join(tempfile.mkdtemp(), "t.npz")
    >>> save_trace(t, p); load_trace(p).total_bytes
    8.0
    """
    check_trace(trace)
    path = str(path)
    check_trace_name(path)
    header = {"schema": SCHEMA, "ranks": trace.ranks, "tags": trace.tags,
              "metadata": {**trace.metadata, "netsim_version": _version()}}
    try:
        if path.endswith(".npz"):
            write_whole(path, lambda f: _write_npz(
                f, {"header": np.array(json.dumps(header)), **_arrays(trace)}), binary=True)
        else:
            write_whole(path, lambda f: json.dump({**header, "ops": _ops_json(trace)}, f,
                                                  indent=None, separators=(",", ":")))
    except OSError as exc:
        raise TraceError(f"cannot write trace {path}: {exc.strerror or exc}") from None


def _write_npz(file, arrays):
    """Like ``numpy.savez_compressed``, but with fixed timestamps: same trace, same bytes."""
    with zipfile.ZipFile(file, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        for name, arr in arrays.items():
            info = zipfile.ZipInfo(f"{name}.npy", date_time=(1980, 1, 1, 0, 0, 0))
            info.compress_type = zipfile.ZIP_DEFLATED
            with zf.open(info, "w", force_zip64=True) as f:
                np.lib.format.write_array(f, np.asanyarray(arr), allow_pickle=False)


def _arrays(trace):
    specs = {f"spec_{c}": getattr(trace.specs, c) for c in Specs.COLUMNS}
    return {**{k: getattr(trace, k) for k in _COLUMNS}, **specs}


def _ops_json(trace):
    ops = []
    for i in range(trace.num_ops):
        op = {"id": i}
        if trace.kind[i] == MESSAGE:
            op.update(type="message", src=int(trace.rank[i]), dst=int(trace.peer[i]),
                      bytes=_num(trace.size[i]))
            for key in ("channel", "priority"):
                if getattr(trace, key)[i]:
                    op[key] = int(getattr(trace, key)[i])
            if trace.queue[i] >= 0:
                op["queue"] = int(trace.queue[i])
        elif trace.kind[i] == COLLECTIVE:
            spec = trace.specs.row(int(trace.spec[i]))
            op.update(type="collective", op=spec.op, group=list(spec.group),
                      bytes=_num(trace.size[i]))
            op.update({k: v for k, v in (("root", spec.root), ("algorithm", spec.algorithm),
                                         ("segments", spec.segments),
                                         ("element", spec.element),
                                         ("priority", int(trace.priority[i])))
                       if v not in (None, 0, -1) or (k == "root" and v >= 0)})
        else:
            op.update(type="compute", rank=int(trace.rank[i]))
            if not math.isnan(trace.duration[i]):
                op["seconds"] = float(trace.duration[i])
            if trace.flops[i]:
                op["flops"] = _num(trace.flops[i])
        op["deps"] = trace.deps(i).tolist()
        if trace.iteration[i]:
            op["iteration"] = int(trace.iteration[i])
        if trace.tag[i] >= 0:
            op["tag"] = trace.tags[trace.tag[i]]
        ops.append(op)
    return ops


def _num(x):
    x = float(x)
    return int(x) if x.is_integer() and abs(x) < 2**53 else x


def load_trace(path):
    """Load a trace saved by :func:`save_trace` (or written by hand as JSON).

    Raises
    ------
    TraceError
        For an unreadable, truncated or malformed file, naming what is wrong.

    Examples
    --------
    >>> import tempfile, os, json
    >>> p = os.path.join(tempfile.mkdtemp(), "t.json")
    >>> ops = [{"id": 7, "type": "compute", "rank": 0, "seconds": 0.5},
    ...        {"id": 9, "type": "message", "src": 0, "dst": 1, "bytes": 100, "deps": [7]}]
    >>> _ = open(p, "w").write(json.dumps({"ranks": 2, "ops": ops}))
    >>> t = load_trace(p); t.deps(1).tolist()
    [0]
    """
    path = str(path)
    try:
        if path.endswith(".npz"):
            return _load_npz(path)
        if path.endswith(".json"):
            with open(path, "rb") as f:
                doc = json.loads(f.read())
            return _from_json(doc)
    except TraceError:
        raise
    except FileNotFoundError:
        raise TraceError(f"trace file not found: {path}") from None
    except RecursionError:
        raise TraceError(f"{path}: JSON nested too deeply") from None
    except Exception as exc:
        # Whatever a damaged file makes the zip, zlib, npy or JSON readers raise (OSError,
        # ValueError, zlib.error, struct.error, MemoryError for absurd sizes, ...), the
        # cause is the input, so it is reported as such and never as a crash.
        reason = str(exc).splitlines()[0][:200] if str(exc) else ""
        raise TraceError(f"{path}: not a valid trace ({type(exc).__name__}: {reason})") from None
    raise TraceError(f"unknown trace format for {path!r}: use .json or .npz")


def _read_npz(path):
    """Arrays of an ``.npz``, refusing members whose header promises more than the file holds."""
    arrays = {}
    with zipfile.ZipFile(path) as zf:
        for info in zf.infolist():
            name = info.filename[:-4] if info.filename.endswith(".npy") else info.filename
            with zf.open(info) as f:
                version = np.lib.format.read_magic(f)
                if version == (1, 0):
                    shape, _, dtype = np.lib.format.read_array_header_1_0(f)
                else:
                    shape, _, dtype = np.lib.format.read_array_header_2_0(f)
            if dtype.hasobject:
                raise TraceError(f"{path}: array {name!r} holds Python objects")
            declared = math.prod(shape) * dtype.itemsize
            if declared > info.file_size:
                raise TraceError(f"{path}: array {name!r} declares {declared} bytes but its "
                                 f"member holds {info.file_size}")
            with zf.open(info) as f:
                arrays[name] = np.lib.format.read_array(f, allow_pickle=False)
    return arrays


def _load_npz(path):
    cols = _read_npz(path)
    missing = {"header", "kind", "rank"} - set(cols)
    if missing:
        raise TraceError(f"{path}: missing arrays {sorted(missing)}")
    header = cols.pop("header")
    if header.shape != () or header.dtype.kind != "U":
        raise TraceError(f"{path}: 'header' must be a JSON string")
    header = _check_header(json.loads(str(header[()])), path)
    unknown = set(cols) - _SCHEMA_COLUMNS[header["schema"]]
    if unknown:
        raise TraceError(f"{path}: unknown arrays {sorted(unknown)} for schema "
                         f"{header['schema']!r}")
    table = {k: cols.pop(k) for k in _SPEC_ARRAYS if k in cols}
    specs = None
    if table:
        missing = set(_SPEC_ARRAYS) - set(table)
        if missing:
            raise TraceError(f"{path}: missing arrays {sorted(missing)}")
        specs = Specs(*(table[k] for k in _SPEC_ARRAYS))
    return Trace(header["ranks"], tags=header.get("tags", ()), metadata=header.get("metadata"),
                 specs=specs, **cols)


def _check_header(header, where):
    if not isinstance(header, dict):
        raise TraceError(f"{where}: top level must be an object")
    schema = header.get("schema", SCHEMA)
    if not isinstance(schema, str) or schema not in _SCHEMA_COLUMNS:
        raise TraceError(f"{where}: unsupported schema {schema!r} (this netsim reads "
                         f"{', '.join(sorted(_SCHEMA_COLUMNS))})")
    if "ranks" not in header:
        raise TraceError(f"{where}: missing 'ranks'")
    tags = header.get("tags", [])
    if not isinstance(tags, list) or not all(isinstance(t, str) for t in tags):
        raise TraceError(f"{where}: 'tags' must be a list of strings")
    if not isinstance(header.get("metadata", {}), dict):
        raise TraceError(f"{where}: 'metadata' must be an object")
    return {**header, "schema": schema}


_OP_KEYS = {"id", "type", "rank", "src", "dst", "bytes", "seconds", "flops", "deps", "iteration", "tag"}
_MESSAGE_KEYS = ("channel", "priority")  # schema 2
_SCHEMA3_KEYS = ("op", "group", "root", "algorithm", "segments", "element",
                 "queue")  # schema 3: collectives, a message's queue


def _from_json(doc):
    doc = _check_header(doc, "trace")
    ops = doc.get("ops")
    if not isinstance(ops, list):
        raise TraceError("trace: 'ops' must be a list")
    ranks = check_int(doc["ranks"], "ranks", 1, MAX_RANKS, error=TraceError)
    known = {"netsim-trace/1": _OP_KEYS, "netsim-trace/2": _OP_KEYS | set(_MESSAGE_KEYS)}.get(
        doc["schema"], _OP_KEYS | set(_MESSAGE_KEYS) | set(_SCHEMA3_KEYS))
    ids = {}
    parsed = []
    for pos, op in enumerate(ops):
        if not isinstance(op, dict):
            raise TraceError(f"op #{pos}: must be an object")
        oid = op.get("id", pos)
        if isinstance(oid, bool) or not isinstance(oid, int):
            raise TraceError(f"op #{pos}: id must be an integer, got {oid!r}")
        unknown = set(op) - known
        if unknown:
            raise TraceError(f"op {oid}: unknown keys {sorted(unknown)}; known: {sorted(known)}")
        if oid in ids:
            raise TraceError(f"op #{pos}: duplicate id {oid}")
        ids[oid] = pos
        deps = op.get("deps", [])
        if not isinstance(deps, list):
            raise TraceError(f"op {oid}: deps must be a list")
        parsed.append((oid, deps, _check_op(op, oid, ranks)))
    b = TraceBuilder(ranks, metadata=doc.get("metadata"))
    for oid, deps, (kind, args, it, tag, extra) in parsed:
        resolved = []
        for d in deps:
            if isinstance(d, bool) or not isinstance(d, int) or d not in ids:
                raise TraceError(f"op {oid} depends on missing op {d!r}")
            resolved.append(ids[d])
        add = {"message": b.message, "compute": b.compute, "collective": b.collective}[kind]
        try:
            add(*args, deps=resolved, iteration=it, tag=tag, **extra)
        except TraceError as exc:
            raise TraceError(f"op {oid}: {str(exc).split(': ', 1)[-1]}") from None
    for name in doc.get("tags") or ():
        b.add_tag(name)
    return b.build()


def _check_op(op, oid, ranks):
    """``(type, positional arguments, iteration, tag, keyword arguments)`` of one JSON op."""
    kind = op.get("type")
    it, tag = op.get("iteration", 0), op.get("tag")
    if tag is not None and not isinstance(tag, str):
        raise TraceError(f"op {oid}: tag must be a string")
    for key in ("rank", "src", "dst", "iteration", "queue", *_MESSAGE_KEYS):
        v = op.get(key)
        if v is not None and (isinstance(v, bool) or not isinstance(v, int)):
            raise TraceError(f"op {oid}: {key} must be an integer, got {v!r}")
    for key in ("bytes", "seconds", "flops"):
        v = op.get(key)
        if v is not None and (isinstance(v, bool) or not isinstance(v, (int, float))):
            raise TraceError(f"op {oid}: {key} must be a number, got {v!r}")
    for key in ("rank", "src", "dst"):
        if key in op and not 0 <= op[key] < ranks:
            raise TraceError(f"op {oid}: unknown rank {op[key]} in {key!r} "
                             f"(ranks are 0..{ranks - 1})")
    for key in ("bytes", "seconds", "flops"):
        if key in op and not (math.isfinite(op[key]) and op[key] >= 0):
            raise TraceError(f"op {oid}: {key} must be finite and >= 0, got {op[key]!r}")
    if kind == "message":
        for key in ("src", "dst", "bytes"):
            if key not in op:
                raise TraceError(f"op {oid}: message without {key!r}")
        extra = {key: op[key] for key in (*_MESSAGE_KEYS, "queue") if key in op}
        return kind, (op["src"], op["dst"], op["bytes"]), it, tag, extra
    if kind == "compute":
        if "rank" not in op:
            raise TraceError(f"op {oid}: compute op without 'rank'")
        if op.get("seconds") is None and op.get("flops") is None:
            raise TraceError(f"op {oid}: compute op needs 'seconds' or 'flops'")
        for key in (*_MESSAGE_KEYS, "queue"):
            if key in op:
                raise TraceError(f"op {oid}: a compute op has no {key!r} (only messages do)")
        return kind, (op["rank"], op.get("seconds"), op.get("flops")), it, tag, {}
    if kind == "collective":
        return kind, *_check_collective(op, oid, ranks), it, tag, _collective_options(op, oid)
    raise TraceError(f"op {oid}: type must be 'message', 'compute' or 'collective', "
                     f"got {kind!r}")


def _check_collective(op, oid, ranks):
    """``((op, group, bytes),)`` of a JSON collective op."""
    for key in ("op", "group", "bytes"):
        if key not in op:
            raise TraceError(f"op {oid}: collective without {key!r}")
    group = op["group"]
    if not isinstance(group, list) or not all(
            isinstance(r, int) and not isinstance(r, bool) for r in group):
        raise TraceError(f"op {oid}: group must be a list of integer ranks")
    bad = [r for r in group if not 0 <= r < ranks]
    if bad:
        raise TraceError(f"op {oid}: group names unknown rank {bad[0]} (ranks are "
                         f"0..{ranks - 1})")
    if not isinstance(op["op"], str):
        raise TraceError(f"op {oid}: op must be a string, got {op['op']!r}")
    return ((op["op"], group, op["bytes"]),)


def _collective_options(op, oid):
    out = {}
    for key in ("root", "segments", "element", "priority"):
        if key in op:
            v = op[key]
            if isinstance(v, bool) or not isinstance(v, int):
                raise TraceError(f"op {oid}: {key} must be an integer, got {v!r}")
            out[key] = v
    if "algorithm" in op:
        if not isinstance(op["algorithm"], str):
            raise TraceError(f"op {oid}: algorithm must be a string, got {op['algorithm']!r}")
        out["algorithm"] = op["algorithm"]
    for key in ("rank", "src", "dst", "seconds", "flops", "channel", "queue"):
        if key in op:
            raise TraceError(f"op {oid}: a collective has no {key!r}")
    return out
