"""Parameter Flow (PF): an update-centric parameter server with a value-bounded filter.

Ranks ``0..P-1`` are workers, ``P..P+S-1`` servers; the flat parameter vector
(:func:`workloads.mlp.flatten` order) is cut into S contiguous shards
(:func:`workloads.paradigms.ps.shard_bounds`). Only *updates* (parameter changes)
travel, never weights or raw gradients. Step ``t = 1, 2, ...``:

1. each worker computes the gradient ``g`` of its mini-batch on its copy of
   the model, keeps a local momentum ``m = momentum * m + g`` and forms its
   update, the step it would take alone: ``u = -lr * m``;
2. **value-bounded filter** with the threshold ``tau_t = tau0 / t**(1/a)``: the
   worker adds its residual, ``v = u + r``, sends ``v_j`` for every ``|v_j| > tau_t``
   (float32 value + int32 index, 8 bytes each, one message per server shard)
   and keeps the rest, ``r = v`` where ``|v| <= tau_t`` and 0 elsewhere, for later
   steps. Nothing small is lost: it waits in ``r`` until it has grown past the
   (shrinking) threshold;
3. each server adds ``1/P`` of every value it received to its own residual
   ``R`` (the averaged update not yet broadcast), filters ``R`` with the same
   ``tau_t``, broadcasts the surviving values (value + index) to every worker
   and keeps the rest;
4. every worker adds the broadcast values to its model. All workers apply the
   same broadcasts, so their copies stay identical; the server's view of the
   model is the workers' copy plus the servers' residuals.

So every value on the wire has ``|value| > tau_t``, and the values applied are
exactly the values sent (``record_values=True`` keeps every message's values and
indices in ``RunResult.extra`` to check this). With ``tau0 = 0`` only exact zeros
are held back and the run is synchronous SGD with (worker-side) momentum.
A push or broadcast with no value above the threshold is still sent as an
empty, 0-byte message: it is the step's synchronisation signal (message
headers are not modelled anywhere in netsim).

Units: ``tau`` is in parameter units (the filter applies to parameter
changes: a worker's own step, and the averaged step on the servers, both
independent of P), so the useful range of ``tau0`` depends on ``lr`` and on the
model. On Iris with the defaults (``lr = 0.05``), ``tau0 = 0.05`` keeps about
70 % of the values off the wire at unchanged accuracy. A sparse value costs 8
bytes against 4 dense, so the filter saves bytes over a dense exchange only
once it drops more than half of the values. :func:`studies.claims.pf_threshold.sweep`
tabulates bytes and accuracy against ``tau0``.

References
----------
The PF scheme (update-centric server, value-bounded filter whose threshold
decays as ``tau0 / t**(1/a)``, local residual) is implemented as specified in
this project's brief, which quotes the authors' MNIST-MLP result (at
``tau0 = 0.6`` traffic fell from 12.3 GB to 3.0 GB while accuracy went from
0.975 to 0.969). We could not locate the PF paper itself to check its
equations, so its authors, venue and year are not given here. The filter is
the "significantly modified" user-defined filter of the parameter server of
Li, Andersen, Park, Smola, Ahmed, Josifovski, Long, Shekita and Su, "Scaling
Distributed Machine Learning with the Parameter Server", OSDI 2014,
section 3.6 (User-defined Filters), which sends only entries that changed by
more than a threshold since they were last synchronised.
"""

import math

import numpy as np

from netsim import checks

from workloads import mlp
from workloads.errors import WorkloadError
from workloads.option_ranges import check_option
from workloads.plan.frontier import Frontier
from workloads.plan.phases import Phases
from workloads.plan.measure import Recording, finish, grad_deps, plan
from workloads.paradigms.ps import (closed_form, measure_sparse, shard_bounds, shard_layout, sparse_sizes,
                      sparse_stats)
from workloads.recorder import (SPARSE_BYTES_PER_VALUE, V100_FP32_FLOPS, payload_bytes, run_result,
                       sparse_payload)
from workloads.training import epochs_of, first_nonfinite, prepare, worker_batches

__all__ = ["run", "schedule", "measure", "closed_form", "phases",
           "threshold", "value_filter", "aggregate_flops",
           "broadcast_scale", "SERVERS", "DESCRIPTION", "OPTIONS"]

#: Any number of servers >= 1 (see :func:`workloads.plan.measure.plan`).
SERVERS = "servers"

