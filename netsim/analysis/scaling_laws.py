"""Scaling laws by term: split a time T(P) into its alpha-beta terms and give each its law.

A collective's time in the alpha-beta model is a sum of terms, each with its
own dependence on P: ring allreduce is ``2 (P - 1) alpha`` (latency term,
linear in P) plus ``2 (P - 1) / P n beta`` (bandwidth term, ``(P-1)/P``). A
claim such as "LP broadcast takes a time independent of P" is a claim about
one term (the bandwidth term), and a single law fitted to the whole curve
hides which term moves. This module

- splits a closed form into its terms (:func:`collective_terms`): the
  **latency term** is the time as beta -> 0, the **bandwidth term** the time
  as alpha -> 0 and, for a pipeline whose segment count k is tuned to each P
  (k* of :func:`~netsim.costmodel.optimal_segments`), the **fill term** is
  the rest (the cost of filling the pipeline, ``~ 2 sqrt((P - 2) alpha n
  beta)``; zero for every other schedule). For a schedule with k fixed the
  limits are taken at that k and the fill term is zero;
- picks the law of each term (:func:`fit_law`) among :data:`LAWS` by the
  Bayesian information criterion (BIC, Schwarz 1978) over exact least-squares
  fits ``a + b f(P)`` (``a`` alone for ``"constant"``). The residual
  variance is floored at ``(REL_TOL max|y|)^2``, the relative gap below which
  this package calls two times equal (:data:`REL_TOL`), so exact (noise-free)
  curves are not told apart by rounding errors. One threshold precedes the
  fit: a term whose values over P span less than its **noise floor** is
  ``"constant"`` whatever fits it best. The floor is :data:`NOISE` (0.1 %)
  times the term's own largest value for an exact term (a closed form's), and
  times the time it is measured in for a residual (the contention term,
  simulated minus closed form, is noise on the simulated time): a change that
  small moves no reported time (reports print three significant digits) and
  is far below the run-to-run variation of real iterations, so a law read
  from it would be a law of rounding or of a residual, not of the schedule.

The ``log2 P`` law is that of a binomial tree (MST, recursive doubling):
``ceil(log2 P)`` rounds, a staircase that equals ``log2 P`` at the powers of
two. Both ``log2 P`` and ``ceil(log2 P)`` are tried as its basis and the
better fit kept, so a tree's law is the same whether or not P runs over
powers of two only.

References
----------
.. [1] G. Schwarz, "Estimating the dimension of a model", Annals of
   Statistics 6(2), 461-464, 1978.
.. [2] Y. Zhao et al., "Efficient communications in training large scale
   neural networks", arXiv:1611.04255, 2016 (LP: time ~ (P - 1) alpha + n beta
   for large n).
"""

import inspect
import math
from types import MappingProxyType

import numpy as np

from netsim.costmodel import optimal_segments
from netsim.errors import NetsimError

__all__ = ["LAWS", "CURVE_LAWS", "REL_TOL", "NOISE", "K_LIMIT", "fit_law", "fit_terms", "fit_scaling",
           "collective_terms"]

REL_TOL = 1e-6
"""Relative gap below which two times are the same (simulation against closed form, law fits)."""

NOISE = 1e-3
"""Noise floor of a term's law, relative to its scale (see the module docstring).

A term whose values over P span less than ``NOISE`` times its scale (its own
largest value, or the time a residual is measured in) is ``"constant"``:
0.1 % is below the three significant digits reports print and the
percent-level spread of measured iterations, and above the engine's numerical
tolerance (:data:`REL_TOL`) by three orders of magnitude."""

K_LIMIT = 2 ** 40
"""Segments standing for k -> infinity in the alpha -> 0 limit of a pipeline (error ~ P / 2^40)."""

_BASIS = MappingProxyType({
    "constant": None,
    "(P-1)/P": lambda P: (P - 1) / P,
    "log2 P": (np.log2, lambda P: np.ceil(np.log2(P) - 1e-12)),
    "sqrt P": np.sqrt,
    "P": lambda P: P,
    "P log2 P": lambda P: P * np.log2(P),
    "P^2": lambda P: P * P,
})

LAWS = tuple(_BASIS)
"""Candidate laws of :func:`fit_law`, simplest first (ties go to the simpler)."""

CURVE_LAWS = ("constant", "(P-1)/P", "log2 P", "P")
"""Whole-curve laws of :func:`fit_scaling`, simplest (slowest-growing) first."""


def _bases(law):
    """The basis functions tried for ``law`` (the log2 P law: the curve and the tree's staircase)."""
    f = _BASIS[law]
    return f if isinstance(f, tuple) else (f,)


