"""RingTMP: the model is partitioned across P nodes in a ring; activations travel
between nodes instead of parameters.

Every step the ring trains on the same global batch as P data-parallel workers
of ``batch_size`` each (the union of their mini-batches), so a run sees exactly
the data of :mod:`workloads.paradigms.ps_sync` with the same seed. Every node reads the
step's input rows and labels itself (a data loader per node, no message).
Two partitionings:

``layer`` (pipeline)
    Node ``k`` owns a run of consecutive dense layers (``numpy.array_split`` of
    the layers into P runs). Node ``k`` sends its output activations
    (``B x width`` float32) to node ``k + 1``; the last node computes the loss and
    the activation gradients travel back, node ``k`` to ``k - 1``. With
    ``microbatches=m`` the batch is cut into m pieces that flow through the
    pipeline one after another (GPipe: all forwards, then all backwards;
    gradients accumulate); the link from node P-1 back to node 0 carries nothing.
    Needs at least P layers.

``neuron`` (tensor parallelism with ring collectives)
    Node ``k`` owns slice ``k`` (``numpy.array_split``) of every layer's output
    neurons: those columns of ``W`` and entries of ``b``. Forward, layer by
    layer: every node computes its slice of the layer's output from the full
    input, then a ring allgather (P-1 steps, each node passing the slice it
    received last to its right neighbour) gives every node the full output, the
    next layer's input. The logits are allgathered too, so every node computes
    the loss gradient. Backward: node ``k`` computes its slice's weight
    gradients and its partial input gradient ``delta_k @ W_k.T``; a ring
    reduce-scatter (P-1 steps, each node adding its partial to the running sum
    it passes on) leaves node ``k`` with the full input gradient of its own
    neurons of the layer below. Needs every layer to have at least P neurons.

Either way each node updates only its own parameters (momentum SGD). The
messages carry the activations and activation gradients actually computed;
their size is ``4 * rows * columns`` bytes. :func:`studies.claims.ringtmp_vs_ps.compare`
runs RingTMP next to ps-sync and single on the same data over several seeds.
"""

import numpy as np

from netsim.trace.core import COMPUTE

from workloads import mlp
from workloads.errors import PartitionError, ProjectionError, WorkloadError
from workloads.option_ranges import check_option
from workloads.plan.frontier import Frontier, cols, merge, one, pipeline, rows
from workloads.plan.closed import terms
from workloads.plan.measure import Recording, finish, plan, recording, tag_mask
from workloads.paradigms.ps import shard_bounds
from workloads.recorder import V100_FP32_FLOPS, Recorder, bytes_per_value, run_result
from workloads.paradigms.ringsteps import step_layer, step_neuron
from workloads.training import check_workers, epochs_of, prepare, worker_batches

__all__ = ["run", "closed_form", "partition_layers", "partition_neurons", "DEFAULT_WIDTH",
           "DEFAULT_LAYER_HIDDEN", "DESCRIPTION", "OPTIONS",
           "schedule", "measure", "SERVERS"]

#: No servers (see :func:`workloads.plan.measure.plan`).
SERVERS = "none"

DESCRIPTION = ("model partitioned across a ring of nodes (by layer or by neuron); "
               "activations travel instead of parameters.")
OPTIONS = {
    "epochs": "passes over the training set (in steps of workers * batch_size samples)",
    "seed": "seed of the initial weights, shards and mini-batch order",
    "partition": "'layer' (consecutive layers per node) or 'neuron' (a slice of every layer)",
    "hidden": "hidden-layer widths; default (16, 16, 16) for 'layer', (16,) for 'neuron', "
              "whatever the number of workers",
    "deepen": "'layer' only: one hidden layer of 16 per node, so the model deepens with P",
    "batch_size": "samples per step per (virtual) worker; the ring's batch is workers * batch_size",
    "microbatches": "pieces the batch is cut into, flowing one after another",
    "lr": "learning rate",
    "momentum": "SGD momentum",
    "device_flops": "device throughput in FLOP/s for the compute ops",
    "data_path": "directory of the MNIST IDX files",
}

PARTITIONS = ("layer", "neuron")

