"""Mixture-of-experts layers and expert parallelism in the transformer workload.

A mixture-of-experts (MoE) layer replaces a layer's MLP with ``E`` expert MLPs
and a router (Shazeer et al. 2017; GShard, Lepikhin et al. 2020; Switch
Transformer, Fedus et al. 2021, [1]_): the router (a ``h x E`` GEMM, no bias)
sends each token to its ``top_k`` experts. Every ``every``-th layer is an MoE
layer: layer ``i`` when ``i % every == 0``, as Megatron-LM's ``moe_layer_freq``
chooses them (``megatron/core/models/gpt/gpt_layer_specs.py``, Megatron-LM
core_r0.11.0); ``every = 2`` is GShard's every other layer.

**Expert parallelism** (``ep``): the ``E`` experts of a layer are split over
``ep`` ranks, ``E / ep`` each. As Megatron-LM lays the ranks out (order
``"tp-cp-ep-dp-pp"``, ``RankGenerator`` in ``megatron/core/parallel_state.py``,
Megatron-LM core_r0.9.0, which refuses a data-parallel size ``ep`` does not
divide), the expert-parallel groups are carved out of the data-parallel
replicas, the ``ep`` index varying faster: replica ``r`` is member ``r % ep``
of expert-parallel group ``r // ep``
(:func:`workloads.transformer.layout.ep_group`), and the expert parameters are
data-parallel over the ``dp / ep`` replicas with the same ``r % ep``
(:func:`workloads.transformer.layout.expert_dp_group`, Megatron's "data modulo expert
parallel" group).

Per MoE layer and micro-batch, on each tensor-parallel shard:

====================== ===================================================================
step                   what
====================== ===================================================================
router                 ``2 b s h E / t`` FLOPs forward (the shard's ``s/t`` tokens)
dispatch               all-to-all among the ``ep`` group of the shard's routed tokens
                       (:func:`routed_tokens`: ``E`` experts x their capacity
                       ``ceil(k c T / E)`` of the shard's ``T = b s / t`` tokens,
                       Megatron-LM core_r0.9.0 ``moe_utils.get_capacity``), ``h`` values each
gather (``t > 1``)     allgather of the received tokens among the tensor-parallel shards
experts                ``16 h^2`` FLOPs per routed token forward, split over the ``t``
                       shards: ``k c`` times the dense MLP's
scatter (``t > 1``)    reduce-scatter of the experts' output among the shards
combine                all-to-all back, the same bytes as the dispatch
====================== ===================================================================

The backward runs the same steps in reverse at twice the FLOPs; full
recomputation runs the forward again. Under ``t > 1`` Megatron-LM requires
sequence parallelism with MoE (``megatron/core/transformer/moe/moe_layer.py``,
core_r0.9.0: the tokens reach the router split by sequence), and so does this
model. Every step blocks the shard's stream. The expert gradients are
bucketed apart from the dense ones (Megatron-LM's DDP keeps separate buffers
for expert parameters, ``distributed_data_parallel.py``, core_r0.9.0) and
allreduced over the expert-data-parallel group; a bucket waits for its layer's
backward to end (the expert gradients are complete one attention block's
backward earlier: modelled late by that much).

Defaults: ``top_k = 2`` (Megatron-LM core_r0.9.0 ``transformer_config.py``,
``moe_router_topk``); ``capacity_factor = 1.0`` (Fedus et al. [1]_ section
2.1 and their Table 1's capacity factor 1.0), with every expert's buffer
padded to its capacity (Megatron's ``moe_pad_expert_input_to_capacity``), so
the bytes and FLOPs are those of evenly routed tokens.

References
----------
.. [1] W. Fedus, B. Zoph and N. Shazeer, "Switch Transformers: scaling to trillion parameter
   models with simple and efficient sparsity", arXiv:2101.03961, 2021.
"""

import math
from typing import NamedTuple

from netsim.checks import check_int, check_real

from workloads.errors import WorkloadError
from workloads.transformer.flops import MLPS, mlp_forward_flops
from workloads.transformer.layout import ep_group
from workloads.transformer.prices import seconds
from workloads.transformer.stages import shard_parameters

__all__ = ["Moe", "moe", "Plan", "plan", "is_moe", "routed_tokens", "router_forward_flops",
           "experts_forward_flops", "mlp_shard_parameters", "expert_parameters",
           "dense_parameters", "alltoall_bytes", "chunk_alltoall", "iteration_flops_delta",
           "stage_parameters_delta"]


