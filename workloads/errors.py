"""Exceptions of the workloads package.

All exceptions derive from :class:`netsim.errors.NetsimError` (a ``ValueError``),
so the CLI prints them on one line like every other bad-input error. Options are
checked with :func:`netsim.checks.check_int` and :func:`netsim.checks.check_real`,
given one of these classes as ``error``.
"""

from netsim.errors import NetsimError

__all__ = ["WorkloadError", "DatasetError", "PartitionError", "ProjectionError",
           "DivergenceWarning"]


class WorkloadError(NetsimError):
    """Bad input to a paradigm: unknown paradigm or option, workers < 1, bad value.

    Examples
    --------
    Every workload error is one, and a :class:`netsim.errors.NetsimError`:

    >>> from netsim.errors import NetsimError
    >>> issubclass(DatasetError, WorkloadError), issubclass(WorkloadError, NetsimError)
    (True, True)
    """


class DatasetError(WorkloadError):
    """Unknown dataset name, or a missing or corrupt dataset file (e.g. an IDX file).

    Examples
    --------
    >>> raise DatasetError("unknown dataset 'cifar'; known datasets: iris, digits, mnist, sparse")
    Traceback (most recent call last):
    ...
    workloads.errors.DatasetError: unknown dataset 'cifar'; known datasets: iris, digits, mnist, sparse
    """


class ProjectionError(WorkloadError):
    """A trace cannot be projected: unknown or unsupported paradigm, bad P, bad option.

    Examples
    --------
    >>> isinstance(ProjectionError("paradigm 'gossip' cannot be projected"), WorkloadError)
    True
    """


class PartitionError(WorkloadError):
    """A model partition that leaves a node without a layer or without a neuron.

    Examples
    --------
    >>> str(PartitionError("layer-wise partition of 2 dense layers over 5 ring nodes ..."))
    'layer-wise partition of 2 dense layers over 5 ring nodes ...'
    """


class DivergenceWarning(UserWarning):
    """A training run whose loss became non-finite (inf or NaN): its result is flagged
    ``diverged`` and its accuracy means nothing.

    Examples
    --------
    >>> issubclass(DivergenceWarning, UserWarning)
    True
    """
