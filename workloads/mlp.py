"""A small numpy multilayer perceptron: the model every paradigm trains for real.

The model is a list of parameter arrays ``[W0, b0, W1, b1, ...]`` (float32): layer
``l`` maps ``layers[l]`` inputs to ``layers[l + 1]`` outputs with
``z = a @ W_l + b_l``. Hidden layers use ReLU; the last layer gives logits for a
softmax cross-entropy loss averaged over the batch. Training is SGD with
(heavy-ball) momentum. Every function is plain and works on that list, so a
paradigm can slice, flatten, send and average parameters as ordinary arrays.

FLOP counts (used for compute ops in traces) come from the matrix shapes only:

* forward of a dense layer on a batch of ``B``: ``2 * B * in * out`` (one
  multiply and one add per weight and sample);
* backward: twice that, ``4 * B * in * out``: the weight gradient
  ``a.T @ delta`` and the input gradient ``delta @ W.T`` cost one forward
  each. The input gradient of the first layer is not needed, but the common
  convention (backward = 2 x forward, e.g. Kaplan et al. 2020, "Scaling Laws for
  Neural Language Models", section 2.1) counts it, and so do we;
* biases, ReLU and softmax are left out (they are O(B * out), small next to
  the matrix products);
* a momentum SGD update: 4 FLOPs per parameter (``v = m*v + g``; ``p -= lr*v``).

Parameters and messages are float32: 4 bytes per value (:data:`BYTES_PER_VALUE`).

The first layer also accepts a ``scipy.sparse`` input matrix (CSR), for the
sparse dataset of :func:`workloads.datasets.sparse`.
"""

import math
from typing import NamedTuple

import numpy as np

from netsim import checks

from workloads.errors import WorkloadError

__all__ = [
    "DTYPE",
    "BYTES_PER_VALUE",
    "layer_shapes",
    "num_params",
    "layer_offsets",
    "init_params",
    "zeros_like",
    "dense_forward",
    "dense_backward",
    "relu_backward",
    "forward",
    "softmax_cross_entropy",
    "backward",
    "loss_and_grads",
    "predict",
    "accuracy",
    "loss",
    "sgd_momentum_step",
    "forward_flops",
    "backward_flops",
    "update_flops",
    "flatten",
    "unflatten",
    "Layer",
    "Model",
    "model_of",
]

DTYPE = np.float32
BYTES_PER_VALUE = 4


def layer_shapes(layers):
    """The ``(in, out)`` shape of every dense layer.

    Parameters
    ----------
    layers : sequence of int
        Widths from the input to the output, e.g. ``(4, 16, 3)``.

    Returns
    -------
    list of tuple

    Raises
    ------
    WorkloadError
        For fewer than two widths or a width < 1.

    Examples
    --------
    >>> layer_shapes((4, 16, 3))
    [(4, 16), (16, 3)]
    """
    layers = tuple(layers)
    if len(layers) < 2:
        raise WorkloadError(f"a model needs at least an input and an output width, got {layers}")
    name = f"every layer width of {layers}"
    for w in layers:
        checks.check_int(w, name, error=WorkloadError)
    return [(int(a), int(b)) for a, b in zip(layers[:-1], layers[1:])]


def _layer_params(i, o):
    return i * o + o


def num_params(layers):
    """Number of parameters (weights and biases) of the model.

    Examples
    --------
    >>> num_params((4, 16, 3))
    131
    """
    return sum(_layer_params(i, o) for i, o in layer_shapes(layers))


def layer_offsets(layers):
    """Boundaries of each layer's ``(W, b)`` block in the flat parameter vector.

    Layer ``l`` occupies ``flat[offsets[l]:offsets[l + 1]]`` of :func:`flatten`.

    Examples
    --------
    >>> layer_offsets((4, 16, 3)).tolist()
    [0, 80, 131]
    """
    sizes = [_layer_params(i, o) for i, o in layer_shapes(layers)]
    return np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)