class Moe(NamedTuple):
    """An MoE model's experts: ``experts`` (E), ``top_k``, ``capacity_factor``, ``every``."""

    experts: int
    top_k: int = 2
    capacity_factor: float = 1.0
    every: int = 1


def moe(experts, top_k=2, capacity_factor=1.0, every=1):
    """A checked :class:`Moe`.

    Raises
    ------
    WorkloadError
        For fewer than 1 expert, a ``top_k`` beyond the experts, a capacity
        factor not above 0, or ``every`` below 1.

    Examples
    --------
    >>> moe(8)
    Moe(experts=8, top_k=2, capacity_factor=1.0, every=1)
    >>> moe(2, top_k=3)
    Traceback (most recent call last):
    ...
    workloads.errors.WorkloadError: top_k 3 is more than the 2 experts
    """
    experts = check_int(experts, "experts", error=WorkloadError)
    top_k = check_int(top_k, "top_k", error=WorkloadError)
    if top_k > experts:
        raise WorkloadError(f"top_k {top_k} is more than the {experts} experts")
    cf = check_real(capacity_factor, "capacity_factor", lo=0, strict=True, error=WorkloadError)
    return Moe(experts, top_k, float(cf), check_int(every, "every", error=WorkloadError))


def is_moe(m, layer):
    """Whether layer ``layer`` is an MoE layer: ``layer % every == 0`` (Megatron's pattern).

    Examples
    --------
    >>> [is_moe(moe(4, every=2), i) for i in range(4)]
    [True, False, True, False]
    """
    return layer % m.every == 0


def routed_tokens(c, m, tp=1):
    """Tokens a tensor-parallel shard routes per micro-batch: ``E ceil(k c T / E)``, ``T = b s/t``.

    Examples
    --------
    >>> from workloads.transformer.flops import config
    >>> c = config(2, 64, 4, 32, 0)
    >>> routed_tokens(c, moe(4)), routed_tokens(c, moe(4), tp=2), routed_tokens(c, moe(3))
    (64, 32, 66)
    """
    local = c.micro_batch * c.seq // tp
    return m.experts * math.ceil(m.top_k * m.capacity_factor * local / m.experts)


def router_forward_flops(c, m, tp=1):
    """Forward FLOPs of the router on one shard's tokens: ``2 b s h E / t``.

    Examples
    --------
    >>> from workloads.transformer.flops import config
    >>> router_forward_flops(config(2, 64, 4, 32, 0), moe(4))   # 2 * 32 * 64 * 4
    16384.0
    """
    return 2 * c.micro_batch * c.seq * c.hidden * m.experts / tp


def experts_forward_flops(c, m, tp=1):
    """Forward FLOPs of the experts on one shard: ``16 h^2`` per routed token, ``1/t`` each.

    The tensor-parallel shards gather their routed tokens and split each expert's GEMMs.
    An expert is the model's MLP (``2 n h f`` per token for ``n`` matrices of width
    ``f``, :func:`workloads.transformer.flops.mlp_forward_flops`; ``16 h^2`` for GPT-3's).

    Examples
    --------
    >>> from workloads.transformer.flops import config, mlp_forward_flops
    >>> c = config(2, 64, 4, 32, 0)
    >>> experts_forward_flops(c, moe(4)) == 2 * mlp_forward_flops(c)   # top_k x the dense MLP
    True
    """
    return 2 * MLPS[c.mlp] * c.hidden * c.ffn * routed_tokens(c, m, tp)


def alltoall_bytes(c, m, tp=1):
    """Each rank's send buffer of a dispatch or combine all-to-all: routed tokens x ``h`` values.

    Examples
    --------
    >>> from workloads.transformer.flops import config
    >>> alltoall_bytes(config(2, 64, 4, 32, 0), moe(4))   # 2 * 32 tokens * 64 fp16 values
    8192
    """
    return routed_tokens(c, m, tp) * c.hidden * c.element


def mlp_shard_parameters(c, tp=1):
    """Parameters of one MLP (or one expert) on one shard: ``(8 h^2 + 4 h)/t + h``.

    Split as in :func:`workloads.transformer.stages.shard_parameters`: the
    weights and the first biases split, the last bias whole; for ``n`` matrices
    of width ``f``, ``(n h f + (n - 1) f)/t + h`` (no bias without ``bias``).

    Examples
    --------
    >>> from workloads.transformer.flops import config
    >>> mlp_shard_parameters(config(1, 64, 4, 8, 0), 2)
    16576
    """
    n, bias = MLPS[c.mlp], int(c.bias)
    return (n * c.hidden * c.ffn + bias * (n - 1) * c.ffn) // tp + bias * c.hidden


