"""Progress bars for long work: on a terminal only, and never under ``--quiet``.

The convention of every ``netsim`` command: recordings, sweeps and long
replays show a `tqdm <https://tqdm.github.io>`_ bar on standard error when it
is a terminal, and nothing when it is not (a pipe, a file, CI) or when the user
asked for quiet. Results go to standard output, so a bar never mixes with
``--json`` output.

:class:`Progress` is one bar with a callable interface that fits every
progress hook of the project: :func:`netsim.simulate` calls ``progress(ops_done)``,
a paradigm's ``run`` calls ``progress(epochs_done, epochs)`` and a sweep calls
``progress(points_done, points)``. Without tqdm installed, bars are simply not shown.
"""

import sys

__all__ = ["Progress", "show_progress"]


def show_progress(quiet=False, stream=None):
    """Whether to draw a bar: not ``quiet`` and ``stream`` (stderr) is a terminal.

    Parameters
    ----------
    quiet : bool
        The user asked for no progress output (``--quiet``).
    stream : file, optional
        Where the bar would go; default ``sys.stderr``.

    Examples
    --------
    >>> import io
    >>> show_progress(stream=io.StringIO()), show_progress(quiet=True)
    (False, False)
    """
    if quiet:
        return False
    stream = sys.stderr if stream is None else stream
    isatty = getattr(stream, "isatty", None)
    try:
        return bool(isatty and isatty())
    except ValueError:  # a closed stream
        return False


class Progress:
    """A progress bar you call with the work done so far.

    Parameters
    ----------
    total : int or None
        Units of work (None if unknown).
    desc : str, optional
        Label shown before the bar.
    show : bool, optional
        Draw the bar; default :func:`show_progress` (stderr is a terminal).
    initial : int, optional
        Work already done (e.g. sweep points found in the output).
    unit : str, optional
        Name of one unit of work ("op", "epoch", "point").
    delay : float, optional
        Seconds before the bar first appears, so that short work shows nothing.
    stream : file, optional
        Where to draw; default ``sys.stderr``.

    Examples
    --------
    Off a terminal the bar draws nothing but still counts:

    >>> import io
    >>> with Progress(10, "points", stream=io.StringIO()) as bar:
    ...     bar(4); bar(7, 12)
    >>> bar.done, bar.total, bar.drawn
    (7, 12, False)
    """

    def __init__(self, total, desc="", show=None, initial=0, unit="it", delay=0.0, stream=None):
        self.total = total
        self.done = initial
        stream = sys.stderr if stream is None else stream
        if show is None:
            show = show_progress(stream=stream)
        self._bar = None
        if show:
            try:
                from tqdm import tqdm
            except ImportError:  # bars are a nicety: without tqdm there are none
                tqdm = None
            if tqdm is not None:
                self._bar = tqdm(total=total, desc=desc, initial=initial, unit=unit,
                                 delay=delay, file=stream, leave=False, dynamic_ncols=True)

    @property
    def drawn(self):
        """Whether a bar is drawn: a caller may skip the hook otherwise (``simulate``
        replays the usual desynchronised instant faster without a progress hook)."""
        return self._bar is not None

    def __call__(self, done, total=None):
        """Record that ``done`` units are finished (of ``total``, if it changed)."""
        if total is not None and total != self.total:
            self.total = total
            if self._bar is not None:
                self._bar.total = total
                self._bar.refresh()
        step = done - self.done
        self.done = done
        if self._bar is not None and step:
            self._bar.update(step)  # tqdm throttles the redraws itself

    def close(self):
        """Remove the bar from the terminal."""
        if self._bar is not None:
            self._bar.close()
            self._bar = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False
