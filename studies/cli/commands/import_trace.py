"""``netsim import``: turn a PyTorch profiler (Kineto) or Chakra ET trace into a netsim trace.

``netsim import kineto DIR_OR_FILES -o trace.npz [--steps 2..4]`` reads one Chrome-trace JSON
per rank (see :func:`netsim.formats.kineto.load.load_kineto`); ``netsim import chakra DIR -o trace.npz``
reads one ``.et`` file per rank (see :func:`netsim.formats.chakra.load_chakra`). Replay the result
with ``netsim replay trace.npz --topology ...``: for a profile, the summary shows the step
time the profile measured next to netsim's. ``--ranks N`` writes the same data-parallel job at N
ranks instead (:func:`netsim.trace.reproject.reproject`: collectives keep their payload over all N
ranks, per-rank compute as measured unless ``--batch-scale`` changes the batch per rank).
"""

import re

from netsim.checks import check_int

from studies.cli.console import UsageError, check_not_read, check_writable, expect, log
from studies.cli.options import add_force_argument, given_options
from studies.scaling.run_length import check_members
from studies.scaling.trace_size import check_ops, projection_ops

HELP = "import a PyTorch profiler (Kineto) or Chakra ET trace as a netsim trace"
"""One line for ``netsim --help``."""


def parse_steps(text):
    """``ProfilerStep`` numbers from ``"2..4"`` (every integer from 2 to 4) or ``"3,5"``.

    Parameters
    ----------
    text : str or None
        The option's value; None keeps every step.

    Returns
    -------
    list of int or None

    Raises
    ------
    studies.cli.console.UsageError
        For anything else, naming the value.

    Examples
    --------
    >>> parse_steps("2..4"), parse_steps("7, 9"), parse_steps(None)
    ([2, 3, 4], [7, 9], None)
    >>> parse_steps("4..2")
    Traceback (most recent call last):
    ...
    studies.cli.console.UsageError: --steps must be A..B with A <= B or a list N,N,..., got '4..2'
    """
    if text is None:
        return None
    m = re.fullmatch(r"\s*(\d+)\s*\.\.\s*(\d+)\s*", text)
    if m and int(m.group(1)) <= int(m.group(2)):
        return list(range(int(m.group(1)), int(m.group(2)) + 1))
    parts = [p.strip() for p in text.split(",")]
    if not m and parts and all(p.isdigit() for p in parts):
        return [int(p) for p in parts]
    raise UsageError(f"--steps must be A..B with A <= B or a list N,N,..., got {text!r}")


def add_arguments(p):
    """Add the command's arguments to ``p``, its ``argparse`` parser.

    Parameters
    ----------
    p : argparse.ArgumentParser

    Examples
    --------
    >>> import argparse
    >>> p = argparse.ArgumentParser(); add_arguments(p)
    >>> a = p.parse_args(["kineto", "prof/", "-o", "t.npz", "--steps", "2..4"])
    >>> a.format, a.inputs, a.output, a.steps
    ('kineto', ['prof/'], 't.npz', '2..4')
    """
    p.add_argument("format", choices=("kineto", "chakra"),
                   help="kineto: PyTorch profiler Chrome-trace JSON (.json or .json.gz), one "
                        "file per rank; chakra: Chakra execution traces, one .et file per rank")
    p.add_argument("inputs", nargs="+", metavar="DIR_OR_FILE",
                   help="a directory holding the rank files, or the files themselves "
                        "(chakra: one directory)")
    p.add_argument("-o", "--output", required=True, metavar="TRACE",
                   help="the netsim trace to write (.npz or .json)")
    p.add_argument("--steps", metavar="A..B|N,N,...",
                   help="kineto: the ProfilerStep#N marks to keep, as iterations 0, 1, ... "
                        "(default: every step)")
    p.add_argument("--symmetric", action="store_true",
                   help="kineto: one rank's file of a data-parallel job stands for every rank "
                        "of its world size")
    p.add_argument("--algorithm", choices=("ring", "recursive"), default="ring",
                   help="kineto: the collective schedules NCCL collectives expand to "
                        "(default ring)")
    p.add_argument("--ranks", type=int, metavar="N",
                   help="kineto: write the same data-parallel job at N ranks (every collective "
                        "over all N with its recorded payload, each rank's compute as recorded); "
                        "refused for sub-group collectives and point-to-point messages")
    p.add_argument("--batch-scale", type=float, default=None, metavar="S",
                   help="kineto, with --ranks: batch per rank times S; measured kernel and "
                        "operator times scale by S, host gaps stay (default 1: weak scaling)")
    add_force_argument(p)


