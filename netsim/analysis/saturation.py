"""Saturation and scaling analysis over simulation results: which link saturates, and when.

Plain functions over :class:`~netsim.result.Result` objects and flat records,
for scaling studies that simulate one workload at several worker counts P.
Nothing here knows a paradigm or a piece of hardware.

Definitions
-----------
* A link direction is **saturated** while it carries at least
  :data:`netsim.engine.replay.SATURATION` (99 %) of its capacity.
* A full-duplex **link** (an edge of an undirected graph: two link directions)
  is saturated while *either* of its directions is. Its saturated time is the
  length of the union of its two directions' saturated intervals, computed
  exactly from ``result.link_series`` (``simulate(..., link_series=True)``).
  Counting the link, not the direction, matters for request-reply patterns: a
  parameter server's link is saturated inbound while the workers push and
  outbound while they pull, so neither direction alone is busy for more than
  half of an iteration, however many workers there are.
* The **saturated fraction** of a link is its saturated time over the makespan
  (equivalently, per iteration: over the time per iteration).
* The **saturation point** of a scaling study is the smallest P at which some
  link is saturated for more than ``level`` (default one half) of the run; with
  ``strong=True`` also the smallest P at which the time per iteration stops
  falling (adding workers no longer helps).
* **Weak scaling** (fixed per-worker batch): the throughput speed-up is
  ``S(P) = P T(1) / T(P)`` and the parallel efficiency ``E(P) = S(P) / P =
  T(1) / T(P)``, where ``T(1)`` is the time per iteration of one worker alone
  (no communication). **Strong scaling** (fixed global batch):
  ``S(P) = T(1) / T(P)`` and ``E(P) = S(P) / P``.
"""

import math

import numpy as np

from netsim.engine.replay import SATURATION
from netsim.errors import NetsimError
from netsim.result import union_length

__all__ = [
    "link_saturation",
    "top_link",
    "crossing",
    "speedup",
    "saturation_point",
    "saturation_label",
    "plot_scaling",
]


def _saturated_intervals(series, bandwidth, makespan):
    """Per link direction, the intervals (start, end arrays) at >= SATURATION of capacity."""
    t, link, load = (np.asarray(series[k]) for k in ("time", "link", "load"))
    order = np.lexsort((t, link))
    t, link, load = t[order], link[order], load[order]
    out = {}
    bounds = np.flatnonzero(np.diff(link)) + 1
    for lo, hi in zip(np.concatenate([[0], bounds]), np.concatenate([bounds, [len(link)]])):
        if lo == hi:
            continue
        i = int(link[lo])
        tt = t[lo:hi]
        nxt = np.concatenate([tt[1:], [makespan]])
        sat = load[lo:hi] >= SATURATION * bandwidth[i]
        out[i] = (tt[sat], nxt[sat])
    return out


