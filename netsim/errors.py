"""Exceptions raised for bad input and impossible runs.

Every error says which value, op, node or attribute is at fault, so that the
CLI can print it on one line.
"""

__all__ = ["NetsimError", "TopologyError", "TraceError", "DeadlockError", "UnitError"]


class NetsimError(ValueError):
    """Base class of every error netsim raises for bad input."""


class TopologyError(NetsimError):
    """A topology or placement cannot be simulated (bad attribute, no path, bad node)."""


class TraceError(NetsimError):
    """A trace is malformed (unknown rank, missing dependency, negative bytes, NaN, ...)."""


class DeadlockError(NetsimError):
    """Replay stopped with ops that can never run; ``stuck`` lists them."""

    def __init__(self, message, stuck=()):
        super().__init__(message)
        self.stuck = list(stuck)


class UnitError(NetsimError):
    """A human-unit string such as ``10Gbps`` or ``64MB`` cannot be parsed."""
