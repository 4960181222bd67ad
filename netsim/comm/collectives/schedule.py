"""The schedule builder shared by every collective, and MPICH's fold for non-power-of-two P.

A :class:`Schedule` appends the ops of one collective a step at a time as numpy
blocks (it is a :class:`netsim.trace.blocks.BlockBuilder`, the core's one block
builder) and turns them into a :class:`~netsim.trace.core.Trace` together with what
each message carries (see :func:`netsim.comm.collectives.payloads`). The step
semantics and the fold are described in :mod:`netsim.comm.collectives`.
"""

from types import MappingProxyType

import numpy as np

from netsim.trace.blocks import BlockBuilder
from netsim.checks import check_int, check_real
from netsim.errors import TraceError
from netsim.trace.core import COMPUTE, MAX_RANKS, MESSAGE

__all__ = ["Schedule", "build", "split", "pof2", "fold_core", "fold", "unfold", "halving",
           "doubling", "identity", "chunk_start"]


def pof2(P):
    """Largest power of two <= P (``p'`` of the fold).

    Examples
    --------
    >>> pof2(1), pof2(6), pof2(8)
    (1, 4, 8)
    """
    return 1 << (P.bit_length() - 1)


# -- the schedule builder -------------------------------------------------------------------

class Schedule(BlockBuilder):
    """Ops of one collective, appended a step at a time as numpy blocks.

    A :class:`netsim.trace.blocks.BlockBuilder` whose messages also carry a range of
    chunks (:meth:`payload`). ``send[r]`` and ``recv[r]`` are rank r's latest
    send and latest receive (or the reduction of it): what its next step waits
    for.

    Parameters
    ----------
    name : str
        The collective's name, stored in the trace's metadata.
    ranks : int
        Number of ranks.
    chunks : int
        Size of the chunk space messages carry ranges of (see :meth:`payload`).
    chunk_bytes : float or ndarray of float
        Bytes of one chunk, or of each chunk (see :func:`split`).
    cost : float, optional
        Reduction seconds per byte (gamma); 0 adds no compute ops.
    **params
        Stored in the trace's metadata (``nbytes``, ``segments``, ...).

    Examples
    --------
    A ring allgather of three chunks, by hand:

    >>> import numpy as np
    >>> s = Schedule("demo", 3, 3, 1e6)
    >>> r = np.arange(3)
    >>> for k in range(2):
    ...     c = (r - k) % 3
    ...     _ = s.step(r, (r + 1) % 3, c, c + 1, "allgather", rendezvous=False)
    >>> t = s.trace()
    >>> t.num_messages, t.deps(3).tolist()  # rank 0's second send waits for its first
    (6, [0, 2])
    """

    def __init__(self, name, ranks, chunks, chunk_bytes, cost=0.0, **params):
        super().__init__(ranks)
        self.name = name
        self.chunks = chunks
        self.chunk_bytes = chunk_bytes
        self.gamma = cost  # reduction seconds per byte
        self.params = params
        self.send = np.full(self.ranks, -1, np.int64)
        self.recv = np.full(self.ranks, -1, np.int64)

    def bytes(self, lo, hi):
        """Bytes of chunks ``[lo, hi)``.

        Examples
        --------
        >>> Schedule("demo", 2, 3, np.array([5.0, 4.0, 4.0])).bytes(np.array([0, 1]), 3).tolist()
        [13.0, 8.0]
        """
        if np.ndim(self.chunk_bytes) == 0:
            return (hi - lo) * self.chunk_bytes
        if not hasattr(self, "_offsets"):
            self._offsets = np.concatenate([[0.0], np.cumsum(self.chunk_bytes)])
        return self._offsets[hi] - self._offsets[lo]

    def _append(self, kind, rank, peer, lo, hi, reduce, duration, tag, deps):
        """Append ops; ``deps`` is an (ops, slots) array of op ids, -1 for none."""
        valid = deps >= 0
        size = self.bytes(lo, hi) if kind == MESSAGE else 0.0
        if kind == MESSAGE:
            # refused as each step is added, not once the schedule is whole: a ring of
            # 8192 ranks holds 1.3e8 messages, gigabytes before the trace's own check
            check_pieces(size, self.name, self.ranks, self.params.get("nbytes"))
        return self.add(kind, rank, peer, size,
                        tag=self.tag(tag), deps=(valid.sum(axis=1), deps[valid]),
                        duration=duration, lo=lo, hi=hi, reduce=bool(reduce))

    def messages(self, src, dst, lo, hi, tag, reduce=False, deps=None):
        """Messages with explicit dependencies; ``send``/``recv`` are not updated.

        Parameters
        ----------
        src, dst : ndarray of int
            Sender and receiver of each message.
        lo, hi : ndarray of int
            Each message carries chunks ``[lo, hi)``.
        tag : str
        reduce : bool, optional
            Whether the receiver adds the chunks to its own (else replaces them).
        deps : ndarray of int, shape (messages, slots), optional
            Op ids each message waits for, -1 for an empty slot.

        Returns
        -------
        ndarray of int
            The new op ids.

        Examples
        --------
        >>> import numpy as np
        >>> s = Schedule("demo", 2, 1, 8.0)
        >>> s.messages(np.array([0, 1]), np.array([1, 0]), 0, 1, "x").tolist()
        [0, 1]
        """
        m = len(src)
        deps = np.full((m, 0), -1, np.int64) if deps is None else deps
        return self._append(MESSAGE, src, dst, lo, hi, reduce, 0.0, tag, deps)

    def computes(self, rank, seconds, tag, deps):
        """Compute ops (reductions) with explicit dependencies.

        Parameters
        ----------
        rank : ndarray of int
            The rank of each op.
        seconds : float or ndarray of float
            Duration of each op.
        tag : str
        deps : ndarray of int, shape (ops, slots)
            Op ids each op waits for, -1 for an empty slot.

        Returns
        -------
        ndarray of int
            The new op ids.

        Examples
        --------
        >>> import numpy as np
        >>> s = Schedule("demo", 2, 1, 8.0)
        >>> m = s.messages(np.array([0]), np.array([1]), 0, 1, "x")
        >>> s.computes(np.array([1]), 1e-6, "sum", m[:, None]).tolist()
        [1]
        """
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

        Parameters
        ----------
        src, dst : array_like of int
            Sender and receiver of each message.
        lo, hi : int or array_like of int
            Each message carries chunks ``[lo, hi)``.
        tag : str
        reduce : bool, optional
            The receiver reduces what it gets.
        rendezvous : bool, optional
            Messages also wait for the receiver's previous step.
        sendrecv : bool, optional
            A reduction also waits for the receiver's own send of this step.

        Returns
        -------
        ndarray of int
            The message op ids.

        Examples
        --------
        >>> s = Schedule("demo", 2, 1, 8.0, cost=1e-9)
        >>> s.step([0], [1], 0, 1, "reduce", reduce=True).tolist()
        [0]
        >>> int(s.recv[1])  # rank 1's next step waits for the reduction, op 1
        1
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
        deps = distinct(np.stack(cols, axis=1))
        msg = self._append(MESSAGE, src, dst, lo, hi, reduce, 0.0, tag, deps)
        self.send[src] = msg
        if reduce and self.gamma > 0:
            cols = [msg, self.recv[dst]] + ([self.send[dst]] if sendrecv else [])
            seconds = self.gamma * self.bytes(lo, hi)
            self.recv[dst] = self.computes(dst, seconds, tag, distinct(np.stack(cols, axis=1)))
        else:
            self.recv[dst] = msg
        return msg

    def trace(self):
        """The schedule as a validated Trace, once: the blocks' columns go into it
        (``BlockBuilder.build(release=True)``, so a schedule of 10^7 ops is not held twice).

        Examples
        --------
        >>> s = Schedule("demo", 2, 1, 8.0, nbytes=8.0)
        >>> _ = s.step([0], [1], 0, 1, "x")
        >>> dict(s.trace().metadata)
        {'collective': 'demo', 'ranks': 2, 'nbytes': 8.0}
        """
        return self.build({"collective": self.name, "ranks": self.ranks, **self.params},
                          release=True)

    def payload(self):
        """What each op carries (see :func:`netsim.comm.collectives.payloads`).

        Examples
        --------
        >>> s = Schedule("demo", 2, 4, 2.0)
        >>> _ = s.step([0], [1], 1, 3, "x")
        >>> p = s.payload(); p["lo"].tolist(), p["hi"].tolist(), float(s.trace().size[0])
        ([1], [3], 4.0)
        """
        return {"chunks": self.chunks, "chunk_bytes": self.chunk_bytes,
                "lo": self.column("lo", np.int64), "hi": self.column("hi", np.int64),
                "reduce": self.column("reduce", bool)}


