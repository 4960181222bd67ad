"""The traffic-convergence trade-off of the sync schemes across architectures.

For every (scheme, architecture) of :func:`workloads.paradigms.schemes.combinations`, the
combination trains for real on a dataset, 1, 2, ... epochs until its test
accuracy reaches a stated target; the bytes it sent to get there and its
trace's simulated time on each topology (10 GbE star, a PCIe box) stand next
to the scheme's closed form (:func:`workloads.paradigms.schemes.closed_form`, per
iteration times the iterations). The combinations not offered are listed with
the reason. Every combination trains the same model from the same seed.

Examples
--------
>>> from topologies import star
>>> rows = study(target=0.85, max_epochs=1, topologies={"star": star},
...              only=[("bsp", "allreduce")])
>>> rows[0]["reached"], rows[0]["epochs"], rows[0]["time_star"] > 0
(True, 1, True)
"""

from netsim import costmodel
from netsim.result import simulate
from netsim.units import format_bytes
from topologies import pcie_tree, star
from topologies.specs import ETHERNET
from workloads.paradigms import schemes
from workloads.paradigms.allreduce import COLLECTIVES
from workloads.errors import ProjectionError, WorkloadError
from workloads.models import resize
from netsim.comm.library import check_placed, mpich_wire

from studies.scaling.paradigm import nccl_closed_form

__all__ = ["TOPOLOGIES", "TARGET", "study", "verdict_rows", "format_table", "plot"]


def _ten_gbe(ranks):
    return star(ranks, bandwidth=ETHERNET["10GbE"])


def _pcie_box(ranks):
    return pcie_tree()   # 8 GPUs under 4 PCIe gen3 switches, 2 sockets (QPI)


#: Topology name -> builder of a graph for a trace's ranks.
TOPOLOGIES = {"10GbE": _ten_gbe, "PCIe": _pcie_box}


#: The accuracy the table of docs/studies.md is made for: every offered combination reaches it on
#: digits within 4 epochs, at least 5 test samples clear of it.
TARGET = 0.92


def study(target=TARGET, dataset="digits", workers=4, max_epochs=6, seed=0, topologies=None,
          only=None, library="auto", progress=None, model=None, **options):
    """Bytes and simulated time to reach ``target`` accuracy, per scheme x architecture.

    Parameters
    ----------
    target : float
        Test accuracy to reach, in (0, 1].
    dataset : str
    workers : int
    max_epochs : int
        Give up after this many epochs (``reached`` False).
    seed : int
    topologies : dict, optional
        Name -> ``builder(ranks)`` (default :data:`TOPOLOGIES`).
    only : sequence of (scheme, architecture), optional
        The combinations to run (default all).
    library : {"auto", "mpich", "nccl"}, optional
        Expands the collectives at replay (:func:`netsim.simulate`); where NCCL
        runs them the closed form's communication is NCCL's tuning model
        (:func:`studies.scaling.paradigm.nccl_closed_form`).
    progress : callable, optional
        Called as ``progress(combinations_done, combinations)`` after each
        combination, for a progress bar (:class:`netsim.progress.Progress`).
    model : str, optional
        Resize each run's trace to this model before it is simulated
        (:func:`workloads.models.resize`: its message sizes and FLOPs; the epochs
        to the target are the trained model's); ``bytes`` are then the resized
        trace's. A combination whose paradigm cannot be resized keeps its
        training figures, and ``skipped`` says why it was not simulated.
    **options
        Passed to :func:`workloads.paradigms.schemes.run` (``servers``, ``staleness``,
        ``period``, ``collective``, ``hidden``, ``lr``, ...).

    Returns
    -------
    list of dict
        One per combination: ``scheme``, ``architecture``, ``paradigm``,
        ``reason`` (why not offered, else None), ``reached``, ``epochs``,
        ``iterations``, ``accuracy``, ``bytes``, and per topology ``time_<name>``
        (simulated seconds of the whole run) and ``closed_<name>`` (the closed
        form, seconds per iteration x iterations).

    Examples
    --------
    >>> rows = study(target=0.5, dataset="iris", max_epochs=1, topologies={"10GbE": _ten_gbe},
    ...              only=[("async", "allreduce")])
    >>> rows[0]["reason"][:40]
    'with no server there is no shared state '
    """
    topologies = TOPOLOGIES if topologies is None else topologies
    collective = options.get("collective", "ring")
    if collective not in COLLECTIVES:   # before any training
        raise WorkloadError(f"unknown collective {collective!r}; known collectives: "
                            f"{', '.join(COLLECTIVES)}")
    rows = []
    todo = [(s, a, why) for s, a, why in schemes.combinations()
            if only is None or (s, a) in set(only)]
    for scheme, arch, why in todo:
        row = {"scheme": scheme, "architecture": arch, "reason": why}
        rows.append(row)
        if progress is not None and why:
            progress(len(rows), len(todo))
        if why:
            continue
        for epochs in range(1, max_epochs + 1):
            r = schemes.run(scheme, arch, dataset=dataset, workers=workers, epochs=epochs,
                            seed=seed, **options)
            if r.accuracy >= target:
                break
        row.update(paradigm=r.paradigm, reached=r.accuracy >= target, epochs=epochs,
                   iterations=r.iterations, accuracy=r.accuracy, bytes=r.total_bytes)
        trace = r.trace
        if model is not None:
            try:
                trace = resize(trace, model)
            except ProjectionError as exc:
                row["skipped"] = f"not simulated as {model}: {exc}"
            else:
                row["bytes"] = mpich_wire(trace).total_bytes
        for name, make in topologies.items():
            if row.get("skipped"):
                row[f"time_{name}"] = row[f"closed_{name}"] = None
                continue
            G = make(trace.ranks)
            alpha, beta = costmodel.alpha_beta(G, trace=trace)
            if trace.num_collectives:   # not as the first collective's op
                check_placed(library, G, trace.ranks)
            res = simulate(trace, G, library=library)
            cf = nccl_closed_form(schemes.closed_form(trace, alpha, beta), res, trace)
            row[f"time_{name}"] = res.makespan
            row[f"closed_{name}"] = cf["time"] * r.iterations
        if progress is not None:
            progress(len(rows), len(todo))
    return rows


