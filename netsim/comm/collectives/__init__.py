"""Collective algorithms as traces: MPICH's schedules, written as dependency graphs.

Every generator takes ``P`` ranks and ``nbytes`` and returns a
:class:`~netsim.trace.core.Trace` built column-wise with numpy (a Python loop per
step, never per message), so ``ring_allreduce(1024, 100e6)`` (2,095,104
messages) is built in well under a second.

Step semantics (MPICH)
----------------------
An algorithm is a sequence of steps; in a step a rank posts Irecv + Isend and
waits for both (Waitall). So every message of a rank waits for the rank's
previous send and previous receive, and a received contribution is reduced
(with ``gamma > 0``) once both the send and the receive of its step are done,
as MPICH calls ``MPIR_Reduce_local`` after ``MPIC_Sendrecv``.

Where a receiver may still be busy with an earlier step -- trees, and the
fold of non-power-of-two ``P`` -- a message also waits for the receiver to have
finished its previous step (it has posted its receive: MPICH's rendezvous
protocol for large messages). This keeps every link direction of a
non-blocking star carrying at most one message at a time, so the closed forms
of :mod:`netsim.costmodel` are exact there. Ring, pairwise and pipelined
schedules, whose ranks are always in the same step, leave that dependency out:
it would change no time and only add dependencies.

The linear pipelines (LP) differ: receives are eager. Each rank forwards
segments in order, forward ``j`` starting when segment ``j`` has arrived (and
been reduced) and forward ``j - 1`` has completed.

Non-power-of-two ``P``
----------------------
As MPICH: with ``p' = 2**floor(log2 P)`` and ``rem = P - p'``, the even ranks
below ``2 rem`` first send to their odd neighbour (fold), the ``p'`` remaining
ranks run the power-of-two core, and the odd ranks send the result back
(unfold). Core rank ``i`` is real rank ``2i + 1`` for ``i < rem``, else
``i + rem``. A broadcast has nothing to fold: its core is ranks ``0..p'-1`` and
extra rank ``r`` receives the result from rank ``r - p'``.

Whole elements
--------------
By default chunks are cut evenly (``nbytes / P`` may be 65.5 bytes). With
``element`` (bytes per element, e.g. 4 for float32) every generator cuts whole
elements as MPICH and NCCL do: of ``n`` elements in ``c`` chunks the first
``n % c`` get ``n // c + 1``, the others ``n // c``; the total stays exact
(:func:`~netsim.comm.collectives.schedule.split`). Where the cut is even the trace
is the same as without ``element``, so the closed forms still hold.

Reduction cost
--------------
``gamma`` (seconds per byte) turns each reduction of ``b`` received bytes into a
compute op of ``gamma * b`` seconds on the receiver; ``gamma = 0`` (the
default) adds no compute ops.

What each message carries
-------------------------
:func:`payloads` returns, from the same schedule code, the chunks each message
carries (``[lo, hi)`` in a chunk space given per algorithm) and whether the
receiver adds them to what it holds (a reduction) or replaces it (a copy).
Tests replay this symbolically to prove each schedule correct.

References
----------
R. Thakur, R. Rabenseifner and W. Gropp, "Optimization of collective
communication operations in MPICH", IJHPCA 19(1), 2005.
P. Patarasuk and X. Yuan, "Bandwidth optimal all-reduce algorithms for
clusters of workstations", JPDC 69(2), 2009.
Y. Zhao, L. Wang et al., "Efficient communications in training large scale
neural networks" (linear pipelining), arXiv:1611.04255, 2016.
"""

import inspect
from types import MappingProxyType

from netsim.comm.collectives import allreduce, exchange, rooted
from netsim.comm.collectives.allreduce import (rabenseifner_allreduce, recursive_doubling_allgather,
                        recursive_doubling_allreduce, recursive_halving_reduce_scatter,
                        ring_allgather, ring_allreduce, ring_reduce_scatter)
from netsim.comm.collectives.exchange import alltoall, ps_push_pull
from netsim.comm.collectives.rooted import (be_broadcast, binomial_broadcast, binomial_reduce, pipeline_allreduce,
                     pipeline_broadcast, pipeline_reduce)
from netsim.comm.collectives.schedule import build
from netsim.errors import TraceError

__all__ = [
    "binomial_broadcast",
    "binomial_reduce",
    "pipeline_broadcast",
    "pipeline_reduce",
    "pipeline_allreduce",
    "be_broadcast",
    "recursive_doubling_allreduce",
    "rabenseifner_allreduce",
    "ring_allreduce",
    "ring_allgather",
    "ring_reduce_scatter",
    "recursive_doubling_allgather",
    "recursive_halving_reduce_scatter",
    "alltoall",
    "ps_push_pull",
    "payloads",
]

# Every generator's schedule function, by name, in the order of __all__.
_SCHEDULES = MappingProxyType({name: {**rooted.SCHEDULES, **allreduce.SCHEDULES,
                                      **exchange.SCHEDULES}[name] for name in __all__[:-1]})


def payloads(generator, P, nbytes, **options):
    """A collective's trace together with what each of its messages carries.

    Both come from the same schedule code, so a symbolic replay of the
    payloads checks the trace itself.

    Parameters
    ----------
    generator : callable or str
        One of this module's generators (or its name), e.g. ``ring_allreduce``.
    P, nbytes
        As for the generator.
    **options
        The generator's other arguments (``segments``, ``gamma``, ``servers``).

    Returns
    -------
    trace : Trace
        Exactly what ``generator(P, nbytes, **options)`` returns.
    payload : dict
        ``chunks`` (size of the chunk space), ``chunk_bytes`` (one number, or
        per chunk with ``element``), and per op
        ``lo``, ``hi`` (the message carries chunks ``[lo, hi)``; -1 for
        compute ops) and ``reduce`` (True: the receiver adds the chunks to its
        own; False: it replaces them). Chunk spaces: one chunk (binomial, RD),
        the k segments (LP), the ``p'`` blocks (BE, Rabenseifner), chunk r of
        rank r (ring, RD allgather, RH reduce-scatter), block ``o * P + d``
        from rank o for rank d (all-to-all), shard k of server k (PS).

    Raises
    ------
    TraceError
        For an unknown generator or bad arguments.

    Examples
    --------
    >>> t, p = payloads(ring_allgather, 3, 3e6)
    >>> p["lo"].tolist(), t.rank.tolist()
    ([0, 1, 2, 2, 0, 1], [0, 1, 2, 0, 1, 2])
    """
    name = generator if isinstance(generator, str) else getattr(generator, "__name__", None)
    if name not in _SCHEDULES:
        raise TraceError(f"unknown collective {generator!r}; known: {', '.join(_SCHEDULES)}")
    accepted = set(inspect.signature(globals()[name]).parameters) - {"P", "nbytes"}
    unknown = set(options) - accepted
    if unknown:
        raise TraceError(f"{name} takes no option {sorted(unknown)[0]!r}; it takes "
                         f"{sorted(accepted) or 'none'}")
    s = build(_SCHEDULES[name], P, nbytes, **options)
    return s.trace(), s.payload()