def link_saturation(result, duplex=True):
    """Saturated time and fraction of every link that carried bytes, most saturated first.

    Parameters
    ----------
    result : Result
        From :func:`~netsim.result.simulate`; with ``link_series=True`` the
        union over a link's two directions is exact. Without it, a duplex
        link's saturated time is the larger of its directions' (a lower bound
        on the union) and ``exact`` is False.
    duplex : bool, optional
        Treat the directions ``u->v`` and ``v->u`` as the two halves of one
        full-duplex link (an undirected graph's edge). Pass False for a
        ``DiGraph`` whose opposite edges are separate links.

    Returns
    -------
    list of dict
        One record per link: ``link`` (``"u<->v"``, or ``"u->v"`` when not
        duplex), ``directions`` (the link directions' names), ``saturated``
        (seconds), ``fraction`` (saturated / makespan, 0 for an empty run),
        ``bytes`` (both directions), ``bandwidth`` (bytes/s per direction),
        ``peak_flows`` and ``exact``. Sorted by fraction, then bytes,
        descending.

    Examples
    --------
    Two hosts send 1 MB to each other's opposite end at once over 1 MB/s links:
    each link is saturated for the whole second.

    >>> from netsim import TraceBuilder, simulate
    >>> import networkx as nx  # a star: hosts on one switch
    >>> G = nx.Graph()
    >>> G.add_nodes_from(["host0", "host1", "host2"], kind="host")
    >>> G.add_edges_from([(h, "switch") for h in list(G)], bandwidth=1e6, latency=0.0)
    >>> b = TraceBuilder(3); _ = b.message(0, 2, 1e6); _ = b.message(2, 1, 1e6)
    >>> r = simulate(b.build(), G, link_series=True)
    >>> top = link_saturation(r)[0]
    >>> top["link"], top["fraction"], top["bytes"]
    ('host2<->switch', 1.0, 2000000.0)
    """
    lk = result.links
    L = len(lk["bytes"])
    span = float(result.makespan)
    series = getattr(result, "link_series", None)
    per_dir = (_saturated_intervals(series, lk["bandwidth"], span) if series is not None
               else None)
    groups = {}
    for i in range(L):
        s, d = str(lk["src"][i]), str(lk["dst"][i])
        key = (min(s, d), max(s, d)) if duplex else (s, d)
        groups.setdefault(key, []).append(i)
    out = []
    for idx in groups.values():
        nbytes = float(sum(lk["bytes"][i] for i in idx))
        if nbytes <= 0:
            continue
        if per_dir is not None:
            empty = (np.zeros(0), np.zeros(0))
            starts = np.concatenate([per_dir.get(i, empty)[0] for i in idx])
            ends = np.concatenate([per_dir.get(i, empty)[1] for i in idx])
            sat = float(union_length(starts, ends, np.zeros(len(starts), np.int64), 1)[0])
        else:
            sat = float(max(lk["saturated"][i] for i in idx))
        # Named as its first direction runs.
        a, b = str(lk["src"][idx[0]]), str(lk["dst"][idx[0]])
        out.append({
            "link": f"{a}<->{b}" if duplex else f"{a}->{b}",
            "directions": [f"{lk['src'][i]}->{lk['dst'][i]}" for i in idx],
            "saturated": sat,
            "fraction": sat / span if span > 0 else 0.0,
            "bytes": nbytes,
            "bandwidth": float(min(lk["bandwidth"][i] for i in idx)),
            "peak_flows": int(max(lk["peak_flows"][i] for i in idx)),
            "exact": per_dir is not None or len(idx) == 1,
        })
    out.sort(key=lambda r: (-r["fraction"], -r["bytes"], r["link"]))
    return out


def top_link(result, duplex=True):
    """The most saturated link of a run, as the flat fields of a study's record.

    Parameters
    ----------
    result : Result
        As for :func:`link_saturation` (``link_series=True`` for the exact union).
    duplex : bool, optional
        As for :func:`link_saturation`: False for a ``DiGraph``.

    Returns
    -------
    dict
        ``top_link`` (the first link of :func:`link_saturation`, None without
        traffic), ``saturated_fraction`` (its saturated fraction of the run,
        0.0 without traffic) and ``top_bandwidth`` (its bytes/s per direction,
        None without traffic).

    Examples
    --------
    >>> from netsim import TraceBuilder, simulate
    >>> import networkx as nx  # a star: hosts on one switch
    >>> G = nx.Graph()
    >>> G.add_nodes_from(["host0", "host1", "host2"], kind="host")
    >>> G.add_edges_from([(h, "switch") for h in list(G)], bandwidth=1e6, latency=0.0)
    >>> b = TraceBuilder(3); _ = b.message(0, 2, 1e6); _ = b.message(2, 1, 1e6)
    >>> r = simulate(b.build(), G, link_series=True)
    >>> top_link(r)
    {'top_link': 'host2<->switch', 'saturated_fraction': 1.0, 'top_bandwidth': 1000000.0}
    """
    sat = link_saturation(result, duplex=duplex)
    top = sat[0] if sat else None
    return {"top_link": top["link"] if top else None,
            "saturated_fraction": top["fraction"] if top else 0.0,
            "top_bandwidth": top["bandwidth"] if top else None}


