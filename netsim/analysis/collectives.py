"""Analysis: each collective's closed form next to its simulation, and scaling laws.

Plain functions returning flat records (dicts, lists of dicts) for the studies
(``netsim collective``, ``netsim scale``), notebooks and tests.

Algorithm names
---------------
:data:`NAMED_SCHEDULES` maps a short name to its trace generator in
:mod:`netsim.comm.collectives`, :data:`FORMULAS` to its closed form in
:mod:`netsim.costmodel`:

=================== ================================= ===========================
name                generator                         collective
=================== ================================= ===========================
mst                 binomial_broadcast                broadcast
mst_reduce          binomial_reduce                   reduce
lp                  pipeline_broadcast                broadcast
lp_reduce           pipeline_reduce                   reduce
lp_allreduce        pipeline_allreduce                allreduce
be                  be_broadcast                      broadcast
ring                ring_allreduce                    allreduce
rd                  recursive_doubling_allreduce      allreduce
rabenseifner        rabenseifner_allreduce            allreduce
ring_allgather      ring_allgather                    allgather
rd_allgather        recursive_doubling_allgather      allgather
ring_reduce_scatter ring_reduce_scatter               reduce-scatter
rh_reduce_scatter   recursive_halving_reduce_scatter  reduce-scatter
alltoall            alltoall                          all-to-all
ps                  ps_push_pull                      push + pull
=================== ================================= ===========================

Every function takes the topology as a graph (or a ``hosts -> graph``
builder) from its caller: this module knows no hardware. The claims of the
linear-pipelining study (arXiv:1611.04255) are built on :func:`scale`,
:func:`fit_scaling` and :func:`lp_be_ratio` by the composition layer above the
core, which picks the hardware.
"""

import inspect
import math
from types import MappingProxyType

from netsim.comm import collectives
from netsim import costmodel
from netsim.checks import check_choice, check_int, check_real
from netsim.costmodel import alpha_beta, busiest_link, optimal_segments
from netsim.errors import NetsimError, TraceError
from netsim.network.compiled import as_network
from netsim.result import simulate
from netsim.analysis.saturation import saturation_label, saturation_point, top_link
from netsim.analysis.scaling_laws import CURVE_LAWS as LAWS
from netsim.analysis.scaling_laws import REL_TOL, collective_terms, fit_scaling, fit_terms

__all__ = [
    "NAMED_SCHEDULES",
    "FORMULAS",
    "LAWS",
    "REL_TOL",
    "ranks_for",
    "compare",
    "optimal_segments",
    "takes_segments",
    "lp_segments",
    "scale",
    "TERMS",
    "fit_scaling",
    "scale_terms",
    "plot_scale",
    "lp_be_ratio",
]

NAMED_SCHEDULES = MappingProxyType({
    "mst": collectives.binomial_broadcast,
    "mst_reduce": collectives.binomial_reduce,
    "lp": collectives.pipeline_broadcast,
    "lp_reduce": collectives.pipeline_reduce,
    "lp_allreduce": collectives.pipeline_allreduce,
    "be": collectives.be_broadcast,
    "ring": collectives.ring_allreduce,
    "rd": collectives.recursive_doubling_allreduce,
    "rabenseifner": collectives.rabenseifner_allreduce,
    "ring_allgather": collectives.ring_allgather,
    "rd_allgather": collectives.recursive_doubling_allgather,
    "ring_reduce_scatter": collectives.ring_reduce_scatter,
    "rh_reduce_scatter": collectives.recursive_halving_reduce_scatter,
    "alltoall": collectives.alltoall,
    "ps": collectives.ps_push_pull,
})
"""Short name -> trace generator (read-only): the names ``netsim collective`` and the studies
give the schedules of :mod:`netsim.comm.collectives`, one per generator (MPICH's own per-op
hints are :data:`netsim.trace.collop.MPICH_HINTS`)."""

FORMULAS = MappingProxyType({name: getattr(costmodel, gen.__name__)
                             for name, gen in NAMED_SCHEDULES.items()})
"""Short name -> closed form in :mod:`netsim.costmodel` (read-only)."""




def _lookup(algorithm):
    check_choice(algorithm, "algorithm", NAMED_SCHEDULES, error=NetsimError)
    return NAMED_SCHEDULES[algorithm], FORMULAS[algorithm]


