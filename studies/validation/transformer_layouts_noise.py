"""How much of the layout validation's error the data, and what its sources leave unsaid, can hold.

Two limits on what the rows of :mod:`studies.validation.transformer_layouts` can judge:

* **Reading uncertainty** (:func:`reading_uncertainty`): how exactly each measured value is
  known, from the data file's ``uncertainty`` column: a value printed to 0.1 TFLOP/s or to
  one token/s (half the last digit), a figure read to +-2 %, a throughput the source rounded
  to 10 or 50 tokens/s (half the step). A model error within it is noise
  (:func:`within_reading`).
* **Unpublished settings** (:func:`setting_sensitivity`): a setting a source does not give
  (Megatron-LM's H100 table publishes no micro-batch and no schedule) is assumed; another
  admissible value moves the prediction. The sensitivity of a row is how far its
  prediction moves when the assumption changes (the closed form, the H100's efficiency
  re-derived from its calibration run under the same change, every other constant kept),
  relative to the measured time. A median error below the median sensitivity cannot be
  told apart from the choice of an unpublished setting.

The alternatives (:data:`ALTERNATIVES`) are each the other admissible reading of one
silence, applied to every row it concerns:

* ``"micro-batch 2"``: the Megatron-Core rows at micro-batch 2 (each replica's batch is
  a multiple of 2 on every row; the README gives only the global batch).
* ``"interleaved"``: the Megatron-Core rows with pipeline parallelism on Megatron-LM's
  interleaved schedule with one layer per model chunk (``--num-layers-per-virtual-
  pipeline-stage 1``). The README says the runs overlap "pipeline-parallel communication
  (enabled by default)", and at the table's commit (f2e5db402c,
  ``megatron/training/arguments.py``) Megatron-LM turns that overlap off unless the
  schedule is interleaved ("Setting args.overlap_p2p_comm to False since non-interleaved
  schedule does not support overlapping p2p communication"); the 119B and 462B rows have 23
  and 7 layers a stage, primes, so one layer a chunk is the only interleaving they admit.
  netsim models neither a later stage's one bucket nor the overlapped parameter allgather
  with several chunks a stage (:func:`workloads.transformer.stages.stage_bucket_bytes`,
  :mod:`workloads.transformer.overlaps.param_gather`), so this alternative also buckets
  every stage's gradients (``stage_buckets="every"``) and gathers the parameters after the
  step (``param_gather="after"``): a bound on what interleaving does, not a replay of it.
"""

import csv
import pathlib

import numpy as np
from scipy.optimize import brentq

from netsim.comm.priced import NcclPrices
from studies.scaling.transformer import point
from studies.validation.transformer_layouts import (CALIBRATION, HBM, cluster, gemm_of, load,
                                                   measured_time, model, options)
from studies.validation.transformer_layouts_report import errors, judged
from workloads.transformer.layout import layout

__all__ = ["SENSITIVITY", "reading_uncertainty", "within_reading", "ALTERNATIVES", "closed_time",
           "setting_sensitivity", "save", "cached", "markdown"]

#: The stored :func:`setting_sensitivity` of every alternative (:func:`save`, :func:`cached`).
SENSITIVITY = (pathlib.Path(__file__).resolve().parent.parent / "data"
               / "transformer_layouts_sensitivity.csv")
_FIELDS = ("alternative", "id", "assumed", "changed", "shift", "eta_assumed", "eta_changed")


