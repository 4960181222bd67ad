"""A transformer layer's compute time from its GEMMs' shapes, per tensor-parallel shard.

With ``compute="gemm"`` (:func:`workloads.transformer.iteration.schedule`,
:func:`workloads.transformer.closed.closed_form`) each block's seconds are the
sum of its matrix multiplications' times on the GPU
(:func:`netsim.costmodel.gemm.gemm_seconds`: a roofline with tile and wave
quantisation and one calibration constant per GPU type), instead of its FLOPs
over one global rate. A narrow slice of a small model then runs below a wide
one, as it does on a GPU: its output has too few tiles to fill the SMs.

A block's forward GEMMs on one of ``t`` shards, ``C[m, n] = A[m, k] B[k, n]``
written ``(m, n, k)``, with ``T = b s`` tokens of the micro-batch, ``d = h /
a`` and ``w = h + 2 k_v d`` the QKV width (:func:`workloads.transformer.flops.qkv_width`),
as Megatron-LM splits them (column-parallel QKV and first MLP matrix,
row-parallel projection and last MLP matrix, vocabulary-parallel logits):

=========== ================================= ==========================================
block       GEMM                              ``(m, n, k)`` x batch
=========== ================================= ==========================================
attention   QKV                               ``(T, w/t, h)``
            scores ``Q K^T``                  ``(s, s, d)`` x ``b a/t``
            values ``P V``                    ``(s, d, s)`` x ``b a/t``
            projection                        ``(T, h, h/t)``
mlp         first matrix (SwiGLU: gate and    ``(T, (n - 1) f/t, h)``
            up fused, Megatron-LM's
            ``linear_fc1`` of width ``2 f``)
            last matrix                       ``(T, h, f/t)``
logit       vocabulary slice                  ``(T, V/t, h)``
core        scores and values, again          as in attention (selective recomputation)
=========== ================================= ==========================================

(``n`` = 2 matrices for GeLU, 3 for SwiGLU, :data:`workloads.transformer.flops.MLPS`.)
Their FLOPs add up to :mod:`workloads.transformer.flops`'s counts over ``t``.
The backward of each forward GEMM ``(m, n, k)`` is two GEMMs of their own
shapes: the input's gradient ``dA = dC B^T``, ``(m, k, n)``, and the
weight's (or, in the attention core, the other operand's) ``dB = A^T dC``,
``(k, n, m)``; twice the forward FLOPs, at their own quantisation. A
recomputed forward takes the forward's seconds.

The logit unit's seconds also hold the loss on its output: the
vocabulary-parallel cross-entropy's element-wise kernels over the shard's
``b s V / t`` logits, in fp32, memory-bound
(:func:`workloads.transformer.flops.loss_bytes`: 38 bytes a logit forward,
14 backward, Megatron-LM's kernels) at the device's memory bandwidth.
:func:`achieved_flops` leaves it out (a profiler's GEMM rate).

Sequence parallelism leaves the shapes as they are (each shard's GEMMs see the
allgathered ``T`` tokens). Mixture-of-experts layers are not mapped
(:func:`check_compute` refuses them), nor the non-GEMM work (layer norms,
softmax, GeLU, dropout: :mod:`workloads.transformer.compute` adds their memory
traffic with ``memory_bandwidth``).

References
----------
.. [1] NVIDIA, "Matrix Multiplication Background User's Guide", DU-09799-001_v001, 2023,
   section 4 (the GEMMs of a transformer's forward and backward passes).
.. [2] NVIDIA Megatron-LM, ``megatron/core/transformer/mlp.py`` (core_r0.9.0): with
   ``gated_linear_unit`` the first linear layer's output width is doubled (gate and up in one GEMM).
"""

from typing import NamedTuple

from netsim.costmodel.gemm import GemmDevice, gemm_flops, gemm_seconds

from workloads.errors import WorkloadError
from workloads.transformer.flops import MLPS, loss_bytes, qkv_width

__all__ = ["COMPUTE", "UNITS", "PASSES", "Gemm", "forward_gemms", "backward_gemms",
           "check_compute", "gemm_seconds_table", "block_seconds", "block_flops", "achieved_flops",
           "stage_seconds"]

#: The compute-time rules: FLOPs over one rate, or each GEMM's shape.
COMPUTE = ("flops", "gemm")
#: The units of work a schedule's compute ops stand for (``core``: selective recomputation's).
UNITS = ("attention", "mlp", "logit", "core")
#: The passes a unit's seconds are given for (a recomputed forward is a forward).
PASSES = ("forward", "backward")


class Gemm(NamedTuple):
    """One GEMM ``C[m, n] = A[m, k] B[k, n]``, ``batch`` of them in one launch, and its name."""

    name: str
    m: int
    n: int
    k: int
    batch: int = 1


