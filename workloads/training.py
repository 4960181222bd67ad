"""Training set-up every paradigm shares: data, model, shards and mini-batches.

:func:`prepare` loads the data, builds the model and splits the training set
among the workers (one seeded Generator for everything); :func:`worker_batches`
gives one epoch of equal-sized per-worker mini-batches; :func:`epochs_of`
reports finished epochs to a progress callback. Recording the trace is
:mod:`workloads.recorder`'s and each paradigm's ``schedule``.

Examples
--------
>>> s = prepare("iris", 2, seed=0)
>>> len(worker_batches(s.shards, 8, s.rng))
8
"""

import math
from dataclasses import dataclass

import numpy as np

from netsim import checks

from workloads import datasets, mlp
from workloads.errors import WorkloadError
from workloads.option_ranges import check_option

__all__ = ["Setup", "check_workers", "prepare", "worker_batches", "epochs_of", "first_nonfinite"]


@dataclass
class Setup:
    """Everything a run prepares before training (see :func:`prepare`).

    Attributes
    ----------
    data : workloads.datasets.Dataset
    layers : tuple of int
        Model widths, input to output.
    rng : numpy.random.Generator
        The run's randomness (already used for the initial parameters and shards).
    params : list of ndarray
        Initial parameters (float32), the same for every worker.
    shards : list of ndarray
        Training-sample indices of each worker.
    dataset : str
    seed : int

    Examples
    --------
    >>> s = prepare("iris", 2, seed=0)
    >>> s.layers, len(s.shards), s.dataset
    ((4, 16, 3), 2, 'iris')
    """

    data: object
    layers: tuple
    rng: np.random.Generator
    params: list
    shards: list
    dataset: str
    seed: int


def check_workers(workers, minimum=1):
    """Validate a worker count and return it as an int.

    Parameters
    ----------
    workers : int
    minimum : int
        The smallest allowed.

    Raises
    ------
    WorkloadError
        If ``workers`` is not an integer >= ``minimum``.

    Examples
    --------
    >>> check_workers(4)
    4
    >>> check_workers(0)
    Traceback (most recent call last):
    ...
    workloads.errors.WorkloadError: workers must be an integer >= 1, got 0
    """
    return checks.check_int(workers, "workers", minimum, error=WorkloadError)


def prepare(dataset, workers, seed, hidden=(16,), data_path=None, dataset_options=None, *,
            epochs=None, lr=None, momentum=None):
    """Load the data, build the model and split the training set among workers.

    The run's Generator is ``numpy.random.default_rng(seed)``; it draws the
    initial parameters, then the shards, and is returned for the mini-batch
    order. The train/test split itself is fixed (independent of ``seed``).

    It also validates the training options every paradigm shares (those given),
    before loading any data, so that all paradigms check them alike.

    Parameters
    ----------
    dataset : str or Dataset
        A name for :func:`workloads.datasets.load`, or a loaded dataset.
    workers : int
        Number of data shards (>= 1).
    seed : int
    hidden : int or sequence of int
        Hidden-layer widths (an int alone is one layer); the model is
        ``(n_features, *hidden, n_classes)``.
    data_path : str, optional
        For ``mnist``.
    dataset_options : dict, optional
        Passed to :func:`workloads.datasets.load`.
    epochs : int, optional
        Checked to be an integer >= 1.
    lr : float, optional
        Learning rate, checked to be a finite number > 0.
    momentum : float, optional
        Checked to be in [0, 1): heavy-ball SGD diverges for momentum >= 1
        (:mod:`workloads.option_ranges`).

    Returns
    -------
    Setup

    Raises
    ------
    WorkloadError
        For a bad worker count, hidden width, ``epochs``, ``lr`` or ``momentum``.

    Examples
    --------
    >>> s = prepare("iris", 4, seed=0)
    >>> s.layers, [len(x) for x in s.shards]
    ((4, 16, 3), [30, 30, 30, 30])
    >>> prepare("iris", 4, seed=0, hidden=(16.7,))
    Traceback (most recent call last):
    ...
    workloads.errors.WorkloadError: hidden width must be an integer >= 1, got 16.7
    """
    workers = check_workers(workers)
    if epochs is not None:
        check_option("epochs", epochs)
    if lr is not None:
        check_option("lr", lr)
    if momentum is not None:
        check_option("momentum", momentum)
    hidden = (hidden,) if np.ndim(hidden) == 0 else tuple(hidden)
    hidden = tuple(checks.check_int(h, "hidden width", error=WorkloadError) for h in hidden)
    if isinstance(dataset, datasets.Dataset):
        data = dataset
    else:
        check_option("dataset_options", dataset_options)
        data = datasets.load(dataset, path=data_path, **(dataset_options or {}))
    layers = (data.n_features, *hidden, data.n_classes)
    rng = np.random.default_rng(seed)
    params = mlp.init_params(layers, rng)
    shard_list = datasets.shards(data.n_train, workers, rng)
    return Setup(data, layers, rng, params, shard_list, data.name, seed)


