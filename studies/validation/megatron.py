"""Narayanan et al.'s measured GPT throughput (SC'21, Table 1) against the transformer closed form.

Table 1 of Narayanan et al. [1]_ gives, for ten GPT models trained with
Megatron-LM on NVIDIA's Selene (DGX A100 machines, 8 GPUs on NVSwitch, 8 HDR
InfiniBand adapters each), the layout and the achieved teraFLOP/s per GPU,
counted with their Eq. 3 (with activation recomputation). Every model has
sequence length 2048 and vocabulary 51,200 (section 5.1) in mixed precision.

The prediction for a row is Eq. 3's FLOPs over ``GPUs x`` the time per
iteration of :func:`workloads.transformer.closed.closed_form` under the row's
own settings (:data:`SETTINGS`), with each GPU computing at ``efficiency x``
the A100's dense FP16 peak (:func:`topologies.devices.device_flops`, 312
TFLOP/s), plus under the rule ``"memory"`` (:data:`RULES`, the default) each
layer's memory traffic at the A100 80 GB's 2,039 GB/s
(:mod:`workloads.transformer.compute`, :data:`HBM`), and the collectives costing MPICH's ring on the links of
:func:`topologies.dgx_a100` (8 A100s on NVSwitch, 8 HDR InfiniBand NICs, one
rail per GPU): the tensor-parallel group's alpha-beta inside one machine, the
pipeline's and data parallelism's across two
(:func:`netsim.costmodel.alpha_beta`).

The settings are the ones Megatron-LM's authors published with the paper,
not assumptions: ``examples/sc21/run_table_1.sh`` of NVIDIA/Megatron-LM (since
moved to ``examples/academic_paper_scripts/sc21/``; "Table 1 showing
weak-scaling throughput", its README) gives, per row, the micro-batch size
(``MBS``: 16, 16, 16, 8, 4, 2, 2, 1, 1, 1), the interleaved schedule's layers
per virtual stage (``--num-layers-per-virtual-pipeline-stage``: 5, 5, 3, 1 for
the 76B to 530B rows, so 3, 2, 2, 3 chunks per stage; plain 1F1B for the
others), full recomputation (``--activations-checkpoint-method uniform`` on
every row) and the data-parallel implementation (``DDP``: ``torch`` for the
four one-stage rows, ``local`` for the rest); its ``CONFIG.sh`` sets
``--seq-length 2048`` and ``--fp16``. Megatron-LM v2.5 (August 2021, the
paper's code): ``--DDP-impl torch`` is PyTorch DDP, whose gradient buckets (25
MiB) overlap the backward; ``local`` allreduces each model chunk's whole fp16
gradient after the pipeline's last backward (``train_step`` in
``megatron/training.py`` calls ``allreduce_gradients`` after
``forward_backward_func``), modelled as one bucket (:data:`LOCAL_DDP_BUCKET`)
leaving when the stage's last backward ends; and the scatter/gather of
pipeline tensors (Narayanan et al. section 4.1) is on by default
(``megatron/arguments.py``: ``--no-scatter-gather-tensors-in-pipeline`` turns
it off). Left out: the fused kernels as such (section 4.2: the memory rule
counts each stored tensor moved once per pass whether or not its kernel is
fused; what fusion saves beyond that is in the one efficiency), the
word-embedding
allreduce between the first and last stages, and the data loader and
optimizer step (counted in the measured time: "end-to-end training",
Megatron-LM v2.5 README).

The efficiency is taken from ONE row (:data:`REFERENCE`) and every other row is
predicted with it (:func:`predictions`), under each rule of :data:`RULES`
separately (the efficiency is re-derived from the same row for each); the
documentation's tables are recomputed by a test.

References
----------
.. [1] D. Narayanan et al., "Efficient large-scale language model training on GPU
   clusters using Megatron-LM", SC'21, arXiv:2104.04473, Table 1.
"""

