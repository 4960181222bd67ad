"""netsim.comm.nccl against published nccl-tests measurements: the machines, the errors, the table.

Every row of ``studies/data/nccl_measurements.csv`` (the counted rows), of the hold-out
and ops files and of ``nccl_measurements_reported.csv`` (rows their sources report as
problems: shown, not counted; the rule is in ``nccl_measurements.md``) names a machine
key; :func:`machine` builds that machine as a graph with :mod:`topologies` (single
machines, or :func:`topologies.gpu_cluster` for several joined by NIC rails),
:func:`predict` runs :func:`netsim.nccl.simulate` on it with the row's op, size and,
where the poster forced ``NCCL_ALGO``, that algorithm, :func:`table` prints the tables of
the validation page (``docs/validation.md``, "NCCL against published nccl-tests runs") and
:func:`summary` the median and worst error of the counted rows and of all rows. Nothing
here is fitted to a row: every number comes from ``topologies`` (which cites its sources)
or from NCCL's source (``netsim.comm.nccl.tuning``).

Run ``python -m studies.validation.nccl`` to print the tables of every file and the
summary; ``python -m studies.regenerate nccl`` rewrites them in ``docs/validation.md``
and draws its figure.
"""

import pathlib
import statistics

import numpy as np

from netsim import nccl

from studies.reports.nccl import measurements
from topologies import dgx1, dgx_a100, dgx_b200, dgx_h100, gb200_nvl72, gpu_cluster, pcie_box

__all__ = ["PAGE", "BLOCKS", "CLASSES", "COUNTED", "FIGURE", "MACHINES", "VALIDATED", "load",
           "machine", "predict", "validate", "validated", "table", "summary", "by_machine", "plot"]

PAGE = pathlib.Path(__file__).resolve().parents[2] / "docs" / "validation.md"
"""The documentation page that shows the tables (in a checkout; not installed)."""

# Machine key of the measurement files -> (builder, its arguments, GPU model to set or None).
# The H20 boxes of NVIDIA/nccl#1244 are DGX H100-like (NVLink4 x18, NVSwitch gen3, 8
# ConnectX-7 NDR per node) with H20 GPUs (sm 90): dgx_h100 with the GPU model renamed.
# OCI BM.GPU4.8's (and BM.GPU.B4.8's) 16 x 100 Gb/s RoCEv2 per node are modelled as the DGX
# A100's 8 rails at RoCE 200 Gb/s, and OCI BM.GPU.H100.8's 16 x 200 Gb/s as the DGX H100's 8
# rails at RoCE 400 Gb/s: the same bandwidth per machine, half the rails. p4de is p4d's network
# (4 x 100 Gb/s EFA) with 80 GB A100s; Azure's ND A100 v4 VMs have 8 x HDR 200 Gb/s each.
# gb200_nvl72 is one NVL72 rack: 72 GPUs in one NVLink domain, which NCCL's MNNVL takes for
# one node (no network crossed). GCP's A4 VM (a4-highgpu-8g) is an HGX B200 (8 B200 on NVLink5
# switches) with one 400 Gb/s RoCE NIC a GPU, two GPUs and two NICs a PCIe switch (the
# nvidia-smi topo of google/dranet's page): dgx_b200 for one VM, hgx_b200's rails at RoCE 400
# Gb/s for several.
_BUILDS = {
    "dgx1_v100": (dgx1, {}, None),
    "a100_nvswitch": (dgx_a100, {}, None),
    "h100_nvswitch": (dgx_h100, {}, None),
    "pcie_4090": (pcie_box, {}, None),
    "p4dn_efa": (gpu_cluster, {"machine": "p4d"}, None),
    "h100_ndr": (gpu_cluster, {"machine": "dgx_h100"}, None),
    "h20_ndr": (gpu_cluster, {"machine": "dgx_h100"}, "H20"),
    "h20_nvswitch": (dgx_h100, {}, "H20"),
    "a100_roce": (gpu_cluster, {"machine": "dgx_a100", "nic": "RoCE-200G"}, None),
    "p4de_efa": (gpu_cluster, {"machine": "p4d"}, None),
    "h100_efa": (gpu_cluster, {"machine": "p5"}, None),
    "h100_roce": (gpu_cluster, {"machine": "dgx_h100", "nic": "RoCE-400G"}, None),
    "a100_hdr": (gpu_cluster, {"machine": "dgx_a100", "nic": "HDR"}, None),
    "gb200_nvl72": (gb200_nvl72, {}, None),
    "b200_nvswitch": (dgx_b200, {}, None),
    "b200_roce": (gpu_cluster, {"machine": "hgx_b200", "nic": "RoCE-400G"}, None),
    "h200_roce": (gpu_cluster, {"machine": "hgx_h200", "nic": "RoCE-400G"}, None),
}
MACHINES = tuple(_BUILDS)


