"""What every ``netsim`` command shares: progress bars, notes for people, files written.

Results go to standard output; bars, notes and log lines to standard error,
so ``--json`` output is never mixed with them. A file that cannot be written
is a :class:`~netsim.errors.NetsimError` naming it.
"""

import sys

from netsim.errors import NetsimError

__all__ = ["UsageError", "PROGRESS_MESSAGES", "progress", "note", "log", "write", "write_csv"]


class UsageError(Exception):
    """A command line that does not parse (printed as ``netsim: error: ...``, exit 2)."""


PROGRESS_MESSAGES = 100_000
"""Replays of at least this many messages show a progress bar (on a terminal)."""


def progress(args, total, desc, unit="it", show=True, initial=0):
    """A progress bar on stderr if it is a terminal, ``show`` holds and not ``--quiet``.

    Parameters
    ----------
    args : argparse.Namespace
        The command's arguments (``quiet`` is read if present).
    total : int or None
        Steps of the bar (None: unknown).
    desc : str
        Its label.
    unit : str, optional
    show : bool, optional
        False: no bar whatever the terminal.
    initial : int, optional
        Steps already done.

    Examples
    --------
    >>> import argparse
    >>> with progress(argparse.Namespace(quiet=True), 3, "demo") as bar:
    ...     bar(1, 3)
    """
    from netsim.progress import Progress, show_progress

    return Progress(total, desc, show=show and show_progress(getattr(args, "quiet", False)),
                    initial=initial, unit=unit)


def note(args, message):
    """A progress note: like a progress bar, shown only on a terminal and not with --quiet.

    Parameters
    ----------
    args : argparse.Namespace
    message : str

    Examples
    --------
    >>> import argparse
    >>> note(argparse.Namespace(quiet=True), "simulating ...")  # prints nothing
    """
    from netsim.progress import show_progress

    if show_progress(getattr(args, "quiet", False)):
        print(message, file=sys.stderr)


def log(args, message):
    """A note for people on stderr (stdout stays for results), unless ``--quiet``.

    Parameters
    ----------
    args : argparse.Namespace
    message : str

    Examples
    --------
    >>> import argparse, contextlib, io
    >>> err = io.StringIO()
    >>> with contextlib.redirect_stderr(err):
    ...     log(argparse.Namespace(quiet=False), "wrote x.png")
    >>> err.getvalue()
    'wrote x.png\\n'
    """
    if not getattr(args, "quiet", False):
        print(message, file=sys.stderr)


def write_csv(path, records):
    """Records (dicts with the same keys) as a CSV file.

    Parameters
    ----------
    path : str or path-like
    records : list of dict

    Examples
    --------
    >>> import os, tempfile
    >>> p = os.path.join(tempfile.mkdtemp(), "r.csv")
    >>> write_csv(p, [{"P": 2, "time": 0.5}])
    >>> open(p).read().split()
    ['P,time', '2,0.5']
    """
    import csv

    def writer(f):
        w = csv.DictWriter(f, fieldnames=list(records[0]))
        w.writeheader()
        w.writerows(records)
    write(path, writer)


def write(path, writer, binary=False):
    """Open ``path`` for writing and call ``writer(file)``; a failure names the path.

    Parameters
    ----------
    path : str or path-like
    writer : callable
        Called with the open file.
    binary : bool, optional
        Open in binary mode (a PNG).

    Raises
    ------
    NetsimError
        If the file cannot be written.

    Examples
    --------
    >>> write("/nonexistent/dir/x.txt", lambda f: f.write("x"))
    Traceback (most recent call last):
    ...
    netsim.errors.NetsimError: cannot write /nonexistent/dir/x.txt: No such file or directory
    """
    try:
        with open(path, "wb" if binary else "w") as f:
            writer(f)
    except OSError as exc:
        raise NetsimError(f"cannot write {path}: {exc.strerror or exc}") from None
