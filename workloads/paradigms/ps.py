"""The parameter-server exchange that the parameter-server paradigms share.

Ranks ``0..P-1`` are workers, ``P..P+S-1`` servers. The flat parameter vector
(:func:`workloads.mlp.flatten` order) is cut into S contiguous shards of nearly
equal size (:func:`shard_bounds`); server ``s`` owns shard ``s``. Workers push
to the servers and the servers reply (pull, fetch or broadcast). This module
holds what every paradigm built on that exchange needs: the sharding
(:func:`shard_bounds`, :func:`shard_layout`, :func:`init_servers`), a server's
averaging and update work (:func:`server_update_flops`), the statistics of a
recorded exchange, dense (:func:`measure_dense`) or sparse (:func:`measure_sparse`,
:func:`sparse_stats`, :func:`sparse_sizes`), and the alpha-beta closed form of
one push / server / pull iteration (:func:`closed_form`).

Its users: :mod:`workloads.paradigms.ps_sync`, :mod:`workloads.paradigms.ps_async`,
:mod:`workloads.paradigms.pf`, :mod:`workloads.paradigms.slimdp`, :mod:`workloads.paradigms.model_averaging`,
:mod:`workloads.paradigms.admm`, :mod:`workloads.paradigms.ps_partitioned` and
:mod:`workloads.paradigms.ringtmp` (its neuron slices are shards).
"""

import numpy as np

from netsim import checks, costmodel
from netsim.comm.collectives.schedule import split

from workloads import mlp
from workloads.plan.closed import per_iteration, terms, worker_mask
from workloads.errors import ProjectionError, WorkloadError
from workloads.option_ranges import check_option
from workloads.plan.measure import (bytes_by, dense_bpv, recorded_index, recording, steps_per_epoch, tag_mask,
                   train_samples)

__all__ = ["shard_bounds", "shard_layout", "init_servers", "server_update_flops",
           "measure_dense", "measure_sparse", "sparse_stats", "sparse_sizes", "closed_form"]


def shard_bounds(n, servers):
    """Boundaries of ``servers`` contiguous, nearly equal shards of ``n`` values.

    Shard ``s`` is ``[bounds[s], bounds[s + 1])``; the first ``n % servers``
    shards hold one value more.

    Parameters
    ----------
    n : int
        Values.
    servers : int
        Shards.

    Raises
    ------
    WorkloadError
        If ``servers`` is not an integer in ``1..n`` (each server needs a value).

    Examples
    --------
    >>> shard_bounds(131, 3).tolist()
    [0, 44, 88, 131]
    """
    # The option's range first (the words of --set and of a sweep config), then the upper
    # bound, the number of parameters: every server needs a value.
    check_option("servers", servers)
    servers = checks.check_int(servers, "servers", 1, n, WorkloadError)
    # The collectives' whole-element cut, one value per element.
    sizes = split(n, servers, element=1).astype(np.int64)
    return np.concatenate([[0], np.cumsum(sizes)])


def shard_layout(c):
    """Shards of a plan's model over its servers, and the ranks of workers and servers.

    Parameters
    ----------
    c : workloads.plan.measure.Plan
        A schedule's plan (``P`` workers, ``S`` servers, ``model``).

    Returns
    -------
    bounds : ndarray of int
        :func:`shard_bounds` of the model's parameters.
    sizes : ndarray of float
        Values per shard.
    workers, servers : ndarray of int
        Ranks ``0 .. P - 1`` and ``P .. P + S - 1``.

    Examples
    --------
    >>> from types import SimpleNamespace
    >>> c = SimpleNamespace(P=2, S=2, model=SimpleNamespace(params=131))
    >>> [a.tolist() for a in shard_layout(c)]
    [[0, 66, 131], [66.0, 65.0], [0, 1], [2, 3]]
    """
    bounds = shard_bounds(c.model.params, c.S)
    return bounds, np.diff(bounds).astype(np.float64), np.arange(c.P), c.P + np.arange(c.S)


def init_servers(setup, servers):
    """Shard a run's initial parameters among ``servers`` parameter servers.

    Parameters
    ----------
    setup : workloads.recorder.Setup
    servers : int

    Returns
    -------
    bounds : ndarray
        :func:`shard_bounds` of the flat parameter vector.
    shards : list of ndarray
        Server ``s``'s values (float32 copies of the initial parameters).
    velocity : list of ndarray
        Server ``s``'s momentum buffer (zeros).
    models : list of list of ndarray
        Every worker's copy of the initial model (:func:`workloads.mlp.unflatten`).

    Examples
    --------
    >>> from workloads.recorder import prepare
    >>> bounds, shards, velocity, models = init_servers(prepare("iris", 2, seed=0), 3)
    >>> [len(x) for x in shards], len(models)
    ([44, 44, 43], 2)
    """
    bounds = shard_bounds(mlp.num_params(setup.layers), servers)
    flat = mlp.flatten(setup.params)
    shards = [flat[bounds[s]:bounds[s + 1]].copy() for s in range(len(bounds) - 1)]
    velocity = [np.zeros_like(x) for x in shards]
    models = [mlp.unflatten(flat, setup.layers) for _ in setup.shards]
    return bounds, shards, velocity, models


