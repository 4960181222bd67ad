"""Named models' layer shapes, and :func:`resize`: a recorded trace re-sized to one of them.

A paradigm trains a small numpy MLP for real; :func:`resize` asks what the same
run would send and compute with a real network's shapes. A model here is a
sequence of *units* through which activations flow one after the other (a
dense or convolutional layer, a residual block, a transformer block), each
with its parameter count, its forward FLOPs per sample and its output
activation values per sample (what RingTMP's layer partition sends between
nodes).

Conventions
-----------
* FLOPs count 2 per multiply-add, as :mod:`workloads.mlp` does (many papers
  quote multiply-adds and call them FLOPs: ResNet-50's "4.1 GFLOPs" are
  4.1 G multiply-adds, 8.2 GFLOPs here). Only the products of convolutions,
  dense layers and attention are counted; normalisation, activation functions,
  pooling, softmax and residual additions are left out, as in the sources.
  Backward = 2 x forward (:mod:`workloads.mlp`).
* Parameters include biases and normalisation scales and shifts (not running
  statistics), as ``sum(p.numel() for p in model.parameters())`` counts them.
* A sample is a 224 x 224 RGB image (ResNet-50, VGG-16) or a sequence of
  ``seq_len`` tokens (BERT: 512, the longest pre-training sequences; GPT-2:
  1024, its context).

========== ================== ============= ================= ===================
name       units              parameters    published         forward GFLOPs
                              (this table)  parameters        per sample
========== ================== ============= ================= ===================
resnet50   stem, 16           25,557,032    25.6 M [1]        8.18 (4.09 G
           bottlenecks, head                                  multiply-adds [1])
vgg16      13 conv, 3 dense   138,357,544   138 M [2]         30.9 (15.5 G
                                                              multiply-adds [2])
bert-large embeddings, 24     335,141,888   340 M [3]         335 (s = 512)
           blocks, pooler
gpt2-small embeddings, 12     124,439,808   124 M [4] (117 M  292 (s = 1024)
           blocks, LM head                  in [5])
gpt2-xl    embeddings, 48     1,557,611,200 1558 M [4] (1542  3,507 (s = 1024)
           blocks, LM head                  M in [5])
========== ================== ============= ================= ===================

``gpt2-medium`` (354,823,168; "355M") and ``gpt2-large`` (774,030,080;
"774M") are there too. ResNet-50 is version 1.5 (stride 2 in the 3 x 3
convolution of a down-sampling block, as in torchvision, NVIDIA's and MLPerf's
implementations); the paper's version 1 (stride in the first 1 x 1) has the
same parameters and 3.86 G multiply-adds ("3.8 x 10^9 FLOPs", [1] Table 1).
Transformer FLOPs per sequence of ``s`` tokens and width ``h`` are
``24 s h^2 + 4 s^2 h`` per block (the QKV, output and MLP products and the two
attention products) and ``2 s h V`` for GPT-2's (tied) output embedding, the
count of Narayanan et al. [6]; embedding lookups cost none.

References
----------
.. [1] K. He, X. Zhang, S. Ren and J. Sun, "Deep Residual Learning for Image
       Recognition", CVPR 2016, Table 1; torchvision's ``resnet50`` weights
       (IMAGENET1K_V1): 25,557,032 parameters, 4.09 GFLOPS (multiply-adds).
.. [2] K. Simonyan and A. Zisserman, "Very Deep Convolutional Networks for
       Large-Scale Image Recognition", ICLR 2015, Tables 1 and 2 (configuration
       D, 138 M parameters); torchvision's ``vgg16``: 138,357,544 parameters,
       15.47 GFLOPS (multiply-adds).
.. [3] J. Devlin, M.-W. Chang, K. Lee and K. Toutanova, "BERT: Pre-training of
       Deep Bidirectional Transformers for Language Understanding", NAACL 2019,
       section 3: BERT-LARGE (L = 24, H = 1024, A = 16), 340 M parameters.
.. [4] OpenAI, github.com/openai/gpt-2, ``download_model.py``: the released
       checkpoints "124M", "355M", "774M" and "1558M".
.. [5] A. Radford, J. Wu, R. Child, D. Luan, D. Amodei and I. Sutskever,
       "Language Models are Unsupervised Multitask Learners", 2019, Table 2
       (117 M, 345 M, 762 M, 1542 M: the released checkpoints are larger).
.. [6] D. Narayanan et al., "Efficient Large-Scale Language Model Training on
       GPU Clusters Using Megatron-LM", SC 2021, section 5.1 (FLOPs per
       iteration 96 B s l h^2 (1 + s / 6h + V / 16 l h), i.e. the per-block
       forward count above).
"""

