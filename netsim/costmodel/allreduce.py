"""Closed forms of the allreduce, allgather, reduce-scatter and exchange schedules.

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

from netsim.checks import check_int
from netsim.comm.collectives.schedule import pof2
from netsim.errors import TraceError
from netsim.costmodel.alphabeta import check_args

__all__ = ["recursive_doubling_allreduce", "rabenseifner_allreduce", "ring_allreduce",
           "ring_allgather", "ring_reduce_scatter", "recursive_doubling_allgather",
           "recursive_halving_reduce_scatter", "alltoall", "ps_push_pull"]


def _fold_terms(P, n, a, b, g):
    """Fold (whole vector, reduced) + unfold (whole vector) when P is not a power of two."""
    return 0.0 if P == pof2(P) else (a + n * b + n * g) + (a + n * b)


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
    >>> round(recursive_doubling_allreduce(8, 1e6, 1e-6, 1e-9), 12)
    0.003003
    >>> round(recursive_doubling_allreduce(5, 1e6, 1e-6, 1e-9), 12)
    0.004004
    """
    P, n, a, b, g = check_args(P, nbytes, alpha, beta, gamma)
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
    >>> round(rabenseifner_allreduce(4, 4e6, 1e-6, 1e-9), 12)
    0.006004
    """
    P, n, a, b, g = check_args(P, nbytes, alpha, beta, gamma)
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
    >>> round(ring_allgather(4, 4e6, 1e-6, 1e-9), 12)
    0.003003
    """
    P, n, a, b, _ = check_args(P, nbytes, alpha, beta)
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
    >>> round(ring_reduce_scatter(4, 4e6, 1e-6, 1e-9, 1e-10), 12)
    0.003303
    """
    P, n, a, b, g = check_args(P, nbytes, alpha, beta, gamma)
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
    >>> round(recursive_doubling_allgather(8, 8e6, 1e-6, 1e-9), 12)
    0.007003
    """
    P, n, a, b, _ = check_args(P, nbytes, alpha, beta)
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
    >>> round(recursive_halving_reduce_scatter(4, 4e6, 1e-6, 1e-9), 12)
    0.003002
    """
    P, n, a, b, g = check_args(P, nbytes, alpha, beta, gamma)
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
    >>> round(alltoall(4, 4e6, 1e-6, 1e-9), 12)
    0.003003
    """
    P, n, a, b, _ = check_args(P, nbytes, alpha, beta)
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
        Bytes, as the generator of the same name in :mod:`netsim.comm.collectives` counts them.
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
    P, n, a, b, g = check_args(P, nbytes, alpha, beta, gamma)
    S = check_int(servers, "servers", error=TraceError)
    return 2 * (a + max(P, S) * n * b / S) + (P - 1) * n * g / S