def expert_parameters(c, m, tp=1, ep=1):
    """Expert parameters of one MoE layer on one rank: ``E/ep`` experts' shards.

    Examples
    --------
    >>> from workloads.transformer.flops import config
    >>> c = config(1, 64, 4, 8, 0)
    >>> expert_parameters(c, moe(8), ep=4) == 2 * mlp_shard_parameters(c)
    True
    """
    return m.experts // ep * mlp_shard_parameters(c, tp)


def dense_parameters(c, m, tp=1):
    """The rest of an MoE layer on one shard: attention, layer norms and the router (``h E``).

    Examples
    --------
    >>> from workloads.transformer.flops import config
    >>> c = config(1, 64, 4, 8, 0)
    >>> dense_parameters(c, moe(4)) == 4 * 64**2 + 8 * 64 + 64 * 4   # (4h^2+3h) + 5h + hE
    True
    """
    return shard_parameters(c, tp) - mlp_shard_parameters(c, tp) + c.hidden * m.experts


def iteration_flops_delta(c, m, recompute="full"):
    """What the MoE layers add to :func:`workloads.transformer.flops.iteration_flops`.

    Per MoE layer and sequence, the router and experts instead of the dense
    MLP, forward, backward (twice) and with full recomputation once more.

    Examples
    --------
    >>> from workloads.transformer.flops import config
    >>> c = config(2, 64, 4, 32, 0, global_batch=4)
    >>> iteration_flops_delta(c, moe(4, top_k=1), "none") == 4 * 2 * 3 * 2 * 32 * 64 * 4
    True
    """
    per = router_forward_flops(c, m) + experts_forward_flops(c, m) - mlp_forward_flops(c)
    layers = sum(is_moe(m, i) for i in range(c.layers))
    return c.global_batch // c.micro_batch * layers * (4 if recompute == "full" else 3) * per


def stage_parameters_delta(c, m, tp, ep, layers):
    """What the MoE layers among ``layers`` add to one shard's parameters (experts ``/ ep``).

    Examples
    --------
    >>> from workloads.transformer.flops import config
    >>> c = config(2, 64, 4, 32, 0)
    >>> stage_parameters_delta(c, moe(8), 1, 8, [0, 1]) == 2 * 64 * 8   # one expert each: + router
    True
    """
    n = sum(is_moe(m, i) for i in layers)
    return n * (dense_parameters(c, m, tp) + expert_parameters(c, m, tp, ep)
                - shard_parameters(c, tp))


class Plan(NamedTuple):
    """What the schedule and closed form need of an MoE model under ``tp`` and ``ep``."""

    moe: Moe
    ep: int
    tp: int
    router: float    # forward FLOPs per shard and micro-batch
    experts: float
    alltoall: int    # bytes of each rank's all-to-all send buffer
    gathered: int    # bytes of the tensor-parallel allgather / reduce-scatter buffer
    dense: int       # parameters per shard of an MoE layer outside its experts
    expert: int      # expert parameters per rank of an MoE layer


def plan(c, L, m, ep=1, sequence_parallel=False, sharded=False, memory=False):
    """Check ``m`` and ``ep`` against model ``c`` and layout ``L``; their :class:`Plan`.

    Raises
    ------
    WorkloadError
        For an ``ep`` that does not divide the data-parallel degree or the
        experts, ``ep > 1`` without experts, ``tp > 1`` without sequence
        parallelism (Megatron-LM's rule for MoE), or experts with ``sharded``
        data parallelism (ZeRO or FSDP) or with the ``memory`` traffic of
        :mod:`workloads.transformer.compute` (neither modelled for experts).

    Examples
    --------
    >>> from workloads.transformer.flops import config
    >>> from workloads.transformer.layout import Layout
    >>> p = plan(config(2, 64, 4, 32, 0), Layout(1, 1, 4), moe(4), ep=2)
    >>> p.alltoall, p.expert == 2 * mlp_shard_parameters(config(2, 64, 4, 32, 0))
    (8192, True)
    >>> plan(config(2, 64, 4, 32, 0), Layout(1, 1, 4), moe(4), ep=3)
    Traceback (most recent call last):
    ...
    workloads.errors.WorkloadError: ep 3 does not divide dp 4
    """
    ep = check_int(ep, "ep", error=WorkloadError)
    if m is None:
        if ep > 1:
            raise WorkloadError(f"ep {ep} needs experts")
        return None
    if not isinstance(m, Moe):
        raise WorkloadError(f"moe must be a workloads.transformer.moe.Moe, not {m!r}")
    if sharded:
        raise WorkloadError("experts with ZeRO or FSDP are not modelled")
    if memory:
        raise WorkloadError("experts with memory_bandwidth are not modelled (FLOPs only)")
    if L.dp % ep:
        raise WorkloadError(f"ep {ep} does not divide dp {L.dp}")
    if m.experts % ep:
        raise WorkloadError(f"ep {ep} does not divide the {m.experts} experts")
    if L.tp > 1 and not sequence_parallel:
        raise WorkloadError("experts under tp > 1 need sequence parallelism (as Megatron-LM)")
    if (c.micro_batch * c.seq) % L.tp:
        raise WorkloadError(f"b s = {c.micro_batch * c.seq} tokens do not split over tp {L.tp}")
    a2a = alltoall_bytes(c, m, L.tp)
    return Plan(m, ep, L.tp, router_forward_flops(c, m, L.tp), experts_forward_flops(c, m, L.tp),
                a2a, a2a * L.tp, dense_parameters(c, m, L.tp), expert_parameters(c, m, L.tp, ep))


