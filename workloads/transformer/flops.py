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

**Today's shapes.** Those are GPT-3's: an MLP of width ``f = 4 h`` with GeLU,
as many key/value heads as query heads, biases on every linear layer, two
LayerNorms per layer, learned position embeddings and the logit layer tied to
the word embedding. :class:`Config` generalises each, with the defaults above
(their numbers bit-identical), in Megatron-LM's terms (``--ffn-hidden-size``,
``--swiglu``, ``--num-query-groups``, ``--disable-bias-linear``,
``--normalization RMSNorm``, ``--position-embedding-type rope``,
``--untie-embeddings-and-output-weights``):

* ``ffn_hidden`` (``f``) and ``mlp``: ``"gelu"`` has two matrices ``h x f``;
  ``"swiglu"`` (Shazeer 2020, [4]_, as in Llama) three, ``SiLU(x W) * (x V)``
  then ``W_2``: the MLP's forward is ``2 n b s h f`` FLOPs for ``n`` = 2 or 3
  matrices (``16 b s h^2`` at ``n = 2``, ``f = 4 h``).
* ``kv_heads`` (``k``, grouped-query attention, Ainslie et al. 2023, [5]_):
  ``k`` key and value heads of width ``d = h / a`` shared by the ``a`` query
  heads. The QKV GEMM is ``h x (h + 2 k d)``: ``2 b s h (h + 2 h k/a)``
  forward FLOPs; the scores and values are the ``a`` query heads' (``4 b s^2
  h``) and the output projection stays ``h x h``.
* ``bias``, ``norm`` and ``position`` change parameters only (no GEMM): a
  linear layer's bias, LayerNorm's ``2 h`` or RMSNorm's ``h`` per norm, ``s h``
  learned position embeddings or none for rotary ones (RoPE); ``tied=False``
  adds a logit layer of its own, ``V h``.

