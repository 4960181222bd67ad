"""The ``netsim`` command line: the parser, the console script, shared console helpers and one module per command.

Modules
-------
console   What every ``netsim`` command shares: progress bars, notes for people, files written.
entry     The ``netsim`` console script: :func:`studies.cli.parser.main`, interruptible from its first instant.
options   Command-line values: typed paradigm or topology options (worker ranges: netsim.units).
parser    The ``netsim`` command line: ``main()`` and its parser.
commands  The ``netsim`` subcommands, one module each (listed in :data:`studies.cli.parser.COMMANDS`).
"""

__all__ = ["main"]


def __getattr__(name):
    """``studies.cli.main``: the parser loads on first access, not with the package.

    The console script (:mod:`studies.cli.entry`) imports this package first and must be
    interruptible before the command line loads, so the face holds no eager import.
    """
    if name == "main":
        from studies.cli.parser import main

        return main
    raise AttributeError(f"module 'studies.cli' has no attribute {name!r}")
