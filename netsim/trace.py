"""Traces: per-rank dependency graphs of compute ops and messages, stored column-wise.

A trace uses the vocabulary of MLCommons Chakra (compute nodes, communication
nodes, data dependencies) without its protobuf. Op ``i`` is row ``i`` of a set of
numpy columns:

========== ======= =============================================================
column     dtype   meaning
========== ======= =============================================================
kind       uint8   ``COMPUTE`` (0) or ``MESSAGE`` (1)
rank       int32   the rank that computes, or the message's source rank
peer       int32   the message's destination rank (-1 for compute)
size       float64 message bytes (0 for compute)
duration   float64 compute seconds; NaN when the op is given in FLOPs instead
flops      float64 compute FLOPs (0 when given as a duration)
iteration  int32   the training iteration the op belongs to
tag        int16   index into ``tags`` (a short label such as "push"), -1 for none
========== ======= =============================================================

Dependencies are stored in CSR form: the ops that op ``i`` waits for are
``dep_idx[dep_ptr[i]:dep_ptr[i + 1]]``. An op starts when every op it waits for
has completed; a message completes when its last byte arrives.

Iteration ``k`` ends when its last op ends; per-iteration times are the gaps
between successive iteration ends (the first is measured from time 0).

Traces are saved as JSON (one object per op, for people) or ``.npz`` (the columns
themselves, for size). A million-message trace is a few tens of MB in memory and
is never expanded into Python objects except while JSON is being read or written.
"""

import json
import math
import zipfile

import numpy as np

from .errors import TraceError
from .network import _number

__all__ = [
    "COMPUTE",
    "MESSAGE",
    "SCHEMA",
    "Trace",
    "TraceBuilder",
    "concat",
    "repeat",
    "deps_csr",
    "terminal_ops",
    "load_trace",
    "save_trace",
]

COMPUTE = 0
MESSAGE = 1
SCHEMA = "netsim-trace/1"
_MAX_RANKS = 2**31 - 1
_COLUMNS = ("kind", "rank", "peer", "size", "duration", "flops", "iteration", "tag",
            "dep_ptr", "dep_idx")


def _version():
    from . import __version__

    return __version__


