"""Model averaging (parallel SGD with periodic averaging, "local SGD").

Every worker trains its own copy of the model with momentum SGD on its shard.
Every ``period`` local steps (and after the last step) each worker sends its
whole flat parameter vector (float32, ``4 * n_params`` bytes) to a master
(rank P), which averages the P vectors it received (a compute op of
``P * n_params`` FLOPs) and sends the average back; every worker continues from
that average. Momentum buffers stay local. ``period=1`` is synchronous SGD with
parameter averaging after every step; larger periods trade accuracy for
communication (Zinkevich et al. 2010, "Parallelized Stochastic Gradient
Descent"; Lin et al. 2020, "Don't Use Large Mini-Batches, Use Local SGD").
"""

import numpy as np

from . import mlp
from .errors import check_int
from .recorder import V100_FP32_FLOPS, Recorder, prepare, worker_batches
from .recorder import epochs_of

__all__ = ["run", "DESCRIPTION", "OPTIONS"]

DESCRIPTION = "parallel SGD, models averaged by a master every `period` local steps."
OPTIONS = {
    "epochs": "passes over each worker's shard of the training set",
    "seed": "seed of the initial weights, shards and mini-batch order",
    "period": "local SGD steps between two averagings",
    "hidden": "hidden-layer widths",
    "batch_size": "samples per step per worker",
    "lr": "learning rate",
    "momentum": "SGD momentum (local to each worker)",
    "device_flops": "device throughput in FLOP/s for the compute ops",
    "data_path": "directory of the MNIST IDX files",
}


def run(dataset="iris", workers=4, epochs=30, seed=0, period=4, hidden=(16,), batch_size=8,
        lr=0.05, momentum=0.9, device_flops=V100_FP32_FLOPS, data_path=None, progress=None):
    """Train with periodic model averaging through a master; record every exchange.

    Parameters
    ----------
    dataset : str or Dataset
    workers : int
        Workers are ranks ``0..P-1``; the master is rank ``P``.
    epochs : int
    seed : int
    period : int
        Local steps between averagings (>= 1).
    hidden : sequence of int
    batch_size : int
    lr, momentum : float
    device_flops : float
    data_path : str, optional
    progress : callable, optional
        Called as ``progress(epochs_done, epochs)`` after each epoch (progress bars).

    Returns
    -------
    RunResult
        ``extra``: ``averagings`` (rounds of averaging), ``model_bytes`` (bytes
        of one parameter vector), ``test_loss``.

    Examples
    --------
    >>> r = run(workers=2, epochs=1, period=3)
    >>> r.extra["averagings"], r.messages, r.total_bytes == r.messages * r.extra["model_bytes"]
    (3, 12, True)
    """
    check_int("period", period)
    setup = prepare(dataset, workers, seed, hidden, data_path, epochs=epochs, lr=lr,
                    momentum=momentum)
    data, layers = setup.data, setup.layers
    n = mlp.num_params(layers)
    models = [[p.copy() for p in setup.params] for _ in range(workers)]
    velocity = [mlp.zeros_like(setup.params) for _ in range(workers)]
    rec = Recorder(workers, servers=1)
    master = rec.server(0)
    schedule = [b for _ in range(epochs) for b in worker_batches(setup.shards, batch_size, setup.rng)]
    averagings = 0
    average = mlp.flatten(setup.params)
    for t, batch in enumerate(epochs_of(schedule, epochs, progress)):
        for w, idx in enumerate(batch):
            _, grads = mlp.loss_and_grads(models[w], data.X_train[idx], data.y_train[idx])
            rec.forward_backward(w, layers, len(idx), t)
            rec.compute(w, mlp.update_flops(n), iteration=t, tag="update")
            mlp.sgd_momentum_step(models[w], grads, velocity[w], lr, momentum)
        if (t + 1) % period and t != len(schedule) - 1:
            continue
        received = []
        for w in range(workers):
            payload = mlp.flatten(models[w])
            rec.send(w, master, payload, iteration=t, tag="model")
            received.append(payload)
        rec.compute(master, workers * n, iteration=t, tag="average")
        average = np.mean(np.stack(received), axis=0, dtype=np.float32)
        for w in range(workers):
            payload = average.copy()
            rec.send(master, w, payload, iteration=t, tag="average")
            models[w] = mlp.unflatten(payload, layers)
        averagings += 1
    final = mlp.unflatten(average, layers)
    hyper = dict(epochs=epochs, period=period, hidden=hidden, batch_size=batch_size, lr=lr,
                 momentum=momentum, device_flops=device_flops)
    extra = {"averagings": averagings, "model_bytes": n * mlp.BYTES_PER_VALUE,
             "test_loss": mlp.loss(final, data.X_test, data.y_test)}
    return rec.result("model-averaging", setup, mlp.accuracy(final, data.X_test, data.y_test),
                      len(schedule), hyper, extra=extra,
                      roles=["worker"] * workers + ["master"])
