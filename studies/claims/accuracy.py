"""The accuracy halves of the seed papers' claims, and which data could show them.

Three claims are about an accuracy difference that Iris and the scikit-learn
digits are too easy (and their test sets too small: 30 and 360 samples, steps of
0.033 and 0.0028) to show: DGC's warm-up training preserves accuracy, RingTMP
is slightly less accurate than the parameter server, and Slim-DP's
explore-exploit subset is more accurate than a random or core-only one. Each
row carries ``differences``, the accuracy difference of each run, and
``testable_on``, the data that would show it and how to run it there;
:func:`studies.claims.verdicts.over_seeds` marks the row ``not testable on this
data`` when the differences lie within their spread over the seeds
(:func:`studies.claims.verdicts.within_spread`). ``netsim claims --data-path
DIR`` runs them on MNIST (:mod:`studies.claims.on_mnist`).

What the papers used: Lin et al. (DGC) trained CIFAR-10 (50,000 training and
10,000 validation images, ResNet-110) and ImageNet, with 4 warm-up epochs
(sec. 3.3: sparsity 75 %, 93.75 %, 98.4375 %, 99.6 %, then 99.9 %); Sun et al.
(Slim-DP) trained ImageNet CNNs; the RingTMP poster used Iris and digits, the
data bundled here. MNIST (60,000 training and 10,000 test images, steps of
0.0001) is the harder task this project can read (:func:`workloads.datasets.mnist`).

Examples
--------
>>> row = dgc_warmup_claim(dataset="iris", hidden=(8,), epochs=5)[0]
>>> row["differences"] == [row["value"]], row["testable_on"].startswith("would show on")
(True, True)
"""

import time

from workloads.paradigms import dgc

from studies.claims import ringtmp_vs_ps
from studies.claims.verdicts import claim_row

__all__ = ["RUN", "DGC_DATA", "RINGTMP_DATA", "SLIMDP_DATA", "accuracy_row",
           "dgc_warmup_claim", "ringtmp_accuracy_claim"]

RUN = "netsim claims --data-path DIR"
"""The command that runs the accuracy claims on MNIST's IDX files in DIR."""

DGC_DATA = ("would show on MNIST, all 60,000 / 10,000 images, the same 8 epochs (4 of warm-up) "
            "over 5 seeds, if a harder task needs the warm-up (the paper's: CIFAR-10, 50,000 "
            f"images, and ImageNet); run: {RUN}")
"""Why DGC's warm-up cannot show on digits' 360 test images, and where it could."""

RINGTMP_DATA = ("would show on MNIST, all 60,000 / 10,000 images, the 8-layer model for 10 "
                f"epochs over 5 seeds (the poster's own data is Iris and digits); run: {RUN}")
"""Where RingTMP's "slightly less accurate" could show."""

SLIMDP_DATA = ("would show on MNIST, all 60,000 / 10,000 images, 3 epochs over 5 seeds, if "
               "the choice of subset matters there (the paper's: ImageNet CNNs); run: " + RUN)
"""Where Slim-DP's explore-exploit advantage could show."""


def accuracy_row(claim, source, setup, measured, threshold, differences, passed, seconds,
                 testable_on, seed=None):
    """One claim row (:func:`studies.claims.verdicts.claim_row`) for an accuracy difference.

    Parameters
    ----------
    claim, source, setup, measured, threshold : str
        As every claim row.
    differences : sequence of float
        The accuracy difference of each run; ``value`` is their mean.
    passed : bool
        Whether the threshold holds.
    seconds : float
        Wall time.
    testable_on : str
        Which data would show the claim and how to run it there.
    seed : int, optional
        The seed of the runs (None: the row repeats its own seeds).

    Examples
    --------
    >>> r = accuracy_row("c", "s", "x", "m", "> 0", [0.01, 0.0], True, 1.0, "MNIST")
    >>> r["value"], r["verdict"], r["differences"]
    (0.005, 'PASS', [0.01, 0.0])
    """
    d = [float(x) for x in differences]
    return {**claim_row(claim, source, setup, measured, threshold, sum(d) / len(d), passed,
                        seconds, seed=seed), "differences": d, "testable_on": testable_on}


