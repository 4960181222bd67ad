"""The errors, rankings and documentation table of :mod:`studies.validation.transformer_layouts`.

Everything here is computed from the measurements (``transformer_layouts.csv``) and the
stored predictions (``transformer_layouts_predicted.csv``) alone, so the table of
``docs/transformer.md`` is regenerated in milliseconds and a test compares it. A row an
efficiency was taken from (:data:`~studies.validation.transformer_layouts.CALIBRATION`)
is listed, marked, and left out of the errors' summary and of every ranking.
"""

import numpy as np
from scipy.stats import spearmanr

from studies.validation.transformer_layouts import (CALIBRATION, measured_time, model_rate,
                                                   null_share)

__all__ = ["GAP", "judged", "errors", "groups", "summary", "markdown", "summary_text"]


def judged(rows):
    """The rows judged: every row but those an efficiency was taken from.

    Examples
    --------
    >>> from studies.validation.transformer_layouts import load
    >>> len(load()) - len(judged(load()))
    1
    """
    return [r for r in rows if r["id"] not in CALIBRATION.values()]


def errors(rows, preds):
    """Per row: measured, predicted and null seconds and their relative errors (a list of dicts).

    Examples
    --------
    >>> from studies.validation.transformer_layouts import cached, load
    >>> e = errors(load(), cached())
    >>> len(e) == len(load()), sorted(e[0])[:3]
    (True, ['closed', 'error', 'id'])
    """
    out = []
    for r in rows:
        p = preds[r["id"]]
        t = measured_time(r)
        out.append({"id": r["id"], "measured": t, "predicted": p["predicted"], "null": p["null"],
                    "error": p["predicted"] / t - 1, "null_error": p["null"] / t - 1,
                    "method": p["method"], "closed": p["closed"], "note": p["note"]})
    return out


def groups(rows, preds):
    """Each group's ranking: ``{group: dict}`` with Spearman's rho and the fastest rows.

    Over the :func:`judged` rows. Rows rank by model FLOPs per GPU-second (higher is faster).
    ``rho`` is Spearman's rank correlation of the predicted against the measured rates (None
    for a group of one row or a constant prediction); ``fastest`` whether the predicted fastest
    row is the measured fastest; ``null_rho`` the null model's rho.

    Examples
    --------
    >>> from studies.validation.transformer_layouts import cached, load
    >>> g = groups(load(), cached())
    >>> g["mcore-h100-strong"]["rows"]   # 8 points, the 2304-GPU one the H100's calibration
    7
    """
    out = {}
    names = []
    rows = judged(rows)
    for r in rows:
        names += [g for g in r["groups"] if g not in names]
    for g in names:
        members = [r for r in rows if g in r["groups"]]
        meas = [model_rate(r, measured_time(r)) for r in members]
        pred = [model_rate(r, preds[r["id"]]["predicted"]) for r in members]
        null = [model_rate(r, preds[r["id"]]["null"]) for r in members]
        out[g] = {"rows": len(members), "rho": _rho(meas, pred), "null_rho": _rho(meas, null),
                  "measured_fastest": members[int(np.argmax(meas))]["id"],
                  "predicted_fastest": members[int(np.argmax(pred))]["id"],
                  "fastest": int(np.argmax(meas)) == int(np.argmax(pred))}
    return out


#: The relative gap between the closed form and the replay above which :func:`markdown` says why.
GAP = 0.005


def _rho(a, b):
    """Spearman's rho, None where it is undefined (one row, or either side all equal)."""
    if len(a) < 2 or np.ptp(a) == 0 or np.ptp(b) == 0:
        return None
    return float(spearmanr(a, b).statistic)


