"""Sharded data parallelism for the transformer: ZeRO-1/2/3 and FSDP, traffic and time.

Rajbhandari et al. (ZeRO, SC'20, [1]_) partition the model states over the
``d`` data-parallel replicas in three stages; what each sends (their section
7, "Communication analysis of ZeRO-DP"):

======= ==================================================== =====================
stage   traffic per iteration                                 volume (ring, [1]_ 7.2)
======= ==================================================== =====================
0 (DDP) allreduce of the gradients in buckets                 ``2 Psi``
1, 2    reduce-scatter of the gradients in the same buckets   ``2 Psi``: the same
        (each replica keeps the ``1/d`` its optimizer         as DDP (7.2.1)
        partition updates), then an allgather of the updated
        parameters after the step
3, FSDP before each unit's forward and again before its       ``3 Psi``: 1.5 x DDP's
        backward an allgather of its parameters; after the    (7.2.2)
        backward a reduce-scatter of its gradients
======= ==================================================== =====================

``Psi`` is a replica's parameter bytes; a ring allreduce moves ``2 (d - 1)/d
Psi`` per rank, an allgather or a reduce-scatter ``(d - 1)/d Psi``. Stages 1
and 2 send the same and differ in memory only
(:func:`workloads.transformer.memory.memory_per_gpu`).

A unit of stage 3 is one transformer layer (FSDP's usual wrapping, PyTorch's
``transformer_auto_wrap_policy``), plus the root unit holding the embeddings
(and, tied to the word embedding, the logit layer). Its allgathers and
reduce-scatters are issued as PyTorch FSDP issues them with its defaults
(:class:`Issue`; PyTorch >= 2.1 ``FullyShardedDataParallel``:
``forward_prefetch=False``, ``backward_prefetch=BACKWARD_PRE``,
``limit_all_gathers=True``):

* **one stream**: FSDP puts its allgathers on an "unshard" stream and its
  reduce-scatters on a "post_backward" stream, but both go to one process
  group, and "for NCCL backend, any collectives, even if issued in different
  streams, contend for the same per-device NCCL stream" (the docstring of
  ``BackwardPrefetch``, ``torch/distributed/fsdp/api.py``): they run one after
  another in the order they are issued, each also waiting for what its own
  stream waits for.
* **issue order**: a unit's allgather in its pre-forward hook (no forward
  prefetch) and in its pre-backward hook, unless prefetched; the pre-backward
  hook of the unit at position ``i`` of the forward order then prefetches
  the one at ``i - 1`` (``BACKWARD_PRE``: before the unit's gradient
  computation); the post-backward hook reshards the unit and issues its
  reduce-scatter, which waits for the backward computation
  (``_post_backward_hook``: ``post_backward.wait_stream(current_stream)``).
* **rate limiter** (``limit_all_gathers``): every reshard that frees a unit
  records an event on the compute stream (``_reshard``) in a queue; before
  each allgather, if the queue holds ``_max_num_inflight_all_gathers = 2``
  events, the CPU waits for the oldest (``_unshard``,
  ``_FreeEventQueue.dequeue_if_needed``, ``torch/distributed/fsdp/_limiter_utils.py``).
  In the steady forward the allgather of layer ``k`` thus waits for layer
  ``k - 2``'s forward; in the backward, that of layer ``k - 1`` (prefetched
  before layer ``k``'s backward) for layer ``k + 2``'s backward.
* **the root unit** is not freed after the forward under FSDP
  (``_post_forward_reshard``: "Do not free the root's parameters in the
  post-forward for FULL_SHARD"), so it is gathered once per micro-batch;
  under ``zero=3`` it is freed and gathered again before the backward, as
  ZeRO's analysis counts [1]_.

DeepSpeed's ZeRO-3 (v0.16.5 ``deepspeed/runtime/zero/config.py``,
``partitioned_param_coordinator.py``) fetches per submodule (each linear
layer) and prefetches up to ``stage3_prefetch_bucket_size = 5e7`` elements
ahead within ``stage3_max_live_parameters = 1e9`` live ones, with at most
``__max_ongoing_fetch_events = 2`` fetches ahead of the compute stream; its
allgathers and, with ``overlap_comm`` (True by default for stage 3), its
gradient reductions on their own streams but one process group. At the
granularity of layers that is about one unit ahead, as FSDP's forward; this
module runs ``zero=3`` under the same rules (with the root gathered again),
not DeepSpeed's per-parameter fetches. Gradients are reduce-scattered once
per iteration, in the last micro-batch's post-backward hooks (gradient
accumulation without resharding the gradients, as FSDP's ``no_sync``;
DeepSpeed's ZeRO-3 instead reduces every micro-batch: the same at ``m =
1``). Stage 3 needs one pipeline stage (DeepSpeed refuses ZeRO-2 and ZeRO-3
with pipeline parallelism: v0.16.4 ``deepspeed/runtime/pipe/engine.py`` asserts the
stage is below ``ZeroStageEnum.gradients``, "ZeRO-2 and ZeRO-3 are incompatible with
pipeline parallelism"; so does this module for stage 3, and for FSDP, which torchtitan
composes with pipeline stages but which is not modelled here).

References
----------
.. [1] S. Rajbhandari, J. Rasley, O. Ruwase and Y. He, "ZeRO: memory optimizations
   toward training trillion parameter models", SC'20, arXiv:1910.02054.
"""

