"""Parameter server, bulk-synchronous (BSP): push gradients, average, pull weights.

Ranks ``0..P-1`` are workers, ``P..P+S-1`` servers. The flat parameter vector
(:func:`workloads.mlp.flatten` order) is cut into S contiguous shards of nearly
equal size; server ``s`` owns shard ``s`` and its momentum buffer. Every step:

1. each worker computes gradients on its own mini-batch with the weights it
   last pulled (forward, then backward layer by layer);
2. it pushes gradient shard ``s`` (float32, ``4 * len(shard)`` bytes) to server
   ``s``; with ``overlap=True`` a shard leaves as soon as the backward ops of the
   layers it covers are done, while earlier layers are still back-propagating;
3. server ``s`` averages the P shards it received (those very arrays) and takes
   a momentum SGD step (a compute op of ``(P + 4) * len(shard)`` FLOPs: P per
   value to average, 4 to update, :func:`server_update_flops`);
4. every worker pulls every server's new shard and rebuilds its model from the
   pulled arrays.

``overlap`` may also name a mode of :mod:`workloads.overlap` (``"none"``,
``"layerwise"``, ``"bucketed"``, ``"priority"``): the gradient then leaves in
pieces (layers, DDP buckets of ``bucket_bytes``, chunks of ``partition_bytes``);
each piece's part on server ``s`` is pushed when the backward op completing the
piece is done, averaged and updated by ``s`` once the P pushes of it are in, and
pulled back; the next forward op of a layer waits only for the pulls of the
pieces it touches. ``True`` (the default) is the shard-per-server push above with
the next forward waiting for every pull, ``False`` and ``"none"`` push after the
whole backward pass.

:func:`run` trains for real and measures the bytes per parameter of what it
pushes and pulls; its trace is :func:`schedule` of those statistics, as is the
projection of a recording to any P (:func:`measure` reads them back).
"""

import numpy as np

from netsim import checks, costmodel
from netsim.collectives.schedule import split

from . import mlp
from .closed import Asymptotic, per_iteration, terms, worker_mask
from .errors import ProjectionError, WorkloadError
from .frontier import Frontier, cols, one
from .plan import (Recording, bytes_by, dense_bpv, finish, grad_deps, plan, recorded_index,
                   recording, steps_per_epoch, tag_mask, train_samples)
from .overlap import (DDP_BUCKET_BYTES, OVERLAP, check_overlap, iterate, piece_segments, pieces,
                      pieces_of)
from .recorder import V100_FP32_FLOPS, bytes_per_value, count_sent, run_result
from .training import epochs_of, first_nonfinite, prepare, worker_batches

__all__ = ["run", "schedule", "measure", "closed_form", "ASYMPTOTIC", "measure_sparse",
           "sparse_stats", "sparse_sizes", "server_update_flops", "shard_bounds", "shard_layout",
           "init_servers", "pull_shard", "SERVERS", "DESCRIPTION", "OPTIONS", "WORDS"]

#: Any number of servers >= 1 (see :func:`workloads.plan.plan`).
SERVERS = "servers"
DESCRIPTION = "parameter server, synchronous: push gradients, servers average, pull weights."

#: Worst-case cost per step (:func:`closed_form`).
ASYMPTOTIC = Asymptotic(
    "parallel SGD (BSP)", "parameter server, S servers",
    "2 (alpha + 4 max(P, S) n beta / S)", "C + (P + 4) n / (S F)",
    "O(P n / S) bytes on a server link; O(C + P n / S) compute",
    "Li et al., OSDI 2014 (parameter server); Dean et al., NIPS 2012")
OPTIONS = {
    "epochs": "passes over each worker's shard of the training set",
    "seed": "seed of the initial weights, shards and mini-batch order",
    "servers": "number of servers; the parameters are sharded evenly among them",
    "hidden": "hidden-layer widths",
    "batch_size": "samples per step per worker",
    "lr": "learning rate",
    "momentum": "SGD momentum (kept on the servers)",
    "overlap": "true: a gradient shard leaves once its layers' backward is done; false; or a "
               "mode none, layerwise, bucketed, priority (next forward per layer)",
    "bucket_bytes": "bucket size of overlap=bucketed (PyTorch DDP's 25 MiB)",
    "partition_bytes": "cut every gradient piece into chunks of at most this many bytes",
    "device_flops": "device throughput in FLOP/s for the compute ops",
    "data_path": "directory of the MNIST IDX files",
}
WORDS = {"overlap": OVERLAP}  #: words a bool option also takes (``--set overlap=layerwise``)


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
    # The upper bound is the number of parameters: every server needs a value.
    servers = checks.check_int(servers, "servers", 1, n, WorkloadError)
    # The collectives' whole-element cut, one value per element.
    sizes = split(n, servers, element=1).astype(np.int64)
    return np.concatenate([[0], np.cumsum(sizes)])


