"""Recording: true byte counts, per-rank dependencies, run results.

P logical workers (ranks ``0..P-1``) and S servers (ranks ``P..P+S-1``) run in
one process. A paradigm trains for real and, for every value it sends, calls
:meth:`Recorder.send` with the payload itself; the recorder counts the payload's
true size (:func:`payload_bytes`), adds a message op to a
:class:`workloads.plan.frontier.Frontier` (the paradigms' block builder on
:class:`netsim.trace.blocks.BlockBuilder`, which every paradigm's ``schedule`` uses too) and so keeps per-rank dependency bookkeeping:

* each rank has a *frontier*: the ops its next op must wait for (its last
  compute op plus the messages it received since);
* :meth:`Recorder.compute` waits for the rank's frontier and becomes its new
  frontier (program order on a rank);
* :meth:`Recorder.send` is non-blocking: the message waits for the sender's
  frontier (or explicit ``deps``), and the receiver's next op waits for it;
* :meth:`Recorder.forward_backward` records a training step's compute with
  FLOPs from the matrix shapes: one forward op per layer from the first layer
  to the last, then one backward op per layer from the last layer to the first. It returns the backward op of every layer,
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

The training set-up (:func:`prepare`, :func:`worker_batches`,
:func:`epochs_of`) is :mod:`workloads.training`'s; it is re-exported here.

Typical use in a paradigm::

    setup = prepare(dataset, workers, seed, hidden)
    rec = Recorder(workers, servers)
    for it, batches in enumerate(...):
        bwd = rec.forward_backward(w, setup.layers, len(batch), it)
        rec.send(w, rec.server(0), grad_vector, deps=[bwd[0]], iteration=it, tag="push")
    return rec.result("my-paradigm", setup, accuracy=acc, iterations=n, hyper={...})
"""


import numpy as np

from netsim import checks

from workloads import mlp
from workloads.errors import WorkloadError
from workloads.plan.frontier import Frontier
from workloads.runresult import V100_FP32_FLOPS, RunResult, run_result
from workloads.training import Setup, check_workers, epochs_of, prepare, worker_batches

__all__ = [
    "V100_FP32_FLOPS",
    "SPARSE_BYTES_PER_VALUE",
    "RunResult",
    "Setup",
    "Recorder",
    "payload_bytes",
    "count_sent",
    "bytes_per_value",
    "sparse_payload",
    "grad_ready",
    "push_deps",
    "prepare",
    "worker_batches",
    "epochs_of",
    "run_result",
    "check_workers",
]


#: Bytes per value of a sparse payload (:func:`sparse_payload`): a float32 value
#: and its int32 index, against :data:`workloads.mlp.BYTES_PER_VALUE` (4) dense.
SPARSE_BYTES_PER_VALUE = mlp.BYTES_PER_VALUE + np.dtype(np.int32).itemsize


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


def count_sent(tally, payload):
    """Count a payload sent into ``tally`` (a dict of ``bytes``, ``values`` and ``messages``,
    created empty if missing) and return the payload: a run's own accounting of what it
    sends, from which its schedule's statistics follow (:func:`bytes_per_value`).

    Parameters
    ----------
    tally : dict
        Running totals, updated in place.
    payload : numpy.ndarray or sequence of numpy.ndarray
        What was sent.

    Examples
    --------
    >>> t = {}
    >>> _ = count_sent(t, np.zeros(10, np.float32)); _ = count_sent(t, np.zeros(5, np.float32))
    >>> t
    {'bytes': 60, 'values': 15, 'messages': 2}
    """
    tally["bytes"] = tally.get("bytes", 0) + payload_bytes(payload)
    tally["values"] = tally.get("values", 0) + int(np.size(payload))
    tally["messages"] = tally.get("messages", 0) + 1
    return payload


def bytes_per_value(tally, fallback=mlp.BYTES_PER_VALUE):
    """Bytes per value of the payloads counted in ``tally`` (``fallback`` if none).

    Parameters
    ----------
    tally : dict
        Of :func:`count_sent`.
    fallback : float
        Returned when nothing was counted.

    Examples
    --------
    >>> t = {}; _ = count_sent(t, np.zeros(3, np.float32))
    >>> bytes_per_value(t), bytes_per_value({})
    (4.0, 4)
    """
    return tally["bytes"] / tally["values"] if tally.get("values") else fallback


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
    offsets = mlp.layer_offsets(layers)
    layer = int(np.searchsorted(offsets, lo, side="right")) - 1
    return bwd_ops[min(layer, len(bwd_ops) - 1)]


