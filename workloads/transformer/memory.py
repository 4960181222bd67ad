"""Memory per GPU of transformer training under TP x PP x DP, from published formulas.

Two parts, on the pipeline stage that holds the most:

* **Model states**: mixed-precision Adam keeps ``16`` bytes per parameter (fp16
  weights and gradients, fp32 master weights, momentum and variance: ``2 + 2 +
  12``; Rajbhandari et al., ZeRO, SC'20, section 3.1), of the parameters a
  GPU of the first stage holds (its layers' shards,
  :func:`workloads.transformer.stages.shard_parameters`, and the embeddings).
  ZeRO partitions them over the ``d`` data-parallel replicas (their section
  5.1 and Figure 1, ``K = 12``): stage 1 the optimizer states, ``(2 + 2 +
  12/d)`` bytes per parameter; stage 2 the gradients too, ``(2 + 14/d)``;
  stage 3 (and FSDP) the weights too, ``16/d``.
* **Activations** (Korthikanti et al. 2022, section 4): one layer of one
  micro-batch stores ``s b h (10 + 24/t + 5 a s / (h t))`` bytes with tensor
  parallelism (their Eq. 2), ``s b h (34/t + 5 a s / (h t))`` with sequence
  parallelism too (Eq. 4; :func:`workloads.transformer.flops.layer_stored_bytes`), or
  only its ``2 s b h``-byte input under full
  recomputation (section 4.3), plus one layer's full activations while it is
  recomputed; under selective recomputation all but the attention core's
  ``5 a s^2 b`` (section 5, Eq. 6). The first stage holds the most micro-batches' worth (section
  4.2.3; with an uneven split, :func:`memory_per_gpu` takes the fullest stage): ``L`` layers' worth under 1F1B (``p`` micro-batches of ``L/p``
  layers), ``L (1 + (p - 1)/(p v))`` interleaved over ``v`` chunks, and ``m L / p``
  under GPipe. Context parallelism over ``cp`` ranks (:mod:`workloads.transformer.context.ring`)
  gives each rank ``s / cp`` of every sequence: its activations are ``1/cp`` of these
  (the attention scores too: ``s / cp`` queries against the ``s`` keys).

The states split into ``weights`` (fp16, ``2`` bytes per parameter, ``2/d`` under ZeRO-3),
``gradients`` (``2``; ``2/d`` from ZeRO-2) and ``optimizer`` (fp32 master weights, momentum and
variance, ``12``; ``12/d`` from ZeRO-1), as ZeRO's section 3.1 counts them.

With experts (:mod:`workloads.transformer.moe`), an MoE layer's shard holds
its dense part, the router and ``E / ep`` experts' shards
(:func:`workloads.transformer.moe.stage_parameters_delta`). Left out: the
MoE layers' larger activations (``k c`` routed tokens each), the embedding
and logit layers' activations, temporary buffers,
the communication library's buffers and fragmentation.
"""

from workloads.transformer.layout import layout as make_layout
from workloads.transformer.flops import layer_stored_bytes
from workloads.transformer.moe import stage_parameters_delta
from workloads.transformer.stages import embedding_shard, shard_parameters, stage_layers

__all__ = ["OPTIMIZER_BYTES", "zero_state_bytes", "state_parts", "memory_per_gpu"]

#: Bytes of model state per parameter under mixed-precision Adam (Rajbhandari et al. 2020).
OPTIMIZER_BYTES = 16


def zero_state_bytes(zero, dp):
    """Bytes of model state per parameter on one GPU under ZeRO stage ``zero`` (0: none).

    Rajbhandari et al. SC'20, section 5.1 and Figure 1, mixed-precision Adam
    (``K = 12``): ``16``; ``4 + 12/d``; ``2 + 14/d``; ``16/d``.

    Examples
    --------
    >>> [zero_state_bytes(z, 4) for z in (0, 1, 2, 3)]
    [16.0, 7.0, 5.5, 4.0]
    """
    return float((16, 4 + 12 / dp, 2 + 14 / dp, 16 / dp)[zero])


def state_parts(zero, dp):
    """Bytes per parameter of ``(weights, gradients, optimizer state)`` under ZeRO stage ``zero``.

    Mixed-precision Adam (Rajbhandari et al. SC'20, section 3.1): fp16 weights ``2`` and
    gradients ``2``, fp32 master weights, momentum and variance ``12``; ZeRO partitions
    the optimizer state from stage 1, the gradients from stage 2 and the weights at
    stage 3 over the ``d`` data-parallel ranks (section 5.1). They add up to
    :func:`zero_state_bytes`.

    Examples
    --------
    >>> [state_parts(z, 4) for z in (0, 1, 2, 3)]
    [(2.0, 2.0, 12.0), (2.0, 2.0, 3.0), (2.0, 0.5, 3.0), (0.5, 0.5, 3.0)]
    """
    return (2 / dp if zero == 3 else 2.0, 2 / dp if zero >= 2 else 2.0,
            12 / dp if zero >= 1 else 12.0)


