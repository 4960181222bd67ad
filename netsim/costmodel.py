"""Closed forms of the collectives of :mod:`netsim.collectives`, and the alpha-beta of a topology.

Every collective of :mod:`netsim.collectives` has a function of the same name
here giving its time in the alpha-beta-gamma model (Hockney 1994): a message
of ``n`` bytes alone on its path takes ``alpha + n * beta``, and reducing ``n``
received bytes takes ``n * gamma``.

Exactness
---------
Each formula is the exact time of the schedule the generator builds, replayed
by the fluid engine on a non-blocking star of identical links (``alpha`` = two
link latencies, ``beta`` = 1 / link bandwidth). Where the textbook formula
(Thakur, Rabenseifner & Gropp 2005) assumes something the generated schedule
does differently -- non-power-of-two fold and unfold, the linear-pipeline
count of segments, several messages sharing one host link -- the docstring
gives the exact formula of the schedule and says how it differs.

``P`` is the number of ranks, ``nbytes`` (n) the message size as each
generator defines it, ``p'`` = 2**floor(log2 P), ``rem`` = P - p' and
``L`` = log2 p'.

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

import numpy as np

from .checks import check_int, check_real
from .collectives.schedule import pof2
from .errors import NetsimError, TraceError
from .network import as_network, compute_nodes, route_loads

__all__ = [
    "hockney",
    "binomial_broadcast",
    "binomial_reduce",
    "pipeline_broadcast",
    "pipeline_reduce",
    "pipeline_allreduce",
    "linear_pipeline",
    "optimal_segments",
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
    "patarasuk_yuan_bound",
    "alpha_beta",
    "link_loads",
    "contention_bound",
    "busiest_link",
]


# Ranks, bytes, segments and gamma raise TraceError, as the generators do for the same
# arguments; alpha and beta, which only cost models take, raise NetsimError.

def _check_time(value, name):
    return check_real(value, name, lo=0, error=NetsimError)


def _common(P, nbytes, alpha, beta, gamma=0.0):
    return (check_int(P, "P", error=TraceError),
            check_real(nbytes, "nbytes", lo=0, error=TraceError),
            _check_time(alpha, "alpha"), _check_time(beta, "beta"),
            check_real(gamma, "gamma", lo=0, error=TraceError))


def hockney(nbytes, alpha, beta):
    """Time of one message alone on its path: ``alpha + n beta`` (Hockney [1]_).

    Parameters
    ----------
    nbytes : float
        Message size in bytes, >= 0.
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
    >>> round(hockney(1e6, 2e-6, 1 / 1.25e9), 12)
    0.000802
    """
    return (_check_time(alpha, "alpha")
            + check_real(nbytes, "nbytes", lo=0, error=TraceError) * _check_time(beta, "beta"))


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
        Bytes, as the generator of the same name in :mod:`netsim.collectives` counts them.
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
    P, n, a, b, _ = _common(P, nbytes, alpha, beta)
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
        Bytes, as the generator of the same name in :mod:`netsim.collectives` counts them.
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
    P, n, a, b, g = _common(P, nbytes, alpha, beta, gamma)
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
        Bytes, as the generator of the same name in :mod:`netsim.collectives` counts them.
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
    P, n, a, b, _ = _common(P, nbytes, alpha, beta)
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
        Bytes, as the generator of the same name in :mod:`netsim.collectives` counts them.
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
    P, n, a, b, g = _common(P, nbytes, alpha, beta, gamma)
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
        Bytes, as the generator of the same name in :mod:`netsim.collectives` counts them.
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
        Bytes, as the generator of the same name in :mod:`netsim.collectives` counts them.
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
    P, n, a, b, _ = _common(P, nbytes, alpha, beta)
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
        Bytes, as the generator of the same name in :mod:`netsim.collectives` counts them.
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
    P, n, a, b, _ = _common(P, nbytes, alpha, beta)
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


# -- bidirectional exchange, recursive doubling, ring ----------------------------------------

def _fold_terms(P, n, a, b, g):
    """Fold (whole vector, reduced) + unfold (whole vector) when P is not a power of two."""
    return 0.0 if P == pof2(P) else (a + n * b + n * g) + (a + n * b)


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
        Bytes, as the generator of the same name in :mod:`netsim.collectives` counts them.
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
    P, n, a, b, _ = _common(P, nbytes, alpha, beta)
    p2 = pof2(P)
    L = p2.bit_length() - 1
    t = 2 * L * a + 2 * (p2 - 1) / p2 * n * b
    return t if P == p2 else t + a + n * b


def recursive_doubling_allreduce(P, nbytes, alpha, beta, gamma=0.0):
    """Recursive-doubling allreduce: ``L (alpha + n beta + n gamma)`` for P = p'.

    Thakur et al. [2]_, allreduce, recursive doubling: ``lg p alpha + n lg p
    beta + n lg p gamma``. For other P the fold and unfold add
    ``(alpha + n beta + n gamma) + (alpha + n beta)``, MPICH's
    ``floor(lg p) + 2`` steps.

    Parameters
    ----------
    P : int
        Ranks, >= 1.
    nbytes : float
        Bytes, as the generator of the same name in :mod:`netsim.collectives` counts them.
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
    >>> round(recursive_doubling_allreduce(8, 1e6, 1e-6, 1e-9), 12)
    0.003003
    >>> round(recursive_doubling_allreduce(5, 1e6, 1e-6, 1e-9), 12)
    0.004004
    """
    P, n, a, b, g = _common(P, nbytes, alpha, beta, gamma)
    L = pof2(P).bit_length() - 1
    return L * (a + n * b + n * g) + _fold_terms(P, n, a, b, g)


def rabenseifner_allreduce(P, nbytes, alpha, beta, gamma=0.0):
    """Rabenseifner allreduce (recursive-halving reduce-scatter + recursive-doubling allgather).

    Thakur et al. [2]_, allreduce, Rabenseifner's algorithm: ``2 lg p alpha +
    2 (p - 1)/p n beta + (p - 1)/p n gamma`` on ``p'`` ranks; for other P the
    fold and unfold add ``(alpha + n beta + n gamma) + (alpha + n beta)``.
    Its bandwidth term meets the Patarasuk-Yuan bound
    (:func:`patarasuk_yuan_bound`) for P = p'.

    Parameters
    ----------
    P : int
        Ranks, >= 1.
    nbytes : float
        Bytes, as the generator of the same name in :mod:`netsim.collectives` counts them.
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
    >>> round(rabenseifner_allreduce(4, 4e6, 1e-6, 1e-9), 12)
    0.006004
    """
    P, n, a, b, g = _common(P, nbytes, alpha, beta, gamma)
    p2 = pof2(P)
    L = p2.bit_length() - 1
    f = (p2 - 1) / p2
    return 2 * L * a + 2 * f * n * b + f * n * g + _fold_terms(P, n, a, b, g)


def ring_allgather(P, nbytes, alpha, beta):
    """Ring allgather: ``(P - 1)(alpha + n beta / P)``.

    Thakur et al. [2]_, allgather, ring: ``(p - 1) alpha + (p - 1)/p n beta``
    (n is the gathered size).

    Parameters
    ----------
    P : int
        Ranks, >= 1.
    nbytes : float
        Bytes, as the generator of the same name in :mod:`netsim.collectives` counts them.
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
    >>> round(ring_allgather(4, 4e6, 1e-6, 1e-9), 12)
    0.003003
    """
    P, n, a, b, _ = _common(P, nbytes, alpha, beta)
    return (P - 1) * (a + n * b / P)


def ring_reduce_scatter(P, nbytes, alpha, beta, gamma=0.0):
    """Ring reduce-scatter: ``(P - 1)(alpha + n beta / P + n gamma / P)``.

    The ring reduce-scatter phase of Patarasuk & Yuan [3]_; same cost as
    Thakur et al.'s [2]_ pairwise-exchange reduce-scatter, ``(p - 1) alpha +
    (p - 1)/p n beta + (p - 1)/p n gamma``.

    Parameters
    ----------
    P : int
        Ranks, >= 1.
    nbytes : float
        Bytes, as the generator of the same name in :mod:`netsim.collectives` counts them.
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
    >>> round(ring_reduce_scatter(4, 4e6, 1e-6, 1e-9, 1e-10), 12)
    0.003303
    """
    P, n, a, b, g = _common(P, nbytes, alpha, beta, gamma)
    return (P - 1) * (a + n * b / P + n * g / P)


def ring_allreduce(P, nbytes, alpha, beta, gamma=0.0):
    """Ring allreduce: ``2 (P - 1) alpha + 2 (P - 1)/P n beta + (P - 1)/P n gamma``.

    Patarasuk & Yuan [3]_: the bandwidth term equals their lower bound
    ``2 (P - 1)/P n beta`` for any P.

    Parameters
    ----------
    P : int
        Ranks, >= 1.
    nbytes : float
        Bytes, as the generator of the same name in :mod:`netsim.collectives` counts them.
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
    >>> round(ring_allreduce(4, 4e6, 1e-6, 1e-9), 12)
    0.006006
    """
    return (ring_reduce_scatter(P, nbytes, alpha, beta, gamma)
            + ring_allgather(P, nbytes, alpha, beta))


def _block_sum(P):
    """Sum over core steps (block m = 1, 2, ..., p'/2) of m + min(rem, m): chunks per step of
    the core rank with the largest blocks (core rank 0)."""
    p2 = pof2(P)
    rem = P - p2
    return sum(m + min(rem, m) for m in (1 << s for s in range(p2.bit_length() - 1)))


def recursive_doubling_allgather(P, nbytes, alpha, beta):
    """Recursive-doubling allgather; ``L alpha + (P - 1)/P n beta`` for P = p'.

    Thakur et al. [2]_, allgather, recursive doubling (power-of-two P). For
    other P the generated schedule folds (``alpha + c beta``, c = n / P),
    runs the core on blocks of one or two chunks, and unfolds the whole
    result (``alpha + n beta``). Core ranks pair with equal readiness and a
    step lasts ``alpha`` plus the larger block; the blocks of core rank 0
    are the largest, so the core takes ``L alpha + c beta sum_m (m +
    min(rem, m))`` over m = 1, 2, ..., p'/2.

    Parameters
    ----------
    P : int
        Ranks, >= 1.
    nbytes : float
        Bytes, as the generator of the same name in :mod:`netsim.collectives` counts them.
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
    >>> round(recursive_doubling_allgather(8, 8e6, 1e-6, 1e-9), 12)
    0.007003
    """
    P, n, a, b, _ = _common(P, nbytes, alpha, beta)
    p2 = pof2(P)
    c = n / P
    t = (p2.bit_length() - 1) * a + c * b * _block_sum(P)
    return t if P == p2 else (a + c * b) + t + (a + n * b)


def recursive_halving_reduce_scatter(P, nbytes, alpha, beta, gamma=0.0):
    """Recursive-halving reduce-scatter; ``L alpha + (P - 1)/P n (beta + gamma)`` for P = p'.

    Thakur et al. [2]_, reduce-scatter, recursive halving (commutative
    operations). For other P the schedule folds whole vectors (``alpha + n
    beta + n gamma``), halves over MPICH's blocks of one or two chunks, and
    unfolds one chunk (``alpha + c beta``, c = n / P). Core rank 0 keeps the
    largest half at every step and is always the latest, so the core takes
    ``L alpha + c (beta + gamma) sum_m (m + min(rem, m))``.

    Parameters
    ----------
    P : int
        Ranks, >= 1.
    nbytes : float
        Bytes, as the generator of the same name in :mod:`netsim.collectives` counts them.
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
    >>> round(recursive_halving_reduce_scatter(4, 4e6, 1e-6, 1e-9), 12)
    0.003002
    """
    P, n, a, b, g = _common(P, nbytes, alpha, beta, gamma)
    p2 = pof2(P)
    c = n / P
    t = (p2.bit_length() - 1) * a + c * (b + g) * _block_sum(P)
    return t if P == p2 else (a + n * b + n * g) + t + (a + c * b)


def alltoall(P, nbytes, alpha, beta):
    """Pairwise-exchange all-to-all: ``(P - 1)(alpha + n beta / P)``.

    Thakur et al. [2]_, all-to-all, pairwise exchange: ``(p - 1) alpha + n
    beta`` where their n is what a rank sends to others; here nbytes counts
    the rank's own block too, so others get ``(P - 1)/P`` of it.

    Parameters
    ----------
    P : int
        Ranks, >= 1.
    nbytes : float
        Bytes, as the generator of the same name in :mod:`netsim.collectives` counts them.
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
    >>> round(alltoall(4, 4e6, 1e-6, 1e-9), 12)
    0.003003
    """
    P, n, a, b, _ = _common(P, nbytes, alpha, beta)
    return (P - 1) * (a + n * b / P)


def ps_push_pull(P, nbytes, alpha, beta, gamma=0.0, servers=1):
    """Parameter-server push then pull with S servers, all messages of a phase at once.

    Every worker link direction carries S messages of ``n / S`` and every
    server link direction P, all sharing fairly, so each phase takes
    ``alpha + max(P, S) n beta / S``; a server then sums P shards::

        2 (alpha + max(P, S) n beta / S) + (P - 1) n gamma / S

    Not an MPICH collective; the Hockney model [1]_ with max-min sharing.

    Parameters
    ----------
    P : int
        Ranks, >= 1.
    nbytes : float
        Bytes, as the generator of the same name in :mod:`netsim.collectives` counts them.
    alpha : float
        Seconds per message (latency term), >= 0.
    beta : float
        Seconds per byte (inverse bandwidth), >= 0.
    gamma : float, optional
        Reduction seconds per byte, >= 0 (default 0: no reduction cost).
    servers : int, optional
        Parameter servers S, >= 1.

    Returns
    -------
    float
        Seconds.

    Examples
    --------
    >>> round(ps_push_pull(4, 1e6, 1e-6, 1e-9), 12)
    0.008002
    """
    P, n, a, b, g = _common(P, nbytes, alpha, beta, gamma)
    S = check_int(servers, "servers", error=TraceError)
    return 2 * (a + max(P, S) * n * b / S) + (P - 1) * n * g / S


def patarasuk_yuan_bound(P, nbytes, beta):
    """Lower bound on the bandwidth time of any allreduce: ``2 (P - 1)/P n beta``.

    Patarasuk & Yuan [3]_: each rank must send and receive at least
    ``(P - 1)/P n`` bytes.

    Parameters
    ----------
    P : int
        Ranks, >= 1.
    nbytes : float
        Bytes each rank contributes, >= 0.
    beta : float
        Seconds per byte (inverse bandwidth), >= 0.

    Returns
    -------
    float
        Seconds.

    Examples
    --------
    >>> round(patarasuk_yuan_bound(4, 4e6, 1e-9), 12)
    0.006
    """
    P, n, _, b, _ = _common(P, nbytes, 0.0, beta)
    return 2 * (P - 1) / P * n * b


# -- the topology's alpha and beta -------------------------------------------------------

def alpha_beta(topology, ranks=None, placement=None, trace=None):
    """Alpha and beta for ranks placed on a topology.

    Alpha is the largest path latency and beta the inverse of the smallest
    bottleneck bandwidth over the pairs considered: the ``(src, dst)`` pairs
    of the trace's messages if a trace is given, otherwise every ordered pair
    of the ``ranks`` placed ranks. Pairs on one node are skipped.

    Parameters
    ----------
    topology : networkx.Graph or Network
        The hardware.
    ranks : int, optional
        Number of ranks (default: the trace's, else every compute node).
    placement : sequence or dict, optional
        ``placement[r]`` is the node of rank r (default: compute nodes in order).
    trace : Trace, optional

    Returns
    -------
    alpha, beta : float
        Seconds and seconds per byte; (0, 0) when no pair crosses the network.

    Raises
    ------
    TopologyError
        For more ranks than compute nodes, a bad placement, or no path.

    Examples
    --------
    >>> from topologies import star
    >>> a, b = alpha_beta(star(4, bandwidth=1.25e9, latency=1e-6))
    >>> a, 1 / b
    (2e-06, 1250000000.0)
    """
    net = as_network(topology)
    if trace is not None:
        ranks = trace.ranks
        msg = trace.is_message
        pairs = np.unique(np.stack([trace.rank[msg], trace.peer[msg]], axis=1).astype(np.int64),
                          axis=0)
        src, dst = pairs[:, 0], pairs[:, 1]
    else:
        if ranks is None:
            ranks = len(placement) if placement is not None else len(compute_nodes(net.graph))
        ranks = check_int(ranks, "ranks", error=TraceError)
        src, dst = np.divmod(np.arange(ranks * ranks, dtype=np.int64), ranks)
    nodes = net.placement(ranks, placement)
    u, v = nodes[src], nodes[dst]
    keep = u != v
    if not keep.any():
        return 0.0, 0.0
    _, links, lat = net.routes(u[keep], v[keep])
    cap = np.concatenate([net.bandwidth, [np.inf]])[links].min(axis=1)
    return float(lat.max()), float(1.0 / cap.min())


def link_loads(trace, topology, placement=None):
    """Bytes each link direction must carry when the trace's messages are routed.

    Parameters
    ----------
    trace : Trace
    topology : networkx.Graph or Network
    placement : sequence or dict, optional
        ``placement[r]`` is the node of rank r (default: compute nodes in order).

    Returns
    -------
    ndarray
        One entry per link direction of ``Network(topology)``, in its order.

    Examples
    --------
    >>> from netsim.collectives import ring_allgather
    >>> from topologies import star
    >>> link_loads(ring_allgather(2, 2e6), star(2)).tolist()
    [1000000.0, 1000000.0, 1000000.0, 1000000.0]
    """
    net = as_network(topology)
    nodes = net.placement(trace.ranks, placement)
    msg = trace.is_message
    L = net.num_links
    if not msg.any():
        return np.zeros(L)
    pair, links, _ = net.routes(nodes[trace.rank[msg]], nodes[trace.peer[msg]])
    return route_loads(pair, links, L, trace.size[msg])


def contention_bound(trace, topology, placement=None):
    """Lower bound on any schedule of the trace's messages: the busiest link direction.

    For each link direction, the bytes it must carry divided by its bandwidth;
    the bound is the largest (:func:`busiest_link`). Latency and dependencies
    are ignored.

    Parameters
    ----------
    trace : Trace
    topology : networkx.Graph or Network
    placement : sequence or dict, optional
        ``placement[r]`` is the node of rank r (default: compute nodes in order).

    Returns
    -------
    dict
        ``seconds`` (the bound), ``link`` (``"u->v"``, None without messages),
        ``bytes`` and ``bandwidth`` of that link direction.

    Examples
    --------
    >>> from netsim.collectives import ps_push_pull
    >>> from topologies import star
    >>> cb = contention_bound(ps_push_pull(4, 1e6), star(5, bandwidth=1e9))
    >>> cb["seconds"], cb["link"]
    (0.004, 'host4->switch')
    """
    net = as_network(topology)
    return busiest_link(link_loads(trace, net, placement), net.bandwidth,
                        [net.link_name(k) for k in range(net.num_links)])


def busiest_link(loads, bandwidth, names):
    """The link direction whose bytes take longest at its bandwidth: the contention bound.

    The one implementation of the bound: :func:`contention_bound` feeds it the
    loads of a routed trace; a finished run's ``Result.links`` (``bytes``,
    ``bandwidth``, ``src->dst``) can be fed to it directly, without re-routing.

    Parameters
    ----------
    loads : array_like of float
        Bytes per link direction.
    bandwidth : array_like of float
        Bytes/s per link direction.
    names : sequence of str
        ``"u->v"`` per link direction.

    Returns
    -------
    dict
        ``seconds`` (largest ``loads / bandwidth``; 0 when nothing is carried),
        ``link`` (its name, None when nothing is carried), ``bytes`` and
        ``bandwidth`` of that link direction.

    Examples
    --------
    >>> busiest_link([4e6, 1e6], [1e9, 1e8], ["a->b", "b->a"])
    {'seconds': 0.01, 'link': 'b->a', 'bytes': 1000000.0, 'bandwidth': 100000000.0}
    """
    loads = np.asarray(loads, np.float64)
    if not len(loads) or loads.max() <= 0:
        return {"seconds": 0.0, "link": None, "bytes": 0.0, "bandwidth": None}
    t = loads / np.asarray(bandwidth, np.float64)
    i = int(np.argmax(t))
    return {"seconds": float(t[i]), "link": str(names[i]), "bytes": float(loads[i]),
            "bandwidth": float(bandwidth[i])}
