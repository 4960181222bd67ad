"""A GPT-style transformer's configuration, its FLOPs and its byte counts, from published formulas.

A decoder-only transformer of ``l`` layers, hidden size ``h``, ``a`` attention
heads, sequence length ``s`` and vocabulary ``V``, trained on micro-batches of
``b`` sequences (global batch ``B``), in a precision of ``e`` bytes per value.
The counts are Narayanan et al.'s (SC'21, section 5.1, [1]_), which count the
matrix multiplications only:

=========================== ====================================================
quantity                    formula
=========================== ====================================================
forward FLOPs of one layer  ``24 b s h^2 + 4 b s^2 h`` (attention ``8 b s h^2 +
                            4 b s^2 h``: QKV, scores, values, projection;
                            MLP ``16 b s h^2``)
backward FLOPs of one layer twice its forward
logit layer, forward        ``2 b s h V`` (backward: twice that)
parameters of one layer     ``12 h^2 + 13 h``
parameters, whole model     ``12 l h^2 (1 + 13/(12 h) + (V + s)/(12 l h))`` (Eq. 2)
FLOPs per iteration         ``96 B s l h^2 (1 + s/(6 h) + V/(16 l h))`` (Eq. 3, with
                            full activation recomputation); ``72 B s l h^2 (1 +
                            s/(6 h) + V/(12 l h))`` without
activation between stages   ``b s h`` values (section 3.3)
tensor-parallel allreduce   ``b s h`` values, two in the forward and two in the
                            backward of every layer (section 3.3)
=========================== ====================================================

Full activation recomputation (Korthikanti et al. 2022, [2]_, section 4)
re-runs each layer's forward, with its tensor-parallel communication, just
before its backward: one more forward per layer. (Korthikanti's selective
recomputation is not modelled.)

Beside the FLOPs, the bytes each block of a layer stores for its backward, per
tensor-parallel shard (Korthikanti et al. [2]_, section 4.1, Eq. 1; with
tensor parallelism Eq. 2, with sequence parallelism too Eq. 4), counted
tensor by tensor in 16-bit values ``e = 2`` bytes and 1-byte dropout masks:

* attention: whole on every shard, the layer norm's and the QKV GEMM's inputs
  (``2 s b h e``) and the output dropout's mask (``s b h``); split over the
  ``t`` shards, Q, K, V and the output projection's input (``4 s b h e``), the
  softmax's output, its dropout's output (``2 a s^2 b e``) and mask (``a s^2 b``);
* MLP: whole, the layer norm's and the first linear's inputs (``2 s b h e``)
  and the dropout mask (``s b h``); split, the GeLU's and the second linear's
  inputs (``8 s b h e``).

With sequence parallelism (Eq. 4) the whole tensors are split over the shards too.
At ``e = 2`` the two blocks add up to Korthikanti's ``s b h (10 + 24/t + 5 a
s/(h t))`` (Eq. 2; ``34 + 5 a s/h`` at ``t = 1``, Eq. 1); other precisions
scale the values and keep the masks at a byte.

References
----------
.. [1] D. Narayanan, M. Shoeybi, J. Casper, P. LeGresley, M. Patwary, V. Korthikanti,
   D. Vainbrand, P. Kashinkunti, J. Bernauer, B. Catanzaro, A. Phanishayee and M. Zaharia,
   "Efficient large-scale language model training on GPU clusters using Megatron-LM",
   SC'21, arXiv:2104.04473.
.. [2] V. Korthikanti, J. Casper, S. Lym, L. McAfee, M. Andersch, M. Shoeybi and
   B. Catanzaro, "Reducing activation recomputation in large transformer models",
   arXiv:2205.05198, 2022.
.. [3] T. Brown et al., "Language models are few-shot learners", NeurIPS 2020,
   arXiv:2005.14165, Table 2.1.
"""

from types import MappingProxyType
from typing import NamedTuple

