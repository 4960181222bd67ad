"""Time per iteration of transformer training in closed form: compute, bubble, exposed traffic.

The closed form of :func:`workloads.transformer.iteration.schedule`'s trace. With ``m``
micro-batches, ``p`` stages of ``v`` chunks each (``v = 1`` but for the
interleaved schedule), and a chunk's forward and backward of one micro-batch
taking ``t_f = x_f + c_f`` and ``t_b = x_b + c_b`` (compute ``x``: FLOPs at the
rate ``F``, or with ``compute="gemm"`` each GEMM's time from its shape,
:mod:`workloads.transformer.gemm`; plus with ``memory_bandwidth`` the layers' memory traffic,
:mod:`workloads.transformer.compute`; and the blocking tensor-parallel
collectives ``c``), the pipeline takes
(Narayanan et al. SC'21, section 2.2):

    ``T = (v m + p - 1)(t_f + t_b) + e_pp + e_dp``

split into

============ ==================================================================
term         meaning
============ ==================================================================
compute      ``v m (x_f + x_b)``: the stage's own work
bubble       ``(p - 1)(x_f + x_b)``: ``(p - 1)/(v m)`` of the compute
tp           ``(v m + p - 1)(c_f + c_b)``: tensor-parallel collectives, all exposed
pp           ``e_pp``: what the hops between stages (Hockney's ``alpha + n beta``
             each) add to the schedule's time, from its exact timeline
             (:func:`workloads.transformer.pipeline.timeline`): ``2 (p - 1)`` hops under
             GPipe, more under 1F1B, whose steady state waits for gradients;
             with ``scatter_gather`` a hop carries ``1/t`` of the activation
             and the receiver's stream spends a ring allgather of it among
             the ``t`` shards before the op (on the tensor-parallel links)
dp           ``e_dp``: what the gradient buckets' allreduces (one after another,
             each from when the last backward completes it) leave after the last
             backward, the most of any stage
ep           ``(v m + p - 1) a``: the experts' all-to-alls (``a`` per chunk and
             micro-batch, forward and backward, all exposed: they block the
             stream; :mod:`workloads.transformer.moe`), taken out of the
             blocking time ``c_f + c_b``; 0 without experts
cp           ``(v m + p - 1) r``: what the context-parallel rings add to the
             attention cores' compute (``r`` per chunk and micro-batch, forward,
             recomputed forward and backward;
             :func:`workloads.transformer.context.ring_exposed`: a forward ring takes
             ``x + (cp - 1) max(x, c)``, a backward ring ``sum_i max(2 x, c_i)``),
             taken out of ``c_f + c_b``; 0 without context parallelism
============ ==================================================================

**Uneven stages or chunks** (``first_stage_layers``, ``last_stage_layers``:
Megatron-LM's split, :func:`workloads.transformer.stages.stage_layers`; or, with a
vocabulary, the logit layer in the last chunk of the last stage): each stage ``s``
(each of its chunks) has its own ``t_f,s`` and ``t_b,s`` and the slowest sets the
pipeline's rate. The time is the schedule's exact timeline over them
(:func:`workloads.transformer.pipeline.timeline`): under GPipe

    ``T = sum_s (t_f,s + t_b,s) + (m - 1)(max_s t_f,s + max_s t_b,s) + e_pp + e_dp``

(1F1B at most that: its light stages fill in while the slowest waits). Then
compute is the slowest stage's ``m (x_f + x_b)``, the bubble what the
timeline of compute alone adds to it, and ``tp`` what the collectives add to
that timeline. Chunks all alike (an even split, ``vocab = 0``) keep the formula
above (a uniform pipeline). ``t_forward`` and ``t_backward`` in the result are the
slowest stage's (the mean of its chunks'). Communication is exact with no
contention (with several chunks, the gradient buckets' start is approximate).
Each collective costs ``price``'s seconds for it where the caller gives them (the
library the replay runs, e.g. NCCL's plan of the call replayed alone:
:class:`netsim.comm.priced.NcclPrices`), else what MPICH's ring costs
(:mod:`netsim.costmodel`: ``ring_allreduce``, ``ring_allgather``,
``ring_reduce_scatter``; ``alltoall``) on each group's ``(alpha, beta)``
(:func:`workloads.transformer.prices.seconds`).
"""