from types import MappingProxyType

from netsim import checks

from workloads import mlp
from workloads.plan import projection
from workloads.errors import WorkloadError
from workloads.mlp import Layer, Model
# The workloads.mlp model of given widths, under the name this catalogue has always
# offered: workloads.mlp.model_of itself (its docstring and example).
from workloads.mlp import model_of as mlp_model

__all__ = [
    "Layer",
    "Model",
    "MODELS",
    "UnknownModelError",
    "get_model",
    "mlp_model",
    "resnet50",
    "vgg16",
    "bert_large",
    "gpt2",
    "resize",
]


class UnknownModelError(WorkloadError):
    """A model name that is not in :data:`MODELS`.

    Examples
    --------
    >>> get_model("alexnet")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    workloads.models.UnknownModelError: unknown model 'alexnet'; known models: ...
    """


def _conv(cin, cout, k, hw, bias=False, bn=True):
    """Params and multiply-adds of a k x k convolution producing an hw x hw output."""
    params = k * k * cin * cout + (cout if bias else 0) + (2 * cout if bn else 0)
    return params, k * k * cin * cout * hw * hw


def resnet50():
    """ResNet-50 (v1.5) on 224 x 224 images: stem, 16 bottleneck blocks, classifier.

    Examples
    --------
    >>> m = resnet50()
    >>> m.params, round(m.flops / 2e9, 2), len(m.layers)
    (25557032, 4.09, 18)
    """
    units = []
    p, macs = _conv(3, 64, 7, 112)
    units.append(Layer("stem", p, 2.0 * macs, 56 * 56 * 64))      # conv 7x7/2, then max-pool
    cin, hw = 64, 56
    for stage, (mid, blocks, stride) in enumerate(((64, 3, 1), (128, 4, 2), (256, 6, 2),
                                                  (512, 3, 2)), start=2):
        cout = 4 * mid
        for b in range(blocks):
            s = stride if b == 0 else 1
            out = hw // s
            parts = [_conv(cin, mid, 1, hw), _conv(mid, mid, 3, out), _conv(mid, cout, 1, out)]
            if b == 0:
                parts.append(_conv(cin, cout, 1, out))                 # projection shortcut
            units.append(Layer(f"conv{stage}_{b + 1}", sum(x[0] for x in parts),
                               2.0 * sum(x[1] for x in parts), out * out * cout))
            cin, hw = cout, out
    units.append(Layer("fc", 2048 * 1000 + 1000, 2.0 * 2048 * 1000, 1000))  # after avg-pool
    return Model("resnet50", tuple(units), "ResNet-50 v1.5, 224x224 images",
                 "He et al., CVPR 2016, Table 1; torchvision resnet50", 25.6e6, 2 * 4.1e9)


def vgg16():
    """VGG-16 (configuration D) on 224 x 224 images: 13 convolutions and 3 dense layers.

    Examples
    --------
    >>> m = vgg16()
    >>> m.params, round(m.flops / 2e9, 2), len(m.layers)
    (138357544, 15.47, 16)
    """
    cfg = (64, 64, "M", 128, 128, "M", 256, 256, 256, "M", 512, 512, 512, "M", 512, 512, 512, "M")
    units = []
    cin, hw = 3, 224
    for k, c in enumerate(cfg):
        if c == "M":
            continue
        p, macs = _conv(cin, c, 3, hw, bias=True, bn=False)
        pooled = k + 1 < len(cfg) and cfg[k + 1] == "M"
        out = hw // 2 if pooled else hw                  # the max-pool is folded into the layer
        units.append(Layer(f"conv{len(units) + 1}", p, 2.0 * macs, out * out * c))
        cin, hw = c, out
    for name, i, o in (("fc6", 512 * 7 * 7, 4096), ("fc7", 4096, 4096), ("fc8", 4096, 1000)):
        units.append(Layer(name, i * o + o, 2.0 * i * o, o))
    return Model("vgg16", tuple(units), "VGG-16 (configuration D), 224x224 images",
                 "Simonyan and Zisserman, ICLR 2015, Tables 1-2", 138e6, 2 * 15.5e9)


