"""Recording helpers every paradigm uses: true byte counts, dependencies, run results.

P logical workers (ranks ``0..P-1``) and S servers (ranks ``P..P+S-1``) run in
one process. A paradigm trains for real and, for every value it sends, calls
:meth:`Recorder.send` with the payload itself; the recorder counts the payload's
true size (:func:`payload_bytes`), adds a message op to a
:class:`netsim.TraceBuilder` and keeps per-rank dependency bookkeeping:

* each rank has a *frontier*: the ops its next op must wait for (its last
  compute op plus the messages it received since);
* :meth:`Recorder.compute` waits for the rank's frontier and becomes its new
  frontier (program order on a rank);
* :meth:`Recorder.send` is non-blocking: the message waits for the sender's
  frontier (or explicit ``deps``), and the receiver's next op waits for it;
* :meth:`Recorder.forward_backward` records a training step's compute with
  FLOPs from the matrix shapes: one forward op, then one backward op per layer
  from the last layer to the first. It returns the backward op of every layer,
  so a paradigm that allows it can let layer ``l``'s gradient leave as soon as
  layer ``l``'s backward op is done, while layer ``l-1``'s backward still runs
  (:func:`grad_ready` finds the op for a slice of the flat gradient).

:func:`run_result` (or :meth:`Recorder.result`) turns the recording into the
:class:`RunResult` every paradigm returns and attaches the trace metadata. It
also checks that the byte and message totals it is given equal the trace's.
Through :meth:`Recorder.result` those totals are the recorder's counters,
updated by the same :meth:`Recorder.send` calls that add the messages, so the
check only catches messages added to ``Recorder.builder`` behind
:meth:`Recorder.send`'s back; a paradigm that builds its trace otherwise (e.g.
allreduce, one step's trace repeated) passes its own totals.

Typical use in a paradigm::

    setup = prepare(dataset, workers, seed, hidden)
    rec = Recorder(workers, servers)
    for it, batches in enumerate(...):
        bwd = rec.forward_backward(w, setup.layers, len(batch), it)
        rec.send(w, rec.server(0), grad_vector, deps=[bwd[0]], iteration=it, tag="push")
    return rec.result("my-paradigm", setup, accuracy=acc, iterations=n, hyper={...})
"""

import math
from dataclasses import dataclass, field

import numpy as np

from netsim.trace import Trace, TraceBuilder

from . import datasets as _datasets
from . import mlp as _mlp
from .errors import WorkloadError, check_int, check_number

__all__ = [
    "V100_FP32_FLOPS",
    "SPARSE_BYTES_PER_VALUE",
    "RunResult",
    "Setup",
    "Recorder",
    "payload_bytes",
    "sparse_payload",
    "grad_ready",
    "push_deps",
    "prepare",
    "worker_batches",
    "epochs_of",
    "run_result",
    "check_workers",
    "check_int",
    "check_number",
]

#: FP32 throughput of an NVIDIA Tesla V100 (SXM2): 15.7 TFLOP/s, from NVIDIA's
#: "NVIDIA Tesla V100 GPU Accelerator" datasheet. The default ``device_flops``
#: of recorded traces; every paradigm takes ``device_flops=`` to override it.
V100_FP32_FLOPS = 15.7e12

#: Bytes per value of a sparse payload (:func:`sparse_payload`): a float32 value
#: and its int32 index, against :data:`workloads.mlp.BYTES_PER_VALUE` (4) dense.
SPARSE_BYTES_PER_VALUE = _mlp.BYTES_PER_VALUE + np.dtype(np.int32).itemsize