class Trace:
    """A validated, immutable-by-convention trace held as numpy columns.

    Build one with :class:`TraceBuilder` (a few ops, from Python) or directly from
    arrays (generators of millions of ops). The constructor validates everything
    and raises :class:`~netsim.errors.TraceError` naming the first offending op.

    Parameters
    ----------
    ranks : int
        Number of ranks; every ``rank`` and ``peer`` must be in ``[0, ranks)``.
    kind, rank, peer, size, duration, flops, iteration, tag : array_like
        The op columns described in the module docstring. ``peer``, ``size``,
        ``duration``, ``flops``, ``iteration`` and ``tag`` may be None for their
        defaults (-1, 0, 0, 0, 0, -1).
    dep_ptr, dep_idx : array_like, optional
        CSR dependency lists; None means no op waits for any other.
    tags : list of str, optional
        Names that ``tag`` indexes.
    metadata : dict, optional
        How the trace was produced: paradigm, dataset, model, hyper-parameters,
        accuracy, seed. ``device_flops`` (FLOP/s) converts FLOP-sized compute ops
        to seconds. The netsim version and schema are added on save.

    Examples
    --------
    >>> t = Trace(2, kind=[MESSAGE, COMPUTE], rank=[0, 1], peer=[1, -1],
    ...           size=[1e6, 0], duration=[0, 1e-3], dep_ptr=[0, 0, 1], dep_idx=[0])
    >>> t.num_ops, t.num_messages, t.total_bytes
    (2, 1, 1000000.0)
    >>> t.deps(1).tolist()
    [0]
    """

    def __init__(self, ranks, kind, rank, peer=None, size=None, duration=None, flops=None,
                 iteration=None, tag=None, dep_ptr=None, dep_idx=None, tags=(), metadata=None):
        self.kind = np.ascontiguousarray(kind, dtype=np.uint8)
        n = len(self.kind)
        self.rank = _column(rank, n, np.int32, None, "rank")
        self.peer = _column(peer, n, np.int32, -1, "peer")
        self.size = _column(size, n, np.float64, 0.0, "size")
        self.duration = _column(duration, n, np.float64, 0.0, "duration")
        self.flops = _column(flops, n, np.float64, 0.0, "flops")
        self.iteration = _column(iteration, n, np.int32, 0, "iteration")
        self.tag = _column(tag, n, np.int16, -1, "tag")
        if dep_ptr is None:
            if dep_idx is not None and len(dep_idx):
                raise TraceError("dep_idx given without dep_ptr")
            dep_ptr, dep_idx = np.zeros(n + 1, np.int64), np.zeros(0, np.int64)
        self.dep_ptr = np.ascontiguousarray(dep_ptr, dtype=np.int64)
        self.dep_idx = np.ascontiguousarray(dep_idx, dtype=np.int64)
        self.tags = [str(t) for t in tags]
        self.metadata = dict(metadata or {})
        self.ranks = _check_ranks(ranks)
        self._validate()

    # -- sizes -------------------------------------------------------------------
    @property
    def num_ops(self):
        """Number of ops."""
        return len(self.kind)

    @property
    def is_message(self):
        """Boolean mask of the message ops."""
        return self.kind == MESSAGE

    @property
    def num_messages(self):
        """Number of messages."""
        return int(np.count_nonzero(self.is_message))

    @property
    def total_bytes(self):
        """Sum of message bytes."""
        return float(self.size[self.is_message].sum())

    @property
    def num_iterations(self):
        """Number of iterations (1 + the largest iteration index; 0 for an empty trace)."""
        return int(self.iteration.max()) + 1 if self.num_ops else 0

    def deps(self, op):
        """The ops that ``op`` waits for, as an array of op indices."""
        return self.dep_idx[self.dep_ptr[op]:self.dep_ptr[op + 1]]

    def __len__(self):
        return self.num_ops

    def __repr__(self):
        return (f"Trace(ranks={self.ranks}, ops={self.num_ops}, messages={self.num_messages}, "
                f"bytes={self.total_bytes:g}, iterations={self.num_iterations})")

    def compute_seconds(self, device_flops=None):
        """Duration of every op in seconds (messages get 0).

        Compute ops given in FLOPs are divided by ``device_flops`` (FLOP/s), taken
        from the argument or else from ``metadata["device_flops"]``.

        Raises
        ------
        TraceError
            If an op is given in FLOPs and no positive device throughput is known.
        """
        seconds = np.where(self.kind == COMPUTE, self.duration, 0.0)
        need = np.isnan(seconds)
        if need.any():
            rate = device_flops if device_flops is not None else self.metadata.get("device_flops")
            if not (_number(rate) and math.isfinite(rate) and rate > 0):
                op = int(np.flatnonzero(need)[0])
                raise TraceError(f"op {op} is given in FLOPs but no positive device_flops "
                                 f"(FLOP/s) is known, got {rate!r}")
            seconds[need] = self.flops[need] / float(rate)
        return seconds

    # -- validation ----------------------------------------------------------------
    def _validate(self):
        n = self.num_ops
        if len(self.dep_ptr) != n + 1:
            raise TraceError(f"dep_ptr has {len(self.dep_ptr)} entries, expected {n + 1}")
        if n and (self.dep_ptr[0] != 0 or np.any(np.diff(self.dep_ptr) < 0)
                  or self.dep_ptr[-1] != len(self.dep_idx)):
            raise TraceError("dep_ptr must start at 0, never decrease and end at len(dep_idx)")
        _first_bad(~np.isin(self.kind, (COMPUTE, MESSAGE)), "has unknown kind", self.kind)
        _first_bad((self.rank < 0) | (self.rank >= self.ranks),
                   f"names unknown rank (ranks are 0..{self.ranks - 1})", self.rank)
        msg = self.is_message
        _first_bad(msg & ((self.peer < 0) | (self.peer >= self.ranks)),
                   f"sends to unknown rank (ranks are 0..{self.ranks - 1})", self.peer)
        _first_bad(np.isnan(self.size), "has NaN bytes", self.size)
        _first_bad(~np.isfinite(self.size) | (self.size < 0), "has invalid bytes", self.size)
        _first_bad(~msg & (self.size != 0), "is a compute op with non-zero bytes", self.size)
        comp = ~msg
        dur_nan = np.isnan(self.duration)
        _first_bad(comp & ~dur_nan & (~np.isfinite(self.duration) | (self.duration < 0)),
                   "has invalid duration", self.duration)
        _first_bad(~np.isfinite(self.flops) | (self.flops < 0), "has invalid FLOPs", self.flops)
        _first_bad(comp & dur_nan & (self.flops <= 0), "has NaN duration and no FLOPs", self.duration)
        _first_bad(msg & (dur_nan | (self.duration != 0)), "is a message with a duration", self.duration)
        _first_bad(self.iteration < 0, "has negative iteration", self.iteration)
        _first_bad((self.tag < -1) | (self.tag >= len(self.tags)),
                   f"has tag outside the {len(self.tags)} tag names", self.tag)
        if len(self.dep_idx):
            owner = np.repeat(np.arange(n, dtype=np.int64), np.diff(self.dep_ptr))
            bad = (self.dep_idx < 0) | (self.dep_idx >= n)
            if bad.any():
                k = int(np.flatnonzero(bad)[0])
                raise TraceError(f"op {owner[k]} depends on missing op {self.dep_idx[k]}")
            selfdep = self.dep_idx == owner
            if selfdep.any():
                k = int(np.flatnonzero(selfdep)[0])
                raise TraceError(f"op {owner[k]} depends on itself")
            if np.any(self.dep_idx > owner):
                _check_acyclic(self)


