"""The one trace builder of the paradigms: blocks of ops with per-rank frontiers.

Recording (:class:`workloads.recorder.Recorder`, one op at a time) and every
paradigm's ``schedule`` (a block of P, P x S or P x (P - 1) ops at a time)
build their traces with :class:`Frontier`. Each rank has a *frontier*: the ops
its next op waits for, i.e. its last compute op plus the messages it received
since.

* a compute op waits for its rank's frontier (unless given ``deps``) and
  becomes the rank's new frontier (program order on a rank);
* a message waits for the sender's frontier (unless given ``deps``) and joins
  the receiver's (non-blocking send).

Dependencies of a block are CSR pairs ``(counts, idx)``: op ``i`` of the block
waits for ``idx[sum(counts[:i]):sum(counts[:i + 1])]``. :func:`one`,
:func:`cols`, :func:`merge`, :func:`interleave` and :func:`rows` build them
with numpy, without a Python loop over ops.

Examples
--------
>>> b = Frontier(3)
>>> c = b.compute([0, 1], 1e6, tag="forward")
>>> m = b.send([0, 1], 2, 400.0, tag="push")
>>> u = b.compute([2], 800.0, tag="update")
>>> t = b.build()
>>> t.num_messages, t.deps(int(u[0])).tolist(), t.deps(int(m[1])).tolist()
(2, [2, 3], [1])
"""

import numpy as np

from netsim.collop import Specs
from netsim.collop import owner as spec_owner
from netsim.collop import spec as make_spec
from netsim.trace import COLLECTIVE, COMPUTE, MESSAGE, Trace, deps_csr, ranges

