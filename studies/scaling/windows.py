"""The window of a run a scaling study measures, chosen from the paradigm's declared phases.

Time per iteration is a mean over a window of the run, and the window decides
the answer when iterations differ: DGC's warm-up epochs send 250 times the
steady state's values, model averaging sends every H-th step, PF's filter lets
almost nothing through in its first steps. Each paradigm declares its phases
(:mod:`workloads.plan.phases`); :func:`plan_windows` turns the declaration into the
windows a study simulates:

* **steady state** (a paradigm whose iterations are *alike*, e.g. DGC, model
  averaging, ps-sync): the window starts where the warm-up ends, rounded up to
  a whole period, and holds whole periods: :data:`STEADY_ITERATIONS` iterations
  rounded up to whole periods unless told. A warm-up is simulated apart, a few
  iterations at the start of each of its stages, each stage weighted by its
  length, and reported as the ``warm-up`` phase.
* **the whole recorded run** (a paradigm that replays its recording's
  per-iteration traffic, e.g. PF, Slim-DP: no steady state): the window is the
  run from its first iteration, one recorded epoch in whole periods unless
  told; a declared warm-up and the rest of the run are reported apart, and so
  are each whole recorded epoch (when the window holds two or more) and the
  two halves of the window after its warm-up, whose figures give the run's
  trend per epoch (:func:`trend`). A window that lies within the warm-up is
  the transient alone, and is warned about.

A window that does not hold whole periods (``iterations`` not a multiple of
the period) is kept as asked, with a warning: the cut period's iterations
count as a whole period (a schedule's last iteration ends its run: model
averaging averages after it), so its figures are not the run's.

Examples
--------
>>> from workloads.plan.phases import Phases
>>> plan = plan_windows(Phases(warmup=180, stages=(0, 45, 90, 135)))
>>> plan["window"]["start"], plan["window"]["stop"], [p["phase"] for p in plan["phases"]]
(180, 183, ['warm-up', 'steady'])
"""

import math

from netsim.checks import check_int
from workloads.errors import WorkloadError

__all__ = ["STEADY_ITERATIONS", "plan_windows", "sampled_windows", "combine", "describe", "trend"]

#: Iterations of a steady-state window unless told (rounded up to whole periods): a few,
#: so that iterations overlapping their neighbours (pipelines, asynchronous workers)
#: are measured among others; alike iterations give the same figure over any number.
STEADY_ITERATIONS = 3


