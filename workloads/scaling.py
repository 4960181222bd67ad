"""Scaling studies of a training paradigm: time per iteration against the worker count P.

For each P the paradigm's trace is obtained (recorded at that P, or recorded
once at a small P and projected with :func:`workloads.projection.project` when
that module is present), optionally resized to a real model
(:func:`workloads.models.resize`), simulated on the topology built for its
ranks, and put beside the alpha-beta closed form of the paradigm
(:func:`closed_form`). :func:`study` adds speed-up, efficiency, the saturation
point (:func:`netsim.saturation.saturation_point`) and scaling-law fits
(:func:`netsim.studies.fit_scaling`).

Definitions (see :mod:`netsim.saturation` for the saturation point)
-------------------------------------------------------------------
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

Closed forms (per iteration; alpha, beta from
:func:`netsim.costmodel.alpha_beta` over the pairs the trace uses)
----------------------------------------------------------------------
``compute``: the largest worker compute of the iteration; ``server``: the
largest server (or master) compute, which is on the critical path of every
synchronous paradigm here; ``time = compute + server + communication``.

=================================== =============================================
paradigm                            communication per iteration
=================================== =============================================
ps-sync, pf, slimdp,                push + pull phases, each
model-averaging, admm,              :func:`netsim.costmodel.ps_push_pull` / 2 =
ps-partitioned                      ``alpha + max(P, S) n beta / S`` with n the
                                    bytes one worker sends (receives) per phase
allreduce                           the collective's closed form (ring, mst =
                                    binomial reduce + broadcast, be =
                                    Rabenseifner, lp = pipeline) of the gradient
dgc                                 direct allgather: every host link carries the
                                    worker's ``(P - 1)`` sparse sets,
                                    :func:`netsim.costmodel.hockney`
single                              0
ps-async, ringtmp                   none (asynchronous; a pipeline of
                                    dependent activations): reported as None
=================================== =============================================

Examples
--------
>>> from topologies import star
>>> st = study("ps-sync", [2, 4], star, iterations=2, dataset="iris")
>>> [r["P"] for r in st["records"]], st["records"][0]["top_link"]
([2, 4], 'host2<->switch')
"""

import math

import numpy as np

from netsim import costmodel
from netsim.result import simulate
from netsim.saturation import saturation_point, speedup, top_link
from netsim.saturation import crossing as _crossing
from netsim.studies import fit_scaling
from netsim.trace import COMPUTE, Trace
from netsim.traceio import load_trace

from .errors import WorkloadError

__all__ = [
    "PS_LIKE",
    "NO_CLOSED_FORM",
    "first_iterations",
    "record_at",
    "traces",
    "closed_form",
    "study",
    "sweep_point",
    "plot_study",
    "format_study",
]

#: Paradigms whose communication is push to servers, (server compute), pull back.
PS_LIKE = ("ps-sync", "pf", "slimdp", "model-averaging", "admm", "ps-partitioned")

#: Paradigms with no closed form here, and why.
NO_CLOSED_FORM = {
    "ps-async": "asynchronous: workers never wait for each other, no per-iteration barrier",
    "ringtmp": "a pipeline of dependent activation messages, not a collective",
}

_ALLREDUCE = {
    "ring": lambda P, n, a, b, k: costmodel.ring_allreduce(P, n, a, b),
    "mst": lambda P, n, a, b, k: (costmodel.binomial_reduce(P, n, a, b)
                                  + costmodel.binomial_broadcast(P, n, a, b)),
    "be": lambda P, n, a, b, k: costmodel.rabenseifner_allreduce(P, n, a, b),
    "lp": lambda P, n, a, b, k: costmodel.pipeline_allreduce(P, n, k, a, b),
}


def _check_count(name, value, minimum=1):
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < minimum:
        raise WorkloadError(f"{name} must be an integer >= {minimum}, got {value!r}")
    return int(value)


def _check_workers(workers):
    ws = [int(p) if isinstance(p, (int, np.integer)) and not isinstance(p, bool) else p
          for p in workers]
    if not ws:
        raise WorkloadError("the worker list is empty")
    for p in ws:
        if not isinstance(p, int) or p < 1:
            raise WorkloadError(f"cannot project to P = {p!r}: the worker counts must be "
                                f"integers >= 1")
    if any(b <= a for a, b in zip(ws, ws[1:])):
        raise WorkloadError(f"the worker list must be strictly increasing, got {ws}")
    return ws


