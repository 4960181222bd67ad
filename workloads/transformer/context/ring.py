"""Context parallelism: each sequence split over ``cp`` ranks, keys and values passed in a ring.

Megatron-Core's context parallelism (``--context-parallel-size``, Megatron-LM core_r0.11.0)
with Transformer Engine's ring attention (``cp_comm_type="p2p"``, the default;
``AttnFuncWithCPAndKVP2P`` in ``transformer_engine/pytorch/attention/dot_product_attention/
context_parallel.py``, Transformer Engine v2.5, reached through ``attn_forward_func_with_cp``):

* **The sequence** is cut into ``2 cp`` chunks and rank ``j`` of a context-parallel group takes
  chunks ``j`` and ``2 cp - 1 - j`` (``get_batch_on_this_cp_rank``,
  ``megatron/core/utils.py``), so that under a causal mask every rank does the same work:
  ``s / cp`` tokens each. Megatron refuses a sequence not a multiple of ``2 cp``
  (``megatron/training/arguments.py``). Every GEMM of a layer and the logit layer runs on
  ``s / cp`` tokens: ``1/cp`` of its FLOPs; the attention core, ``s / cp`` queries against all
  ``s`` keys, ``1/cp`` of ``4 b s^2 h`` too (counted without the causal mask, as
  :mod:`workloads.transformer.flops` counts it), in ``cp`` steps of ``1/cp`` of that each.
* **The forward ring** (``AttnFuncWithCPAndKVP2P.forward``): at step ``i`` the rank waits for
  the previous step's send and receive, sends the keys and values it holds to the next rank of
  the group and receives the previous rank's (``flash_attn_p2p_communicate``; not at the last
  step), and computes its queries against the keys and values it holds, the exchange beside
  it: ``cp - 1`` messages of ``2 b (s/cp) k d / t`` elements (``k`` key/value heads of width
  ``d`` over ``t`` tensor shards). A step's compute waits for its own previous compute and
  the previous exchange; an exchange for the previous exchange only.
* **The backward ring** (``AttnFuncWithCPAndKVP2P.backward``): ``cp`` steps, each sending the
  keys and values (step 0), the keys and values with the key/value gradient accumulated so far
  (steps ``1 .. cp - 2``: one message twice as large), or the gradient alone (the last step),
  beside the step's backward (twice the forward's FLOPs); the step waits for its own
  exchange before it adds its gradient ("wait until dKV is received"), so a step takes the
  longer of its compute and its exchange.
* **The gradients** of the parameters are reduced over the ``dp x cp`` ranks that hold them
  (Megatron-Core's ``DistributedDataParallel`` takes the data-parallel group "with context
  parallel", ``megatron/core/distributed/distributed_data_parallel.py``), and the activations
  each rank stores are ``1/cp`` (:mod:`workloads.transformer.memory`).
* **Ranks**: tensor-parallel index fastest, then the context-parallel one, then data, then
  pipeline (Megatron's default order ``"tp-cp-ep-dp-pp"``, ``initialize_model_parallel`` in
  ``megatron/core/parallel_state.py``): ``rank = ((stage dp + replica) cp + j) tp + shard``,
  which is ``Layout(tp, pp, dp cp)``'s rank of replica ``replica cp + j``
  (:func:`cp_group`). So the trace and the closed form build the layout of ``dp cp``
  "replicas" with the global batch ``cp`` times larger (:func:`widen`: the same ``m = B / (b
  dp)`` micro-batches each), every per-rank count ``1/cp``, and the ring between the
  ``cp`` replicas of each group.

Left out: the causal mask's skipped blocks (the FLOPs are the unmasked count, as elsewhere),
the all-gather and all-to-all variants of ``cp_comm_type``, hierarchical context parallelism,
and the exchange's use of SMs beside the attention kernels. Not combined (refused): experts,
ZeRO-3/FSDP, the GEMM and memory-traffic compute rules, the tensor-parallel overlap and the
overlapped parameter gather.
"""

from netsim import costmodel
from netsim.checks import check_int

from workloads.errors import WorkloadError
from workloads.transformer.flops import attention_core_forward_flops
from workloads.transformer.layout import Layout

__all__ = ["check_cp", "check_combination", "widen", "cp_group", "kv_bytes", "core_flops",
           "ring", "make_ring", "ring_seconds", "ring_exposed"]


