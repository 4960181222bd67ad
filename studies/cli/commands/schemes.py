"""``netsim schemes``: sync scheme x architecture, bytes and simulated time to an accuracy.

:func:`studies.claims.schemes.study`, printed by :func:`studies.claims.schemes.format_table`, drawn by
:func:`studies.claims.schemes.plot`.
"""

import json

from netsim.checks import check_real
from netsim.errors import NetsimError

from netsim.units import parse_seeds
from workloads.models import get_model

from studies.claims import schemes
from studies.claims.verdicts import format_claims_over_seeds, over_seeds, seeds_label
from studies.registry import topology_factory
from studies.cli.console import check_options, check_png, note, progress, write
from studies.cli.options import add_force_argument, add_library_argument, given_options

HELP = ("sync schemes (BSP, SSP, async, local SGD) x architectures (PS, allreduce): bytes and "
        "simulated time to an accuracy, next to each scheme's closed form")
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
    >>> a = p.parse_args(["--target", "0.95", "--staleness", "3"])
    >>> a.target, a.staleness, a.period
    (0.95, 3, 4)
    """
    p.description = (
        "Train every combination of a synchronisation scheme (bsp; ssp with staleness s; "
        "async, Downpour; local-sgd averaging every H steps) and an architecture (ps: "
        "parameter server with S servers; allreduce: a netsim collective) for 1, 2, ... "
        "epochs until its test accuracy reaches --target; print the bytes it sent and its "
        "trace's simulated time on a 10 GbE star and on a PCIe box (8 GPUs under PCIe gen3 "
        "switches, two sockets), each next to the scheme's closed form. Combinations that "
        "make no sense are listed with the reason. Every combination trains the same model "
        "from the same seed. Takes about 10 s on digits.")
    p.add_argument("--target", type=float, default=schemes.TARGET,
                   help=f"test accuracy to reach (default {schemes.TARGET})")
    p.add_argument("--dataset", default="digits", help="dataset (default digits)")
    p.add_argument("--workers", "-P", type=int, default=4, help="workers (default 4)")
    p.add_argument("--max-epochs", type=int, default=6,
                   help="give up after this many epochs (default 6)")
    p.add_argument("--seed", type=int, default=0, help="seed of every run (default 0)")
    p.add_argument("--seeds", default=None, metavar="A..B|LIST",
                   help="run everything once per seed (0..4, or 0,3,7) and report each verdict "
                        "(a combination reaching the target, Downpour's and local SGD's epochs "
                        "against BSP's) as holds in k of N seeds; the table is the first seed's")
    p.add_argument("--model", default=None,
                   help="simulate each run resized to this model (resnet50, bert-large, ...: "
                        "its message sizes and FLOPs; the epochs are the trained model's)")
    p.add_argument("--topology", default=None, metavar="NAME[:k=v,...]",
                   help="simulate on this topology instead of the 10 GbE star and the PCIe box")
    p.add_argument("--servers", type=int, default=1,
                   help="parameter servers S of the ps architecture (default 1; local-sgd "
                        "needs 1: a master)")
    p.add_argument("--staleness", type=int, default=2, help="SSP's staleness bound s (default 2)")
    p.add_argument("--period", type=int, default=4,
                   help="local SGD: steps between averagings H (default 4)")
    p.add_argument("--collective", default="ring",
                   help="allreduce algorithm: ring, mst, be or lp (default ring)")
    p.add_argument("--png", default="netsim-schemes.png",
                   help="plot file (default netsim-schemes.png)")
    add_library_argument(p)
    p.add_argument("--json", action="store_true", help="print the rows as JSON")
    add_force_argument(p)


def run(args):
    """Run the command on its parsed arguments: the table on stdout, notes on stderr.

    Parameters
    ----------
    args : argparse.Namespace
        Parsed by the parser :func:`add_arguments` filled (``quiet`` is read if present).

    Examples
    --------
    >>> import argparse, os, tempfile
    >>> p = argparse.ArgumentParser(); add_arguments(p)
    >>> png = os.path.join(tempfile.mkdtemp(), "s.png")
    >>> run(p.parse_args(["--target", "0.5", "--max-epochs", "1", "--png", png]))
    ... # doctest: +ELLIPSIS
    | scheme | architecture | paradigm | epochs | ...
    ...
    | local-sgd | allreduce | local-sgd-allreduce | 1 | 45 | 0.905 | 348,480 | ...
    <BLANKLINE>
    target accuracy 0.5 on digits, 4 workers; wrote ...s.png
    """
    check_options(args, workers=(1, None), max_epochs=(1, None), seed=(0, 2**32 - 1),
                  servers=(1, None), staleness=(0, None), period=(1, None))
    check_real(args.target, "--target", lo=0, hi=1, strict=(True, False))
    _check_run_bounds(args)
    if not args.force:
        _check_epochs(args.max_epochs)
    check_png(args.png)
    seeds = _seeds(args)
    topologies = None
    if args.topology is not None:
        topologies = {args.topology: topology_factory(args.topology)}
    if args.model is not None:
        get_model(args.model)   # an unknown name fails here, before any training
    note(args, f"training every scheme x architecture on {args.dataset} to accuracy "
               f"{args.target} ...")
    runs = {}
    for seed in seeds:
        with progress(args, None, "schemes", unit="combination") as bar:  # ~20 s a seed
            runs[seed] = schemes.study(
                target=args.target, dataset=args.dataset, workers=args.workers,
                max_epochs=args.max_epochs, seed=seed, servers=args.servers,
                staleness=args.staleness, period=args.period, collective=args.collective,
                library=args.library, progress=bar, topologies=topologies, model=args.model)
    rows = runs[seeds[0]]
    folded = (over_seeds({s: schemes.verdict_rows(r, s, args.target) for s, r in runs.items()})
              if args.seeds is not None else None)
    write(args.png, lambda f: schemes.plot(rows, f), binary=True)
    if args.json:
        print(json.dumps(rows if folded is None else {"rows": rows, "runs": runs,
                                                      "verdicts": folded}))
        return
    print(schemes.format_table(rows, args.target))
    if folded is not None:
        print(f"\nverdicts over seeds {seeds_label(seeds)} (the table above: seed {seeds[0]})")
        print(format_claims_over_seeds(folded, seeds))
    print(f"\ntarget accuracy {args.target} on {args.dataset}, {args.workers} workers"
          + (f", simulated as {args.model}" if args.model else "")
          + f"; wrote {args.png}")


def _seeds(args):
    """The seeds of the runs: ``--seeds`` (refused beside ``--seed``) or ``[--seed]``."""
    if args.seeds is None:
        return [args.seed]
    if "seed" in given_options(args, add_arguments):
        raise NetsimError("give --seed or --seeds, not both")
    return parse_seeds(args.seeds)


def _check_run_bounds(args):
    """``--period`` and ``--staleness`` given past the longest run (``--max-epochs``), refused as
    ``netsim record`` refuses the paradigms' ``period`` and ``ssp`` (their defaults never are)."""
    from workloads.registry import check_run_options

    given = given_options(args, add_arguments)
    for flag, name, key, value in (("--period", "model-averaging", "period", args.period),
                                   ("--staleness", "ps-async", "ssp", args.staleness)):
        if flag[2:] not in given:
            continue
        try:
            check_run_options(name, args.dataset, workers=args.workers, epochs=args.max_epochs,
                              **{key: value})
        except NetsimError as exc:
            raise NetsimError(f"{flag} {value}: {exc}") from None


def _check_epochs(max_epochs):
    """Refuse a ``--max-epochs`` whose worst case, a target never reached, takes too long.

    A combination trains 1, 2, ... epochs afresh until it reaches the target
    (:func:`studies.claims.schemes.study`): ``1 + 2 + ... + E = E (E + 1) / 2`` epochs at most,
    for each combination offered, each epoch at least
    :data:`studies.scaling.run_length.EPOCH_SECONDS` (:func:`studies.scaling.run_length.check_count`).
    """
    from workloads.paradigms.schemes import combinations

    from studies.scaling.run_length import EPOCH_SECONDS, check_count

    offered = sum(1 for _, _, why in combinations() if not why)
    check_count(offered * max_epochs * (max_epochs + 1) // 2, EPOCH_SECONDS,
                f"--max-epochs {max_epochs} (if the target is never reached: {offered} "
                f"combinations x 1 + 2 + ... + {max_epochs} epochs)", "epoch")
