"""The range of every paradigm option, checked in one place.

A paradigm's ``run`` checks its options when it starts; ``netsim record``/``scale``
``--set KEY=VALUE`` and a sweep config's ``options:`` check the same values with the
same function (:func:`check_option`) before any work, so a bad value gets one
message wherever it is given. Ranges that depend on the model (``servers`` at most
the parameter count, :func:`workloads.paradigms.ps.shard_bounds`) are checked again by the
paradigm once the model is known.

Momentum is the heavy-ball coefficient of ``v <- momentum v + g; w <- w - lr v``
(Polyak 1964): on a quadratic the iteration is stable only for ``0 <= momentum < 1``
(and ``0 < lr lambda < 2 (1 + momentum)`` for every curvature ``lambda``), so a
momentum >= 1 makes the velocity grow without bound whatever the step size
(B. T. Polyak, "Some methods of speeding up the convergence of iteration methods",
USSR Comput. Math. Math. Phys. 4(5), 1964; Goh, "Why Momentum Really
Works", Distill 2017, section "The dynamics of momentum": convergence needs
``0 <= beta < 1``).

Some options count something of the run itself (epochs, samples, steps), and a value
past the run's own count does nothing that a smaller one would not: a warm-up longer
than the run, a batch larger than the training set, a period of more steps than the
run has. :data:`RUN_BOUNDS` lists them with the reason and :func:`check_run_bounds`
refuses them, with the run's count in the message: the epoch bounds before any work
(``--set``, ``record``, a sweep config: the epochs are known there), the sample and
step bounds by the paradigm once the data is loaded, before the first step.
"""

from netsim import checks

from workloads.errors import WorkloadError

__all__ = ["RANGES", "MAPPINGS", "NEEDS", "check_needs", "CHOICES", "RUN_BOUNDS", "check_option", "check_options", "check_run_bounds"]

_INT, _REAL = "int", "real"

RANGES = {
    # option: (kind, bounds): int -> (minimum,), real -> check_real's (lo, hi, strict)
    "epochs": (_INT, (1,)),
    "batch_size": (_INT, (1,)),
    "servers": (_INT, (1,)),
    "segments": (_INT, (1,)),
    "period": (_INT, (1,)),
    "local_steps": (_INT, (1,)),
    "n_fetch": (_INT, (1,)),
    "n_push": (_INT, (1,)),
    "microbatches": (_INT, (1,)),
    "q": (_INT, (1,)),
    "ssp": (_INT, (0,)),
    "warmup_epochs": (_INT, (0,)),
    "lr_warmup_epochs": (_INT, (0,)),
    "seed": (_INT, (0,)),
    "lr": (_REAL, (0, None, True)),
    "momentum": (_REAL, (0, 1, (False, True))),
    "rho": (_REAL, (0, None, True)),
    "a": (_REAL, (0, None, True)),
    "tau0": (_REAL, (0, None, False)),
    "lam": (_REAL, (0, None, False)),
    "alpha": (_REAL, (0, 1, (True, False))),
    "beta": (_REAL, (0, 1, False)),
    "final_sparsity": (_REAL, (0, 1, (False, True))),
    "clip_norm": (_REAL, (0, None, True)),
    "bucket_bytes": (_REAL, (0, None, True)),
    "partition_bytes": (_REAL, (0, None, True)),
    "device_flops": (_REAL, (0, None, True)),
}
"""Option name -> its kind and bounds (an option not listed here has no numeric range)."""


MAPPINGS = {"dataset_options": "dataset options (e.g. {'locality': 0.99} for sparse)"}
"""Option name -> what its mapping holds: a dict, which ``--set KEY=VALUE`` cannot give."""


NEEDS = {
    "bucket_bytes": ("overlap", ("bucketed",)),
    "segments": ("collective", ("lp",)),
}
"""Option name -> (another option, the values of it with which the option does anything): the
bucket size sizes only DDP's buckets, the segments only the pipelined (LP) allreduce."""


