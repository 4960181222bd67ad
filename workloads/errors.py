"""Exceptions of the workloads package, and the input checks that raise them.

All exceptions derive from :class:`netsim.errors.NetsimError` (a ``ValueError``),
so the CLI prints them on one line like every other bad-input error.

:func:`check_int` and :func:`check_number` validate every integer and number
option of the package (re-exported by :mod:`workloads.recorder`); both call
:mod:`netsim.checks` with this package's error class. They live
here, in a module that imports nothing else of the package, so that
:mod:`workloads.mlp` and :mod:`workloads.datasets` can use them too.
"""

from netsim import checks
from netsim.errors import NetsimError

__all__ = ["WorkloadError", "DatasetError", "PartitionError", "check_int", "check_number"]


class WorkloadError(NetsimError):
    """Bad input to a paradigm: unknown paradigm or option, workers < 1, bad value."""


class DatasetError(WorkloadError):
    """Unknown dataset name, or a missing or corrupt dataset file (e.g. an IDX file)."""


class PartitionError(WorkloadError):
    """A model partition that leaves a node without a layer or without a neuron."""


def check_int(name, value, minimum=1, maximum=None, error=WorkloadError):
    """Validate an integer option (not a bool, not a float) and return it as an int.

    Parameters
    ----------
    name : str
        The option's name, for the message.
    value : object
    minimum : int
        Smallest value allowed.
    maximum : int, optional
        Largest value allowed; None for no bound.
    error : type
        The exception raised (e.g. :class:`DatasetError` for dataset options).

    Raises
    ------
    WorkloadError
        (or ``error``) saying the value, if ``value`` is not an integer in range.

    Examples
    --------
    >>> check_int("workers", 4)
    4
    >>> check_int("epochs", 2.0)
    Traceback (most recent call last):
    ...
    workloads.errors.WorkloadError: epochs must be an integer >= 1, got 2.0
    >>> check_int("servers", 200, maximum=131)
    Traceback (most recent call last):
    ...
    workloads.errors.WorkloadError: servers must be an integer in 1..131, got 200
    """
    return checks.check_int(value, name, minimum, maximum, error)


def check_number(name, value, lo=None, hi=None, strict=False, error=WorkloadError):
    """Validate a finite real number (not a bool) within bounds; return it as a float.

    Parameters
    ----------
    name : str
        The option's name, for the message.
    value : object
    lo, hi : float, optional
        Bounds; None for none.
    strict : bool or (bool, bool)
        Whether the bounds themselves are excluded: one flag for both, or
        ``(lo_strict, hi_strict)``.
    error : type
        The exception raised.

    Raises
    ------
    WorkloadError
        (or ``error``) saying the value, if ``value`` is not a finite number in range.

    Examples
    --------
    >>> check_number("lr", 0.05, lo=0, strict=True)
    0.05
    >>> check_number("rho", float("inf"), lo=0, strict=True)
    Traceback (most recent call last):
    ...
    workloads.errors.WorkloadError: rho must be a finite number > 0, got inf
    >>> check_number("alpha", 0, 0, 1, strict=(True, False))
    Traceback (most recent call last):
    ...
    workloads.errors.WorkloadError: alpha must be a number in (0, 1], got 0
    """
    return checks.check_real(value, name, lo, hi, strict, error)
