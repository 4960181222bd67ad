"""``netsim demo``: the main job on a built-in default, gradient exchange vs P on 10 GbE.

``netsim scale`` of ring, Rabenseifner and one parameter server for a 100 MB
gradient on a 10 GbE star, P = 2..64.
"""

import argparse

from studies.cli.console import check_png, log
from studies.cli.commands import scale

HELP = "the main job on a built-in default: gradient exchange vs P on 10 GbE, table + PNG"
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
    >>> p.parse_args(["--png", "d.png"]).png
    'd.png'
    """
    p.add_argument("--png", default="netsim-demo.png", help="plot file (default netsim-demo.png)")
    p.add_argument("--json", action="store_true", help="print the records as JSON")


def run(args):
    """Ring allreduce, Rabenseifner (BE) and a parameter server on a 10 GbE star, P = 2..64.

    Runs ``netsim scale`` on its parsed arguments: the report on stdout, notes on stderr.

    Parameters
    ----------
    args : argparse.Namespace
        Parsed by the parser :func:`add_arguments` filled (``quiet`` is read if present).

    Notes
    -----
    It simulates P = 2..64 for three algorithms (a few seconds);
    ``tests/test_cli_collectives.py`` runs it.
    """
    check_png(args.png)  # before the header: a bad path is the one line on stderr
    log(args, "netsim demo: allreduce of a 100 MB gradient (ResNet-50 size) on a 10 GbE star, "
              "ring vs Rabenseifner vs one parameter server, P = 2..64")
    ns = argparse.Namespace(algorithms="ring,rabenseifner,ps", workers="2..64", bytes="100MB",
                            topology="star:bandwidth=10Gbps,latency=1us", segments=None,
                            png=args.png, json=args.json, csv=None, logy=True,
                            quiet=getattr(args, "quiet", False))
    scale.run(ns, title="100 MB gradient exchange on a 10 GbE star")