from netsim.checks import check_int

from workloads.errors import WorkloadError

__all__ = ["Config", "CONFIGS", "PRECISION_BYTES", "RECOMPUTE", "config", "get_config",
           "layer_forward_flops", "attention_forward_flops", "mlp_forward_flops",
           "logit_forward_flops", "layer_parameters", "parameters", "iteration_flops",
           "activation_bytes", "attention_stored_bytes", "mlp_stored_bytes",
           "layer_stored_bytes"]

#: Bytes per value of each training precision (mixed precision keeps fp16/bf16 activations).
PRECISION_BYTES = MappingProxyType({"fp32": 4, "fp16": 2, "bf16": 2})
#: Activation recomputation: none, or full (one more forward per layer, [2]_).
RECOMPUTE = ("none", "full")


class Config(NamedTuple):
    """A transformer and its batch: every size the formulas of this module read.

    Examples
    --------
    >>> c = get_config("gpt3-175b")
    >>> c.layers, c.hidden, c.heads, c.seq, c.vocab
    (96, 12288, 96, 2048, 51200)
    """

    layers: int
    hidden: int
    heads: int
    seq: int
    vocab: int
    micro_batch: int = 1
    global_batch: int = 1
    precision: str = "fp16"

    @property
    def element(self):
        """Bytes per value of the precision."""
        return PRECISION_BYTES[self.precision]


def config(layers, hidden, heads, seq, vocab, micro_batch=1, global_batch=1, precision="fp16"):
    """A checked :class:`Config`.

    ``vocab`` may be 0: a stack of layers with no embedding and no logit layer
    (every pipeline stage alike).

    Raises
    ------
    WorkloadError
        For a size below 1 (vocab below 0), hidden not a multiple of heads, a
        global batch not a multiple of the micro-batch, or an unknown precision.

    Examples
    --------
    >>> config(2, 64, 4, 16, 0, micro_batch=2, global_batch=8).global_batch
    8
    >>> config(2, 66, 4, 16, 0)
    Traceback (most recent call last):
    ...
    workloads.errors.WorkloadError: hidden 66 is not a multiple of heads 4
    """
    sizes = dict(layers=layers, hidden=hidden, heads=heads, seq=seq, micro_batch=micro_batch,
                 global_batch=global_batch)
    for name, v in sizes.items():
        sizes[name] = check_int(v, name, error=WorkloadError)
    vocab = check_int(vocab, "vocab", minimum=0, error=WorkloadError)
    if sizes["hidden"] % sizes["heads"]:
        raise WorkloadError(f"hidden {hidden} is not a multiple of heads {heads}")
    if sizes["global_batch"] % sizes["micro_batch"]:
        raise WorkloadError(f"global batch {global_batch} is not a multiple of the "
                            f"micro-batch {micro_batch}")
    if precision not in PRECISION_BYTES:
        raise WorkloadError(f"unknown precision {precision!r}; known: "
                            f"{', '.join(PRECISION_BYTES)}")
    return Config(vocab=vocab, precision=precision, **sizes)


#: Named models (layers, hidden, heads, sequence, vocabulary): GPT-3's sizes from
#: Brown et al. Table 2.1 [3]_ with Megatron's padded vocabulary of 51,200
#: (Narayanan et al. [1]_, section 5.1: "vocabulary size of 51,200 ... sequence length 2048").
CONFIGS = MappingProxyType({
    "gpt3-1.3b": Config(24, 2048, 16, 2048, 51200),
    "gpt3-2.7b": Config(32, 2560, 32, 2048, 51200),
    "gpt3-6.7b": Config(32, 4096, 32, 2048, 51200),
    "gpt3-13b": Config(40, 5120, 40, 2048, 51200),
    "gpt3-175b": Config(96, 12288, 96, 2048, 51200),
})