def _lstsq(P, y, law):
    """Least squares ``a + b f(P)`` over the bases of ``law``: ``(a, b, rss)`` of the best."""
    N = len(P)
    best = None
    for f in _bases(law):
        X = np.ones((N, 1)) if f is None else np.stack([np.ones(N), f(P)], axis=1)
        coef, *_ = np.linalg.lstsq(X, y, rcond=None)
        rss = float(((y - X @ coef) ** 2).sum())
        if best is None or rss < best[2]:
            best = (float(coef[0]), float(coef[1]) if f is not None else 0.0, rss)
    return best


def _check(P, y):
    P = np.asarray(P, np.float64)
    y = np.asarray(y, np.float64)
    if P.ndim != 1 or P.shape != y.shape:
        raise NetsimError(f"P and the values must be sequences of equal length, got {P.shape} "
                          f"and {y.shape}")
    if len(np.unique(P)) < 2:
        raise NetsimError("a scaling law needs at least two distinct values of P")
    if not np.all(np.isfinite(P)) or P.min() < 1:
        raise NetsimError("every P must be a finite number >= 1")
    if not np.all(np.isfinite(y)):
        i = int(np.flatnonzero(~np.isfinite(y))[0])
        raise NetsimError(f"every value must be finite, got {y[i]:g} at P = {P[i]:g}")
    return P, y


def fit_law(P, y, laws=LAWS, total=None):
    """The law of one term ``y(P)``: the candidate ``a + b f(P)`` of least BIC.

    Each law of ``laws`` is fitted by least squares (``"constant"``: the mean,
    one parameter; the others two). Its score is ``N ln(max(RSS / N,
    sigma^2)) + p ln N`` (BIC with N points, p parameters), with ``sigma =
    REL_TOL * max|y|`` (:data:`REL_TOL`). The least score wins; a tie goes to
    the law listed first (the simpler). A term that is zero at every P has law
    ``"zero"``; one whose values span no more than its noise floor,
    ``NOISE * max|total|`` (:data:`NOISE`; ``max|y|`` without ``total``), has
    law ``"constant"`` whatever its scores.

    Parameters
    ----------
    P, y : sequence of float
        Ranks (>= 1, at least two distinct) and the term's values (finite).
    laws : sequence of str, optional
        Candidates, a subset of :data:`LAWS`.
    total : sequence of float, optional
        The time ``y`` is a term of, at each P (sets the noise floor).

    Returns
    -------
    dict
        ``law``, ``a``, ``b`` (0 for ``"constant"``), ``residual`` (root mean
        square of the fit's residuals over ``max|y|``; 0 for an exact fit),
        ``bic`` (law -> score) and ``floor`` (the noise floor, seconds).

    Raises
    ------
    NetsimError
        For mismatched lengths, fewer than two distinct P, P < 1, a value that is
        not finite, or an unknown law.

    Examples
    --------
    >>> P = [2, 4, 8, 16, 32, 64]
    >>> fit_law(P, [3 + 2 * np.log2(p) for p in P])["law"]
    'log2 P'
    >>> fit_law(P, [5.0] * 6)["law"], fit_law(P, [0.0] * 6)["law"]
    ('constant', 'zero')
    >>> fit_law(P, [1e-6 * p for p in P], total=[1.0] * 6)["law"]  # below 0.1 % of the total
    'constant'
    >>> fit_law([2, 3, 4, 5, 6, 7, 8], [1, 2, 2, 3, 3, 3, 3])["law"]  # ceil(log2 P) rounds
    'log2 P'
    """
    P, y = _check(P, y)
    for law in laws:
        if law not in _BASIS:
            raise NetsimError(f"unknown law {law!r}; known: {', '.join(LAWS)}")
    scale = float(np.abs(y).max())
    if scale == 0:
        return {"law": "zero", "a": 0.0, "b": 0.0, "residual": 0.0, "bic": {}, "floor": 0.0}
    ref = scale if total is None else float(np.abs(np.asarray(total, np.float64)).max())
    noise = NOISE * ref
    N = len(P)
    floor = (REL_TOL * scale) ** 2
    fits, bic = {}, {}
    for law in laws:
        fits[law] = _lstsq(P, y, law)
        params = 1 if _BASIS[law] is None else 2
        bic[law] = N * math.log(max(fits[law][2] / N, floor)) + params * math.log(N)
    if float(np.ptp(y)) <= noise:
        law = "constant"
        fits.setdefault(law, _lstsq(P, y, law))
    else:
        law = min(laws, key=lambda name: (bic[name], laws.index(name)))
    a, b, rss = fits[law]
    return {"law": law, "a": a, "b": b, "residual": math.sqrt(rss / N) / scale, "bic": bic,
            "floor": noise}


