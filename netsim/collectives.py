"""Collective algorithms as traces: MPICH's schedules, written as dependency graphs.

Every generator takes ``P`` ranks and ``nbytes`` and returns a
:class:`~netsim.trace.Trace` built column-wise with numpy (a Python loop per
step, never per message), so ``ring_allreduce(1024, 100e6)`` (2,095,104
messages) is built in well under a second.

Step semantics (MPICH)
----------------------
An algorithm is a sequence of steps; in a step a rank posts Irecv + Isend and
waits for both (Waitall). So every message of a rank waits for the rank's
previous send and previous receive, and a received contribution is reduced
(with ``gamma > 0``) once both the send and the receive of its step are done,
as MPICH calls ``MPIR_Reduce_local`` after ``MPIC_Sendrecv``.

Where a receiver may still be busy with an earlier step -- trees, and the
fold of non-power-of-two ``P`` -- a message also waits for the receiver to have
finished its previous step (it has posted its receive: MPICH's rendezvous
protocol for large messages). This keeps every link direction of a
non-blocking star carrying at most one message at a time, so the closed forms
of :mod:`netsim.costmodel` are exact there. Ring, pairwise and pipelined
schedules, whose ranks are always in the same step, leave that dependency out:
it would change no time and only add dependencies.

The linear pipelines (LP) differ: receives are eager. Each rank forwards
segments in order, forward ``j`` starting when segment ``j`` has arrived (and
been reduced) and forward ``j - 1`` has completed.

Non-power-of-two ``P``
----------------------
As MPICH: with ``p' = 2**floor(log2 P)`` and ``rem = P - p'``, the even ranks
below ``2 rem`` first send to their odd neighbour (fold), the ``p'`` remaining
ranks run the power-of-two core, and the odd ranks send the result back
(unfold). Core rank ``i`` is real rank ``2i + 1`` for ``i < rem``, else
``i + rem``. A broadcast has nothing to fold: its core is ranks ``0..p'-1`` and
extra rank ``r`` receives the result from rank ``r - p'``.

Reduction cost
--------------
``gamma`` (seconds per byte) turns each reduction of ``b`` received bytes into a
compute op of ``gamma * b`` seconds on the receiver; ``gamma = 0`` (the
default) adds no compute ops.

What each message carries
-------------------------
:func:`payloads` returns, from the same schedule code, the chunks each message
carries (``[lo, hi)`` in a chunk space given per algorithm) and whether the
receiver adds them to what it holds (a reduction) or replaces it (a copy).
Tests replay this symbolically to prove each schedule correct.

References
----------
R. Thakur, R. Rabenseifner and W. Gropp, "Optimization of collective
communication operations in MPICH", IJHPCA 19(1), 2005.
P. Patarasuk and X. Yuan, "Bandwidth optimal all-reduce algorithms for
clusters of workstations", JPDC 69(2), 2009.
Y. Zhao, L. Wang et al., "Efficient communications in training large scale
neural networks" (linear pipelining), arXiv:1611.04255, 2016.
"""

import inspect
from types import MappingProxyType

import numpy as np

from ._checks import check_count, check_real
from .errors import TraceError
from .trace import COMPUTE, MESSAGE, Trace

__all__ = [
    "binomial_broadcast",
    "binomial_reduce",
    "pipeline_broadcast",
    "pipeline_reduce",
    "pipeline_allreduce",
    "be_broadcast",
    "recursive_doubling_allreduce",
    "rabenseifner_allreduce",
    "ring_allreduce",
    "ring_allgather",
    "ring_reduce_scatter",
    "recursive_doubling_allgather",
    "recursive_halving_reduce_scatter",
    "alltoall",
    "ps_push_pull",
    "payloads",
]


def _pof2(P):
    """Largest power of two <= P."""
    return 1 << (P.bit_length() - 1)


# -- the schedule builder -------------------------------------------------------------------