def get_config(name, **changes):
    """A named model of :data:`CONFIGS`, with batch or precision ``changes``.

    Raises
    ------
    WorkloadError
        For an unknown name (listing the known ones) or a bad change.

    Examples
    --------
    >>> get_config("gpt3-13b", global_batch=1024).global_batch
    1024
    >>> get_config("gpt5")
    Traceback (most recent call last):
    ...
    workloads.errors.WorkloadError: unknown model 'gpt5'; known: gpt3-1.3b, gpt3-2.7b, gpt3-6.7b, gpt3-13b, gpt3-175b
    """
    if name not in CONFIGS:
        raise WorkloadError(f"unknown model {name!r}; known: {', '.join(CONFIGS)}")
    unknown = set(changes) - set(Config._fields)
    if unknown:
        raise WorkloadError(f"a model config has no field(s) {', '.join(sorted(unknown))}")
    return config(**{**CONFIGS[name]._asdict(), **changes})


def attention_forward_flops(c):
    """Forward FLOPs of one layer's attention block for a micro-batch: ``8 b s h^2 + 4 b s^2 h``.

    Examples
    --------
    >>> attention_forward_flops(Config(1, 4, 1, 2, 0))   # 8*2*16 + 4*4*4
    320
    """
    b, s, h = c.micro_batch, c.seq, c.hidden
    return 8 * b * s * h * h + 4 * b * s * s * h


def mlp_forward_flops(c):
    """Forward FLOPs of one layer's MLP (``h -> 4h -> h``) for a micro-batch: ``16 b s h^2``.

    Examples
    --------
    >>> mlp_forward_flops(Config(1, 4, 1, 2, 0))
    512
    """
    return 16 * c.micro_batch * c.seq * c.hidden ** 2


def layer_forward_flops(c):
    """Forward FLOPs of one transformer layer for a micro-batch: ``24 b s h^2 + 4 b s^2 h`` [1]_.

    Examples
    --------
    >>> layer_forward_flops(Config(1, 4, 1, 2, 0))
    832
    """
    return attention_forward_flops(c) + mlp_forward_flops(c)


def logit_forward_flops(c):
    """Forward FLOPs of the logit layer for a micro-batch: ``2 b s h V`` [1]_.

    Examples
    --------
    >>> logit_forward_flops(Config(1, 4, 1, 2, 10))
    160
    """
    return 2 * c.micro_batch * c.seq * c.hidden * c.vocab


def layer_parameters(c):
    """Parameters of one layer: ``12 h^2 + 13 h`` (weights and biases, two layer norms) [1]_.

    Examples
    --------
    >>> layer_parameters(Config(1, 4, 1, 2, 0))
    244
    """
    return 12 * c.hidden ** 2 + 13 * c.hidden


def parameters(c):
    """Parameters of the model, Eq. 2 of [1]_: the layers plus ``(V + s) h`` of embeddings.

    Examples
    --------
    >>> round(parameters(get_config("gpt3-175b")) / 1e9, 1)   # Narayanan Table 1: 174.6 B
    174.6
    """
    return c.layers * layer_parameters(c) + (c.vocab + c.seq) * c.hidden


def iteration_flops(c, recompute="full"):
    """FLOPs of one training iteration over the global batch, Eq. 3 of [1]_.

    ``96 B s l h^2 (1 + s/(6h) + V/(16 l h))`` with full recomputation, and
    ``72 B s l h^2 (1 + s/(6h) + V/(12 l h))`` without: the sum of this module's
    per-layer and logit counts over every micro-batch.

    Examples
    --------
    >>> c = get_config("gpt3-175b", global_batch=1536)
    >>> round(iteration_flops(c) / 1e18, 2)
    4.51
    """
    if recompute not in RECOMPUTE:
        raise WorkloadError(f"unknown recompute {recompute!r}; known: {', '.join(RECOMPUTE)}")
    B, s, l, h, V = c.global_batch, c.seq, c.layers, c.hidden, c.vocab
    if recompute == "full":
        return 96 * B * s * l * h * h * (1 + s / (6 * h) + V / (16 * l * h))
    return 72 * B * s * l * h * h * (1 + s / (6 * h) + V / (12 * l * h))