def init_params(layers, rng):
    """He-normal weights (std ``sqrt(2 / in)``) and zero biases, float32.

    Parameters
    ----------
    layers : sequence of int
        Widths from the input to the output.
    rng : numpy.random.Generator or int
        Randomness; an int seeds a new Generator.

    Returns
    -------
    list of ndarray
        ``[W0, b0, W1, b1, ...]``.

    Examples
    --------
    >>> p = init_params((4, 16, 3), 0)
    >>> [a.shape for a in p], p[0].dtype
    ([(4, 16), (16,), (16, 3), (3,)], dtype('float32'))
    """
    rng = np.random.default_rng(rng)
    params = []
    for i, o in layer_shapes(layers):
        params.append((rng.standard_normal((i, o)) * np.sqrt(2.0 / i)).astype(DTYPE))
        params.append(np.zeros(o, DTYPE))
    return params


def zeros_like(params):
    """A list of zero arrays shaped like ``params`` (e.g. momentum buffers).

    Examples
    --------
    >>> [float(v.sum()) for v in zeros_like(init_params((2, 2), 0))]
    [0.0, 0.0]
    """
    return [np.zeros_like(p) for p in params]


def _as_input(X):
    if hasattr(X, "tocsr"):  # scipy.sparse: keep it sparse, float32
        return X.tocsr().astype(DTYPE, copy=False)
    return np.asarray(X, dtype=DTYPE)


def dense_forward(W, b, a, relu=True):
    """Output of one dense layer, ``relu(a @ W + b)`` (or the bare logits), float32.

    :func:`forward` applies it layer by layer; a model-parallel paradigm
    applies it to a slice of a layer's columns (:mod:`workloads.paradigms.ringtmp`).

    Parameters
    ----------
    W, b : ndarray
        The layer's weights ``(in, out)`` and biases ``(out,)``, or a column slice.
    a : ndarray or scipy.sparse matrix
        The layer's input, ``(B, in)``.
    relu : bool
        Apply ReLU (hidden layers); False for the last layer's logits.

    Examples
    --------
    >>> dense_forward(np.eye(2, dtype=np.float32), np.zeros(2, np.float32),
    ...               np.array([[1.0, -2.0]], np.float32)).tolist()
    [[1.0, 0.0]]
    """
    z = np.asarray(a @ W) + b
    return np.maximum(z, 0, dtype=DTYPE) if relu else z.astype(DTYPE, copy=False)


def dense_backward(W, a, delta, input_grad=True):
    """Gradients of one dense layer ``z = a @ W + b`` from ``delta`` = dLoss/dz.

    Parameters
    ----------
    W : ndarray
        The layer's weights (or a column slice, with the matching ``delta`` columns).
    a : ndarray or scipy.sparse matrix
        The layer's input, from the forward pass.
    delta : ndarray
        Gradient of the loss with respect to the layer's output ``z``, float32.
    input_grad : bool
        Also compute the gradient with respect to the input (not needed for
        the first layer).

    Returns
    -------
    dW, db : ndarray
        float32 gradients of ``W`` and ``b``.
    da : ndarray or None
        ``delta @ W.T``, the gradient with respect to ``a`` (before the
        previous layer's ReLU: see :func:`relu_backward`); None if not asked.

    Examples
    --------
    >>> dW, db, da = dense_backward(np.ones((3, 2), np.float32), np.ones((4, 3), np.float32),
    ...                             np.ones((4, 2), np.float32))
    >>> dW.shape, db.tolist(), da.shape
    ((3, 2), [4.0, 4.0], (4, 3))
    """
    dW = np.asarray(a.T @ delta, dtype=DTYPE)
    db = delta.sum(axis=0, dtype=DTYPE)
    return dW, db, (delta @ W.T) if input_grad else None


def relu_backward(da, a):
    """Gradient through the ReLU whose output is ``a``: ``da`` where ``a > 0``, else 0.

    ``a = relu(z)`` is > 0 exactly where ``z`` > 0, so the output suffices.

    Parameters
    ----------
    da : numpy.ndarray
        Gradient with respect to the ReLU's output.
    a : numpy.ndarray
        The ReLU's output.

    Examples
    --------
    >>> relu_backward(np.array([1.0, 2.0], np.float32), np.array([0.0, 3.0], np.float32)).tolist()
    [0.0, 2.0]
    """
    return da * (a > 0)


