"""``netsim overlap``: time per iteration against P with communication hidden behind compute.

:func:`studies.scaling.overlap.overlap_study`: ring-allreduce data parallelism on an
Ethernet star, the gradient sent fused (``none``), per layer (``layerwise``), in
PyTorch DDP buckets (``bucketed``) or in partitions with P3 priorities replayed
with strict-priority sharing (``priority``), each next to the closed form of the
communication it leaves exposed.
"""

import json

from netsim.errors import NetsimError
from netsim.units import format_time, parse_bytes, parse_workers
from workloads.errors import WorkloadError
from workloads.models import get_model
from workloads.option_ranges import check_option
from workloads.overlap import DDP_BUCKET_BYTES, OVERLAP, pieces

from studies.cli.console import (check_not_read, check_options, check_png, check_writable,
                                 expect, log, progress, write, write_csv)
from studies.cli.options import add_force_argument, add_library_argument
from studies.scaling.overlap import PARTITION_BYTES, overlap_study, plot_overlap
from studies.reports.text import table
from studies.scaling.trace_size import (MESSAGE_SECONDS, PRIORITY_MESSAGE_SECONDS, TIME_LIMIT,
                                         check_ops, message_count)

HELP = ("overlap study: time per iteration against P for no overlap, layer-wise, DDP buckets "
        "and partitions with priorities, next to closed forms")
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
    >>> a = p.parse_args(["--models", "resnet50", "-P", "2,4"])
    >>> a.models, a.workers, a.modes
    ('resnet50', '2,4', 'none,layerwise,bucketed,priority')
    """
    p.description = (
        "Synchronous data parallelism with a ring allreduce on an Ethernet star, for each way "
        "the gradient may leave during the backward pass: none (one fused allreduce after the "
        "whole backward), layerwise (one allreduce per layer as soon as its backward op ends), "
        "bucketed (PyTorch DDP buckets, default 25 MiB) and priority (per-layer tensors cut "
        "into --partition chunks, the first layer's most urgent, replayed with strict-priority "
        "link sharing, as P3 and ByteScheduler). The next forward op of a layer waits only for "
        "that layer's parameters. Each row: simulated time per iteration, compute, exposed "
        "communication, the closed form of the exposed part (pieces one after the other at "
        "the ring allreduce closed form), and the speed-up over none. Weak scaling: the batch "
        "per worker is fixed.")
    p.add_argument("--models", default="resnet50,bert-large",
                   help="comma-separated model names (default resnet50,bert-large)")
    p.add_argument("--networks", default="10GbE,100GbE",
                   help="comma-separated Ethernet speeds of the star (default 10GbE,100GbE)")
    p.add_argument("--workers", "-P", default="2..8",
                   help="worker counts: A..B (powers of two) or a list (default 2..8)")
    p.add_argument("--modes", default=",".join(OVERLAP),
                   help="comma-separated overlap modes (default: " + ",".join(OVERLAP) + ")")
    p.add_argument("--batch-size", type=int, default=32, help="samples per worker (default 32)")
    p.add_argument("--partition", default=f"{PARTITION_BYTES:g}B",
                   help="chunk size of the priority mode (default 4MB)")
    p.add_argument("--bucket", default=f"{DDP_BUCKET_BYTES}B",
                   help="bucket size of the bucketed mode (default 25 MiB, PyTorch DDP's)")
    p.add_argument("--iterations", type=int, default=2,
                   help="iterations simulated; the last one is reported (default 2)")
    p.add_argument("--csv", default=None, help="write the records as CSV")
    add_force_argument(p)
    p.add_argument("--png", default=None, help="plot time per iteration against P")
    add_library_argument(p)
    p.add_argument("--json", action="store_true", help="print the records as JSON")


def piece_count(model, mode, bucket_bytes, partition_bytes):
    """Pieces a model's gradient is sent in by ``mode``, each a ring allreduce, counted
    without cutting them: :func:`workloads.overlap.pieces`' units, and in the ``priority``
    mode each unit in chunks of ``partition_bytes`` (whole float32 values, at least one).

    Examples
    --------
    >>> piece_count("resnet50", "none", 25 * 2**20, 4e6)
    1
    >>> piece_count("resnet50", "priority", 25 * 2**20, 1) == get_model("resnet50").params
    True
    """
    if mode != "priority":
        return len(pieces(get_model(model), mode, 4.0, bucket_bytes).lo)
    units = pieces(get_model(model), "layerwise", 4.0).values
    chunk = max(1, int(partition_bytes // 4))
    return int(sum(-(-int(v) // chunk) for v in units.tolist()))


def run(args):
    """Run the study of the parsed ``args`` and print its table (or JSON).

    Parameters
    ----------
    args : argparse.Namespace
        Parsed by the parser :func:`add_arguments` filled.

    Notes
    -----
    ``tests/test_overlap_study.py`` runs it on one model, network and P.
    """
    check_options(args, batch_size=(1, None), iterations=(1, None))
    check_png(args.png)
    check_writable(args.csv)
    check_not_read({"--csv": args.csv, "--png": args.png}, [])
    split = lambda s: [x.strip() for x in s.split(",") if x.strip()]
    for flag in ("models", "networks", "modes"):
        names = split(getattr(args, flag))
        if not names:
            raise NetsimError(f"--{flag} {getattr(args, flag)!r} names none; give at least one")
        twice = next((n for i, n in enumerate(names) if n in names[:i]), None)
        if twice is not None:  # the same runs again, rows repeated
            raise NetsimError(f"--{flag} names {twice} twice; give each once")
    for flag, mode, default in (("partition", "priority", f"{PARTITION_BYTES:g}B"),
                                ("bucket", "bucketed", f"{DDP_BUCKET_BYTES}B")):
        if getattr(args, flag) != default and mode not in split(args.modes):
            raise NetsimError(f"--{flag} applies to the {mode} mode, which --modes leaves out")
    workers = parse_workers(args.workers)
    runs = len(split(args.models)) * len(split(args.networks)) * len(workers) * len(
        split(args.modes))
    partition, bucket = parse_bytes(args.partition), parse_bytes(args.bucket)
    for flag, key, value in (("partition", "partition_bytes", partition),
                             ("bucket", "bucket_bytes", bucket)):
        try:  # the workload's own range, before pricing: a 0-byte piece would price nonsense
            check_option(key, value)
        except WorkloadError as exc:
            raise NetsimError(f"--{flag} {getattr(args, flag)}: {exc}") from None
    if not args.force:  # each piece of each iteration is a ring allreduce on a star
        # a model's pieces in each mode: counted, not cut (a 1-byte partition is 10^8 pieces)
        per_run = {(name, mode): piece_count(name, mode, bucket, partition)
                   for name in split(args.models) for mode in split(args.modes)}
        worst = max(per_run, key=per_run.get)
        seconds = 0.0
        for P in workers:  # one run's trace in memory; the time of every run at this P
            ring = args.iterations * message_count("ring", P)
            check_ops(per_run[worst] * ring, f"overlap at P = {P} ({worst[0]}, {worst[1]}: "
                      f"{per_run[worst]:.3g} pieces an iteration, a ring allreduce each, "
                      f"{args.iterations} iterations)", "messages",
                      "a smaller P, fewer --iterations or larger pieces")
            count = sum(per_run.values()) * len(split(args.networks))
            seconds += check_ops(count * ring, f"overlap at P = {P} ({count:.3g} pieces an "
                                 f"iteration over its runs, {args.iterations} iterations, a "
                                 f"ring allreduce each)", "messages", "a smaller P, fewer "
                                 "--iterations or larger pieces", limit=float("inf"),
                                 topology="star", ranks=P,
                                 pairs=count * P)["seconds"]
            # strict-priority sharing costs more per message than max-min's batch path
            urgent = sum(n for (_, mode), n in per_run.items() if mode == "priority")
            seconds += (urgent * len(split(args.networks)) * ring
                        * (PRIORITY_MESSAGE_SECONDS - MESSAGE_SECONDS))
        if seconds > TIME_LIMIT:
            raise NetsimError(f"overlap of {runs} runs would take about {seconds:.3g} s of CPU, "
                              f"over the {TIME_LIMIT:.0f} s allowed (a priority piece's message "
                              f"at {PRIORITY_MESSAGE_SECONDS * 1e6:g} us, benchmarks/README.md); "
                              f"use a smaller P, fewer --iterations or larger pieces, or --force "
                              f"to try anyway")
        expect(args, seconds, f"overlap of {runs} runs")
    with progress(args, runs, "overlap", unit="run") as bar:  # 17-60 s showed nothing
        records = overlap_study(models=split(args.models), networks=split(args.networks),
                                workers=workers, modes=split(args.modes),
                                batch_size=args.batch_size,
                                partition_bytes=partition, bucket_bytes=bucket,
                                iterations=args.iterations, library=args.library, progress=bar)
    if args.csv:
        write_csv(args.csv, records)
    if args.png:
        write(args.png, lambda f: plot_overlap(records, f), binary=True)
    if args.json:
        print(json.dumps(records))
        return
    rows = [(r["model"], r["network"], r["P"], r["overlap"], format_time(r["time"]),
             format_time(r["compute"]), format_time(r["exposed"]),
             format_time(r["closed_exposed"]),
             "-" if r["speedup"] is None else f"{r['speedup']:.3f}") for r in records]
    print(table(["model", "network", "P", "overlap", "time/iter", "compute", "exposed",
                 "closed exposed", "speed-up"], rows))
    log(args, "closed exposed: pieces one after the other at the ring allreduce closed form; "
              "speed-up: time of 'none' over the row's" + ("" if "none" in split(args.modes)
                                                           else " (- without none in --modes)"))
