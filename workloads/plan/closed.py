"""What every paradigm's alpha-beta closed form shares: roles, per-iteration terms.

A paradigm module's ``closed_form(trace, alpha, beta, device_flops=None)``
takes its recorded (or scheduled) trace and the two plain numbers of
:func:`netsim.costmodel.alpha_beta` (latency ``alpha`` in seconds, inverse
bandwidth ``beta`` in seconds per byte; the caller derives them from a
topology) and returns the seconds of one iteration, averaged over the
iterations, as :func:`terms` builds them: ``compute`` (the largest worker
compute), ``server`` (the largest server or master compute, on the critical
path of every synchronous paradigm here), ``communication`` and ``time =
compute + server + communication``, with a few words of ``formula``. A
paradigm without one (asynchronous, pipelined) says why in its module's
``NO_CLOSED_FORM``.
"""

from typing import NamedTuple

import numpy as np

from netsim import costmodel
from netsim.trace.core import COMPUTE

__all__ = ["Asymptotic", "worker_mask", "per_iteration", "worker_compute", "terms"]


class Asymptotic(NamedTuple):
    """A paradigm's worst-case cost per iteration in P workers, S servers and n parameters
    (float32: 4n bytes), as its module's ``ASYMPTOTIC`` states it for the table of docs/studies.md.

    ``alpha`` is a message's latency, ``beta`` seconds per byte, ``C`` one worker's
    forward and backward seconds on its batch, ``F`` the device's FLOP/s.
    ``communication`` and ``computation`` are the closed form's terms (its
    module's ``closed_form`` computes them from a trace); ``order`` their orders.

    Examples
    --------
    >>> from workloads.paradigms import ps_sync
    >>> ps_sync.ASYMPTOTIC.order
    'O(P n / S) bytes on a server link; O(C + P n / S) compute'
    """

    scheme: str
    architecture: str
    communication: str
    computation: str
    order: str
    source: str


def worker_mask(trace):
    """Per rank, whether it is a worker (True) or a server or master (False).

    From ``metadata["roles"]``, else the last ``metadata["servers"]`` ranks are servers.

    Parameters
    ----------
    trace : Trace

    Returns
    -------
    numpy.ndarray of bool

    Examples
    --------
    >>> from netsim import TraceBuilder
    >>> b = TraceBuilder(3, metadata={"servers": 1}); _ = b.message(0, 2, 8)
    >>> worker_mask(b.build()).tolist()
    [True, True, False]
    """
    meta = trace.metadata
    roles = meta.get("roles")
    if roles is None or len(roles) != trace.ranks:
        servers = int(meta.get("servers", 0) or 0)
        roles = ["worker"] * (trace.ranks - servers) + ["server"] * servers
    return np.array([r == "worker" for r in roles])


def per_iteration(values, ranks, iteration, ranks_mask, nranks, niter, reduce):
    """Values summed per (iteration, rank), then reduced over the selected ranks.

    Parameters
    ----------
    values, ranks, iteration : numpy.ndarray
        One entry per op: its value, rank and iteration.
    ranks_mask : numpy.ndarray of bool
        Per rank, whether it takes part in the reduction.
    nranks, niter : int
        Ranks and iterations of the trace.
    reduce : callable
        ``numpy.max``, ``numpy.mean``, ... applied along the ranks.

    Returns
    -------
    numpy.ndarray
        One value per iteration (zeros when no rank is selected).

    Examples
    --------
    >>> import numpy as np
    >>> per_iteration(np.array([1.0, 2.0, 4.0]), np.array([0, 0, 1]), np.array([0, 0, 1]),
    ...               np.array([True, True]), 2, 2, np.max).tolist()
    [3.0, 4.0]
    """
    grid = np.zeros((niter, nranks))
    np.add.at(grid, (iteration, ranks), values)
    sel = grid[:, ranks_mask]
    if sel.shape[1] == 0:
        return np.zeros(niter)
    return reduce(sel, axis=1)


def worker_compute(trace, device_flops):
    """Mean over iterations of the largest worker's compute seconds per iteration.

    Parameters
    ----------
    trace : Trace
    device_flops : float or None
        FLOP/s of the compute ops (None: the trace's metadata).

    Returns
    -------
    float

    Examples
    --------
    >>> from netsim import TraceBuilder
    >>> b = TraceBuilder(2)
    >>> _ = b.compute(0, seconds=1.0, iteration=0); _ = b.compute(1, seconds=3.0, iteration=0)
    >>> _ = b.compute(0, seconds=2.0, iteration=1)
    >>> worker_compute(b.build(), None)  # max(1, 3) and 2, averaged
    2.5
    """
    seconds = trace.compute_seconds(device_flops)
    comp = trace.kind == COMPUTE
    niter = max(trace.num_iterations, 1)
    per = per_iteration(seconds[comp], trace.rank[comp], trace.iteration[comp], worker_mask(trace),
                        trace.ranks, niter, np.max)
    return float(per.mean())


def terms(trace, communication, device_flops, formula):
    """The closed form's seconds per iteration, given its communication per iteration.

    Parameters
    ----------
    trace : Trace
    communication : numpy.ndarray
        Seconds of communication of each iteration.
    device_flops : float or None
        FLOP/s of the compute ops (None: the trace's metadata).
    formula : str
        A few words naming the formula.

    Returns
    -------
    dict
        ``compute`` (the largest worker's), ``server`` (the largest server's),
        ``communication`` and ``time`` (their sum), each averaged over the
        iterations, and ``formula``.

    Examples
    --------
    >>> import numpy as np
    >>> from netsim import TraceBuilder
    >>> b = TraceBuilder(2, metadata={"servers": 1})
    >>> _ = b.compute(0, seconds=1.0); _ = b.compute(1, seconds=0.5)
    >>> cf = terms(b.build(), np.array([2.0]), None, "compute + 2 s")
    >>> cf["compute"], cf["server"], cf["communication"], cf["time"]
    (1.0, 0.5, 2.0, 3.5)
    """
    seconds = trace.compute_seconds(device_flops)
    niter = max(trace.num_iterations, 1)
    worker = worker_mask(trace)
    comp = trace.kind == COMPUTE
    it, rk = trace.iteration[comp], trace.rank[comp]
    w_comp = per_iteration(seconds[comp], rk, it, worker, trace.ranks, niter, np.max)
    s_comp = per_iteration(seconds[comp], rk, it, ~worker, trace.ranks, niter, np.max)
    compute, server = float(w_comp.mean()), float(s_comp.mean())
    comm = float(np.asarray(communication, dtype=float).mean())
    return {"compute": compute, "server": server, "communication": comm,
            "time": compute + server + comm, "formula": formula}
