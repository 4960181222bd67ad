"""Heterogeneity at replay time: slower devices, compute jitter and stragglers.

A recorded trace says what each op computes; how fast a device computes it is
a property of the replay. The functions here return a **new trace** whose
compute ops take ``factor`` times as long (the user applies them before
:func:`netsim.simulate`; the CLI's ``--straggler``, ``--jitter`` and
``--seed`` do the same). Nothing is re-recorded: messages, dependencies and
iterations are the recording's.

Every compute op ``i`` gets one factor ``f[i] > 0``, the product of

* **device speed**: rank ``r`` runs at relative speed ``speed[r]``, so its ops
  take ``1 / speed[r]`` as long;
* **stragglers** (:func:`netsim.units.parse_straggler`): ``"R:Kx"`` makes rank
  ``R`` ``K`` times slower (``speed = 1 / K``); ``"p=P:Kx"`` makes every compute
  op, independently with probability ``P``, ``K`` times slower;
* **jitter** (:func:`netsim.units.parse_jitter`): one independent draw per
  compute op, ``lognormal:SIGMA`` = ``exp(N(-SIGMA^2 / 2, SIGMA))`` (mean 1,
  so the mean compute time is kept) or ``uniform:LO,HI``.

An op given in seconds has its ``duration`` multiplied; an op given in FLOPs has
its ``flops`` multiplied (the FLOPs it costs at the nominal device rate), so a
later ``device_flops`` still applies. Draws are deterministic for a ``seed``:
jitter and random stragglers use two independent streams of
``numpy.random.default_rng`` seeded with ``[seed, 0]`` and ``[seed, 1]``, one
draw per compute op in op order. The trace's metadata gets ``perturbation``.

Examples
--------
>>> from netsim import TraceBuilder
>>> b = TraceBuilder(2)
>>> _ = b.compute(0, seconds=1.0); _ = b.compute(1, seconds=1.0)
>>> perturb(b.build(), straggler="0:10x").duration.tolist()
[10.0, 1.0]
"""

import numpy as np

from netsim.checks import check_int
from netsim.errors import UnitError
from netsim.trace.core import COMPUTE
from netsim.units import parse_jitter, parse_straggler

__all__ = ["compute_factors", "jitter_factors", "perturb", "scale_compute"]


def jitter_factors(spec, n, seed=0):
    """``n`` independent jitter factors of a distribution, deterministic for ``seed``.

    Parameters
    ----------
    spec : str or tuple
        ``"lognormal:SIGMA"`` or ``"uniform:LO,HI"``, or its
        :func:`netsim.units.parse_jitter` tuple.
    n : int
        Number of factors.
    seed : int
        Seed (>= 0) of the stream ``numpy.random.default_rng([seed, 0])``.

    Returns
    -------
    ndarray of float
        Positive factors; lognormal ones have mean 1
        (``exp(N(mu, SIGMA))`` with ``mu = -SIGMA^2 / 2``).

    Examples
    --------
    >>> f = jitter_factors("lognormal:0.1", 100000, seed=1)
    >>> bool(abs(f.mean() - 1) < 0.002), bool(f.min() > 0)
    (True, True)
    >>> jitter_factors("uniform:2,2", 3).tolist()
    [2.0, 2.0, 2.0]
    >>> jitter_factors(None, 3)
    Traceback (most recent call last):
    ...
    netsim.errors.UnitError: jitter must be 'lognormal:SIGMA' or 'uniform:LO,HI' (or its parsed (name, params)), got None
    """
    if not isinstance(spec, str) and not (isinstance(spec, tuple) and len(spec) == 2):
        raise UnitError(f"jitter must be 'lognormal:SIGMA' or 'uniform:LO,HI' (or its parsed "
                        f"(name, params)), got {spec!r}")
    name, params = parse_jitter(spec) if isinstance(spec, str) else spec
    n = check_int(n, "n", 0, error=UnitError)
    seed = check_int(seed, "seed", 0, error=UnitError)
    rng = np.random.default_rng([seed, 0])
    if name == "lognormal":
        sigma = params[0]
        return np.exp(rng.normal(-sigma * sigma / 2, sigma, n))
    lo, hi = params
    return rng.uniform(lo, hi, n)


def _rank_factors(speed, ranks):
    """Per-rank time factors ``1 / speed`` from a sequence or a {rank: speed} mapping."""
    out = np.ones(ranks)
    items = speed.items() if isinstance(speed, dict) else enumerate(speed)
    if not isinstance(speed, dict) and len(speed) != ranks:
        raise UnitError(f"speed has {len(speed)} entries for a trace of {ranks} ranks")
    for r, v in items:
        r = check_int(r, "speed rank", 0, ranks - 1, error=UnitError)
        try:
            v = float(v)
        except (TypeError, ValueError):
            v = np.nan
        if not (np.isfinite(v) and v > 0):
            raise UnitError(f"speed of rank {r} must be a number > 0, got {speed[r]!r}")
        out[r] = 1.0 / v
    return out