def ranks_for(algorithm, P, servers=1):
    """Ranks a collective of P ranks (workers) occupies: ``P``, plus ``servers`` for ``"ps"``.

    Examples
    --------
    >>> ranks_for("ring", 8), ranks_for("ps", 8), ranks_for("ps", 8, servers=2)
    (8, 9, 10)
    """
    _lookup(algorithm)
    return P + (servers if algorithm == "ps" else 0)


def takes_segments(algorithm):
    """Whether an algorithm is pipelined in segments (the LP family).

    Examples
    --------
    >>> takes_segments("lp_reduce"), takes_segments("ring")
    (True, False)
    """
    gen, _ = _lookup(algorithm)
    return "segments" in inspect.signature(gen).parameters


def lp_segments(workers, nbytes, topology):
    """LP segments for a scaling study: the optimum k* at the largest P, kept at every P.

    :func:`~netsim.costmodel.optimal_segments` with alpha and beta of an LP
    broadcast of the largest P on the topology (:func:`~netsim.costmodel.alpha_beta`).

    Parameters
    ----------
    workers : sequence of int
        The values of P.
    nbytes : float
        Message size.
    topology : callable or networkx.Graph
        As for :func:`scale`.

    Examples
    --------
    >>> import networkx as nx
    >>> def star(hosts):  # hosts on one non-blocking switch, 10 GbE links of 1 us
    ...     G = nx.Graph()
    ...     G.add_nodes_from((f"host{i}" for i in range(hosts)), kind="host")
    ...     G.add_edges_from(((f"host{i}", "switch") for i in range(hosts)),
    ...                      bandwidth=1.25e9, latency=1e-6)
    ...     return G
    >>> lp_segments([2, 4, 64], 64e6, star)
    1260
    """
    P = max(workers)
    G = topology(ranks_for("lp", P)) if callable(topology) else topology
    alpha, beta = alpha_beta(G, trace=collectives.pipeline_broadcast(P, nbytes, 1))
    return optimal_segments(P, nbytes, alpha, beta)


def _accepts(func, **options):
    """The options ``func`` takes (by parameter name)."""
    params = inspect.signature(func).parameters
    return {k: v for k, v in options.items() if k in params}