def server_update_flops(P, size):
    """FLOPs of a server averaging ``P`` pushes of a shard of ``size`` values and taking a
    momentum SGD step: ``P * size + update_flops(size)``.

    Parameters
    ----------
    P : int
        Pushes averaged.
    size : int
        Values of the shard.

    Examples
    --------
    >>> server_update_flops(4, 44)
    352.0
    """
    return P * size + mlp.update_flops(size)


def measure_dense(trace, push="push", pull="pull"):
    """Bytes per parameter of the pushes (tag ``push``) and pulls (tag ``pull``) of a
    recorded dense parameter-server run, with its :class:`workloads.plan.measure.Recording`
    (``workloads.paradigms.ps_sync.measure`` itself, and :func:`workloads.paradigms.ps_async.measure` with
    ``pull="fetch"``).

    Parameters
    ----------
    trace : Trace
        A parameter-server recording.
    push : str
        Tag of the pushes.
    pull : str
        Tag of the pulls.

    Examples
    --------
    >>> from workloads.paradigms import ps_sync
    >>> m = measure_dense(ps_sync.run(workers=2, epochs=1, servers=2).trace)
    >>> m["push"], m["pull"], m["recording"].S0
    (4.0, 4.0, 2)
    """
    r = recording(trace)
    sizes = np.diff(shard_bounds(r.model0.params, r.S0))
    bpv = r.md.get("bytes_per_value", mlp.BYTES_PER_VALUE)
    if not isinstance(r.hyper.get("overlap", True), bool):
        # Gradient pieces (workloads.overlap): every value goes up and down once a step.
        per = r.n_rec * r.P0 * r.model0.params
        return {"recording": r, **{k: float(trace.size[tag_mask(trace, t)].sum()) / per
                                   if tag_mask(trace, t).any() else bpv
                                   for k, t in (("push", push), ("pull", pull))}}
    return {"recording": r,
            "push": dense_bpv(trace, push, lambda rank, peer: sizes[peer - r.P0], bpv),
            "pull": dense_bpv(trace, pull, lambda rank, peer: sizes[rank - r.P0], bpv)}


def measure_sparse(trace, push, down):
    """Per recorded iteration, bytes per shard parameter of each worker's pushes (tag
    ``push``) and of each server's replies to it (tag ``down``), for the sparse
    parameter servers (:mod:`workloads.paradigms.pf`, :mod:`workloads.paradigms.slimdp`).

    Parameters
    ----------
    trace : Trace
        A sparse parameter-server recording.
    push : str
        Tag of the pushes.
    down : str
        Tag of the servers' replies.

    Returns
    -------
    dict
        ``up``, ``down``: arrays (iterations, P0, S0); ``up_all``, ``down_all``: the
        same per worker over the whole model; ``recording``.

    Examples
    --------
    >>> from workloads.paradigms import slimdp
    >>> m = measure_sparse(slimdp.run(workers=2, epochs=1).trace, "push", "pull")
    >>> m["up"].shape
    (8, 2, 1)
    """
    r = recording(trace)
    P0, S0, n_rec = r.P0, r.S0, r.n_rec
    mp, md_ = tag_mask(trace, push), tag_mask(trace, down)
    up = bytes_by(trace, mp, (n_rec, P0, S0), trace.iteration[mp], trace.rank[mp],
                  trace.peer[mp] - P0)
    dn = bytes_by(trace, md_, (n_rec, P0, S0), trace.iteration[md_], trace.peer[md_],
                  trace.rank[md_] - P0)
    return sparse_stats(r, up, dn)


def sparse_stats(rec, up, down):
    """The statistics of a sparse parameter server from the bytes of every push
    ``up[iteration, worker, server]`` and reply ``down[iteration, worker, server]``:
    the bytes themselves, per shard parameter (``up``, ``down``) and per parameter of
    the whole model (``up_all``, ``down_all``), with the recording ``rec``.

    Parameters
    ----------
    rec : Recording
    up : numpy.ndarray
        Bytes pushed, (iterations, workers, servers).
    down : numpy.ndarray
        Bytes replied, the same shape.

    Examples
    --------
    >>> from workloads.plan.measure import Recording
    >>> r = Recording(1, 2, 1, mlp.model_of((4, 3)), 8, {}, {})
    >>> sparse_stats(r, np.array([[[16.0, 8.0]]]), np.zeros((1, 1, 2)))["up_all"].tolist()
    [[1.6]]
    """
    sizes = np.diff(shard_bounds(rec.model0.params, rec.S0)).astype(np.float64)
    n = rec.model0.params
    return {"recording": rec, "up_bytes": up, "down_bytes": down, "up": up / sizes,
            "down": down / sizes, "up_all": up.sum(axis=2) / n, "down_all": down.sum(axis=2) / n}


