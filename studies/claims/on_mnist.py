"""The accuracy claims the bundled data cannot show, run on MNIST's IDX files.

``netsim claims --data-path DIR`` calls :func:`run_on_mnist`: DGC's warm-up
(:func:`studies.claims.accuracy.dgc_warmup_claim`), RingTMP's "slightly less
accurate" (:func:`studies.claims.accuracy.ringtmp_accuracy_claim`) and Slim-DP's
explore-exploit subset (:func:`studies.claims.reproduce.slimdp_claim`'s second
row), each with the model and epochs of its bundled-data row (:data:`MNIST`),
on the full 60,000 / 10,000 images. Their rows fold over seeds and get their
verdicts by the same rule (:func:`studies.claims.verdicts.over_seeds`).

Examples
--------
>>> sorted(MNIST)
['dgc', 'ringtmp', 'slimdp']
"""

from types import MappingProxyType

from netsim.errors import NetsimError
from workloads import datasets

from studies.claims import accuracy, ringtmp_vs_ps
from studies.claims.reproduce import slimdp_claim
from studies.parallel import run_jobs

__all__ = ["MNIST", "check_mnist", "slimdp_subset_claim", "run_on_mnist"]

MNIST = MappingProxyType({
    # DGC's and Slim-DP's claims run with their own defaults, their bundled rows' model and
    # epochs; RingTMP's with its bundled digits configuration, read from MNIST instead.
    "dgc": MappingProxyType({}),
    "ringtmp": MappingProxyType({"configs": (
        {**ringtmp_vs_ps.CONFIGS[1], "dataset": "mnist"},)}),
    "slimdp": MappingProxyType({}),
})
"""The options of each claim on MNIST: the models and epochs of the bundled-data rows."""

_ON_MNIST = ("MNIST does not show it either: it needs a harder task (the papers': CIFAR-10 or "
             "ImageNet) or more seeds")
_REGION = "not mapped: run on MNIST (--data-path)"


def check_mnist(path):
    """Check that ``path`` is a directory holding the four MNIST IDX files, before any run.

    Parameters
    ----------
    path : str
        The directory given to ``--data-path``.

    Raises
    ------
    netsim.errors.NetsimError
        A one-line message naming the path and what is missing (the loader's own).

    Examples
    --------
    >>> check_mnist("/no/such/dir")
    Traceback (most recent call last):
    ...
    workloads.errors.DatasetError: MNIST directory not found: /no/such/dir
    """
    datasets.load("mnist", path=path, max_train=1, max_test=1)


def slimdp_subset_claim(**options):
    """The explore-exploit row alone of :func:`studies.claims.reproduce.slimdp_claim`.

    Parameters
    ----------
    **options
        Those of :func:`studies.claims.reproduce.slimdp_claim`.

    Examples
    --------
    >>> [r["claim"][:7] for r in slimdp_subset_claim(dataset="iris", hidden=(8,), epochs=1)]
    ['Slim-DP']
    """
    return slimdp_claim(**options)[1:]


def run_on_mnist(seeds, data_path, jobs=2, options=None, progress=None):
    """The three accuracy claims on MNIST at each seed (RingTMP over as many seeds of its own).

    Parameters
    ----------
    seeds : sequence of int
        Seeds of DGC's and Slim-DP's runs; RingTMP repeats ``len(seeds)`` seeds 0, 1, ...
    data_path : str
        Directory of the MNIST IDX files (:func:`check_mnist`).
    jobs : int
        Processes running the claims side by side.
    options : mapping, optional
        Per claim (``dgc``, ``ringtmp``, ``slimdp``), its options (default :data:`MNIST`).
    progress : callable, optional
        Called as ``progress(runs_done, runs)`` after each run.

    Returns
    -------
    dict
        Seed -> the three rows, for :func:`studies.claims.verdicts.over_seeds`.

    Raises
    ------
    netsim.errors.NetsimError
        For no seed, or a directory without the MNIST files.

    Examples
    --------
    >>> run_on_mnist([0], "/no/such/dir")
    Traceback (most recent call last):
    ...
    workloads.errors.DatasetError: MNIST directory not found: /no/such/dir
    """
    seeds = list(seeds)
    if not seeds:
        raise NetsimError("run_on_mnist needs at least one seed")
    check_mnist(data_path)
    options = MNIST if options is None else options
    data = {"dataset": "mnist", "data_path": data_path, "testable_on": _ON_MNIST}
    work = [(("ringtmp", None), accuracy.ringtmp_accuracy_claim,
             {"seeds": len(seeds), "data_path": data_path, "testable_on": _ON_MNIST,
              **options["ringtmp"]})]
    for seed in seeds:
        work.append((("dgc", seed), accuracy.dgc_warmup_claim,
                     {**data, "seed": seed, **options["dgc"]}))
        work.append((("slimdp", seed), slimdp_subset_claim,
                     {**data, "seed": seed, **options["slimdp"]}))
    results = run_jobs(work, jobs, progress)
    runs = {}
    for seed in seeds:
        rows = results[("dgc", seed)] + results[("ringtmp", None)] + results[("slimdp", seed)]
        runs[seed] = [dict(r, region=_REGION) for r in rows]
    return runs
