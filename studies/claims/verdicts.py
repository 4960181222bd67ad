"""Verdicts over seeds: each claim's value as mean and spread, and whether it holds in k of N.

One seed's verdict can flip with the seed (Parameter Flow's traffic cut sits on
its 4.1x threshold), so :func:`studies.claims.reproduce.run_claim_seeds` runs every claim
at each seed and :func:`over_seeds` folds the runs into one row per claim:

``PASS``
    The claim holds at every seed.
``by construction``
    It holds at every seed, each time by construction (the number follows
    from the setup alone).
``marginal``
    It holds at some seeds and not at others: its values straddle the
    threshold. Never a PASS or a FAIL.
``FAIL``
    It holds at no seed.
``not testable on this data``
    An accuracy half of a claim (a row with ``differences``: the accuracy
    difference the claim is about, one per run) whose mean difference lies
    within the run-to-run spread of the differences over the seeds
    (:func:`within_spread`): the bundled data cannot show it either way. The
    row's ``testable_on`` says which data would, and how to run it there.

A claim whose number takes no seed (LP's schedules, RingTMP's byte ratio) ran
once; its one verdict is the same at every seed. With one seed every row is the
run's own row, and :func:`format_claims_over_seeds` prints today's table
(:func:`studies.reports.text.format_claims`).

Examples
--------
>>> row = {"claim": "c", "source": "s", "setup": "x", "measured": "m", "threshold": ">= 4.1x",
...        "value": 4.2, "passed": True, "seconds": 1.0, "verdict": "PASS", "region": "",
...        "seed": 0}
>>> runs = {0: [row], 3: [dict(row, value=3.8, passed=False, verdict="FAIL", seed=3)]}
>>> [(r["verdict"], r["holds"], r["n"], r["low"], r["high"]) for r in over_seeds(runs)]
[('marginal', 1, 2, 3.8, 4.2)]
"""

import statistics

from netsim.errors import NetsimError

from studies.reports.text import format_claims, region_summary, table

__all__ = ["claim_row", "VERDICTS", "NOT_TESTABLE", "within_spread", "over_seeds", "count_verdicts", "format_counts", "seeds_label",
           "format_claims_over_seeds"]


def claim_row(claim, source, setup, measured, threshold, value, passed, seconds,
              construction=False, seed=None):
    """One run's row of a claim, the record :func:`over_seeds` folds.

    Parameters
    ----------
    claim, source, setup, measured, threshold : str
        What is claimed, by whom, in which setting, what was measured and what must hold.
    value : float
        The measured number.
    passed : bool
        Whether the threshold holds.
    seconds : float
        Wall time of the run.
    construction : bool, optional
        The number follows from the setup alone (no run): the verdict ``by construction``.
    seed : int, optional
        The run's seed (None: the claim takes none).

    Examples
    --------
    >>> claim_row("c", "s", "x", "m", ">= 1", 2, True, 0.5)["verdict"]
    'PASS'
    >>> claim_row("c", "s", "x", "m", ">= 1", 2, True, 0.5, construction=True)["verdict"]
    'by construction'
    """
    verdict = "by construction" if construction and passed else ("PASS" if passed else "FAIL")
    return {"claim": claim, "source": source, "setup": setup, "measured": measured,
            "threshold": threshold, "value": float(value), "passed": bool(passed),
            "seconds": float(seconds), "verdict": verdict, "region": "", "seed": seed}

NOT_TESTABLE = "not testable on this data"
"""The verdict of an accuracy difference within its seeds' spread (:func:`within_spread`)."""

VERDICTS = ("PASS", "by construction", "marginal", "FAIL", NOT_TESTABLE)
"""The verdicts of a claim over seeds, in the order the footer counts them."""


def within_spread(differences):
    """Whether an accuracy difference is within its run-to-run spread over seeds.

    The rule of :data:`NOT_TESTABLE`: the runs of each seed are paired (the
    same initial weights and mini-batches), so the difference of each pair is
    the claim's effect plus that seed's noise. With ``mean`` the mean of the
    differences and ``spread`` their sample standard deviation over the runs
    (ddof = 1), the data cannot show the claim when ``|mean| <= spread``: a
    difference no larger than what one seed to the next moves it by is no
    evidence either way (a difference of exactly 0 at every seed included).
    One run has no spread: its usual verdict stands.

    Parameters
    ----------
    differences : sequence of float
        The accuracy difference of each run (each seed, or each of a claim's own
        repetitions).

    Returns
    -------
    dict or None
        ``mean``, ``spread``, ``n`` and ``within`` (True: not testable on this
        data); None for fewer than two runs.

    Examples
    --------
    >>> r = within_spread([-0.0056, 0.0028, 0.0028, 0.0084, -0.0028])
    >>> round(r["mean"], 4), round(r["spread"], 4), r["within"]
    (0.0011, 0.0055, True)
    >>> within_spread([0.02, 0.03, 0.025])["within"], within_spread([0.01]) is None
    (False, True)
    """
    d = [float(x) for x in differences]
    if len(d) < 2:
        return None
    mean, spread = statistics.fmean(d), statistics.stdev(d)
    return {"mean": mean, "spread": spread, "n": len(d), "within": abs(mean) <= spread}