def compare(algorithm, topology, P, nbytes, segments=None, gamma=0.0, placement=None,
            servers=1, saturation=True, transport="fluid"):
    """Simulate one collective and put its closed form and contention bound beside it.

    Alpha and beta for the closed form come from the topology
    (:func:`~netsim.costmodel.alpha_beta` over the pairs the trace uses: the
    largest path latency and the smallest bottleneck bandwidth), so the
    closed form is the time without contention. When simulation and closed
    form differ (relative gap above :data:`REL_TOL`) the record names the
    limiting link: the top of :meth:`~netsim.result.Result.bottlenecks`.

    Parameters
    ----------
    algorithm : str
        A key of :data:`NAMED_SCHEDULES`.
    topology : networkx.Graph or Network
        Needs a compute node per rank (``P + servers`` for ``"ps"``).
    P : int
        Ranks (workers for ``"ps"``), >= 1.
    nbytes : float
        Message size as the generator defines it.
    segments : int, optional
        LP segments; None picks :func:`~netsim.costmodel.optimal_segments` for
        the derived alpha and beta. Ignored by the other algorithms.
    gamma : float, optional
        Reduction cost, seconds per byte (ignored by broadcasts, allgathers
        and all-to-all, which reduce nothing).
    placement : sequence or dict, optional
        ``placement[r]`` is the node of rank r.
    servers : int, optional
        Parameter servers for ``"ps"``.
    saturation : bool, optional
        Also find the most saturated link (``top_link``, ``saturated_fraction``),
        which records every change of every link's load; False leaves both
        None, for callers that need only the times.
    transport : {"fluid", "tcp"}, optional
        The transport of the simulation (:func:`netsim.simulate`); the closed
        form is the fluid one.

    Returns
    -------
    dict
        ``algorithm``, ``collective`` (generator name), ``P``, ``ranks``,
        ``nbytes``, ``segments``, ``gamma``, ``servers``, ``topology`` (graph
        name), ``alpha``, ``beta``, ``messages``, ``simulated``,
        ``closed_form``, ``gap`` ((simulated - closed form) / closed form),
        ``contention_bound`` and ``bound_link`` (see
        :func:`~netsim.costmodel.contention_bound`, here read from the
        simulated link bytes), and ``limit`` (link
        ``"u->v"``), ``limit_peak_flows`` (most messages sharing it at once)
        and ``limit_saturated`` (seconds at >= 99 % of capacity) when they
        differ, else None; ``top_link`` (the most saturated link, ``"u<->v"``
        for an undirected graph's full-duplex edge, see
        :func:`netsim.analysis.saturation.link_saturation`; None without traffic) and
        ``saturated_fraction`` (its time with a direction at >= 99 % of
        capacity over the simulated time); both None with ``saturation=False``.

    Raises
    ------
    NetsimError
        For an unknown algorithm (naming the known ones).
    TraceError
        For P < 1, negative bytes, segments < 1, negative gamma.
    TopologyError
        For more ranks than compute nodes, or a bad placement.

    Examples
    --------
    >>> import networkx as nx
    >>> def star(hosts):  # hosts on one non-blocking switch, 10 GbE links of 1 us
    ...     G = nx.Graph()
    ...     G.add_nodes_from((f"host{i}" for i in range(hosts)), kind="host")
    ...     G.add_edges_from(((f"host{i}", "switch") for i in range(hosts)),
    ...                      bandwidth=1.25e9, latency=1e-6)
    ...     return G
    >>> r = compare("ring", star(4), 4, 1e6)
    >>> r["messages"], abs(r["gap"]) < 1e-9, r["limit"]
    (24, True, None)
    """
    gen, formula = _lookup(algorithm)
    P = check_int(P, "P", error=TraceError)
    n = check_real(nbytes, "nbytes", lo=0, error=TraceError)
    gamma = check_real(gamma, "gamma", lo=0, error=TraceError)
    servers = check_int(servers, "servers", error=TraceError)
    if segments is not None:
        segments = check_int(segments, "segments", error=TraceError)
    net = as_network(topology)
    opts = _accepts(gen, gamma=gamma, servers=servers)
    alpha = beta = None
    if "segments" in inspect.signature(gen).parameters:
        if segments is None:
            probe = gen(P, n, segments=1, **opts)  # same pairs, whatever the segments
            alpha, beta = alpha_beta(net, placement=placement, trace=probe)
            segments = optimal_segments(P, n, alpha, beta)
        opts["segments"] = segments
    else:
        segments = None
    trace = gen(P, n, **opts)
    if alpha is None:
        alpha, beta = alpha_beta(net, placement=placement, trace=trace)
    closed = formula(P, n, alpha=alpha, beta=beta, **_accepts(formula, **opts))
    result = simulate(trace, net, placement, link_series=saturation, transport=transport)
    sim = result.makespan
    if closed > 0:
        gap = (sim - closed) / closed
    else:
        gap = 0.0 if sim == 0 else math.inf
    bound = _contention_bound(result)
    record = {
        "algorithm": algorithm,
        "collective": gen.__name__,
        "P": P,
        "ranks": trace.ranks,
        "nbytes": n,
        "segments": segments,
        "gamma": opts.get("gamma", 0.0),
        "servers": opts.get("servers"),
        "topology": net.graph.graph.get("name", ""),
        "alpha": alpha,
        "beta": beta,
        "messages": trace.num_messages,
        "simulated": sim,
        "closed_form": closed,
        "gap": gap,
        "contention_bound": bound["seconds"],
        "bound_link": bound["link"],
        "limit": None,
        "limit_peak_flows": None,
        "limit_saturated": None,
    }
    record.update(top_link=None, saturated_fraction=None)
    if saturation:
        top = top_link(result, duplex=not net.graph.is_directed())
        record.update(top_link=top["top_link"], saturated_fraction=top["saturated_fraction"])
    if abs(gap) > REL_TOL:
        top = result.bottlenecks(1)
        if top:
            record.update(limit=top[0]["link"], limit_peak_flows=int(top[0]["peak_flows"]),
                          limit_saturated=float(top[0]["saturated"]))
    return record


def _contention_bound(result):
    """:func:`~netsim.costmodel.contention_bound` from a run's link bytes (no re-routing)."""
    lk = result.links
    names = [f"{s}->{d}" for s, d in zip(lk["src"], lk["dst"])]
    bound = busiest_link(lk["bytes"], lk["bandwidth"], names)
    return {"seconds": bound["seconds"], "link": bound["link"]}


_SCALE_KEYS = ("algorithm", "P", "ranks", "nbytes", "segments", "alpha", "beta", "simulated",
               "closed_form", "gap", "contention_bound", "limit", "top_link",
               "saturated_fraction")
