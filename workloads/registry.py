"""The one registry of paradigms: CLI name -> :class:`Paradigm`, and :func:`record`.

Each paradigm module of :mod:`workloads` is an entry of :data:`PARADIGMS`
(re-exported as :data:`workloads.PARADIGMS`): its ``run``, description,
options, closed form, phases, and its ``measure`` and ``schedule`` where it
can be projected (:mod:`workloads.plan.projection` reads them here).

Examples
--------
>>> PARADIGMS["ps-sync"].run.__module__
'workloads.paradigms.ps_sync'
"""

import importlib
import importlib.util
import inspect
from types import MappingProxyType
from typing import NamedTuple

from workloads.plan import phases
from workloads import training
from workloads.plan.measure import steps_per_epoch
from workloads.datasets import NAMES as DATASETS
from workloads.errors import DatasetError, WorkloadError
from workloads.option_ranges import RUN_BOUNDS, check_run_bounds

__all__ = ["PARADIGMS", "Paradigm", "record", "describe", "run_dataset", "check_run_options"]

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
    'workloads.paradigms.ps'
    >>> PARADIGMS["model-averaging"].phases.__module__, PARADIGMS["ps-sync"].phases.__name__
    ('workloads.paradigms.model_averaging', 'uniform')
    >>> PARADIGMS["ringtmp"].schedule.__module__, PARADIGMS["ps-partitioned"].schedule
    ('workloads.paradigms.ringtmp', None)
    """

    name: str
    run: object
    description: str
    options: dict  # option name -> (default, help text)
    closed_form: object = None  # closed_form(trace, alpha, beta, device_flops=None), or None
    no_closed_form: str = None  # why there is none (the module's NO_CLOSED_FORM)
    asymptotic: object = None  # the module's ASYMPTOTIC (workloads.plan.closed.Asymptotic), or None
    words: dict = None  # option -> words a bool option also takes (the module's WORDS)
    phases: object = None  # phases(trace) -> workloads.plan.phases.Phases (warm-up, period)
    measure: object = None  # measure(trace) -> statistics, the module's (workloads.plan.projection)
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
        full = f"workloads.paradigms.{modname}"
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
    if not isinstance(name, str) or name not in PARADIGMS:
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


def run_dataset(dataset, options):
    """The dataset a run with paradigm ``options`` trains on: ``dataset`` itself if loaded,
    else loaded by name with the options' ``data_path`` and ``dataset_options``.

    Examples
    --------
    >>> run_dataset("iris", {}).n_train
    120
    """
    from workloads import datasets

    if isinstance(dataset, datasets.Dataset):
        return dataset
    return datasets.load(dataset, path=options.get("data_path"),
                         **(options.get("dataset_options") or {}))


def check_run_options(name, dataset="iris", workers=None, **options):
    """Refuse the options given to paradigm ``name`` past the run's own counts.

    Only the options given are checked (a default is never refused: DGC's 4 warm-up
    epochs in a 1-epoch run are its documented default), against the counts of the run
    they set: epochs (given or the paradigm's default), the dataset's training samples
    and a worker's steps over the run (epochs x :func:`workloads.plan.measure.steps_per_epoch`), by
    :func:`workloads.option_ranges.check_run_bounds`. The dataset is loaded only when a
    sample or step bound is to be checked.

    Parameters
    ----------
    name : str
        A key of :data:`PARADIGMS`.
    dataset : str or workloads.datasets.Dataset, optional
    workers : int, optional
        The paradigm's default if None.
    **options
        The options given (``data_path`` and ``dataset_options`` are read for the data).

    Raises
    ------
    WorkloadError
        Saying the option, the run's count and why (:data:`workloads.option_ranges.RUN_BOUNDS`).

    Examples
    --------
    >>> check_run_options("model-averaging", period=8, epochs=2)  # 2 x 4 steps on iris
    >>> check_run_options("model-averaging", period=9, epochs=2)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    workloads.errors.WorkloadError: period must be at most steps = 8 of this run, got 9: ...
    """
    p = _get(name)
    given = {k: v for k, v in options.items() if k in RUN_BOUNDS and k in p.options}
    if not given:
        return
    def default(key):  # the value given, else the paradigm's default
        return options.get(key, p.options[key][0] if key in p.options else None)

    counts = {"epochs": default("epochs")}
    if default("batch_size") is not None and any(RUN_BOUNDS[k][0] != "epochs" for k in given):
        data = run_dataset(dataset, options)
        if workers is None:
            workers = inspect.signature(p.run).parameters["workers"].default
        counts["samples"] = data.n_train
        batch = min(default("batch_size"), data.n_train)
        counts["steps"] = counts["epochs"] * steps_per_epoch(data.n_train, workers, batch)
    check_run_bounds(given, **counts)
