"""Synchronous data parallelism with gradients combined by an allreduce (BSP-SGD).

Every step each worker computes the gradients of its mini-batch (forward, then
backward layer by layer), the workers allreduce the flat float32 gradient
vector (``4 * n_params`` bytes, one fused bucket), and every worker applies the
same momentum SGD step with the average. Numerically the allreduce computes
the average of the workers' gradients, so it is computed directly with numpy;
the trace holds the chosen collective's message pattern for a buffer of the
true gradient size:

========== =========================================================== =========
name       algorithm                                                   messages
========== =========================================================== =========
``ring``   ring reduce-scatter + allgather (Patarasuk & Yuan 2009)     2P(P-1)
``mst``    binomial-tree reduce to rank 0, then binomial broadcast     2(P-1)
``be``     Rabenseifner: recursive-halving reduce-scatter +            2P log2 P
           recursive-doubling allgather (bidirectional exchange)       (P = 2^k)
``lp``     linear pipeline along ranks 0..P-1, ``segments`` pieces     2(P-1)k
========== =========================================================== =========

The trace keeps each allreduce as one collective op (:mod:`netsim.trace.collop`)
of the gradient bytes; the communication library expands it when the trace is
replayed (:mod:`netsim.comm.library`): MPICH's schedule named by ``collective``
(the table), or, on GPU machines, NCCL's own plan. ``ring``, the default,
lets the library choose (MPICH's default is the ring); ``mst``, ``be`` and
``lp`` exist in MPICH only, so they run as MPICH's schedules on any machine.
Each of them carries ``2 (P - 1)`` times the gradient bytes in total. Chunks
are whole float32 values, cut as MPICH and NCCL cut them: a 524-byte gradient
(131 values) over 8 ranks is 3 chunks of 17 values (68 B) and 5 of 16 (64 B),
never 65.5 B (:func:`netsim.comm.collectives.schedule.split`). The
message patterns are :mod:`netsim.comm.collectives`' (MPICH's schedules; for
non-power-of-two P, ``be`` folds the extra ranks into partners first).
Iterations are composed with :func:`netsim.trace.ops.concat` and
:func:`netsim.trace.ops.repeat`: compute ops, then the collective, then the update.

``overlap`` (:mod:`workloads.overlap`) lets the gradient leave in pieces during
the backward pass: one collective per layer (``layerwise``), per DDP bucket
(``bucketed``, ``bucket_bytes``) or per chunk of ``partition_bytes`` with the
priority of its layer (``priority``). Each piece's collective starts on a rank
when the backward op that completes the piece is done there; each piece has
its own update op (4 FLOPs per value) once it has arrived, and the next
forward op of a layer waits only for the updates of the pieces it touches.
``none`` (the default) is the one fused bucket after the whole backward pass.
"""

import numpy as np

from netsim import costmodel
from netsim.comm import mpich
from netsim.trace.core import TraceBuilder
from netsim.trace.ops import concat, repeat

from workloads import mlp
from workloads.plan.closed import Asymptotic, terms
from workloads.option_ranges import check_option
from workloads.plan.frontier import Frontier, cols, one_row
from workloads.overlap import DDP_BUCKET_BYTES, check_overlap, iterate, pieces, pieces_of
from workloads.plan.measure import Recording, finish, plan, recording
from workloads.recorder import V100_FP32_FLOPS, payload_bytes, run_result
from workloads.training import epochs_of, first_nonfinite, prepare, worker_batches

__all__ = ["run", "schedule", "measure", "closed_form", "ASYMPTOTIC", "COLLECTIVES", "collective_trace",
           "collective_op", "HINTS", "SERVERS", "DESCRIPTION", "OPTIONS"]

#: No servers (see :func:`workloads.plan.measure.plan`).
SERVERS = "none"

DESCRIPTION = "synchronous SGD, gradients averaged by an allreduce (ring, mst, be or lp)."

