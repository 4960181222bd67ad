"""Deep Gradient Compression (DGC): top-k sparsified gradients exchanged by allgather.

P workers (ranks ``0..P-1``, no servers) each hold a replica of the model.
Step ``t``, on worker ``k`` (Lin et al. 2018, Algorithm 1 with the momentum
correction, local clipping and momentum factor masking of section 3):

1. gradient of the local mini-batch, scaled by ``1/P`` so that the sum over
   workers is the average gradient: ``g = grad / P``;
2. **local gradient clipping**: if ``||g||_2 > clip_norm / sqrt(P)`` it is scaled
   down to that norm (the global threshold scaled by ``P**-1/2``, section 3.2);
3. **momentum correction**: ``u = momentum * u + g`` and ``v = v + u`` (the
   velocity, not the gradient, is accumulated locally, eq. 5 and 6);
4. **sparsification**, layer by layer (a layer is the block ``(W_l, b_l)`` of
   :func:`workloads.mlp.layer_offsets`): the ``k_l`` entries of largest ``|v|``
   are sent, ``k_l = max(1, ceil(n_l * density))`` for a layer of ``n_l`` values.
   The ``max(1, ...)`` is ours: on a tiny model, 99.9 % sparsity would leave
   less than one value per layer, so at least one value of every layer is
   sent each step, and the achieved compression is reported as it is;
5. **momentum factor masking**: ``u`` and ``v`` are zeroed where values were sent;
6. **allgather**: every worker sends its sparse set (float32 value + int32 flat
   index, 8 bytes per value; one message per layer and peer, leaving as soon
   as that layer's backward op is done) directly to each of the ``P - 1``
   others. This is a direct (all-to-all) allgather of variable-size messages,
   not a ring; each worker receives exactly the sets the others send;
7. every worker sums the P sparse sets (its own and the P - 1 received, in rank
   order) and takes a plain SGD step ``w -= lr * sum``: the momentum is already
   inside ``v``. Replicas stay identical.

**Warm-up** (section 3.3): the sparsity grows exponentially during the first
``warmup_epochs`` epochs, density ``4**-(e+1)`` in epoch ``e`` (75 %, 93.75 %,
98.4375 %, 99.6 %), and is ``final_sparsity`` (99.9 %) afterwards; a stage never
goes below the final density. The learning rate warms up too, linearly from
``lr / P`` to ``lr`` over ``lr_warmup_epochs`` (by default ``warmup_epochs``)
epochs (:func:`warmup_lr`). Top-k is exact (a stable sort of ``|v|``), where
the paper estimates the threshold from a 0.1 %-1 % sample.

References
----------
Yujun Lin, Song Han, Huizi Mao, Yu Wang and William J. Dally, "Deep Gradient
Compression: Reducing the Communication Bandwidth for Distributed Training",
ICLR 2018: Algorithm 1 (gradient sparsification with local accumulation),
section 3.2 (momentum correction, eq. 5-6; local gradient clipping), section
3.3 (momentum factor masking; warm-up training with exponentially increasing
sparsity 75 %, 93.75 %, 98.4375 %, 99.6 %, 99.9 %).
"""

import math

import numpy as np

from netsim import checks, costmodel
from netsim.trace.core import COMPUTE

from workloads import mlp
from workloads.plan.closed import per_iteration, terms, worker_mask
from workloads.errors import WorkloadError
from workloads.option_ranges import check_option
from workloads.plan.frontier import Frontier, merge, one
from workloads.plan.phases import Phases
from workloads.plan.measure import Recording, finish, plan, recording, steps_per_epoch, tag_mask, train_samples
from workloads.recorder import (SPARSE_BYTES_PER_VALUE, V100_FP32_FLOPS, payload_bytes, run_result,
                       sparse_payload)
from workloads.training import epochs_of, first_nonfinite, prepare, worker_batches

__all__ = ["run", "schedule", "measure", "closed_form", "phases", "recorded_epoch",
           "warmup_sparsity", "warmup_lr", "values_per_layer", "top_k",
           "compress_flops", "step_flops", "SERVERS", "DESCRIPTION", "OPTIONS"]