def run(args):
    """Run the command on its parsed arguments: write the trace, one note on stderr.

    Parameters
    ----------
    args : argparse.Namespace
        Parsed by the parser :func:`add_arguments` filled (``quiet`` is read if present).

    Examples
    --------
    >>> import argparse, os, tempfile
    >>> from netsim import TraceBuilder
    >>> from netsim.formats.chakra import save_chakra
    >>> d = tempfile.mkdtemp(); b = TraceBuilder(2); _ = b.message(0, 1, 1e6)
    >>> save_chakra(b.build(), os.path.join(d, "et"))
    >>> p = argparse.ArgumentParser(); add_arguments(p)
    >>> run(p.parse_args(["chakra", os.path.join(d, "et"), "-o", os.path.join(d, "t.npz")]))
    ... # doctest: +ELLIPSIS
    >>> os.path.exists(os.path.join(d, "t.npz"))
    True
    """
    from netsim.formats.tracefile import save_trace

    steps = parse_steps(args.steps)
    if args.format == "chakra":
        given = given_options(args, add_arguments)   # --algorithm ring too: its default
        unused = [given[dest] for dest in ("steps", "symmetric", "algorithm", "ranks",
                                           "batch_scale", "force") if dest in given]
        if unused:
            verb = "applies" if len(unused) == 1 else "apply"
            raise UsageError(f"{', '.join(unused)} {verb} to kineto profiles, not to chakra")
        if len(args.inputs) != 1:  # was after a raise, never reached: extra inputs were ignored
            raise UsageError("chakra: give one directory of .et files")
    for flag, given in (("--batch-scale", args.batch_scale is not None), ("--force", args.force)):
        if given and args.ranks is None:
            raise UsageError(f"{flag} applies with --ranks")
    from netsim.formats.tracefile import check_trace_name

    check_trace_name(args.output)  # before the import, not after
    check_writable(args.output)
    endings = (".json", ".json.gz") if args.format == "kineto" else (".et", ".et.gz")
    check_not_read({"-o": args.output}, [(path, endings) for path in args.inputs])
    if args.format == "kineto":
        from netsim.formats.kineto.load import load_kineto

        inputs = args.inputs[0] if len(args.inputs) == 1 else args.inputs
        trace = load_kineto(inputs, steps=steps, algorithm=args.algorithm,
                            symmetric=args.symmetric)
        got = trace.metadata.get("recovered") or {}
        if got.get("from_operator"):
            log(args, f"{got['from_operator']} collective calls in the files sized by their "
                      f"launching operator (older profile): {got['assumed_group']} over the "
                      f"whole world (no process group named), {got['even_alltoall']} "
                      f"all-to-alls split evenly, {got['merged_kernels']} extra kernels merged "
                      f"into their call")
        if args.ranks is not None:
            from netsim.trace.reproject import reproject

            recorded = trace.ranks
            check_int(args.ranks, "--ranks")
            if not args.force:  # the projected trace grows with the ranks
                what = f"the job at {args.ranks} ranks"
                check_ops(projection_ops(trace, args.ranks, expanded=False), what,
                          instead="fewer --ranks")
                # one op per collective, but each holds its members: 10^8 ranks held 10 GB
                seconds = check_members(trace.num_collectives * args.ranks, what)
                expect(args, seconds, what)
            trace = reproject(trace, args.ranks, batch_scale=1.0 if args.batch_scale is None
                              else args.batch_scale)
            log(args, f"projected the {recorded}-rank job to {trace.ranks} ranks")
    else:
        from netsim.formats.chakra import load_chakra

        trace = load_chakra(args.inputs[0])
        dropped = trace.metadata.get("chakra_dropped_deps")
        if dropped:
            log(args, f"dropped {dropped['outside']} dependencies on nodes outside the files "
                      f"and {dropped['cycle']} ctrl_deps on dependency cycles (the rule: "
                      f"netsim.formats.chakra)")
    save_trace(trace, args.output)
    log(args, f"wrote {args.output}: {trace.ranks} ranks, {trace.num_ops} ops "
              f"({trace.num_messages} messages), {trace.num_iterations} iterations")