def machine(key, nodes=1):
    """The graph of one machine key of the measurement files, from :mod:`topologies`.

    Parameters
    ----------
    key : str
        One of :data:`MACHINES`.
    nodes : int, optional
        Machines (for the keys built with :func:`topologies.gpu_cluster`).

    Returns
    -------
    networkx.Graph

    Examples
    --------
    >>> G = machine("h100_ndr", 2)
    >>> kinds = [k for _, k in G.nodes(data="kind")]
    >>> kinds.count("gpu"), kinds.count("nic")
    (16, 16)
    """
    if key not in _BUILDS:
        raise KeyError(f"unknown machine key {key!r}; known: {', '.join(MACHINES)}")
    build, kwargs, model = _BUILDS[key]
    G = build(nodes=nodes, **kwargs) if build is gpu_cluster else build()
    if model:
        for n, kind in G.nodes(data="kind"):
            if kind == "gpu":
                G.nodes[n]["model"] = model
    return G


def load(name="nccl_measurements.csv"):
    """The rows of a measurement file of ``studies/data`` (:func:`studies.reports.nccl.measurements`).

    Examples
    --------
    >>> len(load()), len(load("nccl_measurements_holdout.csv"))
    (73, 3)
    """
    return measurements(name)


def predict(row):
    """The simulated call for one row: a Result whose ``plan`` says what NCCL ran.

    A row whose ``launch`` is ``thread`` (nccl-tests ``-g N``: one thread launching on
    every GPU in turn) is simulated so (:mod:`netsim.comm.nccl.launch`); ``proc`` and
    ``unknown`` rows as one process per GPU.

    Examples
    --------
    >>> r = predict(load()[4])          # DGX-1, 128 MiB allreduce
    >>> r.plan.algorithm, r.plan.channels
    ('ring', 6)
    """
    G = machine(row["machine"], int(row["nodes"]))
    gpus = [n for n, kind in G.nodes(data="kind") if kind == "gpu"][:int(row["gpus"])]
    algorithm = row["nccl_algo"] or None
    if row["op"] in ("alltoall", "sendrecv"):
        algorithm = None  # NCCL runs point-to-point whatever NCCL_ALGO says
    launch = "thread" if row["launch"] == "thread" else "proc"   # unknown: a process per GPU
    return nccl.simulate(G, row["op"], int(row["bytes"]), ranks=gpus, algorithm=algorithm,
                         launch=launch)


def validate(rows):
    """Per row ``(row, result, error)``, with the median and worst absolute error.

    Examples
    --------
    >>> report, median, worst = validate(load()[:2])
    >>> len(report), median <= worst
    (2, True)
    """
    report = []
    for row in rows:
        res = predict(row)
        measured = float(row["time_us"]) * 1e-6
        report.append((row, res, (res.makespan - measured) / measured))
    return (report, *_spread(report))


def _spread(report):
    # The median and worst absolute error of a report of validate.
    errors = [abs(e) for _, _, e in report]
    return statistics.median(errors), max(errors)


