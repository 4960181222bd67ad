"""The range of every paradigm option, checked in one place.

A paradigm's ``run`` checks its options when it starts; ``netsim record``/``scale``
``--set KEY=VALUE`` and a sweep config's ``options:`` check the same values with the
same function (:func:`check_option`) before any work, so a bad value gets one
message wherever it is given. Ranges that depend on the model (``servers`` at most
the parameter count, :func:`workloads.ps.shard_bounds`) are checked again by the
paradigm once the model is known.

Momentum is the heavy-ball coefficient of ``v <- momentum v + g; w <- w - lr v``
(Polyak 1964): on a quadratic the iteration is stable only for ``0 <= momentum < 1``
(and ``0 < lr lambda < 2 (1 + momentum)`` for every curvature ``lambda``), so a
momentum >= 1 makes the velocity grow without bound whatever the step size
(B. T. Polyak, "Some methods of speeding up the convergence of iteration methods",
USSR Comput. Math. Math. Phys. 4(5), 1964; Goh, "Why Momentum Really
Works", Distill 2017, section "The dynamics of momentum": convergence needs
``0 <= beta < 1``).
"""

from netsim import checks

from .errors import WorkloadError

__all__ = ["RANGES", "CHOICES", "check_option", "check_options"]

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


CHOICES = {
    ("allreduce", "collective"): ("allreduce", "COLLECTIVES"),
    ("ringtmp", "partition"): ("ringtmp", "PARTITIONS"),
    ("ps-partitioned", "partition"): ("ps_partitioned", "PARTITIONS"),
}
"""(paradigm, option) -> the module and the name of its tuple of the values the option takes."""


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
    >>> check_option("servers", 0)
    Traceback (most recent call last):
    ...
    workloads.errors.WorkloadError: servers must be an integer >= 1, got 0
    """
    if paradigm is not None and (paradigm, key) in CHOICES:
        import importlib

        module, name = CHOICES[(paradigm, key)]
        known = getattr(importlib.import_module(f"workloads.{module}"), name)
        if value not in known:
            raise WorkloadError(f"unknown {key} {value!r}; known {key}s: {', '.join(known)}")
        return value
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
