"""Exceptions raised for bad input and impossible runs.

Every error says which value, op, node or attribute is at fault, so that the
CLI can print it on one line. All are ``ValueError`` subclasses through
:class:`NetsimError`, so one ``except NetsimError`` catches every bad input.
"""

__all__ = ["NetsimError", "TopologyError", "TraceError", "DeadlockError", "UnitError",
           "NcclModelError"]


class NetsimError(ValueError):
    """Base class of every error netsim raises for bad input.

    Examples
    --------
    >>> try:
    ...     raise UnitError("cannot parse size '64 parsecs'")
    ... except NetsimError as e:  # one handler for every bad input
    ...     print(type(e).__name__, "|", e)
    UnitError | cannot parse size '64 parsecs'
    >>> issubclass(NetsimError, ValueError)
    True
    """


class TopologyError(NetsimError):
    """A topology or placement cannot be simulated (bad attribute, no path, bad node).

    Examples
    --------
    >>> raise TopologyError("edge ('a', 'b') has no 'bandwidth' attribute")
    Traceback (most recent call last):
    ...
    netsim.errors.TopologyError: edge ('a', 'b') has no 'bandwidth' attribute
    """


class TraceError(NetsimError):
    """A trace is malformed (unknown rank, missing dependency, negative bytes, NaN, ...).

    Examples
    --------
    >>> raise TraceError("op 0 depends on missing op 3")
    Traceback (most recent call last):
    ...
    netsim.errors.TraceError: op 0 depends on missing op 3
    """


class DeadlockError(NetsimError):
    """Replay stopped with ops that can never run; ``stuck`` lists them.

    Examples
    --------
    >>> e = DeadlockError("2 ops can never run", stuck=[3, 4])
    >>> str(e), e.stuck
    ('2 ops can never run', [3, 4])
    """

    def __init__(self, message, stuck=()):
        super().__init__(message)
        self.stuck = list(stuck)


class UnitError(NetsimError):
    """A human-unit string such as ``10Gbps`` or ``64MB`` cannot be parsed.

    Examples
    --------
    >>> raise UnitError("unknown bandwidth unit 'furlongs' in '10 furlongs'")
    Traceback (most recent call last):
    ...
    netsim.errors.UnitError: unknown bandwidth unit 'furlongs' in '10 furlongs'
    """


class NcclModelError(NetsimError):
    """A request the NCCL model cannot answer (unknown op, algorithm, hardware it lacks, ...).

    Examples
    --------
    >>> raise NcclModelError("nvls needs an NVSwitch with nvls=True")
    Traceback (most recent call last):
    ...
    netsim.errors.NcclModelError: nvls needs an NVSwitch with nvls=True
    """
