"""Scaling studies of a training paradigm: time per iteration against the worker count P.

For each P the paradigm's trace is obtained (:func:`studies.scaling.traces.traces`:
recorded at that P, or recorded once at a small P and projected with
:func:`workloads.plan.projection.project`), optionally resized to a real model
(:func:`workloads.models.resize`), simulated on the topology built for its
ranks, and put beside the alpha-beta closed form of the paradigm
(:func:`studies.scaling.closed_forms.closed_form`). :func:`study` adds speed-up,
efficiency, the saturation point (:func:`netsim.analysis.saturation.saturation_point`)
and scaling-law fits (:func:`netsim.analysis.collectives.fit_scaling`).

Definitions (see :mod:`netsim.analysis.saturation` for the saturation point)
----------------------------------------------------------------------------
* **Time per iteration**: makespan / iterations of the simulated trace.
* **Compute**, **exposed communication**, **idle**: per iteration, averaged
  over the worker ranks (:class:`netsim.Result` ``ranks`` columns).
* **Weak scaling** (the default): every worker keeps its per-worker batch, so
  an iteration processes P times the samples of one worker. ``T(1)`` is the
  compute time per iteration of one worker alone (no communication, no
  server); the throughput speed-up is ``S(P) = P T(1) / T(P)``, the
  efficiency ``E(P) = T(1) / T(P)``.
* **Strong scaling** (``strong=True``): the global batch is that of the
  smallest P studied, ``P0``: each worker's forward and backward compute is
  multiplied by ``P0 / P``; message sizes are unchanged (they are gradient- or
  model-sized for every dense paradigm). ``S(P) = T(1) / T(P)`` with ``T(1)``
  the compute of the whole global batch on one worker, ``E = S / P``.

Examples
--------
>>> from topologies import star
>>> st = study("ps-sync", [2, 4], star, iterations=2, dataset="iris")
>>> [r["P"] for r in st["records"]], st["records"][0]["top_link"]
([2, 4], 'host2<->switch')
"""

import math

import numpy as np

from netsim.comm import collectives
from netsim import costmodel
from netsim.analysis.collectives import fit_scaling
from netsim.checks import check_int
from netsim.comm.library import check_applies, check_placed, mpich_wire, plan_names
from netsim.network.compiled import as_network
from netsim.trace.perturb import perturb
from netsim.analysis.scaling_laws import K_LIMIT, REL_TOL, fit_terms
from netsim.result import simulate
from netsim.analysis.saturation import crossing, saturation_point, speedup, top_link
from netsim.trace.core import COMPUTE
from netsim.units import parse_shape
from workloads.plan.closed import worker_compute, worker_mask
from workloads.errors import WorkloadError
from workloads.plan.phases import Phases

from studies.scaling.closed_forms import closed_form
from studies.scaling.traces import base_recording, check_workers, traces
from studies.registry import PARADIGMS
from studies.scaling.study_run import check_study_options
from studies.scaling.run_length import check_training
from studies.scaling.trace_size import PROBE, check_ops, grown_ops, grown_ranks, projection_ops
from studies.scaling.throughput import throughput
from studies.scaling.windows import combine, plan_windows, sampled_windows, trend

__all__ = ["study", "sweep_point", "check_sweep_point", "plot_study", "tuned_segments", "closed_terms",
           "nccl_closed_form"]


def tuned_segments(trace, topology):
    """The optimum k* of an allreduce-paradigm trace's linear pipeline on a topology.

    :func:`netsim.costmodel.optimal_segments` for the trace's P, its gradient
    bytes n (the bytes of an iteration over ``2 (P - 1)``) and the alpha and
    beta of an LP broadcast over its workers on ``topology``.

    Parameters
    ----------
    trace : Trace
        Of the ``allreduce`` paradigm.
    topology : networkx.Graph

    Returns
    -------
    int or None
        k*, or None when the trace's collective is not ``lp``.

    Examples
    --------
    >>> from topologies import star
    >>> from studies.scaling.traces import record_at
    >>> t = traces("allreduce", [8], iterations=1, model="resnet50", collective="lp")[0]
    >>> tuned_segments(t, star(8, bandwidth=1.25e9, latency=1e-6))  # sqrt(6 n beta / alpha)
    495
    >>> tuned_segments(record_at("allreduce", 4, iterations=1), star(4)) is None
    True
    """
    md = trace.metadata
    if md.get("paradigm") != "allreduce" or md.get("hyper", {}).get("collective") != "lp":
        return None
    P = int(md.get("workers", trace.ranks))
    if P < 2:
        return 1
    wire = mpich_wire(trace)
    n = float(wire.size[wire.is_message].sum()) / max(trace.num_iterations, 1) / (2 * (P - 1))
    alpha, beta = costmodel.alpha_beta(topology, trace=collectives.pipeline_broadcast(P, n, 1))
    return costmodel.optimal_segments(P, n, alpha, beta)