@dataclass
class RunResult:
    """What every paradigm's ``run`` returns.

    Attributes
    ----------
    paradigm : str
        CLI name of the paradigm, e.g. ``"ps-sync"``.
    trace : netsim.Trace
        Every message and compute op of the run; ``trace.metadata`` says how it
        was produced (paradigm, dataset, workers, servers, layers, hyper,
        accuracy, seed, device_flops, ...).
    accuracy : float
        Test accuracy of the final model on the held-out split.
    total_bytes : int
        Bytes sent, from the paradigm's own payload accounting; equals
        ``trace.total_bytes`` (up to float rounding when a collective generator
        cuts a buffer into fractional-byte chunks, e.g. 524 bytes over 3 ranks).
    messages : int
        Messages sent; equals ``trace.num_messages``.
    iterations : int
        Training iterations (steps or rounds) recorded.
    dropped_fraction : float or None
        For paradigms that drop, filter or sparsify: fraction of values not sent.
    extra : dict
        Paradigm-specific numbers (e.g. staleness, test loss).
    """

    paradigm: str
    trace: Trace
    accuracy: float
    total_bytes: int
    messages: int
    iterations: int
    dropped_fraction: float | None = None
    extra: dict = field(default_factory=dict)

    def summary(self):
        """A one-line, human-readable summary.

        Examples
        --------
        >>> from netsim import TraceBuilder
        >>> RunResult("demo", TraceBuilder(1).build(), 0.9, 0, 0, 1).summary()
        'demo: accuracy 0.900, 0 bytes in 0 messages, 1 iterations'
        """
        s = (f"{self.paradigm}: accuracy {self.accuracy:.3f}, {self.total_bytes} bytes in "
             f"{self.messages} messages, {self.iterations} iterations")
        if self.dropped_fraction is not None:
            s += f", {self.dropped_fraction:.1%} of values not sent"
        return s


@dataclass
class Setup:
    """Everything a run prepares before training (see :func:`prepare`).

    Attributes
    ----------
    data : workloads.datasets.Dataset
    layers : tuple of int
        Model widths, input to output.
    rng : numpy.random.Generator
        The run's randomness (already used for the initial parameters and shards).
    params : list of ndarray
        Initial parameters (float32), the same for every worker.
    shards : list of ndarray
        Training-sample indices of each worker.
    dataset : str
    seed : int
    """

    data: object
    layers: tuple
    rng: np.random.Generator
    params: list
    shards: list
    dataset: str
    seed: int


def check_workers(workers, minimum=1):
    """Validate a worker count and return it as an int.

    Raises
    ------
    WorkloadError
        If ``workers`` is not an integer >= ``minimum``.

    Examples
    --------
    >>> check_workers(4)
    4
    >>> check_workers(0)
    Traceback (most recent call last):
    ...
    workloads.errors.WorkloadError: workers must be an integer >= 1, got 0
    """
    return check_int("workers", workers, minimum)


def prepare(dataset, workers, seed, hidden=(16,), data_path=None, dataset_options=None, *,
            epochs=None, lr=None, momentum=None):
    """Load the data, build the model and split the training set among workers.

    The run's Generator is ``numpy.random.default_rng(seed)``; it draws the
    initial parameters, then the shards, and is returned for the mini-batch
    order. The train/test split itself is fixed (independent of ``seed``).

    It also validates the training options every paradigm shares (those given),
    before loading any data, so that all paradigms check them alike.

    Parameters
    ----------
    dataset : str or Dataset
        A name for :func:`workloads.datasets.load`, or a loaded dataset.
    workers : int
        Number of data shards (>= 1).
    seed : int
    hidden : int or sequence of int
        Hidden-layer widths (an int alone is one layer); the model is
        ``(n_features, *hidden, n_classes)``.
    data_path : str, optional
        For ``mnist``.
    dataset_options : dict, optional
        Passed to :func:`workloads.datasets.load`.
    epochs : int, optional
        Checked to be an integer >= 1.
    lr : float, optional
        Learning rate, checked to be a finite number > 0.
    momentum : float, optional
        Checked to be a finite number >= 0.

    Returns
    -------
    Setup

    Raises
    ------
    WorkloadError
        For a bad worker count, hidden width, ``epochs``, ``lr`` or ``momentum``.

    Examples
    --------
    >>> s = prepare("iris", 4, seed=0)
    >>> s.layers, [len(x) for x in s.shards]
    ((4, 16, 3), [30, 30, 30, 30])
    >>> prepare("iris", 4, seed=0, hidden=(16.7,))
    Traceback (most recent call last):
    ...
    workloads.errors.WorkloadError: hidden width must be an integer >= 1, got 16.7
    """
    workers = check_workers(workers)
    if epochs is not None:
        check_int("epochs", epochs)
    if lr is not None:
        check_number("lr", lr, lo=0, strict=True)
    if momentum is not None:
        check_number("momentum", momentum, lo=0)
    hidden = (hidden,) if np.ndim(hidden) == 0 else tuple(hidden)
    hidden = tuple(check_int("hidden width", h) for h in hidden)
    if isinstance(dataset, _datasets.Dataset):
        data = dataset
    else:
        data = _datasets.load(dataset, path=data_path, **(dataset_options or {}))
    layers = (data.n_features, *hidden, data.n_classes)
    rng = np.random.default_rng(seed)
    params = _mlp.init_params(layers, rng)
    shard_list = _datasets.shards(data.n_train, workers, rng)
    return Setup(data, layers, rng, params, shard_list, data.name, seed)