DESCRIPTION = ("Parameter Flow: update-centric PS; updates with |u| <= tau0/t^(1/a) stay in a "
               "local residual, the rest are pushed and broadcast as value+index.")
OPTIONS = {
    "epochs": "passes over each worker's shard of the training set",
    "seed": "seed of the initial weights, shards and mini-batch order",
    "tau0": "initial filter threshold (parameter units, >= 0); tau_t = tau0 / t^(1/a)",
    "a": "decay exponent of the threshold (> 0): tau_t = tau0 / t^(1/a)",
    "servers": "number of servers; the parameters are sharded evenly among them",
    "hidden": "hidden-layer widths",
    "batch_size": "samples per step per worker",
    "lr": "learning rate",
    "momentum": "SGD momentum (kept on each worker)",
    "overlap": "let a shard's update leave once its layers' backward is done",
    "record_values": "keep every message's indices and values in RunResult.extra (for checks)",
    "device_flops": "device throughput in FLOP/s for the compute ops",
    "data_path": "directory of the MNIST IDX files",
}


def threshold(t, tau0, a):
    """The filter threshold of step ``t``: ``tau0 / t**(1/a)``.

    Parameters
    ----------
    t : int
        Step number, from 1.
    tau0 : float
        Initial threshold (>= 0).
    a : float
        Decay exponent (> 0); larger ``a`` decays more slowly.

    Returns
    -------
    float

    Raises
    ------
    WorkloadError
        If ``tau0 < 0``, ``a <= 0`` or ``t < 1``.

    Examples
    --------
    >>> threshold(1, 0.6, 2), threshold(4, 0.6, 2)
    (0.6, 0.3)
    >>> threshold(1, -0.1, 2)
    Traceback (most recent call last):
    ...
    workloads.errors.WorkloadError: tau0 must be a finite number >= 0, got -0.1
    """
    tau0 = check_option("tau0", tau0)
    a = check_option("a", a)
    checks.check_int(t, "the step t", error=WorkloadError)
    return tau0 / float(t) ** (1.0 / a)


def aggregate_flops(nnz, size):
    """FLOPs of a server taking in ``nnz`` pushed values and averaging and filtering its
    shard of ``size`` values (2 per value).

    Parameters
    ----------
    nnz : int
        Values pushed.
    size : int
        Values of the shard.

    Examples
    --------
    >>> aggregate_flops(30, 131)
    292
    """
    return nnz + 2 * size


def value_filter(update, residual, tau):
    """Apply the value-bounded filter: what to send, and what stays behind.

    ``v = update + residual``; entries with ``|v| > tau`` are sent, the others
    become the new residual.

    Parameters
    ----------
    update, residual : ndarray
        Float32 vectors of the same length.
    tau : float
        Threshold (>= 0).

    Returns
    -------
    values : ndarray
        float32 values sent, ``|values| > tau``.
    indices : ndarray
        int32 positions of the values sent, ascending.
    residual : ndarray
        New residual: ``v`` where ``|v| <= tau``, 0 where a value was sent.

    Examples
    --------
    >>> vals, idx, res = value_filter(np.array([0.5, 0.05, -0.2], np.float32),
    ...                               np.array([0.0, 0.02, 0.0], np.float32), 0.1)
    >>> vals.tolist(), idx.tolist(), [round(float(x), 2) for x in res]
    ([0.5, -0.20000000298023224], [0, 2], [0.0, 0.07, 0.0])
    """
    v = np.asarray(update, np.float32) + np.asarray(residual, np.float32)
    send = np.abs(v) > np.float32(tau)
    return (*sparse_payload(v, send), np.where(send, np.float32(0), v))


