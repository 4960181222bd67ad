"""Closed forms of the broadcast and reduce schedules: binomial trees, linear pipelines, BE.

Each is the exact time of :mod:`netsim.comm.collectives`' schedule of the same name
on a non-blocking star of identical links (see :mod:`netsim.costmodel`).

References
----------
.. [1] R. W. Hockney, "The communication challenge for MPP: Intel Paragon and
   Meiko CS-2", Parallel Computing 20(3), 389-398, 1994.
.. [2] R. Thakur, R. Rabenseifner and W. Gropp, "Optimization of collective
   communication operations in MPICH", Int. J. High Performance Computing
   Applications 19(1), 49-66, 2005.
.. [3] P. Patarasuk and X. Yuan, "Bandwidth optimal all-reduce algorithms for
   clusters of workstations", J. Parallel Distrib. Comput. 69(2), 117-124, 2009.
.. [4] Y. Zhao, L. Wang, W. Wu, G. Bosilca, R. Vuduc, J. Ye, W. Tang and Z. Xu,
   "Efficient communications in training large scale neural networks",
   arXiv:1611.04255, 2016.
"""

import math

from netsim.checks import check_int
from netsim.comm.collectives.schedule import pof2
from netsim.errors import NetsimError, TraceError
from netsim.costmodel.alphabeta import check_args

__all__ = ["binomial_broadcast", "binomial_reduce", "pipeline_broadcast", "pipeline_reduce",
           "pipeline_allreduce", "linear_pipeline", "optimal_segments", "be_broadcast"]


# -- trees ---------------------------------------------------------------------------------

def binomial_broadcast(P, nbytes, alpha, beta):
    """Binomial-tree (MST) broadcast: ``ceil(log2 P) (alpha + n beta)``.

    Thakur et al. [2]_, broadcast, binomial tree. Exact for any P: rank 0 is
    busy for all ``ceil(log2 P)`` rounds and no rank finishes later.

    Parameters
    ----------
    P : int
        Ranks, >= 1.
    nbytes : float
        Bytes, as the generator of the same name in :mod:`netsim.comm.collectives` counts them.
    alpha : float
        Seconds per message (latency term), >= 0.
    beta : float
        Seconds per byte (inverse bandwidth), >= 0.

    Returns
    -------
    float
        Seconds.

    Examples
    --------
    >>> round(binomial_broadcast(8, 1e6, 1e-6, 1e-9), 12)
    0.003003
    """
    P, n, a, b, _ = check_args(P, nbytes, alpha, beta)
    return (P - 1).bit_length() * (a + n * b)


def binomial_reduce(P, nbytes, alpha, beta, gamma=0.0):
    """Binomial-tree (MST) reduce: ``ceil(log2 P) (alpha + n beta + n gamma)``.

    Thakur et al. [2]_, reduce, binomial tree. Exact for any P because a
    parent takes its children one at a time (each child's message waits for
    the parent's previous receive and reduction); were all children to send
    at once they would share the parent's link.

    Parameters
    ----------
    P : int
        Ranks, >= 1.
    nbytes : float
        Bytes, as the generator of the same name in :mod:`netsim.comm.collectives` counts them.
    alpha : float
        Seconds per message (latency term), >= 0.
    beta : float
        Seconds per byte (inverse bandwidth), >= 0.
    gamma : float, optional
        Reduction seconds per byte, >= 0 (default 0: no reduction cost).

    Returns
    -------
    float
        Seconds.

    Examples
    --------
    >>> round(binomial_reduce(5, 1e6, 1e-6, 1e-9, 1e-10), 12)
    0.003303
    """
    P, n, a, b, g = check_args(P, nbytes, alpha, beta, gamma)
    return (P - 1).bit_length() * (a + n * b + n * g)


# -- linear pipelines ---------------------------------------------------------------------------

