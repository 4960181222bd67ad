"""Input checks shared by the collectives, the cost models and the studies.

Each check takes the error class to raise, so every caller says which one its
users see: :class:`~netsim.errors.TraceError` for what builds a trace (ranks,
bytes, segments, reduction cost), :class:`~netsim.errors.NetsimError` for a
cost model's own alpha and beta.
"""

import math
import numbers

import numpy as np

__all__ = ["check_count", "check_real"]


def check_count(value, name, error):
    """An integer >= 1 (a number of ranks, segments or servers), as an int.

    >>> from netsim.errors import TraceError
    >>> check_count(np.int64(4), "P", TraceError)
    4
    >>> check_count(0, "P", TraceError)
    Traceback (most recent call last):
    ...
    netsim.errors.TraceError: P must be >= 1, got 0
    """
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise error(f"{name} must be an integer >= 1, got {value!r}")
    if value < 1:
        raise error(f"{name} must be >= 1, got {value}")
    return int(value)


def check_real(value, name, error):
    """A finite real number >= 0 (bytes, seconds, seconds per byte), as a float.

    >>> from netsim.errors import NetsimError
    >>> check_real(2, "nbytes", NetsimError)
    2.0
    """
    if (isinstance(value, bool) or not isinstance(value, numbers.Real)
            or not math.isfinite(value) or value < 0):
        raise error(f"{name} must be a finite number >= 0, got {value!r}")
    return float(value)
