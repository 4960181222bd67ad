"""The dependency graph of a trace: successors, cycle check, and index ranges, values and pairs.

Kept apart from :mod:`netsim.trace.core` (which re-exports :func:`successors` and
:func:`ranges`) so that the trace's columns and their validation fit one module.
"""

import numpy as np

from netsim.errors import TraceError

__all__ = ["check_acyclic", "distinct", "ranges", "successors", "unique_pairs"]


def successors(trace):
    """CSR of the ops waiting for each op: ``succ[succ_ptr[i]:succ_ptr[i + 1]]`` wait for op i.

    Parameters
    ----------
    trace : Trace

    Returns
    -------
    succ_ptr, succ : ndarray of int64
        The reverse of the trace's ``dep_ptr`` / ``dep_idx``; the waiting ops of
        each op are in increasing op order.

    Examples
    --------
    >>> from types import SimpleNamespace
    >>> t = SimpleNamespace(num_ops=2, dep_ptr=np.array([0, 0, 1]), dep_idx=np.array([0]))
    >>> ptr, succ = successors(t)  # op 1 waits for op 0
    >>> ptr.tolist(), succ.tolist()
    ([0, 1, 1], [1])
    """
    n = trace.num_ops
    succ_ptr = np.zeros(n + 1, np.int64)
    np.cumsum(np.bincount(trace.dep_idx, minlength=n), out=succ_ptr[1:])
    # The owner of dependency entry k is the op whose range dep_ptr[i]:dep_ptr[i + 1] holds k;
    # found for the sorted entries only, without an owner array of every entry (at 10^7 ops
    # that array and its gathered copy were most of this function's memory).
    order = np.argsort(trace.dep_idx, kind="stable")
    succ = np.searchsorted(trace.dep_ptr, order, side="right")
    succ -= 1
    return succ_ptr, succ


def check_acyclic(trace):
    """Raise :class:`~netsim.errors.TraceError` showing one cycle if the trace's dependencies have one.

    Kahn's algorithm over the CSR dependencies; on failure it walks backwards
    along unfinished dependencies until an op repeats.

    Parameters
    ----------
    trace : Trace
        Or any object with a trace's ``num_ops``, ``dep_ptr``, ``dep_idx``,
        ``is_message``, ``rank`` and ``peer``.

    Raises
    ------
    TraceError
        Naming the ops of one cycle and the first ops that can never start.

    Examples
    --------
    >>> from types import SimpleNamespace
    >>> t = SimpleNamespace(num_ops=2, dep_ptr=np.array([0, 1, 2]), dep_idx=np.array([1, 0]),
    ...                     is_message=np.array([True, True]), rank=[0, 1], peer=[1, 0])
    >>> check_acyclic(t)
    Traceback (most recent call last):
    ...
    netsim.errors.TraceError: dependency cycle among 2 ops: 0 <- 1 <- 0 (X <- Y: X waits for Y); 2 ops can never start: op 0 (message 0->1), op 1 (message 1->0)
    """
    n = trace.num_ops
    indeg = np.diff(trace.dep_ptr).astype(np.int64)
    succ_ptr, succ = successors(trace)
    frontier = np.flatnonzero(indeg == 0)
    done = 0
    while len(frontier):
        done += len(frontier)
        starts = succ_ptr[frontier]
        released = succ[ranges(starts, succ_ptr[frontier + 1] - starts)]
        if not len(released):
            break
        np.subtract.at(indeg, released, 1)
        frontier = distinct(released[indeg[released] == 0])
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
        deps = trace.dep_idx[trace.dep_ptr[op]:trace.dep_ptr[op + 1]]
        op = int(deps[stuck[deps]][0])
    cycle = path[seen[op]:] + [op]
    shown = " <- ".join(str(c) for c in cycle[:12]) + (" <- ..." if len(cycle) > 12 else "")
    blocked = np.flatnonzero(stuck)
    first = ", ".join(_describe(trace, int(b)) for b in blocked[:3])
    raise TraceError(f"dependency cycle among {len(cycle) - 1} ops: {shown} "
                     f"(X <- Y: X waits for Y); {len(blocked)} ops can never start: {first}"
                     + (", ..." if len(blocked) > 3 else ""))


def _describe(trace, op):
    if trace.is_message[op]:
        return f"op {op} (message {trace.rank[op]}->{trace.peer[op]})"
    return f"op {op} (compute on rank {trace.rank[op]})"




def ranges(lo, cnt):
    """Concatenation of ``arange(lo[i], lo[i] + cnt[i])`` for all i, without a Python loop.

    Parameters
    ----------
    lo : array_like of int
        First value of each range.
    cnt : array_like of int
        Length of each range (>= 0).

    Returns
    -------
    ndarray of int64

    Examples
    --------
    >>> ranges([5, 0, 10], [2, 0, 3]).tolist()
    [5, 6, 10, 11, 12]
    """
    cnt = np.asarray(cnt, np.int64)
    return np.repeat(np.asarray(lo, np.int64) - (np.cumsum(cnt) - cnt), cnt) + np.arange(cnt.sum())


def distinct(x):
    """The sorted distinct values of an integer array: ``np.unique(x)``, by one sort.

    numpy 2.4's ``np.unique`` of integers (with no ``return_*``) goes through a hash table
    and took 10-15x a sort's time at 10^5-10^6 values on the development machine
    (benchmarks/README.md, issue 43); a sort and a comparison of neighbours give the same
    values in the same order and dtype.

    Parameters
    ----------
    x : array_like of int

    Returns
    -------
    ndarray
        One-dimensional, increasing.

    Examples
    --------
    >>> distinct([3, 1, 3, 2, 1]).tolist()
    [1, 2, 3]
    """
    s = np.sort(np.asarray(x).reshape(-1))
    if len(s) < 2:
        return s
    keep = np.empty(len(s), bool)
    keep[0] = True
    np.not_equal(s[1:], s[:-1], out=keep[1:])
    return s[keep]


def unique_pairs(a, b):
    """The distinct pairs ``(a[i], b[i])`` of integers, in lexicographic order, as two arrays.

    Equal to ``np.unique(np.stack([a, b]), axis=1)``, found by one sort of one integer per
    pair (:func:`distinct`);
    that path is kept where one integer per pair would not fit 63 bits.

    Parameters
    ----------
    a, b : array_like of int
        Of one length.

    Returns
    -------
    ndarray of int64
        Shape ``(2, distinct pairs)``: row 0 the ``a`` values, row 1 the ``b`` values.

    Examples
    --------
    >>> unique_pairs([2, 0, 2, 0], [1, -1, 1, 5]).tolist()
    [[0, 0, 2], [-1, 5, 1]]
    """
    a, b = np.asarray(a, np.int64).reshape(-1), np.asarray(b, np.int64).reshape(-1)
    if not len(a):
        return np.zeros((2, 0), np.int64)
    lo_a, lo_b = int(a.min()), int(b.min())
    span_a, span_b = int(a.max()) - lo_a + 1, int(b.max()) - lo_b + 1
    if span_a * span_b >= 1 << 62:   # pragma: no cover - beyond any trace's op count
        return np.unique(np.stack([a, b]), axis=1)
    key = distinct((a - lo_a) * span_b + (b - lo_b))
    return np.stack([key // span_b + lo_a, key % span_b + lo_b])
