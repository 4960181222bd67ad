"""Synchronisation scheme x architecture, chosen independently: one training run per
combination, composed from the paradigms that implement each (their ``run`` and
schedules; nothing here copies them).

================= ============================================== =====================================
scheme            ``ps``: parameter server, S servers            ``allreduce``: any netsim collective
================= ============================================== =====================================
``bsp``           :mod:`workloads.paradigms.ps_sync`             :mod:`workloads.paradigms.allreduce`
``ssp`` (s)       :mod:`workloads.paradigms.ps_async`, ``ssp=s`` not offered (:data:`UNSUPPORTED`)
``async``         :mod:`workloads.paradigms.ps_async` (Downpour) not offered (:data:`UNSUPPORTED`)
``local-sgd`` (H) :mod:`workloads.paradigms.model_averaging`     model averaging's training, the model
                  (one master: S = 1)                            allreduced every H steps
================= ============================================== =====================================

Local SGD over an allreduce trains exactly as :mod:`workloads.paradigms.model_averaging`
(the average of the P models is the same whether a master or a collective
computes it); its trace is H local steps (forward, backward, update) and then
:func:`workloads.paradigms.allreduce.collective_trace` of the whole model, composed with
:func:`netsim.trace.ops.concat` and :func:`netsim.trace.ops.repeat` as
:func:`workloads.paradigms.allreduce.schedule` composes its steps. :func:`closed_form`
dispatches to the closed form of the paradigm a combination runs.
"""

import numpy as np

from netsim.comm.library import mpich_wire
from netsim.trace.ops import concat, repeat

from workloads.paradigms import allreduce, model_averaging, ps, ps_async, ps_sync
from workloads import mlp
from workloads.errors import WorkloadError
from workloads.plan.frontier import Frontier
from workloads.plan.measure import recording
from workloads.runresult import RunResult

__all__ = ["SCHEMES", "ARCHITECTURES", "UNSUPPORTED", "combinations", "run", "closed_form",
           "local_sgd_trace"]

SCHEMES = ("bsp", "ssp", "async", "local-sgd")
ARCHITECTURES = ("ps", "allreduce")

#: (scheme, architecture) -> why the combination is not offered.
UNSUPPORTED = {
    ("ssp", "allreduce"): "an allreduce is a collective every worker joins at every step, so "
                          "no worker runs ahead of another (staleness 0: BSP); a bounded "
                          "lead needs a server that keeps the state between reads",
    ("async", "allreduce"): "with no server there is no shared state to read and update "
                            "independently; asynchronous decentralised SGD is gossip "
                            "(e.g. AD-PSGD), another paradigm",
}


def combinations():
    """Every (scheme, architecture) pair and whether it is offered.

    Returns
    -------
    list of tuple
        ``(scheme, architecture, reason)``, ``reason`` None when offered, else
        why not (:data:`UNSUPPORTED`).

    Examples
    --------
    >>> [(s, a) for s, a, why in combinations() if why is None]  # doctest: +NORMALIZE_WHITESPACE
    [('bsp', 'ps'), ('bsp', 'allreduce'), ('ssp', 'ps'), ('async', 'ps'), ('local-sgd', 'ps'),
     ('local-sgd', 'allreduce')]
    """
    return [(s, a, UNSUPPORTED.get((s, a))) for s in SCHEMES for a in ARCHITECTURES]


def local_sgd_trace(P, model, batch, steps, period, collective="ring", segments=4):
    """The trace of local SGD with the model allreduced every ``period`` steps (and after
    the last): per step every worker's forward, backward and update, then every
    ``period``-th step one allreduce op of the ``4 n`` bytes of the model
    (:func:`workloads.paradigms.allreduce.collective_op`; under MPICH
    :func:`workloads.paradigms.allreduce.collective_trace`).

    Parameters
    ----------
    P : int
        Workers.
    model : workloads.mlp.Model
    batch : int or numpy.ndarray
        Samples per worker per step.
    steps : int
        Steps in all.
    period : int
        Steps between two allreduces (H).
    collective : str
        One of :data:`workloads.paradigms.allreduce.COLLECTIVES`.
    segments : int
        Pipeline segments of ``lp``.

    Returns
    -------
    netsim.Trace

    Examples
    --------
    >>> t = local_sgd_trace(4, mlp.model_of((4, 16, 3)), 8, steps=10, period=4)
    >>> t.num_iterations, t.num_collectives, sorted(set(t.iteration[t.is_collective].tolist()))
    (10, 3, [3, 7, 9])
    """
    W = np.arange(P)
    work = Frontier(P)
    work.forward_backward(W, model, batch)
    work.compute(W, mlp.update_flops(model.params), tag="update")
    step = work.build()
    C = allreduce.collective_op(collective, P, mlp.BYTES_PER_VALUE * model.params, segments)

    def block(k):  # k local steps, then the allreduce after the last of them
        return concat(repeat(step, k), C, iteration_offset=k - 1)

    full, rest = divmod(steps, period)
    trace = repeat(block(period), full) if full else None
    if rest:
        tail = block(rest)
        trace = tail if trace is None else concat(trace, tail, iteration_offset=full * period)
    return trace