class _Schedule:
    """Ops of one collective, appended a step at a time as numpy blocks.

    ``send[r]`` and ``recv[r]`` are rank r's latest send and latest receive (or
    the reduction of it): what its next step waits for.
    """

    def __init__(self, name, ranks, chunks, chunk_bytes, cost=0.0, **params):
        self.name = name
        self.ranks = ranks
        self.chunks = chunks
        self.chunk_bytes = chunk_bytes
        self.gamma = cost  # reduction seconds per byte
        self.params = params
        self.count = 0
        self.blocks = []
        self.tags = {}
        self.send = np.full(ranks, -1, np.int64)
        self.recv = np.full(ranks, -1, np.int64)

    def _append(self, kind, rank, peer, lo, hi, reduce, duration, tag, deps):
        """Append ops; ``deps`` is an (ops, slots) array of op ids, -1 for none."""
        m = len(rank)
        valid = deps >= 0
        self.blocks.append({
            "kind": np.full(m, kind, np.uint8),
            "rank": rank,
            "peer": peer,
            "size": (hi - lo) * self.chunk_bytes if kind == MESSAGE else np.zeros(m),
            "duration": duration,
            "tag": np.full(m, self.tags.setdefault(tag, len(self.tags)), np.int16),
            "lo": lo,
            "hi": hi,
            "reduce": np.full(m, reduce, bool),
            "count": valid.sum(axis=1),
            "idx": deps[valid],
        })
        ids = np.arange(self.count, self.count + m, dtype=np.int64)
        self.count += m
        return ids

    def messages(self, src, dst, lo, hi, tag, reduce=False, deps=None):
        """Messages with explicit dependencies (no frontier update)."""
        m = len(src)
        deps = np.full((m, 0), -1, np.int64) if deps is None else deps
        return self._append(MESSAGE, src, dst, lo, hi, reduce, np.zeros(m), tag, deps)

    def computes(self, rank, seconds, tag, deps):
        """Compute ops (reductions) with explicit dependencies."""
        m = len(rank)
        none = np.full(m, -1, np.int64)
        return self._append(COMPUTE, rank, none, none, none, False,
                            np.broadcast_to(np.asarray(seconds, np.float64), (m,)).copy(),
                            tag, deps)

    def step(self, src, dst, lo, hi, tag, reduce=False, rendezvous=True, sendrecv=True):
        """One step: message i goes ``src[i] -> dst[i]`` carrying chunks ``[lo[i], hi[i])``.

        Each message waits for its sender's latest send and receive and, with
        ``rendezvous``, for the receiver's too. With ``reduce`` and
        ``gamma > 0`` the receiver then reduces what it got, after the message,
        its previous reduction and (``sendrecv``) its own send of this step.
        Within a step every rank sends at most once and receives at most once.
        """
        src = np.asarray(src, np.int64)
        m = len(src)
        if m == 0:
            return src
        dst = np.asarray(dst, np.int64)
        lo = np.broadcast_to(np.asarray(lo, np.int64), (m,)).copy()
        hi = np.broadcast_to(np.asarray(hi, np.int64), (m,)).copy()
        cols = [self.send[src], self.recv[src]]
        if rendezvous:
            cols += [self.send[dst], self.recv[dst]]
        deps = _distinct(np.stack(cols, axis=1))
        msg = self._append(MESSAGE, src, dst, lo, hi, reduce, np.zeros(m), tag, deps)
        self.send[src] = msg
        if reduce and self.gamma > 0:
            cols = [msg, self.recv[dst]] + ([self.send[dst]] if sendrecv else [])
            seconds = self.gamma * (hi - lo) * self.chunk_bytes
            self.recv[dst] = self.computes(dst, seconds, tag, _distinct(np.stack(cols, axis=1)))
        else:
            self.recv[dst] = msg
        return msg

    def _column(self, key, dtype):
        if not self.blocks:
            return np.zeros(0, dtype)
        return np.concatenate([b[key] for b in self.blocks]).astype(dtype, copy=False)

    def trace(self):
        """The schedule as a validated Trace."""
        ptr = np.zeros(self.count + 1, np.int64)
        np.cumsum(self._column("count", np.int64), out=ptr[1:])
        meta = {"collective": self.name, "ranks": self.ranks, **self.params}
        return Trace(self.ranks, self._column("kind", np.uint8), self._column("rank", np.int32),
                     self._column("peer", np.int32), self._column("size", np.float64),
                     self._column("duration", np.float64), None, None,
                     self._column("tag", np.int16), ptr, self._column("idx", np.int64),
                     tags=list(self.tags), metadata=meta)

    def payload(self):
        """What each op carries (see :func:`payloads`)."""
        return {"chunks": self.chunks, "chunk_bytes": self.chunk_bytes,
                "lo": self._column("lo", np.int64), "hi": self._column("hi", np.int64),
                "reduce": self._column("reduce", bool)}


