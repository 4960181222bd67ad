"""Consensus ADMM (Boyd et al. 2011, "Distributed Optimization and Statistical
Learning via the Alternating Direction Method of Multipliers", Foundations and
Trends in Machine Learning 3(1), section 7.1, eq. 7.6 with g = 0).

Worker ``i`` holds local weights ``x_i`` and a scaled dual ``u_i``; a master
(rank P) holds the consensus ``z``. Each round ``k``:

1. every worker approximately solves its subproblem
   ``x_i = argmin f_i(x) + (rho/2) ||x - z + u_i||^2`` with ``local_steps``
   momentum-SGD steps on mini-batches of its shard, warm-started from its
   previous ``x_i`` with the momentum restarted (each round is a new
   subproblem; a velocity carried over from the last one diverges on digits)
   (``f_i`` is the mean cross-entropy on its shard; the network
   is not convex, so this is ADMM used as a heuristic, as in Boyd et al. 9.1);
2. it sends ``x_i + u_i`` (float32, ``4 * n_params`` bytes) to the master;
3. the master averages what it received: ``z = mean_i(x_i + u_i)``, and sends
   ``z`` to every worker;
4. every worker updates its dual: ``u_i += x_i - z``.

The model scored on the test set is ``z``.
"""

import numpy as np

from netsim.trace.core import COMPUTE

from workloads import mlp
from workloads.paradigms import model_averaging
from workloads.plan.closed import Asymptotic
from workloads.errors import WorkloadError
from workloads.option_ranges import check_option
from workloads.plan.frontier import Frontier
from workloads.paradigms.model_averaging import average_flops
from workloads.plan.measure import Recording, finish, plan, tag_mask
from workloads.paradigms.ps import closed_form
from workloads.recorder import V100_FP32_FLOPS, bytes_per_value, count_sent, run_result
from workloads.training import epochs_of, first_nonfinite, prepare, worker_batches

__all__ = ["run", "schedule", "measure", "closed_form", "ASYMPTOTIC",
           "local_update_flops", "dual_flops", "SERVERS",
           "DESCRIPTION", "OPTIONS"]

#: One master, rank P (see :func:`workloads.plan.measure.plan`).
SERVERS = "master"

DESCRIPTION = "consensus ADMM: local SGD on loss + (rho/2)||x - z + u||^2, master averages x + u."

#: Worst-case cost per round of K = ``local_steps`` steps
#: (:func:`workloads.paradigms.ps.closed_form` with one master).
ASYMPTOTIC = Asymptotic(
    "consensus ADMM, K local steps a round", "master",
    "2 (alpha + 4 P n beta) per round", "K (C + 7 n / F) + (P + 2) n / F per round",
    "O(P n) bytes on the master's link per round; O(K C + P n) compute",
    "Boyd et al., Found. Trends Mach. Learn. 2011, section 7.1")
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
    check_option("rho", rho)
    check_option("local_steps", local_steps)
    setup = prepare(dataset, workers, seed, hidden, data_path, epochs=epochs, lr=lr,
                    momentum=momentum)
    data, layers = setup.data, setup.layers
    n = mlp.num_params(layers)
    z = mlp.flatten(setup.params)
    z_prev = z
    x = [z.copy() for _ in range(workers)]
    u = [np.zeros(n, np.float32) for _ in range(workers)]
    velocity = [mlp.zeros_like(setup.params) for _ in range(workers)]
    steps = [b for _ in range(epochs) for b in worker_batches(setup.shards, batch_size, setup.rng)]
    rounds = [steps[k:k + local_steps] for k in range(0, len(steps), local_steps)]
    rho32 = np.float32(rho)
    sent = {"x+u": {}, "z": {}}
    bad = None
    for k, group in enumerate(epochs_of(rounds, epochs, progress)):
        received = []
        for w in range(workers):
            # A fresh subproblem each round: warm-started from x_i, but with its momentum
            # restarted. Carried over, the velocity of the last round's subproblem (whose
            # centre z - u has since moved) kicks x_i away from the new centre, the duals
            # u_i accumulate the gap and the run diverges (digits, defaults: accuracy 0.31,
            # test loss 1.3e4 after 10 epochs; restarted: 0.978).
            velocity[w] = mlp.zeros_like(setup.params)
            params = mlp.unflatten(x[w], layers)
            center = mlp.unflatten(z - u[w], layers)  # the prox term pulls x towards z - u
            for batch in group:
                idx = batch[w]
                loss, grads = mlp.loss_and_grads(params, data.X_train[idx], data.y_train[idx])
                bad = first_nonfinite(bad, loss, k)
                grads = [g + rho32 * (p - c) for g, p, c in zip(grads, params, center)]
                mlp.sgd_momentum_step(params, grads, velocity[w], lr, momentum)
            x[w] = mlp.flatten(params)
            received.append(count_sent(sent["x+u"], x[w] + u[w]))
        z_prev, z = z, np.mean(np.stack(received), axis=0, dtype=np.float32)
        for w in range(workers):
            u[w] += x[w] - count_sent(sent["z"], z.copy())
    final = mlp.unflatten(z, layers)
    hyper = dict(epochs=epochs, rho=rho, local_steps=local_steps, hidden=hidden,
                 batch_size=batch_size, lr=lr, momentum=momentum, device_flops=device_flops)
    stats = {"recording": Recording(workers, 1, len(rounds), mlp.model_of(layers),
                                    np.array([len(idx) for idx in steps[0]]), hyper, {}),
             "up": bytes_per_value(sent["x+u"]), "down": bytes_per_value(sent["z"]),
             "last_steps": len(rounds[-1])}
    extra = {"rounds": len(rounds),
             "primal_residual": float(np.sqrt(sum(np.sum((xi - z) ** 2) for xi in x))),
             "dual_residual": float(rho * np.sqrt(workers) * np.linalg.norm(z - z_prev)),
             "test_loss": mlp.loss(final, data.X_test, data.y_test)}
    return run_result("admm", schedule(workers, stats), setup,
                      mlp.accuracy(final, data.X_test, data.y_test),
                      sent["x+u"]["bytes"] + sent["z"]["bytes"],
                      sent["x+u"]["messages"] + sent["z"]["messages"], len(rounds), hyper,
                      servers=1, extra=extra, roles=["worker"] * workers + ["master"],
                      diverged_at=bad)


