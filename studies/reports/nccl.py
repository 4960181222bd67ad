"""NCCL-library runs for ``netsim collective --library nccl``: size sweeps, tables, plots, measurements.

:func:`sweep` runs :func:`netsim.nccl.simulate` over a list of sizes and
returns one flat record per size; :mod:`studies.reports.nccl_tests` prints them
in nccl-tests' layout and :func:`format_sweep` NCCL's plan (algorithm,
protocol, channels) beside it; :func:`plot_busbw` draws busbw against size beside the
published measurements of the same machine (:func:`measured_rows`).

The published measurements are package data of :mod:`studies`
(``studies/data/nccl_measurements.csv``: allreduce, ``nccl_measurements_ops.csv``:
other operations, each with a ``_holdout`` file kept aside, and
``nccl_measurements_reported.csv``: rows their sources report as problems, shown but not
counted; sources and inclusion rule in ``nccl_measurements.md``), so an installed
``netsim`` reads them too; :func:`measurements` loads one file.
"""

import csv
import io
from importlib import resources
from types import MappingProxyType

from netsim.errors import NetsimError, UnitError
from netsim.units import parse_bytes

__all__ = ["MEASURED_MACHINES", "SHOWN_FILES", "measurements", "parse_sizes", "measured_rows", "sweep",
           "format_sweep", "plot_busbw"]

MEASURED_MACHINES = MappingProxyType({
    "dgx1_v100": ("V100", None),
    "a100_nvswitch": ("A100", None),
    "h100_nvswitch": ("H100", None),
    "pcie_4090": ("RTX4090", None),
    "h20_nvswitch": ("H20", None),
    "p4dn_efa": ("A100", "EFA"),
    "p4de_efa": ("A100", "EFA"),
    "h100_ndr": ("H100", "NDR"),
    "h20_ndr": ("H20", "NDR"),
    "a100_roce": ("A100", "RoCE-200G"),
    "h100_roce": ("H100", "RoCE-400G"),
    "h100_efa": ("H100", "EFA"),
    "a100_hdr": ("A100", "HDR"),
    "gb200_nvl72": ("GB200", None),
    "b200_nvswitch": ("B200", None),
    "b200_roce": ("B200", "RoCE-400G"),
    "h200_roce": ("H200", "RoCE-400G"),
})
"""Machine key of the measurement files -> (GPU ``model``, network technology or None for
one machine): how a graph is matched to its measured rows. The technology is the one of the
NICs of the key's graph (``studies.validation.nccl.machine``): OCI's 16 x 100 Gb/s and 16 x
200 Gb/s RoCE are built as 8 rails of RoCE-200G and RoCE-400G; p4d and p5 have EFA."""

SHOWN_FILES = ("nccl_measurements.csv", "nccl_measurements_ops.csv")
"""The files :func:`measured_rows` draws from: the counted ones (the hold-out files and
``nccl_measurements_reported.csv``, rows their sources report as problems, are never shown)."""


def measurements(name="nccl_measurements.csv"):
    """Rows of a published-measurement file of the package, as dicts of strings.

    Parameters
    ----------
    name : str, optional
        ``"nccl_measurements.csv"`` (default), ``"nccl_measurements_ops.csv"``,
        either's ``_holdout`` file, or ``"nccl_measurements_reported.csv"``.

    Returns
    -------
    list of dict

    Examples
    --------
    >>> rows = measurements()
    >>> rows[0]["machine"], rows[0]["source_url"].startswith("https://")
    ('dgx1_v100', True)
    """
    text = resources.files("studies").joinpath("data", name).read_text(encoding="utf-8")
    return list(csv.DictReader(io.StringIO(text)))


def parse_sizes(text, factor=2):
    """``LO..HI`` (every size from LO multiplying by ``factor`` up to HI), or ``A,B,...``.

    Parameters
    ----------
    text : str
        Human sizes (``8B..16GiB``, ``1MB,1GB``).
    factor : int, optional
        Ratio of consecutive sizes of a range, >= 2 (nccl-tests' ``-f``).

    Returns
    -------
    list of int

    Raises
    ------
    NetsimError
        For a size that does not parse or is below 1 byte (a range from 0 would
        never end), or LO > HI.

    Examples
    --------
    >>> parse_sizes("8B..64B")
    [8, 16, 32, 64]
    >>> parse_sizes("1KiB,1MiB")
    [1024, 1048576]
    """
    if isinstance(factor, bool) or not isinstance(factor, int) or factor < 2:
        raise NetsimError(f"--factor must be an integer >= 2, got {factor!r}")
    lo, dots, hi = text.partition("..")
    try:
        if not dots:
            sizes = [parse_bytes(s.strip()) for s in text.split(",")]
        else:
            lo, hi = parse_bytes(lo.strip()), parse_bytes(hi.strip())
            if lo > hi:
                raise NetsimError(f"--sizes {text!r}: the first size is above the last")
            if lo < 1:  # 0 times the factor stays 0: the range never ended
                raise NetsimError(f"--sizes {text!r}: sizes must be >= 1 byte, got {lo:g}")
            sizes = [lo]
            while sizes[-1] * factor <= hi:
                sizes.append(sizes[-1] * factor)
    except UnitError as exc:
        raise NetsimError(f"--sizes {text!r}: {exc}") from None
    sizes = [int(s) for s in sizes]
    if min(sizes) < 1:
        raise NetsimError(f"--sizes {text!r}: sizes must be >= 1 byte")
    return sizes


