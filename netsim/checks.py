"""The one integer check, the one real-number check and the one choice check, used by
every package, and the checks of a public function's other arguments (a flag, a
callback, an array of numbers) before anything uses them.

Each takes the value first, then its name for the message, and the error class
its caller's users should see (:class:`~netsim.errors.TraceError` for what
builds a trace, :class:`~netsim.errors.TopologyError` for a builder's arguments,
``workloads.WorkloadError`` for a paradigm's options, ...). A prefix such as a
builder's name goes into ``name`` (``"star: n"``).
"""

import math
import numbers

from netsim.errors import NetsimError

__all__ = ["available_memory", "check_array", "check_callable", "check_choice", "check_flag",
           "check_int", "check_real", "is_real"]


def is_real(value):
    """Whether ``value`` is a real number (numpy scalars included) and not a bool.

    Examples
    --------
    >>> import numpy as np
    >>> is_real(np.float32(2.5)), is_real(True), is_real("1")
    (True, False, False)
    """
    return isinstance(value, numbers.Real) and not isinstance(value, bool)


def check_choice(value, name, known, error=NetsimError):
    """``value`` if it is one of ``known``, else ``error`` naming the value and the choices.

    Parameters
    ----------
    value : object
    name : str
        What the value is, for the message (``"sharing"``, ``"TCP option"``).
    known : iterable
        The choices, in the order the message lists them.
    error : type, optional
        The exception class raised.

    Returns
    -------
    object
        ``value``.

    Raises
    ------
    error
        ``unknown <name> <value!r>; known: <choices>``.

    Examples
    --------
    >>> check_choice("tcp", "transport", ("fluid", "tcp"))
    'tcp'
    >>> check_choice("udp", "transport", ("fluid", "tcp"))
    Traceback (most recent call last):
    ...
    netsim.errors.NetsimError: unknown transport 'udp'; known: fluid, tcp
    >>> check_choice([], "mlp", {"gelu": 4, "swiglu": 3})
    Traceback (most recent call last):
    ...
    netsim.errors.NetsimError: unknown mlp []; known: gelu, swiglu
    >>> import numpy as np
    >>> check_choice(np.array([1, 2]), "sharing", ("maxmin", "priority"))
    Traceback (most recent call last):
    ...
    netsim.errors.NetsimError: unknown sharing array([1, 2]); known: maxmin, priority
    """
    try:
        hit = value in known
    except (TypeError, ValueError):   # an unhashable value (a list, a dict) against a dict or
        hit = False                   # set of names; an array, whose == is not one bool
    if not hit:
        raise error(f"unknown {name} {value!r}; known: {', '.join(map(str, known))}")
    return value


def check_int(value, name, minimum=1, maximum=None, error=NetsimError):
    """Validate an integer (not a bool, not a float) within bounds; return it as an int.

    Parameters
    ----------
    value : object
        What the caller was given.
    name : str
        The option's name, for the message.
    minimum : int
        Smallest value allowed.
    maximum : int, optional
        Largest value allowed; None for no bound.
    error : type
        The exception class raised.

    Returns
    -------
    int

    Raises
    ------
    NetsimError
        (or ``error``) saying the value, if ``value`` is not an integer in range.

    Examples
    --------
    >>> import numpy as np
    >>> check_int(np.int64(4), "workers")
    4
    >>> check_int(2.0, "epochs")
    Traceback (most recent call last):
    ...
    netsim.errors.NetsimError: epochs must be an integer >= 1, got 2.0
    >>> check_int(200, "servers", maximum=131)
    Traceback (most recent call last):
    ...
    netsim.errors.NetsimError: servers must be an integer in 1..131, got 200
    """
    ok = (isinstance(value, numbers.Integral) and not isinstance(value, bool)
          and value >= minimum and (maximum is None or value <= maximum))
    if not ok:
        bound = f">= {minimum}" if maximum is None else f"in {minimum}..{maximum}"
        raise error(f"{name} must be an integer {bound}, got {value!r}")
    return int(value)