def closed_terms(trace, cf, tuned=False):
    """The closed-form communication of one iteration split into latency, bandwidth and fill.

    As :func:`netsim.analysis.scaling_laws.collective_terms` does for a collective:
    latency is the paradigm's closed form with beta = 0, bandwidth with alpha
    = 0; with ``tuned`` (LP segments tuned to P) the limits are those of the
    tuned pipeline (k = 1 and k -> infinity) and the fill is the rest. Where
    NCCL ran the collectives (:func:`nccl_closed_form`), latency is NCCL's
    latency of the calls and bandwidth the rest of its model's time.

    Parameters
    ----------
    trace : Trace
    cf : dict
        Its :func:`studies.scaling.closed_forms.closed_form` (with ``alpha`` and ``beta``).
    tuned : bool, optional

    Returns
    -------
    dict or None
        ``compute`` (workers' compute plus server time), ``latency``,
        ``bandwidth``, ``fill``; None without a closed form.

    Examples
    --------
    >>> from topologies import star
    >>> from studies.scaling.traces import record_at
    >>> t = record_at("allreduce", 4, iterations=1, dataset="iris")
    >>> G = star(4, bandwidth=1.25e9, latency=1e-6)
    >>> terms = closed_terms(t, closed_form(t, G))
    >>> terms["latency"] == 2 * 3 * 2e-6, terms["fill"]
    (True, 0.0)
    """
    if cf["time"] is None:
        return None
    if "nccl_latency" in cf:   # NCCL's model: its latency, and the rest is bandwidth
        return {"compute": cf["compute"] + cf["server"], "latency": cf["nccl_latency"],
                "bandwidth": cf["communication"] - cf["nccl_latency"], "fill": 0.0}
    entry = PARADIGMS[trace.metadata["paradigm"]]
    hyper = trace.metadata.get("hyper", {})

    def comm(k, alpha, beta):
        t = trace if k is None else trace.with_metadata(hyper={**hyper, "segments": k})
        return entry.closed_form(t, alpha, beta, None)["communication"]

    lat = comm(1 if tuned else None, cf["alpha"], 0.0)
    bw = comm(K_LIMIT if tuned else None, 0.0, cf["beta"])
    fill = cf["communication"] - lat - bw
    if abs(fill) <= REL_TOL * max(cf["communication"], 0.0):
        fill = 0.0
    return {"compute": cf["compute"] + cf["server"], "latency": lat, "bandwidth": bw,
            "fill": fill}


def _strong(trace, factor):
    """Worker forward/backward compute multiplied by ``factor`` (a smaller per-worker batch)."""
    if factor == 1.0:
        return trace
    worker = worker_mask(trace)
    names = np.array(list(trace.tags) + [""])
    tag = names[trace.tag]
    sel = (trace.kind == COMPUTE) & worker[trace.rank] & np.isin(tag, ("forward", "backward"))
    flops = np.where(sel, trace.flops * factor, trace.flops)
    dur = np.where(sel & ~np.isnan(trace.duration), trace.duration * factor, trace.duration)
    return trace.replace(duration=dur, flops=flops)


def _link_ranks(link, result, trace):
    """``"server rank 16"``-style description of the ranks placed on a link's end nodes."""
    if not link:
        return None
    ends = set(link.replace("<->", "->").split("->"))
    roles = trace.metadata.get("roles")
    if roles is None or len(roles) != trace.ranks:
        roles = ["worker" if w else "server" for w in worker_mask(trace)]
    names = [f"{roles[r]} rank {r}" for r, node in enumerate(result.ranks["node"]) if node in ends]
    return ", ".join(names[:3]) + (", ..." if len(names) > 3 else "") if names else None


def _measure(trace, G, perturbation=None, library="auto", transport="fluid"):
    """Simulate one point of a study: its result, iterations, top link and closed form.

    With a ``perturbation`` (:func:`netsim.trace.perturb.perturb` options) the perturbed
    trace is simulated; the closed form stays that of the trace as recorded.
    ``library`` expands the trace's collectives (:mod:`netsim.comm.library`); where
    NCCL ran them, the closed form's communication is NCCL's own (:func:`nccl_closed_form`).
    ``transport`` is the simulation's (:func:`netsim.simulate`).
    """
    if trace.num_collectives:   # named as the option, not as the first collective's op
        check_placed(library, G, trace.ranks)
    replayed = perturb(trace, **perturbation) if perturbation else trace
    net = as_network(G)  # one route cache for the replay and the closed form
    res = simulate(replayed, net, link_series=True, library=library, transport=transport)
    return (res, max(trace.num_iterations, 1), top_link(res, duplex=not net.directed),
            nccl_closed_form(closed_form(trace, net), res, trace))