def reading_uncertainty(row):
    """The relative half-width to which a row's measured value is known.

    From the data file's ``uncertainty`` column: ``"+-2% (figure reading)"`` is 0.02;
    ``"printed to 0.1"`` half of 0.1 over the value; ``"printed"`` (tokens/s) half a
    token/s over the value; ``"printed, rounded (to 10 or 50 tokens/s)"`` half the step, 25
    for a multiple of 50, else 5, over the value. The time per iteration is the inverse of
    the throughput, so its relative uncertainty is the same to first order.

    Raises
    ------
    ValueError
        For an ``uncertainty`` text none of these.

    Examples
    --------
    >>> rows = {r["id"]: r for r in load()}
    >>> reading_uncertainty(rows["mcore-177b-p96"])
    0.02
    >>> round(reading_uncertainty(rows["fms-a100-llama2-34b"]), 4)   # 700 rounded to 50: +-25
    0.0357
    >>> round(reading_uncertainty(rows["mcore-1.7b"]), 6)   # 408.8 printed to 0.1
    0.000122
    """
    text, value = row["uncertainty"], row["measured"]
    if text.startswith("+-") and "%" in text:
        return float(text[2:text.index("%")]) / 100
    if text == "printed to 0.1":
        return 0.05 / value
    if text.startswith("printed, rounded (to 10 or 50"):
        return (25.0 if value % 50 == 0 else 5.0) / value
    if text == "printed":
        return 0.5 / value
    raise ValueError(f"unknown uncertainty {text!r} of row {row['id']}")


def within_reading(rows, preds):
    """Each judged row's absolute error beside its reading uncertainty, and what lies beyond it.

    Returns
    -------
    list of dict
        ``id``, ``error`` (the replay's, signed), ``reading``
        (:func:`reading_uncertainty`) and ``beyond`` (``max(0, abs(error) - reading)``).

    Examples
    --------
    >>> from studies.validation.transformer_layouts import cached
    >>> w = within_reading(load(), cached())
    >>> all(0 <= x["beyond"] <= abs(x["error"]) for x in w)
    True
    """
    out = []
    for x, r in zip(errors(judged(rows), preds), judged(rows)):
        u = reading_uncertainty(r)
        out.append({"id": r["id"], "error": x["error"], "reading": u,
                    "beyond": max(0.0, abs(x["error"]) - u)})
    return out


def _micro_batch_2(row):
    if row["framework"] != "megatron-core":
        return row, None
    return dict(row, micro_batch=2), None


def _interleaved(row):
    if row["framework"] != "megatron-core" or row["pp"] == 1:
        return row, None
    return row, dict(pipeline="interleaved", chunks=row["layers"] // row["pp"],
                     stage_buckets="every", param_gather="after")


#: Each alternative reading of a source's silence: ``row -> (row, options or None)``.
ALTERNATIVES = {"micro-batch 2": _micro_batch_2, "interleaved": _interleaved}


def closed_time(row, eta, change=None, prices=None):
    """The closed form's seconds of a row at GEMM efficiency ``eta``, under an alternative.

    ``change`` is a value of :data:`ALTERNATIVES` (None: the row as assumed). The closed form
    of :func:`studies.scaling.transformer.point` with the rule of the validation (GEMM
    shapes, memory traffic, NCCL's prices on the row's cluster); it is within 1.1 % of the
    replay on every row of the validation's table.

    Examples
    --------
    >>> r = next(r for r in load() if r["id"] == "mcore-32b")
    >>> closed_time(r, 0.7, ALTERNATIVES["micro-batch 2"]) < closed_time(r, 0.7)
    True
    """
    r, extra = change(row) if change else (row, None)
    kw = {**options(r), **(extra or {})}
    G = cluster(r)
    return point(model(r), layout(r["tp"], r["pp"], r["dp"]), G, eta, compute="gemm",
                 gemm=gemm_of(r["gpu"], eta), memory_bandwidth=HBM[r["gpu"]],
                 prices=prices or NcclPrices(G), **kw)["time"]


def _h100_eta(change):
    r = next(x for x in load() if x["id"] == CALIBRATION["H100"])
    prices, goal = NcclPrices(cluster(r)), measured_time(r)
    return brentq(lambda e: closed_time(r, e, change, prices) - goal, 0.2, 1.0, xtol=1e-12,
                  rtol=1e-12)