def first_iterations(trace, k):
    """The ops of the first ``k`` iterations of a trace (iterations ``0..k-1``).

    Dependencies on dropped ops (there are none in a trace whose ops only wait
    for earlier iterations) are dropped too.

    Examples
    --------
    >>> from netsim import TraceBuilder
    >>> b = TraceBuilder(2)
    >>> a = b.message(0, 1, 8, iteration=0); _ = b.message(1, 0, 8, deps=[a], iteration=1)
    >>> first_iterations(b.build(), 1).num_messages
    1
    """
    k = _check_count("iterations", k)
    keep = trace.iteration < k
    if keep.all():
        return trace
    new = np.full(trace.num_ops, -1, np.int64)
    new[keep] = np.arange(int(keep.sum()))
    counts = np.diff(trace.dep_ptr)
    owner = np.repeat(np.arange(trace.num_ops), counts)
    dep_new = new[trace.dep_idx]
    ok = keep[owner] & (dep_new >= 0)
    dep_idx = dep_new[ok]
    dep_ptr = np.concatenate([[0], np.cumsum(np.bincount(new[owner[ok]],
                                                         minlength=int(keep.sum())))])
    meta = dict(trace.metadata)
    meta["iterations"] = int(min(k, trace.num_iterations))
    return Trace(trace.ranks, trace.kind[keep], trace.rank[keep], trace.peer[keep],
                 trace.size[keep], trace.duration[keep], trace.flops[keep],
                 trace.iteration[keep], trace.tag[keep], dep_ptr, dep_idx, tags=trace.tags,
                 metadata=meta)


def record_at(paradigm, P, iterations=3, seed=0, dataset="digits", **options):
    """Record ``paradigm`` with P workers and keep its first ``iterations`` iterations.

    One epoch is recorded; if it has fewer iterations than asked, enough
    epochs to have them. Each worker keeps the paradigm's per-worker batch as
    long as its shard of the dataset holds that many samples (``digits``:
    1,437 training samples, so P <= 179 at a batch of 8).

    Examples
    --------
    >>> record_at("ps-sync", 2, iterations=2, dataset="iris").num_iterations
    2
    """
    import workloads

    P = _check_count("workers", P)
    iterations = _check_count("iterations", iterations)
    run = workloads.record(paradigm, dataset=dataset, workers=P, epochs=1, seed=seed, **options)
    have = run.iterations
    if have < iterations:
        run = workloads.record(paradigm, dataset=dataset, workers=P, seed=seed,
                               epochs=math.ceil(iterations / max(have, 1)), **options)
    trace = first_iterations(run.trace, iterations)
    trace.metadata["run_accuracy"] = run.accuracy
    return trace