#: The comparisons of docs/studies.md that :func:`verdict_rows` checks at each seed:
#: (claim, first combination, second, threshold on first / second epochs).
COMPARISONS = (
    ("Downpour needs at least 2x the epochs of BSP", ("async", "ps"), ("bsp", "ps"), 2.0),
    ("local SGD needs no more epochs than BSP", ("bsp", "ps"), ("local-sgd", "ps"), 1.0),
)


def verdict_rows(rows, seed, target=TARGET):
    """The verdicts of one seed's :func:`study` as claim rows, to fold over seeds with
    :func:`studies.claims.verdicts.over_seeds`: every offered combination reaching the
    target, and the comparisons of :data:`COMPARISONS` (epochs of one over the other).

    Parameters
    ----------
    rows : list of dict
        One seed's :func:`study` rows.
    seed : int
    target : float

    Returns
    -------
    list of dict
        Claim rows (``claim``, ``source``, ``setup``, ``measured``, ``threshold``,
        ``value``, ``passed``, ``verdict``, ``seconds``, ``region``, ``seed``).

    Examples
    --------
    >>> rows = [{"scheme": "bsp", "architecture": "ps", "reason": None, "reached": True,
    ...          "epochs": 2}, {"scheme": "async", "architecture": "ps", "reason": None,
    ...          "reached": True, "epochs": 6}]
    >>> [(v["claim"][:24], v["value"], v["verdict"]) for v in verdict_rows(rows, 0)]
    [('bsp / ps reaches 0.92', 2, 'PASS'), ('async / ps reaches 0.92', 6, 'PASS'), ('Downpour needs at least ', 3.0, 'PASS')]
    """
    def row(claim, measured, threshold, value, passed):
        return {"claim": claim, "source": "docs/studies.md (netsim schemes)", "setup": "",
                "measured": measured, "threshold": threshold, "value": value,
                "passed": bool(passed), "verdict": "PASS" if passed else "FAIL",
                "seconds": 0.0, "region": "", "seed": seed}

    out, by = [], {}
    for r in rows:
        if r["reason"]:
            continue
        by[(r["scheme"], r["architecture"])] = r
        out.append(row(f"{r['scheme']} / {r['architecture']} reaches {target}",
                       f"{r['epochs']} epoch(s)", "within --max-epochs", r["epochs"],
                       r["reached"]))
    for claim, a, b, least in COMPARISONS:
        if a in by and b in by:   # at every seed, so that the seeds have the same claims
            ratio = by[a]["epochs"] / by[b]["epochs"]
            reached = by[a]["reached"] and by[b]["reached"]
            out.append(row(claim, f"{by[a]['epochs']} / {by[b]['epochs']} epochs"
                           + ("" if reached else " (target not reached)"),
                           f"epochs ratio >= {least:g}", ratio, reached and ratio >= least))
    return out


def _time(seconds):
    return f"{seconds * 1e3:.3f}"