def _recorded_epoch(c):
    """Steps of one recorded epoch, the window repeated beyond the recording: the
    formula used at P, at the recorded P0 and batch (``n_rec // epochs`` is wrong for a
    trace cut to fewer iterations than it recorded)."""
    rec = c.rec
    if c.start + c.iterations <= rec.n_rec:
        return rec.n_rec          # nothing beyond the recording: no dataset to load
    try:
        return steps_per_epoch(train_samples(rec.md), rec.P0, rec.batch0)
    except ProjectionError:
        # The epoch size is unknown (a dataset that needs a path): an uncut recording's.
        return max(1, rec.n_rec // (int(rec.hyper.get("epochs", 1)) or 1))


def sparse_sizes(c, stats, it, key):
    """Bytes of every (worker, server) message of iteration ``it`` of the plan ``c``
    (``key``: ``"up"`` or ``"down"`` of :func:`measure_sparse`): worker w sends as
    recorded worker w mod P0 in recorded iteration ``c.start + it`` (beyond the
    recording, its last epoch over and over); with other servers than recorded, at
    the worker's rate over the whole model.

    Parameters
    ----------
    c : Plan
    stats : dict
        Of :func:`sparse_stats`.
    it : int
        Generated iteration.
    key : str
        ``"up"`` or ``"down"``.

    Examples
    --------
    >>> from workloads.paradigms import slimdp
    >>> from workloads.plan.measure import plan
    >>> m = measure_sparse(slimdp.run(workers=2, epochs=1).trace, "push", "pull")
    >>> sparse_sizes(plan(4, m["recording"], "servers"), m, 0, "up").shape
    (4, 1)
    """
    i = int(recorded_index(c.start + it, c.rec.n_rec, _recorded_epoch(c)))
    w0 = np.arange(c.P) % c.rec.P0
    if c.S == c.rec.S0 and c.model is c.rec.model0:
        return stats[key + "_bytes"][i][w0]           # the recorded bytes themselves
    sizes = np.diff(shard_bounds(c.model.params, c.S)).astype(np.float64)
    if c.S == c.rec.S0:
        rate = stats[key][i][w0]                       # (P, S)
    else:
        rate = np.repeat(stats[key + "_all"][i][w0][:, None], c.S, axis=1)
    return rate * sizes


def closed_form(trace, alpha, beta, device_flops=None):
    """Alpha-beta closed form of one iteration of a push / (server) / pull paradigm.

    Push and pull phases each take :func:`netsim.costmodel.ps_push_pull` / 2 =
    ``alpha + max(P, S) n beta / S``, with ``n`` the mean bytes one worker
    sends (receives) in the phase and ``S`` the servers; the workers' and
    servers' compute add to it (:func:`workloads.plan.closed.terms`). ps-sync, pf,
    slimdp, model-averaging, admm and ps-partitioned all use it.

    Parameters
    ----------
    trace : Trace
        A recording or schedule, with ``metadata["workers"]`` and its roles.
    alpha : float
        Latency of a message, seconds.
    beta : float
        Seconds per byte.
    device_flops : float, optional
        FLOP/s of the compute ops (default: the trace's metadata).

    Returns
    -------
    dict
        ``compute``, ``server``, ``communication``, ``time`` (seconds per
        iteration) and ``formula``.

    Examples
    --------
    Two workers push 1,000 bytes each to one server, which sends them back:
    each phase takes ``alpha + 2 x 1000 beta``.

    >>> from netsim import TraceBuilder
    >>> b = TraceBuilder(3, metadata={"workers": 2, "servers": 1})
    >>> for w in (0, 1): _ = b.message(w, 2, 1000)
    >>> for w in (0, 1): _ = b.message(2, w, 1000)
    >>> cf = closed_form(b.build(), 1e-6, 1e-9)
    >>> abs(cf["communication"] - 2 * (1e-6 + 2 * 1000 * 1e-9)) < 1e-18
    True
    """
    P = int(trace.metadata.get("workers", trace.ranks))
    niter = max(trace.num_iterations, 1)
    worker = worker_mask(trace)
    msg = trace.is_message
    rk, it = trace.rank, trace.iteration
    comm = np.zeros(niter)
    S = int((~worker).sum())
    up = msg & worker[trace.rank] & ~worker[np.maximum(trace.peer, 0)]
    down = msg & ~worker[trace.rank] & worker[np.maximum(trace.peer, 0)]
    for mask, who in ((up, rk), (down, trace.peer)):
        n = per_iteration(trace.size[mask], who[mask], it[mask], worker, trace.ranks, niter,
                          np.mean)
        has = per_iteration(np.ones(int(mask.sum())), who[mask], it[mask], worker,
                            trace.ranks, niter, np.max) > 0
        comm += np.where(has, [costmodel.ps_push_pull(P, x, alpha, beta, servers=max(S, 1)) / 2
                               for x in n], 0.0)
    return terms(trace, comm, device_flops,
                 "compute + push (alpha + max(P,S) n beta / S) + server + pull (same)")
