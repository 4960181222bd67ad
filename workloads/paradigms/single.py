"""Single node: one rank trains alone and sends nothing (the baseline).

With ``workers=P`` it processes exactly the global batches of P data-parallel
workers of ``batch_size`` each (the union of their mini-batches, drawn from the
same shards with the same seed), still on one rank: the sequential equivalent
of synchronous data parallelism (ps-sync and allreduce with the same arguments
compute the same updates, up to float32 rounding).
"""

import numpy as np

from workloads import mlp
from workloads.plan.closed import terms
from workloads.plan.frontier import Frontier
from workloads.plan.measure import Recording, finish, plan, recording
from workloads.recorder import V100_FP32_FLOPS, run_result
from workloads.training import epochs_of, first_nonfinite, prepare, worker_batches

__all__ = ["run", "schedule", "measure", "closed_form", "SERVERS", "DESCRIPTION", "OPTIONS"]

#: No servers (see :func:`workloads.plan.measure.plan`).
SERVERS = "none"

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
    it, union, bad = 0, 0, None
    for _ in epochs_of(range(epochs), epochs, progress):
        for batch in worker_batches(setup.shards, batch_size, setup.rng):
            idx = np.concatenate(batch)
            union = len(idx)        # the same every step (worker_batches)
            loss, grads = mlp.loss_and_grads(params, data.X_train[idx], data.y_train[idx])
            bad = first_nonfinite(bad, loss, it)
            mlp.sgd_momentum_step(params, grads, velocity, lr, momentum)
            it += 1
    # The trace: one rank, `it` steps on the union batch.
    stats = {"recording": Recording(1, 0, it, mlp.model_of(layers), union, {}, {})}
    trace = schedule(1, stats)
    hyper = dict(epochs=epochs, hidden=hidden, batch_size=workers * batch_size, lr=lr,
                 momentum=momentum, device_flops=device_flops)
    result = run_result("single", trace, setup, mlp.accuracy(params, data.X_test, data.y_test),
                        0, 0, it, hyper, extra={"test_loss": mlp.loss(params, data.X_test,
                                                                         data.y_test)},
                        roles=["worker"],
                        # For projection: the data-parallel workers whose union batch this
                        # rank trains.
                        metadata={"virtual_workers": int(workers)}, diverged_at=bad)
    return result


def measure(trace):
    """The statistics of a recorded single-node run: the data-parallel workers whose union
    batch its rank trains (metadata ``virtual_workers``) and their batch; no messages.

    Examples
    --------
    >>> m = measure(run(workers=3, epochs=1).trace)
    >>> m["recording"].P0, m["recording"].batch0, m["recording"].n_rec
    (3, 8, 5)
    """
    md = trace.metadata
    P0 = int(md.get("virtual_workers", md["workers"]))
    b = int((md.get("hyper") or {}).get("batch_size", 1))
    return {"recording": recording(trace, workers=P0, batch=max(1, b // max(P0, 1)))}


def schedule(P, stats, servers=None, iterations=None, batch_size=None, model=None,
             start=0):
    """One rank training the union batch of ``P`` workers: forward, backward per layer,
    a momentum SGD update (:func:`workloads.mlp.update_flops`) per step.

    Parameters
    ----------
    P : int
        Data-parallel workers whose union batch the rank trains (weak scaling:
        forward and backward FLOPs grow with P x batch).
    stats : dict
        From :func:`measure` (or a live run).
    servers : None or 0
    iterations, batch_size : int, optional
        The recorded ones if None (batch per worker).
    model : workloads.mlp.Model, optional
    start : int, optional
        The run's iteration the trace begins at (:class:`workloads.plan.measure.Plan`).
        The recorded MLP if None.

    Returns
    -------
    netsim.Trace

    Examples
    --------
    >>> t = run(workers=2, epochs=1).trace
    >>> big = schedule(64, measure(t), iterations=1)
    >>> big.ranks, float(big.flops[0]) == 64 * float(t.flops[0]) / 2
    (1, True)
    """
    c = plan(P, stats["recording"], SERVERS, servers, iterations, batch_size, model, start)
    b = Frontier(1)
    for it in range(c.iterations):
        b.forward_backward([0], c.model, c.P * c.batch, it)
        b.compute([0], mlp.update_flops(c.model.params), it, "update")
    return finish(b.build(), c, SERVERS, ranks_of_workers=1, hyper_batch=c.P * c.batch)


def closed_form(trace, alpha, beta, device_flops=None):
    """Closed form of one iteration of a single node: its compute, no communication.

    Parameters
    ----------
    trace : Trace
        A recording or schedule of ``single``.
    alpha : float
        Latency of a message, seconds (unused: there are none).
    beta : float
        Seconds per byte (unused).
    device_flops : float, optional
        FLOP/s of the compute ops (default: the trace's metadata).

    Returns
    -------
    dict
        ``compute``, ``server`` (0), ``communication`` (0), ``time`` and ``formula``.

    Examples
    --------
    >>> from netsim import TraceBuilder
    >>> b = TraceBuilder(1)
    >>> _ = b.compute(0, flops=300.0, iteration=0); _ = b.compute(0, flops=100.0, iteration=1)
    >>> cf = closed_form(b.build(), 0.0, 0.0, device_flops=100.0)  # 3 s, then 1 s
    >>> cf["communication"], cf["time"]
    (0.0, 2.0)
    """
    return terms(trace, np.zeros(max(trace.num_iterations, 1)), device_flops, "compute only")