def distinct(deps):
    """Replace repeated op ids within a row by -1 (an op waits for another once).

    Examples
    --------
    >>> distinct(np.array([[3, 3, 5], [-1, 2, 2]])).tolist()
    [[3, -1, 5], [-1, 2, -1]]
    """
    deps = deps.copy()
    for j in range(1, deps.shape[1]):
        for i in range(j):
            deps[deps[:, j] == deps[:, i], j] = -1
    return deps


def fold_core(P):
    """(p', rem, real) for MPICH's fold: ``real(i)`` is the real rank of core rank i.

    Examples
    --------
    >>> p2, rem, real = fold_core(6)
    >>> p2, rem, real(np.arange(p2)).tolist()
    (4, 2, [1, 3, 4, 5])
    """
    p2 = pof2(P)
    rem = P - p2

    def real(i):
        return np.where(i < rem, 2 * i + 1, i + rem)

    return p2, rem, real


def fold(s, rem, lo, hi, reduce):
    """Even ranks below 2 rem send chunks [lo, hi) (None: their own chunk) to rank + 1.

    Parameters
    ----------
    s : Schedule
    rem : int
        ``P - p'``.
    lo, hi : int or None
        Chunks sent; None for each sender's own chunk.
    reduce : bool
        Whether the odd neighbour reduces what it gets.

    Examples
    --------
    >>> s = Schedule("demo", 6, 6, 1.0); fold(s, 2, None, None, False)
    >>> t = s.trace(); t.rank.tolist(), t.peer.tolist(), s.payload()["lo"].tolist()
    ([0, 2], [1, 3], [0, 2])
    """
    even = np.arange(0, 2 * rem, 2)
    s.step(even, even + 1, even if lo is None else lo, even + 1 if hi is None else hi, "fold",
           reduce=reduce)