def _column(values, n, dtype, default, name):
    if values is None:
        if default is None:
            raise TraceError(f"column {name!r} is required")
        return np.full(n, default, dtype=dtype)
    try:
        arr = np.asarray(values)
        if np.issubdtype(dtype, np.integer):
            if arr.size and arr.dtype.kind == "f":
                if not np.all(np.isfinite(arr)) or np.any(arr != np.round(arr)):
                    bad = int(np.flatnonzero(~np.isfinite(arr) | (arr != np.round(arr)))[0])
                    raise TraceError(f"op {bad} has non-integer {name} {arr[bad]!r}")
            info = np.iinfo(dtype)
            if arr.size and (arr.min() < info.min or arr.max() > info.max):
                raise TraceError(f"column {name!r} has values outside {dtype.__name__}")
        out = np.ascontiguousarray(arr, dtype=dtype)
    except (TypeError, ValueError, OverflowError) as exc:
        if isinstance(exc, TraceError):
            raise
        raise TraceError(f"column {name!r} is not numeric: {exc}") from None
    if out.shape != (n,):
        raise TraceError(f"column {name!r} has shape {out.shape}, expected ({n},)")
    return out


def _check_ranks(ranks):
    if isinstance(ranks, bool) or not isinstance(ranks, (int, np.integer)):
        raise TraceError(f"ranks must be an integer, got {ranks!r}")
    if not 1 <= ranks <= _MAX_RANKS:
        raise TraceError(f"ranks must be in 1..{_MAX_RANKS}, got {ranks}")
    return int(ranks)


def _first_bad(mask, what, values):
    if mask.any():
        op = int(np.flatnonzero(mask)[0])
        raise TraceError(f"op {op} {what}: {values[op]!r}")


def _successors(trace):
    """CSR of the ops waiting for each op: ``succ[succ_ptr[i]:succ_ptr[i + 1]]`` wait for i."""
    n = trace.num_ops
    owner = np.repeat(np.arange(n, dtype=np.int64), np.diff(trace.dep_ptr))
    succ_ptr = np.zeros(n + 1, np.int64)
    np.cumsum(np.bincount(trace.dep_idx, minlength=n), out=succ_ptr[1:])
    return succ_ptr, owner[np.argsort(trace.dep_idx, kind="stable")]


