"""Transformer training with tensor, pipeline and data parallelism (Megatron-LM's PTD-P).

:func:`schedule` writes one training iteration (or several) of a GPT-style
transformer (:mod:`workloads.transformer.flops`) on ``tp * pp * dp`` ranks laid
out as Megatron-LM lays them out (:mod:`workloads.transformer.layout`) as a trace of compute
ops in FLOPs, collective ops and messages:

* **Tensor parallelism** (Shoeybi et al. 2019; Narayanan et al. SC'21 section
  2.3): each of a layer's two blocks (attention, MLP) is computed by ``tp``
  shards, ``1/tp`` of the FLOPs each, and ends with an allreduce of the
  ``b s h`` activation among the shards, in the forward and in the backward:
  four per layer and micro-batch (tag ``tp``). With ``sequence_parallel``
  (Korthikanti et al. 2022, section 4.2.2) each block is an allgather before
  and a reduce-scatter after instead, of the same ``b s h`` buffer. The logit
  layer (vocabulary-parallel) needs its input's gradient allreduced in the
  backward only (with sequence parallelism: its input allgathered in the
  forward, the gradient reduce-scattered in the backward); the cross-entropy's
  allreduces of ``b s`` values are left out.
* **Pipeline parallelism**: the layers split evenly over ``pp`` stages (or
  with ``first_stage_layers`` / ``last_stage_layers`` as Megatron-LM splits
  them unevenly, :func:`workloads.transformer.stages.stage_layers`); each
  stage runs its micro-batches' forwards and backwards in the order of the
  pipeline schedule (:mod:`workloads.transformer.pipeline`: GPipe, 1F1B, or interleaved
  1F1B over ``chunks`` chunks of layers per stage), and every shard
  sends its ``b s h`` activation to the same shard of the next stage after a
  forward, and the activation's gradient back after a backward (tag ``pp``).
  With ``scatter_gather`` (Narayanan et al. section 4.1; Megatron-LM v2.5's
  default, ``--no-scatter-gather-tensors-in-pipeline`` turns it off) each
  shard sends only its ``1/tp`` of the activation across, and the receiving
  shards allgather the ``b s h`` buffer among themselves (on NVLink) before
  they use it (tag ``pp``).
* **Data parallelism**: ``dp`` replicas each take ``B / dp`` of the global
  batch, ``m = B / (b dp)`` micro-batches; the gradient of each shard's
  parameters is allreduced among its ``dp`` replicas in buckets
  (:func:`workloads.transformer.stages.buckets`), each leaving as soon as the
  last micro-batch's backward has completed it, one after another on one
  stream, overlapping the rest of the backward pass (tag ``dp``).
* **Context parallelism** (``cp``; :mod:`workloads.transformer.context.ring`): each sequence
  split over ``cp`` ranks (Megatron's order: ``dp cp`` replicas of ``1/cp`` of the work each),
  the attention core a ring that passes keys and values among them (tag ``cp``), the
  gradients reduced over the ``dp cp`` ranks.
* **Recomputation** ``full`` (Korthikanti et al. 2022) runs each layer's forward
  again, with its tensor-parallel collectives, just before its backward;
  ``selective`` (their section 5) only its attention core
  (:func:`workloads.transformer.flops.attention_core_forward_flops`, ``1/tp`` on
  each shard, no collective), between the MLP's and the attention's backward.

A rank's compute ops and its blocking tensor-parallel collectives run one after
another (one CUDA stream); its pipeline messages and gradient buckets do not
hold its compute up. The compute ops are in FLOPs; ``device_flops`` (the rate
achieved: peak times an efficiency) goes into the trace's metadata. With
``compute="gemm"`` they are in seconds instead, each block's GEMMs timed from
their shapes on a GPU (:mod:`workloads.transformer.gemm`). With
``memory_bandwidth`` each block's FLOP op is followed by an op of the seconds
its memory traffic takes (:mod:`workloads.transformer.compute`), tagged as the
pass it belongs to.
:func:`workloads.transformer.closed.closed_form` is the time per iteration in
closed form: compute, bubble and exposed communication per parallelism.
"""

import numpy as np

from netsim.checks import check_int, check_real
from netsim.trace.core import TraceBuilder
from netsim.trace.subset import DROPPED, Subset

