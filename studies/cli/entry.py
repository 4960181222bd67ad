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

        status = cli.main(argv)
    except KeyboardInterrupt:
        print("netsim: interrupted", file=sys.stderr)
        status = INTERRUPTED
    if argv is None:   # run as the program (the console script, python -m), not called
        _exit_on_ctrl_c()
    return status


def _on_ctrl_c(signum, frame):
    import os

    print("netsim: interrupted", file=sys.stderr, flush=True)
    os._exit(INTERRUPTED)


def _exit_on_ctrl_c():
    """From here to the process's end, a Ctrl-C is one line and exit status 130 at once.

    The command has returned, but the interpreter still joins the threads it leaves
    (a Dask cluster's, a pool's) in ``threading._shutdown``: a Ctrl-C there printed a
    traceback of that function, or ended the process with no word. Installed only when
    the main thread has SIGINT's default Python handler (not in a process that ignores
    SIGINT, as a background job does).
    """
    import signal
    import threading

    if (threading.current_thread() is threading.main_thread()
            and signal.getsignal(signal.SIGINT) is signal.default_int_handler):
        signal.signal(signal.SIGINT, _on_ctrl_c)


if __name__ == "__main__":
    sys.exit(main())