def worker_batches(shards, batch_size, rng):
    """One epoch of per-worker mini-batches, step by step.

    Each worker shuffles its shard; every step gives each worker
    ``min(batch_size, len(shard))`` samples, taken cyclically from its shuffled
    shard, so all workers take the same number of equal-sized steps:
    ``ceil(max shard size / batch_size)`` per epoch.

    Returns
    -------
    list of list of ndarray
        ``batches[step][worker]`` are sample indices.

    Examples
    --------
    >>> b = worker_batches([np.arange(5), np.arange(5, 9)], 2, np.random.default_rng(0))
    >>> len(b), [len(x) for x in b[0]]
    (3, [2, 2])
    """
    check_int("batch_size", batch_size)
    perms = [rng.permutation(s) for s in shards]
    steps = max(math.ceil(len(s) / batch_size) for s in shards)
    out = []
    for t in range(steps):
        row = []
        for p in perms:
            b = min(batch_size, len(p))
            row.append(p[(t * b + np.arange(b)) % len(p)])
        out.append(row)
    return out


def epochs_of(steps, epochs, progress=None):
    """Iterate over ``steps`` (``epochs`` epochs' worth), reporting each finished epoch.

    ``progress(epochs_done, epochs)`` is called once per epoch, when the step
    that completes it has been processed (the loop body has run). ``steps`` is
    either ``range(epochs)`` or a flat list of every step of every epoch (equal
    steps per epoch; a step may also be a group of steps, such as ADMM's rounds).

    Parameters
    ----------
    steps : iterable
        What the training loop iterates over; needs ``len``.
    epochs : int
    progress : callable, optional
        ``progress(epochs_done, epochs)``; None iterates without reporting.

    Examples
    --------
    >>> seen = []
    >>> for step in epochs_of(list("abcdef"), 3, lambda e, n: seen.append((e, n))):
    ...     pass
    >>> seen
    [(1, 3), (2, 3), (3, 3)]
    """
    if progress is None:
        yield from steps
        return
    total = len(steps)
    reported = 0
    for i, step in enumerate(steps):
        yield step
        # The body has run for step i: report every epoch it completed.
        done = (i + 1) * epochs // total
        while reported < done:
            reported += 1
            progress(reported, epochs)


def payload_bytes(payload):
    """True size in bytes of what is sent.

    * a numpy array: ``array.nbytes`` (float32: 4 bytes per value; int32 index: 4);
    * a tuple or list of arrays (e.g. ``(values, indices)`` of a sparse
      encoding): the sum of their sizes;
    * a scipy.sparse matrix: its CSR arrays (``data``, ``indices``, ``indptr``).

    Raises
    ------
    WorkloadError
        For anything else: byte counts must come from a real payload.

    Examples
    --------
    >>> payload_bytes(np.zeros(10, np.float32))
    40
    >>> payload_bytes(sparse_payload(np.array([0, 3, 0, 5], np.float32)))
    16
    """
    if isinstance(payload, np.ndarray):
        return int(payload.nbytes)
    if hasattr(payload, "tocsr"):
        m = payload.tocsr()
        return int(m.data.nbytes + m.indices.nbytes + m.indptr.nbytes)
    if isinstance(payload, (tuple, list)) and payload:
        return sum(payload_bytes(p) for p in payload)
    raise WorkloadError(f"a payload must be a numpy array, a scipy.sparse matrix or a "
                        f"non-empty tuple of them, got {type(payload).__name__}")


