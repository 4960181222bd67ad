"""The training steps of RingTMP's two partitions (:mod:`workloads.paradigms.ringtmp`).

:func:`step_layer` runs one pipelined step of the layer partition and counts what it
sends; :func:`step_neuron` runs one step of the neuron partition (ring allgathers
forward, ring reduce-scatters back) and records it op by op.
"""

import numpy as np

from workloads import mlp
from workloads.errors import WorkloadError
from workloads.recorder import count_sent

__all__ = ["microbatches", "step_layer", "step_neuron"]


def microbatches(rows, m):
    """Cut a batch's rows into ``m`` nearly equal micro-batches (``numpy.array_split``).

    Parameters
    ----------
    rows : numpy.ndarray
        Row indices of the batch.
    m : int
        Micro-batches.

    Raises
    ------
    WorkloadError
        If ``m`` exceeds the rows.

    Examples
    --------
    >>> [len(x) for x in microbatches(np.arange(5), 2)]
    [3, 2]
    """
    if m > len(rows):
        raise WorkloadError(f"microbatches ({m}) exceeds the batch of {len(rows)} samples")
    return np.array_split(rows, m)


def _ring_step(rec, ready, payloads, it, tag):
    """Node k sends ``payloads[k]`` to k + 1, waiting for op ``ready[k]``; return, per
    node, the message it receives (what its next ring step waits for)."""
    P = len(ready)
    ops = [rec.send(k, (k + 1) % P, payloads[k], deps=[ready[k]], iteration=it, tag=tag)[0]
           for k in range(P)]
    return [ops[(k - 1) % P] for k in range(P)]


def step_layer(sent, params, grads_acc, owned, layers, X, y, it, m):
    """One layer-wise step: forward/backward per micro-batch through the pipeline; every
    activation and gradient sent is counted into ``sent`` (the trace is
    :func:`workloads.paradigms.ringtmp.schedule`'s). Gradients accumulate into ``grads_acc``.

    Parameters
    ----------
    sent : dict
        Tally of :func:`workloads.recorder.count_sent`.
    params, grads_acc : list of numpy.ndarray
        The model's parameters and their gradient accumulators.
    owned : list of range
        Layers of each node (:func:`workloads.paradigms.ringtmp.partition_layers`).
    layers : tuple of int
    X, y : numpy.ndarray
        The step's batch.
    it : int
        Iteration (unused: the layer partition's trace is scheduled).
    m : int
        Micro-batches.

    Examples
    --------
    >>> from workloads import mlp
    >>> p = mlp.init_params((4, 8, 3), 0); g = mlp.zeros_like(p); sent = {}
    >>> step_layer(sent, p, g, [range(0, 1), range(1, 2)], (4, 8, 3), np.ones((6, 4)),
    ...            np.zeros(6, int), 0, 2)
    >>> sent["messages"], sent["bytes"]  # 2 micro-batches x (activation + gradient) x 3 x 8 x 4 B
    (4, 384)
    """
    P = len(owned)
    Lg = len(layers) - 1
    B = len(y)
    parts = microbatches(np.arange(B), m)
    acts = [[None] * P for _ in parts]   # acts[j][k]: inputs of node k's layers, micro-batch j
    deltas = [None] * len(parts)
    for j, rows in enumerate(parts):
        a = X[rows]
        for k in range(P):
            ins = []
            for l in owned[k]:
                ins.append(a)
                a = mlp.dense_forward(params[2 * l], params[2 * l + 1], a, relu=l < Lg - 1)
            acts[j][k] = ins
            if k < P - 1:
                count_sent(sent, a)
        _, d = mlp.softmax_cross_entropy(a, y[rows])
        deltas[j] = d * np.float32(len(rows) / B)  # mean over the whole batch
    for j in reversed(range(len(parts))):
        delta = deltas[j]
        for k in reversed(range(P)):
            for l, a_in in zip(reversed(owned[k]), reversed(acts[j][k])):
                dW, db, da = mlp.dense_backward(params[2 * l], a_in, delta, input_grad=l > 0)
                grads_acc[2 * l] += dW
                grads_acc[2 * l + 1] += db
                if l:
                    delta = mlp.relu_backward(da, a_in)
            if k > 0:
                count_sent(sent, delta)