def over_seeds(runs):
    """Fold each claim's rows at every seed into one row: mean, spread and k of N.

    Parameters
    ----------
    runs : dict
        Seed -> the rows of that seed, the same claims in the same order
        (:func:`studies.claims.reproduce.run_claim_seeds`). A row whose ``seed`` is None
        (its number takes no seed) is taken once.

    Returns
    -------
    list of dict
        One row per claim: the first seed's row (its ``measured`` text, its
        ``region``) with ``value`` the mean over the runs, ``low`` and
        ``high`` their least and greatest, ``n`` the seeds (N), ``holds`` the
        seeds at which the claim holds (k), ``passed`` whether k = N,
        ``verdict`` one of :data:`VERDICTS`, ``seconds`` the runs' total, and
        ``per_seed``: ``seed``, ``value``, ``passed``, ``verdict``,
        ``measured`` and ``seconds`` of each run (one run for a claim that takes
        no seed). A row with ``differences`` (an accuracy half) gets them
        pooled over its runs, ``spread`` (:func:`within_spread`, or None), and
        the verdict :data:`NOT_TESTABLE` when they are within their spread.

    Raises
    ------
    netsim.errors.NetsimError
        For no runs, or seeds whose rows are not the same claims.

    Examples
    --------
    >>> row = {"claim": "c", "value": 2.0, "passed": True, "verdict": "by construction",
    ...        "measured": "m", "seconds": 0.5, "seed": None}
    >>> r = over_seeds({0: [row], 1: [row], 2: [row]})[0]
    >>> r["verdict"], r["holds"], r["n"], len(r["per_seed"])
    ('by construction', 3, 3, 1)
    """
    if not runs:
        raise NetsimError("no runs to fold: give at least one seed")
    seeds = list(runs)
    first = runs[seeds[0]]
    for seed in seeds[1:]:
        if [r["claim"] for r in runs[seed]] != [r["claim"] for r in first]:
            raise NetsimError(f"seed {seed} has other claims than seed {seeds[0]}")
    out = []
    for i, head in enumerate(first):
        seed_free = head["seed"] is None
        rows = [head] if seed_free else [runs[s][i] for s in seeds]
        values = [r["value"] for r in rows]
        holds = len(seeds) * head["passed"] if seed_free else sum(r["passed"] for r in rows)
        if holds == len(seeds):
            built = all(r["verdict"] == "by construction" for r in rows)
            verdict = "by construction" if built else "PASS"
        else:
            verdict = "FAIL" if holds == 0 else "marginal"
        extra = {}
        if head.get("differences") is not None:
            diffs = [float(d) for r in rows for d in r["differences"]]
            spread = within_spread(diffs)
            extra = {"differences": diffs, "spread": spread}
            if spread is not None and spread["within"]:
                verdict = NOT_TESTABLE
        per_seed = [{k: r[k] for k in ("seed", "value", "passed", "verdict", "measured",
                                       "seconds")} for r in rows]
        out.append({**head, "value": statistics.fmean(values), "low": min(values),
                    "high": max(values), "n": len(seeds), "holds": holds,
                    "passed": holds == len(seeds), "verdict": verdict,
                    "seconds": sum(r["seconds"] for r in rows), "per_seed": per_seed, **extra})
    return out


def count_verdicts(rows):
    """How many rows have each verdict of :data:`VERDICTS` (every one, 0 if none).

    Parameters
    ----------
    rows : list of dict
        Rows with a ``verdict`` (:func:`over_seeds`, or one seed's rows).

    Returns
    -------
    dict
        Verdict -> count, in the order of :data:`VERDICTS`.

    Raises
    ------
    netsim.errors.NetsimError
        For a verdict not in :data:`VERDICTS`.

    Examples
    --------
    >>> count_verdicts([{"verdict": "PASS"}, {"verdict": "by construction"},
    ...                 {"verdict": "FAIL"}, {"verdict": "FAIL"}])
    {'PASS': 1, 'by construction': 1, 'marginal': 0, 'FAIL': 2, 'not testable on this data': 0}
    """
    counts = dict.fromkeys(VERDICTS, 0)
    for r in rows:
        if r["verdict"] not in counts:
            raise NetsimError(f"claim {r.get('claim', '?')!r} has verdict {r['verdict']!r}, "
                              f"not one of {', '.join(VERDICTS)}")
        counts[r["verdict"]] += 1
    return counts


