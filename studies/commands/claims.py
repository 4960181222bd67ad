"""``netsim claims``: the seed papers' claims in their own settings and where they hold.

:func:`studies.claims.run_claims`, printed by :func:`studies.report.format_claims`,
then each claim's region (:func:`studies.claim_regions.format_region`), drawn
with ``--png`` (:func:`studies.claim_regions.plot_regions`).
"""

import json
import sys
import time

from .. import claims
from ..claim_regions import format_region, plot_regions
from ..console import check_options, check_writable, note, write
from ..report import format_claims

HELP = ("the seed papers' claims in their own settings: PASS, FAIL or by construction, and the "
        "region of their knobs where they hold (exit 0 either way)")
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
        "partitioning, DGC, Slim-DP) in the papers' own settings as closely as the sources "
        "allow, and print one row per claim: claim, source, what was measured, its threshold, "
        "where it holds, and PASS, FAIL or 'by construction' (the number follows from the "
        "setup alone). A FAIL is a result, not an error: every row is shown and the exit "
        "status is 0 whatever the verdicts. Then each claim's region: its value over a grid "
        "of the two knobs that matter, * where it holds. Takes about 30 s on two idle "
        "cores (--quick: coarser maps).")
    p.add_argument("--seed", type=int, default=0, help="seed of every training run (default 0)")
    p.add_argument("--markdown", action="store_true", help="print a Markdown table")
    p.add_argument("--json", action="store_true", help="print the rows as JSON")
    p.add_argument("--quick", action="store_true", help="coarser region maps (fewer cells)")
    p.add_argument("--png", metavar="FILE", help="also draw the regions as maps (PNG)")


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
    png = getattr(args, "png", None)
    check_writable(png)
    note(args, "reproducing the seed papers' claims ...")
    t0 = time.perf_counter()
    quick = {"quick": True} if getattr(args, "quick", False) else {}
    rows = claims.run_claims(seed=args.seed, **quick)
    wall = time.perf_counter() - t0
    regions = []
    for r in rows:
        reg = r.get("region")
        if isinstance(reg, dict) and reg not in regions:
            regions.append(reg)
    if args.json:
        print(json.dumps(rows))
    else:
        print(format_claims(rows, markdown=args.markdown))
        for reg in regions:
            print()
            print(format_region(reg))
    if png and regions:
        write(png, lambda f: plot_regions(regions, f), binary=True)
    failed = sum(not r["passed"] for r in rows)
    print(f"{len(rows) - failed} PASS, {failed} FAIL in {wall:.0f} s (a FAIL is reported, "
          f"not an error)", file=sys.stderr)
