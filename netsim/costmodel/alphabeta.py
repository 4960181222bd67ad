"""The Hockney alpha-beta(-gamma) model: one message, the argument checks, a lower bound.

A message of ``n`` bytes alone on its path takes ``alpha + n * beta``; reducing
``n`` received bytes takes ``n * gamma`` (Hockney [1]_). Ranks, bytes, segments
and gamma raise :class:`~netsim.errors.TraceError`, as the generators of
:mod:`netsim.comm.collectives` do for the same arguments; alpha and beta, which only
cost models take, raise :class:`~netsim.errors.NetsimError`.

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

from netsim.checks import check_int, check_real
from netsim.errors import NetsimError, TraceError

__all__ = ["hockney", "patarasuk_yuan_bound", "check_args", "check_time"]


def check_time(value, name):
    """``alpha`` or ``beta``: a finite number >= 0, else :class:`~netsim.errors.NetsimError`.

    Parameters
    ----------
    value : object
    name : str
        ``"alpha"`` or ``"beta"``, for the message.

    Examples
    --------
    >>> check_time(-1e-6, "alpha")
    Traceback (most recent call last):
    ...
    netsim.errors.NetsimError: alpha must be a finite number >= 0, got -1e-06
    """
    return check_real(value, name, lo=0, error=NetsimError)


def check_args(P, nbytes, alpha, beta, gamma=0.0):
    """The checked ``(P, nbytes, alpha, beta, gamma)`` of a cost formula.

    Parameters
    ----------
    P : int
        Ranks, >= 1.
    nbytes : float
        Bytes, >= 0.
    alpha, beta : float
        Seconds per message and per byte, >= 0.
    gamma : float, optional
        Reduction seconds per byte, >= 0.

    Returns
    -------
    tuple
        ``(int, float, float, float, float)``.

    Examples
    --------
    >>> check_args(4, 1e6, 1e-6, 1e-9)
    (4, 1000000.0, 1e-06, 1e-09, 0.0)
    """
    return (check_int(P, "P", error=TraceError),
            check_real(nbytes, "nbytes", lo=0, error=TraceError),
            check_time(alpha, "alpha"), check_time(beta, "beta"),
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
    return (check_time(alpha, "alpha")
            + check_real(nbytes, "nbytes", lo=0, error=TraceError) * check_time(beta, "beta"))


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
    P, n, _, b, _ = check_args(P, nbytes, 0.0, beta)
    return 2 * (P - 1) / P * n * b
