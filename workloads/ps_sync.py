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
   value to average, 4 to update);
4. every worker pulls every server's new shard and rebuilds its model from the
   pulled arrays.
"""

import numpy as np

from . import mlp
from .errors import check_int
from .recorder import V100_FP32_FLOPS, Recorder, prepare, push_deps, worker_batches
from .recorder import epochs_of

__all__ = ["run", "shard_bounds", "init_servers", "pull_shard", "DESCRIPTION", "OPTIONS"]

DESCRIPTION = "parameter server, synchronous: push gradients, servers average, pull weights."
OPTIONS = {
    "epochs": "passes over each worker's shard of the training set",
    "seed": "seed of the initial weights, shards and mini-batch order",
    "servers": "number of servers; the parameters are sharded evenly among them",
    "hidden": "hidden-layer widths",
    "batch_size": "samples per step per worker",
    "lr": "learning rate",
    "momentum": "SGD momentum (kept on the servers)",
    "overlap": "let a gradient shard leave once its layers' backward is done",
    "device_flops": "device throughput in FLOP/s for the compute ops",
    "data_path": "directory of the MNIST IDX files",
}


def shard_bounds(n, servers):
    """Boundaries of ``servers`` contiguous, nearly equal shards of ``n`` values.

    Shard ``s`` is ``[bounds[s], bounds[s + 1])``; the first ``n % servers``
    shards hold one value more.

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
    servers = check_int("servers", servers, 1, n)
    sizes = np.full(servers, n // servers, np.int64)
    sizes[:n % servers] += 1
    return np.concatenate([[0], np.cumsum(sizes)])


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


def run(dataset="iris", workers=4, epochs=30, seed=0, servers=1, hidden=(16,), batch_size=8,
        lr=0.05, momentum=0.9, overlap=True, device_flops=V100_FP32_FLOPS, data_path=None,
        progress=None):
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
    overlap : bool
        Let each gradient shard leave when its layers' backward ops are done.
    device_flops : float
    data_path : str, optional
    progress : callable, optional
        Called as ``progress(epochs_done, epochs)`` after each epoch (progress bars).

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
    setup = prepare(dataset, workers, seed, hidden, data_path, epochs=epochs, lr=lr,
                    momentum=momentum)
    data, layers = setup.data, setup.layers
    bounds, shard, velocity, models = init_servers(setup, servers)
    rec = Recorder(workers, servers)
    it = 0
    for _ in epochs_of(range(epochs), epochs, progress):
        for batch in worker_batches(setup.shards, batch_size, setup.rng):
            received = [[] for _ in range(servers)]
            for w, idx in enumerate(batch):
                _, grads = mlp.loss_and_grads(models[w], data.X_train[idx], data.y_train[idx])
                g = mlp.flatten(grads)
                bwd = rec.forward_backward(w, layers, len(idx), it)
                for s in range(servers):
                    lo, hi = bounds[s], bounds[s + 1]
                    payload = g[lo:hi]
                    deps = push_deps(bwd, layers, lo, hi, overlap)
                    rec.send(w, rec.server(s), payload, deps=deps, iteration=it, tag="push")
                    received[s].append(payload)
            pulled = [[None] * servers for _ in range(workers)]
            for s in range(servers):
                avg = np.mean(np.stack(received[s]), axis=0, dtype=np.float32)
                size = bounds[s + 1] - bounds[s]
                rec.compute(rec.server(s), (workers + 4) * size, iteration=it, tag="update")
                mlp.sgd_momentum_step([shard[s]], [avg], [velocity[s]], lr, momentum)
                for w in range(workers):
                    pulled[w][s] = pull_shard(rec, shard, s, w, it)
            models = [mlp.unflatten(np.concatenate(p), layers) for p in pulled]
            it += 1
    final = mlp.unflatten(np.concatenate(shard), layers)
    hyper = dict(epochs=epochs, servers=servers, hidden=hidden, batch_size=batch_size, lr=lr,
                 momentum=momentum, overlap=overlap, device_flops=device_flops)
    extra = {"shard_sizes": np.diff(bounds).tolist(),
             "test_loss": mlp.loss(final, data.X_test, data.y_test)}
    return rec.result("ps-sync", setup, mlp.accuracy(final, data.X_test, data.y_test), it,
                      hyper, extra=extra)