#: Worst-case cost per step with the ring (:func:`closed_form`).
ASYMPTOTIC = Asymptotic(
    "parallel SGD (BSP)", "ring allreduce",
    "2 (P - 1) alpha + 8 (P - 1) n beta / P", "C + 4 n / F",
    "O(n) bytes per link, O(P) latencies; O(C + n) compute",
    "Patarasuk & Yuan, JPDC 2009; Thakur, Rabenseifner & Gropp 2005")
OPTIONS = {
    "epochs": "passes over each worker's shard of the training set",
    "seed": "seed of the initial weights, shards and mini-batch order",
    "collective": "allreduce algorithm: ring, mst (binomial tree), be (Rabenseifner), lp (pipeline)",
    "segments": "pipeline segments of the lp collective",
    "hidden": "hidden-layer widths",
    "batch_size": "samples per step per worker",
    "lr": "learning rate",
    "momentum": "SGD momentum",
    "overlap": "none, layerwise, bucketed or priority: how the gradient leaves during backward",
    "bucket_bytes": "bucket size of overlap=bucketed (PyTorch DDP's 25 MiB)",
    "partition_bytes": "cut every gradient piece into chunks of at most this many bytes",
    "device_flops": "device throughput in FLOP/s for the compute ops",
    "data_path": "directory of the MNIST IDX files",
}

#: The algorithm hint of each collective (:mod:`netsim.trace.collop`): ring leaves the choice to
#: the library (MPICH's default is its ring).
HINTS = {"ring": None, "mst": "mst", "be": "be", "lp": "lp"}
#: The collectives this paradigm runs: the keys of :data:`HINTS`.
COLLECTIVES = tuple(HINTS)


def _check_collective(name, segments):
    check_option("collective", name, "allreduce")
    check_option("segments", segments)


def collective_trace(name, P, nbytes, segments=4, element=mlp.BYTES_PER_VALUE):
    """The message pattern of one allreduce of ``nbytes`` among ``P`` ranks.

    MPICH's schedule of the allreduce (:func:`netsim.comm.mpich.schedule`, what
    ``library="mpich"`` runs for :func:`collective_op`): ``ring_allreduce``,
    ``rabenseifner_allreduce``, ``pipeline_allreduce`` and, for ``mst``,
    ``binomial_reduce`` followed by ``binomial_broadcast``.

    Parameters
    ----------
    name : str
        ``ring``, ``mst``, ``be`` or ``lp``.
    P : int
    nbytes : float
        Bytes of the allreduced vector.
    segments : int, optional
        Pipeline segments of ``lp``.
    element : int or None, optional
        Bytes of one value (4, float32): chunks are whole values, the first
        ``n % parts`` one value larger; ``nbytes`` must then be a whole number
        of values. None cuts evenly.

    Raises
    ------
    WorkloadError
        For an unknown collective name (listing the known ones) or bad segments.
    netsim.TraceError
        For ``nbytes`` that is not a whole number of ``element``-byte values.

    Examples
    --------
    >>> t = collective_trace("ring", 4, 400)
    >>> t.num_messages, t.total_bytes
    (24, 2400.0)
    >>> collective_trace("mst", 4, 400).total_bytes
    2400.0
    >>> sorted(set(collective_trace("ring", 8, 524).size.tolist()))  # 131 float32 values
    [64.0, 68.0]
    """
    _check_collective(name, segments)
    return mpich.schedule("allreduce", HINTS[name] or "ring", P, nbytes, segments, element or 0)


def collective_op(name, P, nbytes, segments=4, element=mlp.BYTES_PER_VALUE, tag="allreduce"):
    """One allreduce of ``nbytes`` among ``P`` ranks as a collective op, expanded at replay.

    Under MPICH it replays as :func:`collective_trace` of the same arguments.

    Parameters
    ----------
    name : str
        ``ring``, ``mst``, ``be`` or ``lp`` (:data:`HINTS`).
    P : int
    nbytes : float
    segments : int, optional
        Pipeline segments of ``lp``.
    element : int or None, optional
        Bytes of one value: chunks are whole values (None: an even cut).
    tag : str, optional

    Examples
    --------
    >>> t = collective_op("lp", 4, 400)
    >>> t.num_collectives, t.specs.row(0).algorithm, t.specs.row(0).segments
    (1, 'lp', 4)
    """
    _check_collective(name, segments)
    b = TraceBuilder(P)
    b.collective("allreduce", range(P), nbytes, algorithm=HINTS[name],
                 segments=segments if name == "lp" else 0, element=element or 0, tag=tag)
    return b.build()