def check_cp(c, cp):
    """``cp`` checked against the model: an integer >= 1 whose ``2 cp`` divides the sequence.

    Raises
    ------
    WorkloadError
        Naming the constraint (Megatron-LM's: the sequence a multiple of ``2 cp``).

    Examples
    --------
    >>> from workloads.transformer.flops import config
    >>> check_cp(config(2, 64, 4, 32, 0), 4)
    4
    >>> check_cp(config(2, 64, 4, 20, 0), 4)
    Traceback (most recent call last):
    ...
    workloads.errors.WorkloadError: sequence 20 does not split over cp 4 into 2 x 4 = 8 chunks (Megatron-LM: the sequence a multiple of 2 x context-parallel size)
    """
    cp = check_int(cp, "cp", error=WorkloadError)
    if cp > 1 and c.seq % (2 * cp):
        raise WorkloadError(f"sequence {c.seq} does not split over cp {cp} into 2 x {cp} = "
                            f"{2 * cp} chunks (Megatron-LM: the sequence a multiple of 2 x "
                            f"context-parallel size)")
    return cp


def check_combination(cp, zero=0, fsdp=False, moe=None, compute="flops", memory=False,
                      tp_overlap=False, param_gather="after", subset=False):
    """Refuse what context parallelism is not modelled with (the module's docstring);
    ``subset``: a trace of some replicas or shards only (the symmetric replays'). Fused
    tensor-parallel chains are refused by :func:`workloads.transformer.fused.check_fusable`.

    Examples
    --------
    >>> check_combination(2, zero=1)
    >>> check_combination(2, fsdp=True)
    Traceback (most recent call last):
    ...
    workloads.errors.WorkloadError: context parallelism (cp 2) with ZeRO-3 or FSDP is not modelled
    """
    if cp == 1:
        return
    for given, what in ((zero == 3 or fsdp, "ZeRO-3 or FSDP"), (moe is not None, "experts"),
                        (compute != "flops", "compute='gemm'"),
                        (memory, "memory_bandwidth (the memory-traffic rule)"),
                        (tp_overlap, "tp_overlap"), (param_gather != "after",
                                                     "param_gather='overlap'"),
                        (subset, "replicas or shards (a subset of the ranks)")):
        if given:
            raise WorkloadError(f"context parallelism (cp {cp}) with {what} is not modelled")


def widen(c, cp):
    """The model as the ``dp cp`` replicas of :func:`cp_group`'s layout see it: the global
    batch ``cp`` times larger, so that each has ``B / (b dp)`` micro-batches.

    Examples
    --------
    >>> from workloads.transformer.flops import config
    >>> widen(config(2, 64, 4, 32, 0, global_batch=8), 2).global_batch
    16
    """
    return c if cp == 1 else c._replace(global_batch=c.global_batch * cp)


def cp_group(tp, pp, dp, cp, stage, replica, shard):
    """The ranks of one context-parallel group (one ring, in its order), Megatron's order.

    Examples
    --------
    >>> cp_group(2, 1, 2, 2, 0, 1, 1)   # ((0 * 2 + 1) * 2 + j) * 2 + 1
    (5, 7)
    """
    R = Layout(tp, pp, dp * cp)
    return tuple(R.rank(stage, replica * cp + j, shard) for j in range(cp))