#: Width of every hidden layer of the default model (see :func:`run`'s ``hidden``).
DEFAULT_WIDTH = 16

#: Hidden widths of the layer partition's default model, whatever P: four dense layers,
#: enough for the default 4 nodes. The model changes with P only when asked (``deepen``).
DEFAULT_LAYER_HIDDEN = (DEFAULT_WIDTH,) * 3


def partition_layers(layers, nodes):
    """Dense layers of each node for a layer-wise partition: consecutive runs.

    Parameters
    ----------
    layers : sequence of int
        Widths, input to output.
    nodes : int
        Ring nodes.

    Returns
    -------
    list of range
        ``owned[k]`` are the layer indices of node ``k``.

    Raises
    ------
    PartitionError
        If a node would own no layer.

    Examples
    --------
    >>> partition_layers((4, 16, 16, 16, 3), 3)
    [range(0, 2), range(2, 3), range(3, 4)]
    >>> partition_layers((4, 16, 3), 3)
    Traceback (most recent call last):
    ...
    workloads.errors.PartitionError: layer-wise partition of 2 dense layers over 3 ring nodes leaves node 2 without a layer; use at least 3 layers (e.g. more hidden layers), deepen=True or fewer workers
    """
    L = len(mlp.layer_shapes(layers))
    if L < nodes:
        raise PartitionError(f"layer-wise partition of {L} dense layers over {nodes} ring nodes "
                             f"leaves node {L} without a layer; use at least {nodes} layers "
                             "(e.g. more hidden layers), deepen=True or fewer workers")
    return [range(int(c[0]), int(c[-1]) + 1) for c in np.array_split(np.arange(L), nodes)]


def partition_neurons(layers, nodes):
    """Neuron slice of each node in every layer for a neuron-wise partition.

    Parameters
    ----------
    layers : sequence of int
        Widths, input to output.
    nodes : int
        Ring nodes.

    Returns
    -------
    list of list of ndarray
        ``bounds[l]`` has ``nodes + 1`` boundaries: node ``k`` owns output
        neurons ``bounds[l][k]:bounds[l][k + 1]`` of layer ``l``.

    Raises
    ------
    PartitionError
        If a layer has fewer output neurons than nodes.

    Examples
    --------
    >>> [b.tolist() for b in partition_neurons((4, 6, 3), 3)]
    [[0, 2, 4, 6], [0, 1, 2, 3]]
    >>> partition_neurons((4, 16, 3), 4)
    Traceback (most recent call last):
    ...
    workloads.errors.PartitionError: neuron-wise partition over 4 ring nodes leaves node 3 without a neuron in layer 1 (3 output neurons); every layer needs at least 4 neurons
    """
    out = []
    for l, (_, o) in enumerate(mlp.layer_shapes(layers)):
        if o < nodes:
            raise PartitionError(f"neuron-wise partition over {nodes} ring nodes leaves node {o} "
                                 f"without a neuron in layer {l} ({o} output neurons); every "
                                 f"layer needs at least {nodes} neurons")
        out.append(shard_bounds(o, nodes))  # numpy.array_split's sizes
    return out