TERMS = ("latency", "bandwidth", "fill", "contention")
"""Terms of a :func:`scale` record (see :func:`netsim.analysis.scaling_laws.collective_terms`)."""


def scale(algorithms, workers, nbytes, topology, segments=None, gamma=0.0, saturation=True,
          transport="fluid"):
    """Simulated and closed-form time of each algorithm at each P.

    Parameters
    ----------
    algorithms : str or sequence of str
        Keys of :data:`NAMED_SCHEDULES`.
    workers : sequence of int
        The values of P.
    nbytes : float
        Message size, fixed across P.
    topology : callable or networkx.Graph
        ``topology(hosts)`` builds the graph for ``hosts`` ranks (``P + 1``
        for ``"ps"``), e.g. ``topologies.star``; a graph is used as is.
    segments : int, optional
        LP segments, fixed across P; None picks the optimum at each P.
    gamma : float, optional
        Reduction cost, seconds per byte.
    saturation : bool, optional
        Find each point's most saturated link (see :func:`compare`).
    transport : {"fluid", "tcp"}, optional
        The transport of the simulations (:func:`compare`).

    Returns
    -------
    list of dict
        One record per (algorithm, P): ``algorithm``, ``P``, ``ranks``,
        ``nbytes``, ``segments``, ``alpha``, ``beta``, ``simulated``,
        ``closed_form``, ``gap``, ``contention_bound``, ``limit``,
        ``top_link`` and ``saturated_fraction`` (see :func:`compare`), and the
        terms of :data:`TERMS`: ``latency``, ``bandwidth`` and ``fill`` of the
        closed form (:func:`~netsim.analysis.scaling_laws.collective_terms`, k tuned to
        each P when ``segments`` is None) and ``contention`` (simulated minus
        closed form).

    Examples
    --------
    >>> import networkx as nx
    >>> def star(hosts):  # hosts on one non-blocking switch, 10 GbE links of 1 us
    ...     G = nx.Graph()
    ...     G.add_nodes_from((f"host{i}" for i in range(hosts)), kind="host")
    ...     G.add_edges_from(((f"host{i}", "switch") for i in range(hosts)),
    ...                      bandwidth=1.25e9, latency=1e-6)
    ...     return G
    >>> recs = scale(["mst", "lp"], [2, 4], 1e6, star, segments=4)
    >>> [(r["algorithm"], r["P"]) for r in recs]
    [('mst', 2), ('mst', 4), ('lp', 2), ('lp', 4)]
    """
    names = [algorithms] if isinstance(algorithms, str) else list(algorithms)
    for name in names:
        _lookup(name)
    records = []
    for name in names:
        for P in workers:
            P = check_int(P, "P", error=TraceError)
            G = topology(ranks_for(name, P)) if callable(topology) else topology
            rec = compare(name, G, P, nbytes, segments=segments, gamma=gamma,
                          saturation=saturation, transport=transport)
            terms = collective_terms(FORMULAS[name], P, rec["nbytes"], rec["alpha"], rec["beta"],
                                     segments=segments, gamma=rec["gamma"])
            records.append({**{k: rec[k] for k in _SCALE_KEYS},
                            **{k: terms[k] for k in TERMS[:3]},
                            "contention": (rec["simulated"] - rec["closed_form"]
                                           if abs(rec["gap"]) > REL_TOL else 0.0)})
    return records


def scale_terms(records):
    """The law of each term of each algorithm of :func:`scale` records (:func:`fit_terms`).

    The contention term is a residual of the simulated time: its noise floor
    is :data:`~netsim.analysis.scaling_laws.NOISE` times the largest simulated time, so
    a residual that moves the time by less than 0.1 % is ``"constant"``.

    Parameters
    ----------
    records : list of dict
        From :func:`scale`.

    Returns
    -------
    dict
        Algorithm -> term (:data:`TERMS`) -> :func:`~netsim.analysis.scaling_laws.fit_law`
        record; an algorithm with fewer than two distinct P has None.

    Examples
    --------
    >>> import networkx as nx
    >>> def star(hosts):  # hosts on one non-blocking switch, 10 GbE links of 1 us
    ...     G = nx.Graph()
    ...     G.add_nodes_from((f"host{i}" for i in range(hosts)), kind="host")
    ...     G.add_edges_from(((f"host{i}", "switch") for i in range(hosts)),
    ...                      bandwidth=1.25e9, latency=1e-6)
    ...     return G
    >>> laws = scale_terms(scale("lp", [2, 4, 8, 16], 64e6, star, saturation=False))["lp"]
    >>> laws["latency"]["law"], laws["bandwidth"]["law"], laws["contention"]["law"]
    ('P', 'constant', 'zero')
    """
    out = {}
    for name in dict.fromkeys(r["algorithm"] for r in records):
        rs = [r for r in records if r["algorithm"] == name]
        P = [r["P"] for r in rs]
        out[name] = (fit_terms(P, {k: [r[k] for r in rs] for k in TERMS},
                               totals={"contention": [r["simulated"] for r in rs]})
                     if len(set(P)) >= 2 else None)
    return out


