"""Operations on traces: run one after another, repeat, find each rank's last ops.

Each returns a new :class:`~netsim.trace.core.Trace`; none changes its input.
"""

import numpy as np

from netsim.checks import check_int
from netsim.errors import TraceError
from netsim.trace.core import Trace, check_trace, ranges
from netsim.trace.graph import distinct

__all__ = ["concat", "repeat", "terminal_ops", "touches"]


def terminal_ops(trace):
    """For each rank, the ops touching it that no later op touching it waits for.

    These are the ops a rank must see finished before it may start something new:
    its last compute ops, its last sends and its last receives.

    A collective touches every rank of its group.

    Returns
    -------
    ops, ranks : ndarray
        Parallel arrays of (op, rank) pairs.

    Examples
    --------
    >>> from netsim.trace.core import TraceBuilder
    >>> b = TraceBuilder(2)
    >>> a = b.message(0, 1, 10)
    >>> c = b.message(1, 0, 10, deps=[a])
    >>> ops, ranks = terminal_ops(b.build())
    >>> sorted(zip(ranks.tolist(), ops.tolist()))
    [(0, 1), (1, 1)]
    """
    if trace.num_collectives:
        return _terminal_touches(trace)
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




def touches(trace):
    """Every (op, rank) pair of an op and a rank it touches, in op order.

    A compute op touches its rank, a message its source and destination, a
    collective every rank of its group (in group order).

    Returns
    -------
    ops, ranks : ndarray of int64

    Examples
    --------
    >>> from netsim.trace.core import TraceBuilder
    >>> b = TraceBuilder(3); _ = b.message(0, 2, 8); _ = b.collective("allreduce", [1, 2], 8)
    >>> [x.tolist() for x in touches(b.build())]
    [[0, 0, 1, 1], [0, 2, 1, 2]]
    """
    n = trace.num_ops
    coll = trace.is_collective
    sp = trace.specs
    k = np.where(coll, trace.spec, 0).astype(np.int64)
    sizes = np.where(coll, np.diff(sp.group_ptr)[k] if len(sp) else 0,
                     np.where(trace.is_message, 2, 1)).astype(np.int64)
    ops = np.repeat(np.arange(n, dtype=np.int64), sizes)
    ranks = np.repeat(trace.rank.astype(np.int64), sizes)
    first = np.cumsum(sizes) - sizes
    msg = np.flatnonzero(trace.is_message)
    ranks[first[msg] + 1] = trace.peer[msg]
    cops = np.flatnonzero(coll)
    if len(cops):
        ranks[ranges(first[cops], sizes[cops])] = sp.group_idx[
            ranges(sp.group_ptr[k[cops]], sizes[cops])]
    return ops, ranks


def _terminal_touches(trace):
    """:func:`terminal_ops` of a trace with collectives, by (op, rank) keys."""
    ops, ranks = touches(trace)
    R = np.int64(trace.ranks)
    owner = np.repeat(np.arange(trace.num_ops, dtype=np.int64), np.diff(trace.dep_ptr))
    # Each dependency edge dep -> owner, once per rank the owner touches: (dep, rank) hidden.
    start = np.searchsorted(ops, np.arange(trace.num_ops + 1))
    cnt = np.diff(start)[owner]
    at = ranges(start[owner], cnt)
    hidden = np.repeat(trace.dep_idx, cnt) * R + ranks[at]
    keep = ~np.isin(ops * R + ranks, hidden)
    return ops[keep], ranks[keep]


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
        if nxt.num_collectives:
            extra, root_deps = _root_deps_by_touch(nxt, is_root, t_ops, bounds)
            root_deps = root_deps + base
        else:
            extra = np.where(is_root, bounds[rank + 1] - bounds[rank], 0)
            roots = np.flatnonzero(is_root)
            root_deps = t_ops[ranges(bounds[rank[roots]], extra[roots])] + base
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


