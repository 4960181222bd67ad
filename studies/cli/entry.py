"""The ``netsim`` console script: :func:`studies.cli.parser.main`, interruptible from its first instant.

Importing the command line takes a while (numpy, networkx, every command); a
Ctrl-C in that time raised :class:`KeyboardInterrupt` outside
:func:`studies.cli.parser.main` and printed a traceback. This module imports nothing
heavy itself and imports the command line inside the ``try``, so a Ctrl-C at
any moment is one line, ``netsim: interrupted``, and exit status 130.

Examples
--------
>>> main(["collective", "ring", "-P", "1", "-n", "1MB", "--topology", "stra"])
2
"""

import sys

__all__ = ["main", "INTERRUPTED"]

INTERRUPTED = 130
"""Exit status after a Ctrl-C: 128 + SIGINT's number 2, as a shell reports a process it stopped."""


def main(argv=None):
    """Run ``netsim`` with ``argv`` (default ``sys.argv[1:]``); the exit status.

    Parameters
    ----------
    argv : list of str, optional

    Returns
    -------
    int
        As :func:`studies.cli.parser.main`; 130 for a Ctrl-C at any point, the import included.

    Examples
    --------
    >>> main(["collective", "ring", "-P", "2", "-n", "1MB", "--json"])  # doctest: +ELLIPSIS
    {"algorithm": "ring", ...}
    0
    """
    try:
        from studies.cli import parser as cli

        return cli.main(argv)
    except KeyboardInterrupt:
        print("netsim: interrupted", file=sys.stderr)
        return INTERRUPTED


if __name__ == "__main__":
    sys.exit(main())