def shard_layout(c):
    """Shards of a plan's model over its servers, and the ranks of workers and servers.

    Parameters
    ----------
    c : workloads.plan.Plan
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


def pull_shard(rec, shards, s, w, iteration, tag="pull"):
    """Record server ``s`` sending its current values to worker ``w``; return what was sent.

    The payload is a copy, so the server's later updates leave it unchanged.

    Parameters
    ----------
    rec : Recorder
    shards : list of numpy.ndarray
        Each server's values.
    s : int
        Server index (rank ``P + s``).
    w : int
        Worker rank.
    iteration : int
    tag : str
        The message's tag.

    Examples
    --------
    >>> from workloads.recorder import Recorder
    >>> rec = Recorder(1, servers=1)
    >>> pull_shard(rec, [np.ones(3, np.float32)], 0, 0, iteration=0).tolist(), rec.total_bytes
    ([1.0, 1.0, 1.0], 12)
    """
    payload = shards[s].copy()
    rec.send(rec.server(s), w, payload, iteration=iteration, tag=tag)
    return payload


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


def run(dataset="iris", workers=4, epochs=30, seed=0, servers=1, hidden=(16,), batch_size=8,
        lr=0.05, momentum=0.9, overlap=True, device_flops=V100_FP32_FLOPS, data_path=None,
        progress=None, bucket_bytes=DDP_BUCKET_BYTES, partition_bytes=None):
    """Train with a synchronous parameter server; record every push and pull.

    Parameters
    ----------
    dataset : str or Dataset
    workers : int
    epochs : int
        Passes over each worker's shard (``ceil(shard / batch_size)`` steps each).
    seed : int
    servers : int
        Server ranks ``workers..workers+servers-1``, each owning one shard.
    hidden : sequence of int
    batch_size : int
        Per worker; the global batch is ``workers * batch_size``.
    lr, momentum : float
    overlap : bool or str
        True: let each gradient shard leave when its layers' backward ops are
        done; False: after the whole backward; or a mode of
        :data:`workloads.overlap.OVERLAP` (see the module docstring).
    device_flops : float
    data_path : str, optional
    progress : callable, optional
        Called as ``progress(epochs_done, epochs)`` after each epoch (progress bars).
    bucket_bytes : float
        Bucket size of ``overlap="bucketed"`` (PyTorch DDP's 25 MiB by default).
    partition_bytes : float, optional
        Largest chunk of a gradient piece (tensor partitioning).

    Returns
    -------
    RunResult
        ``extra`` has ``shard_sizes`` (values per server) and ``test_loss``.

    Examples
    --------
    >>> r = run(workers=2, epochs=1, servers=2)
    >>> r.trace.ranks, r.iterations, r.messages, r.total_bytes
    (4, 8, 64, 16768)
    """
    if not isinstance(overlap, bool):
        overlap, bucket_bytes, partition_bytes = check_overlap(overlap, bucket_bytes,
                                                               partition_bytes)
    setup = prepare(dataset, workers, seed, hidden, data_path, epochs=epochs, lr=lr,
                    momentum=momentum)
    data, layers = setup.data, setup.layers
    bounds, shard, velocity, models = init_servers(setup, servers)
    # What one message carries: a shard (overlap True/False), or a piece's part of one.
    segs = (np.stack([np.arange(servers), np.arange(servers), bounds[:-1], bounds[1:]], 1)
            if isinstance(overlap, bool) else
            piece_segments(bounds, pieces(mlp.model_of(layers), overlap, mlp.BYTES_PER_VALUE,
                                          bucket_bytes, partition_bytes)))
    sent = {"push": {}, "pull": {}}
    it, batch_of, bad = 0, None, None
    for _ in epochs_of(range(epochs), epochs, progress):
        for batch in worker_batches(setup.shards, batch_size, setup.rng):
            batch_of = np.array([len(idx) for idx in batch])   # the same every step
            received = [[] for _ in range(servers)]
            for w, idx in enumerate(batch):
                loss, grads = mlp.loss_and_grads(models[w], data.X_train[idx], data.y_train[idx])
                bad = first_nonfinite(bad, loss, it)
                g = mlp.flatten(grads)
                for _, s, lo, hi in segs.tolist():
                    count_sent(sent["push"], g[lo:hi])
                for s in range(servers):
                    received[s].append(g[bounds[s]:bounds[s + 1]])
            pulled = [[None] * servers for _ in range(workers)]
            for s in range(servers):
                avg = np.mean(np.stack(received[s]), axis=0, dtype=np.float32)
                mlp.sgd_momentum_step([shard[s]], [avg], [velocity[s]], lr, momentum)
                for w in range(workers):
                    pulled[w][s] = shard[s].copy()
                    for lo, hi in segs[segs[:, 1] == s][:, 2:].tolist():
                        count_sent(sent["pull"], pulled[w][s][lo - bounds[s]:hi - bounds[s]])
            models = [mlp.unflatten(np.concatenate(p), layers) for p in pulled]
            it += 1
    final = mlp.unflatten(np.concatenate(shard), layers)
    hyper = dict(epochs=epochs, servers=servers, hidden=hidden, batch_size=batch_size, lr=lr,
                 momentum=momentum, overlap=overlap, device_flops=device_flops,
                 **({} if isinstance(overlap, bool) else
                    {"bucket_bytes": bucket_bytes, "partition_bytes": partition_bytes}))
    stats = {"recording": Recording(workers, servers, it, mlp.model_of(layers), batch_of,
                                    hyper, {}),
             "push": bytes_per_value(sent["push"]), "pull": bytes_per_value(sent["pull"])}
    extra = {"shard_sizes": np.diff(bounds).tolist(),
             "test_loss": mlp.loss(final, data.X_test, data.y_test)}
    return run_result("ps-sync", schedule(workers, stats), setup,
                      mlp.accuracy(final, data.X_test, data.y_test),
                      sent["push"]["bytes"] + sent["pull"]["bytes"],
                      sent["push"]["messages"] + sent["pull"]["messages"], it,
                      hyper, servers=servers, extra=extra, diverged_at=bad)


def measure(trace, push="push", pull="pull"):
    """Bytes per parameter of the pushes (tag ``push``) and pulls (tag ``pull``) of a
    recorded parameter-server run, with its :class:`workloads.plan.Recording`.

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
    >>> m = measure(run(workers=2, epochs=1, servers=2).trace)
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


def schedule(P, stats, servers=None, iterations=None, batch_size=None, model=None,
             start=0):
    """The trace of a synchronous parameter server with ``P`` workers.

    Every step: each worker's forward and backward ops, its pushes of every
    shard (waiting for the backward op that completes the shard with
    ``overlap``, else for the whole backward), each server's update
    (:func:`server_update_flops` of P pushes), and every server's pull to
    every worker. Message bytes are the shard's values times the measured bytes
    per parameter.

    Parameters
    ----------
    P : int
    stats : dict
        From :func:`measure` (or a live run).
    servers, iterations, batch_size : int, optional
        The recorded ones if None; the parameters are re-sharded evenly.
    model : workloads.mlp.Model, optional
    start : int, optional
        The run's iteration the trace begins at (:class:`workloads.plan.Plan`).

    Returns
    -------
    netsim.Trace

    Examples
    --------
    >>> t = schedule(32, measure(run(workers=2, epochs=1).trace), servers=4, iterations=3)
    >>> t.ranks, t.num_messages == 3 * 2 * 32 * 4
    (36, True)
    """
    c = plan(P, stats["recording"], SERVERS, servers, iterations, batch_size, model, start)
    P, S, model = c.P, c.S, c.model
    bounds, sizes, W, srv = shard_layout(c)
    overlap = c.rec.hyper.get("overlap", True)
    if overlap == "none" and not c.rec.hyper.get("partition_bytes"):
        overlap = False      # the same schedule
    if not isinstance(overlap, bool):
        return finish(_overlapped(c, stats, bounds, W, srv), c, SERVERS)
    b = Frontier(P + S)
    for it in range(c.iterations):
        bwd = b.forward_backward(W, model, c.batch, it)
        b.send(np.repeat(W, S), np.tile(srv, P), np.tile(sizes * stats["push"], P), it, "push",
               grad_deps(model, bounds, bwd, W, overlap, b))
        b.compute(srv, server_update_flops(P, sizes), it, "update")
        b.send(np.repeat(srv, P), np.tile(W, S), np.repeat(sizes * stats["pull"], P), it, "pull")
    return finish(b.build(), c, SERVERS)


def _overlapped(c, stats, bounds, W, srv):
    """The schedule with the gradient in pieces (:mod:`workloads.overlap`): per piece and
    server holding part of it, every worker's push (after the backward op completing
    the piece), the server's update once the P pushes are in, and its pull to every
    worker; the next forward op of a unit waits for the pulls of its pieces."""
    P, S = c.P, c.S
    pcs = pieces_of(c.model, c.rec.hyper, stats["push"])
    segs = piece_segments(bounds, pcs)
    b = Frontier(P + S)

    def exchange(it, k, after):
        sk = segs[segs[:, 0] == k]
        s, v = sk[:, 1], (sk[:, 3] - sk[:, 2]).astype(np.float64)
        n, prio = len(s), int(pcs.priority[k])
        push = b.send(np.repeat(W, n), np.tile(srv[s], P), np.tile(v * stats["push"], P),
                      it, "push", one(np.repeat(after, n)), prio)
        upd = b.compute(srv[s], server_update_flops(P, v), it, "update",
                        cols(*push.reshape(P, n)))
        pull = b.send(np.repeat(srv[s], P), np.tile(W, n), np.repeat(v * stats["pull"], P),
                      it, "pull", one(np.repeat(upd, P)), prio)
        return pull.reshape(n, P).T

    return iterate(b, c, pcs, exchange)


def measure_sparse(trace, push, down):
    """Per recorded iteration, bytes per shard parameter of each worker's pushes (tag
    ``push``) and of each server's replies to it (tag ``down``), for the sparse
    parameter servers (:mod:`workloads.pf`, :mod:`workloads.slimdp`).

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
    >>> from workloads import slimdp
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
    >>> from workloads.plan import Recording
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
    >>> from workloads import slimdp
    >>> from workloads.plan import plan
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
    servers' compute add to it (:func:`workloads.closed.terms`). ps-sync, pf,
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