# -- the schedule's side -----------------------------------------------------------------------

def make_mlp(p, block, last, dense):
    """The MLP block of the schedule: ``dense`` for a dense layer, the MoE steps for an MoE one.

    ``block`` is the schedule's block builder, ``last`` its per-(stage,
    replica) stream heads; the returned generator function yields a request
    ``(stage, per-shard deps)`` at each all-to-all and is sent back the
    per-shard ops (:func:`run_jointly` and :func:`make_meet` answer it).
    """
    def exchange(s, r, extra=None):
        if p.ep == 1:
            return extra
        deps = [[x for x in (last[(s, r)][k], None if extra is None else extra[k])
                 if x is not None] for k in range(p.tp)]
        last[(s, r)] = yield (s, deps)
        return None

    def mlp(st, layer, s, r, it, tag, scale, extra=None):
        if p is None or not is_moe(p.moe, layer):
            yield from dense(st, layer, s, r, it, tag, scale, extra)
            return
        if tag == "backward":
            extra = yield from exchange(s, r, extra)
            block(s, r, 2 * p.experts, it, tag, extra, size=p.gathered)
            yield from exchange(s, r)
            block(s, r, 2 * p.router, it, tag, before=False, after=False)
            return
        block(s, r, p.router, it, tag, extra, before=False, after=False)
        yield from exchange(s, r)
        block(s, r, p.experts, it, tag, size=p.gathered)
        yield from exchange(s, r)

    return mlp


def make_meet(b, L, p, it, element):
    """Answer a round of all-to-all requests: one alltoall per expert-parallel group and shard.

    Examples
    --------
    >>> from netsim.trace.core import TraceBuilder
    >>> from workloads.transformer.layout import Layout
    >>> from workloads.transformer.flops import config
    >>> L = Layout(1, 1, 2); c = config(1, 64, 4, 32, 0)
    >>> b = TraceBuilder(2); x = [b.compute(r, flops=1) for r in range(2)]
    >>> meet = make_meet(b, L, plan(c, L, moe(2), ep=2), 0, 2)
    >>> meet({0: (0, [[x[0]]]), 1: (0, [[x[1]]])})
    {0: [2], 1: [2]}
    """
    def meet(requests):
        out = {}
        for r, (s, _) in requests.items():
            if r in out:
                continue
            j = r // p.ep
            members = range(j * p.ep, (j + 1) * p.ep)
            ops = [b.collective("alltoall", ep_group(L, p.ep, s, k, j), p.alltoall,
                                deps=sum((requests[x][1][k] for x in members), []),
                                iteration=it, tag="ep", element=element)
                   for k in range(L.tp)]
            out.update((x, list(ops)) for x in members)
        return out

    return meet


def run_jointly(gens, meet):
    """Run generators side by side: each to its next request, then ``meet`` answers them all.

    Generators that never yield run one after another, in order.

    Examples
    --------
    >>> def g(n):
    ...     got = yield n
    ...     print(n, got)
    >>> run_jointly([g(1), g(2)], lambda req: {k: 10 * v for k, v in req.items()})
    1 10
    2 20
    """
    active, answers = dict(enumerate(gens)), {}
    while active:
        requests = {}
        for r in list(active):
            try:
                requests[r] = active[r].send(answers.get(r))
            except StopIteration:
                del active[r]
        answers = meet(requests) if requests else {}