def worker_batches(shards, batch_size, rng):
    """One epoch of per-worker mini-batches, step by step.

    Each worker shuffles its shard; every step gives each worker
    ``min(batch_size, len(shard))`` samples, taken cyclically from its shuffled
    shard, so all workers take the same number of equal-sized steps:
    ``ceil(max shard size / batch_size)`` per epoch.

    Parameters
    ----------
    shards : list of numpy.ndarray
        Sample indices of each worker.
    batch_size : int
        Samples per step.
    rng : numpy.random.Generator
        Shuffles each shard.

    Returns
    -------
    list of list of ndarray
        ``batches[step][worker]`` are sample indices.

    Examples
    --------
    >>> b = worker_batches([np.arange(5), np.arange(5, 9)], 2, np.random.default_rng(0))
    >>> len(b), [len(x) for x in b[0]]
    (3, [2, 2])
    """
    check_option("batch_size", batch_size)
    perms = [rng.permutation(s) for s in shards]
    steps = max(math.ceil(len(s) / batch_size) for s in shards)
    out = []
    for t in range(steps):
        row = []
        for p in perms:
            b = min(batch_size, len(p))
            row.append(p[(t * b + np.arange(b)) % len(p)])
        out.append(row)
    return out


def epochs_of(steps, epochs, progress=None):
    """Iterate over ``steps`` (``epochs`` epochs' worth), reporting each finished epoch.

    ``progress(epochs_done, epochs)`` is called once per epoch, when the step
    that completes it has been processed (the loop body has run). ``steps`` is
    either ``range(epochs)`` or a flat list of every step of every epoch (equal
    steps per epoch; a step may also be a group of steps, such as ADMM's rounds).

    Parameters
    ----------
    steps : iterable
        What the training loop iterates over; needs ``len``.
    epochs : int
    progress : callable, optional
        ``progress(epochs_done, epochs)``; None iterates without reporting.

    Examples
    --------
    >>> seen = []
    >>> for step in epochs_of(list("abcdef"), 3, lambda e, n: seen.append((e, n))):
    ...     pass
    >>> seen
    [(1, 3), (2, 3), (3, 3)]
    """
    if progress is None:
        yield from steps
        return
    total = len(steps)
    reported = 0
    for i, step in enumerate(steps):
        yield step
        # The body has run for step i: report every epoch it completed.
        done = (i + 1) * epochs // total
        while reported < done:
            reported += 1
            progress(reported, epochs)


def first_nonfinite(first, loss, iteration):
    """The first iteration whose training loss is not finite (inf or NaN), or None.

    Called once per step with the step's loss; pass its result back as ``first``.

    Parameters
    ----------
    first : int or None
        What the previous call returned (None at the start).
    loss : float
        The training loss of this step (of any worker).
    iteration : int
        This step's iteration.

    Returns
    -------
    int or None
        ``first`` if already set, else ``iteration`` if ``loss`` is not finite.

    Examples
    --------
    >>> bad = None
    >>> for it, loss in enumerate([2.3, 1.9, float("nan"), float("inf")]):
    ...     bad = first_nonfinite(bad, loss, it)
    >>> bad
    2
    """
    if first is None and not math.isfinite(float(loss)):
        return iteration
    return first