def crossing(x, y, level, log_x=True):
    """The first x at which a sampled curve reaches ``level``, interpolated between samples.

    Between the last sample below ``level`` and the first at or above it, y is
    taken as linear in ``log2 x`` (``log_x=True``, for P on a doubling grid) or
    in x.

    Parameters
    ----------
    x : sequence of float
        Increasing sample points (> 0 when ``log_x``).
    y : sequence of float
        Values at those points.
    level : float

    Returns
    -------
    float or None
        None if y never reaches ``level``; ``x[0]`` if it starts there.

    Examples
    --------
    >>> crossing([2, 4, 8, 16], [0.2, 0.4, 0.6, 0.8], 0.5)
    5.656854249492381
    >>> crossing([2, 4], [0.1, 0.2], 0.5) is None
    True
    """
    x = np.asarray(x, np.float64)
    y = np.asarray(y, np.float64)
    if x.ndim != 1 or x.shape != y.shape or not len(x):
        raise NetsimError(f"x and y must be non-empty sequences of equal length, got {x.shape} "
                          f"and {y.shape}")
    if np.any(np.diff(x) <= 0):
        raise NetsimError("x must be strictly increasing")
    if log_x and x[0] <= 0:
        raise NetsimError("x must be > 0 with log_x")
    hit = np.flatnonzero(y >= level)
    if not len(hit):
        return None
    j = int(hit[0])
    if j == 0:
        return float(x[0])
    u = np.log2(x) if log_x else x
    f = (level - y[j - 1]) / (y[j] - y[j - 1])
    val = u[j - 1] + f * (u[j] - u[j - 1])
    return float(2.0 ** val if log_x else val)


def speedup(P, T, T1, strong=False):
    """Speed-up and parallel efficiency of times per iteration ``T`` at worker counts ``P``.

    Weak scaling (fixed per-worker batch, the default): each iteration processes
    P times the samples of one worker, so the throughput speed-up is
    ``S = P T1 / T`` and the efficiency ``E = S / P = T1 / T``. Strong scaling
    (fixed global batch): ``S = T1 / T`` and ``E = S / P``.

    Parameters
    ----------
    P : sequence of int
    T : sequence of float
        Seconds per iteration at each P (> 0).
    T1 : float
        Seconds per iteration of one worker alone, without communication (> 0).
    strong : bool, optional

    Returns
    -------
    speedup, efficiency : list of float

    Examples
    --------
    >>> speedup([1, 2, 4], [1.0, 1.25, 2.0], 1.0)
    ([1.0, 1.6, 2.0], [1.0, 0.8, 0.5])
    >>> speedup([1, 2, 4], [1.0, 0.5, 0.5], 1.0, strong=True)
    ([1.0, 2.0, 2.0], [1.0, 1.0, 0.5])
    """
    P = np.asarray(P, np.float64)
    T = np.asarray(T, np.float64)
    if P.shape != T.shape:
        raise NetsimError(f"P and T must have equal lengths, got {P.shape} and {T.shape}")
    if not (isinstance(T1, (int, float, np.floating)) and math.isfinite(T1) and T1 > 0):
        raise NetsimError(f"T1 must be a finite number > 0, got {T1!r}")
    if np.any(~np.isfinite(T)) or np.any(T <= 0):
        raise NetsimError("every time per iteration must be a finite number > 0")
    s = T1 / T if strong else P * T1 / T
    return s.tolist(), (s / P).tolist()


