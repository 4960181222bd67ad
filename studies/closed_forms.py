"""The alpha-beta closed form of one iteration of a paradigm's trace.

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
"""

import numpy as np

from netsim import costmodel
from netsim.trace import COMPUTE

__all__ = ["PS_LIKE", "NO_CLOSED_FORM", "worker_mask", "worker_compute", "closed_form"]

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


def worker_mask(trace):
    """Per rank, whether it is a worker (True) or a server or master (False).

    From ``metadata["roles"]``, else the last ``metadata["servers"]`` ranks are servers.

    Parameters
    ----------
    trace : Trace

    Returns
    -------
    numpy.ndarray of bool

    Examples
    --------
    >>> from netsim import TraceBuilder
    >>> b = TraceBuilder(3, metadata={"servers": 1}); _ = b.message(0, 2, 8)
    >>> worker_mask(b.build()).tolist()
    [True, True, False]
    """
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


def worker_compute(trace, device_flops):
    """Mean over iterations of the largest worker's compute seconds per iteration.

    Parameters
    ----------
    trace : Trace
    device_flops : float or None
        FLOP/s of the compute ops (None: the trace's metadata).

    Examples
    --------
    >>> from netsim import TraceBuilder
    >>> b = TraceBuilder(2)
    >>> _ = b.compute(0, seconds=1.0, iteration=0); _ = b.compute(1, seconds=3.0, iteration=0)
    >>> _ = b.compute(0, seconds=2.0, iteration=1)
    >>> worker_compute(b.build(), None)  # max(1, 3) and 2, averaged
    2.5
    """
    seconds = trace.compute_seconds(device_flops)
    comp = trace.kind == COMPUTE
    niter = max(trace.num_iterations, 1)
    per = _per_iteration(seconds[comp], trace.rank[comp], trace.iteration[comp], worker_mask(trace),
                         trace.ranks, niter, np.max)
    return float(per.mean())


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
    >>> from studies.paradigm_traces import record_at
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
    worker = worker_mask(trace)
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