from netsim import costmodel
from netsim.checks import check_real

from workloads.errors import WorkloadError

from workloads.transformer import pipeline as _pipeline
from workloads.overlap import DDP_BUCKET_BYTES
from workloads.transformer.flops import activation_bytes
from workloads.transformer.moe import (bucket_costs, chunk_alltoall, chunk_delta, dense_stages,
                              expert_grads, is_moe, layer_delta, plan)
from workloads.transformer.stages import (buckets, check, check_options as _check_stages,
                                          stage_bucket_bytes)
from workloads.transformer.compute import BLOCKS, memory_seconds
from workloads.transformer.context.ring import (check_combination, core_flops, kv_bytes,
                                           ring_exposed)
from workloads.transformer.overlaps.param_gather import (check_param_gather, first_forward,
                                                           forward_buckets)
from workloads.transformer.overlaps.tp import check_tp_overlap, exposed
from workloads.transformer.gemm import block_seconds, check_compute, stage_seconds
from workloads.transformer.zero import INFLIGHT_ALLGATHERS, check_zero, zero3_timeline
from workloads.transformer.prices import seconds as _seconds

__all__ = ["closed_form", "check_options", "TERMS", "timelines"]

#: The terms of :func:`closed_form`, in the order they add up to ``time``.
TERMS = ("compute", "bubble", "tp", "pp", "dp", "ep", "cp")


def _cost(links, name):
    """``(alpha, beta)`` of a parallelism's group; (0, 0): free."""
    return (links or {}).get(name) or (0.0, 0.0)