def fit_terms(P, terms, laws=LAWS, totals=None):
    """:func:`fit_law` of every term of a decomposition.

    Parameters
    ----------
    P : sequence of float
        Ranks.
    terms : dict
        Term name -> values at each P (e.g. ``latency``, ``bandwidth``,
        ``fill``, ``compute``), as :func:`collective_terms` gives them per P.
    laws : sequence of str, optional
        Candidates.
    totals : dict, optional
        Term name -> the time that term is measured in, at each P (a
        residual's); its noise floor is :data:`NOISE` times that time's
        largest value (see :func:`fit_law`). Other terms: their own.

    Returns
    -------
    dict
        Term name -> :func:`fit_law` record.

    Examples
    --------
    >>> P = [2, 4, 8, 16]
    >>> fits = fit_terms(P, {"latency": [2 * (p - 1) for p in P],
    ...                      "bandwidth": [2 * (p - 1) / p for p in P]})
    >>> fits["latency"]["law"], fits["bandwidth"]["law"]
    ('P', '(P-1)/P')
    """
    totals = totals or {}
    return {name: fit_law(P, values, laws, totals.get(name)) for name, values in terms.items()}


def _takes(formula, name):
    return name in inspect.signature(formula).parameters


def collective_terms(formula, P, nbytes, alpha, beta, segments=None, **options):
    """Split a closed form's time at one P into its latency, bandwidth and fill terms.

    ``formula`` is a closed form of :mod:`netsim.costmodel` (linear in alpha
    and beta for a fixed schedule). Latency term: the time with beta = 0;
    bandwidth term: with alpha = 0. For a pipelined formula (one taking
    ``segments``) with ``segments=None`` the segment count is tuned to this P
    (k* of :func:`~netsim.costmodel.optimal_segments`), so the limits are
    those of the tuned pipeline: k = 1 as beta -> 0, k -> infinity
    (:data:`K_LIMIT`) as alpha -> 0; the fill term is the rest of the tuned
    time. With k fixed, both limits keep k and the fill term is 0. A
    ``gamma`` option (reduction cost) is a term of its own, ``reduction``.

    Parameters
    ----------
    formula : callable
        ``formula(P, nbytes, [segments,] alpha, beta, ...)``.
    P : int
    nbytes : float
    alpha, beta : float
        Seconds per message and per byte (alpha > 0 to tune segments).
    segments : int, optional
        Fixed pipeline segments; None tunes them to P.
    **options
        Other keyword arguments of the formula (``gamma``, ``servers``).

    Returns
    -------
    dict
        ``total``, ``latency``, ``bandwidth``, ``fill``, ``reduction`` (seconds)
        and ``segments`` (the k of ``total``; None if not pipelined).

    Examples
    --------
    >>> from netsim import costmodel
    >>> t = collective_terms(costmodel.pipeline_broadcast, 64, 64e6, 2e-6, 8e-10)
    >>> t["segments"], round(t["latency"] / 2e-6), round(t["bandwidth"] / (64e6 * 8e-10), 9)
    (1260, 63, 1.0)
    >>> t = collective_terms(costmodel.ring_allreduce, 4, 1e6, 1e-6, 1e-9)
    >>> t["latency"], t["bandwidth"], t["fill"]
    (6e-06, 0.0015, 0.0)
    """
    gamma = options.pop("gamma", 0.0)  # ignored by a formula without a reduction
    extra = dict(options)

    def f(a, b, g, k=None):
        kw = dict(extra, alpha=a, beta=b)
        if _takes(formula, "gamma"):
            kw["gamma"] = g
        if k is not None:
            kw["segments"] = k
        return float(formula(P, nbytes, **kw))

    if not _takes(formula, "segments"):
        total = f(alpha, beta, gamma)
        lat, bw, red = f(alpha, 0.0, 0.0), f(0.0, beta, 0.0), f(0.0, 0.0, gamma)
        return {"total": total, "latency": lat, "bandwidth": bw, "fill": 0.0, "reduction": red,
                "segments": None}
    if segments is None:
        k = optimal_segments(P, nbytes, alpha, beta)
        lat_k, bw_k = 1, K_LIMIT
    else:
        k = lat_k = bw_k = segments
    total = f(alpha, beta, gamma, k)
    lat, bw, red = f(alpha, 0.0, 0.0, lat_k), f(0.0, beta, 0.0, bw_k), f(0.0, 0.0, gamma, k)
    fill = total - lat - bw - red
    if abs(fill) <= REL_TOL * total:
        fill = 0.0
    return {"total": total, "latency": lat, "bandwidth": bw, "fill": fill, "reduction": red,
            "segments": int(k)}