def run(dataset="iris", workers=4, epochs=30, seed=0, partition="layer", hidden=None,
        deepen=False, batch_size=8, microbatches=1, lr=0.05, momentum=0.9,
        device_flops=V100_FP32_FLOPS, data_path=None, progress=None):
    """Train a model partitioned across a ring of ``workers`` nodes; record activations.

    Parameters
    ----------
    dataset : str or Dataset
    workers : int
        Ring nodes (ranks ``0..P-1``; node ``k`` sends forward to ``k + 1 mod P``).
    epochs : int
        Passes over the training set, in steps of ``workers * batch_size``
        samples (the steps of ps-sync with the same arguments).
    seed : int
    partition : {"layer", "neuron"}
    hidden : sequence of int, optional
        Hidden widths. Default: :data:`DEFAULT_LAYER_HIDDEN` ``(16, 16, 16)``
        for ``layer`` (up to 4 nodes), ``(16,)`` for ``neuron``: the same
        model at every P.
    deepen : bool
        ``layer`` only, instead of ``hidden``: ``(16,) * (workers - 1)``, one
        dense layer per node, so the model deepens with P (also when projected).
    batch_size : int
        Per virtual worker: the ring's batch is ``workers * batch_size``.
    microbatches : int
        Pieces of the batch flowing one after another.
    lr, momentum : float
    device_flops : float
    data_path : str, optional
    progress : callable, optional
        Called as ``progress(epochs_done, epochs)`` after each epoch (progress bars).

    Returns
    -------
    RunResult
        ``extra``: ``partition``, ``bytes_per_epoch``, ``owned`` (``[first, stop)``
        layers per node, or per layer the neuron bounds), ``params_per_node``,
        ``test_loss``.

    Raises
    ------
    PartitionError
        If the partition leaves a node without a layer or without a neuron.

    Examples
    --------
    >>> r = run(workers=2, epochs=1, partition="layer")
    >>> r.trace.ranks, r.iterations, r.messages
    (2, 8, 16)
    >>> run(workers=4, partition="neuron")
    Traceback (most recent call last):
    ...
    workloads.errors.PartitionError: neuron-wise partition over 4 ring nodes leaves node 3 without a neuron in layer 1 (3 output neurons); every layer needs at least 4 neurons
    """
    check_option("partition", partition, "ringtmp")
    check_workers(workers)
    check_option("microbatches", microbatches)
    if deepen and (hidden is not None or partition != "layer"):
        raise WorkloadError("deepen=True gives the layer partition one hidden layer per node; "
                            f"it takes no hidden widths (got {hidden!r}) and no "
                            f"partition={partition!r}")
    if hidden is None:
        hidden = ((DEFAULT_WIDTH,) * (workers - 1) if deepen else DEFAULT_LAYER_HIDDEN) \
            if partition == "layer" else (DEFAULT_WIDTH,)
    widths = (hidden,) if isinstance(hidden, int) else hidden
    if partition == "layer" and isinstance(widths, (list, tuple)) and all(
            isinstance(w, int) and w >= 1 for w in widths):
        # the layer count alone decides it: refused before the data is loaded (the input
        # and output widths, 1 here, come from the data and do not change the count)
        partition_layers((1, *widths, 1), workers)
    setup = prepare(dataset, workers, seed, hidden, data_path, epochs=epochs, lr=lr,
                    momentum=momentum)
    data, layers, params = setup.data, setup.layers, setup.params
    shapes = mlp.layer_shapes(layers)
    if partition == "layer":
        split = partition_layers(layers, workers)
        step = step_layer
        owned_info = [[r.start, r.stop] for r in split]
        offsets = mlp.layer_offsets(layers)  # node k's layers are consecutive
        n_own = [int(offsets[r.stop] - offsets[r.start]) for r in split]
    else:
        split = partition_neurons(layers, workers)
        step = step_neuron
        owned_info = [b.tolist() for b in split]
        # Node k owns columns bl[k]:bl[k+1] of every W (in values each) and of every b.
        n_own = [sum((bl[k + 1] - bl[k]) * (i + 1) for bl, (i, _) in zip(split, shapes))
                 for k in range(workers)]
    velocity = mlp.zeros_like(params)
    # The layer partition counts what it sends and gets its trace from schedule(); the
    # neuron partition (which schedule() does not cover) records op by op.
    rec = Recorder(workers) if partition == "neuron" else None
    sent = {}
    it = 0
    for _ in epochs_of(range(epochs), epochs, progress):
        for batch in worker_batches(setup.shards, batch_size, setup.rng):
            idx = np.concatenate(batch)
            grads = mlp.zeros_like(params)
            step(rec or sent, params, grads, split, layers, data.X_train[idx],
                 data.y_train[idx], it, microbatches)
            for k in range(workers if rec else 0):
                rec.compute(k, mlp.update_flops(n_own[k]), iteration=it, tag="update")
            mlp.sgd_momentum_step(params, grads, velocity, lr, momentum)
            it += 1
    hyper = dict(epochs=epochs, partition=partition, hidden=hidden, deepen=deepen,
                 batch_size=batch_size,
                 microbatches=microbatches, lr=lr, momentum=momentum, device_flops=device_flops)
    accuracy = mlp.accuracy(params, data.X_test, data.y_test)
    total = rec.total_bytes if rec else sent.get("bytes", 0)
    extra = {"partition": partition, "owned": owned_info, "params_per_node": n_own,
             "bytes_per_epoch": total / max(epochs, 1),
             "test_loss": mlp.loss(params, data.X_test, data.y_test)}
    # For workloads.plan.projection: with deepen, one hidden layer per node, so the model's
    # depth grows with the number of nodes (traces of old versions say "default_hidden").
    meta = {"default_hidden": bool(deepen)}
    if rec:
        result = rec.result("ringtmp", setup, accuracy, it, hyper, extra=extra, metadata=meta)
    else:
        stats = {"recording": Recording(workers, 0, it, mlp.model_of(layers),
                                        np.array([len(i) for i in batch]), hyper, {}),
                 "bpv": bytes_per_value(sent)}
        result = run_result("ringtmp", schedule(workers, stats), setup, accuracy, total,
                            sent.get("messages", 0), it, hyper, extra=extra, metadata=meta)
    return result


