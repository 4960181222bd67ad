"""The run a paradigm's scaling study stands for, and the paradigm options bounded by it.

``netsim record`` refuses an option past the run it records (a ``period`` longer
than a worker's steps, a ``batch_size`` past the training samples, ...:
:data:`workloads.option_ranges.RUN_BOUNDS`). A scaling study records one epoch
and, when its window (:mod:`studies.scaling.windows`) reaches further, a run long enough
to hold it, so its run is not known from the options alone: :func:`run_epochs`
works it out before any recording, from the paradigm's declared phases
(:mod:`workloads.plan.phases`) and a worker's steps in an epoch
(:func:`workloads.plan.measure.steps_per_epoch`), and :func:`check_study_options` checks
the options given against that run, with the messages of ``netsim record``.

Examples
--------
>>> run_epochs("model-averaging", {"period": 100}, dataset="iris")  # 4 steps an epoch
25
>>> check_study_options("ps-async", [2, 4], dataset="iris", ssp=50)  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
workloads.errors.WorkloadError: ssp must be at most steps - 1 = 3 of this run, got 50: ...
"""

import math

from workloads.option_ranges import RUN_BOUNDS

from studies.registry import PARADIGMS
from studies.scaling.windows import plan_windows, sampled_windows

__all__ = ["run_epochs", "window_iterations", "check_study_options"]


def _declared(name, options, workers, samples):
    """The phases paradigm ``name`` declares for a recording with these options: its
    ``phases`` read from a recording's metadata alone, given here without recording."""
    from netsim.trace.core import TraceBuilder

    entry = PARADIGMS[name]
    hyper = {key: default for key, (default, *_) in entry.options.items()}
    hyper.update(options)
    empty = TraceBuilder(workers).build().with_metadata(
        paradigm=name, workers=workers, train_samples=samples, hyper=hyper)
    return entry.phases(empty)


def run_epochs(name, options, iterations=None, dataset="digits", workers=4, projected=True,
               data=None):
    """Epochs of the run a scaling study of paradigm ``name`` stands for, at ``workers``.

    One epoch, or as many as hold the study's windows
    (:func:`studies.scaling.windows.plan_windows` of the paradigm's phases): the run a
    projected study records again when its window reaches past one epoch, and the run
    whose iterations a projection generates.

    Parameters
    ----------
    name : str
        A key of :data:`studies.registry.PARADIGMS`.
    options : dict
        The paradigm options given (``batch_size`` among them if given).
    iterations : int, optional
        The study's ``iterations`` (its window).
    dataset : str, optional
    workers : int, optional
        Workers of the recording (a projected study's ``base_workers``, else each P).
    projected : bool, optional
        False for a paradigm recorded at every P: its window is the first iterations,
        the paradigm's phases are not read.
    data : workloads.datasets.Dataset, optional
        The dataset loaded (default: loaded by name).

    Returns
    -------
    int

    Examples
    --------
    >>> run_epochs("ps-sync", {}, dataset="iris"), run_epochs("ps-sync", {}, 12, "iris")
    (1, 3)
    """
    steps, windows = _windows(name, options, iterations, dataset, workers, projected, data)
    stop = max(s + n for s, n in windows)
    return max(1, math.ceil(stop / max(steps, 1)))


def window_iterations(name, options, iterations=None, dataset="digits", workers=4):
    """Iterations a scaling study of paradigm ``name`` simulates at each P: its windows'.

    Parameters
    ----------
    name, options, iterations, dataset, workers
        As for :func:`run_epochs`.

    Returns
    -------
    int

    Examples
    --------
    >>> window_iterations("ps-sync", {}), window_iterations("model-averaging", {"period": 100})
    (3, 100)
    """
    from workloads.plan.projection import PROJECTABLE

    _, windows = _windows(name, options, iterations, dataset, workers, name in PROJECTABLE)
    return sum(n for _, n in windows)


def _windows(name, options, iterations, dataset, workers, projected, data=None):
    """A worker's steps in an epoch of the recording, and the study's ``(start, iterations)``
    windows (:func:`studies.scaling.windows.sampled_windows`)."""
    from workloads.registry import run_dataset
    from workloads.plan.phases import Phases
    from workloads.plan.measure import steps_per_epoch

    data = run_dataset(dataset if data is None else data, options)
    batch = options.get("batch_size", PARADIGMS[name].options["batch_size"][0])
    steps = steps_per_epoch(data.n_train, workers, min(int(batch), data.n_train))
    declared = _declared(name, options, workers, data.n_train) if projected else Phases()
    return steps, sampled_windows(plan_windows(declared, iterations, steps))


def check_study_options(name, workers, iterations=None, dataset="digits", model=None,
                        batch=None, base_workers=4, **options):
    """Refuse the options given to a scaling study of ``name`` past the run it stands for.

    :func:`workloads.registry.check_run_options` (the check of ``netsim record``) with
    the run's length from :func:`run_epochs`: at ``base_workers`` for a study that
    projects one recording, at each P of ``workers`` for a paradigm recorded at every P.
    Anything but a paradigm's name, or no option of
    :data:`workloads.option_ranges.RUN_BOUNDS` given, passes unchecked.

    Parameters
    ----------
    name : str or object
        The study's source (a paradigm name, a trace or a path).
    workers : sequence of int
    iterations, dataset, model, batch, base_workers, **options
        As for :func:`studies.scaling.paradigm.study`.

    Raises
    ------
    WorkloadError
        As ``netsim record`` raises it, naming the option, the run's count and why.

    Examples
    --------
    >>> check_study_options("model-averaging", [2, 4], dataset="iris", period=100)
    >>> check_study_options("model-averaging", [2, 4], iterations=4, dataset="iris",
    ...                     period=100)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    workloads.errors.WorkloadError: period must be at most steps = 4 of this run, got 100: ...
    """
    from workloads.registry import check_run_options, run_dataset
    from workloads.plan.projection import PROJECTABLE

    if not (isinstance(name, str) and name in PARADIGMS) or not any(
            key in RUN_BOUNDS for key in options):
        return
    data = run_dataset(dataset, options)
    projected = name in PROJECTABLE or model is not None or batch is not None
    for P in [base_workers] if projected else workers:
        epochs = run_epochs(name, options, iterations, dataset, P, projected, data)
        check_run_options(name, data, workers=P, **{**options, "epochs": epochs})