from collections import deque

from netsim.checks import check_int

from workloads.errors import WorkloadError
from workloads.transformer.prices import seconds

__all__ = ["ZERO_STAGES", "INFLIGHT_ALLGATHERS", "check_zero", "Issue", "make_gather",
           "zero3_timeline"]

#: ZeRO's stages: 0 is plain data parallelism (gradient allreduce).
ZERO_STAGES = (0, 1, 2, 3)

#: FSDP's rate limiter: free events before an allgather waits (PyTorch
#: ``torch/distributed/fsdp/_limiter_utils.py``, ``_max_num_inflight_all_gathers``).
INFLIGHT_ALLGATHERS = 2


def check_zero(zero, fsdp, L, inflight_allgathers=INFLIGHT_ALLGATHERS):
    """The ZeRO stage a schedule runs: ``zero``, or 3 with ``fsdp``.

    Raises
    ------
    WorkloadError
        For an unknown stage, FSDP with a ZeRO stage other than 0 or 3,
        sharding without data parallelism, stage 3 with pipeline stages, or
        an ``inflight_allgathers`` limit (:class:`Issue`) that is not None
        or a positive integer.

    Examples
    --------
    >>> from workloads.transformer.layout import Layout
    >>> check_zero(0, True, Layout(1, 1, 4))
    3
    >>> check_zero(3, False, Layout(1, 2, 4))
    Traceback (most recent call last):
    ...
    workloads.errors.WorkloadError: ZeRO-3/FSDP needs pp 1 (got pp 2): parameters gathered per layer do not combine with pipeline stages here
    """
    if zero not in ZERO_STAGES:
        raise WorkloadError(f"unknown ZeRO stage {zero!r}; known: 0, 1, 2, 3")
    if fsdp and zero not in (0, 3):
        raise WorkloadError(f"FSDP is ZeRO-3's sharding; it does not combine with zero {zero}")
    stage = 3 if fsdp else zero
    if stage and L.dp == 1:
        raise WorkloadError(f"{'FSDP' if fsdp else f'ZeRO-{stage}'} shards over "
                            "data-parallel replicas; dp is 1")
    if stage == 3 and L.pp > 1:
        raise WorkloadError(f"ZeRO-3/FSDP needs pp 1 (got pp {L.pp}): parameters gathered per "
                            "layer do not combine with pipeline stages here")
    if inflight_allgathers is not None:
        check_int(inflight_allgathers, "inflight_allgathers", error=WorkloadError)
    return stage