def dgc_warmup_claim(dataset="digits", hidden=(128,), epochs=8, workers=4, seed=0,
                     warmup_epochs=4, data_path=None, warm=None, testable_on=DGC_DATA):
    """DGC's warm-up training preserves accuracy at 99.9 % sparsity (Lin et al., sec. 3.3).

    DGC with ``warmup_epochs`` of warm-up (sparsity and learning rate) against
    DGC without any, the same model, data and seed: PASS if the warm-up run is
    more accurate.

    Parameters
    ----------
    dataset : str
        A name of :data:`workloads.DATASETS` (``mnist`` with ``data_path``).
    hidden : tuple of int
        Hidden-layer widths.
    epochs : int
        Training epochs.
    workers : int
        Workers P.
    seed : int
        Seed of the runs.
    warmup_epochs : int
        Epochs of warm-up of the run with it.
    data_path : str, optional
        Directory of the MNIST IDX files.
    warm : workloads.recorder.RunResult, optional
        The run with warm-up, if already run (:func:`studies.claims.reproduce.dgc_claim`).
    testable_on : str
        Which data would show the claim.

    Examples
    --------
    >>> row = dgc_warmup_claim(dataset="iris", hidden=(8,), epochs=5, warmup_epochs=2)[0]
    >>> row["claim"], row["seed"]
    ('DGC: warm-up training preserves accuracy at 99.9 % sparsity', 0)
    """
    t0 = time.perf_counter()
    common = dict(dataset=dataset, hidden=tuple(hidden), epochs=epochs, workers=workers,
                  seed=seed, data_path=data_path)
    on = warm if warm is not None else dgc.run(warmup_epochs=warmup_epochs, **common)
    off = dgc.run(warmup_epochs=0, **common)
    diff = on.accuracy - off.accuracy
    setup = (f"{dataset} MLP {'-'.join(map(str, on.trace.metadata['layers']))}, P = {workers}, "
             f"{epochs} epochs, {warmup_epochs} of warm-up against none")
    return [accuracy_row("DGC: warm-up training preserves accuracy at 99.9 % sparsity",
                         "Lin et al., ICLR 2018, sec. 3.3", setup,
                         f"accuracy {on.accuracy:.3f} with warm-up vs {off.accuracy:.3f} "
                         f"without ({diff:+.4f})", "accuracy with - without warm-up > 0",
                         [diff], diff > 0, time.perf_counter() - t0, testable_on, seed=seed)]


def ringtmp_accuracy_claim(rows=None, seeds=5, workers=8, configs=ringtmp_vs_ps.CONFIGS[1:2],
                           data_path=None, testable_on=RINGTMP_DATA):
    """RingTMP is slightly less accurate than the parameter server (the RingTMP poster).

    The accuracy delta RingTMP minus ps-sync of each seed of each
    configuration (:func:`studies.claims.ringtmp_vs_ps.compare`), pooled: PASS
    if their mean is below 0.

    Parameters
    ----------
    rows : list of dict, optional
        Rows of :func:`studies.claims.ringtmp_vs_ps.compare` already run
        (:func:`studies.claims.reproduce.ringtmp_claim`); else it is run with
        the next arguments.
    seeds : int
        Seeds of each configuration.
    workers : int
        Ring nodes.
    configs : sequence of dict
        Configurations of :func:`studies.claims.ringtmp_vs_ps.compare`.
    data_path : str, optional
        Directory of the MNIST IDX files.
    testable_on : str
        Which data would show the claim.

    Examples
    --------
    >>> row = ringtmp_accuracy_claim(seeds=2, workers=2, configs=[
    ...     {"dataset": "iris", "partition": "layer", "hidden": (8,), "epochs": 1}])[0]
    >>> len(row["differences"]), row["seed"] is None
    (2, True)
    """
    t0 = time.perf_counter()
    if rows is None:
        rows = ringtmp_vs_ps.compare(seeds=seeds, workers=workers, configs=configs,
                                     data_path=data_path)
    diffs = [d for r in rows for d in r["deltas"]]
    mean = sum(diffs) / len(diffs)
    parts = [f"{r['dataset']}/{r['partition']} {r['delta_mean']:+.4f} ± {r['delta_std']:.4f} "
             f"({r['seeds']} seeds)" for r in rows]
    return [accuracy_row("RingTMP is slightly less accurate than the parameter server",
                         "RingTMP poster (project brief)",
                         f"{len(rows)} MLP configuration(s), P = {rows[0]['workers']}",
                         "accuracy RingTMP - PS: " + "; ".join(parts),
                         "mean accuracy RingTMP - PS < 0", diffs, mean < 0,
                         time.perf_counter() - t0, testable_on)]
