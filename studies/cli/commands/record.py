"""``netsim record``: train a paradigm for real and record its message trace.

``--list`` lists the paradigms of :data:`studies.registry.PARADIGMS` and
their options; ``--set KEY=VALUE`` sets one.
"""

import json

from netsim.errors import NetsimError
from workloads import describe, record
from workloads.registry import check_run_options

from studies.cli.console import UsageError, check_options, check_writable, expect, log, progress
from studies.cli.options import add_force_argument, paradigm_options, refuse_with_list
from studies.registry import PARADIGMS
from studies.reports.text import table
from studies.scaling.run_length import check_training

HELP = "train a paradigm for real and record its message trace"
"""One line for ``netsim --help``."""


def _default_workers():
    """Paradigm name -> its default worker count (its ``run``'s ``workers`` default)."""
    import inspect

    return {name: inspect.signature(entry.run).parameters["workers"].default
            for name, entry in PARADIGMS.items()}


def add_arguments(p):
    """Add the command's arguments to ``p``, its ``argparse`` parser.

    Parameters
    ----------
    p : argparse.ArgumentParser

    Examples
    --------
    >>> import argparse
    >>> p = argparse.ArgumentParser(); add_arguments(p)
    >>> p.parse_args(["ps-sync", "--set", "servers=2"]).options
    ['servers=2']
    """
    p.add_argument("paradigm", nargs="?", help="paradigm name (see --list)")
    p.add_argument("--list", action="store_true", help="list the paradigms and their options")
    p.add_argument("--dataset", default="iris", help="iris, digits, mnist or sparse (default iris)")
    p.add_argument("--workers", type=int, default=None,
                   help="logical workers (default: the paradigm's: " + ", ".join(
                       f"{n} {w}" for n, w in _default_workers().items()) + ")")
    p.add_argument("--epochs", type=int, default=None, help="training epochs (default: the paradigm's)")
    p.add_argument("--seed", type=int, default=0, help="seed of all randomness (default 0)")
    p.add_argument("--set", dest="options", action="append", default=[], metavar="KEY=VALUE",
                   help="a paradigm option, e.g. --set servers=2 --set hidden=32,16 (repeatable)")
    p.add_argument("-o", "--output", metavar="FILE", help="write the trace (.npz or .json)")
    p.add_argument("--json", action="store_true", help="print the run summary as JSON")
    add_force_argument(p)


def run(args):
    """Run the command on its parsed arguments: the report on stdout, notes on stderr.

    Parameters
    ----------
    args : argparse.Namespace
        Parsed by the parser :func:`add_arguments` filled (``quiet`` is read if present).

    Examples
    --------
    >>> import argparse
    >>> p = argparse.ArgumentParser(); add_arguments(p)
    >>> run(p.parse_args(["single", "--dataset", "iris", "--epochs", "1", "--json"]))
    ... # doctest: +ELLIPSIS
    {"paradigm": "single", "dataset": "iris", "workers": 1, ..., "messages": 0, ...}
    """
    if args.list:
        refuse_with_list(args, add_arguments, "every paradigm")
        defaults = _default_workers()
        print("\n".join(f"{describe(name)}\n    workers={defaults[name]}  (--workers)"
                        for name in PARADIGMS))
        return
    if not args.paradigm:
        raise UsageError("record: give a PARADIGM or --list")
    entry = PARADIGMS.get(args.paradigm)
    if entry is None:
        raise NetsimError(f"unknown paradigm {args.paradigm!r}; known: {', '.join(PARADIGMS)}")
    if args.workers is not None and args.workers < 1:
        raise NetsimError(f"workers must be >= 1, got {args.workers}")
    check_options(args, seed=(0, 2**32 - 1), epochs=(1, None))
    options = {"seed": args.seed}
    if args.epochs is not None:
        options["epochs"] = args.epochs
    given = paradigm_options(args.paradigm, entry, args.options)
    for key, flag, default in (("epochs", "--epochs", None), ("seed", "--seed", 0)):
        if key in given and getattr(args, key) != default:  # --set would override the flag
            raise NetsimError(f"{flag} and --set {key}= both given; give one")
    options.update(given)
    # an option past the run's own epochs, samples or steps (the data is loaded if needed)
    check_run_options(args.paradigm, args.dataset, workers=args.workers, **options)
    seconds = None
    if not args.force:  # a count chosen by an option, or the paradigm's default: priced first
        run = {"epochs": entry.options["epochs"][0]} if "epochs" in entry.options else {}
        seconds = check_training({**run, **options},
                                 workers=args.workers or _default_workers()[args.paradigm])
    if args.output is not None:
        from netsim.formats.tracefile import check_trace_name

        check_trace_name(args.output)  # before the recording, not after
    check_writable(args.output)
    expect(args, seconds, f"recording {args.paradigm}")
    with progress(args, None, f"recording {args.paradigm}", unit="epoch") as bar:
        rec = record(args.paradigm, dataset=args.dataset, workers=args.workers,
                     progress=bar, **options)
    if args.output:
        from netsim.formats.tracefile import save_trace

        try:
            save_trace(rec.trace, args.output)
        except OSError as exc:
            raise NetsimError(f"cannot write {args.output}: {exc.strerror or exc}") from None
    summary_row = {"paradigm": rec.paradigm, "dataset": args.dataset,
                   "workers": rec.trace.metadata.get("workers"), "accuracy": rec.accuracy,
                   "bytes": rec.total_bytes, "messages": rec.messages,
                   "iterations": rec.iterations, "dropped_fraction": rec.dropped_fraction}
    # ps-async: the staleness the training applied (updates between a read and its push).
    summary_row.update({k: rec.extra[k] for k in ("mean_staleness", "max_staleness")
                        if k in (rec.extra or {})})
    if args.json:
        print(json.dumps(summary_row))
        return
    rows = [(k, "-" if v is None else (f"{v:.4f}" if isinstance(v, float) else v))
            for k, v in summary_row.items()]
    print(table(["field", "value"], rows))
    if args.output:
        log(args, f"wrote {args.output}")
