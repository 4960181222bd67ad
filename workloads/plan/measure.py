"""What every paradigm's ``measure`` and ``schedule`` share.

A paradigm module's ``measure(trace)`` reads its statistics from a recording
and starts from :func:`recording` (the recorded P, servers, iterations, model,
batch and hyper-parameters); its ``schedule(P, stats, ...)`` starts from
:func:`plan` (the P, servers, iterations, model and batch to generate, each
defaulting to the recording's) and ends with :func:`finish` (the metadata of
the trace it made). The helpers below read message sizes out of a recording.

Examples
--------
>>> import workloads
>>> r = recording(workloads.record("ps-sync", workers=2, epochs=1).trace)
>>> r.P0, r.S0, r.n_rec, r.model0.params, r.batch0
(2, 1, 8, 131, 8)
"""

import math
from typing import NamedTuple

import numpy as np

from netsim import checks
from netsim.trace.core import MESSAGE

from workloads import datasets, mlp
from workloads.errors import ProjectionError
from workloads.plan.frontier import one

__all__ = ["Recording", "Plan", "recording", "plan", "finish", "tag_mask", "dense_bpv",
           "bytes_by", "recorded_index", "steps_per_epoch", "train_samples", "grad_deps"]


class Recording(NamedTuple):
    """The recorded run a ``measure`` reads: P0 workers, S0 servers, n_rec iterations,
    the model, the batch per worker, the hyper-parameters and the whole metadata.

    Examples
    --------
    >>> from netsim import TraceBuilder
    >>> md = {"workers": 2, "servers": 1, "layers": [4, 3], "hyper": {"batch_size": 8}}
    >>> r = recording(TraceBuilder(3, md).build())
    >>> r.P0, r.S0, r.model0.params, r.batch0
    (2, 1, 15, 8)
    """

    P0: int
    S0: int
    n_rec: int
    model0: mlp.Model
    batch0: int
    hyper: dict
    md: dict


class Plan(NamedTuple):
    """What a ``schedule`` generates: P workers, S servers, iterations, the model at P,
    the batch per worker, the :class:`Recording` its statistics came from, and the
    run's iteration ``start`` at which the generated iterations begin.

    A schedule generates iterations ``start .. start + iterations - 1`` of the run,
    numbered ``0 .. iterations - 1`` in its trace: whatever depends on the
    iteration's place in the run (DGC's warm-up stage, a period, the recorded
    iteration replayed) reads ``start + i``; the last generated iteration ends the run.

    Examples
    --------
    >>> from netsim import TraceBuilder
    >>> md = {"workers": 2, "servers": 1, "layers": [4, 3], "hyper": {"batch_size": 8}}
    >>> c = plan(4, recording(TraceBuilder(3, md).build()), "servers")
    >>> c.P, c.S, c.model.params, c.batch
    (4, 1, 15, 8)
    """

    P: int
    S: int
    iterations: int
    model: mlp.Model
    batch: int
    rec: Recording
    start: int = 0


def recording(trace, workers=None, batch=None):
    """The :class:`Recording` of a recorded trace (``workers``/``batch`` override the
    metadata's, for a run whose one rank stands for several workers).

    Parameters
    ----------
    trace : Trace
        A recorded trace.
    workers : int, optional
        Workers, overriding the metadata's.
    batch : int, optional
        Batch per worker, overriding the metadata's.

    Examples
    --------
    >>> from netsim import TraceBuilder
    >>> t = TraceBuilder(1, {"workers": 1, "servers": 0, "layers": [4, 3], "hyper": {}}).build()
    >>> recording(t).model0.params, recording(t).n_rec
    (15, 1)
    """
    md = trace.metadata
    hyper = dict(md.get("hyper") or {})
    return Recording(int(md["workers"]) if workers is None else int(workers),
                     int(md["servers"]), max(1, trace.num_iterations),
                     mlp.model_of([int(w) for w in md["layers"]]),
                     int(hyper.get("batch_size", 1)) if batch is None else int(batch), hyper, md)