def step_neuron(rec, params, grads_acc, bounds, layers, X, y, it, m):
    """One neuron-wise step: per layer a ring allgather forward, a ring reduce-scatter back;
    every message and compute op is recorded on ``rec``.

    Parameters
    ----------
    rec : workloads.recorder.Recorder
    params, grads_acc : list of numpy.ndarray
    bounds : list of numpy.ndarray
        Neuron slices (:func:`workloads.paradigms.ringtmp.partition_neurons`).
    layers : tuple of int
    X, y : numpy.ndarray
    it : int
        Iteration of the recorded ops.
    m : int
        Micro-batches.

    Examples
    --------
    >>> from workloads import mlp
    >>> from workloads.recorder import Recorder
    >>> p = mlp.init_params((4, 8, 4), 0); g = mlp.zeros_like(p); rec = Recorder(2)
    >>> halves = [np.array([0, 4, 8]), np.array([0, 2, 4])]  # each node half of each layer
    >>> step_neuron(rec, p, g, halves, (4, 8, 4), np.ones((6, 4)), np.zeros(6, int), 0, 1)
    >>> rec.messages  # 2 allgathers forward, 1 reduce-scatter back, 2 messages each
    6
    """
    P = len(bounds[0]) - 1
    shapes = mlp.layer_shapes(layers)
    Lg = len(shapes)
    B = len(y)
    for rows in microbatches(np.arange(B), m):
        a = X[rows]
        nb = len(rows)
        ins = []
        for l, (i, o) in enumerate(shapes):
            ins.append(a)
            W, b = params[2 * l], params[2 * l + 1]
            bl = bounds[l]
            pieces = [mlp.dense_forward(W[:, bl[k]:bl[k + 1]], b[bl[k]:bl[k + 1]], a,
                                        relu=l < Lg - 1) for k in range(P)]
            ready = [rec.compute(k, 2.0 * nb * i * (bl[k + 1] - bl[k]), iteration=it,
                                 tag="forward") for k in range(P)]
            # Ring allgather: in step s node k passes on the piece of node (k - s) mod P, as
            # soon as it has it (its compute, then what it received in step s - 1): the P
            # messages of a step travel at once.
            for s in range(P - 1):
                ready = _ring_step(rec, ready, [pieces[(k - s) % P] for k in range(P)], it,
                                   "activation")
            a = np.concatenate(pieces, axis=1)
        _, dlogits = mlp.softmax_cross_entropy(a, y[rows])
        dlogits = dlogits * np.float32(nb / B)
        bL = bounds[-1]
        delta = [dlogits[:, bL[k]:bL[k + 1]] for k in range(P)]  # node k's slice
        for l in reversed(range(Lg)):
            i, o = shapes[l]
            bl = bounds[l]
            W = params[2 * l]
            a_in = ins[l]
            partial, done = [], []  # node k's partial input gradient delta_k @ W_k.T
            for k in range(P):
                dW, db, da = mlp.dense_backward(W[:, bl[k]:bl[k + 1]], a_in, delta[k],
                                                input_grad=l > 0)
                grads_acc[2 * l][:, bl[k]:bl[k + 1]] += dW
                grads_acc[2 * l + 1][bl[k]:bl[k + 1]] += db
                partial.append(da)
                done.append(rec.compute(k, 4.0 * nb * i * (bl[k + 1] - bl[k]), iteration=it,
                                        tag="backward"))
            if l == 0:
                break
            # Partial input gradients, reduced around the ring: node k ends with the
            # full gradient of its own neurons of layer l - 1 (chunk k).
            cb = bounds[l - 1]
            run_sum = {}
            for s in range(P - 1):
                sent = []
                for k in range(P):
                    c = (k - s - 1) % P
                    piece = run_sum.get((k, c), partial[k][:, cb[c]:cb[c + 1]])
                    sent.append(((k + 1) % P, c, piece))
                done = _ring_step(rec, done, [p for _, _, p in sent], it, "activation-grad")
                for dst, c, piece in sent:
                    run_sum[(dst, c)] = (piece + partial[dst][:, cb[c]:cb[c + 1]]).astype(mlp.DTYPE)
            prev = ins[l]  # relu output of layer l - 1
            delta = []
            for k in range(P):
                full = run_sum.get((k, k), partial[k][:, cb[k]:cb[k + 1]])
                delta.append(mlp.relu_backward(full, prev[:, cb[k]:cb[k + 1]]))