def fit_scaling(P, T, flat=0.05, margin=0.01, min_r2=0.95, terms=None):
    """Fit ``T(P) = a + b f(P)`` for each law f of :data:`CURVE_LAWS` and pick one; and each term's law.

    The whole-curve law below is a summary that depends on ``flat``; the laws
    of the curve's terms (``terms``: latency, bandwidth, fill, compute, ...)
    do not: each is chosen by :func:`fit_law` (least BIC,
    no threshold), and a claim about scaling should read those.

    Rule: if the times vary by less than ``flat`` (``max T / min T - 1 <
    flat``) the law is ``"constant"``. Otherwise each other law is fitted by
    least squares (``log2 P`` also as the staircase ``ceil(log2 P)``, see the
    module docstring) and scored by R^2; the chosen law is the simplest (first in
    :data:`CURVE_LAWS`: ``(P-1)/P`` before ``log2 P`` before ``P``) whose R^2 is
    within ``margin`` of the best. ``no_single_law`` is set when even the
    best R^2 is below ``min_r2``. At least three distinct P are needed to
    tell the laws apart (through two points every law fits exactly).

    Parameters
    ----------
    P, T : sequence of float
        Ranks and times (> 0), same length, at least two distinct P.
    flat, margin, min_r2 : float, optional
        The thresholds above.
    terms : dict, optional
        Term name -> values at each P (summing to about T).

    Returns
    -------
    dict
        ``law``, ``a``, ``b``, ``r2`` (None for ``"constant"``, where R^2 is
        undefined), ``spread`` (``max T / min T - 1``), ``no_single_law``,
        ``fits`` (law -> ``{"a", "b", "r2"}`` for the non-constant laws) and
        ``terms`` (term -> :func:`fit_law` record; empty
        without ``terms``).

    Raises
    ------
    NetsimError
        For mismatched lengths, fewer than two distinct P, P < 1 or T <= 0.

    Examples
    --------
    >>> P = [2, 4, 8, 16, 32, 64]
    >>> fit_scaling(P, [3 + 2 * np.log2(p) for p in P])["law"]
    'log2 P'
    >>> fit_scaling(P, [1.0, 1.01, 1.0, 1.02, 1.0, 1.01])["law"]
    'constant'
    >>> fit = fit_scaling(P, [2 * (p - 1) + 2 * (p - 1) / p for p in P],
    ...                   terms={"latency": [2 * (p - 1) for p in P],
    ...                          "bandwidth": [2 * (p - 1) / p for p in P]})
    >>> fit["terms"]["latency"]["law"], fit["terms"]["bandwidth"]["law"]
    ('P', '(P-1)/P')
    """
    P = np.asarray(P, np.float64)
    T = np.asarray(T, np.float64)
    if P.ndim != 1 or P.shape != T.shape:
        raise NetsimError(f"P and T must be sequences of equal length, got {P.shape} and {T.shape}")
    if len(np.unique(P)) < 2:
        raise NetsimError("fit_scaling needs at least two distinct values of P")
    if not np.all(np.isfinite(P)) or P.min() < 1:
        raise NetsimError("every P must be a finite number >= 1")
    bad = np.flatnonzero(~np.isfinite(T) | (T <= 0))
    if len(bad):
        i = int(bad[0])
        raise NetsimError(f"every time T must be a finite number > 0, got T = {T[i]:g} at "
                          f"P = {P[i]:g}")
    spread = float(T.max() / T.min() - 1)
    ss_tot = float(((T - T.mean()) ** 2).sum())
    fits = {}
    for law in CURVE_LAWS[1:]:
        a, b, ss_res = _lstsq(P, T, law)
        fits[law] = {"a": a, "b": b,
                     "r2": 1.0 - ss_res / ss_tot if ss_tot > 0 else 1.0}
    best = max(f["r2"] for f in fits.values())
    by_term = fit_terms(P, terms) if terms else {}
    if spread < flat:
        return {"law": "constant", "a": float(T.mean()), "b": 0.0, "r2": None, "spread": spread,
                "no_single_law": False, "fits": fits, "terms": by_term}
    law = next(name for name in CURVE_LAWS[1:] if fits[name]["r2"] >= best - margin)
    return {"law": law, **fits[law], "spread": spread, "no_single_law": best < min_r2,
            "fits": fits, "terms": by_term}