__all__ = ["Frontier", "one", "one_row", "cols", "merge", "interleave", "rows", "pipeline"]


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
    """CSR deps from columns of op ids, -1 for none (:func:`netsim.trace.deps_csr`).

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
        ``(ptr, idx)`` CSR dependency lists.
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
        ``(ptr, idx)`` CSR dependency lists.
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
        ``(ptr, idx)`` CSR rows.
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


class Frontier:
    """Blocks of ops with per-rank frontiers; :meth:`build` makes the :class:`netsim.Trace`.

    Within one compute block every rank appears at most once. ``tag`` names
    are given as strings (None: no tag); their ids follow first use.

    Parameters
    ----------
    ranks : int
        Ranks of the trace.

    Examples
    --------
    >>> b = Frontier(2)
    >>> bwd = b.forward_backward([0, 1], (4, 16, 3), batch=8)
    >>> bwd.tolist(), b.build().flops.tolist()
    ([[6, 7], [4, 5]], [1024.0, 1024.0, 768.0, 768.0, 1536.0, 1536.0, 2048.0, 2048.0])
    """

    def __init__(self, ranks):
        self.ranks = int(ranks)
        self.n = 0
        self._blocks = []
        self._tags = {}
        self._last = np.full(self.ranks, -1, np.int64)
        self._p_rank = np.zeros(0, np.int64)
        self._p_op = np.zeros(0, np.int64)
        self._specs = {}

    def __len__(self):
        return self.n

    def tag(self, name):
        """The id of tag ``name`` (-1 for None), registering it on first use.

        Examples
        --------
        >>> b = Frontier(1)
        >>> b.tag("push"), b.tag("pull"), b.tag("push"), b.tag(None)
        (0, 1, 0, -1)
        """
        return -1 if name is None else self._tags.setdefault(str(name), len(self._tags))

    def add(self, kind, rank, peer, size, flops, iteration, tag, deps, priority=0, spec=-1,
            queue=-1):
        """Append a block of ops laid out as given; return their ids.

        ``kind``, ``peer``, ``size``, ``flops``, ``iteration`` and ``tag`` (an id of
        :meth:`tag`) broadcast over ``rank``; ``deps`` is a CSR pair. The
        frontiers are left to the caller (:meth:`settle`).

        Parameters
        ----------
        kind : int or numpy.ndarray
            :data:`netsim.trace.COMPUTE` or :data:`netsim.trace.MESSAGE` per op.
        rank : numpy.ndarray of int
            Rank of each op.
        peer : int or numpy.ndarray
            Destination of each message (-1 for compute).
        size : float or numpy.ndarray
            Bytes of each message.
        flops : float or numpy.ndarray
            FLOPs of each compute op.
        iteration : int or numpy.ndarray
            Iteration of each op.
        tag : int or numpy.ndarray
            Tag id of each op.
        deps : tuple of numpy.ndarray
            ``(ptr, idx)`` CSR dependencies of the ops.
        priority : int or numpy.ndarray
            Priority of each message (larger = more urgent; the trace's
            ``priority`` column, read by strict-priority replays).
        spec : int or numpy.ndarray
            A collective op's specification (see :meth:`collective`), -1 for others.
        queue : int or numpy.ndarray
            Each message's send queue (the trace's ``queue`` column), -1 for none.

        Examples
        --------
        >>> b = Frontier(2)
        >>> b.add(COMPUTE, [0, 1], -1, 0.0, 5.0, 0, b.tag("x"), cols([-1, -1])).tolist()
        [0, 1]
        """
        rank = np.asarray(rank, np.int64).ravel()
        m = len(rank)

        def col(x, dtype):
            return np.broadcast_to(np.asarray(x, dtype), (m,))

        counts, idx = deps
        self._blocks.append((col(kind, np.uint8), rank, col(peer, np.int64),
                             col(size, np.float64), col(flops, np.float64),
                             col(iteration, np.int64), col(tag, np.int16),
                             np.asarray(counts, np.int64), np.asarray(idx, np.int64),
                             col(priority, np.int16), col(spec, np.int32), col(queue, np.int32)))
        ids = np.arange(self.n, self.n + m, dtype=np.int64)
        self.n += m
        return ids

    def frontier(self, ranks):
        """CSR deps: the frontier of each entry of ``ranks`` (last compute op first).

        Examples
        --------
        >>> b = Frontier(2)
        >>> _ = b.compute([0], 1.0); _ = b.send([1], 0, 8.0)
        >>> [x.tolist() for x in b.frontier([0, 1])]
        [[2, 0], [0, 1]]
        """
        ranks = np.asarray(ranks, np.int64).ravel()
        last = self._last[ranks]
        has = last >= 0
        if len(self._p_rank):
            order = np.argsort(self._p_rank, kind="stable")
            pr, po = self._p_rank[order], self._p_op[order]
            lo = np.searchsorted(pr, ranks, "left")
            cnt = np.searchsorted(pr, ranks, "right") - lo
        else:
            po = lo = cnt = np.zeros(len(ranks), np.int64)
        counts = has.astype(np.int64) + cnt
        start = np.cumsum(counts) - counts
        idx = np.empty(int(counts.sum()), np.int64)
        idx[start[has]] = last[has]
        idx[ranges(start + has, cnt)] = po[ranges(lo, cnt)]
        return counts, idx

    def settle(self, ranks, ops):
        """``ops`` become the frontier of ``ranks`` (the messages they received are consumed).

        Parameters
        ----------
        ranks : numpy.ndarray of int
            The ranks whose frontier moves.
        ops : numpy.ndarray of int
            Their new frontier op, one per rank.

        Examples
        --------
        >>> b = Frontier(2)
        >>> _ = b.send([1], 0, 8.0); b.settle([0], [0])
        >>> [x.tolist() for x in b.frontier([0])]
        [[1], [0]]
        """
        ranks = np.asarray(ranks, np.int64).ravel()
        self._last[ranks] = ops
        if len(self._p_rank):
            keep = ~np.isin(self._p_rank, ranks)
            self._p_rank, self._p_op = self._p_rank[keep], self._p_op[keep]

    def compute(self, rank, flops, iteration=0, tag="compute", deps=None):
        """Compute ops of ``flops`` on ``rank`` (each rank once), waiting for ``deps`` or
        the rank's frontier; they become the ranks' frontiers. Returns their ids.

        Parameters
        ----------
        rank : int or numpy.ndarray
            Ranks computing.
        flops : float or numpy.ndarray
            FLOPs of each op.
        iteration : int
            Iteration of the ops.
        tag : str
            Tag of the ops.
        deps : tuple of numpy.ndarray, optional
            ``(ptr, idx)`` CSR dependencies; default each rank's frontier.

        Examples
        --------
        >>> b = Frontier(2)
        >>> b.compute([0, 1], [10.0, 20.0]).tolist(), b.compute([1], 5.0).tolist()
        ([0, 1], [2])
        """
        rank = np.asarray(rank, np.int64).ravel()
        ids = self.add(COMPUTE, rank, -1, 0.0, flops, iteration, self.tag(tag),
                       self.frontier(rank) if deps is None else deps)
        self.settle(rank, ids)
        return ids

    def send(self, src, dst, size, iteration=0, tag=None, deps=None, priority=0):
        """Messages of ``size`` bytes from ``src`` to ``dst``, waiting for ``deps`` or the
        sender's frontier; each joins its receiver's frontier. Returns their ids.

        Parameters
        ----------
        src : int or numpy.ndarray
            Senders.
        dst : int or numpy.ndarray
            Receivers.
        size : float or numpy.ndarray
            Bytes of each message.
        iteration : int
            Iteration of the messages.
        tag : str, optional
            Tag of the messages.
        deps : tuple of numpy.ndarray, optional
            ``(ptr, idx)`` CSR dependencies; default each sender's frontier.
        priority : int or numpy.ndarray
            Priority of each message (larger = more urgent).

        Examples
        --------
        >>> b = Frontier(3)
        >>> b.send([0, 1], 2, 16.0, tag="push").tolist(), [x.tolist() for x in b.frontier([2])]
        ([0, 1], [[2], [0, 1]])
        """
        src = np.asarray(src, np.int64).ravel()
        ids = self.add(MESSAGE, src, dst, size, 0.0, iteration, self.tag(tag),
                       self.frontier(src) if deps is None else deps, priority)
        self._p_rank = np.concatenate([self._p_rank, np.broadcast_to(
            np.asarray(dst, np.int64), ids.shape)])
        self._p_op = np.concatenate([self._p_op, ids])
        return ids

    def forward_backward(self, ranks, model, batch, iteration=0, deps=None, unit_deps=None):
        """One training step's compute on each of ``ranks``: one forward op per unit from the
        first to the last, then one backward op per unit from the last to the first.

        Each op has the FLOPs of its own unit (``Model.unit_flops``, and twice that
        backward). A unit's forward waits for the unit below it (the first for
        ``deps`` or the rank's frontier) and, with ``unit_deps``, for what that unit
        needs besides (its new parameters); a unit's backward waits for the unit
        above it.

        Parameters
        ----------
        ranks : sequence of int
        model : workloads.mlp.Model or sequence of int
            The model, or the widths of a :mod:`workloads.mlp` model.
        batch : int, float or sequence
            Samples per rank (one for all, or one per rank).
        iteration : int
        deps : CSR pair, optional
            What the first forward ops wait for; the ranks' frontiers by default.
        unit_deps : list of CSR pair or None, optional
            ``unit_deps[u]``: what the forward op of unit ``u`` waits for besides
            the op before it on its rank (one row per rank, or None).

        Returns
        -------
        ndarray
            ``bwd[unit, i]`` is the backward op of ``unit`` on ``ranks[i]``.

        Examples
        --------
        >>> b = Frontier(1)
        >>> b.forward_backward([0], (4, 8, 8, 3), batch=2).ravel().tolist()
        [5, 4, 3]
        >>> t = b.build(); [t.tags[k] for k in t.tag], t.flops.tolist()
        (['forward', 'forward', 'forward', 'backward', 'backward', 'backward'], [128.0, 256.0, 96.0, 192.0, 512.0, 256.0])
        """
        from .mlp import Model, model_of

        model = model if isinstance(model, Model) else model_of(model)
        ranks = np.asarray(ranks, np.int64).ravel()
        batch = np.asarray(batch, np.float64)
        fwd_flops, bwd_flops = model.unit_flops, model.unit_backward_flops
        for u in range(len(fwd_flops)):
            d = deps if u == 0 else None
            if unit_deps is not None and unit_deps[u] is not None:
                d = merge(self.frontier(ranks) if d is None else d, unit_deps[u])
            self.compute(ranks, fwd_flops[u] * batch, iteration, "forward", d)
        bwd = np.empty((len(bwd_flops), len(ranks)), np.int64)
        for l in range(len(bwd_flops) - 1, -1, -1):
            bwd[l] = self.compute(ranks, bwd_flops[l] * batch, iteration, "backward")
        return bwd

    def collective(self, op, ranks, nbytes, iteration=0, tag=None, deps=None, priority=0,
                   algorithm=None, segments=0, element=0):
        """One collective op among ``ranks`` (:mod:`netsim.collop`), waiting for ``deps``
        (CSR, one row) or every member's frontier; it becomes every member's frontier.
        Returns its id.

        Parameters
        ----------
        op : str
            ``"allreduce"``, ``"allgather"``, ...
        ranks : sequence of int
            The group.
        nbytes : float
            Bytes as nccl-tests counts them.
        iteration, tag, priority
            As for :meth:`send`.
        deps : tuple of numpy.ndarray, optional
            ``(ptr, idx)`` CSR dependencies of the one op.
        algorithm, segments, element
            As for :meth:`netsim.TraceBuilder.collective`.

        Examples
        --------
        >>> b = Frontier(2)
        >>> c = b.compute([0, 1], 10.0)
        >>> a = b.collective("allreduce", [0, 1], 400.0, tag="grad")
        >>> t = b.build(); t.deps(int(a)).tolist(), t.specs.row(0).op
        ([0, 1], 'allreduce')
        """
        key = make_spec(op, ranks, None, algorithm, segments, element)
        k = self._specs.setdefault(key, len(self._specs))
        if deps is None:
            c, i = self.frontier(key.group)
            deps = (np.array([c.sum()]), np.unique(i))
        ids = self.add(COLLECTIVE, [spec_owner(key)], -1, nbytes, 0.0, iteration,
                       self.tag(tag), deps, priority, k)
        self.settle(key.group, np.repeat(ids, len(key.group)))
        return ids[0]

    def build(self, metadata=None):
        """The :class:`netsim.Trace` of every op added, in order.

        A compute op is given in FLOPs (its seconds follow from the device rate);
        one without FLOPs (an embedding lookup) takes zero seconds.

        Examples
        --------
        >>> Frontier(2).build().num_ops
        0
        """
        if not self._blocks:
            return Trace(self.ranks, np.zeros(0, np.uint8), np.zeros(0, np.int64),
                         tags=list(self._tags), metadata=dict(metadata or {}))
        kind, rank, peer, size, flops, iteration, tag, counts, idx, prio, spec, queue = (
            np.concatenate(c) for c in zip(*self._blocks))
        ptr = np.zeros(len(kind) + 1, np.int64)
        np.cumsum(counts, out=ptr[1:])
        duration = np.where((kind == COMPUTE) & (flops > 0), np.nan, 0.0)
        # The priority column only where some message has one (plain traces stay plain).
        extra = {"priority": prio} if prio.any() else {}
        if self._specs:
            extra.update(spec=spec, specs=Specs.from_rows(list(self._specs)))
        if (queue >= 0).any():
            extra["queue"] = queue
        return Trace(self.ranks, kind, rank, np.where(kind == MESSAGE, peer, -1), size,
                     duration, flops, iteration, tag, ptr, idx, tags=list(self._tags),
                     metadata=dict(metadata or {}), **extra)


def pipeline(b, it, pos, node, deps, flops, has_msg, peer, size, ctag, mtag, queue=-1):
    """Add a block to the :class:`Frontier` ``b``: compute op ``i`` at position ``pos[i]``
    of the block on rank ``node[i]`` (waiting for row ``i`` of ``deps``), and, where
    ``has_msg[i]``, its message of ``size[i]`` bytes to ``peer[i]`` right after it,
    waiting for it. ``ctag`` and ``mtag`` tag the compute ops and the messages.

    Parameters
    ----------
    b : Frontier
        The builder the block is added to.
    it : int or numpy.ndarray
        Iteration of the ops.
    pos : numpy.ndarray of int
        Position of each compute op in the block.
    node : numpy.ndarray of int
        Rank of each compute op.
    deps : tuple of numpy.ndarray
        ``(ptr, idx)`` CSR dependencies of the compute ops.
    flops : numpy.ndarray
        FLOPs of each compute op.
    has_msg : numpy.ndarray of bool
        Whether a message follows the compute op.
    peer : numpy.ndarray of int
        Its destination.
    size : numpy.ndarray
        Its bytes.
    ctag : str
        Tag of the compute ops.
    mtag : str
        Tag of the messages.
    queue : int or numpy.ndarray, optional
        Send queue of each entry's message (-1: none; see the trace's ``queue``).

    Examples
    --------
    >>> b = Frontier(2)
    >>> pipeline(b, 0, np.array([0, 2]), np.array([0, 1]), cols([-1, 1]), np.array([5.0, 5.0]),
    ...          np.array([True, False]), np.array([1, 0]), np.array([8.0, 0.0]), "f", "a")
    >>> t = b.build(); t.kind.tolist(), t.deps(2).tolist()
    ([0, 1, 0], [1])
    """
    n = int(pos.max()) + 1 + int(has_msg[np.argmax(pos)])
    mpos = pos[has_msg] + 1
    kind = np.full(n, MESSAGE, np.uint8)
    kind[pos] = COMPUTE
    rank = np.empty(n, np.int64)
    rank[pos], rank[mpos] = node, node[has_msg]
    peers = np.full(n, -1, np.int64)
    peers[mpos] = peer[has_msg]
    sizes, fl = np.zeros(n), np.zeros(n)
    sizes[mpos], fl[pos] = size[has_msg], flops
    dc, di = deps
    counts = np.zeros(n, np.int64)
    counts[pos], counts[mpos] = dc, 1
    starts = np.cumsum(counts) - counts
    idx = np.empty(int(counts.sum()), np.int64)
    idx[ranges(starts[pos], dc)] = di
    idx[starts[mpos]] = b.n + pos[has_msg]
    tag = np.where(kind == COMPUTE, b.tag(ctag), b.tag(mtag)).astype(np.int16)
    queues = np.full(n, -1, np.int64)
    queues[mpos] = np.broadcast_to(np.asarray(queue, np.int64), has_msg.shape)[has_msg]
    b.add(kind, rank, peers, sizes, fl, it, tag, (counts, idx), queue=queues)