def format_table(rows, target=None):
    """A Markdown table of :func:`study` rows: one line per combination.

    Parameters
    ----------
    rows : list of dict
    target : float, optional
        Named in the header.

    Examples
    --------
    >>> row = {"scheme": "bsp", "architecture": "ps", "reason": None, "paradigm": "ps-sync",
    ...        "reached": True, "epochs": 1, "iterations": 45, "accuracy": 0.903,
    ...        "bytes": 1742400, "time_10GbE": 1.574e-3, "closed_10GbE": 1.574e-3}
    >>> print(format_table([row]).splitlines()[2])
    | bsp | ps | ps-sync | 1 | 45 | 0.903 | 1,742,400 | 1.574 / 1.574 |
    """
    topos = sorted({k[5:] for r in rows for k in r if k.startswith("time_")},
                   key=lambda t: list(TOPOLOGIES).index(t) if t in TOPOLOGIES else 99)
    acc = f"accuracy (target {target})" if target is not None else "accuracy"
    head = (["scheme", "architecture", "paradigm", "epochs", "iterations", acc, "bytes"]
            + [f"{t}: simulated / closed form (ms)" for t in topos])
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for r in rows:
        if r["reason"]:
            cells = [r["scheme"], r["architecture"], "not offered: " + r["reason"]]
            cells += [""] * (len(head) - len(cells))
        else:
            cells = [r["scheme"], r["architecture"], r["paradigm"],
                     str(r["epochs"]) + ("" if r["reached"] else " (not reached)"),
                     str(r["iterations"]), f"{r['accuracy']:.3f}",
                     f"{r['bytes']:,.0f}" + (" (as trained)" if r.get("skipped") else "")]
            cells += [f"{_time(r['time_' + t])} / {_time(r['closed_' + t])}"
                      if r["time_" + t] is not None else r["skipped"] for t in topos]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def _same_point(earlier, r, topo, rtol=0.01):
    """The label of the first earlier row drawn at r's point on ``topo`` (within 1 % in time
    and bytes: less than a marker apart on these log axes), else None."""
    for e in earlier:
        if all(abs(e[k] - r[k]) <= rtol * abs(r[k]) for k in (f"time_{topo}", "bytes")):
            return f"{e['scheme']} / {e['architecture']}"
    return None


def plot(rows, path, title=None):
    """Bytes against simulated time to the target, one panel per topology, one marker per
    combination (the closed form as an open marker beside it).

    Parameters
    ----------
    rows : list of dict
        From :func:`study`.
    path : str or path-like
        The PNG to write.
    title : str, optional

    Returns
    -------
    path

    Examples
    --------
    >>> import os, tempfile
    >>> row = {"scheme": "bsp", "architecture": "ps", "reason": None, "bytes": 1e6,
    ...        "time_10GbE": 1e-3, "closed_10GbE": 1e-3, "reached": True}
    >>> p = plot([row], os.path.join(tempfile.mkdtemp(), "s.png"))
    >>> os.path.getsize(p) > 0
    True
    """
    from matplotlib.figure import Figure  # outside pyplot: no backend, no global state

    from netsim.drawing.plot import label_log_axis

    done = [r for r in rows if not r["reason"] and not r.get("skipped")]
    topos = [k[5:] for k in done[0] if k.startswith("time_")] if done else []
    fig = Figure(figsize=(5.2 * max(len(topos), 1) + 2, 4.2), layout="constrained")
    axes = fig.subplots(1, max(len(topos), 1), squeeze=False)
    markers = "osD^vP*X"
    labels = []
    for i, r in enumerate(done):
        label = (f"{r['scheme']} / {r['architecture']}, simulated"
                 + ("" if r["reached"] else " (not reached)"))
        over = {t: _same_point(done[:i], r, t) for t in topos}
        hidden = sorted({e for e in over.values() if e is not None})
        for e in hidden:  # drawn smaller, over it: say so, and where
            where = [t for t in topos if over[t] == e]
            label += f" (same point as {e}" + ("" if len(where) == len(topos)
                                               else " on " + ", ".join(where)) + ")"
        labels.append(label)
    for ax, topo in zip(axes[0], topos):
        for i, r in enumerate(done):
            # A combination on an earlier one's point is drawn smaller and above it.
            size = 40.0 if _same_point(done[:i], r, topo) else 100.0
            ax.scatter(r[f"time_{topo}"] * 1e3, r["bytes"], marker=markers[i % len(markers)],
                       color=f"C{i}", s=size, edgecolor="black", linewidth=0.5, label=labels[i],
                       zorder=3 + i)
            ax.scatter(r[f"closed_{topo}"] * 1e3, r["bytes"], marker=markers[i % len(markers)],
                       facecolor="none", edgecolor=f"C{i}", s=2.2 * size, linewidth=1.0,
                       zorder=2)
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.margins(0.12)
        label_log_axis(ax.xaxis)
        label_log_axis(ax.yaxis, lambda b: format_bytes(b))
        ax.grid(True, which="both", alpha=0.3)
        ax.set_xlabel("simulated time to the target (ms, log); open: closed form")
        ax.set_ylabel("bytes sent to the target (log)")
        ax.set_title(topo)
    if done:
        # The closed forms are open markers of each combination's shape and colour: one key
        # entry says so, rather than a second entry per combination.
        ax = axes[0][-1]
        handles, names = ax.get_legend_handles_labels()
        key = ax.scatter([], [], marker="o", facecolor="none", edgecolor="gray", s=100,
                         label="open marker of the same shape: its closed form")
        ax.legend(handles + [key], names + [key.get_label()], loc="upper left",
                  bbox_to_anchor=(1.02, 1.0), fontsize=8)
    fig.suptitle(title or "sync scheme x architecture: traffic against time to accuracy")
    fig.savefig(path, dpi=110, bbox_inches="tight", pad_inches=0.15)
    return path