def setting_sensitivity(name, rows=None, a100=None):
    """How far each judged row's prediction moves under alternative ``name``, over its measured time.

    Both predictions are closed forms (:func:`closed_time`), each at the H100's efficiency
    re-derived from its calibration run under the same reading (Brent's method; the A100's,
    ``a100``, is Table 1's and does not depend on these rows). About half a minute.

    Returns
    -------
    dict
        ``{"eta": (assumed, alternative), "rows": [{"id", "assumed", "alternative",
        "shift"}]}``: the two H100 efficiencies, and per judged row the two predicted
        errors and ``shift``, the difference of the predicted times over the measured time.
    """
    from studies.validation.megatron import REFERENCE, ROWS, efficiency_from

    rows = load() if rows is None else rows
    change = ALTERNATIVES[name]
    a100 = efficiency_from(ROWS[REFERENCE], rule="gemm") if a100 is None else a100
    etas = ({"A100": a100, "H100": _h100_eta(None)}, {"A100": a100, "H100": _h100_eta(change)})
    out = []
    for r in judged(rows):
        t = measured_time(r)
        before = closed_time(r, etas[0][r["gpu"]]) / t - 1
        after = closed_time(r, etas[1][r["gpu"]], change) / t - 1
        out.append({"id": r["id"], "assumed": before, "alternative": after,
                    "shift": after - before})
    return {"eta": (etas[0]["H100"], etas[1]["H100"]), "rows": out}


def save(sensitivities, path=SENSITIVITY):
    """Write ``{name: setting_sensitivity(name)}`` to ``path`` (12 significant digits)."""
    with open(path, "w", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(_FIELDS)
        for name, s in sensitivities.items():
            for x in s["rows"]:
                w.writerow([name, x["id"]] + [f"{v:.12g}" for v in (
                    x["assumed"], x["alternative"], x["shift"], *s["eta"])])


def cached(path=SENSITIVITY):
    """The stored sensitivities, as :func:`setting_sensitivity` returns them, by alternative.

    Examples
    --------
    >>> s = cached()
    >>> sorted(s) == sorted(ALTERNATIVES), len(s["micro-batch 2"]["rows"]) == len(judged(load()))
    (True, True)
    """
    out = {}
    with open(path, newline="") as f:
        for p in csv.DictReader(f):
            s = out.setdefault(p["alternative"], {"eta": (float(p["eta_assumed"]),
                                                          float(p["eta_changed"])), "rows": []})
            s["rows"].append({"id": p["id"], "assumed": float(p["assumed"]),
                              "alternative": float(p["changed"]), "shift": float(p["shift"])})
    return out


def markdown(reading, sensitivities):
    """The documentation's table: per judged row, the reading and each alternative's shift.

    ``reading`` is :func:`within_reading`'s list, ``sensitivities`` ``{name:
    setting_sensitivity(name)}``. A last line gives the medians.

    Examples
    --------
    >>> w = [{"id": "a", "error": 0.1, "reading": 0.02, "beyond": 0.08}]
    >>> s = {"x": {"eta": (0.6, 0.7), "rows": [{"id": "a", "shift": -0.05}]}}
    >>> print(markdown(w, s))
    | row | error | reading | beyond the reading | x |
    |---|---|---|---|---|
    | a | +10.0% | 2.00% | 8.0% | -5.0% |
    | median of the absolute values | 10.0% | 2.00% | 8.0% | 5.0% |
    """
    names = list(sensitivities)
    shift = {n: {x["id"]: x["shift"] for x in sensitivities[n]["rows"]} for n in names}
    lines = ["| row | error | reading | beyond the reading | " + " | ".join(names) + " |",
             "|---" * (4 + len(names)) + "|"]
    for x in reading:
        lines.append(f"| {x['id']} | {x['error']:+.1%} | {x['reading']:.2%} | "
                     f"{x['beyond']:.1%} | "
                     + " | ".join(f"{shift[n][x['id']]:+.1%}" for n in names) + " |")
    med = [np.median(np.abs([x[k] for x in reading])) for k in ("error", "reading", "beyond")]
    med += [np.median(np.abs(list(shift[n].values()))) for n in names]
    lines.append("| median of the absolute values | " + " | ".join(
        f"{m:.2%}" if i == 1 else f"{m:.1%}" for i, m in enumerate(med)) + " |")
    return "\n".join(lines)