def sparse_payload(vector, keep=None):
    """Encode a vector sparsely as ``(values float32, indices int32)``.

    Each entry sent costs :data:`SPARSE_BYTES_PER_VALUE` (8) bytes.

    Parameters
    ----------
    vector : ndarray
        Dense vector (flattened if not 1-d).
    keep : ndarray of bool or int, optional
        Which entries to send (a mask or index array); by default the non-zeros.

    Returns
    -------
    tuple of ndarray
        ``(values, indices)``.

    Examples
    --------
    >>> v, i = sparse_payload(np.array([0.0, 2.0, 0.0, -1.0]))
    >>> v.tolist(), i.tolist(), i.dtype
    ([2.0, -1.0], [1, 3], dtype('int32'))
    """
    vector = np.asarray(vector).ravel()
    if keep is None:
        idx = np.flatnonzero(vector)
    else:
        keep = np.asarray(keep)
        idx = np.flatnonzero(keep) if keep.dtype == bool else np.sort(keep.ravel())
    return vector[idx].astype(np.float32), idx.astype(np.int32)


def grad_ready(bwd_ops, layers, lo, hi):
    """The backward op after which the flat gradient slice ``[lo, hi)`` is complete.

    Backpropagation runs from the last layer to the first, so a slice is
    complete once the backward op of the lowest layer it touches is done.

    Parameters
    ----------
    bwd_ops : sequence of int
        Backward op of each layer (from :meth:`Recorder.forward_backward`).
    layers : sequence of int
        Model widths.
    lo, hi : int
        Slice of the flat parameter vector (:func:`workloads.mlp.flatten` order).

    Examples
    --------
    >>> grad_ready([10, 11], (4, 16, 3), 0, 131), grad_ready([10, 11], (4, 16, 3), 80, 131)
    (10, 11)
    """
    offsets = _mlp.layer_offsets(layers)
    layer = int(np.searchsorted(offsets, lo, side="right")) - 1
    return bwd_ops[min(layer, len(bwd_ops) - 1)]


def push_deps(bwd_ops, layers, lo, hi, overlap=True):
    """The ``deps`` of a message carrying the flat gradient slice ``[lo, hi)``.

    With ``overlap`` it waits only for the backward op that completes the slice
    (:func:`grad_ready`), so it may leave while earlier layers still
    back-propagate; without, ``None``: the sender's frontier, the whole backward.

    Examples
    --------
    >>> push_deps([10, 11], (4, 16, 3), 80, 131), push_deps([10, 11], (4, 16, 3), 80, 131, False)
    ([11], None)
    """
    return [grad_ready(bwd_ops, layers, lo, hi)] if overlap else None