def run(dataset="iris", workers=4, epochs=30, seed=0, collective="ring", segments=4,
        hidden=(16,), batch_size=8, lr=0.05, momentum=0.9, device_flops=V100_FP32_FLOPS,
        data_path=None, progress=None, overlap="none", bucket_bytes=DDP_BUCKET_BYTES,
        partition_bytes=None):
    """Train with allreduce-based synchronous SGD; record compute and the collective.

    Parameters
    ----------
    dataset : str or Dataset
    workers : int
    epochs : int
    seed : int
    collective : {"ring", "mst", "be", "lp"}
    segments : int
        Pipeline segments (``lp`` only).
    hidden : sequence of int
    batch_size : int
    lr, momentum : float
    device_flops : float
    data_path : str, optional
    progress : callable, optional
        Called as ``progress(epochs_done, epochs)`` after each epoch (progress bars).
    overlap : {"none", "layerwise", "bucketed", "priority"}
        How the gradient leaves during the backward pass (:mod:`workloads.overlap`).
    bucket_bytes : float
        Bucket size of ``bucketed`` (default PyTorch DDP's 25 MiB).
    partition_bytes : float, optional
        Largest chunk of a gradient piece (tensor partitioning).

    Returns
    -------
    RunResult
        ``extra``: ``gradient_bytes`` (bytes of the allreduced vector),
        ``bytes_per_allreduce``, ``messages_per_allreduce``, ``test_loss``.

    Examples
    --------
    >>> r = run(workers=4, epochs=1, collective="ring")
    >>> r.extra["bytes_per_allreduce"] == 2 * 3 * r.extra["gradient_bytes"]
    True
    """
    _check_collective(collective, segments)
    overlap, bucket_bytes, partition_bytes = check_overlap(overlap, bucket_bytes,
                                                           partition_bytes)
    setup = prepare(dataset, workers, seed, hidden, data_path, epochs=epochs, lr=lr,
                    momentum=momentum)
    data, layers, params = setup.data, setup.layers, setup.params
    n = mlp.num_params(layers)
    velocity = mlp.zeros_like(params)
    steps = [b for _ in range(epochs) for b in worker_batches(setup.shards, batch_size, setup.rng)]
    gradient_bytes, bad = None, None
    for t, batch in enumerate(epochs_of(steps, epochs, progress)):
        flats = []
        for idx in batch:
            loss, grads = mlp.loss_and_grads(params, data.X_train[idx], data.y_train[idx])
            bad = first_nonfinite(bad, loss, t)
            flats.append(mlp.flatten(grads))
        gradient_bytes = payload_bytes(flats[0])
        avg = np.mean(np.stack(flats), axis=0, dtype=np.float32)
        mlp.sgd_momentum_step(params, mlp.unflatten(avg, layers), velocity, lr, momentum)
    # A worker's batch has the same size every step (worker_batches), though sizes may
    # differ between workers.
    hyper = dict(epochs=epochs, collective=collective, segments=segments, hidden=hidden,
                 batch_size=batch_size, lr=lr, momentum=momentum, device_flops=device_flops,
                 overlap=overlap, bucket_bytes=bucket_bytes, partition_bytes=partition_bytes)
    stats = {"recording": Recording(workers, 0, len(steps), mlp.model_of(layers),
                                    np.array([len(idx) for idx in steps[0]]), hyper, {}),
             "bpv": gradient_bytes / n}
    trace = schedule(workers, stats)
    # Own accounting: what one allreduce of each gradient piece moves, times the steps.
    pcs = pieces(mlp.model_of(layers), overlap, gradient_bytes / n, bucket_bytes,
                 partition_bytes)
    per_piece = [collective_trace(collective, workers, v * gradient_bytes // n, segments)
                 for v in pcs.values.tolist()]
    step = collective_trace(collective, workers, gradient_bytes, segments)
    total_bytes = sum(c.total_bytes for c in per_piece) * len(steps)
    messages = sum(c.num_messages for c in per_piece) * len(steps)
    extra = {"gradient_bytes": gradient_bytes, "bytes_per_allreduce": step.total_bytes,
             "messages_per_allreduce": step.num_messages,
             "test_loss": mlp.loss(params, data.X_test, data.y_test)}
    return run_result("allreduce", trace, setup, mlp.accuracy(params, data.X_test, data.y_test),
                      total_bytes, messages, len(steps), hyper, extra=extra, diverged_at=bad)


def measure(trace):
    """Bytes per parameter of the allreduced gradient: the bytes per iteration over the
    collective's bytes per gradient byte at the recorded P, over the parameters.

    Examples
    --------
    >>> measure(run(workers=4, epochs=1).trace)["bpv"]
    4.0
    """
    r = recording(trace)
    if trace.num_collectives:   # each collective op is one allreduce of its gradient bytes
        coll = trace.is_collective
        return {"recording": r, "bpv": float(trace.size[coll].sum()) / r.n_rec / r.model0.params}
    name, seg = r.hyper.get("collective", "ring"), int(r.hyper.get("segments", 4))
    # Bytes per gradient byte: every chunk travels the same number of times, so the
    # total is a whole multiple of the vector. An even cut of 1024 P k bytes gives
    # chunks of whole bytes (P < 2048), no rounding and no sub-byte message.
    probe = 1024.0 * r.P0 * seg
    unit = collective_trace(name, r.P0, probe, seg, element=None).total_bytes / probe
    if unit == 0 or not trace.num_messages:
        return {"recording": r, "bpv": float(r.md.get("bytes_per_value", mlp.BYTES_PER_VALUE))}
    return {"recording": r, "bpv": trace.total_bytes / r.n_rec / unit / r.model0.params}


def schedule(P, stats, servers=None, iterations=None, batch_size=None, model=None,
             start=0):
    """Synchronous SGD with an allreduce over ``P`` workers, repeated every iteration:
    each worker's forward and backward ops, then the collective op of the gradient
    (:func:`collective_op`; under MPICH :func:`collective_trace`, e.g. ring: 2 P (P - 1)
    messages of about 1/P of it, in whole float32 values) after each rank's last backward
    op, then every worker's update after its part of the collective.

    Parameters
    ----------
    P : int
    stats : dict
        From :func:`measure` (bytes per parameter of the gradient).
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
    >>> t = schedule(16, measure(run(workers=4, epochs=1).trace), iterations=2)
    >>> t.num_collectives, t.specs.row(0).group == tuple(range(16))
    (2, True)
    """
    c = plan(P, stats["recording"], SERVERS, servers, iterations, batch_size, model, start)
    P, model = c.P, c.model
    W = np.arange(P)
    nbytes = stats["bpv"] * model.params
    # Whole float32 values when the gradient is a whole number of them (a recorded one
    # is); else (a measured bytes-per-value that is not 4) an even cut.
    element = mlp.BYTES_PER_VALUE if nbytes % mlp.BYTES_PER_VALUE == 0 else None
    hyper = c.rec.hyper
    if hyper.get("overlap", "none") != "none" or hyper.get("partition_bytes"):
        return finish(_overlapped(c, stats["bpv"], element), c, SERVERS)
    C = collective_op(hyper.get("collective", "ring"), P, nbytes, int(hyper.get("segments", 4)),
                      element=element)
    work = Frontier(P)
    work.forward_backward(W, model, c.batch)
    upd = Frontier(P)
    upd.compute(W, mlp.update_flops(model.params), tag="update")
    return finish(repeat(concat(concat(work.build(), C), upd.build()), c.iterations), c,
                  SERVERS)


def _overlapped(c, bpv, element):
    """The schedule with the gradient in pieces (:mod:`workloads.overlap`): per iteration,
    each worker's forward ops (unit ``u``'s waiting for the updates of its pieces) and
    backward ops, then per piece its collective (each rank's part after the backward op
    completing the piece there) and every worker's update of the piece. DDP's buckets
    (``layerwise``, ``bucketed``) go on one NCCL stream: each piece's collective also
    waits for the one before it, as DDP issues them in order on one communicator; the
    ``priority`` mode's chunks are in flight together, the scheduler's priorities
    deciding (P3, ByteScheduler)."""
    P, hyper = c.P, c.rec.hyper
    name, seg = hyper.get("collective", "ring"), int(hyper.get("segments", 4))
    pcs = pieces_of(c.model, hyper, bpv)
    W, values = np.arange(P), pcs.values.tolist()
    b = Frontier(P)
    stream = hyper.get("overlap") != "priority"
    last = []

    def exchange(it, k, after):
        # The piece's collective waits for the backward op completing it on every rank and,
        # on one stream, for the piece before it.
        a = b.collective("allreduce", W, values[k] * bpv, it, "allreduce",
                         one_row(np.concatenate([after, last])), int(pcs.priority[k]),
                         HINTS[name], seg if name == "lp" else 0, element or 0)
        if stream:
            last[:] = [a]
        return b.compute(W, mlp.update_flops(values[k]), it, "update",
                         cols(after, np.full(P, a)))[:, None]

    return iterate(b, c, pcs, exchange)


_ALLREDUCE = {
    "ring": lambda P, n, a, b, k: costmodel.ring_allreduce(P, n, a, b),
    "mst": lambda P, n, a, b, k: (costmodel.binomial_reduce(P, n, a, b)
                                  + costmodel.binomial_broadcast(P, n, a, b)),
    "be": lambda P, n, a, b, k: costmodel.rabenseifner_allreduce(P, n, a, b),
    "lp": lambda P, n, a, b, k: costmodel.pipeline_allreduce(P, n, k, a, b),
}


def closed_form(trace, alpha, beta, device_flops=None):
    """Closed form of the ``allreduce`` paradigm: its collective's formula over the gradient.

    Ring, mst (binomial reduce + broadcast), be (Rabenseifner) or lp
    (pipeline) per ``metadata["hyper"]["collective"]``, of the ``n`` bytes
    each worker reduces (the iteration's bytes over ``2 (P - 1)``).

    Parameters
    ----------
    trace : Trace
        A recording or schedule of the ``allreduce`` paradigm.
    alpha : float
        Latency of a message, seconds.
    beta : float
        Seconds per byte.
    device_flops : float, optional
        FLOP/s of the compute ops (default: the trace's metadata).

    Returns
    -------
    dict
        As :func:`workloads.plan.closed.terms`.

    Examples
    --------
    >>> from netsim.comm.collectives import ring_allreduce
    >>> t = ring_allreduce(4, 4e6)  # no compute; 2 (P - 1) messages of n / P per rank
    >>> cf = closed_form(t, 1e-6, 1e-9)
    >>> abs(cf["time"] - (6e-6 + 1.5 * 4e6 * 1e-9)) < 1e-15
    True
    """
    meta = trace.metadata
    P = int(meta.get("workers", trace.ranks))
    hyper = meta.get("hyper", {})
    name = hyper.get("collective", "ring")
    k = int(hyper.get("segments", 4))
    niter = max(trace.num_iterations, 1)
    coll = trace.is_collective
    if coll.any():   # the gradient bytes of each iteration's allreduces
        n = np.bincount(trace.iteration[coll], weights=trace.size[coll], minlength=niter)
    else:
        msg = trace.is_message
        per_iter = np.bincount(trace.iteration[msg], weights=trace.size[msg], minlength=niter)
        n = per_iter / (2 * (P - 1)) if P > 1 else np.zeros(niter)
    comm = np.array([_ALLREDUCE[name](P, x, alpha, beta, k) if x > 0 else 0.0 for x in n])
    return terms(trace, comm, device_flops, f"compute + {name} allreduce of the gradient + update")