def _check_acyclic(trace):
    """Kahn's algorithm; raise with one cycle shown when the graph is not a DAG."""
    n = trace.num_ops
    indeg = np.diff(trace.dep_ptr).astype(np.int64)
    succ_ptr, succ = _successors(trace)
    frontier = np.flatnonzero(indeg == 0)
    done = 0
    while len(frontier):
        done += len(frontier)
        starts = succ_ptr[frontier]
        released = succ[_ranges(starts, succ_ptr[frontier + 1] - starts)]
        if not len(released):
            break
        np.subtract.at(indeg, released, 1)
        frontier = np.unique(released[indeg[released] == 0])
    if done == n:
        return
    # Walk backwards along unfinished dependencies until an op repeats: that is a cycle.
    stuck = indeg > 0
    op = int(np.flatnonzero(stuck)[0])
    seen = {}
    path = []
    while op not in seen:
        seen[op] = len(path)
        path.append(op)
        deps = trace.deps(op)
        op = int(deps[stuck[deps]][0])
    cycle = path[seen[op]:] + [op]
    shown = " <- ".join(str(c) for c in cycle[:12]) + (" <- ..." if len(cycle) > 12 else "")
    blocked = np.flatnonzero(stuck)
    first = ", ".join(_describe(trace, int(b)) for b in blocked[:3])
    raise TraceError(f"dependency cycle among {len(cycle) - 1} ops: {shown} "
                     f"(X <- Y: X waits for Y); {len(blocked)} ops can never start: {first}"
                     + (", ..." if len(blocked) > 3 else ""))


def _describe(trace, op):
    if trace.kind[op] == MESSAGE:
        return f"op {op} (message {trace.rank[op]}->{trace.peer[op]})"
    return f"op {op} (compute on rank {trace.rank[op]})"


class TraceBuilder:
    """Build a trace one op at a time; ``build()`` turns the lists into columns.

    Parameters
    ----------
    ranks : int
        Number of ranks.
    metadata : dict, optional
        Stored on the trace.

    Examples
    --------
    >>> b = TraceBuilder(2, metadata={"paradigm": "demo"})
    >>> c = b.compute(0, seconds=1e-3)
    >>> m = b.message(0, 1, 4096, deps=[c], tag="grad")
    >>> t = b.build()
    >>> t.num_messages, t.tags
    (1, ['grad'])
    """

    def __init__(self, ranks, metadata=None):
        self.ranks = ranks
        self.metadata = dict(metadata or {})
        self._cols = {k: [] for k in ("kind", "rank", "peer", "size", "duration", "flops",
                                      "iteration", "tag")}
        self._deps = []
        self._tags = {}

    def _add(self, kind, rank, peer, size, duration, flops, deps, iteration, tag):
        c = self._cols
        c["kind"].append(kind)
        c["rank"].append(rank)
        c["peer"].append(peer)
        c["size"].append(size)
        c["duration"].append(duration)
        c["flops"].append(flops)
        c["iteration"].append(iteration)
        c["tag"].append(-1 if tag is None else self._tags.setdefault(str(tag), len(self._tags)))
        self._deps.append(list(deps))
        return len(self._deps) - 1

    def message(self, src, dst, nbytes, deps=(), iteration=0, tag=None):
        """Add a message of ``nbytes`` from rank ``src`` to ``dst``; return its op id."""
        return self._add(MESSAGE, src, dst, nbytes, 0.0, 0.0, deps, iteration, tag)

    def compute(self, rank, seconds=None, flops=None, deps=(), iteration=0, tag=None):
        """Add a compute op on ``rank`` lasting ``seconds`` (or ``flops`` at the device rate)."""
        if seconds is None and flops is None:
            raise TraceError("a compute op needs seconds or flops")
        duration = float("nan") if seconds is None else seconds
        return self._add(COMPUTE, rank, -1, 0.0, duration, flops or 0.0, deps, iteration, tag)

    def __len__(self):
        return len(self._deps)

    def build(self):
        """Return the validated :class:`Trace`."""
        counts = [len(d) for d in self._deps]
        dep_ptr = np.zeros(len(counts) + 1, np.int64)
        np.cumsum(counts, out=dep_ptr[1:])
        dep_idx = [x for d in self._deps for x in d]
        c = self._cols
        if dep_idx and any(isinstance(x, bool) or not isinstance(x, (int, np.integer)) for x in dep_idx):
            raise TraceError("dependencies must be integer op ids")
        return Trace(self.ranks, np.array(c["kind"], np.uint8), c["rank"], c["peer"], c["size"],
                     c["duration"], c["flops"], c["iteration"], c["tag"], dep_ptr,
                     np.array(dep_idx, np.int64), tags=list(self._tags), metadata=self.metadata)


