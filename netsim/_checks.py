"""Deprecated: the old ``check_count(value, name, error)`` / ``check_real(value, name, error)``.

Only ``netsim/studies.py`` still calls them (its owner moves it to ``studies/``);
they delegate to :mod:`netsim.checks`, keeping that module's old ``"P must be >= 1"``
wording for integers below 1. Delete this file once ``netsim/studies.py`` calls
:func:`netsim.checks.check_int` and :func:`netsim.checks.check_real` itself.
"""

import numbers

from . import checks

__all__ = ["check_count", "check_real"]


def check_count(value, name, error):
    """``checks.check_int(value, name, error=error)``, saying ``>= 1`` for integers below 1.

    >>> from netsim.errors import TraceError
    >>> check_count(0, "P", TraceError)
    Traceback (most recent call last):
    ...
    netsim.errors.TraceError: P must be >= 1, got 0
    """
    if isinstance(value, numbers.Integral) and not isinstance(value, bool) and value < 1:
        raise error(f"{name} must be >= 1, got {value}")
    return checks.check_int(value, name, error=error)


def check_real(value, name, error):
    """``checks.check_real(value, name, lo=0, error=error)``.

    >>> from netsim.errors import NetsimError
    >>> check_real(2, "nbytes", NetsimError)
    2.0
    """
    return checks.check_real(value, name, lo=0, error=error)