#: No servers (see :func:`workloads.plan.measure.plan`).
SERVERS = "none"

DESCRIPTION = ("Deep Gradient Compression: per-layer top-k of momentum-corrected accumulated "
               "gradients, exchanged by a direct allgather; warm-up 75% -> 99.9% sparsity.")
OPTIONS = {
    "epochs": "passes over each worker's shard of the training set",
    "seed": "seed of the initial weights, shards and mini-batch order",
    "final_sparsity": "fraction of values not sent after the warm-up, in [0, 1)",
    "warmup_epochs": "epochs of exponentially increasing sparsity (75%, 93.75%, ...)",
    "lr_warmup_epochs": ("epochs of the learning rate's linear warm-up from lr/P to lr "
                         "(None: warmup_epochs; 0: off)"),
    "clip_norm": ("global gradient-norm clipping threshold, applied locally as "
                  "clip_norm/sqrt(P); None: off"),
    "hidden": "hidden-layer widths",
    "batch_size": "samples per step per worker",
    "lr": "learning rate",
    "momentum": "momentum (corrected: accumulated in the local velocity)",
    "record_values": "keep every message's indices and values in RunResult.extra (for checks)",
    "device_flops": "device throughput in FLOP/s for the compute ops",
    "data_path": "directory of the MNIST IDX files",
}


def warmup_sparsity(epoch, warmup_epochs=4, final_sparsity=0.999):
    """Sparsity of epoch ``epoch`` (from 0) under DGC's exponential warm-up.

    Epoch ``e < warmup_epochs`` keeps density ``4**-(e+1)`` (but never less than
    the final density); later epochs use ``final_sparsity``.

    Parameters
    ----------
    epoch : int
        Epoch from 0.
    warmup_epochs : int
        Epochs of the warm-up.
    final_sparsity : float
        Sparsity after the warm-up, in [0, 1).

    Raises
    ------
    WorkloadError
        If ``final_sparsity`` is not in [0, 1) or ``warmup_epochs`` is not an
        integer >= 0.

    Examples
    --------
    >>> [warmup_sparsity(e) for e in range(6)]
    [0.75, 0.9375, 0.984375, 0.99609375, 0.999, 0.999]
    >>> warmup_sparsity(0, warmup_epochs=0, final_sparsity=0.99)
    0.99
    """
    checks.check_real(final_sparsity, "final_sparsity", 0, 1, strict=(False, True),
                      error=WorkloadError)
    check_option("warmup_epochs", warmup_epochs)
    if epoch < warmup_epochs:
        return min(1.0 - 0.25 ** (epoch + 1), float(final_sparsity))
    return float(final_sparsity)


def warmup_lr(epoch, lr, P, warmup_epochs=4):
    """Learning rate at (fractional) epoch ``epoch`` under DGC's warm-up.

    During the warm-up DGC uses "a less aggressive learning rate" (Lin et al.
    2018, section 3.3), the gradual warm-up of Goyal et al. 2017 (section 2.2):
    from ``lr / P`` (one worker's rate, ``lr`` being the rate of the P workers'
    global batch) linearly to ``lr`` over ``warmup_epochs`` epochs, updated every
    step. The DGC authors' ``train.py`` (``adjust_learning_rate``) computes it
    as ``lr * (e (P - 1) / E + 1) / P`` with ``e = epoch + step / steps_per_epoch``.

    Parameters
    ----------
    epoch : float
        Epochs done, fraction included (``epoch + step / steps_per_epoch``).
    lr : float
        The rate after the warm-up.
    P : int
        Workers.
    warmup_epochs : int
        ``E``; 0 disables the warm-up.

    Raises
    ------
    WorkloadError
        If ``warmup_epochs`` is not an integer >= 0.

    Examples
    --------
    >>> [round(warmup_lr(e, 0.4, 4, 4), 4) for e in (0, 1, 2, 3.5, 4, 9)]
    [0.1, 0.175, 0.25, 0.3625, 0.4, 0.4]
    """
    check_option("lr_warmup_epochs", warmup_epochs)
    if epoch >= warmup_epochs:
        return float(lr)
    return float(lr) * (epoch * (P - 1) / warmup_epochs + 1.0) / P


