"""What every ``netsim`` command shares: progress bars, notes for people, files written.

Results go to standard output; bars, notes and log lines to standard error,
so ``--json`` output is never mixed with them. A file that cannot be written
is a :class:`~netsim.errors.NetsimError` naming it.
"""

import sys

from netsim.errors import NetsimError

__all__ = ["UsageError", "GIVEN", "PROGRESS_MESSAGES", "EXPECT_SECONDS", "LONG_SECONDS",
           "progress", "note", "expect",
           "log", "write", "write_csv", "check_writable", "check_png", "check_not_read",
           "check_options"]


class UsageError(Exception):
    """A command line that does not parse (printed as ``netsim: error: ...``, exit 2).

    Examples
    --------
    >>> str(UsageError("netsim scale: argument --workers/-P: expected one argument"))
    'netsim scale: argument --workers/-P: expected one argument'
    """


GIVEN = "options_given"
"""The attribute of parsed arguments that holds the destinations of the plain options
(``--tp 8``) given on the command line, whatever their value (``studies.cli.parser`` notes
them; :func:`studies.cli.options.given_options` reads them)."""


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


EXPECT_SECONDS = 1.0
"""Accepted work priced at this many CPU seconds or more is announced before it starts
(:func:`expect`): the estimate errs by up to 2x either way (``benchmarks/README.md``, "The
work estimate") and a loaded machine doubles wall time, so work priced at a second can keep
a user waiting several seconds, longer than a command should stay silent; far below the
hour that :data:`studies.scaling.trace_size.TIME_LIMIT` refuses without ``--force``."""


LONG_SECONDS = 60.0
"""Accepted work priced at this many CPU seconds or more is announced (:func:`expect`) on
standard error whether or not it is a terminal (``--quiet`` still silences it)."""


