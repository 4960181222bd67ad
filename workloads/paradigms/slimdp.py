"""Slim-DP: data parallelism that pushes and pulls only a core and an explored subset.

Ranks ``0..P-1`` are workers, ``P..P+S-1`` servers; the flat parameter vector
(:func:`workloads.mlp.flatten` order, ``d`` values) is cut into S contiguous
shards (:func:`workloads.paradigms.ps.shard_bounds`), server ``s`` holding the
global values of shard ``s``. Every worker trains its own copy of the model;
round ``t``:

1. each worker takes one momentum SGD step on its mini-batch (forward, backward
   layer by layer, local update);
2. it chooses the set ``S = core ∪ explore`` of ``K = round(alpha * d)`` values to
   communicate this round:

   * **core** (exploit): the ``round(beta * K)`` parameters of largest
     significance ``|w_j| + lam * |g_j|`` (its current weight and latest
     gradient), recomputed every ``q`` rounds and kept in between;
   * **explore**: ``K - |core|`` parameters drawn uniformly without
     replacement from the others, redrawn every round from a Generator seeded
     by ``(seed, 1)``;

3. it pushes, for ``j`` in ``S``, its change ``w_j - base_j`` since it last pulled
   ``j`` (float32 value + int32 index, 8 bytes each, one message per server);
4. each server adds ``1/P`` of every pushed change to its global values
   (synchronous: after every push of the round);
5. each worker pulls the new global values of ``S``: the reply carries the
   float32 values only (4 bytes each), in the order of the indices the worker
   pushed, so it needs no index. The worker overwrites ``w_S`` (and ``base_S``)
   with them.

Parameters outside ``S`` keep training locally; their change since the last
pull is not lost but waits until they are next in ``S``. With ``alpha = 1``
every value is exchanged every round and this is synchronous parameter
averaging after every step. Accuracy is measured on the servers' global model.
The fraction of values not sent is ``1 - K / d`` per message pair.

References
----------
Shizhao Sun, Wei Chen, Jiang Bian, Xiaoguang Liu and Tie-Yan Liu, "Slim-DP: A
Light Communication Data Parallelism for DNN", arXiv:1709.09393, 2017;
published as "Slim-DP: A Multi-Agent System for Communication-Efficient
Distributed Deep Learning", AAMAS 2018. Section 3 of the paper: the
explore-exploit choice of the communicated subset (core = most significant
parameters by magnitude and gradient, refreshed every ``q`` rounds; explore =
random sample of the rest), push of the updates and pull of the global values
of that subset only. The significance ``|w| + lam * |g|`` and the options
``alpha`` (fraction communicated), ``beta`` (core share), ``lam`` and ``q`` follow
this project's brief; the per-worker core is our reading.
"""

import numpy as np

from workloads import mlp
from workloads.errors import WorkloadError
from workloads.option_ranges import check_option
from workloads.plan.frontier import Frontier
from workloads.plan.phases import Phases
from workloads.plan.measure import Recording, finish, plan
from workloads.paradigms.ps import closed_form, measure_sparse, shard_bounds, sparse_sizes, sparse_stats
from workloads.recorder import SPARSE_BYTES_PER_VALUE, payload_bytes, run_result
from workloads.recorder import V100_FP32_FLOPS, sparse_payload
from workloads.training import epochs_of, first_nonfinite, prepare, worker_batches

__all__ = ["run", "schedule", "measure", "closed_form", "phases", "subset_sizes", "core_set",
           "explore_set", "worker_update_flops", "server_flops", "SERVERS", "DESCRIPTION",
           "OPTIONS"]

#: Any number of servers >= 1 (see :func:`workloads.plan.measure.plan`).
SERVERS = "servers"

DESCRIPTION = ("Slim-DP: each round push/pull only alpha*d values: a core of significant "
               "parameters (|w| + lam*|g|, refreshed every q rounds) plus a random explored set.")
OPTIONS = {
    "epochs": "passes over each worker's shard of the training set",
    "seed": "seed of the initial weights, shards, mini-batch order and explored sets",
    "alpha": "fraction of the d parameters communicated per round (0 < alpha <= 1)",
    "beta": "share of the communicated set that is core (0 <= beta <= 1)",
    "lam": "weight of |gradient| in the significance |w| + lam*|g| (>= 0)",
    "q": "rounds between two refreshes of the core",
    "servers": "number of servers; the parameters are sharded evenly among them",
    "hidden": "hidden-layer widths",
    "batch_size": "samples per step per worker",
    "lr": "learning rate (local steps)",
    "momentum": "SGD momentum (local to each worker)",
    "record_values": "keep every message's indices and values in RunResult.extra (for checks)",
    "device_flops": "device throughput in FLOP/s for the compute ops",
    "data_path": "directory of the MNIST IDX files",
}