def _root_deps_by_touch(nxt, is_root, t_ops, bounds):
    """Per op of ``nxt``, how many terminal ops it waits for, and them (each once, sorted).

    An op without dependencies waits for the terminal ops of its rank, a
    collective for those of every rank of its group (``t_ops`` grouped by rank,
    rank r's at ``bounds[r]:bounds[r + 1]``).
    """
    ops, ranks = touches(nxt)
    coll = nxt.is_collective[ops]
    # A message waits for its sender's ops only, as in program order; a collective for all.
    first = np.ones(len(ops), bool)
    first[1:] = ops[1:] != ops[:-1]
    pick = is_root[ops] & (coll | first)
    ops, ranks = ops[pick], ranks[pick]
    cnt = bounds[ranks + 1] - bounds[ranks]
    deps = t_ops[ranges(bounds[ranks], cnt)]
    owner = np.repeat(ops, cnt)
    span = np.int64(max(int(t_ops.max()) + 1, 1) if len(t_ops) else 1)
    keys = distinct(owner * span + deps)
    return np.bincount(keys // span, minlength=nxt.num_ops), keys % span


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
    specs, remap = first.specs.merged(second.specs)
    offsets = np.repeat(iteration_base + np.arange(copies, dtype=np.int64) * iteration_step,
                        second.num_ops)

    def col(name):
        return np.concatenate([getattr(first, name), np.tile(getattr(second, name), copies)])

    return Trace(first.ranks, col("kind"), col("rank"), col("peer"), col("size"), col("duration"),
                 col("flops"), np.concatenate([first.iteration, np.tile(second.iteration, copies)
                                               + offsets]),
                 np.concatenate([first.tag, np.tile(tag2, copies)]), dep_ptr, dep_idx,
                 tags=tags, metadata=first.metadata, channel=col("channel"),
                 priority=col("priority"), queue=col("queue"), spec=np.concatenate(
                     [first.spec, np.tile(remap[second.spec], copies)]), specs=specs)


def concat(first, second, iteration_offset=0):
    """Run ``second`` after ``first``, rank by rank (MPI program order).

    Every op of ``second`` with no dependency waits for the ops of ``first`` that
    touch its rank last (see :func:`terminal_ops`). Every op keeps its channel
    and priority. Ranks, tags and metadata of ``first`` are kept; ``second``'s iterations are shifted by ``iteration_offset``.

    Parameters
    ----------
    first, second : Trace
        Traces of the same number of ranks.
    iteration_offset : int, optional
        Added to every iteration index of ``second``.

    Returns
    -------
    Trace

    Raises
    ------
    TraceError
        If the traces have different numbers of ranks.

    Examples
    --------
    >>> from netsim import TraceBuilder
    >>> b = TraceBuilder(2); _ = b.message(0, 1, 8); t = b.build()
    >>> both = concat(t, t)
    >>> both.num_messages, both.deps(1).tolist()
    (2, [0])
    """
    check_trace(first, "first")
    check_trace(second, "second")
    return _joined(first, second, 1, 0, iteration_offset)


def repeat(trace, iterations):
    """``iterations`` copies of a trace, each after the previous one (see :func:`concat`).

    Copy ``k`` has its iteration indices shifted by ``k * trace.num_iterations``.

    Parameters
    ----------
    trace : Trace
    iterations : int
        Number of copies, >= 1 (1 returns ``trace`` itself).

    Returns
    -------
    Trace

    Examples
    --------
    >>> from netsim import TraceBuilder
    >>> b = TraceBuilder(2); _ = b.message(0, 1, 8); t = b.build()
    >>> r = repeat(t, 3)
    >>> r.num_iterations, r.deps(2).tolist()
    (3, [1])
    """
    check_trace(trace)
    iterations = check_int(iterations, "iterations", error=TraceError)
    if iterations == 1:
        return trace
    span = trace.num_iterations
    # Copy k of the repeated part is iteration block k + 1.
    return _joined(trace, trace, int(iterations) - 1, span, span)