from typing import NamedTuple

import numpy as np
from scipy.optimize import brentq

from netsim.checks import check_choice
from netsim.costmodel import alpha_beta
from topologies import dgx_a100
from topologies.devices import device_flops, device_gemm, hbm_bandwidth
from workloads.overlap import DDP_BUCKET_BYTES
from workloads.transformer.closed import closed_form
from workloads.transformer.flops import config, iteration_flops

__all__ = ["Row", "ROWS", "Setting", "SETTINGS", "LOCAL_DDP_BUCKET", "REFERENCE", "RULES", "HBM",
           "links", "predict", "efficiency_from", "predictions", "errors", "markdown",
           "sensitivity"]


class Row(NamedTuple):
    """One row of Narayanan et al.'s Table 1."""

    params_b: float   # billions of parameters, as printed
    heads: int
    hidden: int
    layers: int
    tp: int
    pp: int
    gpus: int
    batch: int
    tflops: float     # achieved teraFLOP/s per GPU


#: Narayanan et al. SC'21 Table 1, every row as printed.
ROWS = (
    Row(1.7, 24, 2304, 24, 1, 1, 32, 512, 137),
    Row(3.6, 32, 3072, 30, 2, 1, 64, 512, 138),
    Row(7.5, 32, 4096, 36, 4, 1, 128, 512, 142),
    Row(18.4, 48, 6144, 40, 8, 1, 256, 1024, 135),
    Row(39.1, 64, 8192, 48, 8, 2, 512, 1536, 138),
    Row(76.1, 80, 10240, 60, 8, 4, 1024, 1792, 140),
    Row(145.6, 96, 12288, 80, 8, 8, 1536, 2304, 148),
    Row(310.1, 128, 16384, 96, 8, 16, 1920, 2160, 155),
    Row(529.6, 128, 20480, 105, 8, 35, 2520, 2520, 163),
    Row(1008.0, 160, 25600, 128, 8, 64, 3072, 3072, 163),
)

class Setting(NamedTuple):
    """How a row of Table 1 was run (Megatron-LM's ``examples/sc21/run_table_1.sh``)."""

    micro_batch: int   # MBS
    chunks: int        # layers per stage / --num-layers-per-virtual-pipeline-stage (1: 1F1B)
    ddp: str           # --DDP-impl: "torch" (overlapping buckets) or "local" (after backward)