def expert_grads(stages, p):
    """Per stage, the gradient sources of its MoE layers' experts: ``(("expert", i), params)``."""
    return [[(("expert", i), p.expert) for st in reversed(chunks) for i in reversed(st.layers)
             if is_moe(p.moe, i)] for chunks in stages]


def dense_stages(stages, p):
    """The stages with each MoE layer's dense gradient (attention, norms, router) in place."""
    return [[st._replace(grads=tuple((g, p.dense if isinstance(g, int) and is_moe(p.moe, g)
                                      else n) for g, n in st.grads)) for st in chunks]
            for chunks in stages]


def bucket_groups(L, p, dense, experts, element, bucket_bytes, buckets):
    """The gradient buckets of a stage in the order they complete, with their replica groups.

    ``dense`` and ``experts``: the stage's gradient sources (backward order) of
    each kind, bucketed apart; a bucket completes with its last source, the
    expert sources of layer ``i`` with layer ``i``'s backward.

    Returns
    -------
    list of (last source, bytes, list of replica tuples)
    """
    order = {g: k for k, (g, _) in enumerate(dense)}
    whole = [(g, n, [tuple(range(L.dp))]) for g, n in buckets(dense, element, bucket_bytes)]
    if p is None or not experts:
        return whole
    groups = [tuple(range(e, L.dp, p.ep)) for e in range(p.ep)]   # as layout.expert_dp_group
    part = [(g, n, groups) for g, n in buckets(experts, element, bucket_bytes)]
    def done_at(bucket):   # an expert bucket of layer i first, then layer i's dense one
        g = bucket[0]
        return (order[g[1]], 0) if isinstance(g, tuple) else (order[g], 1)

    return sorted(whole + part, key=done_at)


# -- the closed form's side --------------------------------------------------------------------

def chunk_alltoall(st, p, redo, links, price=None):
    """A chunk's blocking all-to-all time per micro-batch, forward and backward (with recompute).

    ``links`` and ``price`` price the calls (:func:`workloads.transformer.prices.seconds`).

    Examples
    --------
    >>> from workloads.transformer.flops import config
    >>> from workloads.transformer.layout import Layout
    >>> from workloads.transformer.stages import stage
    >>> c = config(2, 64, 4, 32, 0, global_batch=2); L = Layout(1, 1, 2)
    >>> p = plan(c, L, moe(4, every=2), ep=2)
    >>> chunk_alltoall(stage(c, L, 0), p, True, {"ep": (1e-6, 0.0)})   # 1 layer x 6 calls x 1 us
    6e-06
    """
    if p is None or p.ep == 1:
        return 0.0
    n = sum(is_moe(p.moe, i) for i in st.layers)
    return n * 2 * (2 + redo) * seconds("ep", "alltoall", p.ep, p.alltoall, links, price)


def layer_delta(p, pre, post, redo, links, price=None):
    """What an MoE layer adds to a dense one: forward and backward FLOPs and blocking time.

    ``pre`` and ``post`` are the dense MLP block's tensor-parallel collectives
    (replaced); ``links`` the ``{"tp", "ep"}`` ``(alpha, beta)`` costs, ``price``
    the library's (:func:`workloads.transformer.prices.seconds`).
    """
    comm = (seconds("tp", "allgather", p.tp, p.gathered, links, price)
            + seconds("tp", "reduce_scatter", p.tp, p.gathered, links, price)
            + 2 * seconds("ep", "alltoall", p.ep, p.alltoall, links, price))
    return (p.router + p.experts, comm - pre - post, comm * (1 + redo) - (pre + post) * (1 + redo))


def chunk_delta(st, p, mlp, pre, post, redo, links, F, price=None):
    """A chunk's added forward and backward compute seconds (at ``F`` FLOP/s) and blocking
    time from its MoE layers."""
    if p is None:
        return 0.0, 0.0, 0.0, 0.0
    n = sum(is_moe(p.moe, i) for i in st.layers)
    flops, cf, cb = layer_delta(p, pre, post, redo, links, price)
    return n * (flops - mlp) / F, n * (2 + redo) * (flops - mlp) / F, n * cf, n * cb


def bucket_costs(L, p, dense, experts, element, bucket_bytes, buckets, reduce):
    """``[(last source, seconds)]``: each bucket's allreduce on its group, completion order.

    ``reduce(members, nbytes, group=...)``: a bucket's seconds on ``"dp"`` or ``"edp"``.
    """
    return [(g, reduce(len(groups[0]), n, group="dp" if len(groups) == 1 else "edp")
             if len(groups[0]) > 1 else 0.0)
            for g, n, groups in bucket_groups(L, p, dense, experts, element, bucket_bytes,
                                              buckets)]
