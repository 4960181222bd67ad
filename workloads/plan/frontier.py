"""The paradigms' trace builder: blocks of ops with per-rank frontiers.

Recording (:class:`workloads.recorder.Recorder`, one op at a time) and every
paradigm's ``schedule`` (a block of P, P x S or P x (P - 1) ops at a time)
build their traces with :class:`Frontier`, the core's block builder
(:class:`netsim.trace.blocks.BlockBuilder`: blocks of ops, tags, collective
specifications, ``build``) with one rule added. Each rank has a *frontier*:
the ops its next op waits for, i.e. its last compute op plus the messages it
received since.

* a compute op waits for its rank's frontier (unless given ``deps``) and
  becomes the rank's new frontier (program order on a rank);
* a message waits for the sender's frontier (unless given ``deps``) and joins
  the receiver's (non-blocking send).

Dependencies of a block are CSR pairs ``(counts, idx)`` made by
:mod:`netsim.trace.blocks`' :func:`~netsim.trace.blocks.one`, :func:`~netsim.trace.blocks.cols`,
:func:`~netsim.trace.blocks.merge`, :func:`~netsim.trace.blocks.interleave` and
:func:`~netsim.trace.blocks.rows` (importable from here too).

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

from netsim.trace.blocks import BlockBuilder, cols, interleave, merge, one, one_row, rows
from netsim.trace.collop import owner as spec_owner
from netsim.trace.collop import spec as make_spec
from netsim.trace.core import COLLECTIVE, COMPUTE, MESSAGE, ranges

__all__ = ["Frontier", "one", "one_row", "cols", "merge", "interleave", "rows", "pipeline"]

class Frontier(BlockBuilder):
    """Blocks of ops with per-rank frontiers; ``build`` makes the :class:`netsim.Trace`.

    A :class:`netsim.trace.blocks.BlockBuilder` (``add``, ``tag``, ``build``, ``n``)
    whose :meth:`compute`, :meth:`send` and :meth:`collective` wait for and
    move the ranks' frontiers. Within one compute block every rank appears at
    most once. ``tag`` names are given as strings (None: no tag); their ids
    follow first use.

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
        super().__init__(ranks)
        self._last = np.full(self.ranks, -1, np.int64)
        self._p_rank = np.zeros(0, np.int64)
        self._p_op = np.zeros(0, np.int64)

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
        from workloads.mlp import Model, model_of

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
        """One collective op among ``ranks`` (:mod:`netsim.trace.collop`), waiting for ``deps``
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
        k = self.spec(key)
        if deps is None:
            c, i = self.frontier(key.group)
            deps = (np.array([c.sum()]), np.unique(i))
        ids = self.add(COLLECTIVE, [spec_owner(key)], -1, nbytes, 0.0, iteration,
                       self.tag(tag), deps, priority, k)
        self.settle(key.group, np.repeat(ids, len(key.group)))
        return ids[0]


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