def summary(rows, preds):
    """Median and worst absolute relative error of the prediction and of the null model.

    Over the :func:`judged` rows (the calibration row left out).

    Examples
    --------
    >>> from studies.validation.transformer_layouts import cached, load
    >>> s = summary(load(), cached())
    >>> s["median"] <= s["worst"] and s["null_median"] <= s["null_worst"]
    True
    """
    e = errors(judged(rows), preds)
    sim = np.abs([x["error"] for x in e])
    null = np.abs([x["null_error"] for x in e])
    return {"rows": len(e), "simulated": sum(x["method"] == "simulated" for x in e),
            "median": float(np.median(sim)), "worst": float(sim.max()),
            "null_median": float(np.median(null)), "null_worst": float(null.max())}


def markdown(rows, preds):
    """The documentation's table: one line per row, then one per group.

    Examples
    --------
    >>> from studies.validation.transformer_layouts import cached, load
    >>> print(markdown(load(), cached()).splitlines()[0])
    | row | GPUs | t | p | d | b | B | recompute | measured s | simulated s | closed form s | error | null error |
    """
    lines = ["| row | GPUs | t | p | d | b | B | recompute | measured s | simulated s | "
             "closed form s | error | null error |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    table = errors(rows, preds)
    for r, x in zip(rows, table):
        shard = " FSDP" if r["fsdp"] else f" ZeRO-{r['zero']}" if r["zero"] else ""
        closed = "-" if x["closed"] is None else f"{x['closed']:.3g}"
        name = r["id"] + (" (calibration)" if r["id"] in CALIBRATION.values() else "")
        lines.append(f"| {name} | {r['gpus']} {r['gpu']}{shard} | {r['tp']} | {r['pp']} | "
                     f"{r['dp']} | {r['micro_batch']} | {r['global_batch']} | {r['recompute']} | "
                     f"{x['measured']:.3g} | {x['predicted']:.3g} | {closed} | "
                     f"{x['error']:+.1%} | {x['null_error']:+.1%} |")
    lines += ["", "| group | rows | Spearman | null's Spearman | measured fastest | "
              "predicted fastest |", "|---|---|---|---|---|---|"]
    for g, s in groups(rows, preds).items():
        lines.append(f"| {g} | {s['rows']} | {_fmt(s['rho'])} | {_fmt(s['null_rho'])} | "
                     f"{s['measured_fastest']} | {s['predicted_fastest']}"
                     f"{'' if s['fastest'] else ' (wrong)'} |")
    apart = [x for x in table if x["closed"] is None or abs(x["closed"] / x["predicted"] - 1) > GAP]
    if apart:
        lines += ["", f"Where the closed form is more than {GAP:.1%} from the replay, why (the "
                  "calls or hops the replay found slower than alone):", ""]
        lines += [f"* {x['id']}: " + ("" if x["closed"] is None else
                                     f"closed form {x['closed'] / x['predicted'] - 1:+.1%}; ")
                  + (x["note"] or "no call or hop slower than alone") for x in apart]
    return "\n".join(lines)


def summary_text(rows, preds):
    """The summary sentence under the table.

    Examples
    --------
    >>> from studies.validation.transformer_layouts import cached, load
    >>> summary_text(load(), cached()).startswith("Over the ")
    True
    """
    s = summary(rows, preds)
    etas = {}
    for r in rows:
        etas.setdefault(r["gpu"], preds[r["id"]]["efficiency"])
    cal = ", ".join(f"{g} {etas[g]:.3f} ({CALIBRATION[g]})" for g in sorted(etas))
    share = ", ".join(f"{g} {null_share(g):.1%}" for g in sorted(etas))
    return (f"Over the {s['rows']} rows other than the calibration row ({s['simulated']} "
            f"replayed, the closed form beside each; GEMM efficiency {cal}): the replay's "
            f"|error| is {s['median']:.1%} in the median and {s['worst']:.1%} at worst; the "
            f"null model's (every row at its GPU's calibration run's share of the peak: "
            f"{share}) {s['null_median']:.1%} and {s['null_worst']:.1%}.")


def _fmt(x):
    return "-" if x is None else f"{x:+.2f}"