class Recorder:
    """A :class:`netsim.TraceBuilder` with true byte counts and per-rank dependencies.

    Parameters
    ----------
    workers : int
        Worker ranks ``0..workers-1``.
    servers : int
        Server ranks ``workers..workers+servers-1``.

    Attributes
    ----------
    total_bytes : int
        Sum of :func:`payload_bytes` over every message sent.
    messages : int
        Number of messages sent.

    Examples
    --------
    >>> rec = Recorder(2, servers=1)
    >>> bwd = rec.forward_backward(0, (4, 8, 3), batch=5, iteration=0)
    >>> op, nbytes = rec.send(0, rec.server(0), np.zeros(67, np.float32), deps=[bwd[0]])
    >>> nbytes, rec.total_bytes, rec.messages, rec.last(2) == [op]
    (268, 268, 1, True)
    """

    def __init__(self, workers, servers=0):
        self.workers = check_workers(workers)
        self.servers = check_int("servers", servers, 0)
        self.ranks = self.workers + self.servers
        self.builder = TraceBuilder(self.ranks)
        self._frontier = [[] for _ in range(self.ranks)]
        self.total_bytes = 0
        self.messages = 0

    def server(self, s):
        """Rank of server ``s`` (servers come after the workers).

        Examples
        --------
        >>> Recorder(4, servers=2).server(1)
        5
        """
        if not 0 <= s < self.servers:
            raise WorkloadError(f"server {s} does not exist (there are {self.servers})")
        return self.workers + s

    def last(self, rank):
        """The ops the next op of ``rank`` would wait for (a copy).

        Examples
        --------
        >>> rec = Recorder(2)
        >>> c = rec.compute(0, 100)
        >>> rec.last(0) == [c], rec.last(1)
        (True, [])
        """
        return list(self._frontier[rank])

    def compute(self, rank, flops, deps=None, iteration=0, tag="compute"):
        """Record a compute op of ``flops`` FLOPs on ``rank``; return its op id.

        It waits for ``deps`` if given, else for the rank's frontier, and
        becomes the rank's new frontier.

        Examples
        --------
        >>> rec = Recorder(1)
        >>> a = rec.compute(0, 1e9, tag="forward"); b = rec.compute(0, 2e9)
        >>> rec.builder.build().deps(b).tolist() == [a]
        True
        """
        if not flops > 0:
            raise WorkloadError(f"a compute op needs flops > 0, got {flops!r}")
        op = self.builder.compute(rank, flops=float(flops),
                                  deps=self._frontier[rank] if deps is None else deps,
                                  iteration=iteration, tag=tag)
        self._frontier[rank] = [op]
        return op

    def send(self, src, dst, payload, deps=None, iteration=0, tag=None):
        """Record a message carrying ``payload`` from ``src`` to ``dst``.

        Its size is :func:`payload_bytes` of the payload actually sent. It waits
        for ``deps`` if given, else for the sender's frontier; the receiver's
        next op waits for it. The sender does not wait (non-blocking send).

        Returns
        -------
        op : int
            The message's op id.
        nbytes : int
            Its size in bytes.

        Examples
        --------
        >>> rec = Recorder(2)
        >>> op, nbytes = rec.send(0, 1, np.ones((8, 16), np.float32), tag="activation")
        >>> nbytes, rec.last(1) == [op]
        (512, True)
        """
        nbytes = payload_bytes(payload)
        op = self.builder.message(src, dst, nbytes,
                                  deps=list(self._frontier[src]) if deps is None else deps,
                                  iteration=iteration, tag=tag)
        self._frontier[dst].append(op)
        self.total_bytes += nbytes
        self.messages += 1
        return op, nbytes

    def forward_backward(self, rank, layers, batch, iteration=0, deps=None):
        """Record one training step's compute on ``rank``: forward, then backward layer by layer.

        The forward op has :func:`workloads.mlp.forward_flops` summed over
        layers; then one backward op per layer, from the last to the first, each
        with :func:`workloads.mlp.backward_flops` of its layer.

        Returns
        -------
        list of int
            ``ops[l]`` is the backward op of layer ``l``; the rank's frontier is
            ``ops[0]`` afterwards.

        Examples
        --------
        >>> rec = Recorder(1)
        >>> ops = rec.forward_backward(0, (4, 16, 3), batch=8)
        >>> t = rec.builder.build()
        >>> ops, t.flops.tolist()
        ([2, 1], [1792.0, 1536.0, 2048.0])
        """
        fwd = _mlp.forward_flops(layers, batch)
        bwd = _mlp.backward_flops(layers, batch)
        self.compute(rank, fwd.sum(), deps=deps, iteration=iteration, tag="forward")
        ops = [0] * len(bwd)
        for l in range(len(bwd) - 1, -1, -1):
            ops[l] = self.compute(rank, bwd[l], iteration=iteration, tag="backward")
        return ops

    def result(self, paradigm, setup, accuracy, iterations, hyper, dropped_fraction=None,
               extra=None, roles=None):
        """Build the trace and return the :class:`RunResult` (see :func:`run_result`).

        Examples
        --------
        >>> rec = Recorder(2)
        >>> _ = rec.send(0, 1, np.zeros(4, np.float32))
        >>> r = rec.result("demo", prepare("iris", 2, seed=0), accuracy=0.5, iterations=1,
        ...                hyper={"lr": 0.1})
        >>> r.total_bytes, r.messages, r.trace.metadata["hyper"]
        (16, 1, {'lr': 0.1})
        """
        return run_result(paradigm, self.builder.build(), setup, accuracy=accuracy,
                          total_bytes=self.total_bytes, messages=self.messages,
                          iterations=iterations, hyper=hyper, servers=self.servers,
                          dropped_fraction=dropped_fraction, extra=extra, roles=roles)