def values_per_layer(sizes, sparsity):
    """Values sent per layer at ``sparsity``: ``max(1, ceil(n * (1 - sparsity)))`` each.

    A tolerance of 1e-9 keeps float rounding (``1 - 0.996`` is not exactly
    0.004) from adding a value.

    Parameters
    ----------
    sizes : sequence of int
        Values of each layer.
    sparsity : float
        Share of values not sent.

    Examples
    --------
    >>> values_per_layer([80, 51], 0.75), values_per_layer([80, 51], 0.999)
    ([20, 13], [1, 1])
    """
    return [max(1, min(int(n), math.ceil(n * (1.0 - sparsity) - 1e-9))) for n in sizes]


def compress_flops(size):
    """FLOPs of selecting a layer's top-k of ``size`` values (clip, momentum, accumulate,
    compare: about 6 per value).

    Examples
    --------
    >>> compress_flops(80)
    480
    """
    return 6 * size


def step_flops(n, P, K):
    """FLOPs of a worker's step after the allgather: summing the ``P`` sparse sets of
    ``K`` values each, and the momentum-corrected update of ``n`` values (2 per value).

    Parameters
    ----------
    n : int
        Parameters of the model.
    P : int
        Workers.
    K : int
        Values of each sparse set.

    Examples
    --------
    >>> step_flops(131, 4, 3)
    274
    """
    return 2 * n + P * K


def top_k(vector, k):
    """Positions of the ``k`` entries of largest magnitude, ascending.

    Ties go to the lower position (stable sort), so the choice is deterministic.

    Parameters
    ----------
    vector : numpy.ndarray
        Values.
    k : int
        Entries kept.

    Examples
    --------
    >>> top_k(np.array([0.1, -3.0, 2.0, 0.5]), 2).tolist()
    [1, 2]
    """
    order = np.argsort(-np.abs(vector), kind="stable")
    return np.sort(order[:k])