def pipeline_broadcast(P, nbytes, segments, alpha, beta):
    """Linear-pipeline (LP) broadcast along a chain: ``(P + k - 2)(alpha + n beta / k)``.

    The last of the k segments leaves rank 0 after ``k - 1`` segment times and
    crosses ``P - 1`` hops. The LP paper [4]_ writes ``(P - 1 + k)(alpha + n
    beta / k)`` (:func:`linear_pipeline`), one segment time more than the
    chain takes; the exact count is used here. 0 for P = 1.

    Parameters
    ----------
    P : int
        Ranks, >= 1.
    nbytes : float
        Bytes, as the generator of the same name in :mod:`netsim.comm.collectives` counts them.
    segments : int
        Number of segments k, >= 1.
    alpha : float
        Seconds per message (latency term), >= 0.
    beta : float
        Seconds per byte (inverse bandwidth), >= 0.

    Returns
    -------
    float
        Seconds.

    Examples
    --------
    >>> round(pipeline_broadcast(4, 1e6, 2, 1e-6, 1e-9), 12)
    0.002004
    """
    P, n, a, b, _ = check_args(P, nbytes, alpha, beta)
    k = check_int(segments, "segments", error=TraceError)
    return 0.0 if P == 1 else (P + k - 2) * (a + n * b / k)


def pipeline_reduce(P, nbytes, segments, alpha, beta, gamma=0.0):
    """Linear-pipeline (LP) reduce along a chain, with reductions.

    With ``t_m = alpha + n beta / k`` per segment message and ``t_c = n gamma
    / k`` per segment reduction, the chain is a flow shop of ``2 (P - 1)``
    stages (P - 1 senders and P - 1 reducers, each doing one segment at a
    time, in order), whose makespan for k identical jobs is the sum of the
    stages plus ``k - 1`` times the slowest::

        (P - 1)(t_m + t_c) + (k - 1) max(t_m, t_c)

    With ``gamma = 0`` this is :func:`pipeline_broadcast`. 0 for P = 1.

    Parameters
    ----------
    P : int
        Ranks, >= 1.
    nbytes : float
        Bytes, as the generator of the same name in :mod:`netsim.comm.collectives` counts them.
    segments : int
        Number of segments k, >= 1.
    alpha : float
        Seconds per message (latency term), >= 0.
    beta : float
        Seconds per byte (inverse bandwidth), >= 0.
    gamma : float, optional
        Reduction seconds per byte, >= 0 (default 0: no reduction cost).

    Returns
    -------
    float
        Seconds.

    Examples
    --------
    >>> round(pipeline_reduce(3, 1e6, 4, 1e-6, 1e-9, 1e-10), 12)
    0.001305
    """
    P, n, a, b, g = check_args(P, nbytes, alpha, beta, gamma)
    k = check_int(segments, "segments", error=TraceError)
    if P == 1:
        return 0.0
    tm, tc = a + n * b / k, n * g / k
    return (P - 1) * (tm + tc) + (k - 1) * max(tm, tc)


def pipeline_allreduce(P, nbytes, segments, alpha, beta, gamma=0.0):
    """Linear-pipeline (LP) allreduce: :func:`pipeline_reduce` + :func:`pipeline_broadcast`.

    The generated broadcast starts when the reduction is complete, so the
    times add.

    Parameters
    ----------
    P : int
        Ranks, >= 1.
    nbytes : float
        Bytes, as the generator of the same name in :mod:`netsim.comm.collectives` counts them.
    segments : int
        Number of segments k, >= 1.
    alpha : float
        Seconds per message (latency term), >= 0.
    beta : float
        Seconds per byte (inverse bandwidth), >= 0.
    gamma : float, optional
        Reduction seconds per byte, >= 0 (default 0: no reduction cost).

    Returns
    -------
    float
        Seconds.

    Examples
    --------
    >>> round(pipeline_allreduce(4, 1e6, 2, 1e-6, 1e-9), 12)
    0.004008
    """
    return (pipeline_reduce(P, nbytes, segments, alpha, beta, gamma)
            + pipeline_broadcast(P, nbytes, segments, alpha, beta))


