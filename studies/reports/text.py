"""Plain-text reports: aligned tables, and the reports of a replay, a study and the claims.

Every text table the ``netsim`` commands print is made by :func:`table`, so
all share one layout: headers, a rule of dashes, numbers right-aligned.
"""

import numpy as np

from netsim.comm.library import plan_names
from netsim.units import format_bandwidth, format_bytes, format_time

from studies.scaling.throughput import ASYNCHRONOUS

__all__ = ["table", "summary", "link_table", "format_study", "speedup_hint", "region_summary",
           "format_claims"]


def table(headers, rows):
    """Aligned plain-text table; numbers right-aligned.

    Parameters
    ----------
    headers : sequence of str
    rows : sequence of sequence
        One value per header; a column of ints and floats only is right-aligned.

    Returns
    -------
    str

    Examples
    --------
    >>> print(table(["a", "bb"], [(1, "x"), (22, "yy")]))
     a  bb
    --  --
     1  x
    22  yy
    """
    cells = [[str(c) for c in r] for r in rows]
    widths = [max([len(h)] + [len(r[i]) for r in cells]) for i, h in enumerate(headers)]
    numeric = [bool(rows) and all(_is_number(r[i]) for r in rows) for i in range(len(headers))]

    def line(values):
        return "  ".join(v.rjust(w) if num else v.ljust(w)
                         for v, w, num in zip(values, widths, numeric)).rstrip()

    return "\n".join([line(headers), line(["-" * w for w in widths])] + [line(r) for r in cells])


def _is_number(x):
    return isinstance(x, (int, float)) and not isinstance(x, bool)


def summary(result, top=5):
    """Human summary of a :class:`~netsim.result.Result`: totals, ranks, bottleneck links.

    Parameters
    ----------
    result : netsim.Result
    top : int, optional
        Bottleneck links listed.

    Returns
    -------
    str

    Examples
    --------
    >>> import networkx as nx
    >>> from netsim import TraceBuilder, simulate
    >>> G = nx.Graph(); G.add_edge("a", "b", bandwidth=1e9, latency=0.0)
    >>> b = TraceBuilder(2); _ = b.message(0, 1, 1e6)
    >>> print(summary(simulate(b.build(), G)).splitlines()[2])  # 1 MB at 1 GB/s
    makespan                  1 ms

    An imported profile's measured step time (``metadata["measured_step_time"]``)
    is shown next to the simulated mean iteration; when the import says which steps to
    compare (``compared_steps``: the steps selected, else the steady ones,
    :mod:`netsim.formats.kineto.steps`), both means are over those steps, and a row says which
    were left out:

    >>> t = b.build().with_metadata(measured_step_time=1.25e-3)
    >>> for line in summary(simulate(t, G)).splitlines()[5:7]:
    ...     print(line)
    measured step (profile)   1.25 ms
    difference                -20.0 %
    """
    r = result
    mean_it = float(r.iteration_times.mean()) if len(r.iteration_times) else None
    rows = [("makespan", format_time(r.makespan)),
            ("iterations", len(r.iteration_end)),
            ("mean iteration", format_time(mean_it) if mean_it is not None else "-")]
    measured = r.metadata.get("measured_step_time")  # an imported profile's own step time
    steps = r.metadata.get("compared_steps")    # its steps to compare (netsim.formats.kineto.steps)
    times = r.metadata.get("measured_step_times")
    if steps is not None and times and all(i < len(r.iteration_times) for i in steps) \
            and steps:
        mean_it = float(np.mean(r.iteration_times[steps]))
        measured = float(np.mean([times[i] for i in steps]))
    if measured and mean_it is not None:
        rows.append(("measured step (profile)", format_time(measured)))
        if steps is not None and times:
            rows += [("simulated, same steps", format_time(mean_it)),
                     ("compared steps", f"{len(steps)} of {len(times)}; "
                                        f"{r.metadata.get('compared_note', 'all')}")]
        rows.append(("difference", f"{100 * (mean_it - measured) / measured:+.1f} %"))
    lines = [table(["metric", "value"], rows + [
        ("messages", r.stats["messages"]),
        ("bytes", format_bytes(r.stats["bytes"])),
        ("mean compute / rank", format_time(float(r.ranks["compute"].mean()))),
        ("mean exposed comm / rank", format_time(float(r.ranks["exposed_communication"].mean()))),
        ("mean idle / rank", format_time(float(r.ranks["idle"].mean()))),
    ]), "", "bottleneck links", link_table(r.bottlenecks(top))]
    if len(r.collectives["op"]):
        libs = sorted(set(r.collectives["library"].tolist()) - {"none"})
        lines += ["", f"collectives: {len(r.collectives['op'])} ({', '.join(libs) or 'none'}); "
                      f"plans: {'; '.join(plan_names(r.collectives)) or '-'}"]
    return "\n".join(lines)


