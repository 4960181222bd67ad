"""A paradigm's trace at each worker count P: recorded there, or recorded once and projected.

:func:`traces` gives the trace of a paradigm (or of a saved recording) at
every P of a study: a paradigm of :data:`workloads.plan.projection.PROJECTABLE` is
recorded once at a small P and projected (:func:`workloads.plan.projection.project`),
or resized to a real model (:func:`workloads.models.resize`); any other is
recorded at every P (:func:`record_at`); :func:`base_recording` is the
recording a study projects from. A trace can be any window of the run, its
iterations ``start .. start + iterations - 1`` (``start=``): the schedules
generate it (:class:`workloads.plan.measure.Plan`), and :func:`iteration_window` cuts
it from a recording.
"""

import math

import numpy as np

from netsim.checks import check_int
from netsim.trace.core import Trace
from netsim.formats.tracefile import load_trace
from workloads.errors import WorkloadError

__all__ = ["check_workers", "first_iterations", "iteration_window", "record_at",
           "base_recording", "traces"]


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
    >>> check_workers(8)
    Traceback (most recent call last):
    ...
    workloads.errors.WorkloadError: workers must be a sequence of worker counts ([2, 4, 8]), got int 8
    """
    if isinstance(workers, (str, bytes, dict)) or not hasattr(workers, "__iter__"):
        raise WorkloadError(f"workers must be a sequence of worker counts ([2, 4, 8]), got "
                            f"{type(workers).__name__} {workers!r:.40}")
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

    :func:`iteration_window` from 0.

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
    return iteration_window(trace, 0, check_int(k, "iterations", error=WorkloadError))


def iteration_window(trace, start, stop):
    """The ops of iterations ``start .. stop - 1`` of a trace, numbered from 0.

    Dependencies on dropped ops (an op of the window waiting for one before it)
    are dropped too: the window starts as a run does. ``metadata["window"]`` says
    where the window is in the run (``[start, stop]``, shifted by the trace's own
    window if it already is one) and ``metadata["iterations"]`` how many it holds.

    Parameters
    ----------
    trace : Trace
    start : int
        First iteration kept (>= 0).
    stop : int
        One past the last (> start).

    Raises
    ------
    WorkloadError
        For ``start < 0`` or ``stop <= start``.

    Examples
    --------
    >>> from netsim import TraceBuilder
    >>> b = TraceBuilder(2)
    >>> a = b.message(0, 1, 8, iteration=0); _ = b.message(1, 0, 4, deps=[a], iteration=1)
    >>> w = iteration_window(b.build(), 1, 2)
    >>> w.size.tolist(), w.iteration.tolist(), len(w.dep_idx), w.metadata["window"]
    ([4.0], [0], 0, [1, 2])
    """
    start = check_int(start, "start", 0, error=WorkloadError)
    stop = check_int(stop, "stop", start + 1, error=WorkloadError)
    keep = (trace.iteration >= start) & (trace.iteration < stop)
    if keep.all() and start == 0:
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
    shift = (meta.get("window") or [0])[0]
    meta["iterations"] = int(max(0, min(stop, trace.num_iterations) - start))
    meta["window"] = [shift + start, shift + start + meta["iterations"]]
    return Trace(trace.ranks, trace.kind[keep], trace.rank[keep], trace.peer[keep],
                 trace.size[keep], trace.duration[keep], trace.flops[keep],
                 trace.iteration[keep] - start, trace.tag[keep], dep_ptr, dep_idx,
                 tags=trace.tags,
                 metadata=meta, channel=trace.channel[keep], priority=trace.priority[keep],
                 spec=trace.spec[keep], specs=trace.specs, queue=trace.queue[keep])


def record_at(paradigm, P, iterations=3, seed=0, dataset="digits", start=0, **options):
    """Record ``paradigm`` with P workers and keep ``iterations`` of its iterations from
    ``start`` (:func:`iteration_window`).

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
    start : int
        The run's first iteration kept.
    **options
        Paradigm options.

    Examples
    --------
    >>> record_at("ps-sync", 2, iterations=2, dataset="iris").num_iterations
    2
    >>> record_at("ps-sync", 2, iterations=2, start=7, dataset="iris").metadata["window"]
    [7, 9]
    """
    import workloads

    P = check_int(P, "workers", error=WorkloadError)
    iterations = check_int(iterations, "iterations", error=WorkloadError)
    start = check_int(start, "start", 0, error=WorkloadError)
    run = workloads.record(paradigm, dataset=dataset, workers=P, epochs=1, seed=seed, **options)
    have = run.iterations
    if have < start + iterations:
        run = workloads.record(paradigm, dataset=dataset, workers=P, seed=seed,
                               epochs=math.ceil((start + iterations) / max(have, 1)), **options)
    return iteration_window(run.trace, start, start + iterations).with_metadata(
        run_accuracy=run.accuracy)


def base_recording(source, seed=0, dataset="digits", model=None, batch=None, base_workers=4,
                   iterations=None, **options):
    """The recording a study projects from, or None for a paradigm recorded at every P.

    A paradigm of :data:`workloads.plan.projection.PROJECTABLE` (or any paradigm when
    a ``model`` or ``batch`` asks for a projection) is recorded once at
    ``base_workers``: one epoch, or as many as hold ``iterations``
    iterations; a :class:`~netsim.Trace` is returned as it is and a trace file
    loaded.

    Parameters
    ----------
    source : str or Trace or path
        As for :func:`traces`.
    seed, dataset, model, batch, base_workers, **options
        As for :func:`traces`.
    iterations : int, optional
        Iterations the recording must hold (default: one epoch's).

    Returns
    -------
    Trace or None

    Raises
    ------
    WorkloadError
        For an unknown paradigm or model or a bad option.

    Examples
    --------
    >>> base_recording("ps-sync", dataset="iris").num_iterations        # one epoch at P0 = 4
    4
    >>> base_recording("ps-sync", dataset="iris", iterations=10).num_iterations   # 3 epochs
    12
    >>> base_recording("ps-partitioned") is None                        # recorded at every P
    True
    """
    import workloads
    from workloads import models
    from workloads.plan import projection

    if model is not None:
        models.get_model(model)  # an unknown name fails here, before any recording
    if isinstance(source, str) and source in workloads.PARADIGMS:
        # A paradigm that cannot be projected is recorded at every P, unless a model or a
        # batch size asks for a projection: then project() says why it cannot be.
        if source not in projection.PROJECTABLE and model is None and batch is None:
            return None
        base_workers = check_int(base_workers, "base_workers", error=WorkloadError)
        # Whole epochs, so that the projection measures every per-epoch statistic.
        run = workloads.record(source, dataset=dataset, workers=base_workers, epochs=1,
                               seed=seed, **options)
        if iterations is not None and run.iterations < iterations:
            run = workloads.record(source, dataset=dataset, workers=base_workers, seed=seed,
                                   epochs=math.ceil(iterations / max(run.iterations, 1)),
                                   **options)
        return run.trace
    if isinstance(source, Trace):
        return source
    if isinstance(source, str) and source.endswith((".npz", ".json")):
        return load_trace(source)
    raise WorkloadError(f"unknown paradigm {source!r}; known: {', '.join(workloads.PARADIGMS)}"
                        " (or give a trace file .npz/.json)")


def traces(source, workers, iterations=3, seed=0, dataset="digits", model=None,
           batch=None, base_workers=4, device_flops=None, retune=None, start=0, **options):
    """The trace of ``source`` at every P of ``workers``: iterations ``start .. start +
    iterations - 1`` of its run.

    Parameters
    ----------
    source : str or Trace or path
        A paradigm name (a key of :data:`workloads.PARADIGMS`), a recorded
        :class:`~netsim.Trace`, or the path of a saved trace (``.npz``/``.json``).
    workers : sequence of int
        Strictly increasing worker counts >= 1.
    iterations : int
        Iterations per trace.
    start : int
        The run's iteration the traces begin at (``metadata["window"]``).
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
        A paradigm of :data:`workloads.plan.projection.PROJECTABLE` is recorded
        once (one epoch) at this P and projected to every P
        (:func:`workloads.plan.projection.project`, weak scaling: the per-worker
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
    >>> traces("dgc", [8], iterations=2, start=16, dataset="iris")[0].metadata["window"]
    [16, 18]
    """
    from workloads import models
    from workloads.plan import projection

    workers = check_workers(workers)
    iterations = check_int(iterations, "iterations", error=WorkloadError)
    start = check_int(start, "start", 0, error=WorkloadError)
    if batch is not None:
        batch = check_int(batch, "batch", error=WorkloadError)
    base = base_recording(source, seed, dataset, model, batch, base_workers, **options)

    def build(P, changes=None):
        if base is None:
            t = record_at(source, P, iterations, seed, dataset, start,
                          **{**options, **(changes or {})})
            return t.with_metadata(source="recorded")
        b = base
        if changes:
            b = base.with_metadata(hyper={**base.metadata.get("hyper", {}), **changes})
        # Bad input raises a WorkloadError (a NetsimError) with its reason; anything
        # else is a bug and keeps its traceback.
        if model is not None:
            t = models.resize(b, model, workers=P, iterations=iterations, batch_size=batch,
                              start=start)
        else:
            t = projection.project(b, P, iterations=iterations, batch_size=batch, start=start)
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
