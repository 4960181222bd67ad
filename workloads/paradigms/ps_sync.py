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
   value to average, 4 to update, :func:`workloads.paradigms.ps.server_update_flops`);
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
projection of a recording to any P (:func:`measure` reads them back). The sharding,
the exchange's statistics and its closed form are those of :mod:`workloads.paradigms.ps`,
shared with the other parameter-server paradigms.
"""

import numpy as np

from workloads import mlp
from workloads.plan.closed import Asymptotic
from workloads.plan.frontier import Frontier, cols, one
from workloads.plan.measure import Recording, finish, grad_deps, plan
from workloads.overlap import (DDP_BUCKET_BYTES, OVERLAP, check_overlap, iterate, piece_segments, pieces,
                      pieces_of)
from workloads.paradigms.ps import closed_form, init_servers, server_update_flops, shard_layout
# ps-sync tags its pushes "push" and its pulls "pull", the defaults of the dense
# exchange's statistics: its measure is workloads.paradigms.ps.measure_dense itself.
from workloads.paradigms.ps import measure_dense as measure
from workloads.recorder import V100_FP32_FLOPS, bytes_per_value, count_sent, run_result
from workloads.training import epochs_of, first_nonfinite, prepare, worker_batches

__all__ = ["run", "schedule", "measure", "closed_form", "ASYMPTOTIC", "SERVERS", "DESCRIPTION",
           "OPTIONS", "WORDS"]

#: Any number of servers >= 1 (see :func:`workloads.plan.measure.plan`).
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


def schedule(P, stats, servers=None, iterations=None, batch_size=None, model=None,
             start=0):
    """The trace of a synchronous parameter server with ``P`` workers.

    Every step: each worker's forward and backward ops, its pushes of every
    shard (waiting for the backward op that completes the shard with
    ``overlap``, else for the whole backward), each server's update
    (:func:`workloads.paradigms.ps.server_update_flops` of P pushes), and every server's pull to
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
        The run's iteration the trace begins at (:class:`workloads.plan.measure.Plan`).

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