def subset_sizes(d, alpha, beta):
    """Sizes ``(K, core)`` of the communicated set and of its core for ``d`` parameters.

    ``K = max(1, round(alpha * d))`` and ``core = round(beta * K)``.

    Parameters
    ----------
    d : int
        Parameters.
    alpha : float
        Share communicated.
    beta : float
        Share of the communicated set that is core.

    Raises
    ------
    WorkloadError
        If ``alpha`` is not in (0, 1] or ``beta`` not in [0, 1].

    Examples
    --------
    >>> subset_sizes(131, 0.3, 0.5)
    (39, 20)
    >>> subset_sizes(131, 0, 0.5)
    Traceback (most recent call last):
    ...
    workloads.errors.WorkloadError: alpha must be a number in (0, 1], got 0
    """
    alpha = check_option("alpha", alpha)
    beta = check_option("beta", beta)
    K = max(1, int(round(alpha * d)))
    return K, int(round(beta * K))


def worker_update_flops(d, K, refresh):
    """FLOPs of a worker's round after its backward: the local momentum SGD update of ``d``
    values (:func:`workloads.mlp.update_flops`), the significance ``|w| + lam |g|`` of
    every value on a core-refresh round (3 per value) and choosing the ``K`` values.

    Parameters
    ----------
    d : int
        Parameters.
    K : int
        Values chosen.
    refresh : bool
        A core-refresh round.

    Examples
    --------
    >>> worker_update_flops(131, 39, True), worker_update_flops(131, 39, False)
    (956.0, 563.0)
    """
    return mlp.update_flops(d) + (3.0 * d if refresh else 0.0) + K


def server_flops(nnz):
    """FLOPs of a server adding ``1/P`` of each of ``nnz`` pushed changes (2 per value, and
    one for the ``1/P``).

    Examples
    --------
    >>> server_flops(40)
    81
    """
    return 2 * nnz + 1


def core_set(weights, grads, size, lam):
    """The ``size`` most significant parameters, by ``|w| + lam * |g|``, ascending indices.

    Ties are broken by the lower index (a stable sort), so the choice is deterministic.

    Parameters
    ----------
    weights : numpy.ndarray
        Flat parameters.
    grads : numpy.ndarray
        Flat gradients.
    size : int
        Values kept.
    lam : float
        Weight of the gradient.

    Examples
    --------
    >>> core_set(np.array([0.1, -2.0, 0.3, 0.0]), np.array([0.0, 0.0, 1.0, 5.0]), 2, 1.0).tolist()
    [1, 3]
    """
    sig = np.abs(np.asarray(weights, np.float64)) + lam * np.abs(np.asarray(grads, np.float64))
    order = np.argsort(-sig, kind="stable")
    return np.sort(order[:size]).astype(np.int64)


def explore_set(rng, d, core, size):
    """``size`` parameters drawn uniformly without replacement from those not in ``core``.

    Parameters
    ----------
    rng : numpy.random.Generator
    d : int
        Parameters.
    core : numpy.ndarray of int
        The core set.
    size : int
        Values drawn.

    Examples
    --------
    >>> e = explore_set(np.random.default_rng(0), 10, np.array([0, 1, 2]), 4)
    >>> len(e), bool(np.isin(e, [0, 1, 2]).any())
    (4, False)
    """
    rest = np.setdiff1d(np.arange(d), core, assume_unique=True)
    return np.sort(rng.choice(rest, size=size, replace=False)).astype(np.int64)