def _block(h, s, ff=4):
    """Parameters and forward FLOPs of one pre- or post-LN transformer block of width h on s
    tokens: QKV, output and the two MLP products (24 s h^2) and the attention products
    (4 s^2 h); two layer norms."""
    params = (3 * h * h + 3 * h) + (h * h + h) + (ff * h * h + ff * h) + (ff * h * h + h) + 4 * h
    return params, 24.0 * s * h * h + 4.0 * s * s * h


def bert_large(seq_len=512):
    """BERT-large (L = 24, H = 1024, A = 16) on sequences of ``seq_len`` tokens.

    Units: embeddings (word, position, token type, layer norm), 24 encoder
    blocks, pooler (applied to the first token). The pre-training heads are
    left out.

    Examples
    --------
    >>> m = bert_large()
    >>> m.params, len(m.layers)
    (335141888, 26)
    """
    h, V = 1024, 30522
    s = checks.check_int(seq_len, "seq_len", error=WorkloadError)
    units = [Layer("embeddings", V * h + 512 * h + 2 * h + 2 * h, 0.0, s * h)]
    p, f = _block(h, s)
    units += [Layer(f"block{k + 1}", p, f, s * h) for k in range(24)]
    units.append(Layer("pooler", h * h + h, 2.0 * h * h, h))
    return Model("bert-large", tuple(units), f"BERT-large, sequences of {s} tokens",
                 "Devlin et al., NAACL 2019, section 3", 340e6)


#: GPT-2 sizes: (layers, width) of the released checkpoints [4].
_GPT2 = MappingProxyType({"small": (12, 768), "medium": (24, 1024), "large": (36, 1280),
                          "xl": (48, 1600)})
_GPT2_PUBLISHED = MappingProxyType({"small": 124e6, "medium": 355e6, "large": 774e6,
                                    "xl": 1558e6})


def gpt2(size="small", seq_len=1024):
    """GPT-2 of a given size on sequences of ``seq_len`` tokens.

    Units: embeddings (token and position), the transformer blocks, and the head
    (final layer norm and the output projection, which shares the token
    embedding's weights: no parameters of its own, ``2 s h V`` FLOPs).

    Parameters
    ----------
    size : {"small", "medium", "large", "xl"}
        124M, 355M, 774M or 1558M parameters.
    seq_len : int
        Tokens per sample (the context is 1024).

    Examples
    --------
    >>> gpt2("small").params, gpt2("xl").params
    (124439808, 1557611200)
    """
    if size not in _GPT2:
        raise UnknownModelError(f"unknown GPT-2 size {size!r}; known sizes: {', '.join(_GPT2)}")
    L, h = _GPT2[size]
    V, ctx = 50257, 1024
    s = checks.check_int(seq_len, "seq_len", error=WorkloadError)
    units = [Layer("embeddings", V * h + ctx * h, 0.0, s * h)]
    p, f = _block(h, s)
    units += [Layer(f"block{k + 1}", p, f, s * h) for k in range(L)]
    units.append(Layer("head", 2 * h, 2.0 * s * h * V, s * V))
    return Model(f"gpt2-{size}", tuple(units), f"GPT-2 {size}, sequences of {s} tokens",
                 "Radford et al. 2019; openai/gpt-2 released checkpoints", _GPT2_PUBLISHED[size])


