"""Transformer training under tensor x pipeline x data parallelism: layouts, schedules, FLOPs, memory, ZeRO, experts.

Modules
-------
closed     Time per iteration of transformer training in closed form: compute, bubble, exposed traffic.
compute    How long a transformer layer's blocks compute: matrix FLOPs at a rate, memory traffic at HBM speed.
context    Context parallelism: each sequence split over cp ranks, keys and values passed in a ring.
flops      A GPT-style transformer's configuration, its FLOPs and its byte counts, from published formulas.
fused      A stage's run of compute and tensor-parallel calls written as one op per shard.
iteration  Transformer training with tensor, pipeline and data parallelism (Megatron-LM's PTD-P).
layout     Rank layout of tensor x pipeline x data parallelism, tensor-parallel ranks adjacent.
memory     Memory per GPU of transformer training under TP x PP x DP, from published formulas.
moe        Mixture-of-experts layers and expert parallelism in the transformer workload.
pipeline   Pipeline schedules: the order in which a stage runs its micro-batches' forward and backward.
stages     What one pipeline stage of a tensor-parallel transformer holds: layers, FLOPs, gradient buckets.
toy        A toy transformer trained for real in numpy, recording what it sends: dense layers and experts.
zero       Sharded data parallelism for the transformer: ZeRO-1/2/3 and FSDP, traffic and time.
"""

from workloads.transformer.flops import CONFIGS, get_config
from workloads.transformer.iteration import closed_form, measure, schedule

__all__ = ["schedule", "measure", "closed_form", "get_config", "CONFIGS"]