def check_needs(options, defaults):
    """Refuse an option of :data:`NEEDS` given while the option it needs has another value.

    Parameters
    ----------
    options : dict
        The options given (name -> value).
    defaults : dict
        The paradigm's defaults, for an option it needs that is not given.

    Returns
    -------
    dict
        The same options.

    Raises
    ------
    WorkloadError
        Naming both options and the value that leaves the first unused.

    Examples
    --------
    >>> check_needs({"bucket_bytes": 1e6, "overlap": "bucketed"}, {"overlap": "none"})
    {'bucket_bytes': 1000000.0, 'overlap': 'bucketed'}
    >>> check_needs({"segments": 8}, {"collective": "ring"})
    Traceback (most recent call last):
    ...
    workloads.errors.WorkloadError: segments applies with collective=lp, not collective='ring' (the default): it would change nothing
    """
    for key, (other, values) in NEEDS.items():
        if key not in options or other not in {**defaults, **options}:
            continue
        value = options.get(other, defaults.get(other))
        if value not in values:
            where = "" if other in options else " (the default)"
            raise WorkloadError(f"{key} applies with {other}={'/'.join(values)}, not "
                                f"{other}={value!r}{where}: it would change nothing")
    return options


CHOICES = {
    ("allreduce", "collective"): ("allreduce", "COLLECTIVES"),
    ("ringtmp", "partition"): ("ringtmp", "PARTITIONS"),
    ("ps-partitioned", "partition"): ("ps_partitioned", "PARTITIONS"),
}
"""(paradigm, option) -> the module and the name of its tuple of the values the option takes."""


RUN_BOUNDS = {
    # option: (the run's count bounding it, subtracted from that count, why)
    "warmup_epochs": ("epochs", 0, "the warm-up is counted in epochs of the run: a longer one "
                      "never reaches its final sparsity (Lin et al., DGC, ICLR 2018, sec. 3.3)"),
    "lr_warmup_epochs": ("epochs", 0, "the learning-rate warm-up is counted in epochs of the "
                         "run: a longer one never reaches the full rate"),
    "batch_size": ("samples", 0, "a mini-batch is drawn from the training samples: a larger "
                   "one is the whole training set, as batch_size = samples is"),
    "period": ("steps", 0, "the models are averaged every period steps and after the last "
               "one: a longer period averages only at the end, as period = steps does"),
    "n_fetch": ("steps", 0, "a longer interval fetches only at the start, as n_fetch = steps "
                "does"),
    "n_push": ("steps", 0, "a longer interval pushes only after the last step, as n_push = "
               "steps does"),
    "local_steps": ("steps", 0, "a round of more local steps than the run has is the whole "
                    "run, as local_steps = steps is"),
    "q": ("steps", 0, "the core is refreshed every q rounds from round 0: a longer interval "
          "refreshes once, as q = steps does"),
    "ssp": ("steps", 1, "a staleness bound of the run's steps or more never makes a worker "
            "wait: that is fully asynchronous, which giving no ssp says"),
}
"""Option name -> (the count of the run it is at most: ``epochs``, training ``samples`` or a
worker's ``steps`` over the whole run; how much less than that count; why)."""


