"""Exceptions raised for bad input and impossible runs.

Every error says which value, op, node or attribute is at fault, so that the
CLI can print it on one line. All are ``ValueError`` subclasses through
:class:`NetsimError`, so one ``except NetsimError`` catches every bad input.
"""

__all__ = ["NetsimError", "TopologyError", "TraceError", "DeadlockError", "UnitError"]


class NetsimError(ValueError):
    """Base class of every error netsim raises for bad input.

    Examples
    --------
    >>> from netsim.units import parse_bytes
    >>> try:
    ...     parse_bytes("64 parsecs")
    ... except NetsimError as e:
    ...     print(type(e).__name__, "|", e)
    UnitError | unknown size unit 'parsecs' in '64 parsecs'; use B, kB, MB, GB, KiB, MiB, ...
    """


class TopologyError(NetsimError):
    """A topology or placement cannot be simulated (bad attribute, no path, bad node).

    Examples
    --------
    >>> import networkx as nx
    >>> from netsim import Network
    >>> G = nx.Graph(); G.add_edge("a", "b", bandwidth=-1)
    >>> Network(G)
    Traceback (most recent call last):
    ...
    netsim.errors.TopologyError: edge ('a', 'b') has bandwidth -1: it must be a finite number > 0 bytes/s
    """


class TraceError(NetsimError):
    """A trace is malformed (unknown rank, missing dependency, negative bytes, NaN, ...).

    Examples
    --------
    >>> from netsim import TraceBuilder
    >>> b = TraceBuilder(2); _ = b.message(0, 1, 8, deps=[3])
    >>> b.build()
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
    >>> from netsim.units import parse_bandwidth
    >>> parse_bandwidth("10 furlongs")
    Traceback (most recent call last):
    ...
    netsim.errors.UnitError: unknown bandwidth unit 'furlongs' in '10 furlongs'; use Gbps, Gb/s, GB/s, ...
    """