def check_real(value, name, lo=None, hi=None, strict=False, error=NetsimError):
    """Validate a finite real number (not a bool) within bounds; return it as a float.

    Parameters
    ----------
    value : object
        What the caller was given.
    name : str
        The option's name, for the message.
    lo, hi : float, optional
        Bounds; None for none.
    strict : bool or (bool, bool)
        Whether the bounds themselves are excluded: one flag for both, or
        ``(lo_strict, hi_strict)``.
    error : type
        The exception class raised.

    Returns
    -------
    float

    Raises
    ------
    NetsimError
        (or ``error``) saying the value, if ``value`` is not a finite number in range.

    Examples
    --------
    >>> check_real(0.05, "lr", lo=0, strict=True)
    0.05
    >>> check_real(float("inf"), "rho", lo=0, strict=True)
    Traceback (most recent call last):
    ...
    netsim.errors.NetsimError: rho must be a finite number > 0, got inf
    >>> check_real(0, "alpha", 0, 1, strict=(True, False))
    Traceback (most recent call last):
    ...
    netsim.errors.NetsimError: alpha must be a number in (0, 1], got 0
    """
    lo_strict, hi_strict = strict if isinstance(strict, tuple) else (strict, strict)
    ok = (is_real(value) and math.isfinite(value)
          and (lo is None or (value > lo if lo_strict else value >= lo))
          and (hi is None or (value < hi if hi_strict else value <= hi)))
    if not ok:
        if lo is not None and hi is not None:
            kind = (f"a number in {'(' if lo_strict else '['}{lo:g}, "
                    f"{hi:g}{')' if hi_strict else ']'}")
        elif lo is not None:
            kind = f"a finite number {'>' if lo_strict else '>='} {lo:g}"
        elif hi is not None:
            kind = f"a finite number {'<' if hi_strict else '<='} {hi:g}"
        else:
            kind = "a finite number"
        raise error(f"{name} must be {kind}, got {value!r}")
    return float(value)


def available_memory():
    """Bytes of memory available to a new allocation: MemAvailable of /proc/meminfo.

    Falls back to the physical memory (``os.sysconf``) where there is no
    /proc/meminfo, and to None where neither is known. The checks that refuse work
    too large to hold before they start read it (a builder's graph,
    :func:`topologies._validate.check_size`; the CLI's estimates, through
    :mod:`studies.memory`).

    Examples
    --------
    >>> m = available_memory(); m is None or m > 0
    True
    """
    import os

    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    try:
        return os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):
        return None


def _what(value):
    """``int 5``: a value's type and its start, for a message."""
    return f"{type(value).__name__} {value!r:.40}"


def check_flag(value, name, error=NetsimError):
    """``value`` as a bool if it is one (a numpy bool too), else ``error`` naming it.

    Examples
    --------
    >>> check_flag(False, "link_series")
    False
    >>> check_flag("yes", "link_series")
    Traceback (most recent call last):
    ...
    netsim.errors.NetsimError: link_series must be True or False, got str 'yes'
    """
    import numpy as np

    if not isinstance(value, (bool, np.bool_)):
        raise error(f"{name} must be True or False, got {_what(value)}")
    return bool(value)


def check_callable(value, name, call, error=NetsimError, optional=True):
    """``value`` if it is callable (or None where ``optional``), else ``error`` saying how
    it is called.

    Examples
    --------
    >>> check_callable(5, "progress", "progress(ops_done)")
    Traceback (most recent call last):
    ...
    netsim.errors.NetsimError: progress must be callable as progress(ops_done), got int 5
    >>> check_callable(None, "make_topology", "make_topology(P)", optional=False)
    Traceback (most recent call last):
    ...
    netsim.errors.NetsimError: make_topology must be callable as make_topology(P), got NoneType None
    """
    if not callable(value) and (value is not None or not optional):
        raise error(f"{name} must be callable as {call}, got {_what(value)}")
    return value


def check_array(value, name, length, kinds="iu", error=NetsimError):
    """``value`` as a one-dimensional numpy array of ``length`` numbers of ``kinds``.

    Parameters
    ----------
    value : object
    name : str
        The argument, for the message.
    length : int
        The entries it must have.
    kinds : str, optional
        numpy dtype kinds allowed: ``"iu"`` integers (default), ``"iuf"`` real numbers.
    error : type, optional

    Examples
    --------
    >>> check_array([2, 0], "nodes", 2).tolist()
    [2, 0]
    >>> check_array(None, "seconds", 3, "iuf")
    Traceback (most recent call last):
    ...
    netsim.errors.NetsimError: seconds must be a sequence of 3 real numbers, got NoneType None
    >>> check_array([0.5, 1], "nodes", 2)
    Traceback (most recent call last):
    ...
    netsim.errors.NetsimError: nodes must be a sequence of 2 integers, got list [0.5, 1]
    """
    import numpy as np

    arr = None if isinstance(value, (str, bytes, dict)) else np.asarray(value)
    if arr is None or arr.ndim != 1 or len(arr) != length or arr.dtype.kind not in kinds:
        raise error(f"{name} must be a sequence of {length} "
                    f"{'integers' if kinds == 'iu' else 'real numbers'}, got {_what(value)}")
    return arr