def traces(source, workers, iterations=3, seed=0, dataset="digits", model=None,
           batch=None, base_workers=4, device_flops=None, **options):
    """The trace of ``source`` at every P of ``workers``.

    Parameters
    ----------
    source : str or Trace or path
        A paradigm name (a key of :data:`workloads.PARADIGMS`), a recorded
        :class:`~netsim.Trace`, or the path of a saved trace (``.npz``/``.json``).
    workers : sequence of int
        Strictly increasing worker counts >= 1.
    iterations : int
        Iterations per trace.
    seed : int
    dataset : str
        Dataset of the recordings.
    model : str, optional
        A model of :data:`workloads.models.MODELS` (e.g. ``"resnet50"``): every
        trace gets its message sizes and FLOPs (:func:`workloads.models.resize`).
    batch : int, optional
        Samples per worker per step of the projected traces (default: the
        recording's, the paradigm option ``batch_size``).
    base_workers : int
        A paradigm of :data:`workloads.projection.PROJECTABLE` is recorded
        once (one epoch) at this P and projected to every P
        (:func:`workloads.projection.project`, weak scaling: the per-worker
        batch is kept); any other (e.g. ``ps-partitioned``) is recorded at
        every P (which needs enough samples per worker).
    device_flops : float, optional
        Stored in every trace's metadata (FLOP/s of the compute ops).
    **options
        Paradigm options of the recording.

    Returns
    -------
    list of Trace
        ``metadata["source"]`` says ``"recorded"`` or ``"projected"``.

    Raises
    ------
    WorkloadError
        For an empty or unsorted worker list, P < 1, an unknown paradigm or
        model, or a trace that cannot be projected (with the reason).

    Examples
    --------
    >>> [t.metadata["workers"] for t in traces("ps-sync", [2, 4], iterations=1, dataset="iris")]
    [2, 4]
    >>> t = traces("ps-sync", [8], iterations=1, model="resnet50", batch=32)[0]
    >>> t.metadata["model"], t.total_bytes == 2 * 8 * 4 * 25_557_032
    ('resnet50', True)
    """
    import workloads

    from . import models, projection

    workers = _check_workers(workers)
    iterations = _check_count("iterations", iterations)
    if model is not None:
        models.get_model(model)  # an unknown name fails here, before any recording
    if batch is not None:
        batch = _check_count("batch", batch)
    if isinstance(source, str) and source in workloads.PARADIGMS:
        base = None
        # A paradigm that cannot be projected is recorded at every P, unless a model or a
        # batch size asks for a projection: then project() says why it cannot be.
        if source in projection.PROJECTABLE or model is not None or batch is not None:
            base_workers = _check_count("base_workers", base_workers)
            # One whole epoch, so that the projection measures every per-epoch statistic.
            base = workloads.record(source, dataset=dataset, workers=base_workers, epochs=1,
                                    seed=seed, **options).trace
    elif isinstance(source, Trace):
        base = source
    elif isinstance(source, str) and source.endswith((".npz", ".json")):
        base = load_trace(source)
    else:
        raise WorkloadError(f"unknown paradigm {source!r}; known: {', '.join(workloads.PARADIGMS)}"
                            " (or give a trace file .npz/.json)")
    out = []
    for P in workers:
        if base is None:
            t = record_at(source, P, iterations, seed, dataset, **options)
            t.metadata["source"] = "recorded"
        else:
            # Bad input raises a WorkloadError (a NetsimError) with its reason; anything
            # else is a bug and keeps its traceback.
            if model is not None:
                t = models.resize(base, model, workers=P, iterations=iterations,
                                  batch_size=batch)
            else:
                t = projection.project(base, P, iterations=iterations, batch_size=batch)
            t.metadata["source"] = "projected"
        if device_flops is not None:
            t.metadata["device_flops"] = float(device_flops)
        out.append(t)
    return out


# -- closed forms --------------------------------------------------------------------------

def _roles(trace):
    meta = trace.metadata
    roles = meta.get("roles")
    if roles is None or len(roles) != trace.ranks:
        servers = int(meta.get("servers", 0) or 0)
        roles = ["worker"] * (trace.ranks - servers) + ["server"] * servers
    return np.array([r == "worker" for r in roles])


def _per_iteration(values, ranks, iteration, ranks_mask, nranks, niter, reduce):
    """values summed per (iteration, rank), then reduced over the selected ranks."""
    grid = np.zeros((niter, nranks))
    np.add.at(grid, (iteration, ranks), values)
    sel = grid[:, ranks_mask]
    if sel.shape[1] == 0:
        return np.zeros(niter)
    return reduce(sel, axis=1)


