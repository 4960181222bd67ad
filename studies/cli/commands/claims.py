"""``netsim claims``: the seed papers' claims in their own settings and where they hold.

:func:`studies.claims.reproduce.run_claim_seeds` at each seed of ``--seeds``, folded by
:func:`studies.claims.verdicts.over_seeds` (holds in k of N seeds) and printed by
:func:`studies.claims.verdicts.format_claims_over_seeds`, then each claim's region
(:func:`studies.claims.regions.format_region`), drawn with ``--png``
(:func:`studies.claims.regions.plot_regions`). With ``--data-path DIR`` the
accuracy claims the bundled data cannot show run on MNIST's IDX files in DIR
(:func:`studies.claims.on_mnist.run_on_mnist`), as a second table.
"""

import contextlib
import json
import time

from netsim.errors import NetsimError, UnitError
from netsim.units import parse_seeds

from studies.claims import reproduce as claims
from studies.claims.on_mnist import check_mnist, run_on_mnist
from studies.claims.regions import format_region, plot_regions
from studies.claims.verdicts import format_claims_over_seeds, format_counts, over_seeds, seeds_label
from studies.cli.console import UsageError, check_options, check_png, expect, log, progress, write
from studies.cli.options import add_force_argument
from studies.scaling.run_length import SEED_SECONDS, check_count

HELP = ("the seed papers' claims in their own settings over seeds: PASS, marginal, FAIL or by "
        "construction, holds in k of N seeds, and the region of their knobs where they hold "
        "(exit 0 either way)")
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
    >>> a = p.parse_args(["--markdown", "--seeds", "0,3"])
    >>> a.markdown, a.seeds, p.parse_args([]).seeds, a.data_path
    (True, '0,3', '0..4', None)
    """
    p.description = (
        "Reproduce the seed papers' claims (linear pipelining, RingTMP, Parameter Flow, graph "
        "partitioning, DGC, Slim-DP) in the papers' own settings as closely as the sources "
        "allow, once per seed, and print one row per claim: claim, source, what was measured "
        "(at the first seed), its threshold, its value over the seeds (mean, least..greatest), "
        "where it holds, and a verdict that says in how many seeds it holds: PASS (every "
        "seed), FAIL (none), marginal (some: the values straddle the threshold) or 'by "
        "construction' (the number follows from the setup alone); an accuracy difference "
        "within its spread over the seeds is 'not testable on this data', with the data "
        "that would show it (--data-path). A claim whose number takes "
        "no seed runs once. A FAIL is a result, not an error: every row is shown and the exit "
        "status is 0 whatever the verdicts. Then each claim's region, at the first seed: its "
        "value over a grid of the two knobs that matter, * where it holds. Takes about a "
        "minute on two idle cores with five seeds (--quick: coarser maps; --seeds 0: one "
        "seed, about 30 s).")
    p.add_argument("--seeds", default="0..4", metavar="A..B|N,N,...",
                   help="seeds of the training runs: every integer from A to B, or a list "
                        "(default 0..4; one seed, e.g. --seeds 0, gives one run's verdicts)")
    p.add_argument("--only", metavar="NAME,...",
                   help=f"run only these experiments: {', '.join(claims.EXPERIMENTS)}")
    p.add_argument("-j", "--jobs", type=int, default=2,
                   help="processes running the experiments side by side (default 2; the "
                        "results do not depend on it)")
    p.add_argument("--markdown", action="store_true", help="print a Markdown table")
    p.add_argument("--json", action="store_true",
                   help="print the rows as JSON, each with its per-seed values (per_seed)")
    p.add_argument("--quick", action="store_true", help="coarser region maps (fewer cells)")
    p.add_argument("--png", metavar="FILE", help="also draw the regions as maps (PNG)")
    p.add_argument("--data-path", metavar="DIR",
                   help="a directory of the MNIST IDX files: also run the accuracy claims the "
                        "bundled data cannot show (DGC's warm-up, RingTMP's accuracy, "
                        "Slim-DP's subset) on MNIST, at the same seeds (minutes per seed)")
    add_force_argument(p)


def _experiments(text):
    """The names of ``--only`` (None: every experiment), checked before any work."""
    if text is None:
        return None
    names = [n.strip() for n in text.split(",")]
    unknown = [n for n in names if n not in claims.EXPERIMENTS]
    if unknown or not names:
        raise UsageError(f"--only takes names among {', '.join(claims.EXPERIMENTS)}, "
                         f"got {text!r}")
    twice = next((n for i, n in enumerate(names) if n in names[:i]), None)
    if twice is not None:  # its runs twice over, its rows repeated
        raise UsageError(f"--only names {twice} twice; give each once")
    return names


def run(args):
    """Run the command on its parsed arguments: the report on stdout, notes on stderr.

    Parameters
    ----------
    args : argparse.Namespace
        Parsed by the parser :func:`add_arguments` filled (``quiet`` is read if present).

    Notes
    -----
    The full run takes about a minute on two cores with five seeds;
    ``tests/test_claims.py`` runs it (``--runslow``), runs two seeds of one
    claim, and checks the output with fake runs.
    """
    check_options(args, jobs=(1, None))
    if args.markdown and args.json:
        raise UsageError("give --markdown or --json, not both")
    try:
        seeds = parse_seeds(args.seeds)
    except UnitError as exc:
        raise UnitError(f"--seeds: {exc}") from None
    seconds = None if args.force else check_count(len(seeds), SEED_SECONDS,
                                                  f"--seeds {args.seeds}", "seed")
    only = _experiments(getattr(args, "only", None))
    png = getattr(args, "png", None)
    check_png(png)
    data_path = getattr(args, "data_path", None)
    if data_path is not None:
        try:
            check_mnist(data_path)
        except NetsimError as exc:
            raise UsageError(f"--data-path: {exc}") from None
    expect(args, seconds, f"claims over {len(seeds)} seeds")
    t0 = time.perf_counter()
    quick = getattr(args, "quick", False)
    with contextlib.ExitStack() as stack:
        bar = []  # opened after the start line, which would otherwise be drawn over it

        def start(line):
            log(args, line)
            bar.append(stack.enter_context(progress(args, None, "claims", unit="run")))

        runs = claims.run_claim_seeds(seeds, quick=quick, jobs=args.jobs, only=only,
                                      progress=lambda done, total: bar[0](done, total),
                                      log=start)
        mnist = []
        if data_path is not None:
            log(args, f"claims: the accuracy claims on MNIST in {data_path}")
            mnist = over_seeds(run_on_mnist(seeds, data_path, jobs=args.jobs))
    wall = time.perf_counter() - t0
    rows = over_seeds(runs)
    regions = []
    for r in rows:
        reg = r.get("region")
        if isinstance(reg, dict) and reg not in regions:
            regions.append(reg)
    if args.json:
        print(json.dumps(rows + mnist))
    else:
        print(format_claims_over_seeds(rows, seeds, markdown=args.markdown))
        for reg in regions:
            print()
            print(format_region(reg))
        if mnist:
            print(f"\nThe accuracy claims on MNIST ({data_path}):")
            print(format_claims_over_seeds(mnist, seeds, markdown=args.markdown))
    if png and regions:
        write(png, lambda f: plot_regions(regions, f), binary=True)
    at = f"seed {seeds[0]}" if len(seeds) == 1 else f"seeds {seeds_label(seeds)}"
    # a note for people (the counts are in the table): --quiet keeps stderr empty on success
    log(args, f"{format_counts(rows + mnist)} at {at} in {wall:.0f} s (a FAIL is reported, not an error)")