def linear_pipeline(P, nbytes, segments, alpha, beta):
    """The LP paper's cost of a pipelined chain: ``(P - 1 + k)(alpha + n beta / k)``.

    As stated in [4]_, with optimum ``k* = sqrt((P - 1) n beta / alpha)``. It
    exceeds the exact chain time (:func:`pipeline_broadcast`) by one segment
    time; both tend to ``n beta`` as n grows, independent of P.

    Parameters
    ----------
    P : int
        Ranks, >= 1.
    nbytes : float
        Bytes, as the generator of the same name in :mod:`netsim.comm.collectives` counts them.
    segments : int
        Number of segments k, >= 1.
    alpha : float
        Seconds per message (latency term), >= 0.
    beta : float
        Seconds per byte (inverse bandwidth), >= 0.

    Returns
    -------
    float
        Seconds.

    Examples
    --------
    >>> round(linear_pipeline(4, 1e6, 2, 1e-6, 1e-9), 12)
    0.002505
    """
    P, n, a, b, _ = check_args(P, nbytes, alpha, beta)
    k = check_int(segments, "segments", error=TraceError)
    return (P - 1 + k) * (a + n * b / k)


def optimal_segments(P, nbytes, alpha, beta):
    """The segment count k minimising the exact LP chain time ``(P + k - 2)(alpha + n beta / k)``.

    The real minimiser is ``k* = sqrt((P - 2) n beta / alpha)`` (the LP paper
    [4]_ has ``P - 1`` for ``P - 2``, from its count of segment times); the
    better of its floor and ceiling is returned, at least 1 and at most
    ``max(1, floor(n))`` (one byte per segment).

    Parameters
    ----------
    P : int
        Ranks, >= 1.
    nbytes : float
        Bytes, as the generator of the same name in :mod:`netsim.comm.collectives` counts them.
    alpha : float
        Seconds per message (latency term), >= 0.
    beta : float
        Seconds per byte (inverse bandwidth), >= 0.

    Returns
    -------
    int
        The number of segments k.

    Raises
    ------
    NetsimError
        If ``alpha`` is 0 while more segments always help (P > 2, n beta > 0).

    Examples
    --------
    >>> optimal_segments(64, 64e6, 2e-6, 1 / 1.25e9)
    1260
    >>> optimal_segments(2, 64e6, 2e-6, 1 / 1.25e9)
    1
    """
    P, n, a, b, _ = check_args(P, nbytes, alpha, beta)
    cap = max(1, int(n))
    if P <= 2 or n * b == 0:
        return 1
    if a == 0:
        raise NetsimError("no optimal segment count with zero latency (alpha = 0): more "
                          "segments always help; pass segments")
    real = math.sqrt((P - 2) * n * b / a)
    best = min({max(1, min(cap, math.floor(real))), max(1, min(cap, math.ceil(real)))},
               key=lambda k: ((P + k - 2) * (a + n * b / k), k))
    return int(best)


# -- bidirectional exchange -----------------------------------------------------------------

def be_broadcast(P, nbytes, alpha, beta):
    """BE broadcast (binomial scatter + recursive-doubling allgather).

    Thakur et al. [2]_, broadcast, scatter followed by recursive-doubling
    allgather: ``2 L alpha + 2 (p' - 1) / p' n beta`` on ``p'`` ranks. The
    scatter ends on every rank at ``L alpha + (p' - 1)/p' n beta`` and the
    allgather takes as long. For non-power-of-two P the extra ranks then
    receive the whole message: ``+ alpha + n beta`` (MPICH instead uses a
    ring allgather there).

    Parameters
    ----------
    P : int
        Ranks, >= 1.
    nbytes : float
        Bytes, as the generator of the same name in :mod:`netsim.comm.collectives` counts them.
    alpha : float
        Seconds per message (latency term), >= 0.
    beta : float
        Seconds per byte (inverse bandwidth), >= 0.

    Returns
    -------
    float
        Seconds.

    Examples
    --------
    >>> round(be_broadcast(4, 4e6, 1e-6, 1e-9), 12)
    0.006004
    """
    P, n, a, b, _ = check_args(P, nbytes, alpha, beta)
    p2 = pof2(P)
    L = p2.bit_length() - 1
    t = 2 * L * a + 2 * (p2 - 1) / p2 * n * b
    return t if P == p2 else t + a + n * b