def _exact(x):
    """An int when the byte count is whole up to float rounding (collective generators
    may cut a buffer into fractional-byte chunks whose float sum is off by an ulp)."""
    x = float(x)
    r = round(x)
    return int(r) if abs(x - r) <= 1e-9 * max(1.0, abs(x)) else x


def run_result(paradigm, trace, setup, accuracy, total_bytes, messages, iterations, hyper,
               servers=0, dropped_fraction=None, extra=None, roles=None):
    """Attach metadata to ``trace`` and return the :class:`RunResult`.

    The trace metadata gets: ``paradigm``, ``dataset``, ``workers``, ``servers``,
    ``ranks``, ``roles`` (``"worker"``/``"server"`` per rank), ``layers``,
    ``hyper`` (the paradigm's hyper-parameters), ``accuracy``, ``seed``,
    ``iterations``, ``total_bytes``, ``messages``, ``bytes_per_value`` (4) and
    ``device_flops`` (FLOP/s, from ``hyper["device_flops"]`` if present).

    Raises
    ------
    RuntimeError
        If ``total_bytes`` or ``messages`` differs from the trace's totals
        (bytes beyond float rounding): a recording bug, never bad input.

    Examples
    --------
    >>> from netsim import TraceBuilder
    >>> b = TraceBuilder(2); _ = b.message(0, 1, 8)
    >>> s = prepare("iris", 2, seed=0)
    >>> r = run_result("demo", b.build(), s, accuracy=1.0, total_bytes=8, messages=1,
    ...                iterations=1, hyper={})
    >>> r.trace.metadata["paradigm"], r.trace.metadata["workers"], r.total_bytes
    ('demo', 2, 8)
    """
    if (not math.isclose(trace.total_bytes, total_bytes, rel_tol=1e-12, abs_tol=1e-9)
            or trace.num_messages != messages):
        raise RuntimeError(f"{paradigm}: own accounting ({total_bytes} bytes, {messages} messages) "
                           f"differs from the trace ({trace.total_bytes} bytes, "
                           f"{trace.num_messages} messages)")
    hyper = {k: (list(v) if isinstance(v, tuple) else v) for k, v in dict(hyper).items()}
    rate = hyper.get("device_flops", V100_FP32_FLOPS)
    workers = trace.ranks - servers
    trace.metadata.update({
        "paradigm": paradigm,
        "dataset": setup.dataset,
        "workers": int(workers),
        "servers": int(servers),
        "ranks": int(trace.ranks),
        "roles": list(roles) if roles is not None else ["worker"] * workers + ["server"] * servers,
        "layers": [int(w) for w in setup.layers],
        "hyper": hyper,
        "accuracy": float(accuracy),
        "seed": setup.seed,
        "iterations": int(iterations),
        "total_bytes": _exact(total_bytes),
        "messages": int(messages),
        "bytes_per_value": _mlp.BYTES_PER_VALUE,
        "device_flops": float(rate),
    })
    return RunResult(paradigm, trace, float(accuracy), _exact(total_bytes), int(messages),
                     int(iterations), dropped_fraction, dict(extra or {}))