def push_deps(bwd_ops, layers, lo, hi, overlap=True):
    """The ``deps`` of a message carrying the flat gradient slice ``[lo, hi)``.

    With ``overlap`` it waits only for the backward op that completes the slice
    (:func:`grad_ready`), so it may leave while earlier layers still
    back-propagate; without, ``None``: the sender's frontier, the whole backward.

    Parameters
    ----------
    bwd_ops : list of int
        Backward op id of each layer.
    layers : sequence of int
        Widths, input to output.
    lo : int
        First flat index of the slice.
    hi : int
        One past its last.
    overlap : bool
        Wait for the completing backward op only.

    Examples
    --------
    >>> push_deps([10, 11], (4, 16, 3), 80, 131), push_deps([10, 11], (4, 16, 3), 80, 131, False)
    ([11], None)
    """
    return [grad_ready(bwd_ops, layers, lo, hi)] if overlap else None


class Recorder:
    """One op at a time on a :class:`workloads.plan.frontier.Frontier`, with true byte counts.

    Parameters
    ----------
    workers : int
        Worker ranks ``0..workers-1``.
    servers : int
        Server ranks ``workers..workers+servers-1``.

    Attributes
    ----------
    builder : workloads.plan.frontier.Frontier
        The ops recorded so far (``builder.build()`` is the trace).
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
        self.servers = checks.check_int(servers, "servers", 0, error=WorkloadError)
        self.ranks = self.workers + self.servers
        self.builder = Frontier(self.ranks)
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
        return self.builder.frontier([rank])[1].tolist()

    @staticmethod
    def _deps(deps):
        return None if deps is None else (np.array([len(deps)]), np.asarray(deps, np.int64))

    def compute(self, rank, flops, deps=None, iteration=0, tag="compute"):
        """Record a compute op of ``flops`` FLOPs on ``rank``; return its op id.

        It waits for ``deps`` if given, else for the rank's frontier, and
        becomes the rank's new frontier.

        Parameters
        ----------
        rank : int
        flops : float
            FLOPs of the op.
        deps : list of int, optional
            Op ids it waits for (default: the rank's frontier).
        iteration : int
        tag : str

        Examples
        --------
        >>> rec = Recorder(1)
        >>> a = rec.compute(0, 1e9, tag="forward"); b = rec.compute(0, 2e9)
        >>> rec.builder.build().deps(b).tolist() == [a]
        True
        """
        if not flops > 0:
            raise WorkloadError(f"a compute op needs flops > 0, got {flops!r}")
        return int(self.builder.compute([rank], float(flops), iteration, tag,
                                        self._deps(deps))[0])

    def send(self, src, dst, payload, deps=None, iteration=0, tag=None):
        """Record a message carrying ``payload`` from ``src`` to ``dst``.

        Its size is :func:`payload_bytes` of the payload actually sent. It waits
        for ``deps`` if given, else for the sender's frontier; the receiver's
        next op waits for it. The sender does not wait (non-blocking send).

        Parameters
        ----------
        src : int
            Sender rank.
        dst : int
            Receiver rank.
        payload : numpy.ndarray or sequence of numpy.ndarray
            What is sent (its bytes are the message size).
        deps : list of int, optional
            Op ids it waits for (default: the sender's frontier).
        iteration : int
        tag : str, optional

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
        op = int(self.builder.send([src], dst, nbytes, iteration, tag, self._deps(deps))[0])
        self.total_bytes += nbytes
        self.messages += 1
        return op, nbytes

    def forward_backward(self, rank, layers, batch, iteration=0, deps=None):
        """Record one training step's compute on ``rank``: forward and backward layer by layer.

        One forward op per layer, first to last, with :func:`workloads.mlp.forward_flops`
        of its layer; then one backward op per layer, last to first, with
        :func:`workloads.mlp.backward_flops` of its layer (:meth:`Frontier.forward_backward
        <workloads.plan.frontier.Frontier.forward_backward>`).

        Parameters
        ----------
        rank : int
        layers : sequence of int
            Widths, input to output.
        batch : int
            Samples of the step.
        iteration : int
        deps : list of int, optional
            Op ids the forward waits for.

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
        ([3, 2], [1024.0, 768.0, 1536.0, 2048.0])
        """
        return self.builder.forward_backward([rank], layers, batch, iteration,
                                             self._deps(deps))[:, 0].tolist()

    def result(self, paradigm, setup, accuracy, iterations, hyper, dropped_fraction=None,
               extra=None, roles=None, metadata=None, diverged_at=None):
        """Build the trace and return the :class:`RunResult` (see :func:`run_result`).

        Parameters
        ----------
        paradigm : str
            CLI name of the paradigm.
        setup : workloads.training.Setup
        accuracy : float
            Test accuracy.
        iterations : int
            Iterations recorded.
        hyper : dict
            The paradigm's hyper-parameters.
        dropped_fraction : float, optional
            Share of values not sent.
        extra : dict, optional
            Paradigm-specific numbers.
        roles : list of str, optional
            Role of each rank.
        metadata : dict, optional
            More metadata.
        diverged_at : int, optional
            The first iteration with a non-finite training loss (see :func:`run_result`).

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
                          dropped_fraction=dropped_fraction, extra=extra, roles=roles,
                          metadata=metadata, diverged_at=diverged_at)