def saturation_point(P, fraction, links=None, times=None, level=0.5, strong=False):
    """The smallest P at which some link is saturated for more than ``level`` of the run.

    Parameters
    ----------
    P : sequence of int
        Strictly increasing worker counts.
    fraction : sequence of float
        At each P, the saturated fraction of the most saturated link (see
        :func:`link_saturation`).
    links : sequence of str, optional
        At each P, the name of that link.
    times : sequence of float, optional
        Seconds per iteration at each P; with ``strong=True`` the first P whose
        time is not below the previous one's also counts as saturation
        ("time per iteration stops falling").
    level : float, optional
        Saturated fraction above which a link counts as saturated (0.5: most
        of the iteration). The comparison is strict everywhere: a fraction
        equal to ``level`` is not saturated, for ``P`` as for ``crossing``.
    strong : bool, optional

    Returns
    -------
    dict
        ``P`` (None if nothing saturates), ``link`` (the saturated link, None
        when the reason is the time), ``fraction`` (its saturated fraction),
        ``reason`` (``"link"``, ``"time stops falling"`` or None), ``crossing``
        (the P at which the top link's saturated time reaches ``level`` times
        the time per iteration, interpolated linearly in P when ``times`` is
        given, which is exact when both grow linearly in P; else the P at
        which the fraction reaches ``level``, interpolated in log2 P, see
        :func:`crossing`; in both cases between the last P whose fraction is
        at most ``level`` and the first above it; None if no fraction is
        above ``level`` or the first already is) and ``level``.

    Examples
    --------
    >>> sp = saturation_point([2, 4, 8, 16], [0.2, 0.4, 0.6, 0.8], ["a", "b", "c", "c"])
    >>> sp["P"], sp["link"], round(sp["crossing"], 3)
    (8, 'c', 5.657)
    >>> saturation_point([2, 4, 8], [0, 0, 0], times=[1.0, 0.6, 0.7], strong=True)["reason"]
    'time stops falling'

    A fraction equal to ``level`` is not above it:

    >>> sp = saturation_point([2, 4, 8], [0.5, 0.5, 0.9])
    >>> sp["P"], sp["crossing"]
    (8, 4.0)
    """
    P = [int(p) for p in P]
    fr = [float(f) for f in fraction]
    if len(P) != len(fr) or not P:
        raise NetsimError("P and fraction must be non-empty and of equal length")
    if any(b <= a for a, b in zip(P, P[1:])):
        raise NetsimError(f"P must be strictly increasing, got {P}")
    over = next((i for i, f in enumerate(fr) if f > level), None)
    cross = None  # also when already saturated at the first P: the crossing lies below P[0]
    if over is not None and over > 0:
        # Between the last P at or below the level and the first above it.
        seg = slice(over - 1, over + 1)
        if times is not None:
            # Saturated time minus level x time, per iteration: linear in P when both are
            # (a parameter server), so the interpolated zero is exact there.
            gap = [(f - level) * float(t) for f, t in zip(fr[seg], times[seg])]
            cross = crossing(P[seg], gap, 0.0, log_x=False)
        elif min(P) > 0:
            cross = crossing(P[seg], fr[seg], level)
    out = {"P": None, "link": None, "fraction": None, "reason": None, "level": level,
           "crossing": cross}
    stop = None
    if strong and times is not None:
        stop = next((i for i in range(1, len(P)) if times[i] >= times[i - 1]), None)
    if over is not None and (stop is None or over <= stop):
        out.update(P=P[over], link=links[over] if links is not None else None,
                   fraction=fr[over], reason="link")
    elif stop is not None:
        out.update(P=P[stop], fraction=fr[stop], reason="time stops falling")
    return out


def saturation_label(level=0.5):
    """Legend entry of the saturation points circled on a plot (see :func:`saturation_point`).

    Examples
    --------
    >>> saturation_label(0.5)
    'saturation point (a link at >= 99 % for > 50% of the run)'
    """
    return (f"saturation point (a link at >= {SATURATION * 100:g} % for > {level:.0%} "
            f"of the run)")


def plot_scaling(P, series, path, saturation=None, title="", logy=False):
    """Time per iteration against P (log2 axis) with the saturation point marked.

    Parameters
    ----------
    P : sequence of int
    series : list of dict
        Each ``{"label", "simulated", "closed_form"}`` (lists of seconds per
        iteration; ``closed_form`` may be None), as for
        :func:`netsim.drawing.plot.plot_series`.
    path : str or file
        Where to write the PNG.
    saturation : dict, optional
        From :func:`saturation_point`; its P is drawn as a vertical line
        labelled with the link.
    title : str, optional
    logy : bool, optional
        Logarithmic time axis.

    Returns
    -------
    str or file
        ``path``.

    Examples
    --------
    >>> import os, tempfile
    >>> p = os.path.join(tempfile.mkdtemp(), "scaling.png")
    >>> _ = plot_scaling([2, 4, 8], [{"label": "time", "simulated": [1.0, 1.2, 2.0],
    ...                               "closed_form": [1.0, 1.2, 2.0]}], p,
    ...                  saturation={"P": 8, "link": "server<->switch", "reason": "link"})
    >>> os.path.getsize(p) > 0
    True
    """
    from netsim.drawing.plot import plot_series

    marks = []
    if saturation and saturation.get("P") is not None:
        what = saturation.get("link") or saturation.get("reason") or ""
        marks.append((saturation["P"], f"saturation: P = {saturation['P']} ({what})"))
    plot_series([{**s, "P": list(P)} for s in series], path, title=title,
                xlabel="workers P (log2 scale)", ylabel="time per iteration (s)", marks=marks,
                logy=logy)
    return path
