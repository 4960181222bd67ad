"""The one registry of paradigms: CLI name -> :class:`Paradigm`, and :func:`record`.

Each paradigm module of :mod:`workloads` is an entry of :data:`PARADIGMS`
(re-exported as :data:`workloads.PARADIGMS`): its ``run``, description,
options, closed form, phases, and its ``measure`` and ``schedule`` where it
can be projected (:mod:`workloads.projection` reads them here).

Examples
--------
>>> PARADIGMS["ps-sync"].run.__module__
'workloads.ps_sync'
"""

import importlib
import importlib.util
import inspect
from types import MappingProxyType
from typing import NamedTuple

from . import phases, training
from .datasets import NAMES as DATASETS
from .errors import DatasetError, WorkloadError

__all__ = ["PARADIGMS", "Paradigm", "record", "describe"]

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
    >>> PARADIGMS["ringtmp"].schedule.__module__, PARADIGMS["ps-partitioned"].schedule
    ('workloads.ringtmp', None)
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
    measure: object = None  # measure(trace) -> statistics, the module's (workloads.projection)
    schedule: object = None  # schedule(P, stats, ...) -> Trace, or None: not projectable


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
                    getattr(module, "phases", phases.uniform), getattr(module, "measure", None),
                    getattr(module, "schedule", None))


def _registry():
    out = {}
    for name, modname in _MODULES:
        full = f"{__package__}.{modname}"
        if importlib.util.find_spec(full) is None:
            continue  # not written yet
        out[name] = _entry(name, importlib.import_module(full))
    return out


#: CLI name -> :class:`Paradigm`, the one registry of paradigms (read-only).
PARADIGMS = MappingProxyType(_registry())


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