def run(dataset="iris", workers=4, epochs=30, seed=0, tau0=0.05, a=2.0, servers=1, hidden=(16,),
        batch_size=8, lr=0.05, momentum=0.9, overlap=True, record_values=False,
        device_flops=V100_FP32_FLOPS, data_path=None, progress=None):
    """Train with Parameter Flow; record every filtered push and broadcast.

    Parameters
    ----------
    dataset : str or Dataset
    workers : int
        Worker ranks ``0..P-1``; servers are ranks ``P..P+S-1``.
    epochs : int
        Passes over each worker's shard (``ceil(shard / batch_size)`` steps each).
    seed : int
    tau0 : float
        Initial threshold (>= 0), in parameter units.
    a : float
        Decay exponent (> 0) of ``tau_t = tau0 / t**(1/a)``.
    servers : int
    hidden : sequence of int
    batch_size : int
    lr, momentum : float
    overlap : bool
        Let a shard's push leave once the backward ops of its layers are done.
    record_values : bool
        Keep, in ``extra``, every push (``"pushes"``) and broadcast
        (``"broadcasts"``) as a dict with ``iteration``, ``src``, ``dst``,
        ``tau``, ``lo`` (start of the shard), ``indices`` (flat positions),
        ``values``, and for pushes ``total`` (update + old residual of the
        shard) and ``residual`` (what stayed behind); plus ``initial_params``,
        ``final_params`` (the workers' flat model) and ``server_residual``.
    device_flops : float
    data_path : str, optional
    progress : callable, optional
        Called as ``progress(epochs_done, epochs)`` after each epoch (progress bars).

    Returns
    -------
    RunResult
        ``dropped_fraction``: values not sent over values a dense exchange of
        the same messages would send (pushes and broadcasts together).
        ``extra``: ``push_dropped_fraction``, ``broadcast_dropped_fraction``,
        ``dense_bytes`` (bytes the same messages would carry dense, 4 per
        value), ``final_tau``, ``server_accuracy`` (workers' model plus the
        servers' residuals), ``shard_sizes``, ``test_loss``.

    Raises
    ------
    WorkloadError
        For ``tau0 < 0`` or ``a <= 0`` (and the usual bad sizes).

    Examples
    --------
    >>> r = run(workers=2, epochs=2, tau0=0.01)
    >>> r.iterations, r.messages, 0 < r.dropped_fraction < 1
    (16, 64, True)
    >>> run(tau0=-1)
    Traceback (most recent call last):
    ...
    workloads.errors.WorkloadError: tau0 must be a finite number >= 0, got -1
    """
    tau = threshold(1, tau0, a)  # validates tau0 and a before any work
    setup = prepare(dataset, workers, seed, hidden, data_path, epochs=epochs, lr=lr,
                    momentum=momentum)
    data, layers = setup.data, setup.layers
    P = len(setup.shards)
    n = mlp.num_params(layers)
    bounds = shard_bounds(n, servers)
    model = mlp.flatten(setup.params)          # every worker's copy (identical by construction)
    initial = model.copy()
    mom = [np.zeros(n, np.float32) for _ in range(P)]
    residual = [np.zeros(n, np.float32) for _ in range(P)]
    srv_res = [np.zeros(bounds[s + 1] - bounds[s], np.float32) for s in range(servers)]
    scale = np.float32(-lr)
    inv_p = np.float32(1.0 / P)
    up_bytes, down_bytes, messages = [], [], 0
    log_push, log_bcast = [], []
    sent_push = sent_bcast = 0
    it, bad = 0, None
    for _ in epochs_of(range(epochs), epochs, progress):
        for batch in worker_batches(setup.shards, batch_size, setup.rng):
            tau = threshold(it + 1, tau0, a)
            params = mlp.unflatten(model, layers)
            received = [[] for _ in range(servers)]
            up, down = np.zeros((P, servers)), np.zeros((P, servers))
            for w, idx in enumerate(batch):
                loss, grads = mlp.loss_and_grads(params, data.X_train[idx], data.y_train[idx])
                bad = first_nonfinite(bad, loss, it)
                mom[w] *= np.float32(momentum)
                mom[w] += mlp.flatten(grads)
                update = scale * mom[w]
                for s in range(servers):
                    lo, hi = bounds[s], bounds[s + 1]
                    vals, loc, res = value_filter(update[lo:hi], residual[w][lo:hi], tau)
                    if record_values:
                        total = update[lo:hi] + residual[w][lo:hi]
                    residual[w][lo:hi] = res
                    up[w, s] = payload_bytes((vals, loc))
                    received[s].append((vals, loc))
                    sent_push += len(vals)
                    if record_values:
                        log_push.append({"iteration": it, "src": w, "dst": P + s,
                                         "tau": tau, "lo": int(lo),
                                         "indices": loc.astype(np.int64) + lo, "values": vals,
                                         "total": total, "residual": res.copy()})
            for s in range(servers):
                lo, hi = bounds[s], bounds[s + 1]
                acc = srv_res[s]
                nnz = 0
                for vals, loc in received[s]:
                    acc[loc] += inv_p * vals    # indices within one message are distinct
                    nnz += len(vals)
                vals, loc, srv_res[s] = value_filter(acc, np.zeros_like(acc), tau)
                down[:, s] = payload_bytes((vals, loc))     # the same to every worker
                sent_bcast += P * len(vals)
                model[lo + loc.astype(np.int64)] += vals
                if record_values:
                    log_bcast.append({"iteration": it, "src": P + s,
                                      "dst": list(range(P)), "tau": tau, "lo": int(lo),
                                      "indices": loc.astype(np.int64) + lo, "values": vals})
            up_bytes.append(up)
            down_bytes.append(down)
            messages += 2 * P * servers
            it += 1
    dense = it * P * n
    final = mlp.unflatten(model, layers)
    server_model = mlp.unflatten(model + np.concatenate(srv_res), layers)
    hyper = dict(epochs=epochs, tau0=tau0, a=a, servers=servers, hidden=hidden,
                 batch_size=batch_size, lr=lr, momentum=momentum, overlap=overlap,
                 device_flops=device_flops)
    extra = {"push_dropped_fraction": 1.0 - sent_push / dense if dense else 0.0,
             "broadcast_dropped_fraction": 1.0 - sent_bcast / dense if dense else 0.0,
             "dense_bytes": 2 * dense * mlp.BYTES_PER_VALUE,
             "final_tau": tau,
             "server_accuracy": mlp.accuracy(server_model, data.X_test, data.y_test),
             "shard_sizes": np.diff(bounds).tolist(),
             "test_loss": mlp.loss(final, data.X_test, data.y_test)}
    if record_values:
        extra.update(pushes=log_push, broadcasts=log_bcast, initial_params=initial,
                     final_params=model.copy(), server_residual=np.concatenate(srv_res))
    dropped = 1.0 - (sent_push + sent_bcast) / (2 * dense) if dense else 0.0
    stats = _with_signal(sparse_stats(
        Recording(P, servers, it, mlp.model_of(layers), np.array([len(i) for i in batch]), hyper,
                  {}), np.array(up_bytes), np.array(down_bytes)))
    return run_result("pf", schedule(P, stats), setup,
                      mlp.accuracy(final, data.X_test, data.y_test),
                      stats["up_bytes"].sum() + stats["down_bytes"].sum(), messages, it, hyper,
                      servers=servers, dropped_fraction=dropped, extra=extra, diverged_at=bad)