def nccl_closed_form(cf, result, trace):
    """The closed form with NCCL's cost where NCCL ran every collective of the replay.

    NCCL's tuning model (:func:`netsim.comm.nccl.tuning.algo_time`, a transcription of
    tuning.cc) is NCCL's own closed form of a call: the communication per
    iteration becomes the sum of its predictions for the iteration's calls, in
    place of the Hockney cost of MPICH's schedules (``nccl_latency``: the part
    that is NCCL's latency, for :func:`closed_terms`). Unchanged where MPICH ran
    any collective, or without a closed form.

    Parameters
    ----------
    cf : dict
        :func:`studies.scaling.closed_forms.closed_form` of ``trace``.
    result : netsim.Result
        Its replay.
    trace : netsim.Trace

    Returns
    -------
    dict

    Examples
    --------
    >>> import networkx as nx
    >>> from netsim import TraceBuilder, simulate
    >>> G = nx.Graph(); G.add_nodes_from(["g0", "g1"], kind="gpu", model="V100", sm=70)
    >>> G.add_edge("g0", "g1", bandwidth=25e9, latency=0.0)
    >>> b = TraceBuilder(2); _ = b.collective("allreduce", [0, 1], 10**9); t = b.build()
    >>> r = simulate(t, G)
    >>> cf = {"compute": 0.0, "server": 0.0, "communication": 1.0, "time": 1.0, "formula": "x"}
    >>> out = nccl_closed_form(cf, r, t)
    >>> bool(out["communication"] == r.collectives["tuning_time"][0]), out["formula"]
    (True, "x; communication: NCCL's tuning model")
    """
    c = result.collectives
    lib = c["library"][c["library"] != "none"]
    if cf.get("time") is None or not len(lib) or not (lib == "nccl").all():
        return cf
    ran = c["library"] == "nccl"
    ops = c["op"][ran].astype(np.int64)
    niter = max(trace.num_iterations, 1)

    def per_iteration(values):
        return float(np.bincount(trace.iteration[ops], weights=values, minlength=niter).mean())

    comm = per_iteration(c["tuning_time"][ran])
    return {**cf, "communication": comm, "nccl_latency": per_iteration(c["latency"][ran]),
            "time": cf["compute"] + (cf.get("server") or 0.0) + comm,
            "formula": f"{cf['formula']}; communication: NCCL's tuning model"}


def _point_options(point):
    """A sweep point's paradigm options, perturbation, library and transport."""
    import json

    opts = json.loads(point["options"]) if point.get("options") else {}
    perturbation = {k: opts.pop(k) for k in ("straggler", "jitter") if k in opts}
    if perturbation:
        perturbation["seed"] = int(point["seed"])
    library = opts.pop("library", "auto")
    transport = opts.pop("transport", "fluid")
    if point.get("hidden"):
        opts["hidden"] = parse_shape(str(point["hidden"]), "hidden")
    return opts, perturbation, library, transport


def _record_point(point, opts, workers):
    """The recording a sweep point's paradigm makes at ``workers`` workers."""
    import workloads

    return workloads.record(point["name"], dataset=point["dataset"], workers=workers,
                            epochs=int(point["epochs"]), seed=int(point["seed"]), **opts)


def check_sweep_point(point, topology):
    """Refuse, before a sweep starts, a paradigm point too large to record and replay.

    As :func:`study` does beyond :data:`studies.scaling.trace_size.PROBE`: the point's
    paradigm is recorded at the probe worker counts, its ops (collectives
    expanded) grown to the point's P (:func:`studies.scaling.trace_size.grown_ops`) and
    checked with the topology (:func:`studies.scaling.trace_size.check_ops`: memory and
    CPU time). A point within the probe sizes passes unchecked.

    Parameters
    ----------
    point : dict
        A paradigm point of :func:`studies.sweep.config.sweep_points`.
    topology : str
        The point's topology spec.

    Raises
    ------
    NetsimError
        With the estimate, when the point would not fit or take too long.

    Examples
    --------
    >>> pt = {"name": "ps-sync", "P": 2**21, "hidden": None, "dataset": "iris", "epochs": 1,
    ...       "seed": 0, "options": None}
    >>> check_sweep_point(pt, "star")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    netsim.errors.NetsimError: ps-sync at P = 2097152 (grown from its recordings at P = 8, 16) would take about ...
    """
    P = int(point["P"])
    if P <= PROBE[-1]:
        return
    opts = _point_options(point)[0]
    probe = [_record_point(point, opts, p).trace for p in PROBE]
    counts = [projection_ops(t, t.ranks) for t in probe]
    ranks = grown_ranks([t.ranks for t in probe], P)
    check_ops(grown_ops(counts, P), f"{point['name']} at P = {P} (grown from its recordings at "
              f"P = {', '.join(map(str, PROBE))})", instead="a smaller P", topology=topology,
              ranks=ranks, small=True, component=_component(probe, ranks))