def _distinct(deps):
    """Replace repeated op ids within a row by -1."""
    deps = deps.copy()
    for j in range(1, deps.shape[1]):
        for i in range(j):
            deps[deps[:, j] == deps[:, i], j] = -1
    return deps


def _core(P):
    """(p', rem, real) for MPICH's fold: ``real(i)`` is the real rank of core rank i."""
    p2 = _pof2(P)
    rem = P - p2

    def real(i):
        return np.where(i < rem, 2 * i + 1, i + rem)

    return p2, rem, real


def _fold(s, rem, lo, hi, reduce):
    """Even ranks below 2 rem send chunks [lo, hi) (None: their own chunk) to rank + 1."""
    even = np.arange(0, 2 * rem, 2)
    s.step(even, even + 1, even if lo is None else lo, even + 1 if hi is None else hi, "fold",
           reduce=reduce)


def _unfold(s, rem, lo, hi):
    """Odd ranks below 2 rem send chunks [lo, hi) (None: the partner's chunk) to rank - 1."""
    odd = np.arange(1, 2 * rem, 2)
    s.step(odd, odd - 1, odd - 1 if lo is None else lo, odd if hi is None else hi, "unfold")


def _halving(s, p2, real, start):
    """Recursive halving over core ranks 0..p2-1 (distance p2/2 first).

    ``start(i)`` is the first chunk of core block ``i`` (``start(p2)`` the end);
    afterwards core rank i holds block i.
    """
    nr = np.arange(p2)
    m = p2 // 2
    while m >= 1:
        partner = nr ^ m
        first = partner & ~(m - 1)
        s.step(real(nr), real(partner), start(first), start(first + m), "reduce-scatter",
               reduce=True)
        m //= 2


def _doubling(s, p2, real, start):
    """Recursive-doubling allgather of core blocks: core rank i starts with block i."""
    nr = np.arange(p2)
    m = 1
    while m < p2:
        first = nr & ~(m - 1)
        s.step(real(nr), real(nr ^ m), start(first), start(first + m), "allgather")
        m *= 2


def _identity(i):
    return i


# -- broadcast and reduce trees ----------------------------------------------------------------

def _binomial_broadcast(P, nbytes):
    s = _Schedule("binomial_broadcast", P, 1, nbytes, nbytes=nbytes)
    for b in range((P - 1).bit_length() - 1, -1, -1):
        m = 1 << b
        src = np.arange(0, P - m, 2 * m)
        s.step(src, src + m, 0, 1, "broadcast")
    return s


def binomial_broadcast(P, nbytes):
    """Binomial-tree (MST) broadcast from rank 0, MPICH's short-message broadcast.

    Rank r receives from r minus its lowest set bit; a parent sends to its
    children one after the other, the farthest (largest mask) first.
    ``ceil(log2 P)`` rounds of the whole message.

    Parameters
    ----------
    P : int
        Ranks, >= 1.
    nbytes : float
        Bytes to broadcast.

    Returns
    -------
    Trace
        ``P - 1`` messages of ``nbytes``.

    Examples
    --------
    >>> t = binomial_broadcast(8, 1e6)
    >>> t.num_messages, t.rank[:3].tolist(), t.peer[:3].tolist()
    (7, [0, 0, 4], [4, 2, 6])
    """
    return _build("binomial_broadcast", P, nbytes).trace()


def _binomial_reduce(P, nbytes, gamma=0.0):
    s = _Schedule("binomial_reduce", P, 1, nbytes, gamma, nbytes=nbytes, gamma=gamma)
    for b in range((P - 1).bit_length()):
        m = 1 << b
        src = np.arange(m, P, 2 * m)
        s.step(src, src - m, 0, 1, "reduce", reduce=True)
    return s


def binomial_reduce(P, nbytes, gamma=0.0):
    """Binomial-tree (MST) reduce to rank 0 (MPICH's commutative reduce for short messages).

    Rank r sends to r minus its lowest set bit once it has received and reduced
    its own children, which it receives one at a time in increasing mask order.

    Parameters
    ----------
    P : int
        Ranks, >= 1.
    nbytes : float
        Bytes each rank contributes.
    gamma : float, optional
        Reduction cost, seconds per byte (0: no compute ops).

    Returns
    -------
    Trace

    Examples
    --------
    >>> t = binomial_reduce(4, 1e6, gamma=1e-10)
    >>> t.num_messages, t.num_ops
    (3, 6)
    """
    return _build("binomial_reduce", P, nbytes, gamma=gamma).trace()