def compute_factors(trace, speed=None, jitter=None, straggler=None, seed=0):
    """The time factor of every op of ``trace`` (1 for messages); see the module docstring.

    Parameters
    ----------
    trace : Trace
    speed : sequence or dict, optional
        Relative device speed per rank (a sequence of ``trace.ranks`` numbers,
        or ``{rank: speed}``); 1 by default.
    jitter : str or tuple, optional
        :func:`netsim.units.parse_jitter` spec.
    straggler : str or list, optional
        :func:`netsim.units.parse_straggler` spec.
    seed : int
        Seed of the jitter and of the random stragglers.

    Returns
    -------
    ndarray of float
        One factor per op.

    Raises
    ------
    UnitError
        For a bad spec, a straggler or speed rank the trace does not have, or a
        speed that is not a number > 0.

    Examples
    --------
    >>> from netsim import TraceBuilder
    >>> b = TraceBuilder(3); _ = [b.compute(r, seconds=1.0) for r in range(3)]
    >>> _ = b.message(0, 1, 8)
    >>> compute_factors(b.build(), speed={1: 0.5}, straggler="2:4x").tolist()
    [1.0, 2.0, 4.0, 1.0]
    """
    seed = check_int(seed, "seed", 0, error=UnitError)
    comp = trace.kind == COMPUTE
    factors = np.ones(trace.num_ops)
    if speed is not None:
        factors *= _rank_factors(speed, trace.ranks)[trace.rank]
    items = parse_straggler(straggler) if isinstance(straggler, str) else (straggler or [])
    n = int(comp.sum())
    rng = np.random.default_rng([seed, 1])
    for kind, what, k in items:
        if kind == "rank":
            if not 0 <= what < trace.ranks:
                raise UnitError(f"straggler rank {what} is not in the trace (ranks 0.."
                                f"{trace.ranks - 1})")
            factors[trace.rank == what] *= k
        else:
            hit = np.zeros(trace.num_ops, bool)
            hit[comp] = rng.random(n) < what
            factors[hit] *= k
    if jitter is not None:
        factors[comp] *= jitter_factors(jitter, n, seed)
    factors[~comp] = 1.0
    return factors


def scale_compute(trace, factors, **metadata):
    """A trace whose compute op ``i`` takes ``factors[i]`` times as long.

    Parameters
    ----------
    trace : Trace
    factors : array_like of float
        One positive factor per op (ignored for messages).
    **metadata
        Metadata to add to the new trace.

    Returns
    -------
    Trace
        Same ops and dependencies; ``duration`` (ops in seconds) or ``flops``
        (ops in FLOPs) multiplied.

    Examples
    --------
    >>> from netsim import TraceBuilder
    >>> b = TraceBuilder(1); _ = b.compute(0, seconds=2.0); _ = b.compute(0, flops=1e9)
    >>> t = scale_compute(b.build(), [3.0, 2.0])
    >>> float(t.duration[0]), float(t.flops[1])
    (6.0, 2000000000.0)
    >>> scale_compute(b.build(), [1.0, 1e300])
    Traceback (most recent call last):
    ...
    netsim.errors.UnitError: a factor of 1e+300 makes compute op 1 hold more than the largest float (1e+09 FLOPs before); give a smaller factor
    """
    factors = np.asarray(factors, np.float64)
    if factors.shape != (trace.num_ops,) or not np.all(np.isfinite(factors) & (factors > 0)):
        raise UnitError(f"factors must be {trace.num_ops} finite numbers > 0")
    comp = trace.kind == COMPUTE
    timed = comp & ~np.isnan(trace.duration)
    with np.errstate(over="ignore"):   # an overflow is refused below, naming the op
        duration = np.where(timed, trace.duration * factors, trace.duration)
        flops = np.where(comp & ~timed, trace.flops * factors, trace.flops)
    over = np.flatnonzero(comp & (np.isinf(duration) | np.isinf(flops)))
    if over.size:
        i = int(over[0])
        raise UnitError(f"a factor of {factors[i]:.3g} makes compute op {i} "
                        f"{'take' if timed[i] else 'hold'} more than the largest float "
                        f"({trace.duration[i] if timed[i] else trace.flops[i]:.3g} "
                        f"{'s' if timed[i] else 'FLOPs'} before); give a smaller factor")
    return trace.replace(duration=duration, flops=flops, metadata={**trace.metadata, **metadata})


def perturb(trace, speed=None, jitter=None, straggler=None, seed=0):
    """The trace with device speeds, stragglers and jitter applied to its compute ops.

    Parameters
    ----------
    trace : Trace
    speed, jitter, straggler, seed
        See :func:`compute_factors`.

    Returns
    -------
    Trace
        :func:`scale_compute` of the factors; the trace itself if nothing is
        asked. Its metadata's ``perturbation`` records the specs and the seed.

    Examples
    --------
    One straggler on two ranks exchanging a message each step: the makespan is
    the slow rank's compute plus the message.

    >>> import networkx as nx
    >>> from netsim import TraceBuilder, simulate
    >>> b = TraceBuilder(2)
    >>> a0 = b.compute(0, seconds=1.0); a1 = b.compute(1, seconds=1.0)
    >>> _ = b.message(0, 1, 0, deps=[a0])
    >>> G = nx.Graph(); G.add_edge("a", "b", bandwidth=1e9, latency=0.0)
    >>> simulate(perturb(b.build(), straggler="0:10x"), G).makespan
    10.0
    """
    if speed is None and jitter is None and not straggler:
        return trace
    factors = compute_factors(trace, speed, jitter, straggler, seed)
    record = {"seed": int(seed)}
    if speed is not None:
        record["speed"] = ({int(k): float(v) for k, v in speed.items()} if isinstance(speed, dict)
                           else [float(v) for v in speed])
    if jitter is not None:
        record["jitter"] = jitter if isinstance(jitter, str) else list(jitter)
    if straggler:
        record["straggler"] = straggler if isinstance(straggler, str) else [list(s) for s in straggler]
    return scale_compute(trace, factors, perturbation=record)