def _component(probe, ranks):
    """Flows a small-event instant of the replay re-rates: every rank's, when the traces hold
    collectives (their rings chain the ranks through shared links), else a few (0).

    Examples
    --------
    >>> from netsim import TraceBuilder
    >>> b = TraceBuilder(2); _ = b.collective("allreduce", [0, 1], 1000)
    >>> _component([b.build()], 1024)
    1024
    """
    return ranks if any(t.num_collectives for t in probe) else 0


def sweep_point(point, topology):
    """Run one paradigm point of a sweep (:mod:`studies.sweep.run`): record, simulate, measure.

    The runner the CLI gives :func:`studies.sweep.run.run_sweep` for ``"paradigm"``
    points: the paradigm is trained at P workers for the point's epochs, its
    whole trace simulated on ``topology(ranks)``, and measured as each point
    of :func:`study` is. An ``allreduce`` point with ``collective: lp`` and no
    ``segments`` option has its schedule rebuilt with k* of
    :func:`tuned_segments`.

    Parameters
    ----------
    point : dict
        A paradigm point of :func:`studies.sweep.config.sweep_points`: ``name``,
        ``P``, ``hidden``, ``dataset``, ``epochs``, ``seed``, ``options``
        (JSON text or None; its ``straggler`` and ``jitter`` entries perturb the
        trace at replay time, :func:`netsim.trace.perturb.perturb` with the point's seed;
        its ``library`` entry expands the collectives and its ``transport`` entry
        is the simulation's, :func:`netsim.simulate`).
    topology : callable
        ``topology(ranks)`` builds the graph for the trace's ranks.

    Returns
    -------
    dict
        Result columns of a sweep row: ``ranks``, ``simulated`` (seconds per
        iteration), ``closed_form`` (:func:`studies.scaling.closed_forms.closed_form`, None without one),
        ``gap``, ``makespan``, ``iterations``, ``messages``, ``accuracy``,
        ``top_link`` and ``saturated_fraction``.

    Examples
    --------
    >>> from topologies import star
    >>> row = sweep_point({"name": "ps-sync", "P": 2, "hidden": "8", "dataset": "iris",
    ...                    "epochs": 1, "seed": 0, "options": None}, star)
    >>> row["ranks"], row["simulated"] == row["makespan"] / row["iterations"]
    (3, True)
    """
    opts, perturbation, library, transport = _point_options(point)
    run = _record_point(point, opts, int(point["P"]))
    trace = run.trace
    G = topology(trace.ranks)
    k = tuned_segments(trace, G) if "segments" not in opts else None
    if k is not None and k != trace.metadata["hyper"].get("segments"):
        # LP segments tuned to this P: the same run's schedule with k* segments.
        from workloads.plan import projection

        hyper = {**trace.metadata["hyper"], "segments": k}
        trace = projection.project(trace.with_metadata(hyper=hyper), int(point["P"]),
                                   iterations=max(trace.num_iterations, 1))
    res, iterations, top, cf = _measure(trace, G, perturbation, library, transport)
    per_iter = res.makespan / iterations
    closed = cf["time"]
    gap = (per_iter - closed) / closed if closed is not None and closed > 0 else None
    return {"ranks": trace.ranks, "simulated": per_iter, "closed_form": closed, "gap": gap,
            "makespan": res.makespan, "iterations": iterations,
            "messages": mpich_wire(trace).num_messages, "accuracy": run.accuracy,
            "top_link": top["top_link"], "saturated_fraction": top["saturated_fraction"]}


def _fit(P, values):
    if len(P) < 2 or any(v is None or not v > 0 for v in values):
        return None
    return fit_scaling(P, values)