# -- linear pipelines (LP) ---------------------------------------------------------------------

def _chain(s, P, k, reverse, tag, reduce):
    """k segments along 0 -> 1 -> ... -> P-1 (or the reverse), one wavefront per step."""
    for t in range(P + k - 2):
        d = np.arange(max(0, t - k + 1), min(P - 2, t) + 1)
        j = t - d
        src = P - 1 - d if reverse else d
        dst = src - 1 if reverse else src + 1
        s.step(src, dst, j, j + 1, tag, reduce=reduce, rendezvous=False, sendrecv=False)


def _pipeline_broadcast(P, nbytes, segments):
    s = _Schedule("pipeline_broadcast", P, segments, nbytes / segments, nbytes=nbytes,
                  segments=segments)
    _chain(s, P, segments, False, "broadcast", False)
    return s


def pipeline_broadcast(P, nbytes, segments=1):
    """Linear-pipeline (LP) broadcast from rank 0 along the chain 0 -> 1 -> ... -> P-1.

    The message is cut into ``segments`` equal segments. Rank 0 sends them one
    after the other; every other rank forwards segment j as soon as it has
    arrived and its forward of segment j - 1 has completed (receives are eager).

    Parameters
    ----------
    P : int
        Ranks, >= 1.
    nbytes : float
        Bytes to broadcast.
    segments : int, optional
        Number of segments k, >= 1.

    Returns
    -------
    Trace
        ``(P - 1) * segments`` messages of ``nbytes / segments``.

    Examples
    --------
    >>> t = pipeline_broadcast(4, 1e6, segments=2)
    >>> t.num_messages, float(t.size[0])
    (6, 500000.0)
    """
    return _build("pipeline_broadcast", P, nbytes, segments=segments).trace()


def _pipeline_reduce(P, nbytes, segments, gamma=0.0, name="pipeline_reduce"):
    s = _Schedule(name, P, segments, nbytes / segments, gamma, nbytes=nbytes,
                  segments=segments, gamma=gamma)
    _chain(s, P, segments, True, "reduce", True)
    return s


def pipeline_reduce(P, nbytes, segments=1, gamma=0.0):
    """Linear-pipeline (LP) reduce to rank 0 along the chain P-1 -> ... -> 1 -> 0.

    Rank P-1 sends its segments one after the other; rank i reduces segment j
    when it arrives (after reducing segment j - 1) and forwards the reduced
    segment once its forward of segment j - 1 has completed.

    Parameters
    ----------
    P : int
        Ranks, >= 1.
    nbytes : float
        Bytes each rank contributes.
    segments : int, optional
        Number of segments k, >= 1.
    gamma : float, optional
        Reduction cost, seconds per byte.

    Returns
    -------
    Trace

    Examples
    --------
    >>> t = pipeline_reduce(3, 1e6, segments=4)
    >>> t.num_messages, int(t.rank[0]), int(t.peer[0])
    (8, 2, 1)
    """
    return _build("pipeline_reduce", P, nbytes, segments=segments, gamma=gamma).trace()


def _pipeline_allreduce(P, nbytes, segments, gamma=0.0):
    s = _pipeline_reduce(P, nbytes, segments, gamma, name="pipeline_allreduce")
    _chain(s, P, segments, False, "broadcast", False)
    return s


def pipeline_allreduce(P, nbytes, segments=1, gamma=0.0):
    """Linear-pipeline (LP) allreduce: :func:`pipeline_reduce` to rank 0, then
    :func:`pipeline_broadcast` from rank 0.

    The broadcast starts once rank 0 has reduced the last segment. Overlapping
    the two pipelines would put a reduce stream and a broadcast stream on the
    same link direction of every inner rank (its one NIC), so the phases are
    kept apart and every link direction carries one segment at a time.

    Parameters
    ----------
    P : int
        Ranks, >= 1.
    nbytes : float
        Bytes each rank contributes.
    segments : int, optional
        Number of segments k, >= 1.
    gamma : float, optional
        Reduction cost, seconds per byte.

    Returns
    -------
    Trace
        ``2 (P - 1) * segments`` messages.

    Examples
    --------
    >>> pipeline_allreduce(4, 1e6, segments=3).num_messages
    18
    """
    return _build("pipeline_allreduce", P, nbytes, segments=segments, gamma=gamma).trace()