def unfold(s, rem, lo, hi):
    """Odd ranks below 2 rem send chunks [lo, hi) (None: the partner's chunk) to rank - 1.

    Parameters
    ----------
    s : Schedule
    rem : int
        ``P - p'``.
    lo, hi : int or None
        Chunks sent; None for the receiving partner's own chunk.

    Examples
    --------
    >>> s = Schedule("demo", 6, 1, 1.0); unfold(s, 2, 0, 1)
    >>> t = s.trace(); t.rank.tolist(), t.peer.tolist()
    ([1, 3], [0, 2])
    """
    odd = np.arange(1, 2 * rem, 2)
    s.step(odd, odd - 1, odd - 1 if lo is None else lo, odd if hi is None else hi, "unfold")


def halving(s, p2, real, start):
    """Recursive halving over core ranks 0..p2-1 (distance p2/2 first).

    ``start(i)`` is the first chunk of core block ``i`` (``start(p2)`` the end);
    afterwards core rank i holds block i.

    Parameters
    ----------
    s : Schedule
    p2 : int
        Core ranks, a power of two.
    real : callable
        Real rank of each core rank (:func:`fold_core`).
    start : callable
        First chunk of each core block (:func:`identity` or :func:`chunk_start`).

    Examples
    --------
    >>> s = Schedule("demo", 4, 4, 1.0); halving(s, 4, identity, identity)
    >>> s.payload()["hi"].tolist() == [4, 4, 2, 2, 2, 1, 4, 3]  # halves, then quarters
    True
    """
    nr = np.arange(p2)
    m = p2 // 2
    while m >= 1:
        partner = nr ^ m
        first = partner & ~(m - 1)
        s.step(real(nr), real(partner), start(first), start(first + m), "reduce-scatter",
               reduce=True)
        m //= 2


def doubling(s, p2, real, start):
    """Recursive-doubling allgather of core blocks: core rank i starts with block i.

    Parameters
    ----------
    s : Schedule
    p2 : int
        Core ranks, a power of two.
    real : callable
        Real rank of each core rank (:func:`fold_core`).
    start : callable
        First chunk of each core block (:func:`identity` or :func:`chunk_start`).

    Examples
    --------
    >>> s = Schedule("demo", 4, 4, 1.0); doubling(s, 4, identity, identity)
    >>> s.trace().size.tolist()  # one block, then two
    [1.0, 1.0, 1.0, 1.0, 2.0, 2.0, 2.0, 2.0]
    """
    nr = np.arange(p2)
    m = 1
    while m < p2:
        first = nr & ~(m - 1)
        s.step(real(nr), real(nr ^ m), start(first), start(first + m), "allgather")
        m *= 2


def identity(i):
    """Core block i starts at chunk i (no fold): the ``start`` of power-of-two schedules.

    Examples
    --------
    >>> identity(3)
    3
    """
    return i


def chunk_start(P):
    """First chunk of core block i under the fold: 2i for folded pairs, else i + rem.

    Examples
    --------
    >>> chunk_start(6)(np.arange(5)).tolist()  # blocks of 2, 2, 1, 1 chunks
    [0, 2, 4, 5, 6]
    """
    _, rem, _ = fold_core(P)

    def start(i):
        return np.where(i < rem, 2 * i, i + rem)

    return start