def measure(trace):
    """Bytes per activation value of a recorded layer-partitioned run: its bytes over
    the activation values its messages carry (``2 x`` the values leaving every node
    but the last, per sample of the ring batch ``P0 x batch``, per iteration).

    Raises
    ------
    ProjectionError
        For a neuron-partitioned run (every layer would need at least P neurons).

    Examples
    --------
    >>> measure(run(workers=2, epochs=1).trace)["bpv"]
    4.0
    """
    r = recording(trace)
    if r.hyper.get("partition", "layer") != "layer":
        raise ProjectionError("ringtmp with partition='neuron' cannot be projected: every "
                              "layer would need at least P neurons; record a layer-partitioned "
                              "run (partition='layer')")
    bpv = float(r.md.get("bytes_per_value", mlp.BYTES_PER_VALUE))
    if r.P0 > 1 and trace.num_messages:
        owned = np.array_split(np.arange(len(r.model0.layers)), r.P0)
        act = r.model0.unit_activations
        w_out = np.array([act[o[-1]] for o in owned], np.float64)
        bpv = float(trace.total_bytes / (r.n_rec * r.P0 * r.batch0 * 2 * w_out[:-1].sum()))
    return {"recording": r, "bpv": bpv}


def schedule(P, stats, servers=None, iterations=None, batch_size=None, model=None,
             start=0):
    """The layer-partitioned ring of ``P`` nodes: ring batch ``P x batch``, so every
    activation grows with P. The recorded model (or ``model``) is cut into P runs of
    layers (P <= layers); only a recording made with ``deepen=True``
    (``default_hidden`` in the metadata) gets one hidden layer per node, its depth
    growing with P.

    Every step: micro-batch by micro-batch, node k computes its layers and sends
    its activations to k + 1; then backward in reverse, each node sending the
    gradient of its input to k - 1; then every node's update of its layers. A
    node's sends to one neighbour share one send queue (queue ``2 k`` forward,
    ``2 k + 1`` backward): its micro-batches leave one after another, as over
    one connection, not side by side.

    Parameters
    ----------
    P : int
    stats : dict
        From :func:`measure` (bytes per activation value).
    servers : None or 0
    iterations, batch_size : int, optional
    model : workloads.mlp.Model, optional
    start : int, optional
        The run's iteration the trace begins at (:class:`workloads.plan.measure.Plan`).

    Returns
    -------
    netsim.Trace

    Raises
    ------
    ProjectionError
        When a node would have no layer, or microbatches exceed the ring batch.

    Examples
    --------
    >>> t = schedule(12, measure(run(workers=4, epochs=1, deepen=True).trace), iterations=1)
    >>> t.metadata["layers"] == [4] + [16] * 11 + [3], t.num_messages
    (True, 22)
    """
    rec = stats["recording"]
    grown = None
    if model is None and rec.md.get("default_hidden") and \
            rec.hyper.get("partition", "layer") == "layer":
        layers = [int(w) for w in rec.md["layers"]]
        width = layers[1] if len(layers) > 2 else DEFAULT_WIDTH
        grown = [layers[0]] + [width] * (P - 1) + [layers[-1]]
        model = mlp.model_of(grown)
    c = plan(P, rec, SERVERS, servers, iterations, batch_size, model, start)
    P, model = c.P, c.model
    L = len(model.layers)
    if L < P:
        raise ProjectionError(f"ringtmp: the layer partition of {model.name} ({L} layers) "
                              f"over {P} ring nodes leaves a node without a layer; project to "
                              f"P <= {L}, give a deeper model (hidden=...), or record with "
                              "deepen=True (one layer per node, depth growing with P)")
    m = int(c.rec.hyper.get("microbatches", 1))
    B = int(np.sum(np.broadcast_to(c.batch, (P,))))     # the ring batch
    if m > B:
        raise ProjectionError(f"ringtmp: {m} microbatches exceed the ring batch of {B} samples")
    owned = np.array_split(np.arange(L), P)
    unit_flops, act, unit_params = model.unit_flops, model.unit_activations, model.unit_params
    fwd = np.array([unit_flops[o].sum() for o in owned])
    params = np.array([unit_params[o].sum() for o in owned], np.float64)
    w_out = np.array([act[o[-1]] for o in owned], np.float64)
    rows_ = np.array([len(x) for x in np.array_split(np.arange(B), m)], np.float64)
    G = 2 * P - 1                 # ops of one micro-batch in one direction
    j = np.repeat(np.arange(m), P)
    k = np.tile(np.arange(P), m)
    nodes = np.arange(P)
    b = Frontier(P)
    for it in range(c.iterations):
        # Forward, in program order: micro-batch j, node k computes (F) and sends its
        # activations to k + 1 (A, right after F). F waits for the node's previous op
        # (its frontier at the start of the step for j = 0) and for A of node k - 1.
        F = b.n + j * G + 2 * k
        fdeps = merge(rows(b.frontier(nodes), k, j == 0),
                      cols(np.where(j > 0, F - G, -1), np.where(k > 0, F - 1, -1)))
        pipeline(b, it, F - b.n, k, fdeps, fwd[k] * rows_[j], k < P - 1, k + 1,
                  w_out[k] * rows_[j] * stats["bpv"], "forward", "activation", queue=2 * k)
        last_f = F[j == m - 1]
        # Backward: micro-batches and nodes in reverse; node k computes (Bk) and sends the
        # gradient of its input to k - 1 (D). Bk waits for the node's previous op and for
        # D of node k + 1 (laid out just before it).
        jj, kk = m - 1 - j, P - 1 - k
        Bk = b.n + jj * G + 2 * kk
        bdeps = cols(np.where(j < m - 1, Bk - G, last_f[k]), np.where(k < P - 1, Bk - 1, -1))
        pipeline(b, it, Bk - b.n, k, bdeps, 2 * fwd[k] * rows_[j], k > 0, k - 1,
                  w_out[np.maximum(k - 1, 0)] * rows_[j] * stats["bpv"], "backward",
                  "activation-grad", queue=2 * k + 1)
        b.compute(nodes, mlp.update_flops(params), it, "update", one(Bk[j == 0]))
    return finish(b.build(), c, SERVERS, layers=grown)