def deps_csr(*columns):
    """CSR dependency arrays from columns of op ids, one column per dependency slot.

    Each column has one entry per op; -1 means "no dependency in this slot".

    Examples
    --------
    >>> ptr, idx = deps_csr([-1, 0, 0], [-1, -1, 1])
    >>> ptr.tolist(), idx.tolist()
    ([0, 0, 1, 3], [0, 0, 1])
    """
    cols = np.stack([np.asarray(c, np.int64) for c in columns], axis=1)
    valid = cols >= 0
    ptr = np.zeros(len(cols) + 1, np.int64)
    np.cumsum(valid.sum(axis=1), out=ptr[1:])
    return ptr, cols[valid]


def terminal_ops(trace):
    """For each rank, the ops touching it that no later op touching it waits for.

    These are the ops a rank must see finished before it may start something new:
    its last compute ops, its last sends and its last receives.

    Returns
    -------
    ops, ranks : ndarray
        Parallel arrays of (op, rank) pairs.

    Examples
    --------
    >>> b = TraceBuilder(2)
    >>> a = b.message(0, 1, 10)
    >>> c = b.message(1, 0, 10, deps=[a])
    >>> ops, ranks = terminal_ops(b.build())
    >>> sorted(zip(ranks.tolist(), ops.tolist()))
    [(0, 1), (1, 1)]
    """
    n = trace.num_ops
    msg = trace.is_message
    owner = np.repeat(np.arange(n, dtype=np.int64), np.diff(trace.dep_ptr))
    dep = trace.dep_idx
    # A dependency edge dep -> owner hides (dep, r) for every rank r that owner touches.
    # One flag per touched slot of dep (its rank, its peer) rather than a search over
    # (op, rank) keys, which was some ten times slower on large collectives.
    o_rank, o_peer, o_msg = trace.rank[owner], trace.peer[owner], msg[owner]
    d_rank, d_peer = trace.rank[dep], trace.peer[dep]
    hide_rank = np.zeros(n, bool)
    hide_peer = np.zeros(n, bool)
    hide_rank[dep[(o_rank == d_rank) | (o_msg & (o_peer == d_rank))]] = True
    hide_peer[dep[msg[dep] & ((o_rank == d_peer) | (o_msg & (o_peer == d_peer)))]] = True
    ops = np.arange(n, dtype=np.int64)
    keep_peer = msg & ~hide_peer
    # Every op for its rank, in op order, then every message for its peer.
    return (np.concatenate([ops[~hide_rank], ops[keep_peer]]),
            np.concatenate([trace.rank[~hide_rank], trace.peer[keep_peer]]).astype(np.int64))


def _ranges(lo, cnt):
    """Concatenation of ``arange(lo[i], lo[i] + cnt[i])`` for all i, without a Python loop."""
    cnt = np.asarray(cnt, np.int64)
    return np.repeat(np.asarray(lo, np.int64) - (np.cumsum(cnt) - cnt), cnt) + np.arange(cnt.sum())


def _chained_deps(prev, nxt, copies):
    """CSR dependencies of ``copies`` back-to-back copies of ``nxt`` run after ``prev``.

    Copy ``k`` starts at op ``prev.num_ops + k * nxt.num_ops``. Its ops keep their
    own dependencies (shifted); its ops with none wait, rank by rank, for the
    terminal ops of what ran just before (``prev`` for copy 0, copy k-1 otherwise).
    """
    n0, n = prev.num_ops, nxt.num_ops
    own = np.diff(nxt.dep_ptr)
    is_root = own == 0
    rank = nxt.rank.astype(np.int64)

    def terminals(trace):
        ops, ranks = terminal_ops(trace)
        order = np.argsort(ranks, kind="stable")
        return ops[order], np.searchsorted(ranks[order], np.arange(trace.ranks + 1))

    t_prev, b_prev = terminals(prev)
    t_next, b_next = terminals(nxt) if copies > 1 else (t_prev, b_prev)
    counts, slots = [], []
    for k in range(copies):
        t_ops, bounds, base = (t_prev, b_prev, 0) if k == 0 else (t_next, b_next, n0 + (k - 1) * n)
        extra = np.where(is_root, bounds[rank + 1] - bounds[rank], 0)
        roots = np.flatnonzero(is_root)
        root_deps = t_ops[_ranges(bounds[rank[roots]], extra[roots])] + base
        c = own + extra
        idx = np.empty(c.sum(), np.int64)
        from_root = np.repeat(is_root, c)
        idx[~from_root] = nxt.dep_idx + n0 + k * n
        idx[from_root] = root_deps
        counts.append(c)
        slots.append(idx)
    ptr = np.concatenate([prev.dep_ptr[:-1], prev.dep_ptr[-1] + np.concatenate(
        [[0], np.cumsum(np.concatenate(counts))])])
    return ptr, np.concatenate([prev.dep_idx] + slots)