def _check(scheme, architecture, servers, collective):
    if scheme not in SCHEMES:
        raise WorkloadError(f"unknown scheme {scheme!r}; known schemes: {', '.join(SCHEMES)}")
    if architecture not in ARCHITECTURES:
        raise WorkloadError(f"unknown architecture {architecture!r}; known architectures: "
                            f"{', '.join(ARCHITECTURES)}")
    why = UNSUPPORTED.get((scheme, architecture))
    if why:
        raise WorkloadError(f"scheme {scheme!r} on architecture {architecture!r} is not "
                            f"offered: {why}")
    if collective not in allreduce.COLLECTIVES:
        raise WorkloadError(f"unknown collective {collective!r}; known collectives: "
                            f"{', '.join(allreduce.COLLECTIVES)}")
    if scheme == "local-sgd" and architecture == "ps" and servers != 1:
        raise WorkloadError(f"local-sgd on a parameter server averages through one master "
                            f"(model-averaging), got servers={servers!r}")


def run(scheme="bsp", architecture="ps", dataset="digits", workers=4, epochs=2, seed=0,
        servers=1, staleness=2, period=4, collective="ring", segments=4, **options):
    """Train with ``scheme`` on ``architecture``; return the run with its trace.

    Parameters
    ----------
    scheme : {"bsp", "ssp", "async", "local-sgd"}
    architecture : {"ps", "allreduce"}
    dataset : str
    workers : int
    epochs, seed : int
    servers : int
        Parameter servers (``ps``; 1 for ``local-sgd``).
    staleness : int
        SSP's bound s (``ssp``).
    period : int
        Local steps between averagings H (``local-sgd``).
    collective : str
        Allreduce algorithm (``allreduce``): ring, mst, be or lp.
    segments : int
        Segments of ``lp``.
    **options
        The paradigm's own (``hidden``, ``batch_size``, ``lr``, ``momentum``, ...).

    Returns
    -------
    RunResult
        Its trace's metadata also says ``scheme`` and ``architecture``.

    Raises
    ------
    WorkloadError
        For an unknown scheme or architecture, or a combination not offered
        (saying why).

    Examples
    --------
    >>> r = run("local-sgd", "allreduce", dataset="iris", epochs=1, period=2)
    >>> r.paradigm, r.trace.metadata["scheme"], r.iterations, r.messages
    ('local-sgd-allreduce', 'local-sgd', 4, 48)
    >>> run("async", "allreduce")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    workloads.errors.WorkloadError: scheme 'async' on architecture 'allreduce' is not offered: ...
    """
    _check(scheme, architecture, servers, collective)
    common = dict(dataset=dataset, workers=workers, epochs=epochs, seed=seed, **options)
    if architecture == "allreduce" and scheme == "bsp":
        r = allreduce.run(collective=collective, segments=segments, **common)
    elif scheme == "bsp":
        r = ps_sync.run(servers=servers, **common)
    elif scheme in ("ssp", "async"):
        r = ps_async.run(servers=servers, ssp=staleness if scheme == "ssp" else None, **common)
    else:
        r = model_averaging.run(period=period, **common)
        if architecture == "allreduce":
            r = _over_allreduce(r, period, collective, segments)
    meta = {"scheme": scheme, "architecture": architecture}
    return RunResult(r.paradigm, r.trace.with_metadata(**meta), r.accuracy, r.total_bytes,
                     r.messages, r.iterations, r.dropped_fraction, r.extra, r.diverged,
                     r.diverged_at)


def _over_allreduce(r, period, collective, segments):
    """Model averaging's run ``r`` with its master replaced by an allreduce of the model."""
    rec = recording(r.trace)
    P = rec.P0
    trace = local_sgd_trace(P, rec.model0, rec.batch0, r.iterations, period, collective,
                            segments)
    md = dict(r.trace.metadata)
    hyper = dict(md["hyper"], collective=collective, segments=segments)
    wire = mpich_wire(trace)   # bytes and messages as MPICH's schedule sends them
    md.update(paradigm="local-sgd-allreduce", servers=0, ranks=P, roles=["worker"] * P,
              hyper=hyper, total_bytes=wire.total_bytes, messages=wire.num_messages)
    trace = trace.with_metadata(**md)
    return RunResult("local-sgd-allreduce", trace, r.accuracy, wire.total_bytes,
                     wire.num_messages, r.iterations, None, r.extra, r.diverged, r.diverged_at)


def closed_form(trace, alpha, beta, device_flops=None):
    """The closed form of the paradigm a combination runs: the allreduce's (also for local
    SGD, whose steps without an allreduce communicate nothing), Downpour's worst case
    for ``ssp`` and ``async``, else the parameter server's.

    Parameters
    ----------
    trace : Trace
        From :func:`run` (``scheme`` and ``architecture`` in its metadata).
    alpha, beta : float
        Latency (s) and seconds per byte.
    device_flops : float, optional

    Returns
    -------
    dict
        As :func:`workloads.plan.closed.terms` (seconds per iteration).

    Examples
    --------
    >>> r = run("local-sgd", "allreduce", dataset="iris", epochs=1, period=2)
    >>> cf = closed_form(r.trace, 2e-6, 8e-10)
    >>> cf["formula"]
    'compute + ring allreduce of the gradient + update'
    """
    md = trace.metadata
    if md.get("architecture") == "allreduce":
        return allreduce.closed_form(trace, alpha, beta, device_flops)
    if md.get("scheme") in ("ssp", "async"):
        return ps_async.closed_form(trace, alpha, beta, device_flops)
    return ps.closed_form(trace, alpha, beta, device_flops)