def study(source, workers, topology, model=None, device_flops=None, iterations=None, seed=0,
          dataset="digits", strong=False, level=0.5, base_workers=4, batch=None, perturbation=None,
          library="auto", transport="fluid", force=False, expect=None, **options):
    """Simulate a paradigm at each P beside its closed form; find where it saturates.

    Time per iteration is measured over the window of the run that represents it
    (:mod:`studies.scaling.windows`, from the paradigm's declared phases,
    :mod:`workloads.plan.phases`): the steady state after any warm-up, in whole
    periods, for a paradigm whose iterations are alike (DGC, model averaging,
    ps-sync, ...); the whole recorded run for one that replays its recording's
    per-iteration traffic (PF, Slim-DP). A warm-up is simulated and reported
    apart (``phases`` of each record). The closed forms are computed over the
    same window (``closed_form_note`` says which).

    Parameters
    ----------
    source : str or Trace or path
        See :func:`studies.scaling.traces.traces`.
    workers : sequence of int
        Strictly increasing worker counts.
    topology : callable or networkx.Graph
        ``topology(ranks)`` builds the graph for a trace's ranks (workers and
        servers), e.g. :func:`topologies.star`; a graph is used as is.
    model : str, optional
        Resize the traces to this model (:func:`workloads.models.resize`).
    device_flops : float, optional
        FLOP/s of the compute ops (default: each trace's metadata).
    iterations : int, optional
        Iterations of the window (:func:`studies.scaling.windows.plan_windows`; default: 3
        in whole periods after the warm-up, or one recorded epoch of a paradigm
        that is not alike). A paradigm that is not alike is recorded long enough
        to hold its window.
    seed, dataset, base_workers, batch, **options
        See :func:`studies.scaling.traces.traces`.
        An option bounded by the run (:data:`workloads.option_ranges.RUN_BOUNDS`) past
        the run the study stands for is refused before any recording
        (:func:`studies.scaling.study_run.check_study_options`).
    strong : bool
        Strong scaling (see the module docstring); weak by default.
    level : float
        Saturated fraction of the iteration that counts as saturation.
    perturbation : dict, optional
        :func:`netsim.trace.perturb.perturb` options (``straggler``, ``jitter``,
        ``speed``, ``seed``) applied to each trace before it is simulated; the
        closed forms and ``T1`` stay those of the unperturbed trace.
    library : {"auto", "mpich", "nccl"}, optional
        The communication library of the replays (:func:`netsim.simulate`);
        ``library`` in the result.
    transport : {"fluid", "tcp"}, optional
        The transport of the replays (:func:`netsim.simulate`); ``transport``
        in the result when it is not the default.

    force : bool, optional
        Go on past the memory estimate: by default a P beyond
        :data:`studies.scaling.trace_size.PROBE` is refused before any simulation when the
        trace, grown from the paradigm's traces at the probe P
        (:func:`studies.scaling.trace_size.grown_ops`), and the topology would not fit in the
        memory available, or the replay would take more than
        :data:`studies.scaling.trace_size.TIME_LIMIT` of CPU (:func:`studies.scaling.trace_size.check_ops`).
    expect : callable, optional
        Called once (unless ``force``) as ``expect(seconds)`` with the CPU seconds those
        checks priced (the points beyond the probe P, summed; 0 when there are none) after
        every one of them passed and before any point is simulated: how a command announces
        long work (:func:`studies.cli.console.expect`).

    Returns
    -------
    dict
        ``paradigm``, ``workers``, ``strong``, ``T1`` (seconds), ``records``
        (one per P: ``P``, ``ranks``, ``iterations``, ``bytes_per_iteration``,
        ``time``, ``compute``, ``exposed``, ``idle``, ``closed_form``,
        ``closed_compute``, ``closed_server``, ``closed_communication``, ``speedup``,
        ``efficiency``, ``closed_speedup``, ``top_link``, ``top_link_ranks``
        (e.g. ``"server rank 16"``: the ranks on the link's end nodes),
        ``saturated_fraction``, ``top_bandwidth``, ``samples_per_s``,
        ``updates_per_s``, ``target_updates``, ``time_to_target`` (of the
        replay, :func:`studies.scaling.throughput.throughput`; None where the trace has
        no server updates), ``source``, ``plans`` (how the
        collectives ran, :func:`netsim.comm.library.plan_names`) and ``phases`` (the
        phases reported apart: ``phase``, ``start``, ``stop``, ``simulated`` (the
        ``[start, iterations]`` simulated), ``time``, ``compute``, ``exposed``,
        ``idle``, ``closed_form``, ``closed_communication``; empty without a
        warm-up; for a run without a steady state also each whole recorded epoch and
        the two halves of the window after its warm-up) and, for such a run,
        ``trend`` (the relative change of time per iteration per recorded epoch,
        :func:`studies.scaling.windows.trend`, or None)), ``window`` (of :func:`studies.scaling.windows.plan_windows`: ``start``,
        ``stop``, ``iterations``, ``phase``, ``period``, ``cuts_period``, ``what``),
        ``declared`` (the paradigm's :class:`workloads.plan.phases.Phases` as a dict),
        ``warnings`` (sentences: a window that cuts a period, one beyond the
        recording), ``library``, ``saturation`` (from
        :func:`netsim.analysis.saturation.saturation_point`), ``closed_form_crossing``
        (the P at which the closed-form communication reaches the closed-form
        compute plus server time, interpolated linearly in P, exact when both
        are linear in P as for ps-sync; None if it does not within the
        range, or communication already exceeds compute at the smallest P),
        ``closed_form_regime`` (``"communication > compute at every P"``,
        ``"compute > communication at every P"`` or None), ``fits`` (curve -> :func:`netsim.analysis.collectives.fit_scaling` record
        or None), ``terms`` (term -> :func:`netsim.analysis.scaling_laws.fit_law` record
        of the closed form's compute (workers'), server, latency, bandwidth and
        fill terms, each
        record's ``closed_latency``, ``closed_bandwidth``, ``closed_fill``, see
        :func:`closed_terms`; None without a closed form) and
        ``closed_form_note``; ``closed_form_gaps`` (only when there are any): the P where the simulation
        is more than :data:`GAP` from the closed form (``P``, ``gap`` = simulated /
        closed form - 1, ``why``: the paradigm's reason from its closed form, and
        ``detail``: what in this P's trace, both None where the paradigm gives
        none). Each record's ``segments`` is the LP segment
        count of an ``allreduce`` paradigm with ``collective=lp`` (tuned to
        each P by :func:`tuned_segments` unless ``segments`` is among the
        options), else None.

    Examples
    --------
    >>> from topologies import star
    >>> st = study("allreduce", [2, 4], star, iterations=1, dataset="iris")
    >>> st["records"][1]["efficiency"] < 1, st["fits"]["time"]["law"] is not None
    (True, True)

    DGC's steady state, after its warm-up of four recorded epochs (4 steps each on
    Iris at P0 = 4), the warm-up apart:

    >>> st = study("dgc", [4], star, dataset="iris")
    >>> st["window"]["start"], [p["phase"] for p in st["records"][0]["phases"]]
    (16, ['warm-up', 'steady'])
    """
    workers = check_workers(workers)
    if iterations is not None:
        iterations = check_int(iterations, "iterations", error=WorkloadError)
    if not force:   # a window too long to record refused before it is, as the CLI does
        check_training(options, iterations=iterations,
                       workers=PROBE[-1] if workers[-1] > PROBE[-1] else base_workers)
    # an option past the run the study stands for, as `netsim record` refuses it
    check_study_options(source, workers, iterations, dataset, model, batch, base_workers,
                        **options)
    if device_flops is not None and not (isinstance(device_flops, (int, float))
                                         and math.isfinite(device_flops) and device_flops > 0):
        raise WorkloadError(f"device_flops must be a number > 0, got {device_flops!r}")
    if batch is not None:
        batch = check_int(batch, "batch", error=WorkloadError)
    # LP segments tuned to each P (k*) unless the user fixed them.
    tune = "segments" not in options

    def retune(P, t):
        if not tune:
            return None
        k = tuned_segments(t, topology(t.ranks) if callable(topology) else topology)
        return None if k is None or k == t.metadata["hyper"].get("segments") else {"segments": k}

    base = base_recording(source, seed, dataset, model, batch, base_workers, **options)
    named = f"{source}'s trace" if isinstance(source, str) and source in PARADIGMS else "the trace"
    if base is not None:   # before the probes and replays: a library that would expand nothing
        check_applies(library, base, named)
    declared = (PARADIGMS[base.metadata["paradigm"]].phases(base)
                if base is not None and base.metadata.get("paradigm") in PARADIGMS
                else Phases())
    plan = plan_windows(declared, iterations, base.num_iterations if base is not None else 1)
    windows = sampled_windows(plan)
    stop = max(s + n for s, n in windows)
    if base is not None and not declared.alike and stop > base.num_iterations:
        if isinstance(source, str) and source in PARADIGMS:   # record the window's iterations
            base = base_recording(source, seed, dataset, model, batch, base_workers,
                                  iterations=stop, **options)
        else:
            plan["warnings"].append(
                f"the window ends at iteration {stop}, beyond the {base.num_iterations} "
                "iterations recorded: the projection repeats the recording's last epoch")
    seconds = 0.0  # of the points beyond the probe sizes, priced here
    if not force and workers[-1] > PROBE[-1]:
        # probed over a few of the window's iterations, the counts scaled to all of it: a
        # window of 10^6 iterations (ps-async's n_push=1000000) was built whole at each
        # probe size, minutes before any estimate
        n = min(windows[0][1], PROBE_ITERATIONS)
        probe = traces(base if base is not None else source, list(PROBE), iterations=n,
                       seed=seed, dataset=dataset, model=model, batch=batch,
                       base_workers=base_workers, start=windows[0][0], **options)
        counts = [projection_ops(t, t.ranks) * windows[0][1] / n for t in probe]
        for P in workers:
            if P > PROBE[-1]:
                ranks = grown_ranks([t.ranks for t in probe], P)
                seconds += check_ops(grown_ops(counts, P), f"{source} at P = {P} (grown from its "
                                     f"traces at P = {', '.join(map(str, PROBE))})",
                                     instead="a smaller P", topology=topology, ranks=ranks,
                                     small=True,   # compute ops desynchronise them
                                     component=_component(probe, ranks))["seconds"]
    if expect is not None and not force:
        expect(seconds)
    figures = {}
    for start, n in windows:
        ts = traces(base if base is not None else source, workers, iterations=n, seed=seed,
                    dataset=dataset, model=model, batch=batch, base_workers=base_workers,
                    device_flops=device_flops, retune=retune, start=start, **options)
        check_applies(library, ts[0], named)   # recorded at every P: no base to check before
        figures[(start, n)] = [_point(_strong(t, workers[0] / P) if strong else t, topology,
                                      perturbation, library, tune, transport)
                               for P, t in zip(workers, ts)]
    head = figures[windows[0]]
    T1 = head[0].pop("_T1") * (workers[0] if strong else 1)
    records = []
    for i, P in enumerate(workers):
        r = {k: v for k, v in head[i].items() if not k.startswith("_")}
        at = {w: f[i] for w, f in figures.items()}
        r["phases"] = [{"phase": p["phase"], "start": p["start"], "stop": p["stop"],
                        "simulated": [[s, n] for s, n, _ in p["samples"]],
                        **combine(p["samples"], at, PHASE_FIGURES)} for p in plan["phases"]]
        if "trend" in plan["window"]:   # a run without a steady state: how it drifts
            r["trend"] = trend(r["phases"], plan["window"])
        records.append({"P": P, **r})
    note = head[0]["_note"]
    note = f"{note}; over {plan['window']['what']}" if note else note
    gaps = [{"P": P, "gap": r["time"] / r["closed_form"] - 1.0,
             **(head[i]["_gap"] or {"why": None, "detail": None})}
            for i, (P, r) in enumerate(zip(workers, records))
            if r["closed_form"] and abs(r["time"] / r["closed_form"] - 1.0) > GAP]
    return {"paradigm": head[0]["_paradigm"], "workers": workers, "strong": strong,
            "model": model, "T1": T1, "records": records, "library": library,
            **({"transport": transport} if transport != "fluid" else {}),
            "window": plan["window"], "declared": declared._asdict(),
            "warnings": plan["warnings"],
            **({"perturbation": dict(perturbation)} if perturbation else {}),
            **_summary(workers, records, T1, strong, level), "closed_form_note": note,
            **({"closed_form_gaps": gaps} if gaps else {})}


