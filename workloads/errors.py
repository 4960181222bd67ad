"""Exceptions of the workloads package.

All exceptions derive from :class:`netsim.errors.NetsimError` (a ``ValueError``),
so the CLI prints them on one line like every other bad-input error. Options are
checked with :func:`netsim.checks.check_int` and :func:`netsim.checks.check_real`,
given one of these classes as ``error``.
"""

from netsim.errors import NetsimError

__all__ = ["WorkloadError", "DatasetError", "PartitionError", "ProjectionError"]


class WorkloadError(NetsimError):
    """Bad input to a paradigm: unknown paradigm or option, workers < 1, bad value."""


class DatasetError(WorkloadError):
    """Unknown dataset name, or a missing or corrupt dataset file (e.g. an IDX file)."""


class ProjectionError(WorkloadError):
    """A trace cannot be projected: unknown or unsupported paradigm, bad P, bad option."""


class PartitionError(WorkloadError):
    """A model partition that leaves a node without a layer or without a neuron."""
