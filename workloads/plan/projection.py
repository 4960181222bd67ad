"""Project a trace recorded at a small P to any number of workers P.

A paradigm's run at P = 4 or 8 records every message it sends. The projection
to P is the paradigm's own schedule at P from the statistics measured in the
recording: ``module.schedule(P, module.measure(trace), ...)``, the very function
the paradigm's ``run`` builds its trace with. What each paradigm measures, and
how P enters its pattern, is said in its ``measure`` and ``schedule``.

Scaling is **weak**: the batch per worker stays fixed (``batch_size=`` to
change it), so each worker's compute ops keep their FLOPs; only the ops whose
work depends on P by the paradigm's own definition (a server averaging P
pushes, RingTMP's ring batch of P x batch) change with P. Servers stay as
recorded unless ``servers=`` is given (parameters are then re-sharded evenly).
The number of iterations is the recorded count unless ``iterations=`` is given;
beyond the recording, per-iteration statistics repeat its last epoch. ``start=``
generates a window of the run, its iterations ``start .. start + iterations - 1``
(numbered from 0 in the trace, ``metadata["window"]`` says where they are): the
steady state after a paradigm's warm-up (:mod:`workloads.plan.phases`) without the
warm-up's iterations.

Not projected: a paradigm without a ``schedule`` (``ps-partitioned``: its
``measure`` says why), traces without paradigm metadata, and traces that are
themselves projections (project the recording instead).

Examples
--------
>>> import workloads
>>> t = workloads.record("ps-sync", workers=2, epochs=1).trace
>>> big = project(t, 64)
>>> big.ranks, big.metadata["workers"], big.num_iterations == t.num_iterations
(65, 64, True)
"""

from netsim import checks
from netsim.trace.core import Trace

from workloads.errors import ProjectionError
from workloads.registry import PARADIGMS

__all__ = ["project", "ProjectionError", "PROJECTABLE"]

#: Paradigms :func:`project` supports: those of :data:`workloads.PARADIGMS` with a ``schedule``.
PROJECTABLE = tuple(name for name, p in PARADIGMS.items() if p.schedule is not None)


def _paradigm(trace):
    """The paradigm (its registry entry) of a recorded trace, or why it cannot be projected."""
    if not isinstance(trace, Trace):
        raise ProjectionError(f"expected a netsim Trace, got {type(trace).__name__}")
    md = trace.metadata
    paradigm = md.get("paradigm")
    if paradigm is None:
        raise ProjectionError("the trace has no 'paradigm' in its metadata: only traces recorded "
                              "by a paradigm (workloads.record, netsim record) can be projected")
    if "projection" in md:
        raise ProjectionError(f"the trace is already a projection (of a {paradigm} run at "
                              f"P = {md['projection'].get('from_workers')}); project the "
                              "recorded trace instead")
    if paradigm not in PARADIGMS:
        raise ProjectionError(f"paradigm {paradigm!r} cannot be projected; projectable "
                              f"paradigms: {', '.join(PROJECTABLE)}")
    entry = PARADIGMS[paradigm]
    if entry.schedule is None:
        entry.measure(trace)   # says why it cannot be projected
        raise ProjectionError(f"paradigm {paradigm!r} cannot be projected")
    if (md.get("window") or [0])[0]:
        raise ProjectionError(f"the {paradigm} trace starts at iteration {md['window'][0]} of its "
                              "run; project a recording that starts at its first iteration")
    missing = [k for k in ("workers", "servers", "layers", "hyper") if k not in md]
    if missing:
        raise ProjectionError(f"the {paradigm} trace lacks metadata {', '.join(missing)}, which "
                              "the projection needs; record it again")
    return entry


def project(trace, P, servers=None, iterations=None, batch_size=None, device_flops=None,
            model=None, start=0):
    """The trace of the same paradigm run with ``P`` workers, from a recording at another P.

    Parameters
    ----------
    trace : netsim.Trace
        A trace recorded by a paradigm (its metadata names the paradigm,
        workers, servers, layers and hyper-parameters).
    P : int
        Workers of the projection, >= 1.
    servers : int, optional
        Servers (ps-sync, ps-async, pf, slimdp); the recorded count if None.
    iterations : int, optional
        Iterations to generate (the recorded count if None).
    batch_size : int, optional
        Samples per worker per step (the recorded one if None).
    device_flops : float, optional
        FLOP/s of the device, stored as ``metadata["device_flops"]`` (the
        recorded value if None).
    model : workloads.mlp.Model, optional
        Another model's shapes (see :func:`workloads.models.resize`).
    start : int, optional
        The run's iteration the trace begins at (>= 0; :class:`workloads.plan.measure.Plan`).

    Returns
    -------
    netsim.Trace
        ``P + S`` ranks. Its metadata is the recording's with ``workers``,
        ``servers``, ``ranks``, ``roles``, ``iterations``, ``total_bytes`` and
        ``messages`` updated, and ``projection`` saying from where.

    Raises
    ------
    ProjectionError
        For a paradigm that cannot be projected, P < 1, or a bad option.

    Examples
    --------
    >>> import workloads
    >>> rec = workloads.record("allreduce", workers=4, epochs=1)
    >>> t = project(rec.trace, 16, iterations=2)
    >>> from netsim.comm.library import mpich_wire
    >>> mpich_wire(t).num_messages == 2 * (2 * 16 * 15), t.metadata["projection"]["from_workers"]
    (True, 4)
    >>> later = project(rec.trace, 16, iterations=2, start=5)
    >>> later.num_iterations, later.metadata["window"]
    (2, [5, 7])
    >>> project(rec.trace, 0)
    Traceback (most recent call last):
    ...
    workloads.errors.ProjectionError: P must be an integer >= 1, got 0
    """
    entry = _paradigm(trace)
    P = checks.check_int(P, "P", error=ProjectionError)
    if device_flops is not None:
        device_flops = checks.check_real(device_flops, "device_flops", lo=0, strict=True,
                                         error=ProjectionError)
    out = entry.schedule(P, entry.measure(trace), servers, iterations, batch_size, model,
                          start)
    if device_flops is not None:
        out = out.with_metadata(device_flops=float(device_flops))
    return out