def validated():
    """Every file of :data:`BLOCKS` validated once: file name -> :func:`validate`'s report.

    What :func:`table`, :func:`summary` and :func:`plot` take to share one prediction of
    each row (about a second a pass) instead of each predicting them again.

    Examples
    --------
    >>> reports = validated()
    >>> sorted(reports) == sorted(file for _, file in BLOCKS), len(reports[COUNTED])
    (True, 73)
    """
    return {file: validate(load(file))[0] for _, file in BLOCKS}


def _source(url):
    if "github.com/" in url:
        parts = url.split("github.com/")[1].split("/")
        if len(parts) >= 4 and parts[2] in ("issues", "pull"):
            return f"{parts[0]}/{parts[1]}#{parts[3]}"
        return f"{parts[0]}/{parts[1]}"
    return url.split("//")[1].split("/")[0]


def _origin(row):
    # The file a reported row came from, short: "main", "holdout", "ops" or "ops_holdout".
    short = row["origin"].removeprefix("nccl_measurements").removesuffix(".csv")
    return short.lstrip("_") or "main"


def table(rows, report=None):
    """The validation table: source, machine, size, measured and predicted time, error, plan.

    Rows of ``nccl_measurements_reported.csv`` (with an ``origin`` column) get a last
    column naming the file each came from. ``report``, if given, is :func:`validate`'s
    report of ``rows`` (from :func:`validated`), not computed again.

    Examples
    --------
    >>> print(table(load()[:1]).splitlines()[0])
    | machine | GPUs | size (B) | measured (us) | predicted (us) | error | NCCL plan | source |
    >>> print(table(load("nccl_measurements_reported.csv")[:1]).splitlines()[2][-42:])
    | tree/Simple/4 | NVIDIA/nccl#527 | main |
    """
    report = validate(rows)[0] if report is None else report
    median, worst = _spread(report)
    origin = any("origin" in row for row in rows)
    head = ("| machine | GPUs | size (B) | measured (us) | predicted (us) | error | NCCL plan "
            "| source |")
    lines = [head + (" from |" if origin else ""), "|---" * (9 if origin else 8) + "|"]
    for row, res, err in report:
        p = res.plan
        forced = " (forced)" if row["nccl_algo"] else ""
        lines.append(f"| {row['machine']} | {row['gpus']} | {int(row['bytes'])} | "
                     f"{float(row['time_us']):.1f} | {res.makespan * 1e6:.1f} | {err:+.1%} | "
                     f"{p.algorithm}{forced}/{p.protocol}/{p.channels} | "
                     f"{_source(row['source_url'])} |" + (f" {_origin(row)} |" if origin else ""))
    lines.append(f"\nmedian \\|error\\| {median:.1%}, worst {worst:.1%} over {len(report)} rows")
    return "\n".join(lines)


COUNTED = "nccl_measurements.csv"
"""The counted allreduce rows: the validation page's headline error is over this file."""

BLOCKS = (("nccl-table", COUNTED),
          ("nccl-holdout-table", "nccl_measurements_holdout.csv"),
          ("nccl-ops-table", "nccl_measurements_ops.csv"),
          ("nccl-ops-holdout-table", "nccl_measurements_ops_holdout.csv"),
          ("nccl-reported-table", "nccl_measurements_reported.csv"))
"""Marker name of a block of :data:`PAGE` -> the measurement file whose :func:`table` it holds."""


# Subsets of the counted rows the summary reports apart: (label, predicate on a row).
CLASSES = (
    ("below 1 MiB (latency-bound)", lambda r: int(r["bytes"]) < 2**20),
    ("1 MiB to below 128 MiB", lambda r: 2**20 <= int(r["bytes"]) < 2**27),
    ("128 MiB and above (bandwidth-bound)", lambda r: int(r["bytes"]) >= 2**27),
    ("one machine", lambda r: r["nodes"] == "1"),
    ("several machines", lambda r: r["nodes"] != "1"),
    ("one process per GPU (launch proc)", lambda r: r["launch"] == "proc"),
    ("one thread driving several GPUs (launch thread, -g N)", lambda r: r["launch"] == "thread"),
)
"""The subsets of :data:`COUNTED` whose errors :func:`summary` gives apart."""