#: Each row's settings, from ``run_table_1.sh`` (the rows of :data:`ROWS` in order).
SETTINGS = (
    Setting(16, 1, "torch"), Setting(16, 1, "torch"), Setting(16, 1, "torch"),
    Setting(8, 1, "torch"), Setting(4, 1, "local"), Setting(2, 15 // 5, "local"),
    Setting(2, 10 // 5, "local"), Setting(1, 6 // 3, "local"), Setting(1, 3 // 1, "local"),
    Setting(1, 1, "local"),
)

#: A bucket larger than any stage's gradient: Megatron-LM's local DDP allreduces the whole
#: gradient after the last backward (its per-chunk calls merged into one).
LOCAL_DDP_BUCKET = 2.0 ** 62

#: The row the default efficiency is taken from: the 145.6B model on 1536 GPUs, the one
#: GPT-3-sized row (t = 8, p = 8) using all three parallelisms.
REFERENCE = 6

SEQ, VOCAB = 2048, 51200
PEAK = device_flops("A100", "fp16")
#: Bytes/s of a Selene GPU's memory: the 80 GB A100 (SXM, 2,039 GB/s). NVIDIA/Megatron-LM's
#: README, on the runs of this table: "Each cluster node has 8 NVIDIA 80GB A100 GPUs";
#: Korthikanti et al. 2022 section 6 says the same of Selene.
HBM = hbm_bandwidth("A100-80GB")
#: The compute-time rules (:mod:`workloads.transformer.compute`): FLOPs only, FLOPs plus
#: each layer's memory traffic at :data:`HBM`, or each block's GEMMs timed from their shapes
#: (:mod:`workloads.transformer.gemm`, the A100's 108 SMs and its tile and wave quantisation)
#: plus the same memory traffic; the efficiency is then the GEMM model's ``eta``.
RULES = ("flops", "memory", "gemm")


def links():
    """``{"tp": (alpha, beta), "pp": ..., "dp": ...}`` of DGX A100 machines.

    Examples
    --------
    >>> ab = links()
    >>> ab["tp"][1] < ab["dp"][1]   # NVLink is faster than the network
    True
    """
    inside = alpha_beta(dgx_a100(), ranks=8)
    across = alpha_beta(dgx_a100(nodes=2), placement=["gpu0", "gpu8"])
    return {"tp": inside, "pp": across, "dp": across}


def _model(row):
    k = ROWS.index(row)
    return config(row.layers, row.hidden, row.heads, SEQ, VOCAB,
                  micro_batch=SETTINGS[k].micro_batch, global_batch=row.batch)


def _options(row):
    """The closed form's options for a row: its schedule, chunks, buckets, scatter/gather."""
    st = SETTINGS[ROWS.index(row)]
    return dict(pipeline="interleaved" if st.chunks > 1 else "1f1b", chunks=st.chunks,
                recompute="full", scatter_gather=True,
                bucket_bytes=LOCAL_DDP_BUCKET if st.ddp == "local" else DDP_BUCKET_BYTES)


def _bandwidth(rule):
    """The closed form's ``memory_bandwidth`` under a rule of :data:`RULES`."""
    return HBM if check_choice(rule, "rule", RULES, error=ValueError) != "flops" else None


def _compute(rule, efficiency):
    """The closed form's ``compute`` and ``device`` under a rule: the GEMM rule's A100 at ``eta``."""
    if rule != "gemm":
        return {}
    return dict(compute="gemm", device=device_gemm("A100")._replace(efficiency=efficiency))


def predict(row, efficiency, ab=None, rule="memory"):
    """Predicted teraFLOP/s per GPU of a row at ``efficiency`` of the peak, and the closed form.

    ``rule``: ``"memory"`` (each layer's memory traffic at :data:`HBM` on top of
    the FLOPs), ``"flops"`` (FLOPs only) or ``"gemm"`` (each GEMM from its shape at
    ``efficiency`` the GEMM model's ``eta``, plus the memory traffic).

    Examples
    --------
    One stage, no tensor parallelism: no bubble, and under the FLOPs-only rule
    below half the 312 TFLOP/s peak only by the gradient buckets left after the
    backward. The memory rule adds, to its one micro-batch per replica, the 24
    layers' stored bytes moved three times (forward, recomputation, backward).

    >>> tf, f = predict(ROWS[0], 0.5, rule="flops")
    >>> round(tf, 1), f["bubble"], round(156 * f["compute"] / f["time"], 1)
    (154.5, 0.0, 154.5)
    >>> from workloads.transformer.flops import config, layer_stored_bytes
    >>> c = config(24, 2304, 24, 2048, 51200, micro_batch=16, global_batch=512)
    >>> tm, g = predict(ROWS[0], 0.5)
    >>> round((g["compute"] - f["compute"]) / (24 * 3 * layer_stored_bytes(c) / HBM), 12)
    1.0
    """
    c = _model(row)
    dp = row.gpus // (row.tp * row.pp)
    f = closed_form(c, row.tp, row.pp, dp, device_flops=efficiency * PEAK,
                    links=links() if ab is None else ab, memory_bandwidth=_bandwidth(rule),
                    **_options(row), **_compute(rule, efficiency))
    return iteration_flops(c) / (row.gpus * f["time"]) / 1e12, f


def efficiency_from(row, ab=None, rule="memory"):
    """The efficiency at which the prediction of ``row`` under ``rule`` is its measured throughput.

    Examples
    --------
    >>> e = efficiency_from(ROWS[REFERENCE])
    >>> round(predict(ROWS[REFERENCE], e)[0], 6)
    148.0
    """
    ab = links() if ab is None else ab
    # The prediction rises with the efficiency: Brent's method finds where it meets the row.
    return brentq(lambda e: predict(row, e, ab, rule)[0] - row.tflops, 1e-3, 1.0, xtol=1e-14,
                  rtol=1e-14)


def predictions(reference=REFERENCE, rule="memory"):
    """Every row predicted under ``rule`` with the efficiency of row ``reference``: a list of dicts.

    Examples
    --------
    >>> rows = predictions()
    >>> rows[REFERENCE]["error"] == 0.0 or abs(rows[REFERENCE]["error"]) < 1e-6
    True
    """
    ab = links()
    e = efficiency_from(ROWS[reference], ab, rule)
    out = []
    for k, row in enumerate(ROWS):
        tf, f = predict(row, e, ab, rule)
        out.append({"row": k, "params_b": row.params_b, "tp": row.tp, "pp": row.pp,
                    "dp": row.gpus // (row.tp * row.pp), "gpus": row.gpus,
                    "measured": row.tflops, "predicted": tf, "error": tf / row.tflops - 1,
                    "bubble": f["bubble"] / f["time"], "tp_share": f["tp"] / f["time"],
                    "dp_share": f["dp"] / f["time"], "efficiency": e, "rule": rule,
                    "reference": k == reference})
    return out


def errors(rows):
    """Median and worst absolute relative error over the rows other than the reference.

    Examples
    --------
    >>> med, worst = errors(predictions())
    >>> med <= worst
    True
    """
    e = np.abs([r["error"] for r in rows if not r["reference"]])
    return float(np.median(e)), float(e.max())


def markdown(rows):
    """The documentation's table of ``rows`` (:func:`predictions`), one line per row.

    Examples
    --------
    >>> print(markdown(predictions()).splitlines()[0])
    | model | t | p | d | GPUs | measured TFLOP/s | predicted | error | bubble | TP | DP |
    """
    lines = ["| model | t | p | d | GPUs | measured TFLOP/s | predicted | error | bubble | TP | DP |",
             "|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        name = f"{r['params_b']:g}B" + (" (reference)" if r["reference"] else "")
        lines.append(f"| {name} | {r['tp']} | {r['pp']} | {r['dp']} | {r['gpus']} | "
                     f"{r['measured']:g} | {r['predicted']:.1f} | {r['error']:+.1%} | "
                     f"{r['bubble']:.1%} | {r['tp_share']:.1%} | {r['dp_share']:.1%} |")
    med, worst = errors(rows)
    rule = {"memory": "FLOPs plus memory traffic at 2,039 GB/s", "flops": "FLOPs only",
            "gemm": "GEMM shapes plus memory traffic at 2,039 GB/s"}[rows[0]["rule"]]
    lines.append("")
    lines.append(f"{rule}: efficiency {rows[0]['efficiency']:.3f} of the 312 TFLOP/s peak; over "
                 f"the other nine rows the error is {med:.1%} in the median and {worst:.1%} at "
                 f"worst.")
    return "\n".join(lines)


def sensitivity(rule="memory"):
    """Median and worst error under ``rule`` with the efficiency taken from each row in turn.

    Examples
    --------
    >>> print(sensitivity().splitlines()[0])
    | efficiency from | efficiency | median error | worst error |
    """
    lines = ["| efficiency from | efficiency | median error | worst error |", "|---|---|---|---|"]
    for k, row in enumerate(ROWS):
        rows = predictions(k, rule)
        med, worst = errors(rows)
        lines.append(f"| {row.params_b:g}B | {rows[0]['efficiency']:.3f} | {med:.1%} | "
                     f"{worst:.1%} |")
    return "\n".join(lines)
