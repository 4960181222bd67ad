"""``netsim export``: write a netsim trace in another format (Chakra ET, one file per rank).

``netsim export chakra trace.npz -o DIR`` writes ``DIR/chakra.<rank>.et`` (see
:func:`netsim.formats.chakra.save_chakra`), for ASTRA-sim and other Chakra consumers. Compute given in FLOPs in a trace without
``device_flops`` is written with no duration, said in one ``warning:`` line on stderr.
"""

import sys
import warnings

from studies.cli.console import check_not_read, log

HELP = "export a netsim trace as Chakra execution traces (one .et per rank)"
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
    >>> a = p.parse_args(["chakra", "t.npz", "-o", "et/"])
    >>> a.format, a.trace, a.output
    ('chakra', 't.npz', 'et/')
    """
    p.add_argument("format", choices=("chakra",),
                   help="chakra: Chakra execution traces (protobuf), one .et file per rank")
    p.add_argument("trace", help="the netsim trace to export (.npz or .json)")
    p.add_argument("-o", "--output", required=True, metavar="DIR",
                   help="directory for the files (created if missing)")
    p.add_argument("--prefix", default="chakra",
                   help="file name prefix: DIR/PREFIX.<rank>.et (default chakra)")


def run(args):
    """Run the command on its parsed arguments: write the files, one note on stderr.

    Parameters
    ----------
    args : argparse.Namespace
        Parsed by the parser :func:`add_arguments` filled (``quiet`` is read if present).

    Examples
    --------
    >>> import argparse, os, tempfile
    >>> from netsim import TraceBuilder, save_trace
    >>> d = tempfile.mkdtemp(); b = TraceBuilder(2); _ = b.message(0, 1, 1e6)
    >>> save_trace(b.build(), os.path.join(d, "t.npz"))
    >>> p = argparse.ArgumentParser(); add_arguments(p)
    >>> run(p.parse_args(["chakra", os.path.join(d, "t.npz"), "-o", os.path.join(d, "et")]))
    >>> sorted(os.listdir(os.path.join(d, "et")))
    ['chakra.0.et', 'chakra.1.et']
    """
    from netsim.formats.chakra import check_prefix, save_chakra
    from netsim.formats.tracefile import load_trace

    check_prefix(args.prefix)  # before the trace is read: no file may leave the directory
    check_not_read({"-o": args.output}, [args.trace])   # -o t.json: "File exists" said less
    trace = load_trace(args.trace)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        save_chakra(trace, args.output, prefix=args.prefix)
    for w in caught:   # one line each, even under --quiet: the files lack something
        print(f"warning: {w.message}", file=sys.stderr)
    log(args, f"wrote {trace.ranks} files {args.output}/{args.prefix}.<rank>.et "
              f"({trace.num_ops} ops, {trace.num_messages} messages)")
