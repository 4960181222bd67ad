"""Narayanan et al.'s measured GPT throughput (SC'21, Table 1) against the transformer closed form.

Table 1 of Narayanan et al. [1]_ gives, for ten GPT models trained with
Megatron-LM on NVIDIA's Selene (DGX A100 machines, 8 GPUs on NVSwitch, 8 HDR
InfiniBand adapters each), the layout and the achieved teraFLOP/s per GPU,
counted with their Eq. 3 (with activation recomputation). Every model has
sequence length 2048 and vocabulary 51,200 (section 5.1) in mixed precision.

The prediction for a row is Eq. 3's FLOPs over ``GPUs x`` the time per
iteration of :func:`workloads.transformer_closed.closed_form` (1F1B, full
recomputation, no sequence parallelism, gradients in fp16 in 25 MiB buckets),
with each GPU computing at ``efficiency x`` the A100's dense FP16 peak
(:func:`topologies.devices.device_flops`, 312 TFLOP/s) and the collectives
costing MPICH's ring on the links of :func:`topologies.dgx_a100`: the
tensor-parallel group's alpha-beta inside one machine, the pipeline's and data
parallelism's across two (:func:`netsim.costmodel.alpha_beta`).

Assumptions the table does not settle, stated once: the micro-batch size
(Table 1 does not print it) is 1; the schedule is 1F1B without interleaving.

The efficiency is taken from ONE row (:data:`REFERENCE`) and every other row is
predicted with it (:func:`predictions`); the documentation's table is
recomputed by a test.

References
----------
.. [1] D. Narayanan et al., "Efficient large-scale language model training on GPU
   clusters using Megatron-LM", SC'21, arXiv:2104.04473, Table 1.
"""

from typing import NamedTuple

import numpy as np
from scipy.optimize import brentq

from netsim.costmodel import alpha_beta
from topologies import dgx_a100
from topologies.devices import device_flops
from workloads.transformer_closed import closed_form
from workloads.transformer_flops import config, iteration_flops

__all__ = ["Row", "ROWS", "REFERENCE", "links", "predict", "efficiency_from", "predictions",
           "errors", "markdown", "sensitivity"]


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

#: The row the default efficiency is taken from: the 145.6B model on 1536 GPUs, the one
#: GPT-3-sized row (t = 8, p = 8) using all three parallelisms.
REFERENCE = 6

SEQ, VOCAB = 2048, 51200
PEAK = device_flops("A100", "fp16")


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
    return config(row.layers, row.hidden, row.heads, SEQ, VOCAB, micro_batch=1,
                  global_batch=row.batch)


def predict(row, efficiency, ab=None):
    """Predicted teraFLOP/s per GPU of a row at ``efficiency`` of the peak, and the closed form.

    Examples
    --------
    >>> tf, f = predict(ROWS[0], 0.5)
    >>> 100 < tf < 156, f["bubble"]     # one stage: no bubble
    (True, 0.0)
    """
    c = _model(row)
    dp = row.gpus // (row.tp * row.pp)
    f = closed_form(c, row.tp, row.pp, dp, device_flops=efficiency * PEAK,
                    links=links() if ab is None else ab)
    return iteration_flops(c) / (row.gpus * f["time"]) / 1e12, f


def efficiency_from(row, ab=None):
    """The efficiency at which the prediction of ``row`` is its measured throughput.

    Examples
    --------
    >>> e = efficiency_from(ROWS[REFERENCE])
    >>> round(predict(ROWS[REFERENCE], e)[0], 6)
    148.0
    """
    ab = links() if ab is None else ab
    # The prediction rises with the efficiency: Brent's method finds where it meets the row.
    return brentq(lambda e: predict(row, e, ab)[0] - row.tflops, 1e-3, 1.0, xtol=1e-14,
                  rtol=1e-14)


def predictions(reference=REFERENCE):
    """Every row predicted with the efficiency of row ``reference``: a list of dicts.

    Examples
    --------
    >>> rows = predictions()
    >>> rows[REFERENCE]["error"] == 0.0 or abs(rows[REFERENCE]["error"]) < 1e-6
    True
    """
    ab = links()
    e = efficiency_from(ROWS[reference], ab)
    out = []
    for k, row in enumerate(ROWS):
        tf, f = predict(row, e, ab)
        out.append({"row": k, "params_b": row.params_b, "tp": row.tp, "pp": row.pp,
                    "dp": row.gpus // (row.tp * row.pp), "gpus": row.gpus,
                    "measured": row.tflops, "predicted": tf, "error": tf / row.tflops - 1,
                    "bubble": f["bubble"] / f["time"], "tp_share": f["tp"] / f["time"],
                    "dp_share": f["dp"] / f["time"], "efficiency": e,
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
    lines.append("")
    lines.append(f"Efficiency {rows[0]['efficiency']:.3f} of the 312 TFLOP/s peak; over the other "
                 f"nine rows the error is {med:.1%} in the median and {worst:.1%} at worst.")
    return "\n".join(lines)


def sensitivity():
    """Median and worst error with the efficiency taken from each row in turn (a table).

    Examples
    --------
    >>> print(sensitivity().splitlines()[0])
    | efficiency from | efficiency | median error | worst error |
    """
    lines = ["| efficiency from | efficiency | median error | worst error |", "|---|---|---|---|"]
    for k, row in enumerate(ROWS):
        rows = predictions(k)
        med, worst = errors(rows)
        lines.append(f"| {row.params_b:g}B | {rows[0]['efficiency']:.3f} | {med:.1%} | "
                     f"{worst:.1%} |")
    return "\n".join(lines)