#: Iterations of a window the probe traces are built over (:func:`study`, beyond
#: :data:`studies.scaling.trace_size.PROBE`): an estimate of the window's ops, scaled to its
#: length, as a window's iterations in whole periods are alike.
PROBE_ITERATIONS = 16

#: The relative gap between simulation and closed form beyond which a study lists the P
#: with the paradigm's reason (``closed_form_gaps``).
GAP = 0.05

#: The figures of a phase (:func:`study`), each per iteration.
PHASE_FIGURES = ("time", "compute", "exposed", "idle", "closed_form", "closed_communication")


def _point(t, topology, perturbation, library, tune, transport="fluid"):
    """The per-iteration figures of one simulated window trace at one P (a record of
    :func:`study` without ``P``, speed-up and phases; keys with ``_`` for the study)."""
    G = topology(t.ranks) if callable(topology) else topology
    res, nit, top, cf = _measure(t, G, perturbation, library, transport)
    worker = worker_mask(t)
    lp = t.metadata.get("hyper", {}).get("collective") == "lp"
    terms = closed_terms(t, cf, tuned=tune and lp) or {}
    rate = throughput(t, res) or {}
    return {
        "ranks": t.ranks, "iterations": nit,
        "segments": t.metadata["hyper"].get("segments") if lp else None,
        "closed_latency": terms.get("latency"), "closed_bandwidth": terms.get("bandwidth"),
        "closed_fill": terms.get("fill"),
        "bytes_per_iteration": mpich_wire(t).total_bytes / nit,
        "time": res.makespan / nit,
        "compute": float(res.ranks["compute"][worker].mean()) / nit,
        "exposed": float(res.ranks["exposed_communication"][worker].mean()) / nit,
        "idle": float(res.ranks["idle"][worker].mean()) / nit,
        "closed_form": cf["time"], "closed_compute": cf["compute"],
        "closed_server": cf["server"], "closed_communication": cf["communication"],
        "top_link": top["top_link"],
        "top_link_ranks": _link_ranks(top["top_link"], res, t),
        "saturated_fraction": top["saturated_fraction"],
        "top_bandwidth": top["top_bandwidth"],
        "samples_per_s": rate.get("samples_per_s"), "updates_per_s": rate.get("updates_per_s"),
        "target_updates": rate.get("target_updates"),
        "time_to_target": rate.get("time_to_target"),
        "source": t.metadata.get("source"),
        "plans": plan_names(res.collectives),
        "_T1": worker_compute(t, None), "_note": cf["reason"] or cf["formula"],
        "_gap": cf.get("gap"),
        "_paradigm": t.metadata.get("paradigm"),
    }


