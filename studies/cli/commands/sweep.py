"""``netsim sweep``: a grid of topologies x collectives or paradigms x P x sizes, on Dask.

The grid is a config file (:mod:`studies.sweep.config`); the points run in
parallel (:func:`studies.sweep.run.run_sweep`) and the output is resumable.
"""

import json
import os
import re

from netsim.errors import NetsimError
from netsim.units import format_bytes, format_time, parse_shape

from studies.cli.console import check_not_read, check_png, check_writable, log, progress, write
from studies.cli.options import add_force_argument, perturb_label
from studies.scaling.paradigm import check_sweep_point, sweep_point
from studies.reports.text import table
from studies.scaling.run_length import check_training
from studies.sweep.run import plot_sweep, read_rows, run_sweep
from studies.sweep.config import load_config, point_key, sweep_points
from studies.scaling.trace_size import check_fits, check_ops, message_count

HELP = ("a grid of topologies x collectives or paradigms x P x sizes, in parallel on Dask, "
        "to one resumable CSV")
"""One line for ``netsim --help``."""


def add_arguments(p):
    """Add the command's arguments to ``p``, its ``argparse`` parser.

    Parameters
    ----------
    p : argparse.ArgumentParser

    Examples
    --------
    >>> import argparse
    >>> p = argparse.ArgumentParser(); add_arguments(p)
    >>> p.parse_args(["grid.yaml", "-j", "2"]).jobs
    2
    """
    p.add_argument("config", metavar="CONFIG.yaml",
                   help="the grid: topologies x collectives (with bytes) or paradigms (with "
                        "hidden) x P; see docs/howto/sweep.md for a "
                        "sample")
    p.add_argument("-o", "--output", metavar="FILE.csv",
                   help="results, one row per point (default: the config's output, else "
                        "CONFIG.csv); points already in it are skipped")
    p.add_argument("--scheduler", metavar="tcp://HOST:PORT",
                   help="run on this Dask scheduler (started with `dask scheduler`) instead of "
                        "a local cluster")
    p.add_argument("--jobs", "-j", type=int, default=None,
                   help="local Dask workers (default: the machine's cores)")
    p.add_argument("--threads", action="store_true",
                   help="local workers as threads of this process, not processes (quicker start)")
    p.add_argument("--timeout", type=float, default=10.0,
                   help="seconds to wait for --scheduler (default 10)")
    p.add_argument("--png", metavar="FILE",
                   help="plot of time per iteration vs P (default: the config's png, else "
                        "the output's name with .png)")
    p.add_argument("--json", action="store_true", help="print the run's counts as JSON")
    add_force_argument(p)


_ADDRESS = re.compile(r"^([a-z]+://)?(\[[0-9a-fA-F:]+\]|[^\s/:\[\]]+):\d{1,5}$")
"""A Dask scheduler's address: ``[PROTOCOL://]HOST:PORT`` (``tcp://10.0.0.1:8786``)."""


def _check_cluster_options(args):
    """--scheduler, --jobs, --threads and --timeout: each only where it applies, each valid."""
    from netsim.checks import check_real

    if args.jobs is not None and args.jobs < 1:
        raise NetsimError(f"--jobs must be >= 1, got {args.jobs}")
    if args.scheduler is None:
        if args.timeout != 10.0:
            raise NetsimError("--timeout applies with --scheduler (the wait for it)")
        return
    if not _ADDRESS.match(args.scheduler):
        raise NetsimError(f"--scheduler {args.scheduler!r} is not a scheduler's address, "
                          f"tcp://HOST:PORT")
    for flag, given in (("--jobs", args.jobs is not None), ("--threads", args.threads)):
        if given:
            raise NetsimError(f"{flag} starts a local cluster; --scheduler runs on its own "
                              f"workers: give one")
    check_real(args.timeout, "--timeout", lo=0, strict=True)


def _check_grid(config):
    """Refuse a grid whose collective points together would replay too long.

    Each point is priced alone by :func:`studies.scaling.trace_size.check_fits` (its memory, its time);
    here the messages of every collective point on a topology are summed (LP at one segment:
    a lower bound) and priced as one replay's time on its largest P
    (:func:`studies.scaling.trace_size.check_ops`; points run one after another, so their memory is
    not summed). A 2,998-point grid of ring allreduces at P = 2..2999 passed every point's
    check and ran until killed.
    """
    points = [p for p in sweep_points(config) if p["kind"] == "collective"]
    for spec in config["topologies"]:
        on = [p for p in points if p["topology"] == spec]
        if len(on) < 2:
            continue
        total = 0
        for p in on:
            opts = config["options"].get(p["name"], {})
            total += message_count(p["name"], p["P"], segments=opts.get("segments", 1),
                                   servers=opts.get("servers", 1))
        check_ops(total, f"the sweep's {len(on)} collective points on {spec}", "messages",
                  "fewer points", limit=float("inf"), topology=spec,
                  ranks=max(p["P"] for p in on))