def forward(params, X):
    """Logits and the input of every layer (kept for :func:`backward`).

    Parameters
    ----------
    params : list of ndarray
        ``[W0, b0, W1, b1, ...]``.
    X : ndarray or scipy.sparse matrix
        Batch of inputs, shape ``(B, layers[0])``.

    Returns
    -------
    logits : ndarray
        Shape ``(B, layers[-1])``.
    acts : list
        ``acts[l]`` is the input of layer ``l`` (``acts[0]`` is ``X``).

    Examples
    --------
    >>> p = init_params((4, 8, 3), 0)
    >>> logits, acts = forward(p, np.ones((5, 4)))
    >>> logits.shape, len(acts)
    ((5, 3), 2)
    """
    a = _as_input(X)
    acts = []
    L = len(params) // 2
    for l in range(L):
        acts.append(a)
        a = dense_forward(params[2 * l], params[2 * l + 1], a, relu=l < L - 1)
    return a, acts


def softmax_cross_entropy(logits, y):
    """Mean cross-entropy of softmax(logits) against integer labels, and its gradient.

    Parameters
    ----------
    logits : numpy.ndarray
        Scores, one row per sample.
    y : numpy.ndarray
        Class labels.

    Returns
    -------
    loss : float
    dlogits : ndarray
        Gradient of the mean loss with respect to the logits, float32.

    Examples
    --------
    >>> loss, d = softmax_cross_entropy(np.zeros((2, 4), np.float32), np.array([0, 3]))
    >>> round(loss, 4), d.shape
    (1.3863, (2, 4))
    """
    y = np.asarray(y)
    z = logits - logits.max(axis=1, keepdims=True)
    e = np.exp(z)
    s = e.sum(axis=1, keepdims=True)
    rows = np.arange(len(y))
    loss = float(np.mean(np.log(s[:, 0]) - z[rows, y]))
    d = e / s
    d[rows, y] -= 1.0
    d /= len(y)
    return loss, d.astype(DTYPE, copy=False)


def backward(params, acts, dlogits):
    """Gradients of the loss for every parameter, from the last layer to the first.

    Parameters
    ----------
    params : list of ndarray
    acts : list
        From :func:`forward`.
    dlogits : ndarray
        Gradient of the loss with respect to the logits.

    Returns
    -------
    list of ndarray
        ``[dW0, db0, dW1, db1, ...]``, float32, aligned with ``params``.

    Examples
    --------
    >>> p = init_params((4, 8, 3), 0)
    >>> logits, acts = forward(p, np.ones((5, 4)))
    >>> _, d = softmax_cross_entropy(logits, np.zeros(5, int))
    >>> [g.shape for g in backward(p, acts, d)]
    [(4, 8), (8,), (8, 3), (3,)]
    """
    L = len(params) // 2
    grads = [None] * (2 * L)
    delta = np.asarray(dlogits, DTYPE)
    for l in range(L - 1, -1, -1):
        grads[2 * l], grads[2 * l + 1], da = dense_backward(params[2 * l], acts[l], delta,
                                                            input_grad=l > 0)
        if l:
            delta = relu_backward(da, acts[l])
    return grads


def loss_and_grads(params, X, y):
    """Mean loss on ``(X, y)`` and its gradients (forward, then backward).

    Parameters
    ----------
    params : list of numpy.ndarray
        ``[W0, b0, W1, b1, ...]``.
    X : numpy.ndarray or scipy.sparse matrix
        Features, one row per sample.
    y : numpy.ndarray
        Class labels.

    Examples
    --------
    >>> p = init_params((4, 8, 3), 0)
    >>> loss, g = loss_and_grads(p, np.ones((5, 4)), np.zeros(5, int))
    >>> len(g) == len(p)
    True
    """
    logits, acts = forward(params, X)
    loss_value, d = softmax_cross_entropy(logits, y)
    return loss_value, backward(params, acts, d)


def predict(params, X):
    """Predicted class of every row of ``X``.

    Parameters
    ----------
    params : list of numpy.ndarray
        ``[W0, b0, W1, b1, ...]``.
    X : numpy.ndarray or scipy.sparse matrix
        Features, one row per sample.

    Examples
    --------
    >>> predict(init_params((4, 8, 3), 0), np.ones((2, 4))).shape
    (2,)
    """
    return forward(params, X)[0].argmax(axis=1)