def format_counts(rows):
    """The footer's counts: ``3 PASS, 3 by construction, 0 marginal, 6 FAIL, 0 not testable ...``.

    Parameters
    ----------
    rows : list of dict
        Rows with a ``verdict``.

    Examples
    --------
    >>> format_counts([{"verdict": "marginal"}, {"verdict": "PASS"}])
    '1 PASS, 0 by construction, 1 marginal, 0 FAIL, 0 not testable on this data'
    """
    return ", ".join(f"{n} {v}" for v, n in count_verdicts(rows).items())


def seeds_label(seeds):
    """Seeds in a few characters: ``0..4`` for consecutive ones, else ``0, 3, 7``.

    Parameters
    ----------
    seeds : sequence of int

    Examples
    --------
    >>> seeds_label([0, 1, 2, 3, 4]), seeds_label([0, 3, 7]), seeds_label([5])
    ('0..4', '0, 3, 7', '5')
    """
    seeds = list(seeds)
    if len(seeds) > 2 and seeds == list(range(seeds[0], seeds[-1] + 1)):
        return f"{seeds[0]}..{seeds[-1]}"
    return ", ".join(map(str, seeds))


def _spread(r):
    """The value over seeds: mean and least..greatest of N, or the one run's value."""
    if r["per_seed"][0]["seed"] is None:
        return f"{r['value']:.3g} (one run: takes no seed)"
    if r["low"] == r["high"]:
        return f"{r['value']:.3g} at each of {r['n']} seeds"
    return f"mean {r['value']:.3g}, {r['low']:.3g}..{r['high']:.3g} (N = {r['n']})"


def _result(r):
    """The verdict with the seeds at which the claim holds; why a claim is not testable."""
    verdict = r["verdict"]
    if verdict == NOT_TESTABLE:
        s = r["spread"]
        verdict += (f" (difference {s['mean']:+.3g} within the spread {s['spread']:.3g} of "
                    f"{s['n']} runs; {r.get('testable_on', '')})")
    if r["per_seed"][0]["seed"] is None:   # one run: no seeds to count it over
        return f"{verdict}: one run (takes no seed)"
    return f"{verdict}: holds in {r['holds']} of {r['n']} seeds"


def _where(r):
    """Where the claim holds; a trained region names its seed."""
    reg = r.get("region")
    seed = reg.get("seed") if isinstance(reg, dict) else None
    return region_summary(reg) + ("" if seed is None else f" (seed {seed})")


def format_claims_over_seeds(rows, seeds, markdown=False):
    """The claims over seeds as a table: value over seeds, where it holds, holds in k of N.

    With one seed, the table of :func:`studies.reports.text.format_claims` (one
    verdict per row, as one run gives it).

    Parameters
    ----------
    rows : list of dict
        Rows of :func:`over_seeds`.
    seeds : sequence of int
        The seeds of the runs (their first names the ``measured`` column).
    markdown : bool
        A Markdown table instead of plain text.

    Examples
    --------
    >>> row = {"claim": "c", "source": "s", "setup": "x", "measured": "m",
    ...        "threshold": ">= 4.1x", "value": 4.2, "passed": True, "seconds": 1.0,
    ...        "verdict": "PASS", "region": "", "seed": 0}
    >>> runs = {0: [row], 1: [dict(row, value=3.8, passed=False, verdict="FAIL", seed=1)]}
    >>> print(format_claims_over_seeds(over_seeds(runs), [0, 1], markdown=True))
    | claim | source | setup | measured (seed 0) | threshold | value over seeds 0, 1 | where it holds | result |
    |---|---|---|---|---|---|---|---|
    | c | s | x | m | >= 4.1x | mean 4, 3.8..4.2 (N = 2) | - | marginal: holds in 1 of 2 seeds |
    """
    seeds = list(seeds)
    if len(seeds) == 1:
        return format_claims(rows, markdown=markdown)
    head = ["claim", "source", "setup", f"measured (seed {seeds[0]})", "threshold",
            f"value over seeds {seeds_label(seeds)}", "where it holds", "result"]
    cells = [[r["claim"], r["source"], r["setup"], r["measured"], r["threshold"], _spread(r),
              _where(r), _result(r)] for r in rows]
    if markdown:
        lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
        lines += ["| " + " | ".join(c) + " |" for c in cells]
        return "\n".join(lines)
    return table([h for h in head if h != "setup"], [c[:2] + c[3:] for c in cells])