def kv_bytes(c, tp, cp):
    """Bytes of the keys and values one rank holds: ``2 b (s/cp) k d e / t``.

    Examples
    --------
    >>> from workloads.transformer.flops import config
    >>> kv_bytes(config(2, 64, 4, 32, 0, kv_heads=2), 1, 2)   # 2 * 16 tokens * 2 * 16 * 2 B
    2048
    """
    d = c.hidden // c.heads
    return 2 * c.micro_batch * (c.seq // cp) * (c.kv // tp) * d * c.element


def core_flops(c, tp, cp):
    """Forward FLOPs of one layer's attention core on one rank: ``4 b s^2 h / (t cp)``.

    Examples
    --------
    >>> from workloads.transformer.flops import config
    >>> core_flops(config(2, 64, 4, 32, 0), 2, 2) * 4 == 4 * 32 * 32 * 64
    True
    """
    return attention_core_forward_flops(c) / (tp * cp)


def ring(b, ranks, start, flops, kv, iteration, tag, backward=False):
    """Add one ring attention among ``ranks`` (a context-parallel group in ring order).

    Parameters
    ----------
    b : netsim.trace.core.TraceBuilder
    ranks : sequence of int
        The group; rank ``j`` sends to ``j + 1`` and receives from ``j - 1`` (modulo).
    start : sequence of int
        Each member's op the ring waits for (its stream's last).
    flops : float
        A member's attention-core FLOPs over all steps (forward; the backward runs twice them).
    kv : float
        Bytes of the keys and values a member holds (:func:`kv_bytes`).
    iteration, tag
        The ops' iteration and the compute ops' tag; the messages are tagged ``cp``.
    backward : bool
        The backward ring (module docstring) instead of the forward one.

    Returns
    -------
    list of int
        Each member's last op.

    Examples
    --------
    >>> from netsim.trace.core import TraceBuilder
    >>> b = TraceBuilder(2); x = [b.compute(r, flops=1) for r in range(2)]
    >>> end = ring(b, [0, 1], x, 4.0, 100, 0, "forward")
    >>> t = b.build(); t.num_messages, float(t.size[t.is_message].sum())   # cp - 1 steps
    (2, 200.0)
    """
    n, step = len(ranks), flops / len(ranks) * (2 if backward else 1)
    sizes = ([kv] + [2 * kv] * (n - 2) + [kv]) if backward else [kv] * (n - 1)
    comp, sent = list(start), None
    for i in range(n):
        wait = [[] if sent is None else [sent[j], sent[j - 1]] for j in range(n)]
        out = None
        if i < len(sizes):   # the forward sends before it computes; the backward beside it
            deps = [([comp[j]] if backward or sent is None else []) + wait[j] for j in range(n)]
            out = [b.message(ranks[j], ranks[(j + 1) % n], sizes[i], deps=deps[j],
                             iteration=iteration, tag="cp") for j in range(n)]
        comp = [b.compute(ranks[j], flops=step, deps=[comp[j]] + wait[j],
                          iteration=iteration, tag=tag) for j in range(n)]
        sent = out
    if backward:   # the last gradient received, then added
        comp = [b.compute(ranks[j], seconds=0.0, deps=[comp[j], sent[j], sent[j - 1]],
                          iteration=iteration, tag=tag) for j in range(n)]
    return comp


def make_ring(b, c, tp, pp, dp, cp, kept, iteration):
    """Answer a round of ring requests of the ``dp cp`` replicas (:func:`ring` per group and
    shard); ``kept``: the shards written.

    A request of replica ``r`` is ``(stage, tag, flops, backward, per-shard start ops)``; the
    answer its per-shard last ops (:func:`workloads.transformer.moe.run_jointly`).
    """
    kv = kv_bytes(c, tp, cp)

    def meet(requests):
        out = {}
        for r, (s, tag, flops, backward, _) in requests.items():
            if r in out:
                continue
            members = range(r - r % cp, r - r % cp + cp)
            ends = [ring(b, cp_group(tp, pp, dp, cp, s, r // cp, k),
                         [requests[x][4][k] for x in members], flops, kv, iteration, tag,
                         backward) for k in range(kept)]
            out.update((x, [e[j] for e in ends]) for j, x in enumerate(members))
        return out

    return meet


def ring_seconds(cp, x, kv, alpha, beta, backward=False):
    """Seconds of a ring of ``cp`` steps of ``x`` seconds of compute each (the forward's; the
    backward's are ``2 x``), messages at Hockney's ``alpha + n beta``, no contention.

    Forward: ``x + (cp - 1) max(x, c)``, ``c`` the exchange of ``kv`` bytes (each step waits
    for the previous exchange, which ran beside the previous step's compute). Backward:
    ``sum_i max(2 x, c_i)`` with ``c_0 = c_{cp-1} = c`` and the steps between exchanging
    ``2 kv`` bytes.

    Examples
    --------
    >>> ring_seconds(4, 1.0, 10, 0.0, 0.1), ring_seconds(4, 1.0, 10, 0.0, 0.3)
    (4.0, 10.0)
    >>> ring_seconds(3, 1.0, 10, 0.0, 0.3, backward=True)   # max(2, 3) + max(2, 6) + max(2, 3)
    12.0
    """
    c1, c2 = costmodel.hockney(kv, alpha, beta), costmodel.hockney(2 * kv, alpha, beta)
    if not backward:
        return x + (cp - 1) * max(x, c1)
    return 2 * max(2 * x, c1) + (cp - 2) * max(2 * x, c2)


def ring_exposed(cp, x, kv, alpha, beta):
    """What a layer's forward and backward rings add to their cores' compute alone:
    ``(forward, backward)`` seconds (:func:`ring_seconds` less ``cp x`` and ``2 cp x``).

    Examples
    --------
    >>> ring_exposed(4, 1.0, 10, 0.0, 0.3)   # 10 - 4; 2 x 3 + 2 x 6 - 8
    (6.0, 10.0)
    >>> ring_exposed(1, 1.0, 10, 0.0, 0.3)
    (0.0, 0.0)
    """
    if cp == 1:
        return 0.0, 0.0
    return (ring_seconds(cp, x, kv, alpha, beta) - cp * x,
            ring_seconds(cp, x, kv, alpha, beta, True) - 2 * cp * x)
