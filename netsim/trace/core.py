"""Traces: per-rank dependency graphs of compute ops and messages, stored column-wise.

A trace uses the vocabulary of MLCommons Chakra (compute nodes, communication
nodes, data dependencies) without its protobuf. Op ``i`` is row ``i`` of a set of
numpy columns:

========== ======= =============================================================
column     dtype   meaning
========== ======= =============================================================
kind       uint8   ``COMPUTE`` (0), ``MESSAGE`` (1) or ``COLLECTIVE`` (2)
rank       int32   the rank that computes, the message's source rank, or the
                   collective's owner (its root, else its group's first rank)
peer       int32   the message's destination rank (-1 for compute and collectives)
size       float64 message or collective bytes (0 for compute); 0 or in
                   [1, 2^53] (sub-byte sizes such as denormals are refused: they carry no
                   byte and their transfer time underflows; 2^53 is
                   :data:`netsim.units.MAX_BYTES`); need not be a whole
                   number (NCCL's model refuses fractional bytes at replay)
duration   float64 compute seconds; NaN when the op is given in FLOPs instead
flops      float64 compute FLOPs (0 when given as a duration)
iteration  int32   the training iteration the op belongs to
tag        int16   index into ``tags`` (a short label such as "push"), -1 for none
channel    int16   which of several paths between its two ranks a message takes,
                   >= 0 (see :mod:`netsim.network.compiled` for the route of each channel);
                   0 for compute ops
priority   int16   a message's urgency, larger = more urgent, any int16; read by
                   the engine's strict-priority option, ignored by max-min
                   sharing (a collective's flows take its priority); 0 for
                   compute ops
spec       int32   a collective's row of ``specs`` (:class:`netsim.trace.collop.Specs`:
                   operation, group, root, algorithm hint); -1 for the others
queue      int32   a message's send queue (a stream, a connection), -1 for none:
                   the messages of one queue, all from one sender, leave it one
                   after another in op order (a queued message's first byte
                   goes once the one before it has been delivered; its latency
                   may pass before); -1 for compute ops and collectives
========== ======= =============================================================

A collective op is one call of a communication library kept whole (Chakra's
``COMM_COLL_NODE``); :func:`netsim.simulate` expands it with the library it
chooses (:mod:`netsim.comm.library`). Its part on each member rank waits for the
collective's dependencies on that rank (a dependency on no member gates every
part), and an op waiting for it waits for its part on the op's own rank (or for
all of it, from a rank outside the group).

Dependencies are stored in CSR form: the ops that op ``i`` waits for are
``dep_idx[dep_ptr[i]:dep_ptr[i + 1]]``. An op starts when every op it waits for
has completed; a message completes when its last byte arrives.

Iteration ``k`` ends when its last op ends; per-iteration times are the gaps
between successive iteration ends (the first is measured from time 0).

Traces are saved as JSON (one object per op, for people) or ``.npz`` (the columns
themselves, for size) by :mod:`netsim.formats.tracefile`; traces are joined and repeated by
:mod:`netsim.trace.ops`. A million-message trace is a few tens of MB in memory and
is never expanded into Python objects except while JSON is being read or written.
"""

import math
from types import MappingProxyType

import numpy as np

from netsim.checks import check_int, check_real, is_real
from netsim.trace.collop import Specs
from netsim.trace.collop import owner as spec_owner
from netsim.trace.collop import spec as make_spec
from netsim.errors import TraceError
from netsim.trace.graph import check_acyclic, ranges, successors
from netsim.units import MAX_BYTES

__all__ = [
    "COMPUTE",
    "MESSAGE",
    "COLLECTIVE",
    "Trace",
    "TraceBuilder",
    "check_trace",
    "MAX_RANKS",
    "HOST_GAP",
    "deps_csr",
    "ranges",
    "successors",
]

COMPUTE = 0
MESSAGE = 1
COLLECTIVE = 2
MAX_RANKS = 2**31 - 1  # ranks are int32
_ARRAYS = ("kind", "rank", "peer", "size", "duration", "flops", "iteration", "tag", "channel",
           "priority", "spec", "queue", "dep_ptr", "dep_idx")