def run(dataset="iris", workers=4, epochs=60, seed=0, final_sparsity=0.999, warmup_epochs=4,
        lr_warmup_epochs=None, clip_norm=1.0, hidden=(16,), batch_size=8, lr=0.05, momentum=0.9, record_values=False,
        device_flops=V100_FP32_FLOPS, data_path=None, progress=None):
    """Train with Deep Gradient Compression; record every sparse allgather message.

    Parameters
    ----------
    dataset : str or Dataset
    workers : int
        Ranks ``0..P-1``; no servers.
    epochs : int
    seed : int
    final_sparsity : float
        Sparsity after the warm-up, in [0, 1).
    warmup_epochs : int
        Epochs of warm-up (the paper: 4).
    lr_warmup_epochs : int or None
        Epochs of the learning-rate warm-up (:func:`warmup_lr`); None: the
        same as ``warmup_epochs``; 0: none.
    clip_norm : float or None
        Global gradient-norm threshold; each worker clips its (1/P-scaled)
        gradient to ``clip_norm / sqrt(P)``. None disables clipping.
    hidden : sequence of int
    batch_size : int
    lr, momentum : float
    record_values : bool
        Keep, in ``extra["sent"]``, one dict per worker and step with
        ``iteration``, ``worker``, ``indices`` (flat positions, all layers) and
        ``values``, and ``extra["initial_params"]``, ``extra["final_params"]``.
    device_flops : float
    data_path : str, optional
    progress : callable, optional
        Called as ``progress(epochs_done, epochs)`` after each epoch (progress bars).

    Returns
    -------
    RunResult
        ``dropped_fraction``: values not sent over the values of a dense
        exchange of the same messages. ``extra``: ``compression_ratio`` (dense
        bytes of the same messages, 4 per value, over the bytes sent),
        ``dense_bytes``, ``ring_allreduce_bytes`` (what a dense ring allreduce
        would have sent over the run, for comparison), ``stages`` (one dict per
        epoch: ``epoch``, ``sparsity``, ``values_per_layer``, ``density`` (values
        sent per worker-step over the parameters) and ``compression_ratio``),
        ``clipped_steps``, ``layer_sizes``, ``test_loss``.

    Examples
    --------
    >>> r = run(workers=2, epochs=5)
    >>> [s["values_per_layer"] for s in r.extra["stages"]]
    [[20, 13], [5, 4], [2, 1], [1, 1], [1, 1]]

    8 steps per epoch, 2 messages of 8-byte (value, index) pairs per layer and step:

    >>> r.total_bytes == 8 * 2 * 8 * (33 + 9 + 3 + 2 + 2)
    True
    """
    warmup_sparsity(0, warmup_epochs, final_sparsity)  # validate before any work
    lr_warmup_epochs = warmup_epochs if lr_warmup_epochs is None else lr_warmup_epochs
    warmup_lr(0.0, lr, workers, lr_warmup_epochs)
    if clip_norm is not None:
        check_option("clip_norm", clip_norm)
    setup = prepare(dataset, workers, seed, hidden, data_path, epochs=epochs, lr=lr,
                    momentum=momentum)
    data, layers = setup.data, setup.layers
    P = len(setup.shards)
    n = mlp.num_params(layers)
    offsets = mlp.layer_offsets(layers)
    sizes = np.diff(offsets).tolist()
    L = len(sizes)
    model = mlp.flatten(setup.params)
    initial = model.copy()
    u = [np.zeros(n, np.float32) for _ in range(P)]
    v = [np.zeros(n, np.float32) for _ in range(P)]
    local_clip = None if clip_norm is None else clip_norm / math.sqrt(P)
    stages, sent_log, epoch_bytes = [], [], []
    total_bytes = messages = 0
    sent_values = clipped = 0
    it, bad = 0, None
    for epoch in epochs_of(range(epochs), epochs, progress):
        sparsity = warmup_sparsity(epoch, warmup_epochs, final_sparsity)
        ks = values_per_layer(sizes, sparsity)
        step_values = sum(ks)                        # values each worker sends per peer and step
        stage_steps = 0
        batches = worker_batches(setup.shards, batch_size, setup.rng)
        for batch in batches:
            params = mlp.unflatten(model, layers)
            sets = []
            for w, idx in enumerate(batch):
                loss, grads = mlp.loss_and_grads(params, data.X_train[idx], data.y_train[idx])
                bad = first_nonfinite(bad, loss, it)
                g = mlp.flatten(grads) / np.float32(P)
                if local_clip is not None:
                    norm = float(np.linalg.norm(g))
                    if norm > local_clip:
                        g *= np.float32(local_clip / norm)
                        clipped += 1
                u[w] *= np.float32(momentum)
                u[w] += g
                v[w] += u[w]
                per_layer = []
                for l in range(L):
                    lo, hi = offsets[l], offsets[l + 1]
                    pos = lo + top_k(v[w][lo:hi], ks[l])
                    per_layer.append(sparse_payload(v[w], pos))
                    v[w][pos] = 0.0                 # momentum factor masking
                    u[w][pos] = 0.0
                sets.append(per_layer)
                if record_values:
                    sent_log.append({
                        "iteration": it, "worker": w,
                        "indices": np.concatenate([p for _, p in per_layer]).astype(np.int64),
                        "values": np.concatenate([x for x, _ in per_layer])})
            # Every worker's set of a layer leaves for every peer (see schedule).
            if stage_steps == 0:
                epoch_bytes.append([payload_bytes(x) for x in sets[0]])
            total_bytes += (P - 1) * sum(payload_bytes(x) for per in sets for x in per)
            messages += P * (P - 1) * L
            total = np.zeros(n, np.float32)
            for w in range(P):                       # every worker sums the same sets in rank order
                for vals, pos in sets[w]:
                    total[pos] += vals
            rate = warmup_lr(epoch + stage_steps / len(batches), lr, P, lr_warmup_epochs)
            model -= np.float32(rate) * total
            stage_steps += 1
            it += 1
        stage_sent = stage_steps * P * (P - 1) * step_values
        stage_dense = stage_steps * P * (P - 1) * n
        sent_values += stage_sent
        stages.append({"epoch": epoch, "sparsity": sparsity, "values_per_layer": list(ks),
                       "density": step_values / n, "steps": stage_steps,
                       "compression_ratio": (stage_dense * mlp.BYTES_PER_VALUE
                                             / (stage_sent * SPARSE_BYTES_PER_VALUE))
                                            if stage_sent else None})
    dense_values = it * P * (P - 1) * n
    final = mlp.unflatten(model, layers)
    dense_bytes = dense_values * mlp.BYTES_PER_VALUE
    hyper = dict(epochs=epochs, final_sparsity=final_sparsity, warmup_epochs=warmup_epochs,
                 lr_warmup_epochs=lr_warmup_epochs, clip_norm=clip_norm, hidden=hidden, batch_size=batch_size, lr=lr,
                 momentum=momentum, device_flops=device_flops)
    extra = {"compression_ratio": dense_bytes / total_bytes if total_bytes else None,
             "dense_bytes": dense_bytes,
             "ring_allreduce_bytes": it * 2 * (P - 1) * n * mlp.BYTES_PER_VALUE,
             "stages": stages, "clipped_steps": clipped, "layer_sizes": sizes,
             "test_loss": mlp.loss(final, data.X_test, data.y_test)}
    if record_values:
        extra.update(sent=sent_log, initial_params=initial, final_params=model.copy())
    dropped = 1.0 - sent_values / dense_values if dense_values else 0.0
    stats = {"recording": Recording(P, 0, it, mlp.model_of(layers),
                                    np.array([len(i) for i in batch]), hyper, {}),
             "sizes": np.array(epoch_bytes, np.float64), "N": int(data.n_train)}
    result = run_result("dgc", schedule(P, stats), setup,
                        mlp.accuracy(final, data.X_test, data.y_test), total_bytes, messages, it,
                        hyper, dropped_fraction=dropped, extra=extra,
                        metadata={"train_samples": int(data.n_train)}, diverged_at=bad)
    return result