def _per_rank(trace, mask, values, niter):
    """Per rank, the sum of ``values`` over the ops in ``mask``, per iteration."""
    return np.bincount(trace.rank[mask], weights=values[mask], minlength=trace.ranks) / niter


def closed_form(trace, alpha, beta, device_flops=None):
    """Alpha-beta closed form of a RingTMP iteration (the poster's ring): its critical path.

    Layer partition, node ``k`` computing ``F_k`` forward and ``B_k`` backward per
    micro-batch and sending ``a_k`` bytes forward (and back) per micro-batch, ``m``
    micro-batches: the forward pass is the flow shop of stages ``F_0, (alpha +
    a_0 beta), F_1, ..., F_{P-1}``, ``sum(stages) + (m - 1) max(stages)``; the
    backward pass likewise (GPipe's bubble, Huang et al. 2019); then node 0's ``U_0``:

        T = sum_k (F_k + B_k) + 2 sum_{k<P-1} (alpha + a_k beta)
            + (m - 1) (slowest forward stage + slowest backward stage) + U_0

    exact for ``m = 1`` when no two messages share a link (each message alone
    on the critical path); for ``m > 1`` an upper bound when a message is the
    slowest stage (messages of successive micro-batches share its link and
    overlap their latencies). Neuron partition: the busiest node's compute plus
    its ring steps, each ``alpha + s beta`` for the slice ``s`` it passes on,
    exact when every layer's width divides by P. The ``(m - 1) max`` term counts
    as computation or communication as its stage is.

    Parameters
    ----------
    trace : Trace
        A RingTMP recording or schedule.
    alpha : float
        Latency of a message, seconds.
    beta : float
        Seconds per byte.
    device_flops : float, optional
        FLOP/s of the compute ops (default: the trace's metadata).

    Returns
    -------
    dict
        ``compute``, ``server`` (0), ``communication``, ``time`` (seconds per
        iteration) and ``formula``.

    Examples
    --------
    Two nodes, one micro-batch: F = 1 s and 2 s, B = 2 s and 4 s, 1,000 bytes
    each way, node 0's update 0.5 s: 9.5 s of compute and 2 (alpha + 1000 beta).

    >>> from netsim import TraceBuilder
    >>> b = TraceBuilder(2, metadata={"workers": 2, "hyper": {"partition": "layer"}})
    >>> f0 = b.compute(0, seconds=1.0, tag="forward"); a = b.message(0, 1, 1000, deps=[f0],
    ...                                                                   tag="activation")
    >>> f1 = b.compute(1, seconds=2.0, deps=[a], tag="forward")
    >>> b1 = b.compute(1, seconds=4.0, deps=[f1], tag="backward")
    >>> d = b.message(1, 0, 1000, deps=[b1], tag="activation-grad")
    >>> b0 = b.compute(0, seconds=2.0, deps=[d], tag="backward")
    >>> _ = b.compute(0, seconds=0.5, deps=[b0], tag="update")
    >>> cf = closed_form(b.build(), 1e-6, 1e-9)
    >>> cf["compute"], abs(cf["communication"] - 2 * (1e-6 + 1e-6)) < 1e-18
    (9.5, True)
    """
    hyper = trace.metadata.get("hyper", {})
    niter = max(trace.num_iterations, 1)
    msg = trace.is_message
    hop = np.where(msg, alpha + trace.size * beta, 0.0)
    if hyper.get("partition", "layer") != "layer":
        comm = np.full(niter, _per_rank(trace, msg, hop, niter).max() if msg.any() else 0.0)
        return terms(trace, comm, device_flops,
                     "busiest node's compute + its ring steps (alpha + slice beta each)")
    m = int(hyper.get("microbatches", 1))
    P = trace.ranks
    sec = trace.compute_seconds(device_flops)
    comp = trace.kind == COMPUTE
    F = _per_rank(trace, comp & tag_mask(trace, "forward", COMPUTE), sec, niter) / m
    B = _per_rank(trace, comp & tag_mask(trace, "backward", COMPUTE), sec, niter) / m
    U0 = _per_rank(trace, comp & tag_mask(trace, "update", COMPUTE), sec, niter)[0]
    A = _per_rank(trace, tag_mask(trace, "activation"), hop, niter)[:P - 1] / m
    D = _per_rank(trace, tag_mask(trace, "activation-grad"), hop, niter)[1:] / m
    compute = float(F.sum() + B.sum()) + float(U0)
    communication = float(A.sum() + D.sum())
    for work, links in ((F, A), (B, D)):
        # The flow shop's (m - 1) passes of its slowest stage, a compute or a message.
        if m > 1 and links.size and links.max() > work.max():
            communication += (m - 1) * float(links.max())
        elif m > 1:
            compute += (m - 1) * float(work.max())
    return {"compute": compute, "server": 0.0, "communication": communication,
            "time": compute + communication,
            "formula": "pipeline: sum of stage computes + 2 sum (alpha + a_k beta) "
                       "+ (m - 1) slowest stages + node 0's update"}