def _merged_tags(first, second):
    tags = list(first.tags)
    for name in second.tags:
        if name not in tags:
            tags.append(name)
    remap = np.array([tags.index(name) for name in second.tags] + [-1], np.int16)
    return tags, remap[second.tag]  # tag -1 picks the trailing -1


def _joined(first, second, copies, iteration_step, iteration_base=0):
    """``first`` followed by ``copies`` copies of ``second``.

    Copy ``k``'s iterations are shifted by ``iteration_base + k * iteration_step``.
    """
    if first.ranks != second.ranks:
        raise TraceError(f"cannot join traces of {first.ranks} and {second.ranks} ranks")
    dep_ptr, dep_idx = _chained_deps(first, second, copies)
    tags, tag2 = _merged_tags(first, second)
    offsets = np.repeat(iteration_base + np.arange(copies, dtype=np.int64) * iteration_step,
                        second.num_ops)

    def col(name):
        return np.concatenate([getattr(first, name), np.tile(getattr(second, name), copies)])

    return Trace(first.ranks, col("kind"), col("rank"), col("peer"), col("size"), col("duration"),
                 col("flops"), np.concatenate([first.iteration, np.tile(second.iteration, copies)
                                               + offsets]),
                 np.concatenate([first.tag, np.tile(tag2, copies)]), dep_ptr, dep_idx,
                 tags=tags, metadata=first.metadata)


def concat(first, second, iteration_offset=0):
    """Run ``second`` after ``first``, rank by rank (MPI program order).

    Every op of ``second`` with no dependency waits for the ops of ``first`` that
    touch its rank last (see :func:`terminal_ops`). Ranks, tags and metadata of
    ``first`` are kept; ``second``'s iterations are shifted by ``iteration_offset``.

    Examples
    --------
    >>> b = TraceBuilder(2); _ = b.message(0, 1, 8); t = b.build()
    >>> both = concat(t, t)
    >>> both.num_messages, both.deps(1).tolist()
    (2, [0])
    """
    return _joined(first, second, 1, 0, iteration_offset)


def repeat(trace, iterations):
    """``iterations`` copies of a trace, each after the previous one (see :func:`concat`).

    Copy ``k`` has its iteration indices shifted by ``k * trace.num_iterations``.

    Examples
    --------
    >>> b = TraceBuilder(2); _ = b.message(0, 1, 8); t = b.build()
    >>> r = repeat(t, 3)
    >>> r.num_iterations, r.deps(2).tolist()
    (3, [1])
    """
    if isinstance(iterations, bool) or not isinstance(iterations, (int, np.integer)) or iterations < 1:
        raise TraceError(f"iterations must be an integer >= 1, got {iterations!r}")
    if iterations == 1:
        return trace
    span = trace.num_iterations
    # Copy k of the repeated part is iteration block k + 1.
    return _joined(trace, trace, int(iterations) - 1, span, span)


# -- files ------------------------------------------------------------------------------