# -- bidirectional exchange (BE): scatter + allgather ------------------------------------------

def _be_broadcast(P, nbytes):
    p2 = _pof2(P)
    s = _Schedule("be_broadcast", P, p2, nbytes / p2, nbytes=nbytes)
    m = p2 // 2
    while m >= 1:  # binomial scatter: rank r sends the blocks of its child's subtree
        src = np.arange(0, p2, 2 * m)
        s.step(src, src + m, src + m, src + 2 * m, "scatter")
        m //= 2
    _doubling(s, p2, _identity, _identity)
    extra = np.arange(p2, P)
    s.step(extra - p2, extra, 0, p2, "unfold")
    return s


def be_broadcast(P, nbytes):
    """Bidirectional-exchange (BE) broadcast: binomial scatter, then recursive-doubling allgather.

    MPICH's ``bcast_scatter_rec_dbl_allgather`` (van de Geijn): rank 0's
    message is cut into ``p'`` blocks (``p' = 2**floor(log2 P)``), scattered
    down a binomial tree over ranks ``0..p'-1`` and gathered back by recursive
    doubling. For non-power-of-two P, extra rank r then receives the whole
    message from rank ``r - p'``.

    Parameters
    ----------
    P : int
        Ranks, >= 1.
    nbytes : float
        Bytes to broadcast.

    Returns
    -------
    Trace

    Examples
    --------
    >>> t = be_broadcast(4, 4e6)
    >>> t.num_messages, t.size.tolist()[:3]
    (11, [2000000.0, 1000000.0, 1000000.0])
    """
    return _build("be_broadcast", P, nbytes).trace()


# -- allreduce -------------------------------------------------------------------------------------

def _recursive_doubling_allreduce(P, nbytes, gamma=0.0):
    s = _Schedule("recursive_doubling_allreduce", P, 1, nbytes, gamma, nbytes=nbytes,
                  gamma=gamma)
    p2, rem, real = _core(P)
    _fold(s, rem, 0, 1, True)
    nr = np.arange(p2)
    m = 1
    while m < p2:
        s.step(real(nr), real(nr ^ m), 0, 1, "exchange", reduce=True)
        m *= 2
    _unfold(s, rem, 0, 1)
    return s


def recursive_doubling_allreduce(P, nbytes, gamma=0.0):
    """Recursive-doubling allreduce (MPICH's short-message allreduce).

    In step s every core rank exchanges its whole vector with the rank
    ``2**s`` away and reduces. Non-power-of-two P folds and unfolds.

    Parameters
    ----------
    P : int
        Ranks, >= 1.
    nbytes : float
        Bytes each rank contributes.
    gamma : float, optional
        Reduction cost, seconds per byte.

    Returns
    -------
    Trace

    Examples
    --------
    >>> recursive_doubling_allreduce(8, 1e6).num_messages
    24
    >>> recursive_doubling_allreduce(5, 1e6).num_messages  # fold 1 + 4 * 2 + unfold 1
    10
    """
    return _build("recursive_doubling_allreduce", P, nbytes, gamma=gamma).trace()


def _rabenseifner_allreduce(P, nbytes, gamma=0.0):
    p2, rem, real = _core(P)
    s = _Schedule("rabenseifner_allreduce", P, p2, nbytes / p2, gamma, nbytes=nbytes,
                  gamma=gamma)
    _fold(s, rem, 0, p2, True)
    _halving(s, p2, real, _identity)
    _doubling(s, p2, real, _identity)
    _unfold(s, rem, 0, p2)
    return s


def rabenseifner_allreduce(P, nbytes, gamma=0.0):
    """Rabenseifner's allreduce: reduce-scatter by recursive halving, then allgather by
    recursive doubling (bidirectional exchange, BE; MPICH's long-message allreduce).

    The vector is cut into ``p'`` blocks. In reduce-scatter step s a core rank
    sends half of its current range to the rank ``p' / 2**s`` away and reduces
    the half it keeps; the allgather retraces the steps with doubling blocks.
    Non-power-of-two P folds and unfolds.

    Parameters
    ----------
    P : int
        Ranks, >= 1.
    nbytes : float
        Bytes each rank contributes.
    gamma : float, optional
        Reduction cost, seconds per byte.

    Returns
    -------
    Trace

    Examples
    --------
    >>> t = rabenseifner_allreduce(4, 4e6)
    >>> t.num_messages, sorted(set(t.size.tolist()))
    (16, [1000000.0, 2000000.0])
    """
    return _build("rabenseifner_allreduce", P, nbytes, gamma=gamma).trace()


