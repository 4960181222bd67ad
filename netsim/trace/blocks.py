"""The block trace builder: numpy blocks of ops, built into one :class:`~netsim.trace.core.Trace`.

:class:`TraceBuilder <netsim.trace.core.TraceBuilder>` adds one op at a time from
Python; :class:`BlockBuilder` adds a *block* of ops at a time, each column a
numpy array (or one value for the whole block), so a generator of millions of
ops never loops over ops in Python. It keeps the registries a trace needs
(tag names, collective specifications), both numbered in order of first use,
and ``build`` concatenates the blocks in the order they were added.

What an op waits for is the caller's rule: the MPICH-style schedules of
:mod:`netsim.comm.collectives` (:class:`~netsim.comm.collectives.schedule.Schedule`:
each rank's latest send and receive) and the paradigms' frontier builder
(``workloads.plan.frontier.Frontier``: each rank's last compute op and the messages
it received since) both extend :class:`BlockBuilder` with theirs.

Dependencies of a block are CSR pairs ``(counts, idx)``: op ``i`` of the block
waits for ``idx[sum(counts[:i]):sum(counts[:i + 1])]``. :func:`one`,
:func:`one_row`, :func:`cols`, :func:`merge`, :func:`interleave` and
:func:`rows` make them with numpy, without a Python loop over ops.

Examples
--------
>>> b = BlockBuilder(3)
>>> c = b.add(COMPUTE, [0, 1], flops=1e6, tag=b.tag("forward"), deps=cols([-1, -1]))
>>> m = b.add(MESSAGE, [0, 1], peer=2, size=400.0, tag=b.tag("push"), deps=one(c))
>>> t = b.build({"paradigm": "demo"})
>>> t.num_messages, t.deps(int(m[1])).tolist(), t.tags
(2, [1], ['forward', 'push'])
"""

import numpy as np

from netsim.trace.collop import Specs
from netsim.errors import TraceError
from netsim.trace.core import COMPUTE, MESSAGE, Trace, deps_csr, ranges

__all__ = ["BlockBuilder", "one", "one_row", "cols", "merge", "interleave", "rows"]

# The trace's op columns a block carries, with the dtype each block is stored in.
_COLUMNS = (("kind", np.uint8), ("rank", np.int64), ("peer", np.int64), ("size", np.float64),
            ("flops", np.float64), ("iteration", np.int64), ("tag", np.int16),
            ("priority", np.int16), ("spec", np.int32), ("queue", np.int32),
            ("duration", np.float64))
# What build() hands over to the trace (the dependency lists too); ``extra`` columns stay.
_TRACE_COLUMNS = frozenset(name for name, _ in _COLUMNS) | {"counts", "idx"}


def one(ops):
    """CSR deps where op ``i`` waits for ``ops[i]`` alone.

    Examples
    --------
    >>> [x.tolist() for x in one([4, 7])]
    [[1, 1], [4, 7]]
    """
    ops = np.asarray(ops, np.int64).ravel()
    return np.ones(len(ops), np.int64), ops


def one_row(ops):
    """CSR deps of a single op waiting for every op of ``ops``.

    Examples
    --------
    >>> [x.tolist() for x in one_row([4, 7])]
    [[2], [4, 7]]
    """
    ops = np.asarray(ops, np.int64).ravel()
    return np.array([len(ops)], np.int64), ops


def cols(*columns):
    """CSR deps from columns of op ids, -1 for none (:func:`netsim.trace.core.deps_csr`).

    Examples
    --------
    >>> [x.tolist() for x in cols([-1, 0], [3, 1])]
    [[1, 2], [3, 0, 1]]
    """
    ptr, idx = deps_csr(*columns)
    return np.diff(ptr), idx


