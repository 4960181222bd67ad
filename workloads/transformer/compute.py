"""How long a transformer layer's blocks compute: matrix FLOPs at a rate, memory traffic at HBM speed.

Two rules, the second a first-order refinement of the first:

* **FLOPs only** (``memory_bandwidth=None``): a block takes its matrix
  multiplications' FLOPs (:mod:`workloads.transformer.flops`, Narayanan et al.
  SC'21 section 5.1) over the achieved rate ``F`` (the device's peak times an
  efficiency). Everything else a layer does is folded into the efficiency.
* **FLOPs plus memory traffic** (``memory_bandwidth`` given, bytes/s): a block
  takes ``FLOPs / F + traffic / memory_bandwidth``. The work a GEMM count leaves
  out is memory-bound: layer norms, GeLU, bias, dropout and residual adds touch
  ``O(b s h)`` bytes, and without flash attention (Megatron-LM in 2021) the
  attention scores' scale, mask, softmax and dropout touch ``O(a s^2 b)``; their
  bytes grow as ``h`` while the GEMMs' FLOPs grow as ``h^2``, so their share of
  a layer's time falls as the model widens, which one efficiency cannot follow.

The traffic is counted from a published count, not measured: the bytes each
block stores for its backward (Korthikanti et al. 2022, section 4.1, Eq. 1, 2
and 4; :func:`workloads.transformer.flops.attention_stored_bytes` and
:func:`~workloads.transformer.flops.mlp_stored_bytes`, per tensor-parallel
shard): the inputs and outputs of the layer's memory-bound kernels (layer
norms, bias-GeLU, scale-mask-softmax, dropouts and their masks) and the
attention's Q, K, V, which the batched GEMMs of the attention core read. Each pass moves them a whole number of times (:data:`TRAFFIC`):

============ ======== ===============================================================
pass         multiple why
============ ======== ===============================================================
forward      1        every stored tensor is written once, by the kernel producing it
recompute    1        full recomputation runs the forward again: written once more
backward     1        every stored tensor is read once, by the backward that needs it
============ ======== ===============================================================

It is a lower bound on the real traffic and errs one way: a kernel's reads
of its inputs in the forward, the gradients the backward writes (the same
size as the activations) and the cross-entropy's ``b s V`` logits (the GEMM rule counts
those on its logit unit, :func:`workloads.transformer.flops.loss_bytes`) are not
counted, nor the kernels' launch latency; nor is the traffic of the GEMMs
themselves (their operands stream through HBM while the tensor cores work, and
stay inside the efficiency). The bandwidth is the datasheet's peak
(:func:`topologies.devices.hbm_bandwidth`), which kernels reach a share of.

References
----------
.. [1] V. Korthikanti, J. Casper, S. Lym, L. McAfee, M. Andersch, M. Shoeybi and
   B. Catanzaro, "Reducing activation recomputation in large transformer models",
   arXiv:2205.05198, 2022, section 4.1, Table 2.
"""

from types import MappingProxyType

from netsim.checks import check_real

from workloads.errors import WorkloadError
from workloads.transformer.flops import attention_stored_bytes, mlp_stored_bytes

__all__ = ["TRAFFIC", "BLOCKS", "memory_seconds"]

#: How many times each pass moves a block's stored bytes (the module docstring's table).
TRAFFIC = MappingProxyType({"forward": 1, "recompute": 1, "backward": 1})
#: A layer's two blocks, in the order a forward runs them.
BLOCKS = ("attention", "mlp")


def memory_seconds(c, tp=1, sequence_parallel=False, memory_bandwidth=None):
    """Seconds of memory traffic of each block and pass, per shard and micro-batch.

    Parameters
    ----------
    c : workloads.transformer.flops.Config
        Model, micro-batch and precision.
    tp : int
        Tensor-parallel shards.
    sequence_parallel : bool
        Whether the blocks' whole tensors are split over the shards too.
    memory_bandwidth : float, optional
        Bytes/s of a device's memory; None: the FLOPs-only rule (every entry 0).

    Returns
    -------
    dict
        ``{(block, pass): seconds}`` for every block of :data:`BLOCKS` and pass
        of :data:`TRAFFIC`: ``TRAFFIC[pass]`` times the block's stored bytes over
        ``memory_bandwidth``.

    Raises
    ------
    WorkloadError
        For a bandwidth that is not a positive number.

    Examples
    --------
    >>> from workloads.transformer.flops import config, mlp_stored_bytes
    >>> c = config(1, 64, 4, 32, 0)
    >>> m = memory_seconds(c, memory_bandwidth=1e9)
    >>> m[("mlp", "backward")] == mlp_stored_bytes(c) / 1e9
    True
    >>> memory_seconds(c)[("attention", "forward")]
    0.0
    >>> memory_seconds(c, memory_bandwidth=0)
    Traceback (most recent call last):
    ...
    workloads.errors.WorkloadError: memory_bandwidth must be a finite number > 0, got 0
    """
    if memory_bandwidth is None:
        return {(blk, kind): 0.0 for blk in BLOCKS for kind in TRAFFIC}
    bw = check_real(memory_bandwidth, "memory_bandwidth", lo=0, strict=True, error=WorkloadError)
    stored = {"attention": attention_stored_bytes(c, tp, sequence_parallel),
              "mlp": mlp_stored_bytes(c, tp, sequence_parallel)}
    return {(blk, kind): TRAFFIC[kind] * stored[blk] / bw for blk in BLOCKS for kind in TRAFFIC}