class Issue:
    """FSDP's hooks on one data-parallel group: which allgather and reduce-scatter each issues.

    The rules of the module's docstring, for any kind of handle: ``gather(unit,
    event)`` issues a unit's allgather after the free ``event`` the rate
    limiter waits for (None: no wait) and ``reduce(unit, event)`` its
    reduce-scatter after the unit's backward ``event``; both append to the one
    stream, and return a handle (an op, a time). The caller runs the hooks
    in program order: :meth:`pre` before a unit's compute (it returns the
    allgather the compute waits for), :meth:`post` after it.

    Parameters
    ----------
    order : sequence
        The units in forward order (the root first).
    gather, reduce : callable
        As above.
    keep : optional
        A unit that stays gathered from its forward to its backward (FSDP's
        root unit); None: every unit is freed after its forward (``zero=3``).
    limit : int or None
        Free events the limiter holds before an allgather waits for one (FSDP's
        2); None: no limit (``limit_all_gathers=False``).

    Examples
    --------
    Three layers, forward then backward, no root; events are the unit's name.

    >>> log = []
    >>> x = Issue([0, 1, 2], lambda u, e: log.append(("AG", u, e)),
    ...           lambda u, e: log.append(("RS", u, e)))
    >>> for u in (0, 1, 2):
    ...     _ = x.pre(u, False); x.post(u, f"F{u}", False, True)
    >>> for u in (2, 1, 0):
    ...     _ = x.pre(u, True); x.post(u, f"B{u}", True, True)
    >>> log   # doctest: +NORMALIZE_WHITESPACE
    [('AG', 0, None), ('AG', 1, None), ('AG', 2, 'F0'), ('AG', 2, 'F1'), ('AG', 1, None),
     ('RS', 2, 'B2'), ('AG', 0, 'F2'), ('RS', 1, 'B1'), ('RS', 0, 'B0')]

    Layer 2's allgather waits for layer 0's forward (two free events queued);
    before layer 2's backward it is gathered again and layer 1's prefetched.
    """

    def __init__(self, order, gather, reduce, keep=None, limit=INFLIGHT_ALLGATHERS):
        self.order, self.keep, self.limit = list(order), keep, limit
        self._gather, self._reduce = gather, reduce
        self.held, self.queue = {}, deque()

    def _unshard(self, unit):
        if unit in self.held:
            return
        event = (self.queue.popleft() if self.limit is not None and len(self.queue) >= self.limit
                 else None)
        self.held[unit] = self._gather(unit, event)

    def pre(self, unit, backward):
        """The pre-forward or pre-backward hook of ``unit``: the allgather its compute waits for."""
        self._unshard(unit)
        got = self.held[unit]
        i = self.order.index(unit)
        if backward and i > 0:   # BACKWARD_PRE: the previous unit of the forward order
            self._unshard(self.order[i - 1])
        return got

    def post(self, unit, event, backward, sync):
        """The post-forward or post-backward hook: free the unit, and with ``sync`` reduce it."""
        if backward or unit != self.keep:
            self.held.pop(unit, None)
            if self.limit is not None:
                self.queue.append(event)
        if backward and sync:
            self._reduce(unit, event)


def make_gather(b, L, st, elements, it, chain, keep_root, limit=INFLIGHT_ALLGATHERS):
    """The ``meet`` of a ZeRO-3 schedule: answers each round of its replicas' hook requests.

    Each replica's forward and backward yields ``(hook, unit, backward, sync,
    per-shard ops)`` at each unit's pre (its stream's last ops) and post hook
    (the unit's last compute ops); the replicas run side by side
    (:func:`workloads.transformer.moe.run_jointly`), so a round holds every
    replica's request for the same hook. Each tensor-parallel shard ``k`` has
    its own data-parallel group, :class:`Issue` state and stream
    (``chain[k]``: its last collective); a collective waits for the event's
    ops on every replica. ``elements``: bytes per parameter and per gradient
    value; ``it``: a one-item list holding the iteration; ``keep_root``: FSDP's
    root unit stays gathered from its forward to its backward; ``limit``: the
    rate limiter's (:class:`Issue`).

    Examples
    --------
    >>> from netsim.trace.core import TraceBuilder
    >>> from workloads.transformer.layout import Layout
    >>> from workloads.transformer.stages import Stage
    >>> b = TraceBuilder(2)
    >>> st = Stage(0, (0,), 1.0, 1.0, 0.0, ((0, 100),))
    >>> meet = make_gather(b, Layout(1, 1, 2), st, (2, 2), [0], [None], True)
    >>> meet({0: ("pre", 0, False, True, [None]), 1: ("pre", 0, False, True, [None])})
    {0: [0], 1: [0]}
    >>> t = b.build(); t.num_ops, float(t.size[0])
    (1, 200.0)
    """
    units = dict(st.grads)
    order = (["embedding"] if "embedding" in units else []) + list(st.layers)

    def issuer(k):
        def collective(name, element):
            def issue(unit, event):
                deps = [x for x in [chain[k]] + list(event or []) if x is not None]
                chain[k] = b.collective(name, L.dp_group(0, k), units[unit] * element,
                                        deps=deps, iteration=it[0], tag="dp", element=element)
                return chain[k]
            return issue
        return Issue(order, collective("allgather", elements[0]),
                     collective("reduce_scatter", elements[1]),
                     "embedding" if keep_root else None, limit)

    shards = [issuer(k) for k in range(L.tp)]

    def meet(requests):
        hook, unit, backward, sync, _ = next(iter(requests.values()))
        out = []
        for k, x in enumerate(shards):
            if hook == "pre":
                out.append(x.pre(unit, backward))
            else:
                x.post(unit, [req[4][k] for req in requests.values()], backward, sync)
        return {r: list(out) for r in requests} if hook == "pre" else {}

    return meet