def link_table(links, flows=True):
    """Table of link-direction records (as of ``Result.bottlenecks``), one row each.

    Parameters
    ----------
    links : list of dict
        ``link``, ``bandwidth``, ``bytes``, ``mean_util``, ``peak_util``,
        ``saturated`` and, with ``flows``, ``peak_flows``.
    flows : bool, optional
        Add the column of the most messages sharing the link at once.

    Returns
    -------
    str

    Examples
    --------
    >>> print(link_table([{"link": "a->b", "bandwidth": 1e9, "bytes": 1e6, "mean_util": 1.0,
    ...                    "peak_util": 1.0, "saturated": 1e-3}], flows=False))
    link  bandwidth  bytes  mean util  peak util  saturated
    ----  ---------  -----  ---------  ---------  ---------
    a->b  8 Gbps     1 MB   1.000      1.000      1 ms
    """
    headers = ["link", "bandwidth", "bytes", "mean util", "peak util", "saturated"]
    rows = [(b["link"], format_bandwidth(b["bandwidth"]), format_bytes(b["bytes"]),
             f"{b['mean_util']:.3f}", f"{b['peak_util']:.3f}", format_time(b["saturated"]))
            + ((b["peak_flows"],) if flows else ()) for b in links]
    return table(headers + ["max flows"] * flows, rows)


def _throughput(st):
    """The throughput table of an asynchronous study (:func:`studies.scaling.throughput.throughput`)."""
    def num(x, unit):
        return "-" if x is None else f"{x:,.4g} {unit}"

    rows = [(r["P"], format_time(r["time"]), num(r.get("samples_per_s"), "samples/s"),
             num(r.get("updates_per_s"), "updates/s"),
             "-" if r.get("time_to_target") is None else
             f"{format_time(r['time_to_target'])} ({r['target_updates']})")
            for r in st["records"]]
    return (table(["P", "time/iter", "samples/s", "updates/s", "time to N updates"], rows)
            + "\nthroughput over the makespan: samples of every worker, model updates the server "
            "applied (one per push); N = the window's steps, the updates a BSP run applies "
            "over them")


def _trend(st):
    """The trend of a run without a steady state, and which figure to quote."""
    per = ", ".join(f"{r['P']}: {r['trend']:+.1%}" for r in st["records"]
                    if r.get("trend") is not None)
    return (f"trend per recorded epoch of time per iteration (the window's 2nd half after its "
            f"warm-up against its 1st), by P: {per}\n"
            "no steady state: time per iteration depends on how long the run is; quote the "
            "figure of the epochs you model (the epoch rows, --iterations for more epochs) "
            "with this trend, and the whole window's only for a run of its length")


