"""Overlapping communication with computation: buckets, tensor partitions, priorities.

A data-parallel step sends the gradient (or the new parameters) in *pieces*:
contiguous slices of the flat parameter vector (:func:`workloads.mlp.flatten`
order, the first layer first), each sent as soon as the backward op of the
lowest unit it touches is done, and each needed by the next forward op of every
unit it touches. The ``overlap`` option of :mod:`workloads.paradigms.ps_sync` and
:mod:`workloads.paradigms.allreduce` says how the gradient is cut:

============== ==============================================================
``none``       one piece, the whole gradient, after the whole backward pass;
               the next forward pass waits for all of it
``layerwise``  one piece per unit (layer), sent when its backward op is done;
               the next forward of unit ``u`` waits only for unit ``u``'s
``bucketed``   PyTorch DDP's gradient buckets: units in reverse order, a bucket
               closed once it holds ``bucket_bytes`` (:data:`DDP_BUCKET_BYTES`)
``priority``   P3 / ByteScheduler: one piece per unit, cut into chunks of at
               most ``partition_bytes``, each with the priority of its unit:
               the first unit (needed first by the next forward) the highest
============== ==============================================================

``partition_bytes`` cuts the pieces of any mode into chunks of whole values of
at most that many bytes (tensor partitioning). Priorities matter only in a
replay with ``sharing="priority"`` (:func:`netsim.simulate`); with max-min
sharing every piece is equal.

References: S. Li et al., "PyTorch Distributed: Experiences on Accelerating
Data Parallel Training", VLDB 2020 (gradient bucketing); A. Jayarajan et al.,
"Priority-based Parameter Propagation for Distributed DNN Training" (P3),
MLSys 2019; Y. Peng et al., "A Generic Communication Scheduler for Distributed
DNN Training Acceleration" (ByteScheduler), SOSP 2019.
"""

from typing import NamedTuple

import numpy as np

from netsim import checks

from workloads import mlp
from workloads.errors import WorkloadError
from workloads.plan.frontier import cols, merge, one

__all__ = ["OVERLAP", "DDP_BUCKET_BYTES", "Pieces", "check_overlap", "pieces", "pieces_of", "iterate", "unit_deps", "embed",
           "touching", "exposed_communication", "piece_segments"]

#: The modes of the ``overlap`` option.
OVERLAP = ("none", "layerwise", "bucketed", "priority")

#: PyTorch DDP's default bucket size: ``bucket_cap_mb=25`` of
#: ``torch.nn.parallel.DistributedDataParallel``, turned into bytes as
#: ``int(bucket_cap_mb * 1024 * 1024)`` (torch/nn/parallel/distributed.py). DDP's
#: smaller first bucket (``torch.distributed._DEFAULT_FIRST_BUCKET_BYTES``, 1 MiB) is
#: not modelled: every bucket here has the same cap.
DDP_BUCKET_BYTES = 25 * 1024 * 1024


class Pieces(NamedTuple):
    """The pieces of a step's gradient, in the order they are sent (last unit first).

    ``lo``, ``hi``: the flat slice ``[lo, hi)`` of each piece; ``ready``: the unit
    whose backward op completes it (the lowest it touches); ``priority``: its
    priority class (larger = more urgent; 0 unless ``overlap="priority"``).
    """

    lo: np.ndarray
    hi: np.ndarray
    ready: np.ndarray
    priority: np.ndarray

    @property
    def values(self):
        """Values of each piece."""
        return self.hi - self.lo