def _network(G):
    techs = {d.get("technology") for u, v, d in G.edges(data=True)
             if {G.nodes[u].get("kind"), G.nodes[v].get("kind")} == {"nic", "switch"}}
    return techs.pop() if len(techs) == 1 else None


def measured_rows(G, op, ranks, rows=None):
    """The published rows of this machine, op and rank count (see :data:`MEASURED_MACHINES`).

    A graph matches a machine key when its first rank's GPU ``model`` is the
    key's, the machine count (``node`` of the ranks) is the row's ``nodes``,
    and, across machines, its NICs are the key's technology.

    Parameters
    ----------
    G : networkx.Graph
    op : str
        The operation (``"allreduce"``, ...).
    ranks : list
        The gpu node of each rank.
    rows : list of dict, optional
        Default: the rows of :data:`SHOWN_FILES`.

    Returns
    -------
    list of dict
        Sorted by size.

    Examples
    --------
    >>> from topologies import dgx_h100
    >>> G = dgx_h100()
    >>> [int(r["bytes"]) for r in measured_rows(G, "allreduce", list(G)[:8])][:2]
    [134217728, 536870912]
    """
    rows = [r for name in SHOWN_FILES for r in measurements(name)] if rows is None else rows
    model = G.nodes[ranks[0]].get("model")
    machines = len({G.nodes[r].get("node", 0) for r in ranks})
    net = _network(G) if machines > 1 else None
    keys = {k for k, (m, n) in MEASURED_MACHINES.items() if m == model and n == net}
    hit = [r for r in rows if r["machine"] in keys and r["op"] == op
           and int(r["gpus"]) == len(ranks) and int(r["nodes"]) == machines]
    return sorted(hit, key=lambda r: int(r["bytes"]))


def sweep(G, op, sizes, ranks=None, algorithm=None, protocol=None, channels=None):
    """One :func:`netsim.nccl.simulate` per size: flat records, nccl-tests' columns.

    Parameters
    ----------
    G : networkx.Graph
    op : str
    sizes : list of int
    ranks, algorithm, protocol, channels : optional
        As for :func:`netsim.nccl.simulate` (None: NCCL's choice).

    Returns
    -------
    list of dict
        ``bytes``, ``time`` (s), ``algbw`` and ``busbw`` (bytes/s), ``algorithm``,
        ``protocol``, ``channels``, ``ranks``, ``nodes``.

    Examples
    --------
    >>> from topologies import dgx_h100
    >>> rec = sweep(dgx_h100(), "allreduce", [2**30])[0]
    >>> rec["algorithm"], rec["protocol"], rec["channels"]
    ('nvls', 'Simple', 8)
    """
    from netsim import nccl

    out = []
    for n in sizes:
        r = nccl.simulate(G, op, n, ranks=ranks, algorithm=algorithm, protocol=protocol,
                          channels=channels)
        p = r.plan
        out.append({"bytes": int(n), "time": float(r.makespan), "algbw": float(p.algbw),
                    "busbw": float(p.busbw), "algorithm": p.algorithm, "protocol": p.protocol,
                    "channels": int(p.channels), "ranks": int(p.ranks), "nodes": int(p.nodes)})
    return out