def plot_scale(records, path, title=None, logy=False, level=0.5):
    """Plot time against P: simulated points as markers, closed forms as lines.

    Each algorithm's saturation point, the smallest P at which its most
    saturated link is at >= 99 % of capacity for more than ``level`` of the
    run (records with ``saturated_fraction``, see :func:`compare`), is
    circled.

    Parameters
    ----------
    records : list of dict
        From :func:`scale` (needs ``algorithm``, ``P``, ``simulated``,
        ``closed_form``).
    path : str or path-like
        Where to write the PNG.
    title : str, optional
    logy : bool, optional
        Logarithmic time axis.
    level : float, optional
        Saturated fraction that marks saturation.

    Returns
    -------
    str
        The path written.

    Examples
    --------
    >>> import os, tempfile
    >>> recs = [{"algorithm": "mst", "P": p, "simulated": t, "closed_form": t}
    ...         for p, t in [(2, 1.0), (4, 2.0), (8, 3.0)]]
    >>> out = plot_scale(recs, os.path.join(tempfile.mkdtemp(), "scale.png"))
    >>> os.path.getsize(out) > 0
    True
    """
    from netsim.drawing.plot import plot_series

    names = list(dict.fromkeys(r["algorithm"] for r in records))
    series = []
    for name in names:
        rows = sorted((r for r in records if r["algorithm"] == name), key=lambda r: r["P"])
        sat = saturation_point([r["P"] for r in rows],
                               [r.get("saturated_fraction") or 0.0 for r in rows], level=level)
        series.append({"label": name, "P": [r["P"] for r in rows],
                       "simulated": [r["simulated"] for r in rows],
                       "closed_form": [r["closed_form"] for r in rows], "saturation": sat["P"]})
    plot_series(series, path, title=title or "", xlabel="ranks P (log2 scale)", ylabel="time (s)",
                logy=logy, saturation_label=saturation_label(level))
    return path


def lp_be_ratio(P, sizes, topology, segments=None):
    """BE over LP broadcast time for increasing message sizes.

    LP broadcast moves about ``n beta`` once its pipeline is full, BE
    (scatter + allgather) ``2 (P - 1) / P n beta``, so the ratio tends to
    ``2 (P - 1) / P`` as n grows (the "up to 2x the bandwidth" claim).

    Parameters
    ----------
    P : int
        Ranks.
    sizes : sequence of float
        Message sizes, bytes.
    topology : networkx.Graph or Network
        With at least P compute nodes.
    segments : int, optional
        LP segments; None picks the optimum for each size.

    Returns
    -------
    list of dict
        Per size: ``nbytes``, ``segments``, ``lp`` and ``be`` (simulated
        seconds), ``ratio`` (be / lp) and ``limit`` (``2 (P - 1) / P``).

    Examples
    --------
    >>> import networkx as nx
    >>> def star(hosts):  # hosts on one non-blocking switch, 10 GbE links of 1 us
    ...     G = nx.Graph()
    ...     G.add_nodes_from((f"host{i}" for i in range(hosts)), kind="host")
    ...     G.add_edges_from(((f"host{i}", "switch") for i in range(hosts)),
    ...                      bandwidth=1.25e9, latency=1e-6)
    ...     return G
    >>> rows = lp_be_ratio(8, [1e6, 1e8], star(8))
    >>> rows[0]["ratio"] < rows[1]["ratio"] < rows[1]["limit"]
    True
    """
    net = as_network(topology)
    rows = []
    for n in sizes:
        lp = compare("lp", net, P, n, segments=segments, saturation=False)
        be = compare("be", net, P, n, saturation=False)
        rows.append({"nbytes": float(n), "segments": lp["segments"], "lp": lp["simulated"],
                     "be": be["simulated"], "ratio": be["simulated"] / lp["simulated"],
                     "limit": 2 * (P - 1) / P})
    return rows
