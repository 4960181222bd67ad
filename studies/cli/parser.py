"""The ``netsim`` command line: ``main()`` and its parser.

Each subcommand is a module of :mod:`studies.cli.commands` with ``HELP`` (its
line in ``netsim --help``), ``add_arguments(parser)`` and ``run(args)``,
listed in :data:`COMMANDS`. A call imports only the module of the command it
names (what that command needs, and no other command's studies); ``netsim
--help`` and a call naming no known command import them all. Names on the command line become builders and
traces through :mod:`studies.registry`.

Bad input never shows a traceback: it prints ``netsim: error: ...`` on one line
and exits with status 2.

Examples
--------
>>> main(["collective", "ring", "-P", "1", "-n", "1MB", "--topology", "stra"])
2
"""

if __name__ == "__main__":
    # `python -m studies.cli.parser` runs this file before its imports below (numpy, the commands):
    # import it under its own name inside a try, so that a Ctrl-C while they load is one
    # line and status 130, as the console script (studies.cli.entry) makes it.
    import sys

    try:
        from studies.cli.parser import main as _main

        _status = _main()
    except KeyboardInterrupt:
        print("netsim: interrupted", file=sys.stderr)
        _status = 130
    sys.exit(_status)

import argparse
import importlib
import re
import sys
import warnings
from types import MappingProxyType

from netsim import __version__
from netsim.errors import DeadlockError, NetsimError

from studies.cli.console import GIVEN, UsageError

__all__ = ["COMMANDS", "build_parser", "command", "main"]

COMMANDS = MappingProxyType({
    "replay": "replay",
    "topology": "topology",
    "record": "record",
    "collective": "collective",
    "scale": "scale",
    "overlap": "overlap",
    "claims": "claims",
    "schemes": "schemes",
    "demo": "demo",
    "sweep": "sweep",
    "import": "import_trace",
    "export": "export_trace",
})
"""Command name -> its module in :mod:`studies.cli.commands` (``HELP``, ``add_arguments``, ``run``),
in ``--help`` order."""


def command(name):
    """The module of command ``name``, imported on first use.

    Examples
    --------
    >>> command("replay").HELP
    'replay a trace on a topology and report times and link loads'
    """
    return importlib.import_module(f"{__package__}.commands.{COMMANDS[name]}")


_SEEN = "_netsim_options_given"  # the Namespace attribute _StoreOnce notes dests in, then removed


class _StoreOnce(argparse._StoreAction):
    """``store``, refusing an option given twice (``--topology a --topology b`` kept the last)."""

    def __call__(self, parser, namespace, values, option_string=None):
        seen = getattr(namespace, _SEEN, None)
        if seen is None:
            seen = set()
            setattr(namespace, _SEEN, seen)
        if self.dest in seen and option_string is not None:
            raise argparse.ArgumentError(self, "given twice; give it once")
        seen.add(self.dest)
        super().__call__(parser, namespace, values, option_string)


class _Parser(argparse.ArgumentParser):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        # Every plain option (action "store", the default) of every command and group is given
        # at most once: argparse would silently keep the last of a repeated one.
        self.register("action", None, _StoreOnce)
        self.register("action", "store", _StoreOnce)
        # argparse takes only plain numbers (-1, -2.5) for negative values; widen that to any
        # text starting with -DIGIT so `--bytes -1MB` reaches the option's own check (no option
        # of netsim looks like a negative number).
        self._negative_number_matcher = re.compile(r"^-\.?\d")

    def parse_known_args(self, args=None, namespace=None):
        namespace, extras = super().parse_known_args(args, namespace)
        if hasattr(namespace, _SEEN):
            # kept, as a frozenset, for studies.cli.options.given_options: an option given at
            # its default value is given all the same (--tp 8 outside the transformer)
            seen = getattr(namespace, _SEEN)
            delattr(namespace, _SEEN)
            setattr(namespace, GIVEN, frozenset(seen) | getattr(namespace, GIVEN, frozenset()))
        return namespace, extras

    def error(self, message):
        raise UsageError(f"{self.prog}: {message}")


