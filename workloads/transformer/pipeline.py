"""Pipeline schedules: the order in which a stage runs its micro-batches' forward and backward.

A pipeline of ``p`` stages runs ``m`` micro-batches per iteration, each stage
on one device, a forward ``F j`` and a backward ``B j`` of every micro-batch
``j``; a stage's op waits for the same op of the stage before it (forward) or
after it (backward), and for its own previous op. With the interleaved
schedule each stage holds ``v`` chunks of layers (``v`` "virtual stages":
chunk ``c`` of stage ``s`` is virtual stage ``c p + s``), and an op is a
forward or backward of one chunk; the forward of chunk ``c > 0`` on stage 0
waits for chunk ``c - 1`` on stage ``p - 1``. The schedules differ only in the
order of each stage's ops:

=============== ============================================== ==================
name            order on stage ``i`` (0-based)                 source
=============== ============================================== ==================
``gpipe``       every forward, then every backward             Huang et al. 2019
``1f1b``        ``min(p - i - 1, m)`` forwards to fill the     Narayanan et al.
                pipe, then one forward and one backward in     2021 (PipeDream-
                turn, then the remaining backwards             Flush), Fig. 4
``interleaved`` 1F1B over the ``m v`` chunk-micro-batches,     Narayanan et al.
                ``2 (p - i - 1) + (v - 1) p`` forwards to      2021, section
                fill, chunks taken ``p`` micro-batches at a    2.2.2, Fig. 4;
                time (forward chunks ascending, backward       Megatron-LM's
                chunks descending)                             ``schedules.py``
=============== ============================================== ==================

With every forward taking ``t_f`` and every backward ``t_b`` on every stage
and no communication time, GPipe and 1F1B take ``(m + p - 1)(t_f + t_b)`` per
iteration: the ideal ``m (t_f + t_b)`` plus a bubble of ``(p - 1)(t_f + t_b)``,
a fraction ``(p - 1)/m`` of the ideal (Narayanan et al. 2021, section 2.2.1).
The interleaved schedule's bubble is ``(p - 1)/(v m)`` of the ideal (section
2.2.2): ``(m v + p - 1)(t_f + t_b)/v``. 1F1B keeps at most ``p - i``
micro-batches' activations alive on stage ``i`` instead of ``m``. The
interleaved order is that of Megatron-LM's
``forward_backward_pipelining_with_interleaving``
(``megatron/core/pipeline_parallel/schedules.py``, core_r0.9.0: the warm-up
count and ``get_model_chunk_id``), which needs ``m`` a multiple of ``p``.

When a hop between stages takes ``h``, GPipe takes ``2 (p - 1) h`` more (one
hop per stage to fill, one to drain), but 1F1B also waits in its steady state:
a stage's backward needs the gradient that went round the later stages and
back. :func:`timeline` gives a schedule's exact time by walking its ops in
dependency order (each op starts when its stage is free and its input has
arrived), for uniform stages or stages of uneven work (an uneven split of the
layers): there the slowest stage sets the rate of the steady state, and GPipe
takes ``sum_s (t_f,s + t_b,s) + (m - 1)(max_s t_f,s + max_s t_b,s)`` (every
stage's ops once to fill and drain, the slowest's ``m - 1`` more); 1F1B at most
that, its exact time the longest path the walk finds.

References
----------
.. [1] Y. Huang et al., "GPipe: efficient training of giant neural networks using
   pipeline parallelism", NeurIPS 2019.
.. [2] D. Narayanan et al., "Efficient large-scale language model training on GPU
   clusters using Megatron-LM", SC'21, arXiv:2104.04473.
"""

from workloads.errors import WorkloadError

__all__ = ["SCHEDULES", "order", "source", "target", "check_chunks", "bubble_fraction",
           "iteration_time", "timeline"]

SCHEDULES = ("gpipe", "1f1b", "interleaved")


def check_chunks(schedule, p, m, chunks):
    """Raise :class:`WorkloadError` unless ``chunks`` suits the schedule.

    The interleaved schedule needs ``chunks >= 2`` and ``m`` a multiple of ``p``;
    the others take one chunk.

    Examples
    --------
    >>> check_chunks("interleaved", 4, 6, 2)
    Traceback (most recent call last):
    ...
    workloads.errors.WorkloadError: the interleaved schedule needs micro-batches (6) a multiple of the stages (4)
    """
    if schedule not in SCHEDULES:
        raise WorkloadError(f"unknown pipeline schedule {schedule!r}; known: "
                            f"{', '.join(SCHEDULES)}")
    if schedule != "interleaved":
        if chunks != 1:
            raise WorkloadError(f"chunks={chunks} needs the interleaved schedule")
        return
    if isinstance(chunks, bool) or not isinstance(chunks, int) or chunks < 2:
        raise WorkloadError(f"the interleaved schedule needs chunks >= 2, got {chunks!r}")
    if p < 2:
        raise WorkloadError("the interleaved schedule needs at least 2 pipeline stages")
    if m % p:
        raise WorkloadError(f"the interleaved schedule needs micro-batches ({m}) a multiple "
                            f"of the stages ({p})")