def check_pieces(sizes, name, ranks, nbytes=None):
    """Refuse message sizes between 0 and 1 byte (a message carries 0 or at least 1 byte).

    The one check of a schedule's messages before they exist: :class:`Schedule` makes it
    on each step as it is added, and :func:`netsim.comm.mpich.check_calls` on a ring's
    chunks (:func:`split`) before any schedule is built.

    Parameters
    ----------
    sizes : float or ndarray of float
    name : str
        The schedule, for the message (``ring_allreduce``).
    ranks : int
    nbytes : float, optional
        Bytes of the call, for the message.

    Raises
    ------
    TraceError

    Examples
    --------
    >>> check_pieces(split(4000.0, 8192), "ring_allreduce", 8192, 4000.0)
    Traceback (most recent call last):
    ...
    netsim.errors.TraceError: ring_allreduce on 8192 ranks of 4000 bytes would send messages of 0.488 bytes (a message carries 0 or at least 1 byte); use fewer ranks or more bytes
    """
    sizes = np.atleast_1d(np.asarray(sizes, dtype=np.float64))
    bad = np.flatnonzero((sizes > 0) & (sizes < 1))[:1]
    if len(bad):
        raise TraceError(f"{name} on {ranks} ranks"
                         + (f" of {nbytes:g} bytes" if nbytes is not None else "")
                         + f" would send messages of {sizes[bad[0]]:.3g} bytes (a message "
                           f"carries 0 or at least 1 byte); use fewer ranks or more bytes")


def split(nbytes, parts, element=None):
    """Bytes of each of ``parts`` chunks of an ``nbytes`` vector.

    With ``element=None`` every chunk has ``nbytes / parts`` (a float, returned as
    one number). With ``element`` (bytes per element, e.g. 4 for float32) the
    vector holds ``n = nbytes / element`` whole elements and chunks are whole
    elements as MPICH and NCCL cut them: the first ``n % parts`` chunks get
    ``n // parts + 1`` elements, the others ``n // parts``; the total stays
    exactly ``nbytes``.

    Examples
    --------
    >>> split(524, 8)
    65.5
    >>> split(524, 8, element=4).tolist()  # 131 floats: 3 chunks of 17, 5 of 16
    [68.0, 68.0, 68.0, 64.0, 64.0, 64.0, 64.0, 64.0]
    """
    if element is None:
        return nbytes / parts
    q, r = divmod(int(nbytes) // element, parts)
    return (element * (q + (np.arange(parts) < r))).astype(np.float64)


def _check_element(value):
    return None if value is None else check_int(value, "element", error=TraceError)


_CHECKS = MappingProxyType({
    "element": _check_element,
    "segments": lambda v: check_int(v, "segments", error=TraceError),
    "gamma": lambda v: check_real(v, "gamma", lo=0, error=TraceError),
    "servers": lambda v: check_int(v, "servers", error=TraceError),
})


def build(schedule, P, nbytes, **options):
    """Check a collective's arguments and run its schedule function.

    Parameters
    ----------
    schedule : callable
        ``schedule(P, nbytes, **options)`` returning a :class:`Schedule`.
    P : int
        Ranks (workers for the parameter server), >= 1.
    nbytes : float
        Bytes, >= 0.
    **options
        ``segments`` and ``servers`` (integers >= 1), ``gamma`` (seconds per byte, >= 0),
        ``element`` (None, or bytes per element >= 1: ``nbytes`` must then be a whole
        number of elements, and chunks are whole elements, see :func:`split`).

    Returns
    -------
    Schedule

    Raises
    ------
    TraceError
        Naming the first bad argument.

    Examples
    --------
    >>> def one_message(P, nbytes):
    ...     s = Schedule("demo", P, 1, nbytes)
    ...     s.step([0], [1], 0, 1, "send")
    ...     return s
    >>> build(one_message, 2, 8).trace().total_bytes
    8.0
    >>> build(one_message, 0, 8)
    Traceback (most recent call last):
    ...
    netsim.errors.TraceError: P must be an integer in 1..2147483647, got 0
    >>> build(one_message, 2**40, 8)
    Traceback (most recent call last):
    ...
    netsim.errors.TraceError: P must be an integer in 1..2147483647, got 1099511627776
    >>> build(one_message, 2, 6, element=4)
    Traceback (most recent call last):
    ...
    netsim.errors.TraceError: nbytes must be a whole number of 4-byte elements, got 6.0
    """
    args = {key: _CHECKS[key](value) for key, value in options.items()}
    nbytes = check_real(nbytes, "nbytes", lo=0, error=TraceError)
    element = args.get("element")
    if element is not None and (nbytes != int(nbytes) or int(nbytes) % element):
        raise TraceError(f"nbytes must be a whole number of {element}-byte elements, "
                         f"got {nbytes!r}")
    # Ranks are int32 in a trace (MAX_RANKS): a larger P is refused before any allocation.
    return schedule(check_int(P, "P", maximum=MAX_RANKS, error=TraceError), nbytes, **args)