def run(dataset="iris", workers=4, epochs=30, seed=0, alpha=0.3, beta=0.5, lam=1.0, q=10,
        servers=1, hidden=(16,), batch_size=8, lr=0.05, momentum=0.9, record_values=False,
        device_flops=V100_FP32_FLOPS, data_path=None, progress=None):
    """Train with Slim-DP; record every partial push and pull.

    Parameters
    ----------
    dataset : str or Dataset
    workers : int
        Worker ranks ``0..P-1``; servers are ranks ``P..P+S-1``.
    epochs : int
    seed : int
    alpha : float
        Fraction of the parameters communicated per round, in (0, 1].
    beta : float
        Share of the communicated set taken by the core, in [0, 1].
    lam : float
        Weight of the gradient in the significance ``|w| + lam * |g|`` (>= 0).
    q : int
        Rounds between core refreshes (>= 1).
    servers : int
    hidden : sequence of int
    batch_size : int
    lr, momentum : float
        Local momentum SGD.
    record_values : bool
        Keep every push and pull in ``extra["messages_log"]`` as dicts with
        ``iteration``, ``src``, ``dst``, ``tag``, ``indices`` (flat positions)
        and ``values``; ``extra["core_log"]`` holds each worker's core at every
        refresh, and ``extra["subsets"]`` every worker's set ``S`` per round.
    device_flops : float
    data_path : str, optional
    progress : callable, optional
        Called as ``progress(epochs_done, epochs)`` after each epoch (progress bars).

    Returns
    -------
    RunResult
        ``dropped_fraction``: values not sent over the values of a dense push
        and pull of the same messages. ``extra``: ``K``, ``core_size``,
        ``explore_size``, ``params``, ``core_refreshes``, ``dense_bytes``,
        ``shard_sizes``, ``test_loss``.

    Examples
    --------
    >>> r = run(workers=2, epochs=2, alpha=0.5)
    >>> r.extra["K"], r.extra["params"], r.iterations, r.messages
    (66, 131, 16, 64)
    >>> r.total_bytes == r.iterations * 2 * 66 * (8 + 4)
    True
    """
    subset_sizes(1, alpha, beta)  # validate before any work
    check_option("q", q)
    check_option("lam", lam)
    setup = prepare(dataset, workers, seed, hidden, data_path, epochs=epochs, lr=lr,
                    momentum=momentum)
    data, layers = setup.data, setup.layers
    P = len(setup.shards)
    d = mlp.num_params(layers)
    K, kc = subset_sizes(d, alpha, beta)
    bounds = shard_bounds(d, servers)
    explore_rng = np.random.default_rng((seed, 1))
    global_w = mlp.flatten(setup.params)
    local = [global_w.copy() for _ in range(P)]
    base = [global_w.copy() for _ in range(P)]
    mom = [np.zeros(d, np.float32) for _ in range(P)]
    core = [np.zeros(0, np.int64) for _ in range(P)]
    inv_p = np.float32(1.0 / P)
    up_bytes, down_bytes, messages = [], [], 0
    log, core_log, subsets = [], [], []
    sent = refreshes = 0
    it, bad = 0, None
    for _ in epochs_of(range(epochs), epochs, progress):
        for batch in worker_batches(setup.shards, batch_size, setup.rng):
            pushed = [[] for _ in range(servers)]
            up, down = np.zeros((P, servers)), np.zeros((P, servers))
            chosen = []
            for w, idx in enumerate(batch):
                params = mlp.unflatten(local[w], layers)
                loss, grads = mlp.loss_and_grads(params, data.X_train[idx], data.y_train[idx])
                bad = first_nonfinite(bad, loss, it)
                g = mlp.flatten(grads)
                mom[w] *= np.float32(momentum)
                mom[w] += g
                local[w] -= np.float32(lr) * mom[w]
                refresh = it % q == 0
                if refresh:
                    core[w] = core_set(local[w], g, kc, lam)
                    refreshes += 1
                    if record_values:
                        core_log.append({"iteration": it, "worker": w, "core": core[w].copy()})
                S = np.union1d(core[w], explore_set(explore_rng, d, core[w], K - kc))
                chosen.append(S)
                # Local update (4 FLOPs/value) plus choosing S (significance on refresh rounds).
                delta = local[w] - base[w]
                for s in range(servers):
                    lo, hi = bounds[s], bounds[s + 1]
                    sel = S[(S >= lo) & (S < hi)]
                    payload = sparse_payload(delta[lo:hi], sel - lo)
                    up[w, s] = payload_bytes(payload)
                    pushed[s].append((w, sel, payload[0]))
                    sent += len(sel)
                    if record_values:
                        log.append({"iteration": it, "src": w, "dst": P + s, "tag": "push",
                                    "indices": sel.copy(), "values": payload[0]})
            if record_values:
                subsets.append([S.copy() for S in chosen])
            for s in range(servers):
                lo, hi = bounds[s], bounds[s + 1]
                nnz = sum(len(sel) for _, sel, _ in pushed[s])
                for _, sel, vals in pushed[s]:
                    global_w[sel] += inv_p * vals
                for w, sel, _ in pushed[s]:
                    reply = global_w[sel].copy()
                    down[w, s] = payload_bytes(reply)
                    local[w][sel] = reply
                    base[w][sel] = reply
                    sent += len(sel)
                    if record_values:
                        log.append({"iteration": it, "src": P + s, "dst": w, "tag": "pull",
                                    "indices": sel.copy(), "values": reply})
            up_bytes.append(up)
            down_bytes.append(down)
            messages += 2 * P * servers
            it += 1
    dense = 2 * it * P * d
    final = mlp.unflatten(global_w, layers)
    hyper = dict(epochs=epochs, alpha=alpha, beta=beta, lam=lam, q=q, servers=servers,
                 hidden=hidden, batch_size=batch_size, lr=lr, momentum=momentum,
                 device_flops=device_flops)
    extra = {"K": K, "core_size": kc, "explore_size": K - kc, "params": d,
             "core_refreshes": refreshes, "dense_bytes": dense * mlp.BYTES_PER_VALUE,
             "shard_sizes": np.diff(bounds).tolist(),
             "test_loss": mlp.loss(final, data.X_test, data.y_test)}
    if record_values:
        extra.update(messages_log=log, core_log=core_log, subsets=subsets,
                     final_params=global_w.copy())
    stats = sparse_stats(Recording(P, servers, it, mlp.model_of(layers),
                                   np.array([len(i) for i in batch]), hyper, {}),
                         np.array(up_bytes), np.array(down_bytes))
    return run_result("slimdp", schedule(P, stats), setup,
                      mlp.accuracy(final, data.X_test, data.y_test),
                      stats["up_bytes"].sum() + stats["down_bytes"].sum(), messages, it, hyper,
                      servers=servers, dropped_fraction=1.0 - sent / dense if dense else 0.0,
                      extra=extra, diverged_at=bad)


