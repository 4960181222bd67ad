"""The ``netsim`` subcommands, one module each (listed in :data:`studies.cli.parser.COMMANDS`).

Every module has ``HELP`` (its line in ``netsim --help``), ``add_arguments(parser)``
and ``run(args)``; what they share is :mod:`studies.cli.console`.
"""