def run(args):
    """Run the command on its parsed arguments: the report on stdout, notes on stderr.

    Parameters
    ----------
    args : argparse.Namespace
        Parsed by the parser :func:`add_arguments` filled (``quiet`` is read if present).

    Notes
    -----
    It starts a Dask cluster; ``tests/test_sweep.py`` runs it on a small grid.
    """
    _check_cluster_options(args)
    config = load_config(args.config)
    output = args.output or config["output"]
    png = args.png or config.get("png") or os.path.splitext(output)[0] + ".png"
    check_writable(output)
    check_png(png)
    check_not_read({"the output": output, "the png": png},
                   [args.config] + [t for t in config["topologies"] if os.path.isfile(t)])
    if not args.force:  # every collective at the largest P, before the cluster starts
        # the training each paradigm point does (epochs, layer widths) before it is recorded
        runs = sum(p["kind"] == "paradigm" for p in sweep_points(config))
        if runs:
            check_training({"epochs": config["epochs"]}, runs=runs)
            for hidden in filter(None, config["hidden"]):
                check_training({"hidden": parse_shape(hidden, "hidden")},
                               workers=max(config["P"]))
        # every trace's memory first, then on each topology with the replay's time
        for spec in [None] + config["topologies"]:
            for name in config["collectives"]:
                opts = config["options"].get(name, {})
                check_fits(name, max(config["P"]), segments=opts.get("segments", 1),
                           servers=opts.get("servers", 1), topology=spec)
        _check_grid(config)
        largest = max(config["P"])  # each paradigm point at the largest P, recorded small
        checked = set()
        for point in sweep_points(config):
            # a straggler, jitter or library changes the replay, not the size: one check each
            key = (point["name"], point["hidden"], point["topology"], point["options"] and
                   json.dumps({k: v for k, v in json.loads(point["options"]).items()
                               if k not in ("straggler", "jitter", "library")}, sort_keys=True))
            if point["kind"] == "paradigm" and point["P"] == largest and key not in checked:
                checked.add(key)
                check_sweep_point(point, point["topology"])
    keys = {point_key(p) for p in sweep_points(config)}
    runners = {"paradigm": sweep_point} if config["paradigms"] else {}
    with progress(args, len(keys), "sweep", unit="point") as bar:
        counts = run_sweep(config, output, scheduler=args.scheduler, jobs=args.jobs,
                           processes=not args.threads, timeout=args.timeout, progress=bar,
                           log=lambda line: log(args, line), runners=runners)
    rows = [r for r in read_rows(output) if point_key(r) in keys]
    write(png, lambda f: plot_sweep(rows, f, title=f"sweep {os.path.basename(args.config)}"),
           binary=True)
    counts["png"] = png
    if args.json:
        print(json.dumps(counts))
        return

    def size(r):
        if r["kind"] == "collective":
            return format_bytes(float(r["nbytes"]))
        extra = perturb_label(json.loads(r["options"])) if r.get("options") else ""
        return ", ".join(x for x in (f"hidden {r['hidden']}" if r["hidden"] else "", extra)
                         if x) or "-"

    def seconds(text):
        return format_time(float(text)) if text else "-"

    print(table(["kind", "name", "topology", "P", "size", "simulated", "closed form", "gap",
                 "top link", "saturated"],
                [(r["kind"], r["name"], r["topology"], int(r["P"]), size(r),
                  seconds(r["simulated"]) if not r["error"] else "error",
                  seconds(r["closed_form"]), f"{float(r['gap']):+.2%}" if r["gap"] else "-",
                  r["top_link"] or "-",
                  f"{float(r['saturated_fraction']):.0%}" if r["saturated_fraction"] else "-")
                 for r in rows]))
    failed = [r for r in rows if r["error"]]
    if failed:
        print("\nerrors (in the error column of the output):")
        for r in failed:
            print(f"  {r['name']} {size(r)} P={r['P']} on {r['topology']}: {r['error']}")
    print(f"\n{counts['points']} points: {counts['ran']} simulated now, {counts['skipped']} "
          f"already in {output}, {len(failed)} with errors; wrote {output} and {png}")