def measure(trace):
    """Per warm-up stage (epoch) and layer, the mean bytes of a recorded DGC run's
    messages, and the training samples an epoch has (metadata ``train_samples``).

    Examples
    --------
    >>> m = measure(run(workers=2, epochs=1).trace)
    >>> m["sizes"].shape, m["N"]
    ((1, 2), 120)
    """
    r = recording(trace)
    L = len(r.model0.layers)
    comp = np.flatnonzero(tag_mask(trace, "compress", COMPUTE))
    layer_of = np.full(trace.num_ops, -1, np.int64)
    if len(comp):
        key = trace.iteration[comp].astype(np.int64) * trace.ranks + trace.rank[comp]
        order = np.argsort(key, kind="stable")
        ks = key[order]
        first = np.searchsorted(ks, ks, "left")
        layer_of[comp[order]] = np.arange(len(comp)) - first
    msg = np.flatnonzero(tag_mask(trace, "allgather"))
    N = train_samples(r.md)
    spe0 = steps_per_epoch(N, r.P0, r.batch0)
    E = max(1, math.ceil(r.n_rec / spe0))
    sizes = np.zeros((E, L))
    if len(msg):
        layer = layer_of[trace.dep_idx[trace.dep_ptr[msg]]]
        e = trace.iteration[msg] // spe0
        tot = np.bincount(e * L + layer, weights=trace.size[msg], minlength=E * L)
        cnt = np.bincount(e * L + layer, minlength=E * L)
        sizes = (tot / np.maximum(cnt, 1)).reshape(E, L)
    return {"recording": r, "sizes": sizes, "N": N}


