"""A paradigm's trace at each worker count P: recorded there, or recorded once and projected.

:func:`traces` gives the trace of a paradigm (or of a saved recording) at
every P of a study: a paradigm of :data:`workloads.projection.PROJECTABLE` is
recorded once at a small P and projected (:func:`workloads.projection.project`),
or resized to a real model (:func:`workloads.models.resize`); any other is
recorded at every P (:func:`record_at`). :func:`first_iterations` keeps the
first iterations of a trace.
"""

import math

import numpy as np

from netsim.checks import check_int
from netsim.trace import Trace
from netsim.traceio import load_trace
from workloads.errors import WorkloadError

__all__ = ["check_workers", "first_iterations", "record_at", "traces"]


def check_workers(workers):
    """Worker counts of a study: a non-empty, strictly increasing list of integers >= 1.

    Parameters
    ----------
    workers : sequence of int

    Returns
    -------
    list of int

    Raises
    ------
    WorkloadError
        For an empty or unsorted list or a count that is not an integer >= 1.

    Examples
    --------
    >>> import numpy as np
    >>> check_workers(np.array([2, 4]))
    [2, 4]
    >>> check_workers([4, 2])
    Traceback (most recent call last):
    ...
    workloads.errors.WorkloadError: the worker list must be strictly increasing, got [4, 2]
    """
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

    Parameters
    ----------
    trace : Trace
    k : int
        Iterations kept (>= 1).

    Examples
    --------
    >>> from netsim import TraceBuilder
    >>> b = TraceBuilder(2)
    >>> a = b.message(0, 1, 8, iteration=0); _ = b.message(1, 0, 8, deps=[a], iteration=1)
    >>> first_iterations(b.build(), 1).num_messages
    1
    """
    k = check_int(k, "iterations", error=WorkloadError)
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
                 metadata=meta, channel=trace.channel[keep], priority=trace.priority[keep],
                 spec=trace.spec[keep], specs=trace.specs, queue=trace.queue[keep])


def record_at(paradigm, P, iterations=3, seed=0, dataset="digits", **options):
    """Record ``paradigm`` with P workers and keep its first ``iterations`` iterations.

    One epoch is recorded; if it has fewer iterations than asked, enough
    epochs to have them. Each worker keeps the paradigm's per-worker batch as
    long as its shard of the dataset holds that many samples (``digits``:
    1,437 training samples, so P <= 179 at a batch of 8).

    Parameters
    ----------
    paradigm : str
        A name of :data:`studies.registry.PARADIGMS`.
    P : int
        Workers.
    iterations : int
        Iterations kept.
    seed : int
        Seed of the run.
    dataset : str
        A name of :data:`workloads.DATASETS`.
    **options
        Paradigm options.

    Examples
    --------
    >>> record_at("ps-sync", 2, iterations=2, dataset="iris").num_iterations
    2
    """
    import workloads

    P = check_int(P, "workers", error=WorkloadError)
    iterations = check_int(iterations, "iterations", error=WorkloadError)
    run = workloads.record(paradigm, dataset=dataset, workers=P, epochs=1, seed=seed, **options)
    have = run.iterations
    if have < iterations:
        run = workloads.record(paradigm, dataset=dataset, workers=P, seed=seed,
                               epochs=math.ceil(iterations / max(have, 1)), **options)
    return first_iterations(run.trace, iterations).with_metadata(run_accuracy=run.accuracy)


def traces(source, workers, iterations=3, seed=0, dataset="digits", model=None,
           batch=None, base_workers=4, device_flops=None, retune=None, **options):
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
    retune : callable, optional
        ``retune(P, trace)`` returns hyper-parameters to change at that P
        (e.g. ``{"segments": k}``, LP segments tuned to P) or None; the trace
        at P is then rebuilt with them (from the same recording).
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
    from workloads import models, projection

    workers = check_workers(workers)
    iterations = check_int(iterations, "iterations", error=WorkloadError)
    if model is not None:
        models.get_model(model)  # an unknown name fails here, before any recording
    if batch is not None:
        batch = check_int(batch, "batch", error=WorkloadError)
    if isinstance(source, str) and source in workloads.PARADIGMS:
        base = None
        # A paradigm that cannot be projected is recorded at every P, unless a model or a
        # batch size asks for a projection: then project() says why it cannot be.
        if source in projection.PROJECTABLE or model is not None or batch is not None:
            base_workers = check_int(base_workers, "base_workers", error=WorkloadError)
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
    def build(P, changes=None):
        if base is None:
            t = record_at(source, P, iterations, seed, dataset, **{**options, **(changes or {})})
            return t.with_metadata(source="recorded")
        b = base
        if changes:
            b = base.with_metadata(hyper={**base.metadata.get("hyper", {}), **changes})
        # Bad input raises a WorkloadError (a NetsimError) with its reason; anything
        # else is a bug and keeps its traceback.
        if model is not None:
            t = models.resize(b, model, workers=P, iterations=iterations, batch_size=batch)
        else:
            t = projection.project(b, P, iterations=iterations, batch_size=batch)
        return t.with_metadata(source="projected")

    out = []
    for P in workers:
        t = build(P)
        changes = retune(P, t) if retune is not None else None
        if changes:
            t = build(P, changes)
        if device_flops is not None:
            t = t.with_metadata(device_flops=float(device_flops))
        out.append(t)
    return out
