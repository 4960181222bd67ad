"""Asynchronous parameter server: Downpour SGD (Dean et al. 2012, "Large Scale
Distributed Deep Networks", NIPS, section 4.1).

Each worker keeps a copy of the weights and, on its own schedule,

* fetches the current weights from the servers every ``n_fetch`` steps,
* computes gradients on its mini-batch with the copy it has (no local update),
* adds them to an accumulator, and every ``n_push`` steps pushes the
  accumulated gradients (float32 shards, ``4 * len(shard)`` bytes each); the
  servers apply them at once with an SGD step (Downpour used Adagrad; we use
  momentum SGD, ``momentum=0`` by default). A server's update of a push is a
  compute op of ``5 * len(shard)`` FLOPs: ps-sync's ``(P + 4)`` per value for a
  single push (1 to take the pushed value in, 4 for the momentum update,
  :func:`workloads.mlp.update_flops`), whatever the momentum.

The asynchrony is simulated deterministically in one process, in rounds: in
round ``t`` the workers due to fetch read the servers' current weights, every
worker computes its step ``t`` concurrently, and the pushes due reach the
servers one after another, in worker order rotated by ``t`` (round-robin). So a
push is applied after those of the workers ahead of it in that round: with
``n_fetch=1`` the staleness is 0..P-1, mean (P-1)/2. The trace keeps the order of
updates on the servers (each update waits for the previous one, and a fetch
waits for the updates it reflects) and nowhere else: a worker waits only for
its own fetches.

Staleness of an update: the number of server updates applied between the
fetch whose weights produced the oldest of the accumulated gradients and this
update. ``RunResult.extra`` reports its mean and maximum.
"""

import numpy as np

from . import mlp
from .errors import check_int
from .ps_sync import init_servers, pull_shard
from .recorder import V100_FP32_FLOPS, Recorder, prepare, push_deps, worker_batches
from .recorder import epochs_of

__all__ = ["run", "DESCRIPTION", "OPTIONS"]

DESCRIPTION = "parameter server, asynchronous (Downpour SGD): fetch every n_fetch, push every n_push steps."
OPTIONS = {
    "epochs": "passes over each worker's shard of the training set",
    "seed": "seed of the initial weights, shards and mini-batch order",
    "servers": "number of servers; the parameters are sharded evenly among them",
    "n_fetch": "fetch the weights every n_fetch local steps",
    "n_push": "push the accumulated gradients every n_push local steps",
    "hidden": "hidden-layer widths",
    "batch_size": "samples per step per worker",
    "lr": "learning rate (applied by the servers to every push)",
    "momentum": "SGD momentum on the servers",
    "overlap": "let a gradient shard leave once its layers' backward is done",
    "device_flops": "device throughput in FLOP/s for the compute ops",
    "data_path": "directory of the MNIST IDX files",
}


def run(dataset="iris", workers=4, epochs=30, seed=0, servers=1, n_fetch=1, n_push=1,
        hidden=(16,), batch_size=8, lr=0.02, momentum=0.0, overlap=True,
        device_flops=V100_FP32_FLOPS, data_path=None, progress=None):
    """Train with Downpour SGD; record every fetch, push and server update.

    Parameters
    ----------
    dataset : str or Dataset
    workers : int
    epochs : int
        Passes over each worker's shard.
    seed : int
    servers : int
    n_fetch, n_push : int
        Fetch every ``n_fetch`` and push every ``n_push`` local steps (a
        worker's last step always pushes).
    hidden : sequence of int
    batch_size : int
    lr, momentum : float
    overlap : bool
    device_flops : float
    data_path : str, optional
    progress : callable, optional
        Called as ``progress(epochs_done, epochs)`` after each epoch (progress bars).

    Returns
    -------
    RunResult
        ``extra``: ``mean_staleness``, ``max_staleness``, ``updates`` (server
        updates applied), ``shard_sizes`` (values per server), ``test_loss``.

    Examples
    --------
    >>> r = run(workers=3, epochs=1, n_push=2)
    >>> r.extra["updates"], r.extra["max_staleness"]
    (9, 2)
    """
    n_fetch = check_int("n_fetch", n_fetch)
    n_push = check_int("n_push", n_push)
    setup = prepare(dataset, workers, seed, hidden, data_path, epochs=epochs, lr=lr,
                    momentum=momentum)
    data, layers = setup.data, setup.layers
    n = mlp.num_params(layers)
    bounds, shard, velocity, models = init_servers(setup, servers)
    acc = [np.zeros(n, np.float32) for _ in range(workers)]
    base = [0] * workers          # server version of the weights a worker holds
    oldest = [None] * workers     # version behind the oldest accumulated gradient
    version = 0
    staleness = []
    rec = Recorder(workers, servers)
    schedule = [b for _ in range(epochs) for b in worker_batches(setup.shards, batch_size, setup.rng)]
    steps = len(schedule)
    for t, batch in enumerate(epochs_of(schedule, epochs, progress)):
        # Round t: the workers due to fetch read the servers' current weights, all
        # compute concurrently, then their pushes reach the servers one by one, in an
        # order rotated every round so that no worker is always the freshest.
        grads_of = {}
        for w, idx in enumerate(batch):
            if t % n_fetch == 0 and t > 0:
                pulled = [pull_shard(rec, shard, s, w, t, tag="fetch") for s in range(servers)]
                models[w] = mlp.unflatten(np.concatenate(pulled), layers)
                base[w] = version
            _, grads = mlp.loss_and_grads(models[w], data.X_train[idx], data.y_train[idx])
            acc[w] += mlp.flatten(grads)
            if oldest[w] is None:
                oldest[w] = base[w]
            grads_of[w] = rec.forward_backward(w, layers, len(idx), t)
        if (t + 1) % n_push and t != steps - 1:
            continue
        for k in range(workers):
            w = (t + k) % workers
            bwd = grads_of[w]
            for s in range(servers):
                lo, hi = bounds[s], bounds[s + 1]
                payload = acc[w][lo:hi].copy()
                rec.send(w, rec.server(s), payload, deps=push_deps(bwd, layers, lo, hi, overlap),
                         iteration=t, tag="push")
                # ps-sync's (P + 4) per value with P = 1: one push to take in, then the
                # momentum SGD update (5 FLOPs per value in all).
                rec.compute(rec.server(s), (hi - lo) + mlp.update_flops(hi - lo), iteration=t,
                            tag="update")
                mlp.sgd_momentum_step([shard[s]], [payload], [velocity[s]], lr, momentum)
            staleness.append(version - oldest[w])
            version += 1
            acc[w][:] = 0.0
            oldest[w] = None
    final = mlp.unflatten(np.concatenate(shard), layers)
    hyper = dict(epochs=epochs, servers=servers, n_fetch=n_fetch, n_push=n_push, hidden=hidden,
                 batch_size=batch_size, lr=lr, momentum=momentum, overlap=overlap,
                 device_flops=device_flops)
    extra = {"mean_staleness": float(np.mean(staleness)), "max_staleness": int(np.max(staleness)),
             "updates": len(staleness), "shard_sizes": np.diff(bounds).tolist(),
             "test_loss": mlp.loss(final, data.X_test, data.y_test)}
    return rec.result("ps-async", setup, mlp.accuracy(final, data.X_test, data.y_test), steps,
                      hyper, extra=extra)