#: Named models (read-only); keys are what :func:`get_model` and the CLI accept.
MODELS = MappingProxyType({
    "resnet50": resnet50(),
    "vgg16": vgg16(),
    "bert-large": bert_large(),
    "gpt2-small": gpt2("small"),
    "gpt2-medium": gpt2("medium"),
    "gpt2-large": gpt2("large"),
    "gpt2-xl": gpt2("xl"),
})


def _key(name):
    # Same rule as topologies.devices.model_key; copied because workloads/ and topologies/ do not
    # import each other (ARCHITECTURE.md).
    return "".join(ch for ch in str(name).casefold() if ch.isalnum())


def get_model(name):
    """The named model; case, dashes and underscores do not matter (``"ResNet-50"``).

    A :class:`Model` is returned as it is.

    Raises
    ------
    UnknownModelError
        For an unknown name, listing the known ones.

    Examples
    --------
    >>> get_model("ResNet-50").name, get_model("gpt2_xl").params
    ('resnet50', 1557611200)
    >>> get_model("alexnet")
    Traceback (most recent call last):
    ...
    workloads.models.UnknownModelError: unknown model 'alexnet'; known models: resnet50, vgg16, bert-large, gpt2-small, gpt2-medium, gpt2-large, gpt2-xl
    """
    if isinstance(name, Model):
        return name
    for key, model in MODELS.items():
        if _key(key) == _key(name):
            return model
    raise UnknownModelError(f"unknown model {name!r}; known models: {', '.join(MODELS)}")


def resize(trace, model, workers=None, servers=None, iterations=None, batch_size=None,
           device_flops=None, start=0):
    """The trace of the same run with a named model's shapes instead of the small MLP.

    Message bytes follow the new model: dense messages (gradients, weights,
    models) carry its parameters at the bytes per parameter measured in the
    run; sparse ones keep the rates measured in the run (PF's filter pass rate
    and Slim-DP's subset, per shard; DGC applies the run's warm-up schedule,
    its per-stage density, to each unit: ``max(1, ceil(n_unit x density))``
    values, because the tiny recorded layers' measured density is inflated by
    that at-least-one rule); RingTMP's messages carry the new model's
    activations at the unit boundaries of its layer partition. Compute ops get
    the new model's FLOPs per sample times the batch. Everything else is
    :func:`workloads.plan.projection.project`, which this calls (so ``workers=``
    also projects to another P).

    Parameters
    ----------
    trace : netsim.Trace
        A trace recorded by a paradigm.
    model : str or Model
        A name of :data:`MODELS` (see :func:`get_model`) or a :class:`Model`.
    workers : int, optional
        P of the result (the recorded P if None).
    servers, iterations, batch_size, device_flops, start
        As for :func:`workloads.plan.projection.project`. The batch is per worker
        (per virtual worker for single and RingTMP), in samples (images or
        sequences).

    Returns
    -------
    netsim.Trace
        Metadata as :func:`~workloads.plan.projection.project`'s, with ``model``
        (the name) and ``model_params`` instead of ``layers``.

    Raises
    ------
    UnknownModelError
        For an unknown model name.
    workloads.plan.projection.ProjectionError
        As :func:`~workloads.plan.projection.project` (e.g. RingTMP with more nodes
        than the model has units).

    Examples
    --------
    >>> import workloads
    >>> t = workloads.record("allreduce", workers=4, epochs=1).trace
    >>> big = resize(t, "resnet50", iterations=1)
    >>> from netsim.comm.library import mpich_wire
    >>> mpich_wire(big).total_bytes == 2 * 3 * 4 * resnet50().params   # ring: 2 (P-1) x 4 B/param
    True
    >>> fwd = (big.rank == 0) & (big.tag == big.tags.index("forward"))   # one op per unit
    >>> big.metadata["model"], bool(abs(big.flops[fwd].sum() / (resnet50().flops * 8) - 1) < 1e-12)
    ('resnet50', True)
    """
    m = get_model(model)
    md = trace.metadata
    if workers is None:
        workers = md.get("virtual_workers", md.get("workers")) if md.get("paradigm") == "single" \
            else md.get("workers")
    return projection.project(trace, workers if workers is not None else 1, servers, iterations,
                              batch_size, device_flops, model=m, start=start)