def format_study(st):
    """Plain-text tables of a :func:`studies.scaling.paradigm.study`: per P, then fits and the saturation point.

    Examples
    --------
    >>> from topologies import star
    >>> from studies.scaling.paradigm import study
    >>> print(format_study(study("ps-sync", [2, 4], star, iterations=1,
    ...                          dataset="iris")).splitlines()[0].split()[:3])
    ['P', 'time/iter', 'closed']
    """
    def ft(x):
        return "-" if x is None else format_time(x)

    rows = [(r["P"], ft(r["time"]), ft(r["closed_form"]), ft(r["compute"]), ft(r["exposed"]),
             ft(r["closed_communication"]), f"{r['speedup']:.2f}", f"{r['efficiency']:.3f}",
             r["top_link"] or "-", f"{r['saturated_fraction']:.3f}") for r in st["records"]]
    lines = [table(["P", "time/iter", "closed form", "compute", "exposed comm", "closed comm",
                    "speed-up", "efficiency", "busiest link", "saturated"], rows), ""]
    if st.get("paradigm") in ASYNCHRONOUS:
        lines += [_throughput(st), ""]
    if st.get("window"):
        lines += [f"window: {st['window']['what']}", ""]
    phases = [(r["P"], p["phase"], f"{p['start']}-{p['stop'] - 1}",
               ", ".join(f"{s}-{s + n - 1}" for s, n in p["simulated"]), ft(p["time"]),
               ft(p["closed_form"]), ft(p["compute"]), ft(p["exposed"]))
              for r in st["records"] for p in r.get("phases") or ()]
    if phases:
        lines += [table(["P", "phase", "iterations", "simulated", "time/iter", "closed form",
                         "compute", "exposed comm"], phases), ""]
    if st.get("window", {}).get("trend"):
        lines += [_trend(st), ""]
    fits = [(k, f["law"], "-" if f["r2"] is None else f"{f['r2']:.4f}",
             "no single law fits" if f["no_single_law"] else "")
            for k, f in st["fits"].items() if f is not None]
    lines.append(table(["curve", "scaling law", "R^2", "note"], fits))
    if st.get("terms"):
        lines.append("closed-form terms by law (least BIC, netsim.analysis.scaling_laws): " + ", ".join(
            f"{k} {f['law']}" for k, f in st["terms"].items()))
    sat = st["saturation"]
    lines.append("")
    if sat["P"] is None:
        lines.append(f"no saturation up to P = {st['workers'][-1]} (no link saturated for more "
                     f"than {sat['level']:.0%} of the iteration)")
    elif sat["reason"] == "link":
        who = f" ({sat['link_ranks']})" if sat.get("link_ranks") else ""
        lines.append(f"saturation point: P = {sat['P']}: link {sat['link']}{who} saturated for "
                     f"{sat['fraction']:.0%} of the iteration"
                     + (f" (crossing {sat['level']:.0%} at P ~ {sat['crossing']:.1f})"
                        if sat["crossing"] else " (already at the smallest P)"))
    else:
        lines.append(f"saturation point: P = {sat['P']}: time per iteration stops falling")
    if st["closed_form_crossing"] is not None:
        lines.append(f"closed form: communication equals compute at P ~ "
                     f"{st['closed_form_crossing']:.1f}")
    elif st.get("closed_form_regime"):
        lines.append(f"closed form: {st['closed_form_regime']} studied")
    lines.append(f"closed form: {st['closed_form_note']}")
    if "NCCL's tuning model" in (st["closed_form_note"] or ""):
        lines.append("closed comm is NCCL's tuning model of each call, summed; exposed comm the "
                     "same calls on the links, past compute: they part where calls overlap compute "
                     "or each other, or load a link unevenly (docs/gpu.md, NCCL's time on the "
                     "links against its own model)")
    gaps = st.get("closed_form_gaps") or ()
    if gaps:
        lines.append("closed form vs simulation beyond 5 % (simulated / closed form - 1):")
        lines += [f"  P = {g['P']}: {g['gap']:+.1%}" + (f": {g['detail']}" if g["detail"] else "")
                  for g in gaps]
        lines += [f"  why: {why}" for why in sorted({g["why"] for g in gaps if g["why"]})]
    by_plan = {}
    for r in st["records"]:
        for plan in r.get("plans") or ():
            by_plan.setdefault(plan, []).append(r["P"])
    if by_plan:
        lines.append(f"collectives (library {st.get('library', 'auto')}): " + "; ".join(
            f"{plan} at P = {', '.join(map(str, Ps))}" for plan, Ps in by_plan.items()))
    return "\n".join(lines)