from workloads.transformer import pipeline as _pipeline
from workloads.errors import WorkloadError
from workloads.overlap import DDP_BUCKET_BYTES
from workloads.transformer.closed import closed_form
from workloads.transformer.flops import activation_bytes
from workloads.transformer.moe import (bucket_groups, dense_stages, expert_grads, make_meet, make_mlp,
                              plan, run_jointly)
from workloads.transformer.layout import Layout
from workloads.transformer.stages import buckets, check, stage_bucket_bytes
from workloads.transformer.compute import memory_seconds
from workloads.transformer.fused import Chains, check_fusable
from workloads.transformer.context.ring import check_combination, core_flops, make_ring
from workloads.transformer.gemm import block_seconds, check_compute
from workloads.transformer.overlaps.param_gather import check_param_gather, make_gate
from workloads.transformer.overlaps.tp import check_tp_overlap
from workloads.transformer.zero import INFLIGHT_ALLGATHERS, check_zero, make_gather

__all__ = ["schedule", "shift", "measure", "closed_form", "DESCRIPTION", "TAGS"]

DESCRIPTION = "transformer training with tensor x pipeline x data parallelism (Megatron-LM)."
#: The tags of the trace's communication, one per parallelism (``ep``: experts' all-to-alls).
TAGS = ("tp", "pp", "dp", "ep", "cp")