def measure(trace):
    """Per recorded iteration, bytes per shard parameter of each worker's push and of the
    servers' broadcast (:func:`workloads.paradigms.ps.measure_sparse`), and the signal share
    ``f`` of the broadcast pass rate: ``ratio(P) = f + (1 - f) / sqrt(P)`` fitted to the
    recorded ratio of broadcast to push rates (see :func:`broadcast_scale`).

    Examples
    --------
    >>> 0.0 <= measure(run(workers=2, epochs=1).trace)["signal"] <= 1.0
    True
    """
    return _with_signal(measure_sparse(trace, "push", "broadcast"))


def _with_signal(st):
    P0 = st["recording"].P0
    up = st["up_all"].mean() if st["up_all"].size else 0.0
    down = st["down_all"].mean() if st["down_all"].size else 0.0
    st["signal"] = 1.0
    if P0 > 1 and up > 0:
        g0 = 1.0 / math.sqrt(P0)
        st["signal"] = float(min(1.0, max(0.0, (down / up - g0) / (1.0 - g0))))
    return st


def broadcast_scale(f, P, P0):
    """Broadcast pass rate at P over that at P0, for signal share f: the broadcast filters
    the average of P steps, whose noise shrinks as ``1 / sqrt(P)``.

    A worker's push rate hardly depends on P, the broadcast rate does. Measured
    with ``tau0 = 0.05`` (seed 0, the same iterations at every P), per worker and
    iteration, the fraction of values pushed / broadcast: Iris (131 parameters)
    0.45 / 0.38, 0.49 / 0.39, 0.52 / 0.40, 0.53 / 0.40 at P = 2, 4, 8, 16; digits
    (1,210 parameters) 0.31 / 0.25, 0.28 / 0.21, 0.28 / 0.18, 0.29 / 0.16. Fitted
    at P0 = 4, the model predicts the total bytes at P = 8 to +3 % on digits
    (keeping the broadcast rate fixed: +8 %), at P = 16 to +0.4 % (+9 %), from
    P0 = 2 to P = 16 to +5 % (+26 %). On Iris, whose tiny model's broadcast is
    almost all signal, it underestimates: -7 % at 4 -> 8 (fixed rate: -4 %),
    -22 % at 2 -> 16 (-11 %).

    Parameters
    ----------
    f : float
        Signal share of the broadcast.
    P : int
        Workers of the schedule.
    P0 : int
        Workers of the recording.

    Examples
    --------
    >>> broadcast_scale(0.3, 4, 4), broadcast_scale(1.0, 64, 4)
    (1.0, 1.0)
    """
    return (f + (1.0 - f) / math.sqrt(P)) / (f + (1.0 - f) / math.sqrt(P0))