def check_overlap(overlap, bucket_bytes=DDP_BUCKET_BYTES, partition_bytes=None):
    """The ``overlap`` mode, bucket and partition sizes, checked.

    Parameters
    ----------
    overlap : str
        One of :data:`OVERLAP`.
    bucket_bytes : float
        Bucket size of ``bucketed`` (bytes, > 0).
    partition_bytes : float or None
        Largest chunk (bytes, > 0), or None for no partitioning.

    Raises
    ------
    WorkloadError
        Naming the bad value.

    Examples
    --------
    >>> check_overlap("bucketed")
    ('bucketed', 26214400.0, None)
    >>> check_overlap("fused")
    Traceback (most recent call last):
    ...
    workloads.errors.WorkloadError: unknown overlap 'fused'; known: none, layerwise, bucketed, priority
    """
    if overlap not in OVERLAP:
        raise WorkloadError(f"unknown overlap {overlap!r}; known: {', '.join(OVERLAP)}")
    bucket_bytes = checks.check_real(bucket_bytes, "bucket_bytes", lo=0, strict=True,
                                     error=WorkloadError)
    if partition_bytes is not None:
        partition_bytes = checks.check_real(partition_bytes, "partition_bytes", lo=0,
                                            strict=True, error=WorkloadError)
    return overlap, float(bucket_bytes), partition_bytes


