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
    ended = []   # the program's status, once the command returned (see _end_before_teardown)
    if argv is None:   # run as the program (the console script, python -m), not called
        import atexit

        # registered first, so called last: after every exit handler a command's imports
        # register (multiprocessing's, logging's), before the modules' teardown
        atexit.register(_end_before_teardown, ended)
    try:
        from studies.cli import parser as cli

        status = cli.main(argv)
    except KeyboardInterrupt:
        print("netsim: interrupted", file=sys.stderr)
        status = INTERRUPTED
    if argv is None:
        _exit_on_ctrl_c()
        ended.append(status)
    return status


def _end_before_teardown(ended):
    """End the process with the command's status before Python tears its modules down.

    By then Python has put SIGINT back to its default action (``_PySignal_Fini``), and
    tearing down numpy, numba and the rest takes a while after a large command: a Ctrl-C
    then killed the process with no word and no status of its own. Nothing is left to do
    at that point but flushing the standard streams, done here. Does nothing when the
    command raised (``ended`` empty): Python ends as usual, with its traceback.
    """
    if not ended:
        return
    import os

    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):   # a closed pipe (`netsim ... | head`), a closed stream
            pass
    os._exit(ended[0])


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