def schedule(c, tp=1, pp=1, dp=1, pipeline="1f1b", recompute="full", sequence_parallel=False,
             bucket_bytes=DDP_BUCKET_BYTES, grad_element=None, iterations=1, device_flops=None,
             chunks=1, scatter_gather=False, zero=0, fsdp=False, memory_bandwidth=None, moe=None,
             ep=1, first_stage_layers=None, last_stage_layers=None,
             inflight_allgathers=INFLIGHT_ALLGATHERS, replicas=None, compute="flops", device=None,
             tp_overlap=False, param_gather="after", stage_buckets="every", shards=None,
             tp_seconds=None, cp=1):
    """The trace of training transformer ``c`` under ``tp x pp x dp`` parallelism.

    Parameters
    ----------
    c : workloads.transformer.flops.Config
        Model, micro-batch ``b``, global batch ``B`` and precision.
    tp, pp, dp : int
        Degrees of tensor, pipeline and data parallelism; ``tp * pp * dp`` ranks.
    pipeline : {"1f1b", "gpipe", "interleaved"}
        The pipeline schedule (:mod:`workloads.transformer.pipeline`).
    recompute : {"full", "none", "selective"}
        Activation recomputation.
    sequence_parallel : bool
        Tensor-parallel blocks as allgather + reduce-scatter instead of allreduce.
    bucket_bytes : float
        Gradient bucket size (PyTorch DDP's 25 MiB by default).
    grad_element : int, optional
        Bytes per gradient value (default: the precision's).
    iterations : int
        Training iterations, each after the previous one's gradients have arrived.
    device_flops : float, optional
        Achieved FLOP/s of a rank, stored as the trace's ``device_flops``.
    chunks : int
        Chunks of layers per stage of the interleaved schedule (1 for the others).
    scatter_gather : bool
        Pipeline messages of ``1/tp`` of the activation, allgathered at the receiver.
    zero : {0, 1, 2, 3}
        ZeRO's stage of sharded data parallelism (:mod:`workloads.transformer.zero`).
    fsdp : bool
        PyTorch FSDP (full sharding): ZeRO-3's traffic, the root unit kept gathered
        from its forward to its backward.
    inflight_allgathers : int or None
        ZeRO-3/FSDP's rate limiter: free events queued before an allgather
        waits for the oldest (FSDP's default 2; None: no limit,
        :class:`workloads.transformer.zero.Issue`).
    memory_bandwidth : float, optional
        Bytes/s of a rank's memory: each attention and MLP block's FLOP op is
        followed by one of its memory traffic's seconds
        (:func:`workloads.transformer.compute.memory_seconds`); None: FLOPs only.
    moe : workloads.transformer.moe.Moe, optional
        Mixture-of-experts layers (:mod:`workloads.transformer.moe`), their
        all-to-alls tagged ``ep``.
    ep : int
        Expert-parallel degree, dividing ``dp`` and the experts.
    first_stage_layers, last_stage_layers : int, optional
        Layers on the first and on the last pipeline stage, the rest split evenly
        over the stages between (Megatron-LM's uneven split,
        :func:`workloads.transformer.stages.stage_layers`); GPipe or 1F1B.
    compute : {"flops", "gemm"}
        The compute ops' time: FLOPs (over ``device_flops`` at replay), or
        seconds from each block's GEMM shapes on ``device``
        (:func:`workloads.transformer.gemm.block_seconds`; dense layers in
        fp16/bf16).
    device : netsim.costmodel.gemm.GemmDevice, optional
        The GPU of ``compute="gemm"`` (e.g.
        :func:`topologies.devices.device_gemm`), stored in the metadata.
    tp_overlap : bool
        Megatron-LM's ``--tp-comm-overlap`` (with ``sequence_parallel``): each block's
        allgather and reduce-scatter run beside its compute, the next block waiting for
        both (:mod:`workloads.transformer.overlaps.tp`).
    param_gather : {"after", "overlap"}
        Under ZeRO-1/2: the parameter allgather after the reduce-scatters, or bucket by
        bucket under the next iteration's first forward (Megatron-LM's
        ``--overlap-param-gather``, :mod:`workloads.transformer.overlaps.param_gather`).
    stage_buckets : {"every", "first"}
        Which pipeline stages fill buckets of ``bucket_bytes``: every stage, or the
        first only, each later stage reducing its gradients in one bucket (Megatron-Core's
        DDP; :func:`workloads.transformer.stages.stage_bucket_bytes`).

    replicas : int, optional
        Write the ops of data-parallel replicas ``0 .. replicas - 1`` only (a
        divisor of ``dp``); the data-parallel collectives still name every
        replica. The others' work is the same shifted by ``replicas``
        (:func:`shift`), for :func:`netsim.simulate`'s ``symmetry=``. Not with experts.
    shards : int, optional
        Write the ops of tensor-parallel shards ``0 .. shards - 1`` only (a divisor of
        ``tp``; :class:`netsim.trace.subset.Subset`): the shards of a stage do the same
        work, so the others' is the same moved among the machine's GPUs
        (:func:`shard_shift`). Not with experts.
    tp_seconds : callable, optional
        ``tp_seconds(op, ranks, nbytes)``: a tensor-parallel call's seconds alone
        (:meth:`netsim.comm.priced.NcclPrices.seconds` on the ranks' GPUs). Given, each
        stage's run of compute and tensor-parallel calls between two points that read it
        is written as one op per shard of its summed seconds, the first call of each kind
        of each group as the collective it is (:mod:`workloads.transformer.fused`; the
        replay checks that the calls run alone). Not with ZeRO-3, experts, the
        tensor-parallel overlap, the overlapped parameter allgather or scatter/gather.
    cp : int
        Context parallelism: each sequence over ``cp`` ranks (a divisor of half the
        sequence), ``tp * cp * pp * dp`` ranks (:mod:`workloads.transformer.context.ring`). Not
        with experts, ZeRO-3/FSDP, ``compute="gemm"``, ``memory_bandwidth``, ``tp_overlap``,
        ``param_gather="overlap"``, ``replicas``, ``shards`` or ``tp_seconds``.

    Returns
    -------
    netsim.Trace

    Raises
    ------
    WorkloadError
        For a model that does not split over the layout, or a bad option.

    Examples
    --------
    >>> from workloads.transformer.flops import config
    >>> c = config(4, 64, 4, 32, 0, micro_batch=1, global_batch=8)
    >>> t = schedule(c, tp=2, pp=2, dp=2)
    >>> t.ranks, t.num_messages, int(t.size[t.is_message][0])   # 32 * 64 fp16 values
    (8, 32, 4096)
    """
    uneven = {k: v for k, v in (("first_stage_layers", first_stage_layers),
                                ("last_stage_layers", last_stage_layers)) if v is not None}
    check_combination(cp, zero, fsdp, moe, compute, memory_bandwidth is not None, tp_overlap,
                      param_gather, replicas is not None or shards is not None)
    L, stages = check(c, tp, pp, dp, pipeline, recompute, bucket_bytes, iterations, chunks,
                      **uneven, cp=cp)
    zstage = check_zero(zero, fsdp, L, inflight_allgathers)
    p = plan(c, L, moe, ep, sequence_parallel, bool(zstage), memory_bandwidth is not None)
    overlap = check_tp_overlap(tp_overlap, sequence_parallel, zstage, fsdp, moe) and L.tp > 1
    gathered = check_param_gather(param_gather, zstage, chunks, bool(uneven))
    sizes = stage_bucket_bytes(bucket_bytes, L.pp, stage_buckets, chunks)
    dev = check_compute(compute, device, c, moe)
    gemm = block_seconds(c, L.tp, dev) if dev else None
    element = grad_element or c.element
    built = _replicas(replicas, L, p)
    m = c.global_batch // (c.micro_batch * (L.dp // cp))   # L.dp: the dp cp replicas
    act = activation_bytes(c) // cp
    meta = {"paradigm": "transformer", "config": c._asdict(), "tp": L.tp, "pp": L.pp,
            "dp": L.dp, "pipeline": pipeline, "chunks": chunks, "recompute": recompute,
            "microbatches": m,
            "sequence_parallel": bool(sequence_parallel), "bucket_bytes": float(bucket_bytes),
            "scatter_gather": bool(scatter_gather), "zero": zstage, "fsdp": bool(fsdp),
            "grad_element": element, **uneven}
    if cp > 1:
        meta.update(cp=cp, dp=L.dp // cp)
    if zstage == 3:
        meta["inflight_allgathers"] = inflight_allgathers
    if overlap:
        meta["tp_overlap"] = True
    if gathered:
        meta["param_gather"] = "overlap"
    if stage_buckets != "every":
        meta["stage_buckets"] = stage_buckets
    if p:
        meta.update(moe=moe._asdict(), ep=p.ep)
        experts, stages = expert_grads(stages, p), dense_stages(stages, p)
    else:
        experts = [[] for _ in stages]
    mem = memory_seconds(c, L.tp, sequence_parallel, memory_bandwidth)
    if memory_bandwidth is not None:
        meta["memory_bandwidth"] = float(memory_bandwidth)
    if dev:
        meta.update(compute="gemm", gemm_device=dev._asdict())
    if device_flops is not None:
        meta["device_flops"] = check_real(device_flops, "device_flops", lo=0, strict=True,
                                          error=WorkloadError)
    kept = L.tp if shards is None else _shards(shards, L, p)   # shards written
    b = (TraceBuilder(L.world, metadata=meta) if shards is None
         else Subset(L.world, np.arange(L.world) % L.tp < kept, metadata=meta))
    groups = {(s, r): L.tp_group(s, r) for s in range(L.pp) for r in range(L.dp)}
    pad = [DROPPED] * (L.tp - kept)   # the ops of the shards not written
    pre, post = ("allgather", "reduce_scatter") if sequence_parallel else (None, "allreduce")
    # last[(stage, replica)]: the op each shard's stream waits for next.
    last = {(s, r): [None] * L.tp for s in range(L.pp) for r in range(L.dp)}
    chains = None
    if tp_seconds is not None:
        check_fusable(L.tp, zstage, p, overlap, gathered, scatter_gather, dev, device_flops,
                      cp)
        chains = Chains(b, groups, last, kept, pad, tp_seconds, c.element)

    def block(s, r, flops, it, tag, extra=None, before=True, after=True, kind=None, size=None,
              unit=None, read=False):
        """One block on every shard of (s, r): [pre collective] compute [post collective].

        ``kind`` ("attention", "mlp"; None for the logit layer): its memory op's seconds;
        ``size``: the bytes of its collectives (default the activation's); ``unit``: the
        GEMM seconds it takes under ``compute="gemm"`` (default ``kind``). With fused
        chains, the block joins its stage's chain, written out (and returned) when
        ``read``, else None.
        """
        size = act if size is None else size
        if chains is not None:
            return _fused(chains, s, r, it, tag, extra, size, read,
                          gemm[unit or kind, "backward" if tag == "backward" else "forward"]
                          if gemm else flops / device_flops,
                          mem[(kind, tag)] if kind else 0.0,
                          pre if L.tp > 1 and before else None,
                          post if L.tp > 1 and after else None)
        group, prev = groups[(s, r)], last[(s, r)]
        deps = [[x for x in (prev[k], *_ops(None if extra is None else extra[k]))
                 if x is not None] for k in range(kept)]
        comm = None   # under the overlap: the block's last collective, beside its compute
        if L.tp > 1 and pre and before:
            op = b.collective(pre, group, size, deps=sum(deps, []), iteration=it, tag="tp",
                              element=c.element)
            if overlap:
                comm = op
            else:
                deps = [[op]] * kept
        work = ({"seconds": gemm[unit or kind, "backward" if tag == "backward" else "forward"]}
                if gemm else {"flops": flops})
        if flops is None:   # the compute ran before (a context-parallel ring): the collective
            ops = list(prev[:kept])
        else:
            ops = [b.compute(group[k], **work, deps=deps[k], iteration=it, tag=tag)
                   for k in range(kept)]
        if kind and mem[(kind, tag)]:
            ops = [b.compute(rank, seconds=mem[(kind, tag)], deps=[op], iteration=it, tag=tag)
                   for rank, op in zip(group, ops)]
        if L.tp > 1 and post and after:
            op = b.collective(post, group, size,
                              deps=([comm] if comm is not None else sum(deps, [])) if overlap
                              else ops, iteration=it, tag="tp", element=c.element)
            if overlap:
                comm = op
            else:
                ops = [op] * kept
        if comm is not None:   # the next block waits for the compute and the collectives
            ops = [b.compute(rank, seconds=0.0, deps=[x, comm], iteration=it, tag=tag)
                   for rank, x in zip(group, ops)]
        last[(s, r)] = ops = ops + pad if pad else ops
        return ops

    def dense(st, layer, s, r, it, tag, scale, extra=None):
        block(s, r, scale * st.mlp, it, tag, extra, kind="mlp")
        yield from ()

    mlp = make_mlp(p, block, last, dense)
    core = core_flops(c, L.tp, cp)

    def attention(st, s, r, it, tag, extra=None, core_only=False, read=False):
        """A layer's attention block (``core_only``: its core again, selective recomputation;
        ``read``: as for ``block``); with ``cp > 1`` its core a ring among the
        context-parallel ranks, yielded for :func:`workloads.transformer.context.ring.make_ring`
        to build."""
        scale = 2 if tag == "backward" else 1
        if cp == 1:
            if core_only:
                return block(s, r, st.core, it, tag, before=False, after=False, unit="core")
            return block(s, r, scale * st.attention, it, tag, extra, kind="attention", read=read)
        if not core_only:
            block(s, r, scale * (st.attention - core), it, tag, extra, after=False)
        last[(s, r)] = yield (s, tag, core, tag == "backward", last[(s, r)])
        return last[(s, r)] if core_only else block(s, r, None, it, tag, before=False)
    chain, at = [None] * L.tp, [0]   # each shard's last ZeRO-3 collective; the iteration
    gather = (make_gather(b, L, stages[0][0], (c.element, element), at, chain, bool(fsdp),
                          inflight_allgathers) if zstage == 3 else None)
    for it in range(iterations):
        at[0] = it
        gate = (make_gate(b, L, stages, element, sizes, c.element, last, it, built)
                if gathered else None)
        ready = _iteration(c, L, stages, m, pipeline, recompute, act, it, b, block, last,
                           chunks, scatter_gather and L.tp > 1, gather, mlp,
                           make_ring(b, c, L.tp, L.pp, L.dp // cp, cp, kept, it) if cp > 1
                           else make_meet(b, L, p, it, c.element), built, gate, chains, attention)
        if zstage == 3:   # the optimizer step waits for every reduce-scatter
            for r in range(L.dp):
                last[(0, r)] = list(chain)
        else:
            _gradients(L, stages, element, sizes, it, b, ready, last, zstage, c.element, kept,
                       p, experts, built, not gathered)
    t = b.build()
    return t if chains is None else t.with_metadata(fused_tp=chains.counts())


def _fused(chains, s, r, it, tag, extra, size, read, seconds, memory, pre, post):
    """One block joining (s, r)'s chain (:class:`workloads.transformer.fused.Chains`):
    [pre call] compute, memory [post call]; its ops when ``read``, else None."""
    inputs = (None if extra is None else
              [[x for x in _ops(e) if x is not None] for e in extra[:chains.kept]])
    if pre:
        chains.compute(s, r, 0.0, inputs, it, tag)
        chains.call(s, r, pre, size, it, tag)
        inputs = None
    chains.compute(s, r, seconds, inputs, it, tag)
    if memory:
        chains.compute(s, r, memory, None, it, tag)
    if post:
        chains.call(s, r, post, size, it, tag)
    return chains.flush(s, r) if read else None


def _iteration(c, L, stages, m, pipeline, recompute, act, it, b, block, last, chunks, regather,
               gather, mlp, meet, built, gate=None, chains=None, attention=None):
    """Add one iteration's forwards, backwards and pipeline messages; the gradient-ready ops.

    Stages are built in an order in which every message exists before the op
    that waits for it: a stage advances while the message its next op needs has
    been sent (the schedules never deadlock, so every stage gets to its end).
    """
    orders = [_pipeline.order(pipeline, L.pp, m, s, chunks) for s in range(L.pp)]
    sent = {}    # (direction, (stage, chunk) it goes to, micro-batch, replica) -> per shard
    ready = {}   # (stage, replica) -> {gradient source: op completing it}
    pos = [0] * L.pp
    while any(pos[s] < len(orders[s]) for s in range(L.pp)):
        moved = False
        for s in range(L.pp):
            while pos[s] < len(orders[s]):
                kind, j, k = orders[s][pos[s]]
                st = stages[s][k]
                if (_pipeline.source(kind, s, k, L.pp, chunks) is not None
                        and (kind, (s, k), j, 0) not in sent):
                    break

                def replica(r):
                    extra = sent.get((kind, (s, k), j, r))
                    if regather and extra:   # reassemble the scattered activation first
                        deps = extra + [x for x in last[(s, r)] if x is not None]
                        extra = [b.collective("allgather", L.tp_group(s, r), act, deps=deps,
                                              iteration=it, tag="pp", element=c.element)] * L.tp
                    hook = gather and _hook(last, s, r, j == m - 1)
                    if kind == "F":
                        first = gate and j == 0 and (lambda src, ex: gate(s, r, src, ex))
                        yield from _forward(st, s, r, it, block, extra, hook, mlp, first,
                                            attention)
                    else:
                        # fused chains write a layer's gradient op apart in the last
                        # micro-batch only, whose ops the buckets wait for
                        done = (ready.setdefault((s, r), {}) if chains is None or j == m - 1
                                else None)
                        yield from _backward(st, s, r, it, block, extra, recompute, done,
                                             hook, mlp, attention)
                    if chains is not None:
                        chains.flush(s, r)
                    to = _pipeline.target(kind, s, k, L.pp, chunks)
                    if to is not None:
                        sent[(kind, to, j, r)] = [
                            b.message(L.rank(s, r, x), L.rank(to[0], r, x),
                                      act // L.tp if regather else act, deps=[op],
                                      iteration=it, tag="pp")
                            for x, op in enumerate(last[(s, r)])]

                # the replicas meet at the experts' all-to-alls or ZeRO-3's hooks (or never)
                run_jointly([replica(r) for r in range(built)], gather or meet)
                pos[s] += 1
                moved = True
        if not moved:   # pragma: no cover - the schedules of workloads.transformer.pipeline never deadlock
            raise WorkloadError(f"pipeline schedule {pipeline!r} deadlocks")
    return ready


def _hook(last, s, r, sync):
    """ZeRO-3's hooks of replica ``r``: ``hook(name, unit, backward)`` yields its request.

    A round of requests is answered by :func:`workloads.transformer.zero.make_gather`:
    ``"pre"`` gets each shard's allgather of ``unit``; ``"post"`` hands over the
    unit's last compute ops (the stream's last), ``sync`` in the last micro-batch.
    """
    def hook(name, unit, backward):
        return (yield (name, unit, backward, sync, list(last[(s, r)])))
    return hook


def _forward(st, s, r, it, block, extra, hook, mlp, gate=None, attention=None):
    """One chunk's forward of one micro-batch on replica ``r`` of stage ``s`` (a generator).

    ``hook``, under ZeRO-3, runs a unit's pre and post hooks (:func:`_hook`);
    ``mlp`` builds a layer's MLP block (yielding at its all-to-alls); ``gate``, in
    the first micro-batch under Megatron's overlapped parameter allgather, adds the
    allgathers a block waits for (:func:`workloads.transformer.overlaps.param_gather.make_gate`);
    ``attention`` builds a layer's attention block (a generator: a ring under context
    parallelism).
    """
    embedding = gate and any(g == "embedding" for g, _ in st.grads)
    root = hook and any(g == "embedding" for g, _ in st.grads)
    if root:   # the root unit: the embedding computes nothing here, the logit layer uses it
        yield from hook("pre", "embedding", False)
    for layer in st.layers:
        if hook:
            extra = yield from hook("pre", layer, False)
        if gate:
            extra = gate((["embedding"] if embedding and layer == st.layers[0] else [])
                         + [layer], extra)
        yield from attention(st, s, r, it, "forward", extra)
        yield from mlp(st, layer, s, r, it, "forward", 1)
        if hook:
            yield from hook("post", layer, False)
        extra = None
    if st.logit:
        if gate:
            extra = gate(["logit"], extra)
        block(s, r, st.logit, it, "forward", extra, after=False, unit="logit")
    if root:
        yield from hook("post", "embedding", False)


def _backward(st, s, r, it, block, extra, recompute, done, hook, mlp, attention=None):
    """One chunk's backward (after its recomputed forward); ``done`` gets each gradient's op
    (None: nobody reads them, so fused chains need not write them apart)."""
    read, done = done is not None, {} if done is None else done
    root = hook and any(g == "embedding" for g, _ in st.grads)
    if root:   # the root unit again (gathered still under FSDP), for the tied logit layer
        extra = yield from hook("pre", "embedding", True)
    if st.logit:
        done["logit"] = block(s, r, 2 * st.logit, it, "backward", extra, before=False,
                              unit="logit", read=read)
        extra = None
    for layer in reversed(st.layers):
        if hook:
            extra = yield from hook("pre", layer, True)
        if recompute == "full":
            yield from attention(st, s, r, it, "recompute", extra)
            yield from mlp(st, layer, s, r, it, "recompute", 1)
            extra = None
        yield from mlp(st, layer, s, r, it, "backward", 2, extra)
        if st.core:   # selective recomputation: the attention core again, on the shard alone
            yield from attention(st, s, r, it, "recompute", core_only=True)
        done[layer] = done["expert", layer] = yield from attention(st, s, r, it, "backward",
                                                                       read=read)
        if hook:
            yield from hook("post", layer, True)
        extra = None
    if st.index == 0:
        done["embedding"] = done[st.layers[0]]
    if root:
        yield from hook("post", "embedding", True)


def _gradients(L, stages, element, sizes, it, b, ready, last, zstage, param_element,
               kept, p=None, experts=None, built=None, allgather=True):
    """Add the data-parallel buckets (stage ``s``'s of ``sizes[s]`` bytes) of the ``kept``
    shards; the next iteration's ops wait for them.

    Allreduces under plain data parallelism, reduce-scatters under ZeRO (then,
    for ZeRO-1/2 with ``allgather``, an allgather of the shard's updated parameters;
    without, it runs under the next forward: :mod:`workloads.transformer.overlaps.param_gather`). With experts
    (plan ``p``), their buckets go over the expert-data-parallel groups, in one
    chain with the dense ones in the order they complete.
    """
    name = "reduce_scatter" if zstage else "allreduce"
    built = L.dp if built is None else built
    for s, chunks in enumerate(stages):
        # the last chunk's gradients complete first (Megatron-LM: one DDP bucket set per chunk)
        dense = [g for st in reversed(chunks) for g in st.grads]
        plan = bucket_groups(L, p, dense, experts[s] if experts else [], element, sizes[s],
                             buckets)
        for k in range(kept):   # the shards written; the others' groups are their copies
            prev = {r: [] for r in range(L.dp)}   # each replica's last bucket
            for source, nbytes, groups in plan:
                for members in (g for g in groups if len(g) > 1):
                    deps = [ready[(s, r)][source][k] for r in members if r < built]
                    deps += [x for x in dict.fromkeys(sum((prev[r] for r in members), []))]
                    op = b.collective(name, tuple(L.rank(s, r, k) for r in members), nbytes,
                                      deps=deps, iteration=it, tag="dp", element=element)
                    prev.update((r, [op]) for r in members)
            if zstage in (1, 2) and allgather:
                params = sum(n for st in chunks for _, n in st.grads) * param_element
                op = b.collective("allgather", L.dp_group(s, k), params, deps=prev[0],
                                  iteration=it, tag="dp", element=param_element)
                prev = {r: [op] for r in range(L.dp)}
            for r in range(L.dp):
                shard = list(last[(s, r)])
                shard[k] = prev[r][0] if prev[r] else shard[k]
                last[(s, r)] = shard


def _ops(x):
    """An op or a tuple of ops (a block's inputs per shard) as a tuple."""
    return x if isinstance(x, tuple) else (x,)


def _shards(shards, L, p):
    """The shards whose ops the trace holds: ``shards``, a divisor of ``tp``."""
    shards = check_int(shards, "shards", error=WorkloadError)
    if shards < 1 or L.tp % shards:
        raise WorkloadError(f"shards {shards} does not divide tp {L.tp}")
    if p:
        raise WorkloadError("shards < tp with experts: their all-to-alls join the shards")
    return shards


def _replicas(replicas, L, p):
    """The replicas whose ops the trace holds: ``replicas``, a divisor of ``dp``, or all."""
    if replicas is None:
        return L.dp
    replicas = check_int(replicas, "replicas", error=WorkloadError)
    if L.dp % replicas:
        raise WorkloadError(f"replicas {replicas} does not divide dp {L.dp}")
    if p and replicas < L.dp:
        raise WorkloadError("replicas < dp with experts: their all-to-alls join the replicas")
    return replicas


def shift(tp, pp, dp, replicas):
    """The rank permutation that moves each replica ``replicas`` replicas on.

    ``sigma`` sends rank ``(s, d, x)`` (stage, replica, shard) to ``(s, d +
    replicas mod dp, x)``, which does the same work; each cycle's smallest rank
    is in replicas ``0 .. replicas - 1`` (:func:`schedule` with ``replicas=``).

    Examples
    --------
    >>> shift(1, 1, 4, 2).tolist()     # replicas 0, 1 are simulated; 2, 3 copy them
    [2, 3, 0, 1]
    """
    ranks = np.arange(Layout(tp, pp, dp).world).reshape(pp, dp, tp)   # Layout.rank's order
    return np.roll(ranks, -replicas, axis=1).reshape(-1)


def shard_shift(tp, pp, dp, order):
    """The rank permutation that moves each tensor shard to the next in ``order``.

    ``sigma`` sends rank ``(s, d, x)`` (stage, replica, shard) to ``(s, d,
    order[x])``, which does the same work when ``order`` is one cycle through the
    ``tp`` shards; each cycle's smallest rank is shard 0 (:func:`schedule` with
    ``shards=1``). Which cycles are symmetries depends on the machine: on a DGX H100,
    whose PCIe switches hold GPUs 0-1, 2-3, 4-5 and 6-7, ``0 -> 2 -> 4 -> 6 -> 1 -> 3 -> 5
    -> 7 -> 0`` is (:func:`netsim.network.automorphism.odometers`).

    Examples
    --------
    >>> shard_shift(4, 1, 1, [1, 2, 3, 0]).tolist()
    [1, 2, 3, 0]
    >>> shard_shift(2, 2, 1, [1, 0]).tolist()   # each stage's two shards swap
    [1, 0, 3, 2]
    """
    order = np.asarray(order, np.int64)
    ranks = np.arange(Layout(tp, pp, dp).world).reshape(pp, dp, tp)   # Layout.rank's order
    return ranks[:, :, order].reshape(-1)


def measure(trace):
    """Bytes per parallelism and the schedule's settings, read back from a transformer trace.

    Returns
    -------
    dict
        ``{"tp": bytes, "pp": bytes, "dp": bytes, "ep": bytes}`` (collectives as
        nccl-tests counts them, messages as sent; fused tensor-parallel calls counted),
        ``"calls"`` per tag, and the trace's metadata (``config``, ``tp``, ``pp``, ``dp``, ``microbatches``, ...).

    Examples
    --------
    >>> from workloads.transformer.flops import config
    >>> t = schedule(config(2, 64, 4, 32, 0, global_batch=4), tp=2, pp=2)
    >>> measure(t)["pp"]   # 4 micro-batches x 2 shards x (forward + backward) x 4096 B
    65536.0
    """
    out = {**dict(trace.metadata)}
    for name in TAGS:
        if name in trace.tags:
            sel = trace.tag == trace.tags.index(name)
            out[name], out[f"{name}_calls"] = float(trace.size[sel].sum()), int(sel.sum())
        else:
            out[name], out[f"{name}_calls"] = 0.0, 0
    for _, _, nbytes, count, _ in trace.metadata.get("fused_tp", ()):   # inside compute ops
        out["tp"] += count * nbytes
        out["tp_calls"] += count
    return out