def _ring_steps(s, P, kind):
    r = np.arange(P)
    nxt = (r + 1) % P
    for k in range(P - 1):
        if kind == "reduce-scatter":
            c = (r - k - 1) % P
            s.step(r, nxt, c, c + 1, kind, reduce=True, rendezvous=False)
        else:
            c = (r - k) % P
            s.step(r, nxt, c, c + 1, kind, rendezvous=False)


def _ring_allreduce(P, nbytes, gamma=0.0):
    s = _Schedule("ring_allreduce", P, P, nbytes / P, gamma, nbytes=nbytes, gamma=gamma)
    _ring_steps(s, P, "reduce-scatter")
    _ring_steps(s, P, "allgather")
    return s


def ring_allreduce(P, nbytes, gamma=0.0):
    """Ring allreduce: ring reduce-scatter, then ring allgather.

    The vector is cut into P chunks; in each of ``2 (P - 1)`` steps every rank
    sends one chunk (``nbytes / P``) to its right neighbour. After the
    reduce-scatter rank r holds the reduced chunk r.

    Parameters
    ----------
    P : int
        Ranks, >= 1.
    nbytes : float
        Bytes each rank contributes.
    gamma : float, optional
        Reduction cost, seconds per byte.

    Returns
    -------
    Trace
        ``2 (P - 1) P`` messages.

    Examples
    --------
    >>> ring_allreduce(1024, 100e6).num_messages
    2095104
    """
    return _build("ring_allreduce", P, nbytes, gamma=gamma).trace()


# -- allgather, reduce-scatter, all-to-all ----------------------------------------------------

def _ring_allgather(P, nbytes):
    s = _Schedule("ring_allgather", P, P, nbytes / P, nbytes=nbytes)
    _ring_steps(s, P, "allgather")
    return s


def ring_allgather(P, nbytes):
    """Ring allgather: P - 1 steps, each rank forwarding one chunk to its right neighbour.

    Parameters
    ----------
    P : int
        Ranks, >= 1.
    nbytes : float
        Bytes of the gathered result; rank r contributes chunk r (``nbytes / P``).

    Returns
    -------
    Trace

    Examples
    --------
    >>> ring_allgather(4, 4e6).num_messages
    12
    """
    return _build("ring_allgather", P, nbytes).trace()


def _ring_reduce_scatter(P, nbytes, gamma=0.0):
    s = _Schedule("ring_reduce_scatter", P, P, nbytes / P, gamma, nbytes=nbytes, gamma=gamma)
    _ring_steps(s, P, "reduce-scatter")
    return s


def ring_reduce_scatter(P, nbytes, gamma=0.0):
    """Ring reduce-scatter: P - 1 steps; rank r ends with the reduced chunk r.

    Parameters
    ----------
    P : int
        Ranks, >= 1.
    nbytes : float
        Bytes each rank contributes (chunks of ``nbytes / P``).
    gamma : float, optional
        Reduction cost, seconds per byte.

    Returns
    -------
    Trace

    Examples
    --------
    >>> ring_reduce_scatter(4, 4e6, gamma=1e-10).num_ops  # 12 messages, 12 reductions
    24
    """
    return _build("ring_reduce_scatter", P, nbytes, gamma=gamma).trace()


def _chunk_start(P):
    """First chunk of core block i under the fold: 2i for folded pairs, else i + rem."""
    _, rem, _ = _core(P)

    def start(i):
        return np.where(i < rem, 2 * i, i + rem)

    return start


def _recursive_doubling_allgather(P, nbytes):
    s = _Schedule("recursive_doubling_allgather", P, P, nbytes / P, nbytes=nbytes)
    p2, rem, real = _core(P)
    _fold(s, rem, None, None, False)
    _doubling(s, p2, real, _chunk_start(P))
    _unfold(s, rem, 0, P)
    return s