def merge(a, b):
    """Row-wise concatenation of two CSR dependency lists of the same ops.

    Parameters
    ----------
    a : tuple of numpy.ndarray
        ``(counts, idx)`` CSR dependency lists.
    b : tuple of numpy.ndarray
        The same for the other ops.

    Examples
    --------
    >>> [x.tolist() for x in merge(one([4, 7]), cols([-1, 1]))]
    [[1, 2], [4, 7, 1]]
    """
    ca, ia = a
    cb, ib = b
    c = ca + cb
    start = np.cumsum(c) - c
    idx = np.empty(int(c.sum()), np.int64)
    idx[ranges(start, ca)] = ia
    idx[ranges(start + ca, cb)] = ib
    return c, idx


def interleave(a, b):
    """CSR deps of ops laid out as ``a[0], b[0], a[1], b[1], ...``.

    Parameters
    ----------
    a : tuple of numpy.ndarray
        ``(counts, idx)`` CSR dependency lists.
    b : tuple of numpy.ndarray
        The same for the other ops.

    Examples
    --------
    >>> [x.tolist() for x in interleave(one([4, 7]), cols([-1, 1]))]
    [[1, 0, 1, 1], [4, 7, 1]]
    """
    (ca, ia), (cb, ib) = a, b
    counts = np.empty(2 * len(ca), np.int64)
    counts[0::2], counts[1::2] = ca, cb
    starts = np.cumsum(counts) - counts
    idx = np.empty(int(counts.sum()), np.int64)
    idx[ranges(starts[0::2], ca)] = ia
    idx[ranges(starts[1::2], cb)] = ib
    return counts, idx


def rows(front, pick, mask):
    """For each entry ``i``: row ``pick[i]`` of the CSR ``front`` where ``mask[i]``, else none.

    Parameters
    ----------
    front : tuple of numpy.ndarray
        ``(counts, idx)`` CSR rows.
    pick : numpy.ndarray of int
        Row of each entry.
    mask : numpy.ndarray of bool
        Entries that take their row.

    Examples
    --------
    >>> [x.tolist() for x in rows(cols([4, 5], [-1, 6]), [1, 0, 1], [True, False, True])]
    [[2, 0, 2], [5, 6, 5, 6]]
    """
    fc, fi = front
    pick = np.asarray(pick, np.int64)
    mask = np.asarray(mask, bool)
    starts = np.cumsum(fc) - fc
    cnt = np.where(mask, fc[pick], 0)
    return cnt, fi[ranges(starts[pick][mask], fc[pick][mask])]


def _fill(values, dtype, m):
    """``values`` of a block of ``m`` ops: one per op, or one for all (a 0-d array)."""
    a = np.asarray(values, dtype)
    if a.ndim == 0 or a.shape == (m,):   # a 0-d value is expanded by column(), for all blocks
        return a
    if a.size == 1:
        return a.reshape(())
    raise TraceError(f"a column of shape {a.shape} for a block of {m} ops")


