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

from workloads import mlp
from workloads.plan.closed import Asymptotic
from workloads.errors import WorkloadError
from workloads.option_ranges import check_option
from workloads.plan.frontier import Frontier
from workloads.plan.phases import Phases
from workloads.plan.measure import Recording, dense_bpv, finish, plan, recording
from workloads.paradigms.ps import closed_form
from workloads.recorder import V100_FP32_FLOPS, bytes_per_value, count_sent, run_result
from workloads.training import epochs_of, first_nonfinite, prepare, worker_batches

__all__ = ["run", "schedule", "measure", "closed_form", "phases", "ASYMPTOTIC",
           "average_flops", "SERVERS", "DESCRIPTION", "OPTIONS"]

#: One master, rank P (see :func:`workloads.plan.measure.plan`).
SERVERS = "master"

DESCRIPTION = "parallel SGD, models averaged by a master every `period` local steps."

#: Worst-case cost per step, averaging every H = ``period`` steps
#: (:func:`workloads.paradigms.ps.closed_form` with one master).
ASYMPTOTIC = Asymptotic(
    "model averaging every H steps", "master",
    "2 (alpha + 4 P n beta) / H", "C + 4 n / F + P n / (H F)",
    "O(P n / H) bytes on the master's link; O(C + P n / H) compute",
    "Zinkevich et al., NIPS 2010; McMahan et al., AISTATS 2017")
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
    check_option("period", period)
    setup = prepare(dataset, workers, seed, hidden, data_path, epochs=epochs, lr=lr,
                    momentum=momentum)
    data, layers = setup.data, setup.layers
    n = mlp.num_params(layers)
    models = [[p.copy() for p in setup.params] for _ in range(workers)]
    velocity = [mlp.zeros_like(setup.params) for _ in range(workers)]
    steps = [b for _ in range(epochs) for b in worker_batches(setup.shards, batch_size, setup.rng)]
    averagings, bad = 0, None
    average = mlp.flatten(setup.params)
    sent = {"model": {}, "average": {}}
    for t, batch in enumerate(epochs_of(steps, epochs, progress)):
        for w, idx in enumerate(batch):
            loss, grads = mlp.loss_and_grads(models[w], data.X_train[idx], data.y_train[idx])
            bad = first_nonfinite(bad, loss, t)
            mlp.sgd_momentum_step(models[w], grads, velocity[w], lr, momentum)
        if (t + 1) % period and t != len(steps) - 1:
            continue
        received = [count_sent(sent["model"], mlp.flatten(models[w])) for w in range(workers)]
        average = np.mean(np.stack(received), axis=0, dtype=np.float32)
        for w in range(workers):
            models[w] = mlp.unflatten(count_sent(sent["average"], average.copy()), layers)
        averagings += 1
    final = mlp.unflatten(average, layers)
    hyper = dict(epochs=epochs, period=period, hidden=hidden, batch_size=batch_size, lr=lr,
                 momentum=momentum, device_flops=device_flops)
    stats = {"recording": Recording(workers, 1, len(steps), mlp.model_of(layers),
                                    np.array([len(idx) for idx in steps[0]]), hyper, {}),
             "up": bytes_per_value(sent["model"]), "down": bytes_per_value(sent["average"])}
    extra = {"averagings": averagings, "model_bytes": n * mlp.BYTES_PER_VALUE,
             "test_loss": mlp.loss(final, data.X_test, data.y_test)}
    return run_result("model-averaging", schedule(workers, stats), setup,
                      mlp.accuracy(final, data.X_test, data.y_test),
                      sent["model"]["bytes"] + sent["average"]["bytes"],
                      sent["model"]["messages"] + sent["average"]["messages"], len(steps),
                      hyper, servers=1, extra=extra, roles=["worker"] * workers + ["master"],
                      diverged_at=bad)


def average_flops(P, n):
    """FLOPs of a master averaging ``P`` vectors of ``n`` values: ``P * n``.

    Parameters
    ----------
    P : int
        Vectors averaged.
    n : int
        Values of each.

    Examples
    --------
    >>> average_flops(4, 131)
    524.0
    """
    return float(P * n)


def measure(trace, up="model", down="average"):
    """Bytes per parameter of the workers' messages to the master (tag ``up``) and of the
    master's replies (tag ``down``), with the :class:`workloads.plan.measure.Recording`.

    Parameters
    ----------
    trace : Trace
        A model-averaging recording.
    up : str
        Tag of the workers' messages.
    down : str
        Tag of the master's replies.

    Examples
    --------
    >>> m = measure(run(workers=2, epochs=1).trace)
    >>> m["up"], m["down"], m["recording"].n_rec
    (4.0, 4.0, 8)
    """
    r = recording(trace)
    n0 = r.model0.params
    bpv = r.md.get("bytes_per_value", mlp.BYTES_PER_VALUE)
    whole = lambda rank, peer: np.full(len(rank), n0)
    return {"recording": r, "up": dense_bpv(trace, up, whole, bpv),
            "down": dense_bpv(trace, down, whole, bpv)}


def phases(trace):
    """Model averaging's phases (:mod:`workloads.plan.phases`): period H (``period``): one
    averaging every H steps, after the run's steps H - 1, 2H - 1, ...; a window of
    whole periods from step 0 holds one averaging per H steps, as a long run does.

    Parameters
    ----------
    trace : netsim.Trace
        A model-averaging recording or projection (its ``hyper["period"]``).

    Returns
    -------
    workloads.plan.phases.Phases

    Examples
    --------
    >>> phases(run(workers=2, epochs=1, period=4).trace)
    Phases(warmup=0, period=4, stages=(), alike=True, what='averaging every H = 4 steps')
    """
    H = int((trace.metadata.get("hyper") or {}).get("period", 1))
    return Phases(period=H, what=f"averaging every H = {H} steps")


def schedule(P, stats, servers=None, iterations=None, batch_size=None, model=None,
             start=0):
    """Model averaging with ``P`` workers: local steps (forward, backward, update); every
    ``period`` steps of the run (after its iterations ``H - 1``, ``2H - 1``, ...) and
    after the last, every worker sends its model to the master, which averages
    (:func:`average_flops`) and sends the average back.

    Parameters
    ----------
    P : int
    stats : dict
        From :func:`measure` (bytes per parameter up and down).
    servers : None or 1
    iterations, batch_size : int, optional
    model : workloads.mlp.Model, optional
    start : int, optional
        The run's iteration the trace begins at (:class:`workloads.plan.measure.Plan`).

    Returns
    -------
    netsim.Trace

    Examples
    --------
    >>> t = schedule(16, measure(run(workers=2, epochs=1, period=4).trace))
    >>> t.ranks, t.num_messages == 2 * 2 * 16
    (17, True)
    """
    c = plan(P, stats["recording"], SERVERS, servers, iterations, batch_size, model, start)
    P, n = c.P, c.model.params
    W, master = np.arange(P), P
    period = int(c.rec.hyper.get("period", 1))
    b = Frontier(P + 1)
    for t in range(c.iterations):
        b.forward_backward(W, c.model, c.batch, t)
        b.compute(W, mlp.update_flops(n), t, "update")
        if (c.start + t + 1) % period and t != c.iterations - 1:
            continue
        b.send(W, master, stats["up"] * n, t, "model")
        b.compute([master], average_flops(P, n), t, "average")
        b.send(np.full(P, master), W, stats["down"] * n, t, "average")
    return finish(b.build(), c, SERVERS)