def check_run_bounds(options, **counts):
    """Refuse options of :data:`RUN_BOUNDS` past the count of the run they are bounded by.

    Parameters
    ----------
    options : dict
        Option name -> value (None or an option without a run bound passes).
    **counts : int
        The run's counts known so far: ``epochs``, ``samples`` (training samples),
        ``steps`` (a worker's steps over the whole run); a bound whose count is not
        given is not checked.

    Returns
    -------
    dict
        The same options.

    Raises
    ------
    WorkloadError
        Naming the option, its value, the run's count and the reason.

    Examples
    --------
    >>> check_run_bounds({"warmup_epochs": 4, "period": 100}, epochs=30)
    {'warmup_epochs': 4, 'period': 100}
    >>> check_run_bounds({"warmup_epochs": 40}, epochs=30)
    Traceback (most recent call last):
    ...
    workloads.errors.WorkloadError: warmup_epochs must be at most epochs = 30 of this run, got 40: the warm-up is counted in epochs of the run: a longer one never reaches its final sparsity (Lin et al., DGC, ICLR 2018, sec. 3.3)
    >>> check_run_bounds({"ssp": 60}, steps=60)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    workloads.errors.WorkloadError: ssp must be at most steps - 1 = 59 of this run, got 60: ...
    """
    for key, value in options.items():
        if value is None or key not in RUN_BOUNDS or RUN_BOUNDS[key][0] not in counts:
            continue
        count, less, why = RUN_BOUNDS[key]
        limit = counts[count] - less
        if isinstance(value, (int, float)) and not isinstance(value, bool) and value > limit:
            what = f"{count} - {less}" if less else count
            raise WorkloadError(f"{key} must be at most {what} = {limit} of this run, got "
                                f"{value}: {why}")
    return options


def check_option(key, value, paradigm=None):
    """``value`` of paradigm option ``key`` checked against :data:`RANGES`.

    Parameters
    ----------
    key : str
    value : object
        None passes (the option's default: not set).
    paradigm : str, optional
        The paradigm whose option it is: a text option of :data:`CHOICES` is checked
        against the values its module lists.

    Returns
    -------
    object
        The value (an int or float for a ranged option), unchanged for an option without a range.

    Raises
    ------
    WorkloadError
        Saying the option, its range and the value.

    Examples
    --------
    >>> check_option("servers", 2), check_option("momentum", 0.9), check_option("overlap", "none")
    (2, 0.9, 'none')
    >>> check_option("momentum", 2)
    Traceback (most recent call last):
    ...
    workloads.errors.WorkloadError: momentum must be a number in [0, 1), got 2
    >>> check_option("collective", "tree", "allreduce")
    Traceback (most recent call last):
    ...
    workloads.errors.WorkloadError: unknown collective 'tree'; known collectives: ring, mst, be, lp
    >>> check_option("dataset_options", 5)
    Traceback (most recent call last):
    ...
    workloads.errors.WorkloadError: dataset_options must be a mapping of dataset options (e.g. {'locality': 0.99} for sparse), got 5; give it from Python (workloads.record(..., dataset_options={...}))
    >>> check_option("servers", 0)
    Traceback (most recent call last):
    ...
    workloads.errors.WorkloadError: servers must be an integer >= 1, got 0
    """
    if paradigm is not None and (paradigm, key) in CHOICES:
        import importlib

        module, name = CHOICES[(paradigm, key)]
        known = getattr(importlib.import_module(f"workloads.paradigms.{module}"), name)
        if value not in known:
            raise WorkloadError(f"unknown {key} {value!r}; known {key}s: {', '.join(known)}")
        return value
    if key in MAPPINGS and value is not None and not isinstance(value, dict):
        raise WorkloadError(f"{key} must be a mapping of {MAPPINGS[key]}, got {value!r}; give "
                            f"it from Python (workloads.record(..., {key}={{...}}))")
    if value is None or key not in RANGES:
        return value
    kind, bounds = RANGES[key]
    if kind == _INT:
        return checks.check_int(value, key, bounds[0], error=WorkloadError)
    lo, hi, strict = bounds
    return checks.check_real(value, key, lo, hi, strict=strict, error=WorkloadError)


def check_options(options, paradigm=None):
    """Every value of ``options`` (name -> value) of ``paradigm`` checked by :func:`check_option`.

    Returns
    -------
    dict
        The same options.

    Examples
    --------
    >>> check_options({"lr": 0.1, "segments": 4})
    {'lr': 0.1, 'segments': 4}
    >>> check_options({"lr": float("nan")})
    Traceback (most recent call last):
    ...
    workloads.errors.WorkloadError: lr must be a finite number > 0, got nan
    """
    for key, value in options.items():
        check_option(key, value, paradigm)
    return options