def accuracy(params, X, y):
    """Fraction of rows of ``X`` whose predicted class is ``y``.

    Parameters
    ----------
    params : list of numpy.ndarray
        ``[W0, b0, W1, b1, ...]``.
    X : numpy.ndarray or scipy.sparse matrix
        Features, one row per sample.
    y : numpy.ndarray
        Class labels.

    Examples
    --------
    >>> p = init_params((4, 8, 3), 0)
    >>> 0.0 <= accuracy(p, np.ones((4, 4)), np.array([0, 1, 2, 0])) <= 1.0
    True
    """
    return float(np.mean(predict(params, X) == np.asarray(y)))


def loss(params, X, y):
    """Mean softmax cross-entropy of the model on ``(X, y)``.

    Parameters
    ----------
    params : list of numpy.ndarray
        ``[W0, b0, W1, b1, ...]``.
    X : numpy.ndarray or scipy.sparse matrix
        Features, one row per sample.
    y : numpy.ndarray
        Class labels.

    Examples
    --------
    >>> loss(init_params((4, 8, 3), 0), np.ones((2, 4)), np.array([0, 1])) > 0
    True
    """
    return softmax_cross_entropy(forward(params, X)[0], y)[0]


def sgd_momentum_step(params, grads, velocity, lr, momentum=0.9):
    """One SGD step with heavy-ball momentum, in place.

    ``v = momentum * v + g``; ``p -= lr * v``, array by array.

    Parameters
    ----------
    params, grads, velocity : list of ndarray
        Aligned lists; ``params`` and ``velocity`` are updated in place.
    lr : float
        Learning rate.
    momentum : float
        Momentum coefficient (0 gives plain SGD).

    Returns
    -------
    list of ndarray
        ``params`` (the same list), for convenience.

    Examples
    --------
    >>> p, v = [np.ones(2, np.float32)], [np.zeros(2, np.float32)]
    >>> sgd_momentum_step(p, [np.ones(2, np.float32)], v, lr=0.5)[0].tolist()
    [0.5, 0.5]
    """
    for p, g, v in zip(params, grads, velocity):
        if momentum:
            v *= DTYPE(momentum)
            v += g
            p -= DTYPE(lr) * v
        else:
            p -= DTYPE(lr) * g
    return params


def forward_flops(layers, batch):
    """FLOPs of each dense layer's forward pass on ``batch`` samples: ``2*B*in*out``.

    Parameters
    ----------
    layers : sequence of int
        Widths, input to output.
    batch : int
        Samples.

    Examples
    --------
    >>> forward_flops((4, 16, 3), 10).tolist()
    [1280.0, 960.0]
    """
    return model_of(layers).unit_flops * batch


def backward_flops(layers, batch):
    """FLOPs of each dense layer's backward pass: twice the forward, ``4*B*in*out``.

    Parameters
    ----------
    layers : sequence of int
        Widths, input to output.
    batch : int
        Samples.

    Examples
    --------
    >>> backward_flops((4, 16, 3), 10).tolist()
    [2560.0, 1920.0]
    """
    return model_of(layers).unit_backward_flops * batch


def update_flops(n_values):
    """FLOPs of a momentum SGD update of ``n_values`` parameters (4 per value).

    Examples
    --------
    >>> update_flops(131)
    524.0
    """
    return 4.0 * n_values


def flatten(arrays):
    """Concatenate arrays into one flat float32 vector (a copy).

    Examples
    --------
    >>> flatten([np.ones((2, 2)), np.zeros(3)]).tolist()
    [1.0, 1.0, 1.0, 1.0, 0.0, 0.0, 0.0]
    """
    return np.concatenate([np.asarray(a, DTYPE).ravel() for a in arrays])


