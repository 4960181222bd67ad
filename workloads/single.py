"""Single node: one rank trains alone and sends nothing (the baseline).

With ``workers=P`` it processes exactly the global batches of P data-parallel
workers of ``batch_size`` each (the union of their mini-batches, drawn from the
same shards with the same seed), still on one rank: the sequential equivalent
of synchronous data parallelism (ps-sync and allreduce with the same arguments
compute the same updates, up to float32 rounding).
"""

import numpy as np

from . import mlp
from .recorder import V100_FP32_FLOPS, Recorder, prepare, worker_batches
from .recorder import epochs_of

__all__ = ["run", "DESCRIPTION", "OPTIONS"]

DESCRIPTION = "one node trains alone: no messages (the baseline)."
OPTIONS = {
    "epochs": "passes over the training set",
    "seed": "seed of the initial weights and the mini-batch order",
    "hidden": "hidden-layer widths",
    "batch_size": "samples per step per (virtual) worker",
    "lr": "learning rate",
    "momentum": "SGD momentum",
    "device_flops": "device throughput in FLOP/s for the compute ops",
    "data_path": "directory of the MNIST IDX files",
}


def run(dataset="iris", workers=1, epochs=30, seed=0, hidden=(16,), batch_size=8, lr=0.05,
        momentum=0.9, device_flops=V100_FP32_FLOPS, data_path=None, progress=None):
    """Train on one node with momentum SGD; record its compute ops (no messages).

    Parameters
    ----------
    dataset : str or Dataset
    workers : int
        The step's batch is ``workers * batch_size`` (the global batch of that
        many data-parallel workers); the trace has one rank.
    epochs : int
    seed : int
    hidden : sequence of int
    batch_size : int
    lr, momentum : float
    device_flops : float
        FLOP/s stored in the trace metadata.
    data_path : str, optional
    progress : callable, optional
        Called as ``progress(epochs_done, epochs)`` after each epoch (progress bars).

    Returns
    -------
    RunResult

    Examples
    --------
    >>> r = run(epochs=2)
    >>> r.messages, r.trace.ranks, r.iterations
    (0, 1, 30)
    """
    setup = prepare(dataset, workers, seed, hidden, data_path, epochs=epochs, lr=lr,
                    momentum=momentum)
    data, layers, params = setup.data, setup.layers, setup.params
    velocity = mlp.zeros_like(params)
    rec = Recorder(1)
    it = 0
    for _ in epochs_of(range(epochs), epochs, progress):
        for batch in worker_batches(setup.shards, batch_size, setup.rng):
            idx = np.concatenate(batch)
            _, grads = mlp.loss_and_grads(params, data.X_train[idx], data.y_train[idx])
            rec.forward_backward(0, layers, len(idx), it)
            rec.compute(0, mlp.update_flops(mlp.num_params(layers)), iteration=it, tag="update")
            mlp.sgd_momentum_step(params, grads, velocity, lr, momentum)
            it += 1
    hyper = dict(epochs=epochs, hidden=hidden, batch_size=workers * batch_size, lr=lr,
                 momentum=momentum, device_flops=device_flops)
    result = rec.result("single", setup, mlp.accuracy(params, data.X_test, data.y_test), it,
                        hyper, extra={"test_loss": mlp.loss(params, data.X_test, data.y_test)},
                        roles=["worker"])
    # For workloads.projection: the data-parallel workers whose union batch this rank trains.
    result.trace.metadata["virtual_workers"] = int(workers)
    return result