def check_trace(value, name="trace"):
    """``value`` if it is a :class:`Trace`; else a :class:`TraceError` naming what it is.

    What every function taking a trace checks first, so that ``simulate(None, G)`` says
    what it needs instead of failing on a missing attribute deep inside.

    Examples
    --------
    >>> check_trace("t.npz")
    Traceback (most recent call last):
    ...
    netsim.errors.TraceError: trace must be a netsim Trace (TraceBuilder(...).build(), load_trace(path)), got str 't.npz'
    """
    if not isinstance(value, Trace):
        raise TraceError(f"{name} must be a netsim Trace (TraceBuilder(...).build(), "
                         f"load_trace(path)), got {type(value).__name__} {value!r:.40}")
    return value


class Trace:
    """A validated, immutable trace held as numpy columns.

    Build one with :class:`TraceBuilder` (a few ops, from Python) or directly from
    arrays (generators of millions of ops). The constructor validates everything
    and raises :class:`~netsim.errors.TraceError` naming the first offending op.

    The columns are read-only views (no copy: an array passed in stays the
    caller's, but cannot be written through the trace) and ``metadata`` is a
    read-only mapping; :meth:`with_metadata` derives a trace with other metadata.

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
    channel, priority : array_like, optional
        The message columns of the module docstring; None means 0 for every op.
    spec : array_like, optional
        Each collective op's row of ``specs``; None means -1 (no collective).
    queue : array_like, optional
        Each message's send queue; None means -1 (none).
    specs : netsim.trace.collop.Specs, optional
        The collectives' specifications; None for an empty table.

    Examples
    --------
    >>> t = Trace(2, kind=[MESSAGE, COMPUTE], rank=[0, 1], peer=[1, -1],
    ...           size=[1e6, 0], duration=[0, 1e-3], dep_ptr=[0, 0, 1], dep_idx=[0])
    >>> t.num_ops, t.num_messages, t.total_bytes
    (2, 1, 1000000.0)
    >>> t.deps(1).tolist()
    [0]
    >>> t.size[0] = 5.0
    Traceback (most recent call last):
    ...
    ValueError: assignment destination is read-only
    """

    def __init__(self, ranks, kind, rank, peer=None, size=None, duration=None, flops=None,
                 iteration=None, tag=None, dep_ptr=None, dep_idx=None, tags=(), metadata=None,
                 channel=None, priority=None, spec=None, specs=None, queue=None):
        self.kind = np.ascontiguousarray(kind, dtype=np.uint8)
        n = len(self.kind)
        self.rank = _column(rank, n, np.int32, None, "rank")
        self.peer = _column(peer, n, np.int32, -1, "peer")
        self.size = _column(size, n, np.float64, 0.0, "size")
        self.duration = _column(duration, n, np.float64, 0.0, "duration")
        self.flops = _column(flops, n, np.float64, 0.0, "flops")
        self.iteration = _column(iteration, n, np.int32, 0, "iteration")
        self.tag = _column(tag, n, np.int16, -1, "tag")
        self.channel = _column(channel, n, np.int16, 0, "channel")
        self.priority = _column(priority, n, np.int16, 0, "priority")
        self.spec = _column(spec, n, np.int32, -1, "spec")
        self.queue = _column(queue, n, np.int32, -1, "queue")
        if specs is not None and not isinstance(specs, Specs):
            raise TraceError(f"specs must be a netsim.trace.collop.Specs, got {type(specs).__name__}")
        self.specs = Specs.empty() if specs is None else specs
        if dep_ptr is None:
            if dep_idx is not None and len(dep_idx):
                raise TraceError("dep_idx given without dep_ptr")
            dep_ptr, dep_idx = np.zeros(n + 1, np.int64), np.zeros(0, np.int64)
        self.dep_ptr = np.ascontiguousarray(dep_ptr, dtype=np.int64)
        self.dep_idx = np.ascontiguousarray(dep_idx, dtype=np.int64)
        self.tags = [str(t) for t in tags]
        self.metadata = MappingProxyType(dict(metadata or {}))
        self.ranks = check_int(ranks, "ranks", 1, MAX_RANKS, error=TraceError)
        self._validate()
        for name in _ARRAYS:
            column = getattr(self, name).view()
            column.flags.writeable = False
            setattr(self, name, column)

    def with_metadata(self, **updates):
        """A trace with the same ops (sharing the arrays) and updated metadata.

        Parameters
        ----------
        **updates
            Metadata keys to add or replace.

        Returns
        -------
        Trace

        Examples
        --------
        >>> b = TraceBuilder(2, metadata={"paradigm": "demo"}); _ = b.message(0, 1, 8)
        >>> t = b.build()
        >>> u = t.with_metadata(seed=3)
        >>> dict(u.metadata), dict(t.metadata), u.size is t.size
        ({'paradigm': 'demo', 'seed': 3}, {'paradigm': 'demo'}, True)
        """
        new = object.__new__(Trace)
        new.__dict__.update(self.__dict__)
        new.metadata = MappingProxyType({**self.metadata, **updates})
        return new

    def replace(self, **changes):
        """A validated trace with some columns (or ``metadata``, ``tags``) replaced.

        Every other column, collective specifications included, is kept, so
        code that changes durations or FLOPs cannot drop channels, priorities
        or collectives by omission.

        Parameters
        ----------
        **changes
            Column names of the module docstring (``duration``, ``flops``, ...),
            ``metadata`` or ``tags``.

        Returns
        -------
        Trace

        Examples
        --------
        >>> b = TraceBuilder(2); _ = b.compute(0, seconds=1.0); _ = b.message(0, 1, 8, priority=2)
        >>> u = b.build().replace(duration=[2.0, 0.0])
        >>> u.duration.tolist(), u.priority.tolist()
        ([2.0, 0.0], [0, 2])
        """
        unknown = set(changes) - set(_ARRAYS) - {"metadata", "tags"}
        if unknown:
            raise TraceError(f"replace() takes trace columns, metadata or tags, not "
                             f"{sorted(unknown)}")
        kw = {name: getattr(self, name) for name in _ARRAYS}
        kw.update(tags=self.tags, metadata=dict(self.metadata), specs=self.specs)
        kw.update(changes)
        return Trace(self.ranks, **kw)

    def __getstate__(self):
        # A mappingproxy cannot be pickled: send a plain dict and rebuild the proxy.
        return {**self.__dict__, "metadata": dict(self.metadata)}

    def __setstate__(self, state):
        self.__dict__.update(state)
        self.metadata = MappingProxyType(dict(state["metadata"]))
        for name in _ARRAYS:
            getattr(self, name).flags.writeable = False

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
    def is_collective(self):
        """Boolean mask of the collective ops."""
        return self.kind == COLLECTIVE

    @property
    def num_collectives(self):
        """Number of collective ops."""
        return int(np.count_nonzero(self.is_collective))

    def group(self, op):
        """The member ranks of collective op ``op`` (int32 array).

        Examples
        --------
        >>> b = TraceBuilder(4); c = b.collective("allreduce", [1, 3], 1e6)
        >>> b.build().group(c).tolist()
        [1, 3]
        """
        return self.specs.group(int(self.spec[op]))

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

    def tagged(self, name):
        """Whether each op carries the tag ``name`` (all False when no op does).

        Examples
        --------
        >>> b = TraceBuilder(1); _ = b.compute(0, 1.0, tag="idle"); _ = b.compute(0, 1.0)
        >>> t = b.build(); t.tagged("idle").tolist(), t.tagged("push").tolist()
        ([True, False], [False, False])
        """
        if name not in self.tags:
            return np.zeros(self.num_ops, bool)
        return self.tag == self.tags.index(name)

    def deps(self, op):
        """The ops that ``op`` waits for, as an array of op indices.

        Examples
        --------
        >>> b = TraceBuilder(2); a = b.compute(0, seconds=1.0); m = b.message(0, 1, 8, deps=[a])
        >>> b.build().deps(m).tolist()
        [0]
        """
        return self.dep_idx[self.dep_ptr[op]:self.dep_ptr[op + 1]]

    def __len__(self):
        return self.num_ops

    def __repr__(self):
        colls = f"collectives={self.num_collectives}, " if self.num_collectives else ""
        return (f"Trace(ranks={self.ranks}, ops={self.num_ops}, messages={self.num_messages}, "
                f"{colls}bytes={self.total_bytes:g}, iterations={self.num_iterations})")

    def compute_seconds(self, device_flops=None):
        """Duration of every op in seconds (messages get 0).

        Compute ops given in FLOPs are divided by ``device_flops`` (FLOP/s), taken
        from the argument or else from ``metadata["device_flops"]``.

        Parameters
        ----------
        device_flops : float, optional
            FLOP/s of the device; default ``metadata["device_flops"]``.

        Returns
        -------
        ndarray of float
            One entry per op.

        Raises
        ------
        TraceError
            If an op is given in FLOPs and no positive device throughput is known.

        Examples
        --------
        >>> b = TraceBuilder(2, metadata={"device_flops": 1e12})
        >>> _ = b.compute(0, flops=3e9); _ = b.message(0, 1, 8)
        >>> b.build().compute_seconds().tolist()
        [0.003, 0.0]
        """
        if device_flops is not None:  # given: valid whether or not an op needs it
            check_real(device_flops, "device_flops", lo=0, strict=True, error=TraceError)
        seconds = np.where(self.kind == COMPUTE, self.duration, 0.0)
        need = np.isnan(seconds)
        if need.any():
            rate = device_flops if device_flops is not None else self.metadata.get("device_flops")
            if not (is_real(rate) and math.isfinite(rate) and rate > 0):
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
        _first_bad(~np.isin(self.kind, (COMPUTE, MESSAGE, COLLECTIVE)), "has unknown kind",
                   self.kind)
        _first_bad((self.rank < 0) | (self.rank >= self.ranks),
                   f"names unknown rank (ranks are 0..{self.ranks - 1})", self.rank)
        msg = self.is_message
        _first_bad(msg & ((self.peer < 0) | (self.peer >= self.ranks)),
                   f"sends to unknown rank (ranks are 0..{self.ranks - 1})", self.peer)
        loop = np.flatnonzero(msg & (self.peer == self.rank))[:1]
        if len(loop):
            raise TraceError(f"op {loop[0]} is a message from a rank to itself, rank: "
                             f"{self.rank[loop[0]]}")
        _first_bad(np.isnan(self.size), "has NaN bytes", self.size)
        _first_bad(~np.isfinite(self.size) | (self.size < 0), "has invalid bytes", self.size)
        _first_bad((self.size > 0) & (self.size < 1), "has a size between 0 and 1 byte (a "
                   "message carries 0 or at least 1 byte)", self.size)
        _first_bad(self.size > MAX_BYTES, "has a size over 2^53 bytes (~9 PB, the largest whose "
                   "whole bytes a float holds exactly)", self.size)
        comp = self.kind == COMPUTE
        _first_bad(comp & (self.size != 0), "is a compute op with non-zero bytes", self.size)
        dur_nan = np.isnan(self.duration)
        _first_bad(comp & ~dur_nan & (~np.isfinite(self.duration) | (self.duration < 0)),
                   "has invalid duration", self.duration)
        _first_bad(~np.isfinite(self.flops) | (self.flops < 0), "has invalid FLOPs", self.flops)
        _first_bad(comp & dur_nan & (self.flops <= 0), "has NaN duration and no FLOPs", self.duration)
        _first_bad(~comp & (dur_nan | (self.duration != 0)), "is a message or collective with a "
                   "duration", self.duration)
        _first_bad(self.iteration < 0, "has negative iteration", self.iteration)
        _first_bad((self.tag < -1) | (self.tag >= len(self.tags)),
                   f"has tag outside the {len(self.tags)} tag names", self.tag)
        _first_bad(self.channel < 0, "has a negative channel", self.channel)
        _first_bad(comp & (self.channel != 0), "is a compute op with a channel (only messages "
                   "take paths; compute ops have channel 0)", self.channel)
        _first_bad(self.is_collective & (self.channel != 0), "is a collective with a channel "
                   "(its library chooses the channels)", self.channel)
        _first_bad(comp & (self.priority != 0), "is a compute op with a priority (only messages "
                   "share links; compute ops have priority 0)", self.priority)
        self._validate_collectives()
        self._validate_queues(msg)
        if len(self.dep_idx):
            bad = (self.dep_idx < 0) | (self.dep_idx >= n)
            if bad.any():
                k = int(np.flatnonzero(bad)[0])
                raise TraceError(f"op {_owner(self.dep_ptr, k)} depends on missing op "
                                 f"{self.dep_idx[k]}")
            del bad
            forward = False
            for lo in range(0, n, _CHUNK):   # in chunks of ops: no owner array of every entry
                hi = min(n, lo + _CHUNK)
                a, b = self.dep_ptr[lo], self.dep_ptr[hi]
                owner = np.repeat(np.arange(lo, hi, dtype=np.int64), np.diff(self.dep_ptr[lo:hi + 1]))
                deps = self.dep_idx[a:b]
                selfdep = np.flatnonzero(deps == owner)[:1]
                if len(selfdep):
                    raise TraceError(f"op {owner[selfdep[0]]} depends on itself")
                forward = forward or bool(np.any(deps > owner))
            if forward:
                check_acyclic(self)


    def _validate_collectives(self):
        coll = self.is_collective
        _first_bad(~coll & (self.spec != -1), "is not a collective but has a spec", self.spec)
        if not coll.any():
            return
        specs = self.specs
        specs.validate(self.ranks)
        _first_bad(coll & ((self.spec < 0) | (self.spec >= len(specs))),
                   f"is a collective without a spec (specs are 0..{len(specs) - 1})", self.spec)
        _first_bad(coll & (self.peer != -1), "is a collective with a peer", self.peer)
        _first_bad(coll & (self.flops != 0), "is a collective with FLOPs", self.flops)
        ops = np.flatnonzero(coll)
        owner = np.array([spec_owner(specs.row(j)) for j in range(len(specs))], np.int64)
        bad = ops[self.rank[ops] != owner[self.spec[ops]]]
        if len(bad):
            i = int(bad[0])
            raise TraceError(f"op {i}: a collective's rank is its owner (its root, else its "
                             f"group's first rank) {int(owner[self.spec[i]])}, got "
                             f"{int(self.rank[i])}")

    def _validate_queues(self, msg):
        queued = self.queue >= 0
        _first_bad(~msg & queued, "is not a message but has a queue", self.queue)
        _first_bad(self.queue < -1, "has a negative queue", self.queue)
        if not queued.any():
            return
        ops = np.flatnonzero(queued)
        order = np.lexsort((ops, self.queue[ops]))
        q, sender = self.queue[ops][order], self.rank[ops][order]
        other = np.flatnonzero((q[1:] == q[:-1]) & (sender[1:] != sender[:-1]))
        if len(other):
            a, b = ops[order][other[0]], ops[order][other[0] + 1]
            raise TraceError(f"op {b} is queued on queue {q[other[0]]} of rank {sender[other[0]]} "
                             f"(op {a}) but sends from rank {self.rank[b]}: a queue belongs to "
                             f"one sender")

    def queue_predecessors(self):
        """Per op, the message before it on its queue (-1 for none).

        Examples
        --------
        >>> b = TraceBuilder(2)
        >>> _ = [b.message(0, 1, 8, queue=0) for _ in range(3)]
        >>> b.build().queue_predecessors().tolist()
        [-1, 0, 1]
        """
        prev = np.full(self.num_ops, -1, np.int64)
        ops = np.flatnonzero(self.queue >= 0)
        if len(ops):
            order = ops[np.lexsort((ops, self.queue[ops]))]
            same = self.queue[order[1:]] == self.queue[order[:-1]]
            prev[order[1:][same]] = order[:-1][same]
        return prev