class BlockBuilder:
    """Ops appended a block at a time; :meth:`build` makes the :class:`netsim.Trace`.

    Parameters
    ----------
    ranks : int
        Ranks of the trace.

    Attributes
    ----------
    ranks : int
        Ranks of the trace.
    n : int
        Ops added so far (the id of the next op).

    Examples
    --------
    >>> b = BlockBuilder(2)
    >>> b.add(MESSAGE, [0, 1], [1, 0], 8.0, deps=cols([-1, -1])).tolist(), len(b)
    ([0, 1], 2)
    """

    def __init__(self, ranks):
        self.ranks = int(ranks)
        self.n = 0
        self._blocks = []
        self._sizes = []         # ops per block
        self._tags = {}
        self._specs = {}
        self._built = False

    def __len__(self):
        return self.n

    def tag(self, name):
        """The id of tag ``name`` (-1 for None), registering it on first use.

        Examples
        --------
        >>> b = BlockBuilder(1)
        >>> b.tag("push"), b.tag("pull"), b.tag("push"), b.tag(None)
        (0, 1, 0, -1)
        """
        return -1 if name is None else self._tags.setdefault(str(name), len(self._tags))

    def spec(self, key):
        """The row of the collective specification ``key`` in the trace's ``specs``.

        Parameters
        ----------
        key : tuple
            A specification made by :func:`netsim.trace.collop.spec`; equal keys
            share a row, numbered in order of first use.

        Examples
        --------
        >>> from netsim.trace.collop import spec
        >>> b = BlockBuilder(4)
        >>> a, c = spec("allreduce", [0, 1]), spec("broadcast", [2, 3])
        >>> b.spec(a), b.spec(c), b.spec(a)
        (0, 1, 0)
        """
        return self._specs.setdefault(key, len(self._specs))

    def add(self, kind, rank, peer=-1, size=0.0, flops=0.0, iteration=0, tag=-1, deps=None,
            priority=0, spec=-1, queue=-1, duration=None, **extra):
        """Append a block of ops laid out as given; return their ids.

        Every column but ``rank`` and ``deps`` is one value per op or one value
        for the whole block (broadcast over ``rank``).

        Parameters
        ----------
        kind : int or numpy.ndarray
            :data:`netsim.trace.core.COMPUTE`, :data:`~netsim.trace.core.MESSAGE` or
            :data:`~netsim.trace.core.COLLECTIVE` per op.
        rank : numpy.ndarray of int
            Rank of each op (a collective's owner, :func:`netsim.trace.collop.owner`).
        peer : int or numpy.ndarray
            Destination of each message; ignored (-1) for the other ops.
        size : float or numpy.ndarray
            Bytes of each message or collective.
        flops : float or numpy.ndarray
            FLOPs of each compute op.
        iteration : int or numpy.ndarray
            Iteration of each op.
        tag : int or numpy.ndarray
            Tag id of each op (:meth:`tag`), -1 for none.
        deps : tuple of numpy.ndarray, optional
            ``(counts, idx)`` CSR dependencies of the ops (ids of ops added
            before or after); None: no op of the block waits for any other.
        priority : int or numpy.ndarray
            Priority of each message (larger = more urgent; the trace's
            ``priority`` column, read by strict-priority replays).
        spec : int or numpy.ndarray
            A collective op's row of the specifications (:meth:`spec`), -1 for others.
        queue : int or numpy.ndarray
            Each message's send queue (the trace's ``queue`` column), -1 for none.
        duration : float or numpy.ndarray, optional
            Seconds of each compute op; None or NaN: a compute op with FLOPs is
            timed by the device rate (NaN in the trace), any other op takes 0 s.
        **extra : numpy.ndarray or scalar
            Further columns of the caller's own (not in the trace), read back
            with :meth:`column`; every block must give the same ones.

        Returns
        -------
        numpy.ndarray of int
            The ids of the new ops.

        Raises
        ------
        TraceError
            If a column has neither one value nor one per op.

        Examples
        --------
        >>> b = BlockBuilder(2)
        >>> b.add(COMPUTE, [0, 1], flops=5.0).tolist()
        [0, 1]
        >>> b.add(COMPUTE, [1], duration=1e-3, deps=one([1])).tolist()
        [2]
        >>> t = b.build(); t.duration.tolist(), t.deps(2).tolist()
        ([nan, nan, 0.001], [1])
        >>> b.add(MESSAGE, [0, 1], peer=[1, 0, 1])
        Traceback (most recent call last):
        ...
        netsim.errors.TraceError: a column of shape (3,) for a block of 2 ops
        """
        rank = np.asarray(rank, np.int64).ravel()
        m = len(rank)
        given = (kind, rank, peer, size, flops, iteration, tag, priority, spec, queue,
                 np.nan if duration is None else duration)   # in the order of _COLUMNS
        block = {name: _fill(x, dtype, m) for (name, dtype), x in zip(_COLUMNS, given)}
        counts, idx = (np.zeros(m, np.int64), np.zeros(0, np.int64)) if deps is None else deps
        block["counts"] = np.asarray(counts, np.int64)
        block["idx"] = np.asarray(idx, np.int64)
        for name, value in extra.items():
            block[name] = _fill(value, None, m)
        self._blocks.append(block)
        self._sizes.append(m)
        ids = np.arange(self.n, self.n + m, dtype=np.int64)
        self.n += m
        return ids

    def column(self, name, dtype=None):
        """Column ``name`` of every op added, in order (a trace column or an ``extra`` one).

        Parameters
        ----------
        name : str
            ``"kind"``, ``"rank"``, ... or a name given to :meth:`add` as ``extra``.
        dtype : numpy.dtype, optional
            The dtype of the result; default the blocks' own.

        Raises
        ------
        KeyError
            If some block has no such column.

        Examples
        --------
        >>> b = BlockBuilder(2)
        >>> _ = b.add(MESSAGE, [0], 1, 8.0, lo=0); _ = b.add(MESSAGE, [1, 0], 0, 8.0, lo=[1, 2])
        >>> b.column("lo", np.int64).tolist(), b.column("peer").tolist()
        ([0, 1, 2], [1, 0, 0])
        >>> _ = b.add(MESSAGE, [0], 1, 8.0); b.column("lo")
        Traceback (most recent call last):
        ...
        KeyError: "column 'lo' is missing from block 2"
        """
        if self._built and name in _TRACE_COLUMNS:
            raise KeyError(f"column {name!r} went into the trace this builder released")
        parts = []
        for i, block in enumerate(self._blocks):
            if name not in block:
                raise KeyError(f"column {name!r} is missing from block {i}")
            parts.append(block[name])
        if not parts:
            return np.zeros(0, dtype or dict(_COLUMNS).get(name, np.float64))
        if all(p.ndim == 0 for p in parts):   # one value per block
            out = np.repeat(np.array(parts), self._sizes)
        else:
            out = np.concatenate([np.full(m, p) if p.ndim == 0 else p
                                  for m, p in zip(self._sizes, parts)])
        return out if dtype is None else out.astype(dtype, copy=False)

    def build(self, metadata=None, release=False):
        """The :class:`netsim.Trace` of every op added, in order.

        A compute op given in FLOPs takes its seconds from the device rate; one
        without FLOPs or duration (an embedding lookup) takes zero seconds.

        Parameters
        ----------
        metadata : dict, optional
            Stored on the trace.
        release : bool, optional
            Hand the blocks' trace columns over to the trace, each freed once
            copied, so that a trace of 10^7 ops is not held twice while it is
            built; the builder cannot build again (its ``extra`` columns stay
            readable). Default False: the builder keeps its ops and may go on
            adding and building (a recording's trace so far).

        Returns
        -------
        netsim.Trace

        Raises
        ------
        netsim.errors.TraceError
            Naming the first bad op (a dependency on a missing op, a cycle, ...).
        RuntimeError
            After a build with ``release``.

        Examples
        --------
        >>> b = BlockBuilder(2)
        >>> b.build().num_ops, b.build(release=True).num_ops
        (0, 0)
        >>> b.build()
        Traceback (most recent call last):
        ...
        RuntimeError: this builder released its ops to the trace it built; start a new one
        """
        if self._built:
            raise RuntimeError("this builder released its ops to the trace it built; "
                               "start a new one")
        c = {}
        for name, dtype in _COLUMNS + (("counts", np.int64), ("idx", np.int64)):
            c[name] = self.column(name, dtype)
            if release:
                for block in self._blocks:      # handed over: the blocks' copy is freed
                    del block[name]
        self._built = bool(release)
        kind = c["kind"]
        # Only a compute op with FLOPs is timed by the device rate (NaN duration).
        untimed = np.isnan(c["duration"]) & ~((kind == COMPUTE) & (c["flops"] > 0))
        c["duration"][untimed] = 0.0
        ptr = np.zeros(self.n + 1, np.int64)
        np.cumsum(c.pop("counts"), out=ptr[1:])
        peer = c.pop("peer")
        peer[kind != MESSAGE] = -1
        specs = Specs.from_rows(list(self._specs)) if self._specs else None
        return Trace(self.ranks, kind, c["rank"], peer,
                     c["size"], c["duration"], c["flops"], c["iteration"], c["tag"], ptr,
                     c.pop("idx"),
                     tags=list(self._tags), metadata=dict(metadata or {}),
                     priority=c["priority"], spec=c["spec"], specs=specs, queue=c["queue"])
