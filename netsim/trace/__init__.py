"""Traces: the data model (per-rank dependency graphs of ops, stored column-wise) and operations from trace to trace.

Modules
-------
blocks     The block trace builder: numpy blocks of ops, built into one :class:`~netsim.trace.core.Trace`.
collop     Collective ops in a trace: their vocabulary and the table of their specifications.
core       Traces: per-rank dependency graphs of compute ops and messages, stored column-wise.
graph      The dependency graph of a trace: successors, cycle check, and index ranges.
ops        Operations on traces: run one after another, repeat, find each rank's last ops.
perturb    Heterogeneity at replay time: slower devices, compute jitter and stragglers.
programs   Per-rank programs of compute ops, collectives and messages, joined into one trace.
reproject  Project an imported data-parallel trace to another number of ranks.
whatif     What-if from an imported profile: faster or slower compute, host gaps kept or dropped.
"""

import importlib
import warnings

from netsim.trace.core import COMPUTE, MESSAGE, Trace, TraceBuilder
from netsim.trace.ops import concat, repeat, terminal_ops

__all__ = ["Trace", "TraceBuilder", "COMPUTE", "MESSAGE", "concat", "repeat", "terminal_ops"]

# Names that moved to netsim.formats.tracefile: still importable from here, with a deprecation
# warning (PEP 562), so code written against the old layout keeps working.
_MOVED = {"load_trace": "netsim.formats.tracefile", "save_trace": "netsim.formats.tracefile",
          "SCHEMA": "netsim.formats.tracefile"}


def __getattr__(name):
    """``netsim.trace.load_trace`` and the other moved names: found where they live now."""
    if name in _MOVED:
        warnings.warn(f"netsim.trace.{name} moved to {_MOVED[name]}.{name}",
                      DeprecationWarning, stacklevel=2)
        return getattr(importlib.import_module(_MOVED[name]), name)
    raise AttributeError(f"module 'netsim.trace' has no attribute {name!r}")
