"""Pipeline schedules: the order in which a stage runs its micro-batches' forward and backward.

A pipeline of ``p`` stages runs ``m`` micro-batches per iteration, each stage
on one device, a forward ``F j`` and a backward ``B j`` of every micro-batch
``j``; a stage's op waits for the same op of the stage before it (forward) or
after it (backward), and for its own previous op. The schedules differ only in
the order of each stage's ops:

========= ==================================================== =================
name      order on stage ``i`` (0-based)                       source
========= ==================================================== =================
``gpipe`` every forward, then every backward                   Huang et al. 2019
``1f1b``  ``min(p - i - 1, m)`` forwards to fill the pipe,      Narayanan et al.
          then one forward and one backward in turn, then the   2021 (PipeDream-
          remaining backwards                                   Flush), Fig. 4
========= ==================================================== =================

With every forward taking ``t_f`` and every backward ``t_b`` on every stage
and no communication time, both take ``(m + p - 1)(t_f + t_b)`` per iteration:
the ideal ``m (t_f + t_b)`` plus a bubble of ``(p - 1)(t_f + t_b)``, a fraction
``(p - 1)/m`` of the ideal (Narayanan et al. 2021, section 2.2.1). 1F1B keeps at
most ``p - i`` micro-batches' activations alive on stage ``i`` instead of ``m``.

When a hop between stages takes ``h``, GPipe takes ``2 (p - 1) h`` more (one
hop per stage to fill, one to drain), but 1F1B also waits in its steady state:
a stage's backward needs the gradient that went round the later stages and
back. :func:`timeline` gives either schedule's exact time for uniform stages by
walking its ops in dependency order (each op starts when its stage is free and
its input has arrived).

References
----------
.. [1] Y. Huang et al., "GPipe: efficient training of giant neural networks using
   pipeline parallelism", NeurIPS 2019.
.. [2] D. Narayanan et al., "Efficient large-scale language model training on GPU
   clusters using Megatron-LM", SC'21, arXiv:2104.04473.
"""

from .errors import WorkloadError

__all__ = ["SCHEDULES", "order", "bubble_fraction", "iteration_time", "timeline"]

SCHEDULES = ("gpipe", "1f1b")


def order(schedule, p, m, stage):
    """The ops of ``stage`` in the order it runs them: a list of ``("F" | "B", micro-batch)``.

    Parameters
    ----------
    schedule : {"gpipe", "1f1b"}
    p : int
        Stages.
    m : int
        Micro-batches per iteration.
    stage : int
        0 .. p - 1.

    Raises
    ------
    WorkloadError
        For an unknown schedule or a stage out of range.

    Examples
    --------
    >>> order("1f1b", 2, 3, 0)
    [('F', 0), ('F', 1), ('B', 0), ('F', 2), ('B', 1), ('B', 2)]
    >>> order("1f1b", 2, 3, 1)
    [('F', 0), ('B', 0), ('F', 1), ('B', 1), ('F', 2), ('B', 2)]
    >>> order("gpipe", 2, 2, 0)
    [('F', 0), ('F', 1), ('B', 0), ('B', 1)]
    """
    if schedule not in SCHEDULES:
        raise WorkloadError(f"unknown pipeline schedule {schedule!r}; known: "
                            f"{', '.join(SCHEDULES)}")
    if not 0 <= stage < p:
        raise WorkloadError(f"stage {stage} is not in 0..{p - 1}")
    if schedule == "gpipe":
        return [("F", j) for j in range(m)] + [("B", j) for j in range(m)]
    warm = min(p - stage - 1, m)
    ops = [("F", j) for j in range(warm)]
    for j in range(m - warm):
        ops += [("F", warm + j), ("B", j)]
    return ops + [("B", j) for j in range(m - warm, m)]


def bubble_fraction(p, m):
    """The pipeline bubble as a fraction of the ideal time: ``(p - 1) / m`` [2]_.

    Examples
    --------
    >>> bubble_fraction(4, 8)
    0.375
    """
    return (p - 1) / m


def iteration_time(p, m, t_forward, t_backward):
    """GPipe's and 1F1B's time per iteration with uniform stages: ``(m + p - 1)(t_f + t_b)``.

    Examples
    --------
    >>> iteration_time(4, 8, 1.0, 2.0)
    33.0
    """
    return (m + p - 1) * (t_forward + t_backward)


def timeline(schedule, p, m, t_forward, t_backward, hop=0.0):
    """Exact times of a pipeline of uniform stages: the makespan and each stage's end.

    Each op starts once its stage has finished the op before it and, for a
    forward, the previous stage's forward of the same micro-batch ended ``hop``
    ago (for a backward, the next stage's backward).

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
    """
    orders = [order(schedule, p, m, s) for s in range(p)]
    end, free, pos = {}, [0.0] * p, [0] * p
    while any(pos[s] < len(orders[s]) for s in range(p)):
        for s in range(p):
            while pos[s] < len(orders[s]):
                kind, j = orders[s][pos[s]]
                src = s - 1 if kind == "F" else s + 1
                if 0 <= src < p and (kind, src, j) not in end:
                    break
                ready = end[(kind, src, j)] + hop if 0 <= src < p else 0.0
                free[s] = end[(kind, s, j)] = (max(free[s], ready)
                                                + (t_forward if kind == "F" else t_backward))
                pos[s] += 1
    return max(free), list(free)