def build_parser(only=None):
    """The argparse parser of every subcommand, or of the one named.

    Parameters
    ----------
    only : str, optional
        A name in :data:`COMMANDS`: the parser has that subcommand alone, and
        only its module is imported.

    Returns
    -------
    argparse.ArgumentParser
        Its ``error`` raises :class:`studies.cli.console.UsageError` instead of exiting.

    Examples
    --------
    >>> build_parser().parse_args(["collective", "ring", "-P", "4", "-n", "1MB"]).workers
    4
    """
    parser = _Parser(prog="netsim", description=(
        "Flow-level network simulation of distributed neural-network training: replay "
        "traces of real training runs on topologies of real hardware, next to the "
        "alpha-beta closed forms."))
    parser.add_argument("--version", action="version", version=f"netsim {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    for name in COMMANDS if only is None else [only]:
        module = command(name)
        p = sub.add_parser(name, help=module.HELP, description=module.HELP)
        module.add_arguments(p)
        if "--quiet" not in p._option_string_actions:  # one convention for every command
            flags = [f for f in ("--quiet", "-q") if f not in p._option_string_actions]
            p.add_argument(*flags, action="store_true",
                           help="no progress bars or notes on stderr (errors still show)")
    return parser


def main(argv=None):
    """Entry point of the ``netsim`` console script; returns the exit status.

    Parameters
    ----------
    argv : list of str, optional
        The arguments (default ``sys.argv[1:]``).

    Returns
    -------
    int
        0 on success, 2 for bad input (one line ``netsim: error: ...`` on
        stderr), 130 when interrupted.

    Examples
    --------
    >>> main(["scale", "-a", "ring", "-P", "2,4", "-n", "1MB", "--topology", "star:n=-1"])
    2
    """
    try:
        args = sys.argv[1:] if argv is None else list(argv)
        # A known command first on the line builds that command's parser alone; anything else
        # (--help, --version, a typo) builds them all.
        parser = build_parser(args[0] if args and args[0] in COMMANDS else None)
        with warnings.catch_warnings():
            # A library warning (say, a graph edge without latency) is one line, like the CLI's.
            warnings.showwarning = _one_line_warning
            return _main(parser, argv)
    except KeyboardInterrupt:  # also while the parser is built or an error line is printed
        print("netsim: interrupted", file=sys.stderr)
        return 130


def _one_line_warning(message, category, filename, lineno, file=None, line=None):
    print(f"netsim: warning: {message}", file=sys.stderr)


def _main(parser, argv):
    """:func:`main` inside its warning filter."""
    try:
        args = parser.parse_args(argv)
        if args.command is None:  # the commands on stdout, and the one error line
            parser.print_help()
            print(f"netsim: error: give a COMMAND: {', '.join(COMMANDS)}", file=sys.stderr)
            return 2
        command(args.command).run(args)
    except UsageError as exc:
        print(f"netsim: error: {exc}", file=sys.stderr)
        return 2
    except DeadlockError as exc:
        print(f"netsim: error: {str(exc).split(':')[0]}; the first of them:", file=sys.stderr)
        for s in exc.stuck[:5]:
            print(f"  op {s['op']} on rank {s['rank']}: {s['what']}, waits for ops {s['waits_for']}",
                  file=sys.stderr)
        return 2
    except NetsimError as exc:
        print(f"netsim: error: {str(exc).splitlines()[0] if str(exc) else type(exc).__name__}",
              file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("netsim: interrupted", file=sys.stderr)
        return 130
    except MemoryError as exc:
        # What the estimates did not foresee (numpy's allocation of an activation array, say)
        # still ends in one line, not a traceback.
        what = str(exc).splitlines()[0] if str(exc) else "an allocation failed"
        print(f"netsim: error: out of memory: {what}; use smaller inputs", file=sys.stderr)
        return 2
    except BrokenPipeError:
        # The reader (say `| head`) closed the pipe: stop quietly, as Unix tools do.
        import os

        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    return 0
