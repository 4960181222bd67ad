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
frontier builder :class:`workloads.frontier.Frontier`); ``run`` trains for real
and builds its trace through its own ``schedule`` from the statistics of what it
sent (RingTMP's neuron partition, which has no schedule, records op by op), and
:func:`workloads.projection.project` is ``schedule(P, measure(trace))``.

:data:`PARADIGMS` maps each CLI name to a :class:`Paradigm` record (its ``run``
function, a one-line description, its options with their defaults and its
alpha-beta ``closed_form``, or in ``no_closed_form`` why it has none; see
:mod:`workloads.closed`; its ``phases``: the module's ``phases(trace)``, else
:func:`workloads.phases.uniform`, see :mod:`workloads.phases`), and
:func:`record` validates a request and runs it. A paradigm module whose file is
absent is simply left out of the registry; one present but broken raises.
:mod:`workloads.schemes` composes them into a synchronisation scheme (BSP, SSP,
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

import importlib
import importlib.util
import inspect
from typing import NamedTuple

from . import datasets, mlp, phases, recorder, training
from .datasets import NAMES as DATASETS
from .datasets import Dataset, load
from .errors import DatasetError, PartitionError, ProjectionError, WorkloadError
from .recorder import V100_FP32_FLOPS, Recorder, RunResult

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

# CLI name -> module name, in the order `netsim record --list` shows them.
_MODULES = (
    ("single", "single"),
    ("ps-sync", "ps_sync"),
    ("ps-async", "ps_async"),
    ("allreduce", "allreduce"),
    ("model-averaging", "model_averaging"),
    ("admm", "admm"),
    ("ringtmp", "ringtmp"),
    ("pf", "pf"),
    ("slimdp", "slimdp"),
    ("dgc", "dgc"),
    ("ps-partitioned", "ps_partitioned"),
)


class Paradigm(NamedTuple):
    """A registry entry: the run function, what ``--list`` shows, its closed form.

    Examples
    --------
    >>> p = PARADIGMS["ps-async"]
    >>> p.name, "servers" in p.options, p.closed_form.__name__, p.no_closed_form
    ('ps-async', True, 'closed_form', None)
    >>> PARADIGMS["ps-sync"].closed_form.__module__
    'workloads.ps'
    >>> PARADIGMS["model-averaging"].phases.__module__, PARADIGMS["ps-sync"].phases.__name__
    ('workloads.model_averaging', 'uniform')
    """

    name: str
    run: object
    description: str
    options: dict  # option name -> (default, help text)
    closed_form: object = None  # closed_form(trace, alpha, beta, device_flops=None), or None
    no_closed_form: str = None  # why there is none (the module's NO_CLOSED_FORM)
    asymptotic: object = None  # the module's ASYMPTOTIC (workloads.closed.Asymptotic), or None
    words: dict = None  # option -> words a bool option also takes (the module's WORDS)
    phases: object = None  # phases(trace) -> workloads.phases.Phases (warm-up, period)


def _entry(name, module):
    run = module.run
    desc = getattr(module, "DESCRIPTION", None) or (inspect.getdoc(run) or name).splitlines()[0]
    helps = getattr(module, "OPTIONS", {})
    options = {}
    for p in inspect.signature(run).parameters.values():
        if p.name in ("dataset", "workers", "progress") or p.kind in (p.VAR_KEYWORD,
                                                                       p.VAR_POSITIONAL):
            continue
        default = None if p.default is inspect.Parameter.empty else p.default
        options[p.name] = (default, helps.get(p.name, ""))
    closed = getattr(module, "closed_form", None)
    return Paradigm(name, run, desc, options, closed, getattr(module, "NO_CLOSED_FORM", None),
                    getattr(module, "ASYMPTOTIC", None), dict(getattr(module, "WORDS", {})),
                    getattr(module, "phases", phases.uniform))


def _registry():
    out = {}
    for name, modname in _MODULES:
        full = f"{__name__}.{modname}"
        if importlib.util.find_spec(full) is None:
            continue  # not written yet
        out[name] = _entry(name, importlib.import_module(full))
    return out


#: CLI name -> :class:`Paradigm`. Built once at import; treat as read-only.
PARADIGMS = _registry()


def describe(name):
    """A few lines describing paradigm ``name`` and its options, for ``--list``.

    Examples
    --------
    >>> print(describe("single").splitlines()[0])
    single: one node trains alone: no messages (the baseline).
    """
    p = _get(name)
    lines = [f"{p.name}: {p.description}"]
    for opt, (default, text) in p.options.items():
        lines.append(f"    {opt}={default!r}" + (f"  {text}" if text else ""))
    return "\n".join(lines)


def _get(name):
    if name not in PARADIGMS:
        raise WorkloadError(f"unknown paradigm {name!r}; known paradigms: {', '.join(PARADIGMS)}")
    return PARADIGMS[name]


def record(name, dataset="iris", workers=None, progress=None, **options):
    """Validate a request and run paradigm ``name``; return its :class:`RunResult`.

    Parameters
    ----------
    name : str
        A key of :data:`PARADIGMS`.
    dataset : str
        A name of :data:`DATASETS`; ``"iris"`` unless given, for every paradigm
        (also ``ps-partitioned``, whose ``run`` alone defaults to ``"sparse"``).
    workers : int, optional
        Logical workers (>= 1); the paradigm's default if None.
    progress : callable, optional
        Called as ``progress(epochs_done, epochs)`` after each training epoch
        (see :class:`netsim.progress.Progress`).
    **options
        The paradigm's options (see :func:`describe`).

    Raises
    ------
    WorkloadError
        Unknown paradigm or option (listing the known ones), or workers < 1.
    DatasetError
        Unknown dataset (listing the known ones).

    Examples
    --------
    >>> record("gossip")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    workloads.errors.WorkloadError: unknown paradigm 'gossip'; known paradigms: single, ...
    """
    p = _get(name)
    if isinstance(dataset, str) and dataset not in DATASETS:
        raise DatasetError(f"unknown dataset {dataset!r}; known datasets: {', '.join(DATASETS)}")
    if workers is not None:
        training.check_workers(workers)
        options["workers"] = workers
    known = set(p.options) | {"workers"}
    unknown = sorted(set(options) - known)
    if unknown:
        raise WorkloadError(f"paradigm {name!r} takes no option(s) {', '.join(unknown)}; "
                            f"its options: {', '.join(p.options)}")
    if progress is not None:
        options["progress"] = progress
    return p.run(dataset=dataset, **options)
