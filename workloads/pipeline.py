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

References
----------
.. [1] Y. Huang et al., "GPipe: efficient training of giant neural networks using
   pipeline parallelism", NeurIPS 2019.
.. [2] D. Narayanan et al., "Efficient large-scale language model training on GPU
   clusters using Megatron-LM", SC'21, arXiv:2104.04473.
"""

from .errors import WorkloadError

__all__ = ["SCHEDULES", "order", "bubble_fraction", "iteration_time"]

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