def _layer_bytes(c, stats, epoch):
    """Bytes of each unit's message in an epoch of the plan ``c``."""
    if c.model is c.rec.model0 and epoch < len(stats["sizes"]):
        return stats["sizes"][epoch]
    # A stage the recording did not reach, or another model: the warm-up schedule itself.
    s = warmup_sparsity(epoch, int(c.rec.hyper.get("warmup_epochs", 4)),
                        float(c.rec.hyper.get("final_sparsity", 0.999)))
    return SPARSE_BYTES_PER_VALUE * np.array(values_per_layer(c.model.unit_params.tolist(), s),
                                             float)


def recorded_epoch(rec, N):
    """Steps of one epoch of the recorded run: ``ceil(ceil(N / P0) / b0)``.

    ``P0`` and ``b0`` are the recording's workers and batch per worker (the
    largest worker's batch: a live run's batches may differ by worker).

    Parameters
    ----------
    rec : workloads.plan.measure.Recording
    N : int
        Training samples.

    Examples
    --------
    Digits (1,437 training samples) recorded at P0 = 4 with a batch of 8:
    ``ceil(360 / 8) = 45`` steps per epoch.

    >>> from workloads.plan.measure import Recording
    >>> recorded_epoch(Recording(4, 0, 45, mlp.model_of((64, 16, 10)), 8, {}, {}), 1437)
    45
    """
    return steps_per_epoch(N, rec.P0, int(np.max(rec.batch0)))


