"""Exceptions of the workloads package.

All exceptions derive from :class:`netsim.errors.NetsimError` (a ``ValueError``),
so the CLI prints them on one line like every other bad-input error. Options are
checked with :func:`netsim.checks.check_int` and :func:`netsim.checks.check_real`,
given one of these classes as ``error``.
"""

from netsim.errors import NetsimError

__all__ = ["WorkloadError", "DatasetError", "PartitionError", "ProjectionError"]


class WorkloadError(NetsimError):
    """Bad input to a paradigm: unknown paradigm or option, workers < 1, bad value.

    Examples
    --------
    >>> import workloads
    >>> workloads.record("single", workers=0)
    Traceback (most recent call last):
    ...
    workloads.errors.WorkloadError: workers must be an integer >= 1, got 0
    """


class DatasetError(WorkloadError):
    """Unknown dataset name, or a missing or corrupt dataset file (e.g. an IDX file).

    Examples
    --------
    >>> from workloads.datasets import load
    >>> load("cifar")
    Traceback (most recent call last):
    ...
    workloads.errors.DatasetError: unknown dataset 'cifar'; known datasets: iris, digits, mnist, sparse
    """


class ProjectionError(WorkloadError):
    """A trace cannot be projected: unknown or unsupported paradigm, bad P, bad option.

    Examples
    --------
    >>> from netsim import TraceBuilder
    >>> from workloads.projection import project
    >>> project(TraceBuilder(1, {"paradigm": "gossip"}).build(), 4)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    workloads.errors.ProjectionError: paradigm 'gossip' cannot be projected; projectable paradigms: ...
    """


class PartitionError(WorkloadError):
    """A model partition that leaves a node without a layer or without a neuron.

    Examples
    --------
    >>> from workloads.ringtmp import partition_layers
    >>> partition_layers([4, 16, 3], 5)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    workloads.errors.PartitionError: layer-wise partition of 2 dense layers over 5 ring nodes ...
    """
