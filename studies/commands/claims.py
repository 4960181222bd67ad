"""``netsim claims``: the seed papers' claims reproduced, a PASS/FAIL table (exit 0 either way).

:func:`studies.claims.run_claims`, printed by :func:`studies.report.format_claims`.
"""

import json
import sys
import time

from .. import claims
from ..console import check_options, note
from ..report import format_claims

HELP = "the seed papers' claims reproduced: a PASS/FAIL table (exit 0 either way)"
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
    >>> p.parse_args(["--markdown"]).markdown
    True
    """
    p.description = (
        "Reproduce the seed papers' claims (linear pipelining, RingTMP, Parameter Flow, graph "
        "partitioning, DGC, Slim-DP) on stated topologies and sizes, and print one row per "
        "claim: claim, source, what was measured, its threshold, PASS or FAIL. A FAIL is a "
        "result, not an error: every row is shown and the exit status is 0 whatever the "
        "verdicts. Takes 30-90 s on two cores (about 90 s when they are busy).")
    p.add_argument("--seed", type=int, default=0, help="seed of every training run (default 0)")
    p.add_argument("--markdown", action="store_true", help="print a Markdown table")
    p.add_argument("--json", action="store_true", help="print the rows as JSON")


def run(args):
    """Run the command on its parsed arguments: the report on stdout, notes on stderr.

    Parameters
    ----------
    args : argparse.Namespace
        Parsed by the parser :func:`add_arguments` filled (``quiet`` is read if present).

    Notes
    -----
    The full run takes 30-90 s on two cores; ``tests/test_claims.py`` runs it
    (``--runslow``) and checks its output with a fake ``run_claims``.
    """
    check_options(args, seed=(0, 2**32 - 1))
    note(args, "reproducing the seed papers' claims ...")
    t0 = time.perf_counter()
    rows = claims.run_claims(seed=args.seed)
    wall = time.perf_counter() - t0
    if args.json:
        print(json.dumps(rows))
    else:
        print(format_claims(rows, markdown=args.markdown))
    failed = sum(not r["passed"] for r in rows)
    print(f"{len(rows) - failed} PASS, {failed} FAIL in {wall:.0f} s (a FAIL is reported, "
          f"not an error)", file=sys.stderr)