def speedup_hint(st):
    """Why a study's speed-up prints as 0.00, in one sentence (None when none does).

    The weak-scaling speed-up is ``S(P) = P T(1) / T(P)`` (module
    :mod:`studies.scaling.paradigm`): with a recording's small model, one worker's
    compute per iteration ``T(1)`` (its FLOPs at the device's rate) is nanoseconds,
    while an iteration waits microseconds for its messages through the busiest link
    (a parameter server's), so ``S`` is below 0.005 and the two-decimal table shows
    0.00 at every P. The sentence gives the two times and the link.

    Parameters
    ----------
    st : dict
        A :func:`studies.scaling.paradigm.study`.

    Returns
    -------
    str or None

    Examples
    --------
    >>> st = {"T1": 3.6e-9, "strong": False, "records": [
    ...     {"P": 2, "speedup": 3.7e-4, "time": 1.95e-5, "top_link": "host2<->switch"}]}
    >>> print(speedup_hint(st))  # doctest: +NORMALIZE_WHITESPACE
    speed-up 0.00: one worker's compute per iteration, T(1) = 3.6 ns, is 5.4e+03x shorter
    than an iteration at P = 2 (19.5 us, bound by link host2<->switch), so P T(1)/T(P) rounds
    to 0.00; give --model (e.g. resnet50) or a slower --device-flops for a model whose compute
    counts
    >>> speedup_hint({"T1": 1.0, "strong": False, "records": [{"P": 2, "speedup": 1.5}]}) is None
    True
    """
    low = [r for r in st["records"] if abs(r["speedup"]) < 0.005]
    if not low or not st.get("T1"):
        return None
    r = low[0]
    link = f", bound by link {r['top_link']}" if r.get("top_link") else ""
    formula = "T(1)/T(P)" if st.get("strong") else "P T(1)/T(P)"
    return (f"speed-up 0.00: one worker's compute per iteration, T(1) = {format_time(st['T1'])}, "
            f"is {r['time'] / st['T1']:.2g}x shorter than an iteration at P = {r['P']} "
            f"({format_time(r['time'])}{link}), so {formula} rounds to 0.00; give --model "
            f"(e.g. resnet50) or a slower --device-flops for a model whose compute counts")


def region_summary(region):
    """One cell of the claims table: where a claim holds (a region record or a sentence).

    Examples
    --------
    >>> region_summary({"x": "P", "y": "n", "holds": [[True, False], [True, True]]})
    'holds in 3 of 4 cells of n x P'
    >>> region_summary(""), region_summary("by construction")
    ('-', 'by construction')
    """
    if not region:
        return "-"
    if isinstance(region, str):
        return region
    cells = [h for row in region["holds"] for h in row]
    return f"holds in {sum(cells)} of {len(cells)} cells of {region['y']} x {region['x']}"


def format_claims(rows, markdown=False):
    """The claims as a table: claim, source, measured, threshold, region, verdict.

    The verdict is the row's ``verdict`` (``PASS``, ``FAIL`` or ``by
    construction``; from ``passed`` when absent); the region column is
    :func:`region_summary` of its ``region``.

    Parameters
    ----------
    rows : list of dict
        Claim records (:func:`studies.claims.reproduce.run_claims`).
    markdown : bool
        A Markdown table instead of plain text.

    Examples
    --------
    >>> rows = [{"claim": "c", "source": "s", "setup": "x", "measured": "m",
    ...          "threshold": ">= 1", "value": 2.0, "passed": True, "seconds": 0.1}]
    >>> print(format_claims(rows, markdown=True))
    | claim | source | setup | measured | threshold | where it holds | result |
    |---|---|---|---|---|---|---|
    | c | s | x | m | >= 1 | - | PASS |
    """
    verdict = [r.get("verdict") or ("PASS" if r["passed"] else "FAIL") for r in rows]
    where = [region_summary(r.get("region")) for r in rows]
    if markdown:
        lines = ["| claim | source | setup | measured | threshold | where it holds | result |",
                 "|---|---|---|---|---|---|---|"]
        lines += [f"| {r['claim']} | {r['source']} | {r['setup']} | {r['measured']} | "
                  f"{r['threshold']} | {w} | {v} |" for r, w, v in zip(rows, where, verdict)]
        return "\n".join(lines)
    return table(["claim", "source", "measured", "threshold", "where it holds", "result"],
                 [(r["claim"], r["source"], r["measured"], r["threshold"], w, v)
                  for r, w, v in zip(rows, where, verdict)])
