"""Consensus ADMM (Boyd et al. 2011, "Distributed Optimization and Statistical
Learning via the Alternating Direction Method of Multipliers", Foundations and
Trends in Machine Learning 3(1), section 7.1, eq. 7.6 with g = 0).

Worker ``i`` holds local weights ``x_i`` and a scaled dual ``u_i``; a master
(rank P) holds the consensus ``z``. Each round ``k``:

1. every worker approximately solves its subproblem
   ``x_i = argmin f_i(x) + (rho/2) ||x - z + u_i||^2`` with ``local_steps``
   momentum-SGD steps on mini-batches of its shard, warm-started from its
   previous ``x_i`` (``f_i`` is the mean cross-entropy on its shard; the network
   is not convex, so this is ADMM used as a heuristic, as in Boyd et al. 9.1);
2. it sends ``x_i + u_i`` (float32, ``4 * n_params`` bytes) to the master;
3. the master averages what it received: ``z = mean_i(x_i + u_i)``, and sends
   ``z`` to every worker;
4. every worker updates its dual: ``u_i += x_i - z``.

The model scored on the test set is ``z``.
"""

import numpy as np

from . import mlp
from .errors import check_int, check_number
from .recorder import V100_FP32_FLOPS, Recorder, prepare, worker_batches
from .recorder import epochs_of

__all__ = ["run", "DESCRIPTION", "OPTIONS"]

DESCRIPTION = "consensus ADMM: local SGD on loss + (rho/2)||x - z + u||^2, master averages x + u."
OPTIONS = {
    "epochs": "passes over each worker's shard of the training set",
    "seed": "seed of the initial weights, shards and mini-batch order",
    "rho": "ADMM penalty parameter",
    "local_steps": "SGD steps per worker on its subproblem per round",
    "hidden": "hidden-layer widths",
    "batch_size": "samples per SGD step per worker",
    "lr": "learning rate of the local SGD",
    "momentum": "momentum of the local SGD",
    "device_flops": "device throughput in FLOP/s for the compute ops",
    "data_path": "directory of the MNIST IDX files",
}


def run(dataset="iris", workers=4, epochs=30, seed=0, rho=0.1, local_steps=4, hidden=(16,),
        batch_size=8, lr=0.05, momentum=0.9, device_flops=V100_FP32_FLOPS, data_path=None,
        progress=None):
    """Train with consensus ADMM through a master; record every exchange.

    Parameters
    ----------
    dataset : str or Dataset
    workers : int
        Workers are ranks ``0..P-1``; the master is rank ``P``.
    epochs : int
        Passes over each worker's shard; the run has
        ``ceil(epochs * steps_per_epoch / local_steps)`` rounds.
    seed : int
    rho : float
        Penalty parameter (finite, > 0).
    local_steps : int
        SGD steps per round on the local subproblem.
    hidden : sequence of int
    batch_size : int
    lr, momentum : float
        Of the local SGD.
    device_flops : float
    data_path : str, optional
    progress : callable, optional
        Called as ``progress(epochs_done, epochs)`` after each epoch (progress bars).

    Returns
    -------
    RunResult
        ``iterations`` counts ADMM rounds. ``extra``: ``rounds``,
        ``primal_residual`` (``sqrt(sum_i ||x_i - z||^2)`` at the end),
        ``dual_residual`` (``rho * sqrt(P) * ||z - z_prev||``), ``test_loss``.

    Examples
    --------
    >>> r = run(workers=2, epochs=1, local_steps=4)
    >>> r.iterations, r.messages
    (2, 8)
    """
    check_number("rho", rho, lo=0, strict=True)
    check_int("local_steps", local_steps)
    setup = prepare(dataset, workers, seed, hidden, data_path, epochs=epochs, lr=lr,
                    momentum=momentum)
    data, layers = setup.data, setup.layers
    n = mlp.num_params(layers)
    z = mlp.flatten(setup.params)
    z_prev = z
    x = [z.copy() for _ in range(workers)]
    u = [np.zeros(n, np.float32) for _ in range(workers)]
    velocity = [mlp.zeros_like(setup.params) for _ in range(workers)]
    rec = Recorder(workers, servers=1)
    master = rec.server(0)
    schedule = [b for _ in range(epochs) for b in worker_batches(setup.shards, batch_size, setup.rng)]
    rounds = [schedule[k:k + local_steps] for k in range(0, len(schedule), local_steps)]
    rho32 = np.float32(rho)
    for k, steps in enumerate(epochs_of(rounds, epochs, progress)):
        received = []
        for w in range(workers):
            params = mlp.unflatten(x[w], layers)
            center = mlp.unflatten(z - u[w], layers)  # the prox term pulls x towards z - u
            for batch in steps:
                idx = batch[w]
                _, grads = mlp.loss_and_grads(params, data.X_train[idx], data.y_train[idx])
                grads = [g + rho32 * (p - c) for g, p, c in zip(grads, params, center)]
                rec.forward_backward(w, layers, len(idx), k)
                # 4 FLOPs per value for the update, 3 for the prox gradient.
                rec.compute(w, mlp.update_flops(n) + 3 * n, iteration=k, tag="update")
                mlp.sgd_momentum_step(params, grads, velocity[w], lr, momentum)
            x[w] = mlp.flatten(params)
            payload = x[w] + u[w]
            rec.send(w, master, payload, iteration=k, tag="x+u")
            received.append(payload)
        rec.compute(master, workers * n, iteration=k, tag="average")
        z_prev, z = z, np.mean(np.stack(received), axis=0, dtype=np.float32)
        for w in range(workers):
            payload = z.copy()
            rec.send(master, w, payload, iteration=k, tag="z")
            rec.compute(w, 2 * n, iteration=k, tag="dual")
            u[w] += x[w] - payload
    final = mlp.unflatten(z, layers)
    hyper = dict(epochs=epochs, rho=rho, local_steps=local_steps, hidden=hidden,
                 batch_size=batch_size, lr=lr, momentum=momentum, device_flops=device_flops)
    extra = {"rounds": len(rounds),
             "primal_residual": float(np.sqrt(sum(np.sum((xi - z) ** 2) for xi in x))),
             "dual_residual": float(rho * np.sqrt(workers) * np.linalg.norm(z - z_prev)),
             "test_loss": mlp.loss(final, data.X_test, data.y_test)}
    return rec.result("admm", setup, mlp.accuracy(final, data.X_test, data.y_test), len(rounds),
                      hyper, extra=extra, roles=["worker"] * workers + ["master"])