def recursive_doubling_allgather(P, nbytes):
    """Recursive-doubling allgather: log2 P exchanges of doubling blocks.

    Non-power-of-two P folds (each even rank below ``2 rem`` hands its chunk
    to its odd neighbour), runs the core on blocks of one or two chunks, and
    unfolds (the odd rank sends the whole result back).

    Parameters
    ----------
    P : int
        Ranks, >= 1.
    nbytes : float
        Bytes of the gathered result; rank r contributes chunk r (``nbytes / P``).

    Returns
    -------
    Trace

    Examples
    --------
    >>> recursive_doubling_allgather(8, 8e6).size.tolist()[::8]
    [1000000.0, 2000000.0, 4000000.0]
    """
    return _build("recursive_doubling_allgather", P, nbytes).trace()


def _recursive_halving_reduce_scatter(P, nbytes, gamma=0.0):
    s = _Schedule("recursive_halving_reduce_scatter", P, P, nbytes / P, gamma, nbytes=nbytes,
                  gamma=gamma)
    p2, rem, real = _core(P)
    _fold(s, rem, 0, P, True)
    _halving(s, p2, real, _chunk_start(P))
    _unfold(s, rem, None, None)
    return s


def recursive_halving_reduce_scatter(P, nbytes, gamma=0.0):
    """Recursive-halving reduce-scatter (MPICH's for commutative operations).

    Step s sends half of the current range to the rank ``p' / 2**s`` away and
    reduces the other half; rank r ends with the reduced chunk r. Non-power-of-
    two P folds (whole vectors), runs the core on blocks of one or two chunks
    (MPICH's ``newcnts``), and unfolds (the even rank's chunk).

    Parameters
    ----------
    P : int
        Ranks, >= 1.
    nbytes : float
        Bytes each rank contributes (chunks of ``nbytes / P``).
    gamma : float, optional
        Reduction cost, seconds per byte.

    Returns
    -------
    Trace

    Examples
    --------
    >>> recursive_halving_reduce_scatter(4, 4e6).size.tolist()[::4]
    [2000000.0, 1000000.0]
    """
    return _build("recursive_halving_reduce_scatter", P, nbytes, gamma=gamma).trace()


def _alltoall(P, nbytes):
    s = _Schedule("alltoall", P, P * P, nbytes / P, nbytes=nbytes)
    r = np.arange(P)
    for k in range(1, P):
        d = (r + k) % P
        s.step(r, d, r * P + d, r * P + d + 1, "alltoall", rendezvous=False)
    return s


def alltoall(P, nbytes):
    """Pairwise-exchange all-to-all (MPICH's long-message alltoall).

    Rank r holds ``nbytes``: P blocks of ``nbytes / P``, block d for rank d.
    In step s = 1..P-1 it sends block ``r + s`` to rank ``(r + s) mod P`` and
    receives from ``(r - s) mod P``. (MPICH pairs by XOR when P is a power of
    two; on a non-blocking network both give the same times.)

    Parameters
    ----------
    P : int
        Ranks, >= 1.
    nbytes : float
        Bytes each rank sends in all, its own block included.

    Returns
    -------
    Trace
        ``P (P - 1)`` messages.

    Examples
    --------
    >>> alltoall(4, 4e6).num_messages
    12
    """
    return _build("alltoall", P, nbytes).trace()


# -- parameter server ------------------------------------------------------------------------

def _ps_push_pull(P, nbytes, servers=1, gamma=0.0):
    S = servers
    s = _Schedule("ps_push_pull", P + S, S, nbytes / S, gamma, nbytes=nbytes, workers=P,
                  servers=S, gamma=gamma)
    w = np.repeat(np.arange(P), S)
    k = np.tile(np.arange(S), P)
    push = s.messages(w, P + k, k, k + 1, "push", reduce=True)
    into = push.reshape(P, S).T  # into[k]: the pushes to server k
    if gamma > 0:
        ready = s.computes(P + np.arange(S), gamma * (P - 1) * nbytes / S, "reduce", into)[:, None]
    else:
        ready = into
    k = np.repeat(np.arange(S), P)
    w = np.tile(np.arange(P), S)
    s.messages(P + k, w, k, k + 1, "pull", deps=ready[k])
    return s