def format_sweep(records, measured=()):
    """NCCL's plan of each :func:`sweep` record, with the measured busbw where known.

    The columns nccl-tests does not print (its own are
    :func:`studies.reports.nccl_tests.table`'s): size in bytes, then the algorithm,
    protocol and channels NCCL's model chose.

    Parameters
    ----------
    records : list of dict
    measured : list of dict, optional
        Rows of :func:`measured_rows`; a ``measured busbw (GB/s)`` column is added
        when one has the size of a record.

    Returns
    -------
    str

    Examples
    --------
    >>> rec = [{"bytes": 8, "algorithm": "ring", "protocol": "LL", "channels": 2}]
    >>> print(format_sweep(rec))
    #  size (B)  algorithm  protocol  channels
              8       ring        LL         2
    """
    by_size = {int(r["bytes"]): float(r["busbw_GBps"]) for r in measured}
    headers = ["size (B)", "algorithm", "protocol", "channels"]
    show = any(r["bytes"] in by_size for r in records)
    if show:
        headers.append("measured busbw (GB/s)")
    rows = []
    for r in records:
        row = [str(r["bytes"]), r["algorithm"], r["protocol"], str(r["channels"])]
        if show:
            row.append(f"{by_size[r['bytes']]:.2f}" if r["bytes"] in by_size else "-")
        rows.append(row)
    widths = [max([len(h)] + [len(row[i]) for row in rows]) for i, h in enumerate(headers)]
    lines = ["#  " + "  ".join(h.rjust(w) for h, w in zip(headers, widths))]
    lines += ["   " + "  ".join(v.rjust(w) for v, w in zip(row, widths)) for row in rows]
    return "\n".join(lines)


def _runs(points, step):
    """Split (size, value) points, sorted by size, where the next size is more than ``step``
    times the last: each run is drawn as one line, so no line crosses a size not computed."""
    runs = []
    for size, value in sorted(points):
        if runs and size <= runs[-1][-1][0] * step * (1 + 1e-9):
            runs[-1].append((size, value))
        else:
            runs.append([(size, value)])
    return runs


def _source(row):
    """A short name of a measured row's source: the host and owner of its URL, and its
    NCCL version when the row names one."""
    parts = row.get("source_url", "").split("/")
    name = "/".join(parts[2:4]) if len(parts) > 3 else row.get("source_url", "")
    return name + (f", NCCL {row['nccl_version']}" if row.get("nccl_version") else "")


def _binary_size(x, _pos=None):
    """A tick label of a power-of-two size axis: ``8 B``, ``64 KiB``, ``1 GiB``."""
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if x < 1024 or unit == "TiB":
            return f"{x:g} {unit}"
        x /= 1024


def plot_busbw(records, measured, path, title="", step=2):
    """PNG of busbw against size: the model's line and the measured points.

    The model is drawn as markers at the sizes it computed, joined only between
    neighbouring sizes (at most ``step`` times apart); each published source as
    its own markers, joined only between sizes it measured ``step`` apart
    (nccl-tests' default ``-f 2``), so no line crosses a size nobody computed or
    measured.

    Parameters
    ----------
    records : list of dict
        :func:`sweep` records.
    measured : list of dict
        :func:`measured_rows` rows (may be empty).
    path : str or path-like
    title : str, optional
    step : int, optional
        Ratio of neighbouring sizes of the sweep (the ``--factor``, default 2).

    Returns
    -------
    str
        The path written.

    Examples
    --------
    >>> import os, tempfile
    >>> rec = [{"bytes": 2**k, "busbw": 1e9 * k} for k in (10, 20)]
    >>> path = os.path.join(tempfile.mkdtemp(), "b.png")
    >>> plot_busbw(rec, [], path) == path and os.path.getsize(path) > 0
    True
    """
    from matplotlib.figure import Figure  # no pyplot: the session's backend stays as it is

    fig = Figure(figsize=(7.5, 4.5), layout="constrained")
    ax = fig.add_subplot()
    model = [(r["bytes"], r["busbw"] / 1e9) for r in records]
    for i, run in enumerate(_runs(model, step)):
        ax.plot(*zip(*run), "o-", ms=4, color="C0", zorder=4,  # over the measured squares
                label="netsim NCCL model" if i == 0 else None)
    sources = {}
    for r in measured:
        sources.setdefault(_source(r), []).append((int(r["bytes"]), float(r["busbw_GBps"])))
    for k, (name, points) in enumerate(sources.items()):
        style = dict(marker="sD^vP*X"[k % 7], lw=0.8, ms=7, color="black",
                     mfc="black" if k == 0 else "none")
        runs = _runs(points, 2)
        for run in runs:
            ax.plot(*zip(*run), ls="-", zorder=3, **style)
        # the legend shows a line only when some of the source's points are joined
        ax.plot([], [], ls="-" if max(map(len, runs)) > 1 else "", **style,
                label=f"published nccl-tests: {name}")
    from matplotlib.ticker import FuncFormatter, LogLocator

    ax.set_xscale("log", base=2)
    ax.xaxis.set_major_locator(LogLocator(base=8))  # every third power of two: 8 B, 64 B, ...
    ax.xaxis.set_major_formatter(FuncFormatter(_binary_size))
    ax.set_xlabel("size")
    ax.set_ylabel("bus bandwidth (GB/s)")
    ax.set_title(title, fontsize=9)
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=7.5, loc="upper left")
    # PATH as given: no ".png" appended
    fig.savefig(path, format="png", dpi=100, bbox_inches="tight", pad_inches=0.15)
    return str(path)
