"""The ``netsim`` command line: the parser, the console script, shared console helpers and one module per command.

Modules
-------
console   What every ``netsim`` command shares: progress bars, notes for people, files written.
entry     The ``netsim`` console script: :func:`studies.cli.parser.main`, interruptible from its first instant.
options   Command-line values: typed paradigm or topology options (worker ranges: netsim.units).
parser    The ``netsim`` command line: ``main()`` and its parser.
commands  The ``netsim`` subcommands, one module each (listed in :data:`studies.cli.parser.COMMANDS`).
"""