def unflatten(vector, layers):
    """Split a flat vector into ``[W0, b0, W1, b1, ...]`` shaped for ``layers``.

    The arrays are copies, so the result never aliases ``vector``.

    Parameters
    ----------
    vector : numpy.ndarray
        Flat parameters.
    layers : sequence of int
        Widths, input to output.

    Raises
    ------
    WorkloadError
        If ``vector`` has the wrong length.

    Examples
    --------
    >>> p = init_params((4, 8, 3), 0)
    >>> q = unflatten(flatten(p), (4, 8, 3))
    >>> all(np.array_equal(a, b) for a, b in zip(p, q))
    True
    """
    vector = np.asarray(vector, DTYPE)
    n = num_params(layers)
    if vector.shape != (n,):
        raise WorkloadError(f"flat parameter vector has shape {vector.shape}, expected ({n},)")
    out, pos = [], 0
    for i, o in layer_shapes(layers):
        out.append(vector[pos:pos + i * o].reshape(i, o).copy())
        pos += i * o
        out.append(vector[pos:pos + o].copy())
        pos += o
    return out


class Layer(NamedTuple):
    """One unit of a model: ``params`` values, ``flops`` forward FLOPs per sample (2 per
    multiply-add) and ``activations`` output values per sample.

    Examples
    --------
    >>> model_of([4, 16, 3]).layers[0]  # 4 x 16 weights + 16 biases; 2 x 64 FLOPs
    Layer(name='dense0', params=80, flops=128.0, activations=16)
    """

    name: str
    params: int
    flops: float
    activations: int


class Model(NamedTuple):
    """A model as a sequence of :class:`Layer` units (dense layers, residual blocks,
    transformer blocks...) through which activations flow one after the other.

    The one model representation of the package: recording, every paradigm's
    ``schedule`` and :mod:`workloads.models` use it. Backward = 2 x forward
    (the convention of this module's docstring).

    Examples
    --------
    >>> m = model_of((4, 16, 3))
    >>> m.params, m.flops, len(m.layers), m.offsets.tolist()
    (131, 224.0, 2, [0, 80, 131])
    """

    name: str
    layers: tuple
    description: str = ""
    reference: str = ""
    published_params: float = math.nan
    published_flops: float = math.nan  # forward FLOPs per sample, 2 per multiply-add

    @property
    def params(self):
        """Parameters of the whole model."""
        return sum(l.params for l in self.layers)

    @property
    def flops(self):
        """Forward FLOPs per sample of the whole model."""
        return float(sum(l.flops for l in self.layers))

    @property
    def unit_params(self):
        """Parameters of each unit (int64 array)."""
        return np.array([l.params for l in self.layers], np.int64)

    @property
    def unit_flops(self):
        """Forward FLOPs per sample of each unit."""
        return np.array([float(l.flops) for l in self.layers])

    @property
    def unit_backward_flops(self):
        """Backward FLOPs per sample of each unit: twice the forward."""
        return 2.0 * self.unit_flops

    @property
    def unit_activations(self):
        """Output activation values per sample of each unit (int64 array)."""
        return np.array([l.activations for l in self.layers], np.int64)

    @property
    def offsets(self):
        """Boundaries of each unit's block in the flat parameter vector."""
        return np.concatenate([[0], np.cumsum(self.unit_params)]).astype(np.int64)

    def unit_of(self, position):
        """The unit holding each flat-parameter ``position`` (what a gradient slice
        starting there waits for).

        Examples
        --------
        >>> model_of((4, 16, 3)).unit_of([0, 79, 80, 130]).tolist()
        [0, 0, 1, 1]
        """
        return np.minimum(np.searchsorted(self.offsets, position, side="right") - 1,
                          len(self.layers) - 1)


def model_of(layers, name=None):
    """The model of widths ``layers`` (dense layer ``in x out``: ``in * out + out``
    parameters, ``2 * in * out`` forward FLOPs per sample, ``out`` activations).

    Parameters
    ----------
    layers : sequence of int
        Widths, input to output.
    name : str, optional
        The model's name (default from the widths).

    Examples
    --------
    >>> [l.params for l in model_of((4, 16, 3)).layers], model_of((4, 16, 3)).name
    ([80, 51], 'mlp-4-16-3')
    """
    units = tuple(Layer(f"dense{k}", _layer_params(i, o), 2.0 * i * o, o)
                  for k, (i, o) in enumerate(layer_shapes(layers)))
    return Model(name or "mlp-" + "-".join(str(w) for w in layers), units,
                 "multilayer perceptron of workloads.mlp")