def schedule(P, stats, servers=None, iterations=None, batch_size=None, model=None,
             start=0):
    """DGC with ``P`` workers: every worker sends each layer's top-k to every other
    (after the layer's :func:`compress_flops`), then takes its step
    (:func:`step_flops`).

    The run's iteration ``i`` (``start`` + its index in the trace) takes the message
    sizes of warm-up stage ``i // E``, where ``E`` is the steps of one epoch *of the
    recorded run* (:func:`recorded_epoch`: ``ceil(ceil(N / P0) / b0)`` for N training
    samples, the recording's P0 workers and batch b0), at every P and batch: the same
    iteration index is the same training progress (the same number of steps, hence
    of sparsity updates, taken by the recorded run), and the warm-up lasts
    ``warmup_epochs * E`` iterations whatever the P projected to. (Counting epochs at
    P instead, ``i // steps(P)``, would shorten the warm-up as P grows: at P = 64 and
    a batch of 64 on digits every iteration is an epoch and three iterations span
    three warm-up stages.) A stage the recording reached takes its recorded sizes,
    any other :func:`warmup_sparsity`. A live run is its own recording: its
    epochs are its own.

    Parameters
    ----------
    P : int
    stats : dict
        From :func:`measure`.
    servers : None or 0
    iterations, batch_size : int, optional
    model : workloads.mlp.Model, optional
    start : int, optional
        The run's iteration the trace begins at (:class:`workloads.plan.measure.Plan`).

    Returns
    -------
    netsim.Trace

    Examples
    --------
    >>> t = schedule(16, measure(run(workers=2, epochs=1).trace), iterations=1)
    >>> t.num_messages == 16 * 15 * 2
    True
    """
    c = plan(P, stats["recording"], SERVERS, servers, iterations, batch_size, model, start)
    P, model = c.P, c.model
    L = len(model.layers)
    W = np.arange(P)
    spe = recorded_epoch(c.rec, stats["N"])
    # Message order of the recorder: per worker, per layer, to every other worker ascending.
    src = np.repeat(W, L * (P - 1))
    lay = np.tile(np.repeat(np.arange(L), P - 1), P)
    o = np.tile(np.arange(P - 1), P * L)
    dst = o + (o >= src)
    b = Frontier(P)
    for it in range(c.iterations):
        sizes = _layer_bytes(c, stats, (c.start + it) // spe)
        bwd = b.forward_backward(W, model, c.batch, it)
        comp = np.empty((L, P), np.int64)
        for l in range(L):
            comp[l] = b.compute(W, compress_flops(model.unit_params[l]), it, "compress",
                                one(bwd[l]))
        b.send(src, dst, sizes[lay], it, "allgather", one(comp[lay, src]))
        K = sizes.sum() / SPARSE_BYTES_PER_VALUE
        deps = merge(b.frontier(W), (np.full(P, L, np.int64), comp.T.ravel()))
        b.compute(W, step_flops(model.params, P, K), it, "update", deps)
    return finish(b.build(), c, SERVERS)


def phases(trace):
    """DGC's warm-up (:mod:`workloads.plan.phases`): the epochs of growing sparsity, one stage
    each, in iterations of the recorded run.

    The warm-up ends with the first epoch at the final sparsity (epoch
    ``warmup_epochs``, or earlier when a stage already reaches it); an epoch is
    :func:`recorded_epoch` steps at every P (see :func:`schedule`). After it
    every iteration sends the same top-k sets: alike.

    Parameters
    ----------
    trace : netsim.Trace
        A DGC recording, or a projection of one (its ``projection`` metadata gives
        the recording's P and batch).

    Returns
    -------
    workloads.plan.phases.Phases

    Examples
    --------
    Iris (120 training samples) at P0 = 4 with a batch of 8: 4 steps per epoch,
    four warm-up epochs.

    >>> p = phases(run(workers=4, epochs=1).trace)
    >>> p.warmup, p.stages, p.period, p.alike
    (16, (0, 4, 8, 12), 1, True)
    """
    md = trace.metadata
    hyper = md.get("hyper") or {}
    proj = md.get("projection") or {}
    warm = int(hyper.get("warmup_epochs", 4))
    final = float(hyper.get("final_sparsity", 0.999))
    P0 = int(proj.get("from_workers", md["workers"]))
    b0 = int(proj.get("from_batch_size", hyper.get("batch_size", 1)))
    E = steps_per_epoch(train_samples(md), P0, b0)
    epochs = next((e for e in range(warm) if warmup_sparsity(e, warm, final) >= final), warm)
    return Phases(warmup=epochs * E, stages=tuple(range(0, epochs * E, E)), alike=True,
                  what=(f"DGC's sparsity warm-up, {epochs} epochs of {E} recorded iterations: "
                        f"density 25 %, 6.25 %, ..., then {1 - final:.3g}"))


def closed_form(trace, alpha, beta, device_flops=None):
    """Alpha-beta closed form of one DGC iteration: a direct allgather of sparse sets.

    Every host link carries the worker's ``(P - 1)`` sparse sets, ``m`` bytes
    in all (the most any worker sends in the iteration):
    :func:`netsim.costmodel.hockney` ``alpha + m beta``, plus the compute
    (:func:`workloads.plan.closed.terms`).

    Parameters
    ----------
    trace : Trace
        A recording or schedule of DGC.
    alpha : float
        Latency of a message, seconds.
    beta : float
        Seconds per byte.
    device_flops : float, optional
        FLOP/s of the compute ops (default: the trace's metadata).

    Returns
    -------
    dict
        ``compute``, ``server``, ``communication``, ``time`` (seconds per
        iteration) and ``formula``.

    Examples
    --------
    Worker 0 sends its sets in three messages of 100 bytes, worker 1 in
    two: ``m`` is 300 bytes.

    >>> from netsim import TraceBuilder
    >>> b = TraceBuilder(2, metadata={"workers": 2})
    >>> for _ in range(3): _ = b.message(0, 1, 100)
    >>> for _ in range(2): _ = b.message(1, 0, 100)
    >>> cf = closed_form(b.build(), 1e-6, 1e-9)
    >>> abs(cf["communication"] - (1e-6 + 300 * 1e-9)) < 1e-18
    True
    """
    niter = max(trace.num_iterations, 1)
    msg = trace.is_message
    sent = per_iteration(trace.size[msg], trace.rank[msg], trace.iteration[msg],
                         worker_mask(trace), trace.ranks, niter, np.max)
    comm = np.array([costmodel.hockney(x, alpha, beta) if x > 0 else 0.0 for x in sent])
    return terms(trace, comm, device_flops,
                 "compute + alpha + (P - 1) m beta (direct allgather of sparse sets)")