def pieces(model, overlap="none", bytes_per_value=mlp.BYTES_PER_VALUE,
           bucket_bytes=DDP_BUCKET_BYTES, partition_bytes=None):
    """Cut a model's gradient into the pieces an ``overlap`` mode sends.

    Parameters
    ----------
    model : workloads.mlp.Model or sequence of int
        The model (or the widths of an MLP).
    overlap : str
        One of :data:`OVERLAP` (see the module docstring).
    bytes_per_value : float
        Bytes a value takes on the wire (4, float32).
    bucket_bytes : float
        Bucket size of ``bucketed``: a bucket takes units, last first, until it
        holds at least this many bytes (DDP's rule; a unit is never split).
    partition_bytes : float, optional
        Cut every piece into chunks of at most this many bytes (whole values, at
        least one); none if None.

    Returns
    -------
    Pieces

    Examples
    --------
    A 4-16-16-3 MLP: units of 80, 272 and 51 values.

    >>> p = pieces((4, 16, 16, 3), "layerwise")
    >>> p.lo.tolist(), p.hi.tolist(), p.ready.tolist()
    ([352, 80, 0], [403, 352, 80], [2, 1, 0])
    >>> pieces((4, 16, 16, 3), "bucketed", bucket_bytes=1200).values.tolist()  # 323 + 80
    [323, 80]
    >>> p = pieces((4, 16, 16, 3), "priority", partition_bytes=800)  # 200 values a chunk
    >>> p.values.tolist(), p.priority.tolist()
    ([51, 200, 72, 80], [0, 1, 1, 2])
    """
    model = model if isinstance(model, mlp.Model) else mlp.model_of(model)
    overlap, bucket_bytes, partition_bytes = check_overlap(overlap, bucket_bytes,
                                                           partition_bytes)
    off = model.offsets
    units = [u for u in range(len(model.layers) - 1, -1, -1) if off[u + 1] > off[u]]
    if overlap == "none":
        groups = [(0, int(off[-1]))]
    elif overlap == "bucketed":
        groups, hi = [], None
        for u in units:
            hi = int(off[u + 1]) if hi is None else hi
            if (hi - off[u]) * bytes_per_value >= bucket_bytes:
                groups.append((int(off[u]), hi))
                hi = None
        if hi is not None:
            groups.append((0, hi))
    else:
        groups = [(int(off[u]), int(off[u + 1])) for u in units]
    lo, hi = [], []
    for a, b in groups:
        step = (b - a) if partition_bytes is None else max(1, int(partition_bytes
                                                                  // bytes_per_value))
        # Within a piece the chunks go in flat order: they are ready at the same time.
        starts = list(range(a, b, step))
        lo += starts
        hi += starts[1:] + [b]
    lo, hi = np.array(lo, np.int64), np.array(hi, np.int64)
    ready = model.unit_of(lo).astype(np.int64)
    U = len(model.layers)
    priority = (U - 1 - ready) if overlap == "priority" else np.zeros(len(lo), np.int64)
    return Pieces(lo, hi, ready, priority.astype(np.int64))


def piece_segments(bounds, pcs):
    """The parts of each gradient piece on each server: what one push or pull carries.

    Parameters
    ----------
    bounds : ndarray of int
        :func:`workloads.paradigms.ps.shard_bounds` (server ``s`` holds ``[bounds[s], bounds[s + 1])``).
    pcs : workloads.overlap.Pieces
        The pieces, in the order they are sent.

    Returns
    -------
    ndarray of int
        ``(m, 4)`` rows ``(piece, server, lo, hi)``: the flat slice ``[lo, hi)`` of
        the piece on the server, pieces in sending order, servers ascending.

    Examples
    --------
    >>> piece_segments(np.array([0, 66, 131]), pieces((4, 16, 3), "layerwise")).tolist()
    [[0, 1, 80, 131], [1, 0, 0, 66], [1, 1, 66, 80]]
    """
    lo = np.maximum(pcs.lo[:, None], bounds[None, :-1])
    hi = np.minimum(pcs.hi[:, None], bounds[None, 1:])
    k, s = np.nonzero(hi > lo)
    return np.stack([k, s, lo[k, s], hi[k, s]], 1).astype(np.int64)


def pieces_of(model, hyper, bytes_per_value):
    """:func:`pieces` of a recording's hyper-parameters (``overlap``, ``bucket_bytes``,
    ``partition_bytes``), as the schedules of ps-sync and allreduce read them.

    Examples
    --------
    >>> pieces_of((4, 16, 16, 3), {"overlap": "layerwise"}, 4.0).values.tolist()
    [51, 272, 80]
    """
    return pieces(model, hyper["overlap"], bytes_per_value,
                  hyper.get("bucket_bytes", DDP_BUCKET_BYTES), hyper.get("partition_bytes"))


def iterate(b, c, pcs, exchange):
    """Every iteration of an overlapped schedule, on the Frontier ``b``; returns ``b.build()``.

    Per iteration: each worker's forward and backward ops (:meth:`Frontier.forward_backward`;
    the forward of a unit waits for what the previous iteration's exchanges of its pieces
    returned), then for each piece ``k`` in order ``exchange(it, k, after)``, ``after`` the
    backward ops completing piece ``k`` (one per worker), which adds the piece's traffic
    and returns the ops (a row per worker) the piece's next forward waits for.

    Parameters
    ----------
    b : workloads.plan.frontier.Frontier
        Workers are ranks ``0 .. c.P - 1``.
    c : workloads.plan.measure.Plan
        The schedule's plan (``P``, ``model``, ``batch``, ``iterations``).
    pcs : Pieces
    exchange : callable

    Returns
    -------
    netsim.Trace

    Examples
    --------
    A worker's piece exchanged as one 4-byte message to a second rank:

    >>> from types import SimpleNamespace
    >>> from workloads.plan.frontier import Frontier
    >>> c = SimpleNamespace(P=1, model=mlp.model_of((4, 3)), batch=1, iterations=2)
    >>> b = Frontier(2); pcs = pieces(c.model, "layerwise")
    >>> t = iterate(b, c, pcs, lambda it, k, after: b.send([0], [1], [4.0], it, "push",
    ...                                                   one(after))[:, None])
    >>> t.num_messages, t.num_iterations
    (2, 2)
    """
    W = np.arange(c.P)
    arrive, last = None, None
    for it in range(c.iterations):
        bwd = b.forward_backward(W, c.model, c.batch, it,
                                 None if last is None else one(last),
                                 None if arrive is None else unit_deps(c.model, pcs, arrive))
        arrive = [exchange(it, k, bwd[pcs.ready[k]]) for k in range(len(pcs.lo))]
        last = bwd[0]
    return b.build()


def unit_deps(model, pcs, arrive):
    """What the next forward op of each unit waits for: the arrival of every piece it touches.

    Parameters
    ----------
    model : workloads.mlp.Model
    pcs : Pieces
    arrive : list of ndarray of int
        ``arrive[k][i]``: the ops after which piece ``k`` has arrived on the
        ``i``-th rank (one row per rank, any number of columns, -1 for none).

    Returns
    -------
    list of CSR pair
        ``deps[u]`` for :meth:`workloads.plan.frontier.Frontier.forward_backward`.

    Examples
    --------
    >>> m = mlp.model_of((4, 16, 3))
    >>> pcs = pieces(m, "layerwise")           # piece 0: unit 1, piece 1: unit 0
    >>> deps = unit_deps(m, pcs, [np.array([[10], [11]]), np.array([[20], [21]])])
    >>> [[x.tolist() for x in d] for d in deps]
    [[[1, 1], [20, 21]], [[1, 1], [10, 11]]]
    """
    off = model.offsets
    out = []
    for u in range(len(model.layers)):
        touch = np.flatnonzero((pcs.lo < off[u + 1]) & (pcs.hi > off[u]))
        out.append(cols(*np.hstack([np.asarray(arrive[k]).reshape(len(arrive[k]), -1)
                                    for k in touch]).T) if len(touch) else None)
    return out


def embed(b, trace, iteration, after, priority=0):
    """Add the ops of ``trace`` (a collective's schedule) to the Frontier ``b``.

    Its own dependencies are kept; every message also waits for ``after[rank]``,
    the op of its sender after which the data it sends exists (the backward op
    that completes a gradient piece). The ranks' frontiers are left as they are:
    what waits for the collective says so (:func:`touching`).

    Parameters
    ----------
    b : workloads.plan.frontier.Frontier
    trace : netsim.Trace
        Ranks ``0 .. b.ranks - 1``.
    iteration : int
    after : numpy.ndarray of int
        One op id per rank.
    priority : int
        Priority of the messages.

    Returns
    -------
    numpy.ndarray of int
        The ids of the added ops, in ``trace``'s order.

    Examples
    --------
    >>> from netsim.comm.collectives import ring_allreduce
    >>> from workloads.plan.frontier import Frontier
    >>> b = Frontier(2); c = b.compute([0, 1], 1.0)
    >>> ids = embed(b, ring_allreduce(2, 8.0), 0, c)
    >>> t = b.build(); ids.tolist(), t.deps(2).tolist(), t.deps(4).tolist()
    ([2, 3, 4, 5], [0], [2, 3, 0])
    """
    n0 = b.n
    tag_ids = np.array([b.tag(t) for t in trace.tags] + [-1], np.int16)
    own = (np.diff(trace.dep_ptr), trace.dep_idx + n0)
    msg = trace.is_message
    extra = (msg.astype(np.int64), np.asarray(after, np.int64)[trace.rank[msg]])
    return b.add(trace.kind, trace.rank, trace.peer, trace.size, trace.flops, iteration,
                 tag_ids[trace.tag], merge(own, extra), priority)


def touching(trace, ranks):
    """Ops of ``trace`` each rank sends or receives, as columns for :func:`netsim.trace.core.deps_csr`.

    Parameters
    ----------
    trace : netsim.Trace
    ranks : int
        Ranks of the trace.

    Returns
    -------
    numpy.ndarray of int
        ``(ranks, m)``: row ``r`` lists the ops touching rank ``r``, padded with -1.

    Examples
    --------
    >>> from netsim.comm.collectives import ring_allreduce
    >>> touching(ring_allreduce(2, 8.0), 2).tolist()
    [[0, 1, 2, 3], [0, 1, 2, 3]]
    """
    msg = np.flatnonzero(trace.is_message)
    who = np.concatenate([trace.rank[msg], trace.peer[msg]])
    op = np.concatenate([msg, msg])
    order = np.lexsort((op, who))
    who, op = who[order], op[order]
    count = np.bincount(who, minlength=ranks)
    out = np.full((ranks, int(count.max()) if len(count) else 0), -1, np.int64)
    pos = np.arange(len(who)) - np.repeat(np.cumsum(count) - count, count)
    out[who, pos] = op
    return out


def exposed_communication(model, pcs, batch, device_flops, piece_seconds):
    """Closed form of the communication an overlapped step does not hide (seconds).

    The pieces go over one channel, one at a time at its full speed, piece ``k``
    taking ``piece_seconds[k]`` (e.g. the ring allreduce closed form of its bytes):
    in sending order (first ready, first sent), or, when the pieces have
    different priorities, preemptive strict priority (the most urgent ready piece
    is sent; a more urgent one interrupts it). Piece ``k`` becomes ready when the
    backward op of unit ``ready[k]`` ends: unit ``u``'s backward ends at
    ``F + sum(B[v] for v >= u)`` (F the forward time, B twice the forward time
    of each unit). The next forward op of unit ``u`` starts when unit ``u - 1``'s
    ends and every piece touching ``u`` has arrived; what the next iteration's
    forward pass is delayed by is the exposed communication:
    ``max(0, max_u (A_u - b_0 - sum(F[v] for v < u)))`` with ``A_u`` the last
    arrival of a piece of unit ``u`` and ``b_0`` the end of the backward pass. A
    step then takes the compute time plus this. Updates are neglected (4 FLOPs
    per value).

    Parameters
    ----------
    model : workloads.mlp.Model
    pcs : Pieces
    batch : float
        Samples per worker.
    device_flops : float
        FLOP/s.
    piece_seconds : sequence of float
        Transfer time of each piece alone on the channel.

    Returns
    -------
    float

    Examples
    --------
    Two units of 1 s forward (2 s backward) each; the whole gradient in one
    piece of 3 s: nothing hidden. Per layer, 1.5 s each: unit 1's piece goes
    during unit 0's backward (2 s), unit 0's takes 1.5 s after it.

    >>> from types import SimpleNamespace
    >>> m = SimpleNamespace(unit_flops=np.array([1.0, 1.0]), offsets=np.array([0, 10, 20]))
    >>> one = Pieces(np.array([0]), np.array([20]), np.array([0]), np.array([0]))
    >>> exposed_communication(m, one, 1, 1.0, [3.0])
    3.0
    >>> two = Pieces(np.array([10, 0]), np.array([20, 10]), np.array([1, 0]), np.array([0, 0]))
    >>> exposed_communication(m, two, 1, 1.0, [1.5, 1.5])
    1.5
    """
    fwd = np.asarray(model.unit_flops, np.float64) * batch / device_flops
    bwd_end = fwd.sum() + np.cumsum((2 * fwd)[::-1])[::-1]     # unit u's backward ends
    ready = bwd_end[pcs.ready]
    left = np.array(piece_seconds, np.float64)
    done = np.full(len(left), np.nan)
    prio = pcs.priority if len(set(pcs.priority.tolist())) > 1 else np.zeros(len(left))
    now = float(ready.min()) if len(left) else 0.0
    while np.isnan(done).any():
        waiting = np.flatnonzero(np.isnan(done) & (ready <= now))
        if not len(waiting):
            now = float(ready[np.isnan(done)].min())
            continue
        # The most urgent ready piece, the first sent among equals.
        k = int(waiting[np.lexsort((waiting, -prio[waiting]))[0]])
        later = ready[np.isnan(done) & (ready > now)]
        step = left[k] if not len(later) else min(left[k], float(later.min()) - now)
        now += step
        left[k] -= step
        if left[k] <= 1e-15 * max(now, 1.0):
            done[k] = now
    off = np.asarray(model.offsets)
    before = np.concatenate([[0.0], np.cumsum(fwd)[:-1]])      # forward of units below u
    delay = 0.0
    for u in range(len(fwd)):
        touch = (pcs.lo < off[u + 1]) & (pcs.hi > off[u])
        if touch.any():
            delay = max(delay, float(done[touch].max()) - bwd_end[0] - before[u])
    return float(delay)
