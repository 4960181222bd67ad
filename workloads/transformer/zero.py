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
(and, tied to the word embedding, the logit layer), gathered like the layers:
before its forward and before its backward, as ZeRO's analysis counts (PyTorch
FSDP keeps the root unit gathered between the two instead, one allgather less
per micro-batch). The allgathers run one
after another on their own stream, each as soon as the one before it is done
(prefetching without a limit); a layer's compute waits for its unit's. Its
gradients are reduce-scattered once per iteration, when the last micro-batch's
backward has completed them (gradient accumulation without resharding the
gradients, as FSDP's ``no_sync``; DeepSpeed's ZeRO-3 instead reduces every
micro-batch: the same at ``m = 1``). Stage 3 needs one pipeline stage
(DeepSpeed refuses ZeRO-2 and ZeRO-3 with pipeline parallelism; so does this
module for stage 3).

References
----------
.. [1] S. Rajbhandari, J. Rasley, O. Ruwase and Y. He, "ZeRO: memory optimizations
   toward training trillion parameter models", SC'20, arXiv:1910.02054.
"""

from workloads.errors import WorkloadError
from workloads.transformer.prices import seconds

__all__ = ["ZERO_STAGES", "check_zero", "make_gather", "zero3_timeline"]

#: ZeRO's stages: 0 is plain data parallelism (gradient allreduce).
ZERO_STAGES = (0, 1, 2, 3)


def check_zero(zero, fsdp, L):
    """The ZeRO stage a schedule runs: ``zero``, or 3 with ``fsdp``.

    Raises
    ------
    WorkloadError
        For an unknown stage, FSDP with a ZeRO stage other than 0 or 3,
        sharding without data parallelism, or stage 3 with pipeline stages.

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
    return stage


def make_gather(b, L, units, element, it, chain):
    """A function ``gather(stage, key)``: each shard's allgather of unit ``key[-1]``.

    The first replica to ask for ``key`` creates the allgathers (one per
    tensor-parallel shard, among that shard's data-parallel replicas), each
    after the previous one of its shard (``chain[k]``); later replicas get the
    same ops.

    Examples
    --------
    >>> from netsim.trace.core import TraceBuilder
    >>> from workloads.transformer.layout import Layout
    >>> b = TraceBuilder(2)
    >>> g = make_gather(b, Layout(1, 1, 2), {0: 100}, 2, 0, [None])
    >>> g(0, (0, "F", 0)) == g(0, (0, "F", 0))
    True
    >>> t = b.build(); t.num_ops, float(t.size[0])
    (1, 200.0)
    """
    made = {}

    def gather(s, key):
        ops = []
        for k in range(L.tp):
            if (key, k) not in made:
                deps = [] if chain[k] is None else [chain[k]]
                made[(key, k)] = chain[k] = b.collective(
                    "allgather", L.dp_group(s, k), units[key[-1]] * element, deps=deps,
                    iteration=it, tag="dp", element=element)
            ops.append(made[(key, k)])
        return ops

    return gather


def zero3_timeline(st, order, times, element, dp, ab, price=None):
    """One iteration of the one stage under ZeRO-3: ``(end of compute, end of the gradients)``.

    Parameters
    ----------
    st : workloads.transformer.stages.Stage
        The only stage.
    order : list of (kind, micro-batch, chunk)
        The stage's ops (:func:`workloads.transformer.pipeline.order`).
    times : (float, float, float, float)
        Seconds of one layer's forward and backward (with recomputation and
        blocking tensor-parallel time) and of the logit layer's forward and backward.
    element : int
        Bytes per parameter and gradient value.
    dp : int
        Replicas.
    ab : (float, float)
        ``(alpha, beta)`` of the data-parallel group.
    price : callable, optional
        ``price(op, nbytes)``: a call's seconds as the replay runs it (None: MPICH's
        ring on ``ab``).

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
    >>> zero3_timeline(st, order, (1.0, 3.0, 0.0, 0.0), 2, 2, (0.0, 0.0))
    (8.0, 8.0)
    """
    layer_f, layer_b, logit_f, logit_b = times
    units = dict(st.grads)
    def cost(op, nbytes):
        return seconds("dp", op, dp, nbytes, {"dp": ab}, price and (lambda g, o, n: price(o, n)))

    gather_t = {u: cost("allgather", n * element) for u, n in units.items()}
    g = c = 0.0
    done = {}

    def run(unit, work):
        nonlocal g, c
        if unit is not None:   # the gathers follow one another; the compute waits for its own
            g += gather_t[unit]
            c = max(c, g)
        c += work

    for kind, _, _ in order:
        if kind == "F":
            if "embedding" in units:
                run("embedding", 0.0)
            for layer in st.layers:
                run(layer, layer_f)
            run(None, logit_f)
        else:
            run("embedding" if "embedding" in units else None, logit_b)
            for layer in reversed(st.layers):
                run(layer, layer_b)
                done[layer] = c
    done["embedding"] = c
    finish = 0.0
    for source, params in st.grads:
        finish = max(finish, done[source]) + cost("reduce_scatter", params * element)
    return c, finish