def closed_form(trace, topology, device_flops=None, placement=None):
    """Alpha-beta closed form of one iteration of a paradigm's trace (see the module table).

    Parameters
    ----------
    trace : Trace
        With ``metadata["paradigm"]`` and ``metadata["roles"]``.
    topology : networkx.Graph or Network
    device_flops : float, optional
        FLOP/s of the compute ops (default: the trace's metadata).
    placement : optional
        As for :func:`netsim.simulate`.

    Returns
    -------
    dict
        ``paradigm``, ``alpha``, ``beta``, ``compute`` (workers), ``server``,
        ``communication`` and ``time`` (seconds per iteration, averaged over
        the iterations; None for a paradigm without a closed form),
        ``formula`` (a few words) and ``reason`` (why there is none, else
        None).

    Examples
    --------
    >>> from topologies import star
    >>> t = record_at("ps-sync", 4, iterations=1, dataset="iris")
    >>> cf = closed_form(t, star(5, bandwidth=1.25e9, latency=1e-6))
    >>> n = 4 * 131  # the Iris model's 131 float32 parameters
    >>> abs(cf["communication"] - 2 * (2e-6 + 4 * n / 1.25e9)) < 1e-15
    True
    """
    meta = trace.metadata
    paradigm = meta.get("paradigm")
    P = int(meta.get("workers", trace.ranks))
    out = {"paradigm": paradigm, "alpha": None, "beta": None, "compute": None, "server": None,
           "communication": None, "time": None, "formula": None, "reason": None}
    if paradigm in NO_CLOSED_FORM:
        out["reason"] = NO_CLOSED_FORM[paradigm]
        return out
    if paradigm not in PS_LIKE + ("allreduce", "dgc", "single"):
        out["reason"] = f"no closed form for paradigm {paradigm!r}"
        return out
    seconds = trace.compute_seconds(device_flops)
    niter = max(trace.num_iterations, 1)
    worker = _roles(trace)
    comp = trace.kind == COMPUTE
    it, rk = trace.iteration, trace.rank
    w_comp = _per_iteration(seconds[comp], rk[comp], it[comp], worker, trace.ranks, niter, np.max)
    s_comp = _per_iteration(seconds[comp], rk[comp], it[comp], ~worker, trace.ranks, niter, np.max)
    msg = trace.is_message
    if msg.any():
        alpha, beta = costmodel.alpha_beta(topology, placement=placement, trace=trace)
    else:
        alpha, beta = 0.0, 0.0
    comm = np.zeros(niter)
    if paradigm in PS_LIKE:
        S = int((~worker).sum())
        up = msg & worker[trace.rank] & ~worker[np.maximum(trace.peer, 0)]
        down = msg & ~worker[trace.rank] & worker[np.maximum(trace.peer, 0)]
        for mask, who in ((up, rk), (down, trace.peer)):
            n = _per_iteration(trace.size[mask], who[mask], it[mask], worker, trace.ranks, niter,
                               np.mean)
            has = _per_iteration(np.ones(int(mask.sum())), who[mask], it[mask], worker,
                                 trace.ranks, niter, np.max) > 0
            comm += np.where(has, [costmodel.ps_push_pull(P, x, alpha, beta, servers=max(S, 1)) / 2
                                   for x in n], 0.0)
        out["formula"] = "compute + push (alpha + max(P,S) n beta / S) + server + pull (same)"
    elif paradigm == "allreduce":
        hyper = meta.get("hyper", {})
        name = hyper.get("collective", "ring")
        k = int(hyper.get("segments", 4))
        per_iter = np.bincount(it[msg], weights=trace.size[msg], minlength=niter)
        n = per_iter / (2 * (P - 1)) if P > 1 else np.zeros(niter)
        comm = np.array([_ALLREDUCE[name](P, x, alpha, beta, k) if x > 0 else 0.0 for x in n])
        out["formula"] = f"compute + {name} allreduce of the gradient + update"
    elif paradigm == "dgc":
        sent = _per_iteration(trace.size[msg], rk[msg], it[msg], worker, trace.ranks, niter,
                              np.max)
        comm = np.array([costmodel.hockney(x, alpha, beta) if x > 0 else 0.0 for x in sent])
        out["formula"] = "compute + alpha + (P - 1) m beta (direct allgather of sparse sets)"
    else:
        out["formula"] = "compute only"
    compute, server, communication = float(w_comp.mean()), float(s_comp.mean()), float(comm.mean())
    out.update(alpha=alpha, beta=beta, compute=compute, server=server,
               communication=communication, time=compute + server + communication)
    return out


# -- the study -------------------------------------------------------------------------------

def _strong(trace, factor):
    """Worker forward/backward compute multiplied by ``factor`` (a smaller per-worker batch)."""
    if factor == 1.0:
        return trace
    worker = _roles(trace)
    names = np.array(list(trace.tags) + [""])
    tag = names[trace.tag]
    sel = (trace.kind == COMPUTE) & worker[trace.rank] & np.isin(tag, ("forward", "backward"))
    flops = np.where(sel, trace.flops * factor, trace.flops)
    dur = np.where(sel & ~np.isnan(trace.duration), trace.duration * factor, trace.duration)
    return Trace(trace.ranks, trace.kind, trace.rank, trace.peer, trace.size, dur, flops,
                 trace.iteration, trace.tag, trace.dep_ptr, trace.dep_idx, tags=trace.tags,
                 metadata=trace.metadata)