def plan(P, rec, servers_kind, servers=None, iterations=None, batch_size=None, model=None,
         start=0):
    """The :class:`Plan` of a schedule at ``P``; every option defaults to the recording's.

    Parameters
    ----------
    P : int
    rec : Recording
    servers_kind : {"none", "master", "servers"}
        No servers, one fixed master, or any S >= 1 (the parameters re-sharded).
    servers, iterations, batch_size : int, optional
    model : workloads.mlp.Model, optional
    start : int, optional
        The run's iteration at which the generated ones begin (>= 0).

    Raises
    ------
    ProjectionError
        For a bad P or option, or more servers than parameters.

    Examples
    --------
    >>> r = Recording(4, 1, 10, mlp.model_of((4, 16, 3)), 8, {}, {})
    >>> plan(64, r, "servers", servers=2).S, plan(64, r, "servers").iterations
    (2, 10)
    >>> plan(64, r, "servers", iterations=3, start=180).start
    180
    """
    P = checks.check_int(P, "P", error=ProjectionError)
    if servers_kind == "servers":
        S = rec.S0 if servers is None else checks.check_int(servers, "servers",
                                                            error=ProjectionError)
    elif servers_kind == "master":
        if servers not in (None, 1):
            raise ProjectionError(f"{rec.md.get('paradigm')} has one master; servers must be 1, "
                                  f"got {servers!r}")
        S = 1
    else:
        if servers not in (None, 0):
            raise ProjectionError(f"{rec.md.get('paradigm')} has no servers; servers must be "
                                  f"None or 0, got {servers!r}")
        S = 0
    iters = (rec.n_rec if iterations is None
             else checks.check_int(iterations, "iterations", error=ProjectionError))
    batch = (rec.batch0 if batch_size is None
             else checks.check_int(batch_size, "batch_size", error=ProjectionError))
    start = checks.check_int(start, "start", 0, error=ProjectionError)
    model = rec.model0 if model is None else model
    if S > model.params:
        raise ProjectionError(f"servers ({S}) exceeds the {model.params} parameters to shard")
    return Plan(P, S, iters, model, batch, rec, start)


def finish(trace, c, servers_kind, ranks_of_workers=None, hyper_batch=None, layers=None):
    """Give a scheduled trace the metadata of the recording, updated for the plan ``c``.

    ``workers``, ``servers``, ``ranks``, ``roles``, ``iterations``, ``total_bytes``,
    ``messages`` and ``model_params`` are the schedule's; ``window`` is
    ``[start, stop)``, the run's iterations the trace holds; ``layers`` (or ``model``
    for another model), ``hyper["batch_size"]`` (``hyper_batch``, the batch per
    worker by default) and ``projection`` (from where, with the recording's P,
    servers, iterations and batch per worker) say what changed. A plan
    from a live run (a :class:`Recording` without metadata) leaves the trace as is.

    Parameters
    ----------
    trace : Trace
        The scheduled trace.
    c : Plan
        Its plan.
    servers_kind : str
        The paradigm's ``SERVERS`` (``"servers"``, ``"master"``, ...).
    ranks_of_workers : int, optional
        Ranks standing for the workers, if not one each.
    hyper_batch : int, optional
        ``hyper["batch_size"]`` (default: the plan's batch per worker).
    layers : sequence of int, optional
        Widths, if the model changed.

    Examples
    --------
    >>> from netsim import TraceBuilder
    >>> r = Recording(2, 0, 1, mlp.model_of((4, 3)), 8, {}, {"layers": [4, 3]})
    >>> t = finish(TraceBuilder(4).build(), Plan(4, 0, 1, r.model0, 8, r), "none")
    >>> t.metadata["workers"], t.metadata["roles"], t.metadata["projection"]["from_workers"]
    (4, ['worker', 'worker', 'worker', 'worker'], 2)
    >>> t.metadata["window"]
    [0, 1]
    """
    rec, model = c.rec, c.model
    if not rec.md:
        return trace        # a live run: run_result gives the metadata
    workers = c.P if ranks_of_workers is None else ranks_of_workers
    meta = dict(rec.md)
    roles = ["worker"] * workers + ["master" if servers_kind == "master" else "server"] * c.S
    meta.update(workers=c.P, servers=c.S, ranks=trace.ranks, roles=roles,
                iterations=c.iterations, total_bytes=trace.total_bytes,
                messages=trace.num_messages, model_params=model.params,
                window=[c.start, c.start + c.iterations])
    other = model is not rec.model0 and layers is None
    if layers is not None:
        meta["layers"] = [int(w) for w in layers]
    if other:
        meta.pop("layers", None)
        meta["model"] = model.name
    meta["hyper"] = dict(rec.hyper, batch_size=c.batch if hyper_batch is None else hyper_batch)
    meta["projection"] = {"from_workers": rec.P0, "from_servers": rec.S0,
                          "from_iterations": rec.n_rec, "from_batch_size": rec.batch0,
                          "batch_size": c.batch,
                          "scaling": "weak", "model": model.name if other else None}
    # A schedule's frontier builds its trace without metadata: this sets all of it.
    return trace.with_metadata(**meta)


# -- reading a recording ---------------------------------------------------------------------

def tag_mask(trace, name, kind=MESSAGE):
    """Ops of ``kind`` tagged ``name``.

    Parameters
    ----------
    trace : Trace
    name : str
        The tag.
    kind : int
        :data:`netsim.trace.core.MESSAGE` or :data:`netsim.trace.core.COMPUTE`.

    Examples
    --------
    >>> from netsim import TraceBuilder
    >>> b = TraceBuilder(2); _ = b.message(0, 1, 8, tag="push"); _ = b.message(1, 0, 8)
    >>> tag_mask(b.build(), "push").tolist()
    [True, False]
    """
    return (trace.kind == kind) & trace.tagged(name)