def zero3_timeline(st, order, times, elements, dp, ab, keep_root=False,
                   limit=INFLIGHT_ALLGATHERS, price=None):
    """One iteration of the one stage under ZeRO-3: ``(end of compute, end of the gradients)``.

    The same hooks as the schedule's (:class:`Issue`), on times: a
    collective starts when the stream is free and its event has happened, and
    takes ``price``'s seconds, else MPICH's ring time on ``ab``; a unit's compute starts when the
    previous one has ended and its allgather is done.

    Parameters
    ----------
    st : workloads.transformer.stages.Stage
        The only stage.
    order : list of (kind, micro-batch, chunk)
        The stage's ops (:func:`workloads.transformer.pipeline.order`).
    times : (float, float, float, float)
        Seconds of one layer's forward and backward (with recomputation and
        blocking tensor-parallel time) and of the logit layer's forward and backward.
    elements : (int, int)
        Bytes per parameter and per gradient value.
    dp : int
        Replicas.
    ab : (float, float)
        ``(alpha, beta)`` of the data-parallel group.
    keep_root : bool
        FSDP's root unit (the embeddings) stays gathered from its forward to its backward.
    limit : int or None
        As for :class:`Issue`.
    price : callable, optional
        ``price(group, op, nbytes)``: a call's seconds on ``"dp"`` as the replay runs it
        (None: MPICH's ring on ``ab``, :func:`workloads.transformer.prices.seconds`).

    Returns
    -------
    (float, float)
        When the last backward ends, and when the last reduce-scatter ends.

    Examples
    --------
    One layer, no embedding, two micro-batches, a free network: compute only.

    >>> from workloads.transformer.stages import Stage
    >>> st = Stage(0, (0,), 1.0, 1.0, 0.0, ((0, 10),))
    >>> order = [("F", 0, 0), ("B", 0, 0), ("F", 1, 0), ("B", 1, 0)]
    >>> zero3_timeline(st, order, (1.0, 3.0, 0.0, 0.0), (2, 2), 2, (0.0, 0.0))
    (8.0, 8.0)
    """
    layer_f, layer_b, logit_f, logit_b = times
    units = dict(st.grads)
    root = "embedding" in units
    cost = [{u: seconds("dp", op, dp, n * e, {"dp": ab}, price) for u, n in units.items()}
            for op, e in (("allgather", elements[0]), ("reduce_scatter", elements[1]))]
    clock = {"stream": 0.0, "compute": 0.0}

    def collective(table):
        def issue(unit, event):
            clock["stream"] = max(clock["stream"], event or 0.0) + table[unit]
            return clock["stream"]
        return issue

    x = Issue((["embedding"] if root else []) + list(st.layers), collective(cost[0]),
              collective(cost[1]), "embedding" if keep_root else None, limit)

    def run(unit, work, backward, sync, after=None):
        """A unit's pre hook, its compute (``work``), then ``after`` and its post hook."""
        ready = x.pre(unit, backward)
        clock["compute"] = max(clock["compute"], ready) + work
        if after:
            clock["compute"] += after
        x.post(unit, clock["compute"], backward, sync)

    last = max(j for _, j, _ in order)
    for kind, j, _ in order:
        sync = j == last
        if kind == "F":
            if root:
                x.pre("embedding", False)
            for layer in st.layers:
                run(layer, layer_f, False, sync)
            clock["compute"] += logit_f
            if root:
                x.post("embedding", clock["compute"], False, sync)
        else:
            if root:
                clock["compute"] = max(clock["compute"], x.pre("embedding", True))
            clock["compute"] += logit_b
            for layer in reversed(st.layers):
                run(layer, layer_b, True, sync)
            if root:
                x.post("embedding", clock["compute"], True, sync)
    return clock["compute"], max(clock["compute"], clock["stream"])
