"""Training paradigms that train a real model and record every message they send.

Each paradigm is a module with ``run(dataset=..., workers=..., epochs=..., seed=0,
**options) -> RunResult``. Most ``run`` functions default to ``dataset="iris"`` and
``workers=4``; ``single`` defaults to ``workers=1`` and ``ps-partitioned`` to
``dataset="sparse"`` (but :func:`record` always uses ``"iris"`` unless told). The
model (:mod:`workloads.mlp`), the data (:mod:`workloads.datasets`), the training
set-up (:mod:`workloads.training`) and the recording helpers
(:mod:`workloads.recorder`) are shared by all of them.

Every paradigm but ``ps-partitioned`` also has ``measure(trace)`` (the statistics
of a recording) and ``schedule(P, stats, servers=None, iterations=None,
batch_size=None, model=None, start=0)`` (its trace at any P from them, from the
run's iteration ``start``, built with the one
frontier builder :class:`workloads.plan.frontier.Frontier`); ``run`` trains for real
and builds its trace through its own ``schedule`` from the statistics of what it
sent (RingTMP's neuron partition, which has no schedule, records op by op), and
:func:`workloads.plan.projection.project` is ``schedule(P, measure(trace))``.

:data:`PARADIGMS` (:mod:`workloads.registry`, the one registry) maps each CLI
name to a :class:`Paradigm` record (its ``run`` function, a one-line description,
its options with their defaults and its alpha-beta ``closed_form``, or in
``no_closed_form`` why it has none; see :mod:`workloads.plan.closed`; its ``phases``:
the module's ``phases(trace)``, else :func:`workloads.plan.phases.uniform`, see
:mod:`workloads.plan.phases`; its ``measure`` and ``schedule``, which
:mod:`workloads.plan.projection` calls), and :func:`record` validates a request and
runs it. A paradigm module whose file is
absent is simply left out of the registry; one present but broken raises.
:mod:`workloads.paradigms.schemes` composes them into a synchronisation scheme (BSP, SSP,
async, local SGD) on an architecture (parameter server or allreduce).

A paradigm module provides ``run`` and a one-line ``DESCRIPTION``; the options
listed are the keyword parameters of ``run`` after ``dataset`` and ``workers``,
with help text from the module's ``OPTIONS`` dict (name -> text) when it has one.
``run`` also takes ``progress=None``, called as ``progress(epochs_done, epochs)``
after each epoch; it is not an option.

Examples
--------
>>> import workloads
>>> "ps-sync" in workloads.PARADIGMS
True
>>> r = workloads.record("single", epochs=2)
>>> r.messages, r.trace.metadata["paradigm"]
(0, 'single')
"""

from workloads import datasets, mlp, recorder, training
from workloads.plan import phases
from workloads.datasets import NAMES as DATASETS
from workloads.datasets import Dataset, load
from workloads.errors import DatasetError, PartitionError, ProjectionError, WorkloadError
from workloads.registry import PARADIGMS, Paradigm, describe, record
from workloads.recorder import V100_FP32_FLOPS, Recorder, RunResult

__all__ = [
    "PARADIGMS",
    "DATASETS",
    "Paradigm",
    "record",
    "describe",
    "RunResult",
    "Recorder",
    "Dataset",
    "load",
    "WorkloadError",
    "DatasetError",
    "PartitionError",
    "ProjectionError",
    "V100_FP32_FLOPS",
    "datasets",
    "mlp",
    "recorder",
    "training",
    "phases",
]