def _link_ranks(link, result, trace):
    """``"server rank 16"``-style description of the ranks placed on a link's end nodes."""
    if not link:
        return None
    ends = set(link.replace("<->", "->").split("->"))
    roles = trace.metadata.get("roles")
    if roles is None or len(roles) != trace.ranks:
        roles = ["worker" if w else "server" for w in _roles(trace)]
    names = [f"{roles[r]} rank {r}" for r, node in enumerate(result.ranks["node"]) if node in ends]
    return ", ".join(names[:3]) + (", ..." if len(names) > 3 else "") if names else None


def _worker_compute(trace, device_flops):
    """Mean over iterations of the largest worker's compute seconds per iteration."""
    seconds = trace.compute_seconds(device_flops)
    comp = trace.kind == COMPUTE
    niter = max(trace.num_iterations, 1)
    per = _per_iteration(seconds[comp], trace.rank[comp], trace.iteration[comp], _roles(trace),
                         trace.ranks, niter, np.max)
    return float(per.mean())


def _measure(trace, G):
    """Simulate one point of a study: its result, iterations, top link and closed form."""
    res = simulate(trace, G, link_series=True)
    return (res, max(trace.num_iterations, 1), top_link(res, duplex=not G.is_directed()),
            closed_form(trace, G))


def sweep_point(point, topology):
    """Run one paradigm point of a sweep (:mod:`netsim.sweep`): record, simulate, measure.

    The runner the CLI gives :func:`netsim.sweep.run_sweep` for ``"paradigm"``
    points: the paradigm is trained at P workers for the point's epochs, its
    whole trace simulated on ``topology(ranks)``, and measured as each point
    of :func:`study` is.

    Parameters
    ----------
    point : dict
        A paradigm point of :func:`netsim.sweep.sweep_points`: ``name``,
        ``P``, ``hidden``, ``dataset``, ``epochs``, ``seed``, ``options``
        (JSON text or None).
    topology : callable
        ``topology(ranks)`` builds the graph for the trace's ranks.

    Returns
    -------
    dict
        Result columns of a sweep row: ``ranks``, ``simulated`` (seconds per
        iteration), ``closed_form`` (:func:`closed_form`, None without one),
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
    import json

    import workloads

    opts = json.loads(point["options"]) if point.get("options") else {}
    if point.get("hidden"):
        opts["hidden"] = tuple(int(x) for x in str(point["hidden"]).split(","))
    run = workloads.record(point["name"], dataset=point["dataset"], workers=int(point["P"]),
                           epochs=int(point["epochs"]), seed=int(point["seed"]), **opts)
    trace = run.trace
    G = topology(trace.ranks)
    res, iterations, top, cf = _measure(trace, G)
    per_iter = res.makespan / iterations
    closed = cf["time"]
    gap = (per_iter - closed) / closed if closed is not None and closed > 0 else None
    return {"ranks": trace.ranks, "simulated": per_iter, "closed_form": closed, "gap": gap,
            "makespan": res.makespan, "iterations": iterations,
            "messages": trace.num_messages, "accuracy": run.accuracy,
            "top_link": top["top_link"], "saturated_fraction": top["saturated_fraction"]}


def _fit(P, values):
    if len(P) < 2 or any(v is None or not v > 0 for v in values):
        return None
    return fit_scaling(P, values)


def study(source, workers, topology, model=None, device_flops=None, iterations=3, seed=0,
          dataset="digits", strong=False, level=0.5, base_workers=4, batch=None, **options):
    """Simulate a paradigm at each P beside its closed form; find where it saturates.

    Parameters
    ----------
    source : str or Trace or path
        See :func:`traces`.
    workers : sequence of int
        Strictly increasing worker counts.
    topology : callable or networkx.Graph
        ``topology(ranks)`` builds the graph for a trace's ranks (workers and
        servers), e.g. :func:`topologies.star`; a graph is used as is.
    model : str, optional
        Resize the traces to this model (:func:`workloads.models.resize`).
    device_flops : float, optional
        FLOP/s of the compute ops (default: each trace's metadata).
    iterations, seed, dataset, base_workers, batch, **options
        See :func:`traces`.
    strong : bool
        Strong scaling (see the module docstring); weak by default.
    level : float
        Saturated fraction of the iteration that counts as saturation.

    Returns
    -------
    dict
        ``paradigm``, ``workers``, ``strong``, ``T1`` (seconds), ``records``
        (one per P: ``P``, ``ranks``, ``iterations``, ``bytes_per_iteration``,
        ``time``, ``compute``, ``exposed``, ``idle``, ``closed_form``,
        ``closed_compute``, ``closed_server``, ``closed_communication``, ``speedup``,
        ``efficiency``, ``closed_speedup``, ``top_link``, ``top_link_ranks``
        (e.g. ``"server rank 16"``: the ranks on the link's end nodes),
        ``top_fraction``, ``top_bandwidth``, ``source``), ``saturation`` (from
        :func:`netsim.saturation.saturation_point`), ``closed_form_crossing``
        (the P at which the closed-form communication reaches the closed-form
        compute plus server time, interpolated linearly in P, exact when both
        are linear in P as for ps-sync; None if it does not within the
        range, or communication already exceeds compute at the smallest P),
        ``closed_form_regime`` (``"communication > compute at every P"``,
        ``"compute > communication at every P"`` or None), ``fits`` (curve -> :func:`netsim.studies.fit_scaling` record
        or None) and ``closed_form_note``.

    Examples
    --------
    >>> from topologies import star
    >>> st = study("allreduce", [2, 4], star, iterations=1, dataset="iris")
    >>> st["records"][1]["efficiency"] < 1, st["fits"]["time"]["law"] is not None
    (True, True)
    """
    workers = _check_workers(workers)
    iterations = _check_count("iterations", iterations)
    if device_flops is not None and not (isinstance(device_flops, (int, float))
                                         and math.isfinite(device_flops) and device_flops > 0):
        raise WorkloadError(f"device_flops must be a number > 0, got {device_flops!r}")
    ts = traces(source, workers, iterations=iterations, seed=seed, dataset=dataset, model=model,
                batch=batch, base_workers=base_workers, device_flops=device_flops,
                **options)
    P0 = workers[0]
    records, note = [], None
    T1 = None
    for P, t in zip(workers, ts):
        if strong:
            t = _strong(t, P0 / P)
        G = topology(t.ranks) if callable(topology) else topology
        res, nit, top, cf = _measure(t, G)
        worker = _roles(t)
        note = note or cf["reason"] or cf["formula"]
        if T1 is None:
            c = _worker_compute(t, None)
            T1 = c * P if strong else c
        records.append({
            "P": P, "ranks": t.ranks, "iterations": nit,
            "bytes_per_iteration": t.total_bytes / nit,
            "time": res.makespan / nit,
            "compute": float(res.ranks["compute"][worker].mean()) / nit,
            "exposed": float(res.ranks["exposed_communication"][worker].mean()) / nit,
            "idle": float(res.ranks["idle"][worker].mean()) / nit,
            "closed_form": cf["time"], "closed_compute": cf["compute"],
            "closed_server": cf["server"], "closed_communication": cf["communication"],
            "top_link": top["top_link"],
            "top_link_ranks": _link_ranks(top["top_link"], res, t),
            "top_fraction": top["saturated_fraction"],
            "top_bandwidth": top["top_bandwidth"],
            "source": t.metadata.get("source"),
        })
    Ps = [r["P"] for r in records]
    sp, eff = speedup(Ps, [r["time"] for r in records], T1, strong=strong)
    have_cf = all(r["closed_form"] for r in records)
    csp = speedup(Ps, [r["closed_form"] for r in records], T1, strong=strong)[0] if have_cf else None
    for i, r in enumerate(records):
        r["speedup"], r["efficiency"] = sp[i], eff[i]
        r["closed_speedup"] = csp[i] if csp else None
    saturation = saturation_point(Ps, [r["top_fraction"] for r in records],
                                  [r["top_link"] for r in records],
                                  times=[r["time"] for r in records], level=level, strong=strong)
    cross = None
    if have_cf:
        diff = [r["closed_communication"] - r["closed_compute"] - r["closed_server"]
                for r in records]
        cross = _crossing(Ps, diff, 0.0, log_x=False)
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
    return {"paradigm": ts[0].metadata.get("paradigm"), "workers": Ps, "strong": strong,
            "model": model, "T1": T1, "records": records, "saturation": saturation,
            "closed_form_crossing": cross, "closed_form_regime": regime,
            "fits": {k: _fit(Ps, v) for k, v in curves.items()},
            "closed_form_note": note}


def plot_study(st, path, title=None, logy=True):
    """Time per iteration, compute and exposed communication against P, saturation marked.

    Markers are simulated, lines closed forms (the closed-form communication
    beside the simulated exposed communication).

    Examples
    --------
    >>> import os, tempfile
    >>> from topologies import star
    >>> st = study("ps-sync", [2, 4], star, iterations=1, dataset="iris")
    >>> p = plot_study(st, os.path.join(tempfile.mkdtemp(), "ps.png"))
    >>> os.path.getsize(p) > 0
    True
    """
    from netsim.saturation import plot_scaling

    recs = st["records"]
    cf = all(r["closed_form"] for r in recs)
    series = [{"label": "time per iteration", "simulated": [r["time"] for r in recs],
               "closed_form": [r["closed_form"] for r in recs] if cf else None,
               "saturation": st["saturation"]["P"]},
              {"label": "compute", "simulated": [r["compute"] for r in recs],
               "closed_form": [r["closed_compute"] for r in recs] if cf else None},
              {"label": "exposed communication", "simulated": [r["exposed"] for r in recs],
               "closed_form": [r["closed_communication"] for r in recs] if cf else None}]
    if logy:  # a log axis cannot show zeros
        for s in series:
            if any(v <= 0 for v in s["simulated"]) or (s["closed_form"] and
                                                        any(v <= 0 for v in s["closed_form"])):
                logy = False
    title = title or (f"{st['paradigm']}" + (f" ({st['model']})" if st.get("model") else "")
                      + (", strong scaling" if st["strong"] else ", weak scaling"))
    return plot_scaling(st["workers"], series, path, saturation=st["saturation"], title=title,
                        logy=logy)


def format_study(st):
    """Plain-text tables of a :func:`study`: per P, then fits and the saturation point.

    Examples
    --------
    >>> from topologies import star
    >>> print(format_study(study("ps-sync", [2, 4], star, iterations=1,
    ...                          dataset="iris")).splitlines()[0].split()[:3])
    ['P', 'time/iter', 'closed']
    """
    from netsim.cli import table
    from netsim.units import format_time

    def ft(x):
        return "-" if x is None else format_time(x)

    rows = [(r["P"], ft(r["time"]), ft(r["closed_form"]), ft(r["compute"]), ft(r["exposed"]),
             ft(r["closed_communication"]), f"{r['speedup']:.2f}", f"{r['efficiency']:.3f}",
             r["top_link"] or "-", f"{r['top_fraction']:.3f}") for r in st["records"]]
    lines = [table(["P", "time/iter", "closed form", "compute", "exposed comm", "closed comm",
                    "speed-up", "efficiency", "busiest link", "saturated"], rows), ""]
    fits = [(k, f["law"], "-" if f["r2"] is None else f"{f['r2']:.4f}",
             "no single law fits" if f["no_single_law"] else "")
            for k, f in st["fits"].items() if f is not None]
    lines.append(table(["curve", "scaling law", "R^2", "note"], fits))
    sat = st["saturation"]
    lines.append("")
    if sat["P"] is None:
        lines.append(f"no saturation up to P = {st['workers'][-1]} (no link saturated for more "
                     f"than {sat['level']:.0%} of the iteration)")
    elif sat["reason"] == "link":
        who = f" ({sat['link_ranks']})" if sat.get("link_ranks") else ""
        lines.append(f"saturation point: P = {sat['P']}: link {sat['link']}{who} saturated for "
                     f"{sat['fraction']:.0%} of the iteration"
                     + (f" (crossing {sat['level']:.0%} at P ~ {sat['crossing']:.1f})"
                        if sat["crossing"] else " (already at the smallest P)"))
    else:
        lines.append(f"saturation point: P = {sat['P']}: time per iteration stops falling")
    if st["closed_form_crossing"] is not None:
        lines.append(f"closed form: communication equals compute at P ~ "
                     f"{st['closed_form_crossing']:.1f}")
    elif st.get("closed_form_regime"):
        lines.append(f"closed form: {st['closed_form_regime']} studied")
    lines.append(f"closed form: {st['closed_form_note']}")
    return "\n".join(lines)