The tensor-parallel traffic stays ``b s h`` values per block: each block's
allreduce sums the output of its row-parallel GEMM (the output projection,
``a d = h`` inputs, or the MLP's last matrix, ``f`` inputs), which is ``h``
wide per token whatever ``k`` and ``f`` are; the ``K`` and ``V`` heads and the
``f``-wide MLP activations stay on the shard that computes them.

Full activation recomputation (Korthikanti et al. 2022, [2]_, section 4)
re-runs each layer's forward, with its tensor-parallel communication, just
before its backward: one more forward per layer. Selective recomputation
(their section 5) re-runs only the attention core, the part whose stored
tensors grow as ``s^2``: ``Q K^T``, the softmax, its dropout and the attention
over ``V``. Its GEMMs are the scores' and values', ``4 b s^2 h`` forward FLOPs
per layer (:func:`attention_core_forward_flops`: ``a`` heads of ``2 s^2 d``
each, twice), with no tensor-parallel communication (each shard holds its
heads' Q, K and V); in return the layer no longer stores the softmax's
output, its dropout's output and mask, ``a s^2 b (2 e + 1)`` (``5 a s^2 b``
at ``e = 2``): ``s b h (10 + 24/t)`` with tensor parallelism (their Eq. 6
without sequence parallelism), ``34 s b h / t`` with it (Eq. 6). FLOPs per
iteration: ``72 B s l h^2 (w + 2 s/(9 h) + V/(12 l h))``, the ``s^2`` term a
third more than without recomputation: a layer's forward and backward grow by
``4 s / (72 h + 12 s)`` (0.9 % for GPT-3 175B's ``s = 2048``, ``h = 12288``;
``4 s / (24 h + 4 s)``, 2.7 %, of its forward).

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
scale the values and keep the masks at a byte. Generalised tensor by tensor,
only two terms change:

* K and V are ``k d`` wide, not ``h``: the split ``4 s b h e`` becomes ``(2 h +
  2 k d) s b e``. Q, the projection's input, the scores (``a`` query heads)
  and every whole tensor keep their sizes.
* the MLP's split tensors are ``f`` wide: GeLU stores its input and the last
  linear's input, ``2 s b f e``; SwiGLU, fused as in Megatron-LM
  (``megatron/core/fusions/fused_bias_swiglu.py``, ``SwiGLUFunction`` saves
  only its ``2 f``-wide input), that and the last linear's input, ``3 s b f
  e``: ``n s b f e`` for ``n`` matrices. The block's input and its layer
  norm's stay ``h`` wide.

Left out: RoPE's and RMSNorm's own stored tensors (counted as LayerNorm's),
and models trained without dropout (Llama) keep Korthikanti's masks.

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
.. [4] N. Shazeer, "GLU variants improve Transformer", arXiv:2002.05202, 2020.
.. [5] J. Ainslie, J. Lee-Thorp, M. de Jong, Y. Zemlyanskiy, F. Lebron and S. Sanghai,
   "GQA: training generalized multi-query transformer models from multi-head
   checkpoints", EMNLP 2023, arXiv:2305.13245.
.. [6] A. Dubey et al. (Llama team, AI @ Meta), "The Llama 3 herd of models",
   arXiv:2407.21783, 2024, Table 3 and section 3.4.1.
.. [7] NVIDIA Megatron-LM, ``megatron/core/tensor_parallel/cross_entropy.py`` at
   f2e5db402c (July 2024, core_r0.8.0's code; ``VocabParallelCrossEntropy`` and
   ``_VocabParallelCrossEntropy``), the loss Megatron-Core runs without
   ``--cross-entropy-loss-fusion`` (off by default, ``megatron/training/arguments.py``).
"""

from types import MappingProxyType
from typing import NamedTuple

from netsim.checks import check_choice, check_int

from workloads.errors import WorkloadError

__all__ = ["Config", "CONFIGS", "PRECISION_BYTES", "RECOMPUTE", "MLPS", "NORMS", "POSITIONS",
           "config", "get_config", "qkv_width", "layer_forward_flops", "attention_forward_flops",
           "mlp_forward_flops", "attention_core_forward_flops", "logit_forward_flops", "layer_parameter_split",
           "layer_parameters", "embedding_parameters", "parameters", "iteration_flops",
           "activation_bytes", "attention_stored_bytes", "mlp_stored_bytes",
           "layer_stored_bytes", "loss_bytes"]

#: Bytes per value of each training precision (mixed precision keeps fp16/bf16 activations).
PRECISION_BYTES = MappingProxyType({"fp32": 4, "fp16": 2, "bf16": 2})
#: Activation recomputation: none, full (one more forward per layer, [2]_) or selective (the
#: attention core again, [2]_ section 5).
RECOMPUTE = ("none", "full", "selective")
#: The MLPs and their ``h x f`` matrices: GeLU two, SwiGLU (gated, [4]_) three.
MLPS = MappingProxyType({"gelu": 2, "swiglu": 3})
#: The layer norms and their parameters per ``h``: LayerNorm a gain and a bias, RMSNorm a gain.
NORMS = MappingProxyType({"layernorm": 2, "rmsnorm": 1})
#: Position embeddings: learned (``s h`` parameters) or rotary (RoPE, none).
POSITIONS = ("learned", "rope")


class Config(NamedTuple):
    """A transformer and its batch: every size the formulas of this module read.

    ``ffn_hidden`` None is ``4 h`` and ``kv_heads`` None is ``heads``
    (:attr:`ffn`, :attr:`kv`); the other shape keys are described in the
    module's docstring.

    Examples
    --------
    >>> c = get_config("gpt3-175b")
    >>> c.layers, c.hidden, c.heads, c.seq, c.vocab, c.ffn, c.kv, c.mlp
    (96, 12288, 96, 2048, 51200, 49152, 96, 'gelu')
    """

    layers: int
    hidden: int
    heads: int
    seq: int
    vocab: int
    micro_batch: int = 1
    global_batch: int = 1
    precision: str = "fp16"
    ffn_hidden: int = None
    mlp: str = "gelu"
    kv_heads: int = None
    bias: bool = True
    norm: str = "layernorm"
    position: str = "learned"
    tied: bool = True

    @property
    def element(self):
        """Bytes per value of the precision."""
        return PRECISION_BYTES[self.precision]

    @property
    def ffn(self):
        """The MLP's width ``f``: ``ffn_hidden``, or ``4 h`` when it is None."""
        return 4 * self.hidden if self.ffn_hidden is None else self.ffn_hidden

    @property
    def kv(self):
        """Key/value heads ``k``: ``kv_heads``, or ``heads`` when it is None."""
        return self.heads if self.kv_heads is None else self.kv_heads


def config(layers, hidden, heads, seq, vocab, micro_batch=1, global_batch=1, precision="fp16",
           ffn_hidden=None, mlp="gelu", kv_heads=None, bias=True, norm="layernorm",
           position="learned", tied=True):
    """A checked :class:`Config`.

    ``vocab`` may be 0: a stack of layers with no embedding and no logit layer
    (every pipeline stage alike).

    Raises
    ------
    WorkloadError
        For a size below 1 (vocab below 0), hidden not a multiple of heads,
        heads not a multiple of kv_heads, a global batch not a multiple of the
        micro-batch, or an unknown precision, MLP, norm or position embedding.

    Examples
    --------
    >>> config(2, 64, 4, 16, 0, micro_batch=2, global_batch=8).global_batch
    8
    >>> config(2, 64, 4, 16, 0, ffn_hidden=96, mlp="swiglu", kv_heads=2).ffn
    96
    >>> config(2, 66, 4, 16, 0)
    Traceback (most recent call last):
    ...
    workloads.errors.WorkloadError: hidden 66 is not a multiple of heads 4
    >>> config(2, 64, 4, 16, 0, kv_heads=3)
    Traceback (most recent call last):
    ...
    workloads.errors.WorkloadError: heads 4 is not a multiple of kv_heads 3
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
    if ffn_hidden is not None:
        ffn_hidden = check_int(ffn_hidden, "ffn_hidden", error=WorkloadError)
    if kv_heads is not None:
        kv_heads = check_int(kv_heads, "kv_heads", error=WorkloadError)
        if sizes["heads"] % kv_heads:
            raise WorkloadError(f"heads {heads} is not a multiple of kv_heads {kv_heads}")
    check_choice(mlp, "mlp", MLPS, error=WorkloadError)
    check_choice(norm, "norm", NORMS, error=WorkloadError)
    check_choice(position, "position embedding", POSITIONS, error=WorkloadError)
    for name, v in (("bias", bias), ("tied", tied)):
        if not isinstance(v, bool):
            raise WorkloadError(f"{name} must be true or false, got {v!r}")
    return Config(vocab=vocab, precision=precision, ffn_hidden=ffn_hidden, mlp=mlp,
                  kv_heads=kv_heads, bias=bias, norm=norm, position=position, tied=tied,
                  **sizes)


#: Llama 3.1's dense models: (name, layers, hidden, heads, ffn_hidden), from the
#: ``config.json`` of Hugging Face's meta-llama/Llama-3.1-8B, -70B and -405B
#: (``num_hidden_layers``, ``hidden_size``, ``num_attention_heads``,
#: ``intermediate_size``; ``num_key_value_heads`` 8, ``vocab_size`` 128256,
#: ``hidden_act`` silu, ``attention_bias`` and ``mlp_bias`` false, RMSNorm, RoPE,
#: ``tie_word_embeddings`` false, ``torch_dtype`` bfloat16) and Dubey et al. [6]_
#: Table 3; sequences of 8,192 tokens, their pre-training's after its first
#: stage (section 3.4.1).
_LLAMA3 = (("8b", 32, 4096, 32, 14336), ("70b", 80, 8192, 64, 28672),
           ("405b", 126, 16384, 128, 53248))

#: Named models (layers, hidden, heads, sequence, vocabulary): GPT-3's sizes from
#: Brown et al. Table 2.1 [3]_ with Megatron's padded vocabulary of 51,200
#: (Narayanan et al. [1]_, section 5.1: "vocabulary size of 51,200 ... sequence length 2048");
#: Llama 3's (:data:`_LLAMA3`), in bf16 with SwiGLU, 8 key/value heads, no biases,
#: RMSNorm, RoPE and an untied logit layer.
CONFIGS = MappingProxyType({
    "gpt3-1.3b": Config(24, 2048, 16, 2048, 51200),
    "gpt3-2.7b": Config(32, 2560, 32, 2048, 51200),
    "gpt3-6.7b": Config(32, 4096, 32, 2048, 51200),
    "gpt3-13b": Config(40, 5120, 40, 2048, 51200),
    "gpt3-175b": Config(96, 12288, 96, 2048, 51200),
    **{f"llama3-{name}": Config(layers, hidden, heads, 8192, 128256, precision="bf16",
                                ffn_hidden=ffn, mlp="swiglu", kv_heads=8, bias=False,
                                norm="rmsnorm", position="rope", tied=False)
       for name, layers, hidden, heads, ffn in _LLAMA3},
})


def get_config(name, **changes):
    """A named model of :data:`CONFIGS`, with batch, precision or shape ``changes``.

    Raises
    ------
    WorkloadError
        For an unknown name (listing the known ones) or a bad change.

    Examples
    --------
    >>> get_config("gpt3-13b", global_batch=1024).global_batch
    1024
    >>> c = get_config("llama3-405b")
    >>> c.layers, c.hidden, c.heads, c.kv, c.ffn, c.mlp, c.precision
    (126, 16384, 128, 8, 53248, 'swiglu', 'bf16')
    >>> get_config("gpt5")
    Traceback (most recent call last):
    ...
    workloads.errors.WorkloadError: unknown model 'gpt5'; known: gpt3-1.3b, gpt3-2.7b, gpt3-6.7b, gpt3-13b, gpt3-175b, llama3-8b, llama3-70b, llama3-405b
    """
    if not isinstance(name, str) or name not in CONFIGS:
        raise WorkloadError(f"unknown model {name!r}; known: {', '.join(CONFIGS)}")
    unknown = set(changes) - set(Config._fields)
    if unknown:
        raise WorkloadError(f"a model config has no field(s) {', '.join(sorted(unknown))}")
    return config(**{**CONFIGS[name]._asdict(), **changes})


def qkv_width(c):
    """Output columns of the QKV GEMM: ``h + 2 k d`` (``d = h / a``; ``3 h`` without GQA [5]_).

    Examples
    --------
    >>> qkv_width(Config(1, 64, 8, 2, 0)), qkv_width(Config(1, 64, 8, 2, 0, kv_heads=2))
    (192, 96)
    """
    return c.hidden + 2 * c.kv * (c.hidden // c.heads)


def attention_forward_flops(c):
    """Forward FLOPs of one layer's attention block for a micro-batch.

    ``2 b s h (h + 2 k d) + 2 b s h^2 + 4 b s^2 h``: the QKV GEMM, the output
    projection, the scores and values; ``8 b s h^2 + 4 b s^2 h`` without GQA [1]_.

    Examples
    --------
    >>> attention_forward_flops(Config(1, 4, 1, 2, 0))   # 8*2*16 + 4*4*4
    320
    >>> attention_forward_flops(Config(1, 4, 2, 2, 0, kv_heads=1))   # 2*2*4*(4+4) + 2*2*16 + 64
    256
    """
    b, s, h = c.micro_batch, c.seq, c.hidden
    return 2 * b * s * h * (qkv_width(c) + h) + 4 * b * s * s * h


def mlp_forward_flops(c):
    """Forward FLOPs of one layer's MLP for a micro-batch: ``2 n b s h f`` for ``n`` matrices.

    ``16 b s h^2`` for GeLU's two matrices and ``f = 4 h`` [1]_; SwiGLU has three.

    Examples
    --------
    >>> mlp_forward_flops(Config(1, 4, 1, 2, 0))
    512
    >>> mlp_forward_flops(Config(1, 4, 1, 2, 0, ffn_hidden=8, mlp="swiglu"))   # 2*3*2*4*8
    384
    """
    return 2 * MLPS[c.mlp] * c.micro_batch * c.seq * c.hidden * c.ffn


def attention_core_forward_flops(c):
    """Forward FLOPs of one layer's attention core for a micro-batch: ``4 b s^2 h`` [2]_.

    ``Q K^T`` and the attention over ``V``, ``2 b s^2 h`` each (``a`` query heads
    of width ``d``): what selective recomputation runs again (Korthikanti et
    al. section 5).

    Examples
    --------
    >>> attention_core_forward_flops(Config(1, 4, 1, 2, 0))   # 4 * 4 * 4
    64
    """
    return 4 * c.micro_batch * c.seq * c.seq * c.hidden


def layer_forward_flops(c):
    """Forward FLOPs of one transformer layer for a micro-batch: ``24 b s h^2 + 4 b s^2 h`` [1]_.

    (Attention's and the MLP's: :func:`attention_forward_flops`, :func:`mlp_forward_flops`.)

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


def layer_parameter_split(c):
    """One layer's parameters as ``(split, whole)``: those tensor parallelism splits, and not.

    Split (Megatron-LM's ``ColumnParallelLinear`` weights and biases and
    ``RowParallelLinear`` weights): the QKV GEMM ``h (h + 2 k d)`` and its bias
    ``h + 2 k d``, the output projection ``h^2``, the MLP's ``n`` matrices ``n
    h f`` and the biases of its ``n - 1`` first ones ``(n - 1) f``. Whole: the
    two norms (``2 h`` each for LayerNorm, ``h`` for RMSNorm) and the biases of
    the two row-parallel GEMMs, ``2 h``. Without ``bias`` no bias at all.
    ``(12 h^2 + 7 h, 6 h)`` for GPT-3's shape.

    Examples
    --------
    >>> h = 64
    >>> layer_parameter_split(Config(1, h, 4, 8, 0)) == (12 * h * h + 7 * h, 6 * h)
    True
    >>> layer_parameter_split(Config(1, 64, 4, 8, 0, ffn_hidden=96, mlp="swiglu", kv_heads=2,
    ...                              bias=False, norm="rmsnorm"))   # 64*(64+64) + 64^2 + 3*64*96
    (30720, 128)
    """
    h, n, qkv, bias = c.hidden, MLPS[c.mlp], qkv_width(c), int(c.bias)
    split = h * qkv + bias * qkv + h * h + n * h * c.ffn + bias * (n - 1) * c.ffn
    return split, NORMS[c.norm] * 2 * h + bias * 2 * h


def layer_parameters(c):
    """Parameters of one layer: ``12 h^2 + 13 h`` (weights and biases, two layer norms) [1]_.

    The sum of :func:`layer_parameter_split`.

    Examples
    --------
    >>> layer_parameters(Config(1, 4, 1, 2, 0))
    244
    """
    return sum(layer_parameter_split(c))


def embedding_parameters(c):
    """Parameters outside the layers: ``(V + s) h`` [1]_; RoPE has no ``s h``, untied a second ``V h``.

    The final norm is left out, as Narayanan et al.'s Eq. 2 leaves it out.

    Examples
    --------
    >>> embedding_parameters(Config(1, 4, 1, 2, 10)), embedding_parameters(
    ...     Config(1, 4, 1, 2, 10, position="rope", tied=False))
    (48, 80)
    """
    return (c.vocab * (1 if c.tied else 2) + c.seq * (c.position == "learned")) * c.hidden


def parameters(c):
    """Parameters of the model, Eq. 2 of [1]_: the layers plus the embeddings.

    Examples
    --------
    >>> round(parameters(get_config("gpt3-175b")) / 1e9, 1)   # Narayanan Table 1: 174.6 B
    174.6
    """
    return c.layers * layer_parameters(c) + embedding_parameters(c)


def iteration_flops(c, recompute="full"):
    """FLOPs of one training iteration over the global batch, Eq. 3 of [1]_.

    ``96 B s l h^2 (w + s/(6h) + V/(16 l h))`` with full recomputation,
    ``72 B s l h^2 (w + s/(6h) + V/(12 l h))`` without, and ``72 B s l h^2 (w + 2
    s/(9h) + V/(12 l h))`` with selective recomputation (its ``4 B s^2 l h``
    more, the attention cores again): the sum of this module's
    per-layer and logit counts over every micro-batch, where ``w`` is a layer's
    GEMM FLOPs per token over GPT's ``24 h^2`` (1 for GPT-3's shape: Eq. 3 as
    printed).

    Examples
    --------
    >>> c = get_config("gpt3-175b", global_batch=1536)
    >>> round(iteration_flops(c) / 1e18, 2)
    4.51
    >>> round(iteration_flops(c, "selective") / iteration_flops(c, "none") - 1, 3)
    0.009
    """
    if recompute not in RECOMPUTE:
        raise WorkloadError(f"unknown recompute {recompute!r}; known: {', '.join(RECOMPUTE)}")
    B, s, l, h, V = c.global_batch, c.seq, c.layers, c.hidden, c.vocab
    w = (2 * h * (qkv_width(c) + h) + 2 * MLPS[c.mlp] * h * c.ffn) / (24 * h * h)
    if recompute == "full":
        return 96 * B * s * l * h * h * (w + s / (6 * h) + V / (16 * l * h))
    if recompute == "selective":
        return 72 * B * s * l * h * h * (w + 2 * s / (9 * h) + V / (12 * l * h))
    return 72 * B * s * l * h * h * (w + s / (6 * h) + V / (12 * l * h))


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


def attention_stored_bytes(c, tp=1, sequence_parallel=False, selective=False):
    """Bytes one layer's attention block stores for its backward, per shard, per micro-batch [2]_.

    ``s b h (2 e + 1)`` whole on every shard (with ``sequence_parallel`` split
    too) and ``(4 s b h e + a s^2 b (2 e + 1)) / t`` split: ``11 s b h + 5 a
    s^2 b`` and the layer norm's ``2 s b h`` at ``t = 1`` and ``e = 2``
    (Korthikanti et al. section 4.1). With ``k`` key/value heads K and V are
    ``k d`` wide: ``4 s b h e`` becomes ``(2 h + 2 k d) s b e``. With
    ``selective`` recomputation the ``a s^2 b (2 e + 1)`` of the softmax, its
    dropout and mask are not stored (Korthikanti et al. section 5).

    Examples
    --------
    >>> c = Config(1, 64, 4, 32, 0, micro_batch=2)
    >>> attention_stored_bytes(c) == 32 * 2 * 64 * 13 + 5 * 4 * 32 ** 2 * 2
    True
    >>> g = Config(1, 64, 4, 32, 0, micro_batch=2, kv_heads=1)   # K, V: 16 wide, not 64
    >>> attention_stored_bytes(c) - attention_stored_bytes(g) == 2 * 32 * 2 * (64 - 16) * 2
    True
    >>> attention_stored_bytes(c, selective=True) == 32 * 2 * 64 * 13
    True
    """
    b, s, h, a, e = c.micro_batch, c.seq, c.hidden, c.heads, c.element
    scores = 0 if selective else a * s * s * b * (2 * e + 1)
    return _stored(c, s * b * h * (2 * e + 1), s * b * (qkv_width(c) + h) * e + scores, tp,
                   sequence_parallel)


def mlp_stored_bytes(c, tp=1, sequence_parallel=False):
    """Bytes one layer's MLP block stores for its backward, per shard, per micro-batch [2]_.

    ``s b h (2 e + 1)`` whole (with ``sequence_parallel`` split too) and ``8 s b
    h e / t`` split: ``19 s b h`` and the layer norm's ``2 s b h`` at ``t = 1``
    and ``e = 2`` (Korthikanti et al. section 4.1). For width ``f`` and ``n``
    matrices the split part is ``n s b f e``: GeLU's input and the last
    linear's (``8 s b h e`` at ``f = 4 h``), or fused SwiGLU's ``2 f``-wide
    input and the last linear's.

    Examples
    --------
    >>> c = Config(1, 64, 4, 32, 0, micro_batch=2)
    >>> mlp_stored_bytes(c) == 32 * 2 * 64 * 21, mlp_stored_bytes(c, 4) == 32 * 2 * 64 * 9
    (True, True)
    >>> g = Config(1, 64, 4, 32, 0, micro_batch=2, ffn_hidden=96, mlp="swiglu")
    >>> mlp_stored_bytes(g) == 32 * 2 * 64 * 5 + 3 * 32 * 2 * 96 * 2
    True
    """
    b, s, h, e = c.micro_batch, c.seq, c.hidden, c.element
    return _stored(c, s * b * h * (2 * e + 1), MLPS[c.mlp] * s * b * c.ffn * e, tp,
                   sequence_parallel)


def layer_stored_bytes(c, tp=1, sequence_parallel=False, selective=False):
    """Bytes one layer stores for its backward per shard and micro-batch: Korthikanti Eq. 1, 2, 4.

    ``s b h (10 + 24/t + 5 a s/(h t))`` in 16-bit precision; ``s b h (34/t + 5
    a s/(h t))`` with ``sequence_parallel``; without the ``5 a s/(h t)`` with
    ``selective`` recomputation (Eq. 6).

    Examples
    --------
    >>> c = Config(1, 64, 4, 32, 0, micro_batch=2)
    >>> layer_stored_bytes(c) == 32 * 2 * 64 * (34 + 5 * 4 * 32 / 64)   # Eq. 1
    True
    >>> layer_stored_bytes(c, 4) == 32 * 2 * 64 * (10 + 24 / 4 + 5 * 4 * 32 / (64 * 4))  # Eq. 2
    True
    >>> layer_stored_bytes(c, 4, True, True) == 32 * 2 * 64 * 34 / 4   # Eq. 6
    True
    """
    return (attention_stored_bytes(c, tp, sequence_parallel, selective)
            + mlp_stored_bytes(c, tp, sequence_parallel))


def loss_bytes(c, tp=1):
    """Bytes of memory traffic of the loss on the logits, per shard and micro-batch: ``(forward, backward)``.

    The vocabulary-parallel cross-entropy of Megatron-LM [7]_ runs element-wise
    kernels over the ``N = b s V / t`` logits of a shard, in fp32: it casts the
    ``e``-byte logits to fp32 (reads ``e N``, writes ``4 N``; nothing at ``e =
    4``), takes each token's maximum (reads ``4 N``), subtracts it (reads and
    writes ``4 N``), exponentiates in place (``8 N``), sums (reads ``4 N``) and
    divides by the sum in place (``8 N``), keeping that softmax for the
    backward: ``(32 + e + 4) N`` bytes forward, ``38 N`` at ``e = 2``. The
    backward subtracts one at each token's target (``O(b s)``), multiplies by
    the incoming gradient in place (``8 N``) and casts the gradient back to
    the logits' precision (reads ``4 N``, writes ``e N``): ``14 N`` at ``e = 2``.
    The logit GEMM's own output (its ``e N`` bytes written) is the GEMM's
    (:func:`netsim.costmodel.gemm.gemm_bytes`), not counted here; nor are the
    ``O(b s)`` tensors (maxima, sums, targets) and the three small allreduces
    over the tensor-parallel shards. Megatron-LM v2.5 (2021,
    ``megatron/mpu/cross_entropy.py``, its ``output.float()`` in
    ``megatron/model/gpt_model.py``) runs the same kernels.

    Examples
    --------
    >>> c = Config(1, 64, 4, 32, 1000, micro_batch=2, precision="bf16")
    >>> n = 2 * 32 * 1000 / 4
    >>> loss_bytes(c, 4) == (38 * n, 14 * n)
    True
    >>> loss_bytes(c._replace(vocab=0))
    (0.0, 0.0)
    """
    tp = check_int(tp, "tp", error=WorkloadError)
    n = c.micro_batch * c.seq * c.vocab / tp
    cast = 0 if c.element >= 4 else c.element + 4
    return (float((32 + cast) * n), float((8 + cast) * n))