def forward_gemms(c, tp=1):
    """The forward GEMMs of each unit on one of ``tp`` shards (the module's table).

    Returns
    -------
    dict
        ``{unit: tuple of Gemm}`` for every unit of :data:`UNITS` (``logit``
        empty without a vocabulary).

    Examples
    --------
    >>> from workloads.transformer.flops import Config
    >>> g = forward_gemms(Config(1, 64, 4, 32, 0, micro_batch=2), tp=2)
    >>> [(x.name, x.m, x.n, x.k, x.batch) for x in g["attention"]]
    [('qkv', 64, 96, 64, 1), ('scores', 32, 32, 16, 4), ('values', 32, 16, 32, 4), ('projection', 64, 64, 32, 1)]
    >>> [(x.name, x.n, x.k) for x in g["mlp"]], g["logit"]
    ([('fc1', 128, 64), ('fc2', 64, 128)], ())
    """
    b, s, h, a, t = c.micro_batch, c.seq, c.hidden, c.heads, tp
    T, d = b * s, h // a
    core = (Gemm("scores", s, s, d, b * a // t), Gemm("values", s, d, s, b * a // t))
    return {"attention": (Gemm("qkv", T, qkv_width(c) // t, h), *core,
                          Gemm("projection", T, h, h // t)),
            "mlp": (Gemm("fc1", T, (MLPS[c.mlp] - 1) * c.ffn // t, h),
                    Gemm("fc2", T, h, c.ffn // t)),
            "logit": (Gemm("logit", T, c.vocab // t, h),) if c.vocab else (),
            "core": core}


def backward_gemms(g):
    """The two backward GEMMs of forward GEMM ``g``: ``dA`` ``(m, k, n)`` and ``dB`` ``(k, n, m)``.

    Examples
    --------
    >>> backward_gemms(Gemm("qkv", 4096, 768, 2048))
    (Gemm(name='qkv.dgrad', m=4096, n=2048, k=768, batch=1), Gemm(name='qkv.wgrad', m=2048, n=768, k=4096, batch=1))
    """
    return (Gemm(f"{g.name}.dgrad", g.m, g.k, g.n, g.batch),
            Gemm(f"{g.name}.wgrad", g.k, g.n, g.m, g.batch))


def check_compute(compute, device, c, moe=None):
    """Check the compute-time rule; the device of ``"gemm"`` (None for ``"flops"``).

    Raises
    ------
    WorkloadError
        For an unknown rule, ``"gemm"`` without a
        :class:`netsim.costmodel.gemm.GemmDevice`, in a precision other than
        fp16/bf16, or with mixture-of-experts layers.

    Examples
    --------
    >>> from workloads.transformer.flops import Config
    >>> check_compute("flops", None, Config(1, 64, 4, 32, 0)) is None
    True
    >>> check_compute("gemm", None, Config(1, 64, 4, 32, 0))
    Traceback (most recent call last):
    ...
    workloads.errors.WorkloadError: compute='gemm' needs a device (a netsim.costmodel.GemmDevice, e.g. topologies.devices.device_gemm('A100'))
    """
    if compute not in COMPUTE:
        raise WorkloadError(f"unknown compute {compute!r}; known: {', '.join(COMPUTE)}")
    if compute == "flops":
        return None
    if not isinstance(device, GemmDevice):
        raise WorkloadError("compute='gemm' needs a device (a netsim.costmodel.GemmDevice, "
                            "e.g. topologies.devices.device_gemm('A100'))")
    if c.precision not in ("fp16", "bf16"):
        raise WorkloadError(f"compute='gemm' models fp16/bf16 tensor-core GEMMs, not "
                            f"{c.precision}")
    if moe is not None:
        raise WorkloadError("compute='gemm' does not map mixture-of-experts layers yet; "
                            "use compute='flops'")
    return device


def _seconds(gemms, device, element):
    return sum(gemm_seconds(g.m, g.n, g.k, device, element, g.batch) for g in gemms)


def gemm_seconds_table(c, tp, device):
    """Seconds of each unit's forward and backward GEMMs on one shard, per micro-batch.

    Returns
    -------
    dict
        ``{(unit, pass): seconds}`` for every unit of :data:`UNITS` and pass of
        :data:`PASSES` (0 for a logit layer without a vocabulary).

    Examples
    --------
    Eight 4096 x 4096 x 4096 GEMMs' worth of MLP (``T = 4096``, ``h = 4096``,
    ``f = 4 h = 16384`` split over 4 shards) in 128 x 128 tiles: the forward's
    two GEMMs each 1024 tiles in 10 waves of 108.

    >>> from netsim.costmodel import gemm_device
    >>> from workloads.transformer.flops import Config
    >>> d = gemm_device(312e12, 2.039e12, 108, tile=(128, 128))
    >>> t = gemm_seconds_table(Config(1, 4096, 32, 4096, 0), 4, d)
    >>> t["mlp", "forward"] == 2 * 2 * 4096 ** 3 / (312e12 * 1024 / 1080)
    True
    """
    out = {}
    for unit, gemms in forward_gemms(c, tp).items():
        out[unit, "forward"] = _seconds(gemms, device, c.element)
        out[unit, "backward"] = _seconds([x for g in gemms for x in backward_gemms(g)], device,
                                         c.element)
    return out


def block_seconds(c, tp, device):
    """Seconds of each unit's forward and backward on one shard, per micro-batch.

    Each unit's GEMMs (:func:`gemm_seconds_table`), and on the logit unit the
    loss's memory traffic (:func:`workloads.transformer.flops.loss_bytes`) at
    the device's memory bandwidth: a dict keyed as :func:`gemm_seconds_table`'s.

    Examples
    --------
    >>> from netsim.costmodel import gemm_device
    >>> from workloads.transformer.flops import Config, loss_bytes
    >>> d = gemm_device(312e12, 2.039e12, 108)
    >>> c = Config(2, 256, 4, 128, 1024, precision="bf16")
    >>> t, g = block_seconds(c, 2, d), gemm_seconds_table(c, 2, d)
    >>> t["logit", "backward"] == g["logit", "backward"] + loss_bytes(c, 2)[1] / 2.039e12
    True
    >>> t["mlp", "forward"] == g["mlp", "forward"]
    True
    """
    out = gemm_seconds_table(c, tp, device)
    forward, backward = loss_bytes(c, tp)
    out["logit", "forward"] += forward / device.memory_bandwidth
    out["logit", "backward"] += backward / device.memory_bandwidth
    return out


def block_flops(c, tp=1):
    """FLOPs of each unit's forward GEMMs on one shard: the sum over :func:`forward_gemms`.

    Examples
    --------
    >>> from workloads.transformer.flops import get_config, attention_forward_flops
    >>> c = get_config("llama3-8b")
    >>> block_flops(c, 8)["attention"] == attention_forward_flops(c) / 8
    True
    """
    return {unit: sum(gemm_flops(g.m, g.n, g.k, g.batch) for g in gemms)
            for unit, gemms in forward_gemms(c, tp).items()}


def achieved_flops(c, tp, device):
    """FLOP/s each unit's GEMMs reach on one shard over a forward and a backward.

    ``3 x`` the forward FLOPs over the forward and backward seconds: what a
    profiler would report for the block's GEMMs.

    Examples
    --------
    A TP 8 slice of GPT-3 1.3B runs its MLP slower than the whole model on one GPU.

    >>> from netsim.costmodel import gemm_device
    >>> from workloads.transformer.flops import get_config
    >>> d = gemm_device(312e12, 2.039e12, 108, efficiency=0.88)
    >>> c = get_config("gpt3-1.3b")
    >>> achieved_flops(c, 8, d)["mlp"] < achieved_flops(c, 1, d)["mlp"]
    True
    """
    secs, flops = gemm_seconds_table(c, tp, device), block_flops(c, tp)
    return {unit: 3 * flops[unit] / (secs[unit, "forward"] + secs[unit, "backward"])
            for unit in UNITS if flops[unit]}


def stage_seconds(table, st, redo):
    """One layer's and the logit layer's compute seconds on a stage, from :func:`block_seconds`.

    Parameters
    ----------
    table : dict
        :func:`block_seconds` of the model and ``tp``.
    st : workloads.transformer.stages.Stage
        The stage (its ``logit`` and ``core`` FLOPs say whether it has a logit
        layer and selective recomputation).
    redo : bool
        Full recomputation (the layer's forward again before its backward).

    Returns
    -------
    tuple
        ``(layer forward, layer backward with its recomputation, logit
        forward, logit backward)`` in seconds.

    Examples
    --------
    >>> from workloads.transformer.stages import Stage
    >>> table = {(u, p): {"forward": 1.0, "backward": 2.5}[p] for u in UNITS for p in PASSES}
    >>> stage_seconds(table, Stage(0, (0,), 1.0, 1.0, 0.0, ()), True)
    (2.0, 7.0, 0.0, 0.0)
    """
    layer_f = table["attention", "forward"] + table["mlp", "forward"]
    layer_b = (table["attention", "backward"] + table["mlp", "backward"] + redo * layer_f
               + (table["core", "forward"] if st.core else 0.0))
    has = bool(st.logit)
    return (layer_f, layer_b, table["logit", "forward"] * has, table["logit", "backward"] * has)