def activation_bytes(c):
    """Bytes of one micro-batch's activation (``b s h`` values), as sent between stages [1]_.

    It is also the buffer of each tensor-parallel allreduce.

    Examples
    --------
    >>> activation_bytes(get_config("gpt3-13b"))   # 2048 * 5120 fp16 values
    20971520
    """
    return c.micro_batch * c.seq * c.hidden * c.element


def _stored(c, whole, split, tp, sequence_parallel):
    """``whole + split / tp`` bytes, or both over ``tp`` with sequence parallelism."""
    tp = check_int(tp, "tp", error=WorkloadError)
    return (whole + split) / tp if sequence_parallel else whole + split / tp


def attention_stored_bytes(c, tp=1, sequence_parallel=False):
    """Bytes one layer's attention block stores for its backward, per shard, per micro-batch [2]_.

    ``s b h (2 e + 1)`` whole on every shard (with ``sequence_parallel`` split
    too) and ``(4 s b h e + a s^2 b (2 e + 1)) / t`` split: ``11 s b h + 5 a
    s^2 b`` and the layer norm's ``2 s b h`` at ``t = 1`` and ``e = 2``
    (Korthikanti et al. section 4.1).

    Examples
    --------
    >>> c = Config(1, 64, 4, 32, 0, micro_batch=2)
    >>> attention_stored_bytes(c) == 32 * 2 * 64 * 13 + 5 * 4 * 32 ** 2 * 2
    True
    """
    b, s, h, a, e = c.micro_batch, c.seq, c.hidden, c.heads, c.element
    return _stored(c, s * b * h * (2 * e + 1), 4 * s * b * h * e + a * s * s * b * (2 * e + 1),
                   tp, sequence_parallel)


def mlp_stored_bytes(c, tp=1, sequence_parallel=False):
    """Bytes one layer's MLP block stores for its backward, per shard, per micro-batch [2]_.

    ``s b h (2 e + 1)`` whole (with ``sequence_parallel`` split too) and ``8 s b
    h e / t`` split: ``19 s b h`` and the layer norm's ``2 s b h`` at ``t = 1``
    and ``e = 2`` (Korthikanti et al. section 4.1).

    Examples
    --------
    >>> c = Config(1, 64, 4, 32, 0, micro_batch=2)
    >>> mlp_stored_bytes(c) == 32 * 2 * 64 * 21, mlp_stored_bytes(c, 4) == 32 * 2 * 64 * 9
    (True, True)
    """
    b, s, h, e = c.micro_batch, c.seq, c.hidden, c.element
    return _stored(c, s * b * h * (2 * e + 1), 8 * s * b * h * e, tp, sequence_parallel)


def layer_stored_bytes(c, tp=1, sequence_parallel=False):
    """Bytes one layer stores for its backward per shard and micro-batch: Korthikanti Eq. 1, 2, 4.

    ``s b h (10 + 24/t + 5 a s/(h t))`` in 16-bit precision; ``s b h (34/t + 5
    a s/(h t))`` with ``sequence_parallel``.

    Examples
    --------
    >>> c = Config(1, 64, 4, 32, 0, micro_batch=2)
    >>> layer_stored_bytes(c) == 32 * 2 * 64 * (34 + 5 * 4 * 32 / 64)   # Eq. 1
    True
    >>> layer_stored_bytes(c, 4) == 32 * 2 * 64 * (10 + 24 / 4 + 5 * 4 * 32 / (64 * 4))  # Eq. 2
    True
    """
    return (attention_stored_bytes(c, tp, sequence_parallel)
            + mlp_stored_bytes(c, tp, sequence_parallel))