def dense_bpv(trace, tag, values, fallback):
    """Bytes per parameter of the messages tagged ``tag``; ``values(rank, peer)`` gives
    each message's parameter count; ``fallback`` if there are none.

    Parameters
    ----------
    trace : Trace
    tag : str
        The messages' tag.
    values : callable
        ``values(rank, peer)``: parameters each message carries.
    fallback : float
        Returned when there is no such message.

    Examples
    --------
    >>> from netsim import TraceBuilder
    >>> b = TraceBuilder(2); _ = b.message(0, 1, 40, tag="push")
    >>> dense_bpv(b.build(), "push", lambda r, p: 10 * np.ones(len(r)), 4.0)
    4.0
    """
    m = tag_mask(trace, tag)
    if not m.any():
        return fallback
    total = float(np.sum(values(trace.rank[m], trace.peer[m])))
    return float(trace.size[m].sum()) / total if total > 0 else fallback


def bytes_by(trace, mask, shape, *keys):
    """Sum of the bytes of the messages of ``mask`` into an array of ``shape`` indexed by
    ``keys`` (one column per axis).

    Parameters
    ----------
    trace : Trace
    mask : numpy.ndarray of bool
        The messages summed.
    shape : tuple of int
        Shape of the result.
    *keys : numpy.ndarray of int
        Index of each message along each axis.

    Examples
    --------
    >>> from netsim import TraceBuilder
    >>> b = TraceBuilder(2); _ = b.message(0, 1, 8); _ = b.message(1, 0, 4)
    >>> t = b.build()
    >>> bytes_by(t, t.kind == 1, (2,), t.rank).tolist()
    [8.0, 4.0]
    """
    flat = np.ravel_multi_index(tuple(np.asarray(k, np.int64) for k in keys), shape)
    return np.bincount(flat, weights=trace.size[mask],
                       minlength=math.prod(shape)).reshape(shape)


def recorded_index(i, n_rec, window):
    """Recorded iteration of generated iteration ``i``: itself, or beyond the recording
    the last ``window`` recorded iterations over and over.

    Parameters
    ----------
    i : int
        Generated iteration.
    n_rec : int
        Recorded iterations.
    window : int
        Recorded iterations repeated beyond the recording.

    Examples
    --------
    >>> recorded_index([0, 3, 4, 5, 6], 4, 2).tolist()
    [0, 3, 2, 3, 2]
    """
    i = np.asarray(i, np.int64)
    window = max(1, min(int(window), n_rec))
    return np.where(i < n_rec, i, n_rec - window + (i - n_rec) % window)


def steps_per_epoch(N, P, b):
    """Steps of one epoch of ``N`` samples over ``P`` workers of batch ``b``:
    ``ceil(ceil(N / P) / b)`` (:func:`workloads.training.worker_batches`).

    Parameters
    ----------
    N : int
        Training samples.
    P : int
        Workers.
    b : int
        Batch per worker.

    Examples
    --------
    >>> steps_per_epoch(120, 4, 8), steps_per_epoch(120, 8, 8)
    (4, 2)
    """
    return max(1, math.ceil(math.ceil(N / P) / b))


def train_samples(md):
    """Training samples of the recorded dataset (metadata ``train_samples``, else loaded).

    Raises
    ------
    ProjectionError
        If neither says (a dataset that needs a path, or an unknown one).

    Examples
    --------
    >>> train_samples({"dataset": "iris"}), train_samples({"train_samples": 7})
    (120, 7)
    """
    N = md.get("train_samples")
    if N is None:
        try:
            N = datasets.load(md.get("dataset")).n_train
        except Exception as exc:  # a dataset that needs a path, or an unknown one
            raise ProjectionError(f"{md.get('paradigm')}: the trace does not say how many "
                                  f"training samples an epoch has (metadata 'train_samples') "
                                  f"and dataset {md.get('dataset')!r} cannot be loaded to find "
                                  f"out: {exc}")
    return int(N)


def grad_deps(model, bounds, bwd, ranks, overlap, b):
    """Deps of the pushes ``ranks x shards``: the backward op of the lowest unit a shard
    touches (``overlap``), else the sender's frontier (``b`` a :class:`Frontier`).

    Parameters
    ----------
    model : workloads.mlp.Model
    bounds : numpy.ndarray of int
        Shard boundaries (:func:`workloads.paradigms.ps.shard_bounds`).
    bwd : numpy.ndarray of int
        Backward op ids, (ranks, units).
    ranks : numpy.ndarray of int
        The pushing ranks.
    overlap : bool
        Whether a shard leaves once its units' backward is done.
    b : Frontier
        The builder (its frontiers without ``overlap``).

    Examples
    --------
    >>> from workloads.plan.frontier import Frontier
    >>> b = Frontier(2); bwd = b.forward_backward([0], (4, 16, 3), 1)
    >>> grad_deps(mlp.model_of((4, 16, 3)), np.array([0, 90, 131]), bwd, [0], True, b)[1]
    array([3, 2])
    """
    S = len(bounds) - 1
    if not overlap:
        return b.frontier(np.repeat(ranks, S))
    unit = np.tile(model.unit_of(bounds[:-1]), len(ranks))
    return one(bwd[unit, np.repeat(np.arange(len(ranks)), S)])