def save_trace(trace, path):
    """Save a trace as JSON (``.json``) or compressed numpy columns (``.npz``).

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
    path = str(path)
    if not path.endswith((".npz", ".json")):
        raise TraceError(f"unknown trace format for {path!r}: use .json or .npz")
    header = {"schema": SCHEMA, "ranks": trace.ranks, "tags": trace.tags,
              "metadata": {**trace.metadata, "netsim_version": _version()}}
    try:
        if path.endswith(".npz"):
            _write_npz(path, {"header": np.array(json.dumps(header)), **_arrays(trace)})
        else:
            with open(path, "w") as f:
                json.dump({**header, "ops": _ops_json(trace)}, f, indent=None,
                          separators=(",", ":"))
    except OSError as exc:
        raise TraceError(f"cannot write trace {path}: {exc.strerror or exc}") from None


def _write_npz(path, arrays):
    """Like ``numpy.savez_compressed``, but with fixed timestamps: same trace, same bytes."""
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        for name, arr in arrays.items():
            info = zipfile.ZipInfo(f"{name}.npy", date_time=(1980, 1, 1, 0, 0, 0))
            info.compress_type = zipfile.ZIP_DEFLATED
            with zf.open(info, "w", force_zip64=True) as f:
                np.lib.format.write_array(f, np.asanyarray(arr), allow_pickle=False)


def _arrays(trace):
    return {k: getattr(trace, k) for k in _COLUMNS}


def _ops_json(trace):
    ops = []
    for i in range(trace.num_ops):
        op = {"id": i}
        if trace.kind[i] == MESSAGE:
            op.update(type="message", src=int(trace.rank[i]), dst=int(trace.peer[i]),
                      bytes=_num(trace.size[i]))
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
    unknown = set(cols) - set(_COLUMNS)
    if unknown:
        raise TraceError(f"{path}: unknown arrays {sorted(unknown)}")
    return Trace(header["ranks"], tags=header.get("tags", ()), metadata=header.get("metadata"), **cols)


def _check_header(header, where):
    if not isinstance(header, dict):
        raise TraceError(f"{where}: top level must be an object")
    schema = header.get("schema", SCHEMA)
    if schema != SCHEMA:
        raise TraceError(f"{where}: unsupported schema {schema!r} (this netsim reads {SCHEMA})")
    if "ranks" not in header:
        raise TraceError(f"{where}: missing 'ranks'")
    tags = header.get("tags", [])
    if not isinstance(tags, list) or not all(isinstance(t, str) for t in tags):
        raise TraceError(f"{where}: 'tags' must be a list of strings")
    if not isinstance(header.get("metadata", {}), dict):
        raise TraceError(f"{where}: 'metadata' must be an object")
    return header


_OP_KEYS = {"id", "type", "rank", "src", "dst", "bytes", "seconds", "flops", "deps", "iteration", "tag"}


def _from_json(doc):
    doc = _check_header(doc, "trace")
    ops = doc.get("ops")
    if not isinstance(ops, list):
        raise TraceError("trace: 'ops' must be a list")
    ranks = _check_ranks(doc["ranks"])
    b = TraceBuilder(ranks, metadata=doc.get("metadata"))
    ids = {}
    raw_deps = []
    for pos, op in enumerate(ops):
        if not isinstance(op, dict):
            raise TraceError(f"op #{pos}: must be an object")
        oid = op.get("id", pos)
        if isinstance(oid, bool) or not isinstance(oid, int):
            raise TraceError(f"op #{pos}: id must be an integer, got {oid!r}")
        unknown = set(op) - _OP_KEYS
        if unknown:
            raise TraceError(f"op {oid}: unknown keys {sorted(unknown)}; known: {sorted(_OP_KEYS)}")
        if oid in ids:
            raise TraceError(f"op #{pos}: duplicate id {oid}")
        ids[oid] = pos
        deps = op.get("deps", [])
        if not isinstance(deps, list):
            raise TraceError(f"op {oid}: deps must be a list")
        raw_deps.append((oid, deps))
        kind = op.get("type")
        it, tag = op.get("iteration", 0), op.get("tag")
        if tag is not None and not isinstance(tag, str):
            raise TraceError(f"op {oid}: tag must be a string")
        for key in ("rank", "src", "dst", "iteration"):
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
            b.message(op["src"], op["dst"], op["bytes"], (), it, tag)
        elif kind == "compute":
            if "rank" not in op:
                raise TraceError(f"op {oid}: compute op without 'rank'")
            if op.get("seconds") is None and op.get("flops") is None:
                raise TraceError(f"op {oid}: compute op needs 'seconds' or 'flops'")
            b.compute(op["rank"], op.get("seconds"), op.get("flops"), (), it, tag)
        else:
            raise TraceError(f"op {oid}: type must be 'message' or 'compute', got {kind!r}")
    for pos, (oid, deps) in enumerate(raw_deps):
        resolved = []
        for d in deps:
            if isinstance(d, bool) or not isinstance(d, int) or d not in ids:
                raise TraceError(f"op {oid} depends on missing op {d!r}")
            resolved.append(ids[d])
        b._deps[pos] = resolved
    tags = doc.get("tags")
    if tags:
        for name in tags:
            b._tags.setdefault(name, len(b._tags))
    return b.build()