def closed_form(c, tp=1, pp=1, dp=1, device_flops=None, pipeline="1f1b", recompute="full",
                sequence_parallel=False, bucket_bytes=None, grad_element=None, links=None,
                chunks=1, scatter_gather=False, zero=0, fsdp=False, memory_bandwidth=None,
                moe=None, ep=1, first_stage_layers=None, last_stage_layers=None,
                inflight_allgathers=INFLIGHT_ALLGATHERS, compute="flops", device=None,
                price=None, tp_overlap=False, param_gather="after", stage_buckets="every", cp=1):
    """Time per iteration of :func:`workloads.transformer.iteration.schedule`'s trace, term by term.

    Parameters
    ----------
    c, tp, pp, dp, pipeline, recompute, sequence_parallel, bucket_bytes, grad_element, chunks
        As for :func:`workloads.transformer.iteration.schedule`.
    device_flops : float
        FLOP/s of a rank.
    links : dict, optional
        ``{"tp": (alpha, beta), "pp": ..., "dp": ...}``: seconds and seconds per
        byte of each parallelism's links (e.g.
        :func:`netsim.costmodel.alpha_beta` of a group's placement); a missing
        entry costs nothing.
    scatter_gather, zero, fsdp, memory_bandwidth : bool, int, bool, float
        As for :func:`workloads.transformer.iteration.schedule`. Under ZeRO-1/2 the
        buckets are reduce-scatters and an allgather of the parameters follows
        them; under ZeRO-3 (one stage) the exact timeline of
        :func:`workloads.transformer.zero.zero3_timeline` (the hooks of
        :class:`workloads.transformer.zero.Issue`: one stream, FSDP's rate
        limiter, the root kept gathered under ``fsdp``) is the time, and ``dp``
        is all of it that is not compute or tensor-parallel time.
    inflight_allgathers : int or None
        As for :func:`workloads.transformer.iteration.schedule`.
    moe, ep : workloads.transformer.moe.Moe, int
        As for :func:`workloads.transformer.iteration.schedule`: each MoE layer adds its
        router and experts' FLOPs and its blocking all-to-alls (``links["ep"]``,
        :func:`netsim.costmodel.alltoall`) and tensor-parallel gather and
        scatter to the chunk's ``t_f`` and ``t_b``
        (:func:`workloads.transformer.moe.layer_delta`); the expert buckets
        cost ``links["edp"]``'s ring allreduce over ``dp / ep``, in the dense
        buckets' chain.
    first_stage_layers, last_stage_layers : int, optional
        An uneven split of the layers (the module's docstring: each stage's own
        times in the schedule's timeline).
    compute, device : {"flops", "gemm"}, netsim.costmodel.gemm.GemmDevice
        As for :func:`workloads.transformer.iteration.schedule`: under
        ``"gemm"`` a layer's and the logit layer's compute seconds are their
        GEMMs' (:func:`workloads.transformer.gemm.stage_seconds`) and
        ``device_flops`` is not read.
    price : callable, optional
        ``price(group, op, nbytes)``: the seconds of one collective on the first group
        of ``"tp"``, ``"dp"``, ``"ep"`` or ``"edp"`` as the replay runs it, or None
        for MPICH's ring on ``links`` (:func:`workloads.transformer.prices.seconds`).
    tp_overlap : bool
        As for :func:`workloads.transformer.iteration.schedule`: a block's collectives
        add only what exceeds its compute
        (:func:`workloads.transformer.overlaps.tp.exposed`) to ``t_f``, ``t_b`` and the
        ``tp`` term.
    param_gather : {"after", "overlap"}
        As for :func:`workloads.transformer.iteration.schedule`: overlapped, each stage's
        first forward is timed with its buckets' allgathers
        (:func:`workloads.transformer.overlaps.param_gather.first_forward`) in the pipeline's
        timeline, and what they delay the pipeline is counted in ``dp``.
    stage_buckets : {"every", "first"}
        As for :func:`workloads.transformer.iteration.schedule`: with ``"first"`` every
        stage after the first reduces (and gathers) its gradients in one bucket.
    cp : int
        As for :func:`workloads.transformer.iteration.schedule`: the rings' messages cost
        ``links["cp"]`` (Hockney's ``alpha + n beta`` each, every ring hop alike), the
        gradient buckets ``links["dp"]`` (or ``price``) over the ``dp cp`` ranks.

    Returns
    -------
    dict
        ``time`` and the :data:`TERMS` (seconds), ``microbatches``, the
        ``bubble_fraction`` ``(p - 1)/(v m)`` and a chunk's ``t_forward`` and
        ``t_backward`` on the slowest stage.

    Examples
    --------
    Four stages, eight micro-batches, no communication: a bubble of 3/8.

    >>> from workloads.transformer.flops import config
    >>> c = config(4, 64, 4, 32, 0, global_batch=8)
    >>> f = closed_form(c, pp=4, device_flops=1e9)
    >>> round(f["bubble"] / f["compute"], 12), f["time"] == f["compute"] + f["bubble"]
    (0.375, True)
    """
    bucket_bytes = DDP_BUCKET_BYTES if bucket_bytes is None else bucket_bytes
    check_combination(cp, compute=compute)
    L, stages = check(c, tp, pp, dp, pipeline, recompute, bucket_bytes, 1, chunks,
                      first_stage_layers, last_stage_layers, cp)
    zstage, p, overlap, gathered = check_options(
        c, tp, pp, dp, pipeline, recompute, sequence_parallel, bucket_bytes, chunks, zero, fsdp,
        memory_bandwidth is not None, moe, ep, first_stage_layers, last_stage_layers,
        inflight_allgathers, tp_overlap, param_gather, stage_buckets, cp)[1:]
    sizes = stage_bucket_bytes(bucket_bytes, L.pp, stage_buckets, chunks)
    dev = check_compute(compute, device, c, moe)
    gemm = block_seconds(c, L.tp, dev) if dev else None
    element = grad_element or c.element
    m = c.global_batch // (c.micro_batch * (L.dp // cp))   # L.dp: the dp cp replicas
    act = activation_bytes(c) // cp

    def cost(group, op, members, nbytes):
        return _seconds(group, op, members, nbytes, links, price)

    if sequence_parallel:
        pre, post = cost("tp", "allgather", L.tp, act), cost("tp", "reduce_scatter", L.tp, act)
    else:
        pre, post = 0.0, cost("tp", "allreduce", L.tp, act)
    redo = recompute == "full"
    F = (check_real(device_flops, "device_flops", lo=0, strict=True, error=WorkloadError)
         if gemm is None else None)
    ms = memory_seconds(c, L.tp, sequence_parallel, memory_bandwidth)
    mem = _layer_memory(ms, redo)
    # per chunk: forward compute, backward compute, forward comm, backward comm (seconds)
    per = [[_chunk(st, pre, post, redo, F, mem, gemm, ms if overlap else None)
            for st in chunk_list] for chunk_list in stages]
    ring_f, ring_b = ring_exposed(cp, core_flops(c, L.tp, cp) / (cp * F) if cp > 1 else 0.0,
                                  kv_bytes(c, L.tp, cp), *_cost(links, "cp"))
    ring_b += ring_f * (redo or recompute == "selective")   # the recomputed forward's ring
    if cp > 1:   # each layer's rings, blocking the stream as the collectives do
        per = [[(xf, xb, cf + len(st.layers) * ring_f, cb + len(st.layers) * ring_b)
                for (xf, xb, cf, cb), st in zip(rows, chunk_list)]
               for rows, chunk_list in zip(per, stages)]
    if p:   # the MoE layers' extra work, and their dense and expert gradients apart
        per = [[tuple(x + y for x, y in zip(row, chunk_delta(st, p, st.mlp, pre, post, redo,
                                                                links, F, price)))
                for row, st in zip(rows, chunk_list)] for rows, chunk_list in zip(per, stages)]
        experts, stages = expert_grads(stages, p), dense_stages(stages, p)
    # the slowest stage, its chunks taken as alike (their mean)
    means = [tuple(sum(col) / chunks for col in zip(*row)) for row in per]
    slowest = max(range(L.pp), key=lambda s: sum(means[s]))
    xf, xb, cf, cb = means[slowest]
    a2a = sum(chunk_alltoall(st, p, redo, links, price) for st in stages[slowest]) / chunks
    rings = sum(len(st.layers) for st in stages[slowest]) * (ring_f + ring_b) / chunks
    a_pp, b_pp = _cost(links, "pp")
    gather = scatter_gather and L.tp > 1 and L.pp > 1
    hop = costmodel.hockney(act // L.tp if gather else act, a_pp, b_pp) if L.pp > 1 else 0.0
    regather = cost("tp", "allgather", L.tp, act) if gather else 0.0
    t_f, t_b = xf + cf, xb + cb
    v = chunks
    ideal = _pipeline.iteration_time(L.pp, m, t_f, t_b, v)
    timed, ends = _pipeline.timeline(pipeline, L.pp, m, t_f, t_b, hop, v, regather)
    # without hops the same time as the formula, which is free of the rounding of a long sum
    pipe = ideal if not hop and not regather else timed
    compute, e_ep = m * v * (xf + xb), (m * v + L.pp - 1) * a2a
    e_cp = (m * v + L.pp - 1) * rings
    bubble = (L.pp - 1) * (xf + xb)
    e_tp = (m * v + L.pp - 1) * (cf + cb - a2a - rings) if L.tp > 1 else 0.0
    if len({row for rows in per for row in rows}) > 1:
        # uneven stages or chunks: each its own times, the slowest setting the rate (the
        # docstring)
        pipe, ends, ideal, work = _uneven(pipeline, L.pp, m, per, hop, regather, v)
        bubble, e_tp, timed = work - compute, ideal - work - e_ep - e_cp, pipe
    delay = 0.0
    if gathered:   # each stage's first forward waits for its buckets' allgathers
        first = [_first_forward(st[0], row[0], F, gemm, pre, overlap, element, size,
                                c.element, L.dp, links, price)
                 for st, row, size in zip(stages, per, sizes)]
        gated, ends = _pipeline.timeline(pipeline, L.pp, m, *_rows(per), hop, v, regather,
                                         first)
        delay = gated - timed
    out = {"compute": compute, "bubble": bubble, "tp": e_tp, "pp": pipe - ideal,
           "dp": delay + _exposed_dp(L, stages, per, ends, pipe + delay, F, element,
                                     sizes, pre + post, post, redo,
                                     zstage, c.element, mem[1], p, experts if p else None,
                                     links, gemm, price, not gathered, overlap, ring_b),
           "ep": e_ep, "cp": e_cp}
    if zstage == 3:
        st, n = stages[0][0], 2 * (pre + post)
        lf, lb, gf, gb = _times(st, F, redo, gemm)
        times = (lf + mem[0] + n, lb + mem[1] + n * (1 + redo), gf + (pre if st.logit else 0),
                 gb + (post if st.logit else 0))
        end = max(zero3_timeline(st, _pipeline.order(pipeline, 1, m, 0), times,
                                 (c.element, element), L.dp, _cost(links, "dp"), bool(fsdp),
                                 inflight_allgathers, price))
        out["dp"] = end - out["compute"] - out["tp"]
    out["time"] = sum(out[k] for k in TERMS)
    out.update(microbatches=m, bubble_fraction=_pipeline.bubble_fraction(L.pp, m, v),
               t_forward=t_f, t_backward=t_b)
    return out


def check_options(c, tp=1, pp=1, dp=1, pipeline="1f1b", recompute="full",
                  sequence_parallel=False, bucket_bytes=DDP_BUCKET_BYTES, chunks=1, zero=0,
                  fsdp=False, memory=False, moe=None, ep=1, first_stage_layers=None,
                  last_stage_layers=None, inflight_allgathers=INFLIGHT_ALLGATHERS,
                  tp_overlap=False, param_gather="after", stage_buckets="every", cp=1):
    """Every check :func:`closed_form` makes of its options, without listing any layer.

    The layout's (:func:`workloads.transformer.stages.check_options`), the ZeRO stage's, the
    experts' plan (``memory``: :func:`closed_form`'s ``memory_bandwidth`` is given), the
    tensor-parallel overlap's and the parameter gather's: a command checks them all before
    it announces or starts any work.

    Returns
    -------
    tuple
        ``(layout, ZeRO stage, experts' plan or None, tensor-parallel overlap,
        parameter gather overlapped)``.

    Examples
    --------
    >>> from workloads.transformer.flops import config
    >>> check_options(config(4, 64, 4, 32, 0, global_batch=8), 1, 1, 2, zero=1)[:2]
    (Layout(tp=1, pp=1, dp=2), 1)
    >>> check_options(config(4, 64, 4, 32, 0, global_batch=8), 1, 1, 1, zero=1)
    Traceback (most recent call last):
    ...
    workloads.errors.WorkloadError: ZeRO-1 shards over data-parallel replicas; dp is 1
    """
    check_combination(cp, zero, fsdp, moe, "flops", memory, tp_overlap, param_gather)
    L = _check_stages(c, tp, pp, dp, pipeline, recompute, bucket_bytes, 1, chunks,
                      first_stage_layers, last_stage_layers, cp)
    zstage = check_zero(zero, fsdp, L._replace(dp=L.dp * cp), inflight_allgathers)
    p = plan(c, L, moe, ep, sequence_parallel, bool(zstage), memory)
    overlap = check_tp_overlap(tp_overlap, sequence_parallel, zstage, fsdp, moe) and L.tp > 1
    gathered = check_param_gather(param_gather, zstage, chunks,
                                  first_stage_layers is not None or last_stage_layers is not None)
    stage_bucket_bytes(bucket_bytes, L.pp, stage_buckets, chunks)   # its choice checked
    return L, zstage, p, overlap, gathered


def timelines(pp, chunks=1, zero=0, fsdp=False, param_gather="after"):
    """How many times :func:`closed_form` walks every micro-batch pass of a layout, at most.

    Its pipeline's timeline once; with more than one stage or chunk the embedding and the
    logit layer make the stages uneven (any model with a vocabulary), and the timeline runs
    three times more (with its hops, without them, compute alone: ``_uneven``); once more
    gated by the overlapped parameter allgather, and once more for ZeRO-3's (FSDP's)
    gather timeline. The work estimate prices the passes this many times
    (:func:`studies.scaling.run_length.check_passes`).

    Examples
    --------
    >>> timelines(1), timelines(4), timelines(2, param_gather="overlap"), timelines(1, zero=3)
    (1, 4, 5, 2)
    """
    return ((1 if pp * chunks == 1 else 4) + (param_gather == "overlap")
            + (zero == 3 or bool(fsdp)))


def _first_forward(st, row, F, gemm, pre, overlap, element, bucket_bytes, param_element, dp,
                   links, price):
    """A stage's first forward under the overlapped parameter allgather, ``f(start) -> end``:
    its units (the embedding, each layer, the logit layer) in the forward's order, their
    buckets and allgathers (:func:`workloads.transformer.overlaps.param_gather.first_forward`)."""
    xf, _, cf, _ = row
    logit = _logit(st, F, gemm, pre, overlap, False)
    layer = (xf + cf - logit) / len(st.layers)
    units = ([("embedding", 0.0)] if any(g == "embedding" for g, _ in st.grads) else [])
    units += [(k, layer) for k in st.layers] + ([("logit", logit)] if st.logit else [])
    buckets = forward_buckets(st, element, bucket_bytes)
    gathers = [_seconds("dp", "allgather", dp, n * param_element, links, price)
               for _, n in buckets]
    return first_forward(units, buckets, gathers)


def _logit(st, F, gemm, comm, overlap, backward):
    """The logit layer's forward (or backward) seconds with its collective of ``comm``
    seconds (beside it under ``overlap``); 0 off the last stage."""
    if not st.logit:
        return 0.0
    x = _times(st, F, False, gemm)[3 if backward else 2]
    return x + (exposed(x, comm) if overlap else comm)


def _uneven(pipeline, pp, m, per, hop, regather, chunks):
    """A pipeline of stages or chunks of uneven work: ``(time, each stage's end, time
    without hops, time of compute alone)`` from the schedule's timeline over each stage's
    each chunk's ``(x_f, x_b, c_f, c_b)`` in ``per``."""
    t_f, t_b = _rows(per)
    pipe, ends = _pipeline.timeline(pipeline, pp, m, t_f, t_b, hop, chunks, regather)
    ideal = _pipeline.timeline(pipeline, pp, m, t_f, t_b, chunks=chunks)[0]
    work = _pipeline.timeline(pipeline, pp, m, *_rows(per, comm=False), chunks=chunks)[0]
    return pipe, ends, ideal, work


def _rows(per, comm=True):
    """Each stage's each chunk's forward and backward seconds, ``x_f + c_f`` and ``x_b +
    c_b`` of its ``(x_f, x_b, c_f, c_b)`` in ``per`` (the compute alone without ``comm``)."""
    return ([[x[0] + x[2] if comm else x[0] for x in rows] for rows in per],
            [[x[1] + x[3] if comm else x[1] for x in rows] for rows in per])


def _layer_memory(ms, redo):
    """One layer's memory seconds in its forward and in its backward (with the recomputed forward)."""
    forward = sum(ms[(blk, "forward")] for blk in BLOCKS)
    backward = sum(ms[(blk, "backward")] + redo * ms[(blk, "recompute")] for blk in BLOCKS)
    return forward, backward


def _times(st, F, redo, gemm=None):
    """A layer's forward and backward (with its recomputation) and the logit layer's forward and
    backward compute seconds: FLOPs at ``F``, or the GEMMs' seconds of table ``gemm``."""
    if gemm is not None:
        return stage_seconds(gemm, st, redo)
    return ((st.attention + st.mlp) / F, ((2 + redo) * (st.attention + st.mlp) + st.core) / F,
            st.logit / F, 2 * st.logit / F)


def _chunk(st, pre, post, redo, F, mem, gemm=None, ms=None):
    """A chunk's forward and backward compute seconds and blocking tensor-parallel time per
    micro-batch; ``mem``: a layer's memory seconds (forward, backward); ``gemm``: the GEMM
    seconds of :func:`workloads.transformer.gemm.block_seconds` (None: FLOPs at ``F``);
    ``ms``: each block's memory seconds, given under the tensor-parallel overlap
    (:func:`_overlapped`)."""
    if ms is not None:
        return _overlapped(st, pre, post, redo, F, gemm, ms)
    n, block = len(st.layers), pre + post
    if gemm is None:
        xf = (n * (st.attention + st.mlp) + st.logit) / F + n * mem[0]
        xb = ((n * (2 + redo) * (st.attention + st.mlp) + n * st.core + 2 * st.logit) / F
              + n * mem[1])
    else:
        lf, lb, gf, gb = stage_seconds(gemm, st, redo)
        xf, xb = n * lf + gf + n * mem[0], n * lb + gb + n * mem[1]
    cf = 2 * n * block + (pre if st.logit else 0)
    cb = 2 * n * block * (1 + redo) + (post if st.logit else 0)
    return xf, xb, cf, cb


def _overlapped(st, pre, post, redo, F, gemm, ms):
    """:func:`_chunk` under ``tp_overlap``: each block's compute seconds as the trace's ops
    (its GEMMs', or its FLOPs at ``F``, plus its memory op), its collectives adding
    only what exceeds them (:func:`workloads.transformer.overlaps.tp.exposed`)."""
    flops = {"attention": st.attention, "mlp": st.mlp, "logit": st.logit}
    scale = {"forward": 1, "recompute": 1, "backward": 2}

    def x(unit, tag):
        pas = "backward" if tag == "backward" else "forward"
        t = gemm[unit, pas] if gemm is not None else scale[tag] * flops[unit] / F
        return t + ms.get((unit, tag), 0.0)
    n, block = len(st.layers), pre + post
    passes = {"forward": ("forward",), "backward": ("backward",) + ("recompute",) * redo}
    out = []
    for name, tags in passes.items():
        blocks = [x(u, tag) for tag in tags for u in BLOCKS]
        compute = n * sum(blocks)
        comm = n * sum(exposed(t, block) for t in blocks)
        if st.logit:
            t = x("logit", name)
            compute, comm = compute + t, comm + exposed(t, pre if name == "forward" else post)
        if name == "backward" and st.core:   # selective: the attention core, no collective
            compute += n * (gemm["core", "forward"] if gemm is not None else st.core / F)
        out.append((compute, comm))
    (xf, cf), (xb, cb) = out
    return xf, xb, cf, cb


def _exposed_dp(L, stages, per, ends, pipe, F, element, sizes, block_comm, post,
                redo, zstage=0, param_element=2, layer_memory=0.0, p=None, experts=None,
                links=None, gemm=None, price=None, allgather=True, overlap=False, ring=0.0):
    """The gradient buckets' time after the pipeline's end, the most of any stage.

    Allreduces, or under ZeRO-1/2 reduce-scatters followed by an allgather of
    the stage's parameters.

    Stage ``s``'s last backward ends at ``ends[s]`` (:func:`workloads.transformer.pipeline.timeline`);
    within it the sources complete in backward order, each after its own backward time
    (with several chunks, the last backward of each, taken as run back to back, the last
    chunk first). An MoE layer (plan ``p``) takes its extra time
    (:func:`workloads.transformer.moe.layer_delta`); the expert buckets
    (``experts[s]``) complete with their layers. ``ring``: what a layer's context-parallel
    rings add to its backward (with its recomputed forward's).
    """
    if L.dp == 1 or zstage == 3:
        return 0.0
    name = "reduce_scatter" if zstage else "allreduce"

    def reduce(members, nbytes, group="dp"):
        return _seconds(group, name, members, nbytes, links, price)
    worst = 0.0
    for s, chunks in enumerate(stages):
        t = ends[s] - sum(x[1] + x[3] for x in per[s])
        done, grads = {}, []
        for st, row in zip(reversed(chunks), reversed(per[s])):
            # the logit layer's backward comes first, whether or not it holds its own
            # gradient (with one stage the embedding's is the tied word embedding's)
            _, back, _, logit = _times(st, F, redo, gemm)
            t += logit + (post if st.logit else 0)
            layer = back + layer_memory + 2 * block_comm * (1 + redo) + ring
            if overlap:   # the tensor-parallel collectives beside the compute: the chunk's row
                beside = _logit(st, F, gemm, post, True, True)
                t += beside - logit - (post if st.logit else 0)
                layer = (row[1] + row[3] - beside) / len(st.layers)
            if p:
                flops, _, cb = layer_delta(p, block_comm - post, post, redo, links, price)
                moe = (2 + redo) * (flops - st.mlp) / F + cb
            for source, _ in st.grads:
                if source not in ("embedding", "logit"):
                    t += layer + (moe if p and is_moe(p.moe, source) else 0.0)
                done[source] = done["expert", source] = t
            grads += st.grads
        finish = 0.0
        if p:
            plan = bucket_costs(L, p, grads, experts[s], element, sizes[s], buckets, reduce)
        else:
            plan = [(g, reduce(L.dp, n)) for g, n in buckets(grads, element, sizes[s])]
        for source, cost in plan:
            finish = max(finish, done[source]) + cost
        if zstage and allgather:
            finish += _seconds("dp", "allgather", L.dp,
                               sum(n for _, n in grads) * param_element, links, price)
        worst = max(worst, finish - pipe)
    return max(0.0, worst)