def _summary(Ps, records, T1, strong, level):
    """Speed-up and efficiency (into the records), saturation, closed-form crossing,
    regime, fits and term laws of a study's records."""
    sp, eff = speedup(Ps, [r["time"] for r in records], T1, strong=strong)
    have_cf = all(r["closed_form"] for r in records)
    csp = speedup(Ps, [r["closed_form"] for r in records], T1, strong=strong)[0] if have_cf else None
    for i, r in enumerate(records):
        r["speedup"], r["efficiency"] = sp[i], eff[i]
        r["closed_speedup"] = csp[i] if csp else None
    saturation = saturation_point(Ps, [r["saturated_fraction"] for r in records],
                                  [r["top_link"] for r in records],
                                  times=[r["time"] for r in records], level=level, strong=strong)
    cross = None
    if have_cf:
        diff = [r["closed_communication"] - r["closed_compute"] - r["closed_server"]
                for r in records]
        cross = crossing(Ps, diff, 0.0, log_x=False)
        if diff[0] >= 0:
            cross = None  # communication already exceeds compute at the smallest P
    regime = None
    if have_cf and cross is None:
        regime = ("communication > compute at every P" if diff[0] >= 0
                  else "compute > communication at every P")
    curves = {"time": [r["time"] for r in records],
              "closed_form": [r["closed_form"] for r in records],
              "compute": [r["compute"] for r in records],
              "exposed": [r["exposed"] for r in records]}
    if saturation["reason"] == "link":
        saturation["link_ranks"] = records[Ps.index(saturation["P"])]["top_link_ranks"]
    return {"saturation": saturation, "closed_form_crossing": cross,
            "closed_form_regime": regime,
            "fits": {k: _fit(Ps, v) for k, v in curves.items()},
            "terms": (fit_terms(Ps, {
                "compute": [r["closed_compute"] for r in records],
                "server": [r["closed_server"] for r in records],
                "latency": [r["closed_latency"] for r in records],
                "bandwidth": [r["closed_bandwidth"] for r in records],
                "fill": [r["closed_fill"] for r in records]})
                if have_cf and len(set(Ps)) >= 2 else None)}