#: The tag of a compute op that stands for host time between a profile's kernels (GPU idle):
#: :mod:`netsim.formats.kineto.load` writes it; results, timelines, splits and what-ifs count it as idle.
HOST_GAP = "idle"

#: Ops per chunk of the dependency checks (bounds their memory on traces of 10^7 ops).
_CHUNK = 1 << 20


def _owner(dep_ptr, k):
    """The op whose dependency list holds entry ``k``."""
    return int(np.searchsorted(dep_ptr, k, side="right")) - 1


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


def _first_bad(mask, what, values):
    if mask.any():
        op = int(np.flatnonzero(mask)[0])
        raise TraceError(f"op {op} {what}: {values[op].item()!r}")  # 0.875, not np.float64(0.875)


def _not_deps(deps):
    """The error for ``deps`` that are not a sequence of op ids (:meth:`TraceBuilder.message`)."""
    return TraceError(f"deps must be a sequence of op ids (deps=[{deps!r}]), got "
                      f"{type(deps).__name__} {deps!r:.40}")


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
                                      "iteration", "tag", "channel", "priority", "spec",
                                      "queue")}
        self._deps = []
        self._tags = {}
        self._specs = {}
        self._made = {}   # collective arguments -> their spec, made once

    def _add(self, kind, rank, peer, size, duration, flops, deps, iteration, tag, channel=0,
             priority=0, spec=-1, queue=-1):
        # deps first, so that a refused op leaves no column longer than the rest; a type test
        # and list()'s own TypeError cost a fraction of a test for iterability (once per op)
        if type(deps) is str or type(deps) is bytes:   # iterable, but of characters or bytes
            raise _not_deps(deps)
        try:
            deps = list(deps)
        except TypeError:
            raise _not_deps(deps) from None
        c = self._cols
        c["kind"].append(kind)
        c["rank"].append(rank)
        c["peer"].append(peer)
        c["size"].append(size)
        c["duration"].append(duration)
        c["flops"].append(flops)
        c["iteration"].append(iteration)
        c["tag"].append(-1 if tag is None else self.add_tag(tag))
        c["channel"].append(channel)
        c["priority"].append(priority)
        c["spec"].append(spec)
        c["queue"].append(queue)
        self._deps.append(deps)
        return len(self._deps) - 1

    def message(self, src, dst, nbytes, deps=(), iteration=0, tag=None, channel=0, priority=0,
                queue=-1):
        """Add a message of ``nbytes`` from rank ``src`` to rank ``dst``; return its op id.

        Parameters
        ----------
        src, dst : int
            Sending and receiving rank.
        nbytes : float
            Message size in bytes.
        deps : sequence of int, optional
            Op ids the message waits for (ops added before or after it).
        iteration : int, optional
            Training iteration the message belongs to.
        tag : str, optional
            Short label such as ``"push"``.
        channel : int, optional
            Which of the paths between ``src`` and ``dst`` the message takes
            (>= 0; 0 is the one route every message took before channels).
        priority : int, optional
            Larger is more urgent; read by the engine's strict-priority option,
            ignored by max-min sharing.
        queue : int, optional
            The sender's queue the message waits in (-1: none): messages of one
            queue leave in op order, each once the one before is delivered.

        Returns
        -------
        int
            The op id, for later ops' ``deps``.

        Examples
        --------
        >>> b = TraceBuilder(3)
        >>> first = b.message(0, 1, 1e6, tag="push")
        >>> b.message(1, 2, 1e6, deps=[first], tag="push")
        1
        >>> b.build().deps(1).tolist()
        [0]
        >>> _ = b.message(0, 2, 64, channel=1, priority=3)
        >>> t = b.build(); t.channel.tolist(), t.priority.tolist()
        ([0, 0, 1], [0, 0, 3])
        """
        return self._add(MESSAGE, src, dst, nbytes, 0.0, 0.0, deps, iteration, tag, channel,
                         priority, queue=queue)

    def compute(self, rank, seconds=None, flops=None, deps=(), iteration=0, tag=None):
        """Add a compute op on ``rank``; return its op id.

        Parameters
        ----------
        rank : int
            The rank that computes.
        seconds : float, optional
            Duration; when None, ``flops`` at the device rate
            (``metadata["device_flops"]`` or ``simulate(device_flops=...)``).
        flops : float, optional
            Floating-point operations of the op.
        deps, iteration, tag
            As for :meth:`message`.

        Returns
        -------
        int

        Raises
        ------
        TraceError
            If neither ``seconds`` nor ``flops`` is given.

        Examples
        --------
        >>> b = TraceBuilder(1)
        >>> b.compute(0, seconds=1e-3), b.compute(0, flops=2e9, deps=[0])
        (0, 1)
        >>> b.build().compute_seconds(device_flops=1e12).tolist()
        [0.001, 0.002]
        """
        if seconds is None and flops is None:
            raise TraceError("a compute op needs seconds or flops")
        duration = float("nan") if seconds is None else seconds
        return self._add(COMPUTE, rank, -1, 0.0, duration, flops or 0.0, deps, iteration, tag)

    def collective(self, op, ranks, nbytes, root=None, algorithm=None, deps=(), iteration=0,
                   tag=None, priority=0, segments=0, element=0):
        """Add one collective call among ``ranks``; return its op id.

        Parameters
        ----------
        op : str
            One of :data:`netsim.trace.collop.OPS`: ``"allreduce"``, ``"allgather"``,
            ``"reduce_scatter"``, ``"broadcast"``, ``"reduce"``, ``"alltoall"``.
        ranks : sequence of int
            The group, in the order the library numbers its members.
        nbytes : float
            Bytes as nccl-tests counts them (see :mod:`netsim.trace.collop`).
        root : int, optional
            The root of broadcast and reduce (default: the group's first rank).
        algorithm : str, optional
            A hint (:data:`netsim.trace.collop.HINTS`); None: the library chooses.
        deps, iteration, tag, priority
            As for :meth:`message`; a dependency gates the member parts on its
            own ranks (see :mod:`netsim.trace.core`).
        segments : int, optional
            Pipeline segments of MPICH's ``lp`` (0: its default).
        element : int, optional
            Bytes per element for whole-element chunks (0: an even cut).

        Returns
        -------
        int

        Examples
        --------
        >>> b = TraceBuilder(4)
        >>> c = b.collective("broadcast", [0, 1, 2, 3], 1e6, root=2, algorithm="mst")
        >>> t = b.build(); t.num_collectives, int(t.rank[c]), t.specs.row(0).root
        (1, 2, 2)
        """
        try:   # the same call again (a layer's allreduce each micro-batch) is looked up
            memo = (op, tuple(ranks), root, algorithm, segments, element)
            key = self._made.get(memo)
        except TypeError:   # unhashable: make_spec says what is wrong with it
            memo, key = None, None
        if key is None:
            try:   # an unknown op or algorithm is refused here, naming the op
                key = make_spec(op, ranks, root, algorithm, segments, element)
            except TraceError as exc:
                raise TraceError(f"op {len(self._deps)}: {exc}") from None
            if memo is not None:
                self._made[memo] = key
        k = self._specs.setdefault(key, len(self._specs))
        return self._add(COLLECTIVE, spec_owner(key), -1, nbytes, 0.0, 0.0, deps, iteration,
                         tag, priority=priority, spec=k)

    def add_tag(self, name):
        """Register a tag name (if new) without using it; return its index.

        Tags are numbered in the order they are first seen; a name registered
        here keeps its place in ``Trace.tags`` even if no op uses it.

        Examples
        --------
        >>> b = TraceBuilder(2); _ = b.message(0, 1, 8, tag="push")
        >>> b.add_tag("pull"), b.add_tag("push"), b.build().tags
        (1, 0, ['push', 'pull'])
        """
        return self._tags.setdefault(str(name), len(self._tags))

    def __len__(self):
        return len(self._deps)

    def build(self):
        """Return the validated :class:`Trace` of the ops added so far.

        Raises
        ------
        TraceError
            Naming the first offending op (unknown rank, missing dependency, cycle, ...).

        Examples
        --------
        >>> b = TraceBuilder(2); _ = b.message(0, 1, 8, deps=[5])
        >>> b.build()
        Traceback (most recent call last):
        ...
        netsim.errors.TraceError: op 0 depends on missing op 5
        """
        counts = [len(d) for d in self._deps]
        dep_ptr = np.zeros(len(counts) + 1, np.int64)
        np.cumsum(counts, out=dep_ptr[1:])
        dep_idx = [x for d in self._deps for x in d]
        c = self._cols
        if dep_idx and any(isinstance(x, bool) or not isinstance(x, (int, np.integer)) for x in dep_idx):
            raise TraceError("dependencies must be integer op ids")
        return Trace(self.ranks, np.array(c["kind"], np.uint8), c["rank"], c["peer"], c["size"],
                     c["duration"], c["flops"], c["iteration"], c["tag"], dep_ptr,
                     np.array(dep_idx, np.int64), tags=list(self._tags), metadata=self.metadata,
                     channel=c["channel"], priority=c["priority"], spec=c["spec"],
                     specs=Specs.from_rows(list(self._specs)), queue=c["queue"])



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
