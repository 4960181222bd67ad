"""``netsim collective``: one collective's simulated time beside its closed form, and why.

:func:`netsim.analysis.compare` on the topology built for its ranks.
"""

import json

from netsim.analysis import compare, ranks_for
from netsim.checks import check_real
from netsim.errors import NetsimError
from netsim.units import format_bandwidth, format_bytes, format_time, parse_bytes

from ..console import check_options
from ..registry import COLLECTIVES, topology_factory
from ..trace_size import check_fits
from ..report import table

HELP = "one collective: simulated time next to its closed form, and why they differ"
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
    >>> p.parse_args(["ring", "-P", "4", "-n", "1MB"]).workers
    4
    """
    p.add_argument("algorithm",
                   help="collective algorithm: " + ", ".join(COLLECTIVES))
    p.add_argument("--topology", default="star", metavar="NAME[:k=v,...]",
                   help="topology (default star; builders with n are sized to the ranks)")
    p.add_argument("--workers", "-P", type=int, required=True, help="ranks P")
    p.add_argument("--bytes", "-n", required=True, help="message size, e.g. 64MB")
    p.add_argument("--segments", "-k", type=int, default=None,
                   help="LP segments (default: the optimal k* for the topology's alpha, beta)")
    p.add_argument("--gamma", type=float, default=0.0, help="reduction cost, seconds per byte")
    p.add_argument("--servers", type=int, default=1, help="servers for ps (default 1)")
    p.add_argument("--json", action="store_true", help="print the record as JSON")
    p.add_argument("--force", action="store_true",
                   help="run even if the trace's estimated size (messages x the bytes of its "
                        "columns) exceeds the memory available")


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
    >>> run(p.parse_args(["ring", "-P", "4", "-n", "1MB"]))  # doctest: +ELLIPSIS
                      value
    ----------------  -----------------------
    algorithm         ring (ring_allreduce)
    ...
    messages          24
    ...
    """
    if args.workers < 1:
        raise NetsimError(f"P must be >= 1, got {args.workers}")
    check_options(args, segments=(1, None), servers=(1, None))
    check_real(args.gamma, "--gamma", lo=0)
    if not args.force:  # before the topology or the trace is built: both grow with P
        # LP without -k: k >= 1, so the count is a lower bound (k* is known only on the topology).
        check_fits(args.algorithm, args.workers, segments=args.segments or 1,
                   servers=args.servers)
    G = topology_factory(args.topology)(ranks_for(args.algorithm, args.workers, args.servers))
    rec = compare(args.algorithm, G, args.workers, parse_bytes(args.bytes), segments=args.segments,
                  gamma=args.gamma, servers=args.servers)
    if args.json:
        print(json.dumps(rec))
        return
    rows = [("algorithm", f"{rec['algorithm']} ({rec['collective']})"), ("P", rec["P"]),
            ("bytes", format_bytes(rec["nbytes"])), ("topology", rec["topology"]),
            ("alpha", format_time(rec["alpha"])),
            # beta is 0 when no message is sent (P = 1): there is no bandwidth to show.
            ("1/beta", format_bandwidth(1 / rec["beta"]) if rec["beta"] > 0 else "-"),
            ("messages", rec["messages"]), ("simulated", format_time(rec["simulated"])),
            ("closed form", format_time(rec["closed_form"])), ("gap", f"{rec['gap']:+.3%}"),
            ("contention bound", format_time(rec["contention_bound"])
             + (f" on {rec['bound_link']}" if rec["bound_link"] else ""))]
    if rec["segments"] is not None:
        rows.insert(3, ("segments k", rec["segments"]))
    print(table(["", "value"], rows))
    if rec["limit"]:
        print(f"\nthe simulation is {rec['gap']:+.1%} off the uncontended closed form: link "
              f"{rec['limit']} limited it, shared by up to {rec['limit_peak_flows']} messages at "
              f"once and saturated for {format_time(rec['limit_saturated'])}")