#: Paradigm -> what its closed form's compute term is, for the legend (None: the others').
_COMPUTE_TERM = {None: "the busiest worker's", "ringtmp": "the pipeline's critical path: every "
                 "stage's forward and backward"}


def plot_study(st, path, title=None, logy=True, topology=None):
    """Time per iteration, compute and exposed communication against P, saturation marked.

    Markers are simulated, lines closed forms, each in the legend under the name
    of what it draws (the closed form's communication term, all of its
    communication, beside the simulated exposed communication; its compute term
    beside the simulated compute per worker). The default title names the
    paradigm, the model, the scaling and, if given, the ``topology`` spec.

    Parameters
    ----------
    st : dict
        A :func:`study`.
    path : str or path-like
        The PNG to write.
    title : str, optional
        The figure's title (default: paradigm, model, scaling, topology).
    logy : bool
        Logarithmic time axis.
    topology : str, optional
        The topology spec, named in the default title.

    Examples
    --------
    >>> import os, tempfile
    >>> from topologies import star
    >>> st = study("ps-sync", [2, 4], star, iterations=1, dataset="iris")
    >>> p = plot_study(st, os.path.join(tempfile.mkdtemp(), "ps.png"))
    >>> os.path.getsize(p) > 0
    True
    """
    from netsim.analysis.saturation import plot_scaling

    recs = st["records"]
    cf = all(r["closed_form"] for r in recs)
    term = _COMPUTE_TERM.get(st["paradigm"], _COMPUTE_TERM[None])
    series = [{"label": "time per iteration, simulated", "closed_label":
               "time per iteration, closed form", "simulated": [r["time"] for r in recs],
               "closed_form": [r["closed_form"] for r in recs] if cf else None,
               "saturation": st["saturation"]["P"]},
              {"label": "compute per worker, simulated (mean over workers)",
               "closed_label": f"closed form's compute term ({term})",
               "simulated": [r["compute"] for r in recs],
               "closed_form": [r["closed_compute"] for r in recs] if cf else None},
              {"label": "exposed communication per worker, simulated (mean over workers)",
               "closed_label": "closed form's communication term (all of it, none hidden)",
               "simulated": [r["exposed"] for r in recs],
               "closed_form": [r["closed_communication"] for r in recs] if cf else None}]
    if logy:  # a log axis cannot show zeros
        for s in series:
            if any(v <= 0 for v in s["simulated"]) or (s["closed_form"] and
                                                        any(v <= 0 for v in s["closed_form"])):
                logy = False
    title = title or (f"{st['paradigm']}" + (f" ({st['model']})" if st.get("model") else "")
                      + (", strong scaling" if st["strong"] else ", weak scaling")
                      + (f" on {topology}" if topology else ""))
    return plot_scaling(st["workers"], series, path, saturation=st["saturation"], title=title,
                        logy=logy)