def order(schedule, p, m, stage, chunks=1):
    """The ops of ``stage`` in the order it runs them: ``("F" | "B", micro-batch, chunk)``.

    Parameters
    ----------
    schedule : {"gpipe", "1f1b", "interleaved"}
    p : int
        Stages.
    m : int
        Micro-batches per iteration.
    stage : int
        0 .. p - 1.
    chunks : int
        Chunks per stage (``v``; 1 but for the interleaved schedule).

    Raises
    ------
    WorkloadError
        For an unknown schedule, bad chunks or a stage out of range.

    Examples
    --------
    >>> order("1f1b", 2, 3, 0)
    [('F', 0, 0), ('F', 1, 0), ('B', 0, 0), ('F', 2, 0), ('B', 1, 0), ('B', 2, 0)]
    >>> order("gpipe", 2, 2, 1)
    [('F', 0, 0), ('F', 1, 0), ('B', 0, 0), ('B', 1, 0)]
    >>> order("interleaved", 2, 2, 1, chunks=2)[:5]
    [('F', 0, 0), ('F', 1, 0), ('F', 0, 1), ('B', 0, 1), ('F', 1, 1)]
    """
    check_chunks(schedule, p, m, chunks)
    if not 0 <= stage < p:
        raise WorkloadError(f"stage {stage} is not in 0..{p - 1}")
    if schedule == "gpipe":
        return [("F", j, 0) for j in range(m)] + [("B", j, 0) for j in range(m)]
    total = m * chunks
    if schedule == "1f1b":
        warm = min(p - stage - 1, m)
    else:
        warm = min(2 * (p - stage - 1) + (chunks - 1) * p, total)

    def op(kind, k):   # the k-th forward or backward: Megatron-LM's get_model_chunk_id
        group, within = divmod(k, p * chunks)
        chunk = within // p
        return (kind, group * p + within % p, chunk if kind == "F" else chunks - 1 - chunk)

    ops = [op("F", k) for k in range(warm)]
    for k in range(total - warm):
        ops += [op("F", warm + k), op("B", k)]
    return ops + [op("B", k) for k in range(total - warm, total)]


def source(kind, stage, chunk, p, chunks=1):
    """The (stage, chunk) whose op of the same kind and micro-batch this op waits for, or None.

    Examples
    --------
    >>> source("F", 0, 1, 4, 2), source("B", 3, 0, 4, 2), source("B", 3, 1, 4, 2)
    ((3, 0), (0, 1), None)
    """
    if kind == "F":
        return (stage - 1, chunk) if stage > 0 else ((p - 1, chunk - 1) if chunk > 0 else None)
    if stage < p - 1:
        return stage + 1, chunk
    return (0, chunk + 1) if chunk < chunks - 1 else None


def target(kind, stage, chunk, p, chunks=1):
    """The (stage, chunk) that waits for this op's output (activation or gradient), or None.

    Examples
    --------
    >>> target("F", 3, 0, 4, 2), target("B", 0, 1, 4, 2), target("F", 3, 1, 4, 2)
    ((0, 1), (3, 0), None)
    """
    # The forward and backward chains run the same (stage, chunk) order in opposite
    # directions: what waits for a forward op is what a backward op waits for, and back.
    return source("B" if kind == "F" else "F", stage, chunk, p, chunks)


def bubble_fraction(p, m, chunks=1):
    """The pipeline bubble as a fraction of the ideal time: ``(p - 1) / (v m)`` [2]_.

    Examples
    --------
    >>> bubble_fraction(4, 8), bubble_fraction(4, 8, chunks=2)
    (0.375, 0.1875)
    """
    return (p - 1) / (chunks * m)


def iteration_time(p, m, t_forward, t_backward, chunks=1):
    """Time per iteration without communication: ``(v m + p - 1)(t_f + t_b)``.

    ``t_forward`` and ``t_backward`` are one chunk's (one stage's for ``v = 1``).

    Examples
    --------
    >>> iteration_time(4, 8, 1.0, 2.0)
    33.0
    """
    return (chunks * m + p - 1) * (t_forward + t_backward)