def expect(args, seconds, what):
    """Announce accepted long work before it starts: its CPU time by the work estimate.

    A command calls it once, after every check of its input has passed, with the sum of
    what those checks priced (:func:`studies.scaling.trace_size.check_ops`' ``seconds``,
    :func:`studies.scaling.run_length.check_count`'s return): a refusal is never preceded by a
    note, and work refused for a larger P prints none for the smaller ones. Shown as
    :func:`note` is (a terminal, not ``--quiet``) and only from :data:`EXPECT_SECONDS` on;
    from :data:`LONG_SECONDS` on as :func:`log` is (any standard error, not ``--quiet``).

    Parameters
    ----------
    args : argparse.Namespace
        The command's arguments (``quiet`` is read if present).
    seconds : float or None
        The estimated CPU seconds (None: not priced, nothing shown).
    what : str
        The work, for the note (``ring on P = 4096``).

    Returns
    -------
    str or None
        The note's text when the work is long enough to announce (whether or not a
        terminal shows it), else None.

    Examples
    --------
    >>> import argparse
    >>> quiet = argparse.Namespace(quiet=True)
    >>> expect(quiet, 310.0, "ps-sync at P = 65536")
    'ps-sync at P = 65536: about 5 min of CPU by the work estimate (benchmarks/README.md); Ctrl-C stops it'
    >>> expect(quiet, 0.2, "ring on P = 64") is None
    True
    """
    if seconds is None or not seconds >= EXPECT_SECONDS:
        return None
    about = (f"{seconds:.0f} s" if seconds < 100 else f"{seconds / 60:.0f} min"
             if seconds < 6000 else f"{seconds / 3600:.1f} h")
    message = (f"{what}: about {about} of CPU by the work estimate (benchmarks/README.md); "
               f"Ctrl-C stops it")
    # a minute or more: said wherever stderr goes (a pipe, a log), as a run that long
    # should never start unannounced; shorter work only on a terminal, as a bar is
    (log if seconds >= LONG_SECONDS else note)(args, message)
    return message


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
    """Write ``path`` whole or not at all (:func:`netsim.formats.whole.write_whole`):
    ``writer(file)`` fills a temporary file beside it, which then replaces it; a failure
    names the path.

    A Ctrl-C (or any error) while ``writer`` runs, as while a large graph is drawn for
    seconds, leaves ``path`` as it was: a file opened under its own name was left empty
    or cut short, looking written.

    The parameters are :func:`~netsim.formats.whole.write_whole`'s (``binary`` for a PNG).

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
    from netsim.formats.whole import write_whole

    try:
        write_whole(path, writer, binary)
    except OSError as exc:
        raise NetsimError(f"cannot write {path}: {exc.strerror or exc}") from None


def check_writable(*paths):
    """Check, before any work, that each path (None is skipped) can be written.

    An existing file is opened for appending (nothing is changed); a new one
    is created and removed again, so a missing directory, a directory given as
    a file or a read-only place is found before a long run, not after it.

    Parameters
    ----------
    *paths : str or path-like or None

    Raises
    ------
    NetsimError
        ``cannot write PATH: REASON`` for the first path that cannot be written.

    Examples
    --------
    >>> check_writable(None, "/nonexistent/dir/x.png")
    Traceback (most recent call last):
    ...
    netsim.errors.NetsimError: cannot write /nonexistent/dir/x.png: No such file or directory
    >>> check_writable("")
    Traceback (most recent call last):
    ...
    netsim.errors.NetsimError: cannot write '': the file name is empty
    """
    import os

    for path in paths:
        if path is None:
            continue
        if not str(path).strip():  # open("") says "No such file or directory" of nothing
            raise NetsimError(f"cannot write {str(path)!r}: the file name is empty")
        existed = os.path.exists(path)
        try:
            with open(path, "ab"):
                pass
        except OSError as exc:
            raise NetsimError(f"cannot write {path}: {exc.strerror or exc}") from None
        if not existed:
            os.remove(path)


def check_png(*paths):
    """:func:`check_writable` for pictures: each path (None is skipped) also ends in ``.png``.

    Every picture netsim draws is a PNG, written under the name given: a name with
    another ending (``--png x.txt``, ``--png busbw``) would hold a PNG that its name
    says is something else, so it is refused with the other reasons a path cannot be
    written. The case of the ending does not matter (``X.PNG``); the null device
    (:data:`os.devnull`) is taken too, as the way to draw and discard.

    Parameters
    ----------
    *paths : str or path-like or None

    Raises
    ------
    NetsimError
        ``cannot write PATH: REASON`` for the first path that cannot be written, else the
        first that is not a PNG's name.

    Examples
    --------
    >>> import os, tempfile
    >>> check_png(None, os.path.join(tempfile.mkdtemp(), "x.txt"))  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    netsim.errors.NetsimError: cannot write .../x.txt: a picture is a PNG, its file name must end in .png
    """
    import os

    check_writable(*paths)  # first: a directory or a missing one is the plainer reason
    for path in paths:
        if path is not None and path != os.devnull and not os.fspath(path).lower().endswith(".png"):
            raise NetsimError(f"cannot write {path}: a picture is a PNG, its file name must end "
                              f"in .png")
    if any(path is not None for path in paths):
        _check_backend()


def _check_backend():
    """Refuse a ``MPLBACKEND`` that matplotlib does not know, before any work.

    matplotlib checks the variable when it is imported, which netsim does only to draw,
    at the end of the work, and raises a ``ValueError`` naming its rcParams key; the
    import is made here instead, where its refusal is one line.
    """
    import os

    name = os.environ.get("MPLBACKEND")
    if not name:
        return
    imported = "matplotlib" in sys.modules
    try:
        from matplotlib import rcsetup

        rcsetup.validate_backend(name)
    except ValueError:
        if not imported:  # a failed first import leaves matplotlib half-made: drop it, so
            for module in [m for m in sys.modules if m.split(".")[0] == "matplotlib"]:
                del sys.modules[module]  # that a later import (a test's) starts afresh
        raise NetsimError(f"MPLBACKEND={name!r} is not a backend matplotlib knows; unset it "
                          f"or give one such as agg") from None


def check_not_read(writes, reads):
    """Refuse, before any work, an output that is one of the command's inputs or lies in one,
    or that another of its outputs names too.

    A command that wrote over what it reads would lose the input (``netsim replay t.json
    --csv t.json``); one that wrote into a folder it reads whole (``netsim import kineto prof
    -o prof/rank0.json``) would overwrite a profile or, next time, read its own output as
    one (a file of another kind there, ``prof/job.npz``, is no input and passes). Paths are
    compared resolved (links, ``..``), so two spellings of one file are one.

    Parameters
    ----------
    writes : dict
        The command's outputs: option (``--csv``) -> path (None is skipped).
    reads : iterable of str or path-like or tuple
        What it reads: files, or folders read whole, or ``(folder, endings)``: the files of
        the folder whose names end so (None is skipped).

    Raises
    ------
    NetsimError
        ``OPTION PATH is the input X`` or ``... lies in the input folder X``.

    Examples
    --------
    >>> import os, tempfile
    >>> d = tempfile.mkdtemp()
    >>> check_not_read({"--csv": os.path.join(d, "t.csv")}, [os.path.join(d, "t.json")])
    >>> check_not_read({"--csv": os.path.join(d, ".", "t.json")}, [os.path.join(d, "t.json")])
    ... # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    netsim.errors.NetsimError: --csv .../t.json is the input .../t.json: writing it would overwrite what the command reads; give another name
    >>> check_not_read({"--csv": os.path.join(d, "o.json"), "--timeline": os.path.join(d, "o.json")},
    ...                [])  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    netsim.errors.NetsimError: --csv and --timeline both name .../o.json: the second would overwrite the first; give two names
    """
    import os

    named = {}  # resolved output -> the option naming it: two outputs in one file lose one
    for flag, out in writes.items():
        if out is None:
            continue
        target = os.path.realpath(out)
        if target in named:
            raise NetsimError(f"{named[target]} and {flag} both name {out}: the second would "
                              f"overwrite the first; give two names")
        named[target] = flag
        for path in reads:
            if path is None:
                continue
            path, endings = path if isinstance(path, tuple) else (path, ("",))
            source = os.path.realpath(path)
            if target == source:
                raise NetsimError(f"{flag} {out} is the input {path}: writing it would "
                                  f"overwrite what the command reads; give another name")
            if (os.path.isdir(source) and target.startswith(source.rstrip(os.sep) + os.sep)
                    and target.endswith(endings)):
                raise NetsimError(f"{flag} {out} lies in the input folder {path}, which the "
                                  f"command reads whole; write it elsewhere")


def check_options(args, **bounds):
    """Check integer options of ``args`` before any work: ``name=(minimum, maximum)``.

    Options that are None (not given) are skipped; the message names the
    option as it is spelled on the command line (``--seed``).

    Parameters
    ----------
    args : argparse.Namespace
    **bounds : tuple of (int, int or None)
        Attribute name -> its smallest and largest allowed value.

    Raises
    ------
    NetsimError
        Naming the option and its value (:func:`netsim.checks.check_int`).

    Examples
    --------
    >>> import argparse
    >>> check_options(argparse.Namespace(seed=-1), seed=(0, 2**32 - 1))
    Traceback (most recent call last):
    ...
    netsim.errors.NetsimError: --seed must be an integer in 0..4294967295, got -1
    """
    from netsim.checks import check_int

    for name, (lo, hi) in bounds.items():
        value = getattr(args, name, None)
        if value is not None:
            check_int(value, "--" + name.replace("_", "-"), minimum=lo, maximum=hi)