def measure(trace):
    """Per recorded iteration, bytes per shard parameter of each worker's push and of
    each server's pull reply (:func:`workloads.paradigms.ps.measure_sparse`).

    Examples
    --------
    >>> measure(run(workers=2, epochs=1).trace)["up"].shape
    (8, 2, 1)
    """
    return measure_sparse(trace, "push", "pull")


def phases(trace):
    """Slim-DP's phases (:mod:`workloads.plan.phases`): period ``q`` (the core is refreshed,
    and the step explores, every q steps), iterations not alike (each replays its
    recorded, sampled traffic): the whole recorded run represents it.

    Parameters
    ----------
    trace : netsim.Trace
        A Slim-DP recording or projection (its ``hyper["q"]``).

    Returns
    -------
    workloads.plan.phases.Phases

    Examples
    --------
    >>> p = phases(run(workers=2, epochs=1, q=3).trace)
    >>> p.warmup, p.period, p.alike
    (0, 3, False)
    """
    q = int((trace.metadata.get("hyper") or {}).get("q", 1))
    return Phases(period=q, alike=False,
                  what=f"Slim-DP: the core refreshed every q = {q} steps; recorded traffic")


def schedule(P, stats, servers=None, iterations=None, batch_size=None, model=None,
             start=0):
    """Slim-DP with ``P`` workers: K = round(alpha n) does not depend on P; worker w
    sends as recorded worker w mod P0 in recorded iteration i (beyond the recording,
    its last epoch over and over); :func:`worker_update_flops` and
    :func:`server_flops` for the compute.

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
    P, S, d = c.P, c.S, c.model.params
    W, srv = np.arange(P), P + np.arange(S)
    q = int(c.rec.hyper.get("q", 1))
    K, _ = subset_sizes(d, float(c.rec.hyper.get("alpha", 1.0)), 0.0)
    b = Frontier(P + S)
    for it in range(c.iterations):
        b.forward_backward(W, c.model, c.batch, it)
        b.compute(W, worker_update_flops(d, K, (c.start + it) % q == 0), it, "update")
        up = sparse_sizes(c, stats, it, "up")
        b.send(np.repeat(W, S), np.tile(srv, P), up.ravel(), it, "push")
        b.compute(srv, server_flops(up.sum(axis=0) / SPARSE_BYTES_PER_VALUE), it, "aggregate")
        down = sparse_sizes(c, stats, it, "down")               # (P, S)
        b.send(np.repeat(srv, P), np.tile(W, S), down.T.ravel(), it, "pull")
    return finish(b.build(), c, SERVERS)