def phases(trace):
    """PF's phases (:mod:`workloads.plan.phases`): the filter settling, then no steady state.

    A worker's first updates are small (its momentum starts at zero and the
    residual empty) and the threshold is at its largest, so almost nothing
    passes the filter at first: the warm-up is the momentum's time constant,
    ``round(1 / (1 - momentum))`` steps (10 at momentum 0.9; on digits at P0 = 4
    the recorded traffic reaches its level by step 6). After it the pass rate
    keeps drifting as training converges (-8 to -10 % of time per iteration per
    epoch at P = 64 with ResNet-50 sizes on digits): the schedule replays each
    recorded iteration's traffic, so iterations are not alike, and the window
    that represents a run is the whole recorded run.

    Parameters
    ----------
    trace : netsim.Trace
        A PF recording or projection (its ``hyper["momentum"]``).

    Returns
    -------
    workloads.plan.phases.Phases

    Examples
    --------
    >>> p = phases(run(workers=2, epochs=1).trace)
    >>> p.warmup, p.alike
    (10, False)
    """
    momentum = float((trace.metadata.get("hyper") or {}).get("momentum", 0.9))
    settle = max(1, round(1.0 / (1.0 - momentum))) if momentum < 1 else 1
    return Phases(warmup=settle, alike=False,
                  what=(f"PF's filter settling: the momentum's time constant, {settle} steps; "
                        "then the recorded traffic, which drifts as training converges"))


def schedule(P, stats, servers=None, iterations=None, batch_size=None, model=None,
             start=0):
    """PF with ``P`` workers: worker w pushes as recorded worker w mod P0 (a worker
    filters its own step, independent of P) in recorded iteration i (tau decays with
    the step; beyond the recording its last epoch over and over); servers aggregate
    (:func:`aggregate_flops`) and broadcast the recorded worker 0's reply scaled by
    :func:`broadcast_scale` for the averaging of P workers' updates.

    Parameters
    ----------
    P : int
    stats : dict
        From :func:`measure`.
    servers, iterations, batch_size : int, optional
    model : workloads.mlp.Model, optional
    start : int, optional
        The run's iteration the trace begins at (:class:`workloads.plan.measure.Plan`).

    Returns
    -------
    netsim.Trace

    Examples
    --------
    >>> t = schedule(8, measure(run(workers=2, epochs=1).trace), iterations=2)
    >>> t.ranks, t.num_messages
    (9, 32)
    """
    c = plan(P, stats["recording"], SERVERS, servers, iterations, batch_size, model, start)
    P, S, model = c.P, c.S, c.model
    bounds, sizes, W, srv = shard_layout(c)
    overlap = c.rec.hyper.get("overlap", True)
    scale = broadcast_scale(stats["signal"], P, c.rec.P0)
    b = Frontier(P + S)
    for it in range(c.iterations):
        bwd = b.forward_backward(W, model, c.batch, it)
        up = sparse_sizes(c, stats, it, "up")                   # (P, S)
        b.send(np.repeat(W, S), np.tile(srv, P), up.ravel(), it, "push",
               grad_deps(model, bounds, bwd, W, overlap, b))
        b.compute(srv, aggregate_flops(up.sum(axis=0) / SPARSE_BYTES_PER_VALUE, sizes), it,
                  "aggregate")
        down = sparse_sizes(c, stats, it, "down")[0] * scale    # (S,)
        b.send(np.repeat(srv, P), np.tile(W, S), np.repeat(down, P), it, "broadcast")
    return finish(b.build(), c, SERVERS)