def _figures(errors):
    within = [sum(e <= bound for e in errors) for bound in (0.10, 0.30)]
    return (f"median \\|error\\| {statistics.median(errors):.1%}, worst {max(errors):.1%} "
            f"over {len(errors)} rows ({within[0]} within 10 %, {within[1]} within 30 %)")


def summary(reports=None):
    r"""The validation page's figures: the counted rows' error, and every file's rows'.

    ``reports``: :func:`validated`'s, if already computed.

    Returns
    -------
    str
        Median and worst absolute error (and how many rows are within 10 % and 30 %)
        over :data:`COUNTED`, over each subset of :data:`CLASSES` of the counted rows,
        then over every row of the files of :data:`BLOCKS` (hold-outs, other ops and the
        reported rows included).

    Examples
    --------
    >>> first = summary().splitlines()[0]
    >>> first.startswith("- counted rows (nccl_measurements.csv): median"), "over 73 rows" in first
    (True, True)
    """
    reports = validated() if reports is None else reports
    report = reports[COUNTED]
    every = [checked for _, file in BLOCKS for checked in reports[file]]
    lines = [f"- counted rows ({COUNTED}): {_figures([abs(e) for _, _, e in report])}"]
    for label, keep in CLASSES:
        errors = [abs(e) for row, _, e in report if keep(row)]
        if errors:
            lines.append(f"  - {label}: {_figures(errors)}")
    from studies.validation.gloo import load as load_gloo, validate as validate_gloo

    gloo = [abs(e) for row, _, e in validate_gloo(load_gloo()) if not row["problem"]]
    lines.append(f"- the counted rows and the counted gloo rows ({len(gloo)}, "
                 f"gloo_measurements.csv): {_figures([abs(e) for _, _, e in report] + gloo)}")
    lines.append(f"- all rows of the {len(BLOCKS)} files, the reported ones included: "
                 f"{_figures([abs(e) for _, _, e in every])}")
    return "\n".join(lines)


VALIDATED = (3, 0.15)
"""A machine is validated when at least ``VALIDATED[0]`` counted rows of it (any operation)
have a median \\|error\\| of at most ``VALIDATED[1]`` (issue 44's acceptance)."""

COUNTED_FILES = (COUNTED, "nccl_measurements_ops.csv")


def by_machine(reports=None):
    r"""Per machine key, the counted rows' median and worst error and whether it is validated.

    The counted rows are those of :data:`COUNTED` and of the counted file of other
    operations; a machine is validated by :data:`VALIDATED`. ``reports``: :func:`validated`'s.

    Examples
    --------
    >>> print(by_machine().splitlines()[0])
    | machine | counted rows | median \|error\| | worst \|error\| | validated (>= 3 rows, median <= 15 %) |
    """
    reports = validated() if reports is None else reports
    errors = {}
    for file in COUNTED_FILES:
        for row, _, err in reports[file]:
            errors.setdefault(row["machine"], []).append(abs(err))
    lines = ["| machine | counted rows | median \\|error\\| | worst \\|error\\| "
             "| validated (>= 3 rows, median <= 15 %) |", "|---|---|---|---|---|"]
    for key in sorted(errors):
        errs, (least, bound) = errors[key], VALIDATED
        ok = len(errs) >= least and statistics.median(errs) <= bound
        lines.append(f"| {key} | {len(errs)} | {statistics.median(errs):.1%} | {max(errs):.1%} "
                     f"| {'yes' if ok else 'no'} |")
    return "\n".join(lines)


FIGURE = "nccl_validation.png"
"""The validation page's figure (under ``docs/``), drawn by :func:`plot`."""


