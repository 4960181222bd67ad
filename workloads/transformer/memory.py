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
  recomputed. The first stage holds the most micro-batches' worth (section
  4.2.3): ``L`` layers' worth under 1F1B (``p`` micro-batches of ``L/p``
  layers), ``L (1 + (p - 1)/(p v))`` interleaved over ``v`` chunks, and ``m L / p``
  under GPipe.

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
from workloads.transformer.stages import embedding_shard, shard_parameters

__all__ = ["OPTIMIZER_BYTES", "zero_state_bytes", "memory_per_gpu"]

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


def memory_per_gpu(c, tp=1, pp=1, dp=1, pipeline="1f1b", recompute="full",
                   sequence_parallel=False, chunks=1, zero=0, moe=None, ep=1):
    """Bytes per GPU on the fullest stage: ``{"states": ..., "activations": ..., "total": ...}``.

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
    """
    L = make_layout(tp, pp, dp)
    per_stage = c.layers // L.pp
    params = per_stage * shard_parameters(c, L.tp) + sum(embedding_shard(c, L.tp, True,
                                                                         L.pp == 1))
    if moe is not None:
        params += stage_parameters_delta(c, moe, L.tp, ep, range(per_stage))
    states = zero_state_bytes(zero, L.dp) * params
    m = c.global_batch // (c.micro_batch * L.dp)
    if pipeline == "gpipe":
        layers_held = m * per_stage
    elif pipeline == "interleaved":
        layers_held = c.layers * (1 + (L.pp - 1) / (L.pp * chunks))
    else:
        layers_held = min(L.pp, m) * per_stage
    full = layer_stored_bytes(c, L.tp, sequence_parallel)
    if recompute == "full":
        stored = 2 * c.seq * c.micro_batch * c.hidden / (L.tp if sequence_parallel else 1)
        activations = stored * layers_held + full
    else:
        activations = full * layers_held
    return {"states": states, "activations": activations, "total": states + activations}