def local_update_flops(n):
    """FLOPs of a local step's update of ``n`` values: the momentum SGD update
    (:func:`workloads.mlp.update_flops`) and 3 per value for the prox gradient.

    Examples
    --------
    >>> local_update_flops(131)
    917.0
    """
    return mlp.update_flops(n) + 3.0 * n


def dual_flops(n):
    """FLOPs of a worker's dual update ``u += x - z`` of ``n`` values (2 per value).

    Examples
    --------
    >>> dual_flops(131)
    262.0
    """
    return 2.0 * n


def measure(trace):
    """Bytes per parameter of ``x + u`` and ``z``, and the local steps of the recording's
    last round (cut short when the steps ran out), with the
    :class:`workloads.plan.measure.Recording`.

    Examples
    --------
    >>> m = measure(run(workers=2, epochs=1, local_steps=3).trace)
    >>> m["up"], m["down"], m["last_steps"]
    (4.0, 4.0, 2)
    """
    stats = model_averaging.measure(trace, "x+u", "z")
    r = stats["recording"]
    upd = tag_mask(trace, "update", COMPUTE) & (trace.rank == 0)
    stats["last_steps"] = int(np.sum(upd & (trace.iteration == r.n_rec - 1)))
    return stats


def schedule(P, stats, servers=None, iterations=None, batch_size=None, model=None,
             start=0):
    """Consensus ADMM with ``P`` workers: rounds of ``local_steps`` local steps (forward,
    backward, :func:`local_update_flops`), then ``x + u`` to the master, which
    averages (:func:`workloads.paradigms.model_averaging.average_flops`) and sends ``z`` to
    every worker, which updates its dual (:func:`dual_flops`). Every round has
    ``local_steps`` steps, but for the recording's own last round when the
    schedule ends where the recording did.

    Parameters
    ----------
    P : int
    stats : dict
        From :func:`measure`.
    servers : None or 1
    iterations, batch_size : int, optional
        Rounds, and samples per worker per step.
    model : workloads.mlp.Model, optional
    start : int, optional
        The run's iteration the trace begins at (:class:`workloads.plan.measure.Plan`).

    Returns
    -------
    netsim.Trace

    Examples
    --------
    >>> t = schedule(8, measure(run(workers=2, epochs=1, local_steps=4).trace))
    >>> t.ranks, t.num_messages
    (9, 32)
    """
    c = plan(P, stats["recording"], SERVERS, servers, iterations, batch_size, model, start)
    P, n = c.P, c.model.params
    W, master = np.arange(P), P
    steps = int(c.rec.hyper.get("local_steps", 1))
    last = stats.get("last_steps") if c.start == 0 and c.iterations == c.rec.n_rec else None
    b = Frontier(P + 1)
    for k in range(c.iterations):
        for _ in range(last if last and k == c.iterations - 1 else steps):
            b.forward_backward(W, c.model, c.batch, k)
            b.compute(W, local_update_flops(n), k, "update")
        b.send(W, master, stats["up"] * n, k, "x+u")
        b.compute([master], average_flops(P, n), k, "average")
        b.send(np.full(P, master), W, stats["down"] * n, k, "z")
        b.compute(W, dual_flops(n), k, "dual")
    return finish(b.build(), c, SERVERS)