def plot(path, title="netsim's NCCL model against published nccl-tests runs", reports=None):
    """PNG of predicted against measured time, one point per measured row, by machine.

    Log-log, with the line y = x (no error) and the band within 30 % of it. Every
    point is one row of the files of :data:`BLOCKS` and its :func:`predict`: the
    counted, hold-out and other-op rows filled, the rows their sources report as a
    problem hollow. Nothing is fitted and no curve joins the points.

    Parameters
    ----------
    path : str or path-like
    title : str, optional
    reports : dict, optional
        :func:`validated`'s, if already computed.

    Returns
    -------
    matplotlib.figure.Figure
        The figure, already written.

    Examples
    --------
    >>> import os, tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), "v.png")
    >>> fig = plot(path)
    >>> os.path.getsize(path) > 0, fig.axes[0].get_xscale(), fig.axes[0].get_yscale()
    (True, 'log', 'log')
    """
    from matplotlib.figure import Figure  # no pyplot: the session's backend stays as it is
    from matplotlib.lines import Line2D

    from netsim.drawing.plot import MARKERS, label_log_axis

    reports = validated() if reports is None else reports
    points = []  # (machine, measured us, predicted us, reported as a problem)
    for _, file in BLOCKS:
        for row, res, _ in reports[file]:
            points.append((row["machine"], float(row["time_us"]), res.makespan * 1e6,
                           "origin" in row))
    machines = sorted({p[0] for p in points})
    fig = Figure(figsize=(7.5, 8.0), layout="constrained")
    ax = fig.add_subplot()
    xs = np.array([p[1] for p in points] + [p[2] for p in points])
    lo, hi = xs.min() / 1.6, xs.max() * 1.6
    line = np.geomspace(lo, hi, 50)
    ax.fill_between(line, line * 0.7, line * 1.3, color="0.88", lw=0, zorder=0,
                    label="within 30 % of the measured time")
    ax.plot(line, line, color="black", lw=0.9, zorder=1, label="predicted = measured")
    import matplotlib

    colors = matplotlib.colormaps["tab10"]
    for k, name in enumerate(machines):
        # colour and marker each cycle over 10; the marker moves on by one every round, so
        # no two machines share both
        style = dict(marker=MARKERS[(k + k // 10) % len(MARKERS)], color=colors(k % 10),
                     ms=6, ls="")
        labelled = False
        for problem in (False, True):
            mine = [p for p in points if p[0] == name and p[3] == problem]
            if mine:
                ax.plot([p[1] for p in mine], [p[2] for p in mine], zorder=3, alpha=0.9,
                        mfc="none" if problem else style["color"], mew=1.2, **style,
                        label=None if labelled else name)
                labelled = True
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlim(lo, hi)
    ax.set_ylim(lo, hi)
    ax.set_aspect("equal")
    label_log_axis(ax.xaxis)
    label_log_axis(ax.yaxis)
    ax.set_xlabel("measured time (us), published nccl-tests row")
    ax.set_ylabel("predicted time (us), netsim.nccl.simulate")
    ax.grid(True, which="major", alpha=0.3)
    counted = sum(1 for p in points if not p[3])
    ax.set_title(f"{title}\n{counted} rows (filled) and {len(points) - counted} rows their "
                 "sources report as a problem (hollow, not counted)", fontsize=9)
    hollow = Line2D([], [], marker="o", ls="", color="gray", mfc="none", mew=1.2,
                    label="hollow: reported as a problem")
    handles, _ = ax.get_legend_handles_labels()
    fig.legend(handles=handles + [hollow], loc="outside lower center", ncol=4, fontsize=7.5,
               frameon=False)
    fig.savefig(path, format="png", dpi=100, bbox_inches="tight", pad_inches=0.15)
    return fig


if __name__ == "__main__":
    checked = validated()
    for _, file in BLOCKS:
        print(f"{file}\n\n{table(load(file), checked[file])}\n")
    print(summary(checked))
