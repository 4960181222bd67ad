"""The errors, rankings and documentation table of :mod:`studies.validation.transformer_layouts`.

Everything here is computed from the measurements (``transformer_layouts.csv``) and the
stored predictions (``transformer_layouts_predicted.csv``) alone, so the table of
``docs/transformer.md`` is regenerated in milliseconds and a test compares it.
"""

import numpy as np
from scipy.stats import spearmanr

from studies.validation.transformer_layouts import NULL_SHARE, measured_time, model_rate

__all__ = ["GAP", "errors", "groups", "summary", "markdown", "summary_text"]


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

    Rows rank by model FLOPs per GPU-second (higher is faster). ``rho`` is Spearman's
    rank correlation of the predicted against the measured rates (None for a group of
    one row or a constant prediction); ``fastest`` whether the predicted fastest row is
    the measured fastest; ``null_rho`` the null model's rho.

    Examples
    --------
    >>> from studies.validation.transformer_layouts import cached, load
    >>> g = groups(load(), cached())
    >>> g["mcore-h100-strong"]["rows"]
    8
    """
    out = {}
    names = []
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
    """Median and worst absolute relative error of the prediction and of the null model, over every row.

    Examples
    --------
    >>> from studies.validation.transformer_layouts import cached, load
    >>> s = summary(load(), cached())
    >>> s["median"] <= s["worst"] and s["null_median"] <= s["null_worst"]
    True
    """
    e = errors(rows, preds)
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
        lines.append(f"| {r['id']} | {r['gpus']} {r['gpu']}{shard} | {r['tp']} | {r['pp']} | "
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
    return (f"Over the {s['rows']} rows ({s['simulated']} replayed, the closed form beside "
            f"each): the replay's |error| is {s['median']:.1%} in the median and "
            f"{s['worst']:.1%} at worst; the null model's (every row at {NULL_SHARE:.1%} of "
            f"its GPU's peak, the calibration row's share) {s['null_median']:.1%} and "
            f"{s['null_worst']:.1%}.")


def _fmt(x):
    return "-" if x is None else f"{x:+.2f}"
