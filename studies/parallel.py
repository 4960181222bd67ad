"""Independent jobs side by side in worker processes, with progress and a clean Ctrl-C.

:func:`run_jobs` runs ``(key, function, options)`` jobs in a pool of processes
(or in this one) and returns each result by its key. The results do not depend
on the number of processes. A Ctrl-C (SIGINT to the whole process group, as a
terminal sends it) reaches only this process: the workers never act on it
(:func:`ctrl_c_deferred`, which the Dask sweep uses too), so they print no
traceback each, and this process stops them and raises
:class:`KeyboardInterrupt` (``netsim: interrupted``, exit 130). A
job that fails stops the others too, and its exception is raised here.

Examples
--------
>>> run_jobs([("a", round, {"number": 2.567, "ndigits": 1}), ("b", pow, {"base": 2, "exp": 10})], 2)
{'a': 2.6, 'b': 1024}
"""

import contextlib
import signal
import threading

from netsim.checks import check_int

__all__ = ["run_jobs", "ctrl_c_deferred"]


_WAKE = 0.5
"""Seconds the parent waits for a result before it looks for a Ctrl-C again."""


def _call(job):
    """Run one job (in a worker process): ``(key, result)``."""
    key, func, kwargs = job
    return key, func(**kwargs)


@contextlib.contextmanager
def ctrl_c_deferred():
    """Start worker processes inside: a Ctrl-C meanwhile is noted, and raised on leaving.

    A terminal's Ctrl-C is SIGINT to the whole process group, workers included.
    Inside, a handler that merely notes it stands in for the usual one, and
    SIGINT is blocked in this thread (threads started inside inherit that): a
    Ctrl-C the kernel hands to any thread is noted, never lost (SIG_IGN here
    lost one that landed on a thread not blocking it, and the whole sweep ran).
    Forked workers keep the noting handler, so they never act on it; spawned
    ones (a new interpreter: Dask's) ignore it from their first import of
    :mod:`studies`. On leaving, the mask is restored first (a Ctrl-C held
    pending reaches the noting handler), then the handler; a noted Ctrl-C is
    raised as :class:`KeyboardInterrupt`, for the caller to stop the workers it
    started, even when the start failed meanwhile (a spawned worker the Ctrl-C reached
    before its first import of :mod:`studies` dies, and Dask raises "Nanny failed to
    start": the Ctrl-C is the cause). Outside the main thread (no signals there) it does nothing.

    Examples
    --------
    >>> with ctrl_c_deferred():
    ...     workers = []  # start them here
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    pressed = []
    previous = signal.signal(signal.SIGINT, lambda signum, frame: pressed.append(signum))
    mask = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, mask)  # runs the noting handler if pending
        signal.signal(signal.SIGINT, previous)
        if pressed:  # also over a failure it caused: a worker it reached before its
            raise KeyboardInterrupt  # first import fails to start ("Nanny failed to start")


def run_jobs(work, processes, progress=None):
    """Run every job, in ``processes`` worker processes; each result by its key.

    Parameters
    ----------
    work : sequence of tuple
        ``(key, function, options)``: ``function(**options)`` is the job; the
        key (hashable, distinct) names its result. Functions and options must
        pickle (module-level functions, plain values). Jobs are handed out in
        this order as workers come free, so put the longest first.
    processes : int
        Worker processes (1: every job in this process, in order).
    progress : callable, optional
        Called as ``progress(jobs_done, jobs)`` after each job.

    Returns
    -------
    dict
        Key -> the job's result, in the order of ``work``.

    Raises
    ------
    KeyboardInterrupt
        On Ctrl-C, once every worker is stopped.
    netsim.errors.NetsimError
        For ``processes`` below 1; any exception of a job is raised as it is.

    Examples
    --------
    >>> done = []
    >>> run_jobs([(i, pow, {"base": i, "exp": 2}) for i in range(3)], 1,
    ...          lambda k, n: done.append((k, n)))
    {0: 0, 1: 1, 2: 4}
    >>> done
    [(1, 3), (2, 3), (3, 3)]
    """
    processes = check_int(processes, "processes")
    results = {}
    if processes == 1 or len(work) <= 1:
        for job in work:
            key, results[key] = _call(job)
            if progress is not None:
                progress(len(results), len(work))
        return results
    import multiprocessing

    pool = None
    try:
        with ctrl_c_deferred():
            pool = multiprocessing.Pool(min(processes, len(work)))
        done = pool.imap_unordered(_call, work)
        while len(results) < len(work):
            try:
                # a bounded wait: a Ctrl-C the kernel hands to another thread of this process
                # (a BLAS or numba thread) sets Python's flag without waking this one, which
                # would wait on forever; waking twice a second runs the handler
                key, result = done.next(timeout=_WAKE)
            except multiprocessing.TimeoutError:
                continue
            results[key] = result
            if progress is not None:
                progress(len(results), len(work))
    except BaseException:  # a Ctrl-C or a failed job: stop every worker now
        if pool is not None:
            pool.terminate()
        raise
    else:
        pool.close()
    finally:
        if pool is not None:
            pool.join()
    return {key: results[key] for key, _, _ in work}  # in the order of the work, as with 1