def plan_windows(phases, iterations=None, recorded=None):
    """The windows a study simulates for a paradigm's declared phases.

    Parameters
    ----------
    phases : workloads.plan.phases.Phases
        The paradigm's declaration (its module's ``phases(recording)``).
    iterations : int, optional
        Iterations of the window (the steady state's, or the whole run's); default:
        see the module docstring.
    recorded : int, optional
        Iterations of one recorded epoch (the default run of a paradigm that is not
        alike); 1 if None.

    Returns
    -------
    dict
        ``window``: the window of the headline figures, ``start``, ``stop``,
        ``iterations``, ``phase`` (``"steady"`` or ``"run"``), ``period``,
        ``cuts_period`` (bool) and ``what`` (a sentence); ``phases``: the phases
        reported apart when there is a warm-up (else empty), each ``phase``,
        ``start``, ``stop`` and ``samples`` (``[start, iterations, weight]`` of
        each simulated window); ``warnings``: sentences.

    Raises
    ------
    WorkloadError
        For ``iterations`` that is not an integer >= 1.

    Examples
    --------
    Model averaging every H = 4 steps: one whole period, or a warning.

    >>> from workloads.plan.phases import Phases
    >>> ma = Phases(period=4, what="averaging every H = 4 steps")
    >>> w = plan_windows(ma)["window"]
    >>> w["start"], w["stop"], w["cuts_period"]
    (0, 4, False)
    >>> print(plan_windows(ma, iterations=3)["warnings"][0])  # doctest: +NORMALIZE_WHITESPACE
    the window of 3 iterations cuts the period of 4 iterations (averaging every H = 4 steps):
    its last 3 iterations count as a whole period, so its figures are not the run's;
    give a multiple of 4

    PF: the whole recorded run, its settling apart, and the halves after it, whose
    figures give the trend per epoch; 90 iterations hold two recorded epochs, each
    reported too.

    >>> pf = Phases(warmup=10, alike=False, what="filter settling")
    >>> plan = plan_windows(pf, recorded=45)
    >>> plan["window"]["stop"], [(p["phase"], p["start"], p["stop"]) for p in plan["phases"]]
    ... # doctest: +NORMALIZE_WHITESPACE
    (45, [('warm-up', 0, 10), ('after warm-up', 10, 45), ('1st half', 10, 27),
          ('2nd half', 27, 45)])
    >>> [p["phase"] for p in plan_windows(pf, 90, recorded=45)["phases"]][2:4]
    ['epoch 1', 'epoch 2']

    Three iterations of PF are its filter settling alone:

    >>> print(plan_windows(pf, 3, recorded=45)["warnings"][0])
    ... # doctest: +ELLIPSIS, +NORMALIZE_WHITESPACE
    the window of 3 iterations lies within the warm-up of 10 iterations (filter settling): its
    figure is the transient alone, not the run's; ...
    """
    period = max(1, int(phases.period))
    if iterations is not None:
        iterations = check_int(iterations, "iterations", error=WorkloadError)
    if phases.alike:
        start, label = phases.steady_start, "steady"
        n = iterations or period * math.ceil(STEADY_ITERATIONS / period)
    else:
        start, label = 0, "run"
        n = iterations or max(period, (int(recorded or 1) // period) * period)
    cuts = n % period != 0
    window = {"start": start, "stop": start + n, "iterations": n, "phase": label,
              "period": period, "cuts_period": cuts}
    window["what"] = describe(window, phases)
    warnings = []
    if cuts:
        warnings.append(f"the window of {n} iterations cuts the period of {period} iterations"
                        + (f" ({phases.what})" if phases.what else "")
                        + f": its last {n % period} iterations count as a whole period, so its "
                        f"figures are not the run's; give a multiple of {period}")
    if not phases.alike and 0 < phases.warmup and n <= phases.warmup:
        warnings.append(f"the window of {n} iterations lies within the warm-up of "
                        f"{phases.warmup} iterations ({phases.what or 'the run settling'}): its "
                        "figure is the transient alone, not the run's; give --iterations above "
                        f"{phases.warmup} (the default, one recorded epoch, holds it and the run "
                        "after it)")
    out = []
    if phases.warmup > 0 and phases.alike:
        out.append({"phase": "warm-up", "start": 0, "stop": phases.warmup,
                    "samples": [[a, min(b - a, n), b - a] for a, b in phases.stage_bounds()]})
        out.append({"phase": "steady", "start": start, "stop": start + n,
                    "samples": [[start, n, n]]})
    elif phases.warmup > 0:
        w = min(phases.warmup, n)
        out.append({"phase": "warm-up", "start": 0, "stop": w, "samples": [[0, w, w]]})
        if w < n:
            out.append({"phase": "after warm-up", "start": w, "stop": n,
                        "samples": [[w, n - w, n - w]]})
    if not phases.alike:
        drift = _drift(min(phases.warmup, n), n, int(recorded or 0), period)
        out += drift["phases"]
        window["trend"] = drift["trend"]
    return {"window": window, "phases": out, "warnings": warnings}


def _drift(settled, stop, epoch, period):
    """The phases that show how a run without a steady state drifts: each whole recorded
    epoch when the window holds two or more, and the two halves (in whole periods) of the
    window after its warm-up, whose figures give the trend per epoch (``trend``: ``from``,
    ``to``, ``distance`` (iterations between the halves' middles) and ``epoch``
    (iterations of a recorded epoch), or None when the window is too short to halve)."""
    out = []
    if epoch and stop >= 2 * epoch:
        out += [{"phase": f"epoch {k + 1}", "start": k * epoch, "stop": (k + 1) * epoch,
                 "samples": [[k * epoch, epoch, epoch]]} for k in range(stop // epoch)]
    half = (stop - settled) // 2 // period * period
    if half < 1 or not epoch:
        return {"phases": out, "trend": None}
    mid = settled + half
    out += [{"phase": "1st half", "start": settled, "stop": mid,
             "samples": [[settled, half, half]]},
            {"phase": "2nd half", "start": mid, "stop": stop,
             "samples": [[mid, stop - mid, stop - mid]]}]
    return {"phases": out, "trend": {"from": "1st half", "to": "2nd half",
                                     "distance": (stop - settled) / 2, "epoch": epoch}}


def trend(phases, window):
    """The relative change of time per iteration per recorded epoch, from the halves of a
    window after its warm-up (:func:`plan_windows`), or None.

    Parameters
    ----------
    phases : list of dict
        A study record's ``phases`` (``phase``, ``time``).
    window : dict
        The plan's ``window`` (its ``trend``).

    Examples
    --------
    Halves 20 iterations apart, an epoch of 40: 10 % less per half, 20 % per epoch.

    >>> w = {"trend": {"from": "1st half", "to": "2nd half", "distance": 20, "epoch": 40}}
    >>> round(trend([{"phase": "1st half", "time": 1.0}, {"phase": "2nd half", "time": 0.9}], w), 6)
    -0.2
    """
    t = window.get("trend")
    if not t:
        return None
    by = {p["phase"]: p["time"] for p in phases}
    a, b = by.get(t["from"]), by.get(t["to"])
    if not a or b is None:
        return None
    return (b / a - 1.0) * t["epoch"] / t["distance"]


def sampled_windows(plan):
    """Every ``(start, iterations)`` a plan simulates, the headline window first, once each.

    Examples
    --------
    >>> from workloads.plan.phases import Phases
    >>> sampled_windows(plan_windows(Phases(warmup=8, stages=(0, 4))))
    [(8, 3), (0, 3), (4, 3)]
    """
    w = plan["window"]
    out = [(w["start"], w["iterations"])]
    for p in plan["phases"]:
        for start, n, _ in p["samples"]:
            if (start, n) not in out:
                out.append((start, n))
    return out


def combine(samples, figures, keys):
    """The weighted mean of per-window figures: a phase's figures from its samples.

    Parameters
    ----------
    samples : list of [start, iterations, weight]
        A phase's samples (:func:`plan_windows`).
    figures : dict
        ``(start, iterations)`` -> a dict of per-iteration figures.
    keys : sequence of str
        The figures to combine; one that is None in any sample is None.

    Examples
    --------
    Two warm-up stages of 45 iterations, 3 of each simulated:

    >>> figs = {(0, 3): {"time": 2.0}, (45, 3): {"time": 1.0}}
    >>> combine([[0, 3, 45], [45, 3, 45]], figs, ["time"])
    {'time': 1.5}
    """
    total = sum(w for _, _, w in samples)
    out = {}
    for k in keys:
        vals = [figures[(s, n)][k] for s, n, _ in samples]
        out[k] = (None if any(v is None for v in vals)
                  else sum(v * w for v, (_, _, w) in zip(vals, samples)) / total)
    return out


def describe(window, phases):
    """The window in a sentence, for reports and the closed form's note.

    Examples
    --------
    >>> from workloads.plan.phases import Phases
    >>> ph = Phases(period=4, what="averaging every H = 4 steps")
    >>> describe(plan_windows(ph)["window"], ph)
    'iterations 0-3, the steady state: 1 whole period of 4 (averaging every H = 4 steps)'
    """
    a, b, period = window["start"], window["stop"], window["period"]
    span = f"iterations {a}-{b - 1}" if b - a > 1 else f"iteration {a}"
    if window["phase"] == "steady":
        text = f"{span}, the steady state"
        if phases.warmup > 0:
            text += f" after the warm-up ({phases.what})"
        elif period > 1:
            k = window["iterations"] / period
            text += (f": {k:g} whole period{'s' * (k != 1)} of {period}" if not window["cuts_period"]
                     else f": {k:.2f} periods of {period}, the last cut")
            text += f" ({phases.what})" if phases.what else ""
        return text
    return f"{span}, the whole recorded run" + (f" ({phases.what})" if phases.what else "")