def ps_push_pull(P, nbytes, servers=1, gamma=0.0):
    """Parameter-server push/pull: P workers push gradients, servers answer pulls.

    Ranks ``0..P-1`` are workers and ``P..P+S-1`` servers; parameters are
    sharded evenly, ``nbytes / S`` per server. Every worker pushes its shard
    to every server at once; a server sums the P pushes (``gamma (P - 1)
    nbytes / S`` seconds when ``gamma > 0``) and then sends the new shard to
    every worker.

    Parameters
    ----------
    P : int
        Workers, >= 1.
    nbytes : float
        Bytes of gradients (and parameters) per worker.
    servers : int, optional
        Servers S, >= 1.
    gamma : float, optional
        Reduction cost, seconds per byte.

    Returns
    -------
    Trace
        ``P + S`` ranks and ``2 P S`` messages.

    Examples
    --------
    >>> t = ps_push_pull(4, 1e6, servers=2)
    >>> t.ranks, t.num_messages, float(t.size[0])
    (6, 16, 500000.0)
    """
    return _build("ps_push_pull", P, nbytes, servers=servers, gamma=gamma).trace()


# -- payloads ----------------------------------------------------------------------------------

_SCHEDULES = MappingProxyType({
    "binomial_broadcast": _binomial_broadcast,
    "binomial_reduce": _binomial_reduce,
    "pipeline_broadcast": _pipeline_broadcast,
    "pipeline_reduce": _pipeline_reduce,
    "pipeline_allreduce": _pipeline_allreduce,
    "be_broadcast": _be_broadcast,
    "recursive_doubling_allreduce": _recursive_doubling_allreduce,
    "rabenseifner_allreduce": _rabenseifner_allreduce,
    "ring_allreduce": _ring_allreduce,
    "ring_allgather": _ring_allgather,
    "ring_reduce_scatter": _ring_reduce_scatter,
    "recursive_doubling_allgather": _recursive_doubling_allgather,
    "recursive_halving_reduce_scatter": _recursive_halving_reduce_scatter,
    "alltoall": _alltoall,
    "ps_push_pull": _ps_push_pull,
})


def payloads(generator, P, nbytes, **options):
    """A collective's trace together with what each of its messages carries.

    Both come from the same schedule code, so a symbolic replay of the
    payloads checks the trace itself.

    Parameters
    ----------
    generator : callable or str
        One of this module's generators (or its name), e.g. ``ring_allreduce``.
    P, nbytes
        As for the generator.
    **options
        The generator's other arguments (``segments``, ``gamma``, ``servers``).

    Returns
    -------
    trace : Trace
        Exactly what ``generator(P, nbytes, **options)`` returns.
    payload : dict
        ``chunks`` (size of the chunk space), ``chunk_bytes``, and per op
        ``lo``, ``hi`` (the message carries chunks ``[lo, hi)``; -1 for
        compute ops) and ``reduce`` (True: the receiver adds the chunks to its
        own; False: it replaces them). Chunk spaces: one chunk (binomial, RD),
        the k segments (LP), the ``p'`` blocks (BE, Rabenseifner), chunk r of
        rank r (ring, RD allgather, RH reduce-scatter), block ``o * P + d``
        from rank o for rank d (all-to-all), shard k of server k (PS).

    Raises
    ------
    TraceError
        For an unknown generator or bad arguments.

    Examples
    --------
    >>> t, p = payloads(ring_allgather, 3, 3e6)
    >>> p["lo"].tolist(), t.rank.tolist()
    ([0, 1, 2, 2, 0, 1], [0, 1, 2, 0, 1, 2])
    """
    name = generator if isinstance(generator, str) else getattr(generator, "__name__", None)
    if name not in _SCHEDULES:
        raise TraceError(f"unknown collective {generator!r}; known: {', '.join(_SCHEDULES)}")
    accepted = set(inspect.signature(globals()[name]).parameters) - {"P", "nbytes"}
    unknown = set(options) - accepted
    if unknown:
        raise TraceError(f"{name} takes no option {sorted(unknown)[0]!r}; it takes "
                         f"{sorted(accepted) or 'none'}")
    s = _build(name, P, nbytes, **options)
    return s.trace(), s.payload()


_CHECKS = MappingProxyType({"segments": lambda v: check_count(v, "segments", TraceError),
                           "gamma": lambda v: check_real(v, "gamma", TraceError),
                           "servers": lambda v: check_count(v, "servers", TraceError)})


def _build(name, P, nbytes, **options):
    """Validate the arguments and run the named schedule."""
    args = {key: _CHECKS[key](value) for key, value in options.items()}
    return _SCHEDULES[name](check_count(P, "P", TraceError),
                            check_real(nbytes, "nbytes", TraceError), **args)
