"""Files written whole or not at all: a temporary file beside the target, renamed onto it.

A command interrupted while it writes (a Ctrl-C during a large graph's drawing or a large
trace's JSON) left its output empty or cut short under the name asked for, looking
written. :func:`write_whole` fills a temporary file in the same directory and renames it
onto the target only once the writer has returned (``os.replace``: atomic on POSIX within
one file system); on any error or interrupt the temporary file is removed and the target
is as it was.
"""

import os
import stat
import tempfile

__all__ = ["write_whole"]


def write_whole(path, writer, binary=False):
    """Call ``writer(file)`` on a temporary file and move it onto ``path`` once it returns.

    A path that exists and is not a regular file (the null device, a pipe) is written
    directly: there is nothing to replace. The new file gets the permissions ``open``
    would have given it (0666 less the umask).

    Parameters
    ----------
    path : str or path-like
    writer : callable
        Called with the open file.
    binary : bool, optional
        Open in binary mode.

    Raises
    ------
    OSError
        Where the file cannot be written (the caller names the path).

    Examples
    --------
    >>> import os, tempfile
    >>> p = os.path.join(tempfile.mkdtemp(), "x.txt"); write_whole(p, lambda f: f.write("old"))
    >>> def fails(f):
    ...     f.write("half")
    ...     raise KeyboardInterrupt
    >>> try:
    ...     write_whole(p, fails)
    ... except KeyboardInterrupt:
    ...     pass
    >>> open(p).read(), os.listdir(os.path.dirname(p))
    ('old', ['x.txt'])
    """
    mode = "wb" if binary else "w"
    if os.path.exists(path) and not stat.S_ISREG(os.stat(path).st_mode):
        with open(path, mode) as f:
            writer(f)
        return
    fd, tmp = tempfile.mkstemp(prefix=".netsim-", suffix=".part",
                               dir=os.path.dirname(os.path.abspath(path)))
    try:
        with os.fdopen(fd, mode) as f:
            writer(f)
        os.chmod(tmp, 0o666 & ~_umask())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def _umask():
    """The process's umask (read by setting it and back: there is no other way)."""
    mask = os.umask(0)
    os.umask(mask)
    return mask