def memory_per_gpu(c, tp=1, pp=1, dp=1, pipeline="1f1b", recompute="full",
                   sequence_parallel=False, chunks=1, zero=0, moe=None, ep=1,
                   first_stage_layers=None, last_stage_layers=None, cp=1):
    """Bytes per GPU on the fullest stage: ``{"states": ..., "activations": ..., "total": ...}``.

    The states also split into ``"weights"``, ``"gradients"`` and ``"optimizer"``
    (:func:`state_parts`). ``dp`` is the data-parallel degree; with context parallelism
    over ``cp`` ranks ZeRO partitions over the ``dp * cp`` ranks that reduce the
    gradients (Megatron-Core's distributed optimizer over the data-parallel group "with
    context parallel"), and the activations are ``1/cp``.

    With an even split the first stage (it holds the embeddings and, under
    1F1B, the most micro-batches); with ``first_stage_layers`` or
    ``last_stage_layers`` (:func:`workloads.transformer.stages.stage_layers`) the
    stage of the largest total, stage ``i`` holding ``min(p - i, m)``
    micro-batches of its own layers under 1F1B.

    Examples
    --------
    >>> from workloads.transformer.flops import get_config
    >>> m = memory_per_gpu(get_config("gpt3-175b"), tp=8, pp=16, dp=1)
    >>> round(m["states"] / 2**30, 1)   # 16 B x (6 layer shards + embeddings)
    21.8

    ZeRO-3 over 64 replicas: ``16/64`` bytes per parameter (ZeRO's Figure 1).

    >>> c = get_config("gpt3-1.3b")
    >>> memory_per_gpu(c, dp=64, zero=3)["states"] * 64 == memory_per_gpu(c)["states"]
    True

    Eight experts per layer over ``ep = 8``: one expert's MLP and the router, 16 B each.

    >>> from workloads.transformer.moe import moe
    >>> d = memory_per_gpu(c, dp=8, moe=moe(8), ep=8)["states"] - memory_per_gpu(c)["states"]
    >>> d == 16 * 24 * 2048 * 8
    True

    Llama 3 405B's 126 layers over 16 stages, 7 on the first and the last.

    >>> c = get_config("llama3-405b", global_batch=16)
    >>> memory_per_gpu(c, 8, 16, first_stage_layers=7, last_stage_layers=7)["total"] > 0
    True

    Context parallelism over 2 ranks halves the activations and keeps the states.

    >>> a = memory_per_gpu(c, 8, 16, 1, first_stage_layers=7, last_stage_layers=7)
    >>> b = memory_per_gpu(c, 8, 16, 1, first_stage_layers=7, last_stage_layers=7, cp=2)
    >>> b["activations"] * 2 == a["activations"], b["states"] == a["states"]
    (True, True)
    """
    L = make_layout(tp, pp, dp)
    counts = stage_layers(c.layers, L.pp, first_stage_layers, last_stage_layers)
    starts = [sum(counts[:s]) for s in range(L.pp)]
    kw = dict(pipeline=pipeline, recompute=recompute, sequence_parallel=sequence_parallel,
              chunks=chunks, zero=zero, moe=moe, ep=ep, cp=cp)
    if first_stage_layers is None and last_stage_layers is None:
        return _stage_memory(c, L, 0, range(counts[0]), **kw)
    return max((_stage_memory(c, L, s, range(starts[s], starts[s] + counts[s]), **kw)
                for s in range(L.pp)), key=lambda x: x["total"])


def _stage_memory(c, L, s, layers, pipeline, recompute, sequence_parallel, chunks, zero, moe,
                  ep, cp):
    """:func:`memory_per_gpu` of stage ``s`` holding ``layers``."""
    params = len(layers) * shard_parameters(c, L.tp) + sum(embedding_shard(c, L.tp, s == 0,
                                                                           s == L.pp - 1))
    if moe is not None:
        params += stage_parameters_delta(c, moe, L.tp, ep, layers)
    weights, gradients, optimizer = (x * params for x in state_parts(zero, L.dp * cp))
    m = c.global_batch // (c.micro_batch * L.dp)
    if pipeline == "gpipe":
        layers_held = m * len(layers)
    elif pipeline == "interleaved":
        layers_held = c.layers * (1 + (L.pp - 1) / (L.pp * chunks))
    else:
        layers_held = min(L.pp - s, m) * len(layers)
    full = layer_stored_bytes(c, L.tp, sequence_parallel, recompute == "selective")
    if recompute == "full":
        stored = 2 * c.seq * c.micro_batch * c.hidden / (L.tp if sequence_parallel else 1)
        activations = stored * layers_held + full
    else:
        activations = full * layers_held
    activations /= cp
    states = zero_state_bytes(zero, L.dp * cp) * params   # the parts' sum, as ZeRO counts it
    return {"weights": weights, "gradients": gradients, "optimizer": optimizer,
            "states": states, "activations": activations, "total": states + activations}
