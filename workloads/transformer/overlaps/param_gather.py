"""ZeRO-1/2's parameter allgather overlapped with the next forward (Megatron's distributed optimizer).

Under ZeRO-1/2 each replica updates its ``1/d`` of the parameters and the replicas
then allgather the updated parameters (:mod:`workloads.transformer.zero`). By
default (``param_gather="after"``) one allgather of the stage's parameters follows
the last gradient reduce-scatter, before the next iteration. Megatron-Core's
distributed optimizer with ``--overlap-param-gather`` (Megatron-LM core_r0.8.0,
``megatron/core/optimizer/distrib_optimizer.py``) instead gathers bucket by bucket
under the next iteration's first forward (``param_gather="overlap"``):

* the buckets are the gradient buckets, gathered in the forward's order ("Add in
  reverse order in each model chunk since buckets start from the end of the model
  but we want all-gathers to run first for the start of the model",
  ``_get_model_param_buffer_dp_views``);
* the first bucket's allgather is dispatched when the iteration starts (``zero_grad``:
  "launch all-gather for first accessed bucket here before forward compute is
  initiated");
* a module's forward pre-hook waits for its bucket's allgather and then dispatches the
  next bucket's ("We can't pre-launch all-gathers for all buckets at once since we
  don't want to head-of-line block the compute kernels", ``_finish_param_sync_helper``):
  bucket ``i + 1``'s allgather starts once bucket ``i``'s has ended and the compute
  has reached bucket ``i``'s first module;
* only the first micro-batch's forward waits (the handles are cleared once waited on).

Here a bucket's first module is its first gradient source in the forward's order (a
layer's first block; the embedding with the stage's first layer; the logit layer's
block). :func:`forward_buckets` lists the buckets, :func:`make_gate` adds the
allgathers to a trace and :func:`first_forward` is the closed form's time of the
gated first forward. Left out: Megatron-Core's rule that stages after the first
keep all their gradients in one bucket (``DistributedDataParallel``: "Turn off
bucketing if we are on a pipeline stage that is not the first"): every stage here
uses the same bucket size. Refused with several chunks per stage and with uneven
stages (not modelled).
"""

from workloads.errors import WorkloadError
from workloads.transformer.stages import bucket_members

__all__ = ["PARAM_GATHER", "check_param_gather", "forward_buckets", "make_gate", "first_forward"]

#: Where ZeRO-1/2's parameter allgather runs: after the reduce-scatters, or overlapped.
PARAM_GATHER = ("after", "overlap")


def check_param_gather(param_gather, zstage, chunks=1, uneven=False):
    """Whether the allgather is overlapped (a bool), or WorkloadError.

    Examples
    --------
    >>> check_param_gather("overlap", 1), check_param_gather("after", 0)
    (True, False)
    >>> check_param_gather("overlap", 0)
    Traceback (most recent call last):
    ...
    workloads.errors.WorkloadError: param_gather='overlap' needs ZeRO-1 or ZeRO-2 (a parameter allgather to overlap), got zero=0
    """
    if param_gather not in PARAM_GATHER:
        raise WorkloadError(f"unknown param_gather {param_gather!r}; known: "
                            f"{', '.join(PARAM_GATHER)}")
    if param_gather == "after":
        return False
    if zstage not in (1, 2):
        raise WorkloadError(f"param_gather='overlap' needs ZeRO-1 or ZeRO-2 (a parameter "
                            f"allgather to overlap), got zero={zstage}")
    if chunks > 1 or uneven:
        raise WorkloadError("param_gather='overlap' is not modelled with several chunks per "
                            "stage or uneven stages")
    return True


def forward_buckets(st, element, bucket_bytes):
    """A stage's gradient buckets in the forward's order: ``(sources, parameters)`` each,
    the sources in the forward's order.

    Examples
    --------
    >>> from workloads.transformer.stages import Stage
    >>> st = Stage(0, (0, 1), 1.0, 1.0, 0.0, ((1, 10), (0, 10), ("embedding", 5)))
    >>> forward_buckets(st, 2, 40)   # backward order: (1, 0) fills 40 bytes, then the embedding
    [(('embedding',), 5), ((0, 1), 20)]
    """
    out = []
    for sources, nbytes in reversed(bucket_members(st.grads, element, bucket_bytes)):
        params = sum(n for g, n in st.grads if g in sources)
        out.append((tuple(reversed(sources)), params))
    return out


def make_gate(b, L, stages, element, sizes, param_element, last, it, built):
    """Add the first allgather of each stage; return ``gate(s, r, sources, extra)``.

    ``gate`` is called by stage ``s``'s replica ``r`` before the first micro-batch's
    block of gradient ``sources`` (forward order), with ``extra`` the block's other
    inputs per shard (or None); it returns ``extra`` with, per shard, the allgather
    of every bucket those sources open, and adds each next bucket's allgather
    (waiting for the previous one and for the block's inputs). ``sizes``: each stage's
    bucket size (:func:`workloads.transformer.stages.stage_bucket_bytes`).
    """
    plan = [forward_buckets(chunks[0], element, sizes[s]) for s, chunks in enumerate(stages)]
    opens = [{srcs[0]: i for i, (srcs, _) in enumerate(p)} for p in plan]
    gathers = {}

    def gather(s, k, i, deps):
        gathers[(s, k, i)] = b.collective("allgather", L.dp_group(s, k),
                                          plan[s][i][1] * param_element, deps=deps,
                                          iteration=it, tag="dp", element=param_element)

    for s in range(L.pp):
        for k in range(L.tp):
            gather(s, k, 0, [last[(s, r)][k] for r in range(built)
                             if last[(s, r)][k] is not None])

    def gate(s, r, sources, extra):
        waits = [[] if extra is None else list(_ops(extra[k])) for k in range(L.tp)]
        ready = [[x for x in [last[(s, r)][k], *waits[k]] if x is not None]
                 for k in range(L.tp)]
        for src in sources:
            i = opens[s].get(src)
            if i is None:
                continue
            for k in range(L.tp):
                if i + 1 < len(plan[s]) and (s, k, i + 1) not in gathers:
                    gather(s, k, i + 1, [gathers[(s, k, i)]] + ready[k])
                waits[k].append(gathers[(s, k, i)])
        return [tuple(w) for w in waits]
    return gate


def _ops(x):
    return x if isinstance(x, tuple) else (x,)


def first_forward(units, buckets, gathers):
    """The closed form's first forward on a stage: ``f(start) -> end`` (seconds).

    ``units``: ``(source, seconds)`` in the forward's order (the embedding 0 s, before
    the first layer); ``buckets``: :func:`forward_buckets`; ``gathers``: each bucket's
    allgather seconds. The first allgather starts at 0 (the iteration's start).

    Examples
    --------
    Two buckets of one layer each, gathers of 3 s, layers of 1 s: from 0, the first
    layer waits until 3, the second gather runs 3-6, the second layer 6-7; from 10
    (the input arrives late), the second gather starts when the compute reaches the
    first layer, 10-13, and the second layer runs 13-14.

    >>> f = first_forward([(0, 1.0), (1, 1.0)], [((0,), 1), ((1,), 1)], [3.0, 3.0])
    >>> f(0.0), f(10.0)
    (7.0, 14.0)
    """
    opens = {srcs[0]: i for i, (srcs, _) in enumerate(buckets)}

    def f(start):
        t, end = start, {0: gathers[0]}
        for src, seconds in units:
            i = opens.get(src)
            if i is not None:
                if i + 1 < len(buckets):
                    end[i + 1] = max(end[i], t) + gathers[i + 1]
                t = max(t, end[i])
            t += seconds
        return t
    return f