def _per_chunk(t, p, chunks):
    """Seconds of each stage's each chunk from one number, one per stage, or one per chunk."""
    if not hasattr(t, "__len__"):
        return [[t] * chunks] * p
    return [list(x) if hasattr(x, "__len__") else [x] * chunks for x in t]


def timeline(schedule, p, m, t_forward, t_backward, hop=0.0, chunks=1, gather=0.0, first=None):
    """Exact times of a pipeline: the makespan and each stage's end.

    Each op starts once its stage has finished the op before it and its input
    (:func:`source`) arrived: the other op ended ``hop`` ago. ``t_forward`` and
    ``t_backward`` are one chunk's, the same on every stage, or a sequence of
    ``p``: stage ``s``'s (stages of uneven work), each of which may be a sequence of
    ``chunks``: each chunk's (chunks of uneven work, e.g. the logit layer in the last
    chunk of the last stage). An op with an input first spends ``gather``
    on its stage's stream reassembling it (Megatron-LM's scatter/gather of
    pipeline tensors: an allgather among the tensor-parallel shards). ``first``, a
    function per stage ``f(start) -> end``, times stage ``s``'s first forward
    (micro-batch 0, chunk 0) instead (the overlapped parameter allgather,
    :func:`workloads.transformer.overlaps.param_gather.first_forward`).

    Returns
    -------
    makespan : float
    ends : list of float
        When each stage finishes its last op.

    Examples
    --------
    >>> timeline("gpipe", 4, 8, 1.0, 2.0)[0] == iteration_time(4, 8, 1.0, 2.0)
    True
    >>> timeline("gpipe", 2, 4, 1.0, 2.0, hop=0.5)[0]   # 15 + 2 (p - 1) hops
    16.0
    >>> timeline("1f1b", 2, 4, 1.0, 2.0, hop=0.5)[0]    # waits in the steady state too
    17.0
    >>> timeline("interleaved", 4, 8, 0.5, 1.0, chunks=2)[0] == iteration_time(4, 8, 0.5, 1.0, 2)
    True
    >>> timeline("gpipe", 2, 4, 1.0, 2.0, hop=0.5, gather=0.25)[0]   # 16 + 8 gathers on stage 1
    18.0

    Uneven stages: GPipe takes ``sum_s (t_f,s + t_b,s) + (m - 1)(max t_f + max
    t_b)``, 1F1B at most that (its light stages fill in while the slowest waits).

    >>> timeline("gpipe", 3, 4, [1.0, 2.0, 1.0], [2.0, 4.0, 2.0])[0]   # 12 + (4 - 1)(2 + 4)
    30.0
    >>> timeline("1f1b", 3, 4, [1.0, 2.0, 1.0], [2.0, 4.0, 2.0])[0]
    28.0

    Uneven chunks: ``(v m + p - 1)(t_f + t_b) = 27`` for alike ones; a chunk of the
    last stage twice as heavy adds its 4 forwards' and 4 backwards' extra ``4 (1 + 2)``,
    all on the stage that sets the pace.

    >>> timeline("interleaved", 2, 4, 1.0, 2.0, chunks=2)[0]
    27.0
    >>> timeline("interleaved", 2, 4, [[1.0, 1.0], [1.0, 2.0]], [[2.0] * 2, [2.0, 4.0]],
    ...          chunks=2)[0]
    39.0
    """
    orders = [order(schedule, p, m, s, chunks) for s in range(p)]
    t_forward, t_backward = (_per_chunk(t, p, chunks) for t in (t_forward, t_backward))
    end, free, pos = {}, [0.0] * p, [0] * p
    while any(pos[s] < len(orders[s]) for s in range(p)):
        moved = False
        for s in range(p):
            while pos[s] < len(orders[s]):
                kind, j, c = orders[s][pos[s]]
                src = source(kind, s, c, p, chunks)
                if src is not None and (kind, src, j) not in end:
                    break
                ready = end[(kind, src, j)] + hop if src is not None else 0.0
                took = (t_forward if kind == "F" else t_backward)[s][c] + (gather if src else 0.0)
                start = max(free[s], ready)
                if first is not None and kind == "F" and j == 0 and c == 0:
                    free[s] = end[(kind, (s, c), j)] = first[s](start + (gather if src else 0.0))
                else:
                    free[s] = end[(kind, (s, c), j)] = start + took
                pos[s] += 1
                moved = True
        if not moved:   # pragma: no cover - the schedules above never deadlock
            raise WorkloadError(f"pipeline schedule {schedule!r} deadlocks")
    return max(free), list(free)
