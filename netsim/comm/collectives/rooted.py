"""Broadcast and reduce: binomial trees, linear pipelines (LP) and bidirectional exchange (BE).

See :mod:`netsim.comm.collectives` for the step semantics and the references.
"""

from types import MappingProxyType

import numpy as np

from netsim.comm.collectives.schedule import Schedule, build, doubling, identity, pof2, split

__all__ = ["binomial_broadcast", "binomial_reduce", "pipeline_broadcast", "pipeline_reduce",
           "pipeline_allreduce", "be_broadcast", "SCHEDULES"]


# -- broadcast and reduce trees ----------------------------------------------------------------

def _binomial_broadcast(P, nbytes, element=None):
    s = Schedule("binomial_broadcast", P, 1, nbytes, nbytes=nbytes)
    for b in range((P - 1).bit_length() - 1, -1, -1):
        m = 1 << b
        src = np.arange(0, P - m, 2 * m)
        s.step(src, src + m, 0, 1, "broadcast")
    return s


def binomial_broadcast(P, nbytes, element=None):
    """Binomial-tree (MST) broadcast from rank 0, MPICH's short-message broadcast.

    Rank r receives from r minus its lowest set bit; a parent sends to its
    children one after the other, the farthest (largest mask) first.
    ``ceil(log2 P)`` rounds of the whole message.

    Parameters
    ----------
    P : int
        Ranks, >= 1.
    nbytes : float
        Bytes to broadcast.
    element : int, optional
        Bytes per element (4 for float32): chunks are then whole elements, the first
        ``n % parts`` one element larger (:func:`~netsim.comm.collectives.schedule.split`);
        ``nbytes`` must be a whole number of elements. None (default): an even cut.

    Returns
    -------
    Trace
        ``P - 1`` messages of ``nbytes``.

    Examples
    --------
    >>> t = binomial_broadcast(8, 1e6)
    >>> t.num_messages, t.rank[:3].tolist(), t.peer[:3].tolist()
    (7, [0, 0, 4], [4, 2, 6])
    """
    return build(_binomial_broadcast, P, nbytes, element=element).trace()


def _binomial_reduce(P, nbytes, gamma=0.0, element=None):
    s = Schedule("binomial_reduce", P, 1, nbytes, gamma, nbytes=nbytes, gamma=gamma)
    for b in range((P - 1).bit_length()):
        m = 1 << b
        src = np.arange(m, P, 2 * m)
        s.step(src, src - m, 0, 1, "reduce", reduce=True)
    return s


def binomial_reduce(P, nbytes, gamma=0.0, element=None):
    """Binomial-tree (MST) reduce to rank 0 (MPICH's commutative reduce for short messages).

    Rank r sends to r minus its lowest set bit once it has received and reduced
    its own children, which it receives one at a time in increasing mask order.

    Parameters
    ----------
    P : int
        Ranks, >= 1.
    nbytes : float
        Bytes each rank contributes.
    gamma : float, optional
        Reduction cost, seconds per byte (0: no compute ops).
    element : int, optional
        Bytes per element (4 for float32): chunks are then whole elements, the first
        ``n % parts`` one element larger (:func:`~netsim.comm.collectives.schedule.split`);
        ``nbytes`` must be a whole number of elements. None (default): an even cut.

    Returns
    -------
    Trace

    Examples
    --------
    >>> t = binomial_reduce(4, 1e6, gamma=1e-10)
    >>> t.num_messages, t.num_ops
    (3, 6)
    """
    return build(_binomial_reduce, P, nbytes, gamma=gamma, element=element).trace()


# -- linear pipelines (LP) ---------------------------------------------------------------------

def _chain(s, P, k, reverse, tag, reduce):
    """k segments along 0 -> 1 -> ... -> P-1 (or the reverse), one wavefront per step."""
    for t in range(P + k - 2):
        d = np.arange(max(0, t - k + 1), min(P - 2, t) + 1)
        j = t - d
        src = P - 1 - d if reverse else d
        dst = src - 1 if reverse else src + 1
        s.step(src, dst, j, j + 1, tag, reduce=reduce, rendezvous=False, sendrecv=False)


def _pipeline_broadcast(P, nbytes, segments, element=None):
    s = Schedule("pipeline_broadcast", P, segments, split(nbytes, segments, element), nbytes=nbytes,
                  segments=segments)
    _chain(s, P, segments, False, "broadcast", False)
    return s


def pipeline_broadcast(P, nbytes, segments=1, element=None):
    """Linear-pipeline (LP) broadcast from rank 0 along the chain 0 -> 1 -> ... -> P-1.

    The message is cut into ``segments`` equal segments. Rank 0 sends them one
    after the other; every other rank forwards segment j as soon as it has
    arrived and its forward of segment j - 1 has completed (receives are eager).

    Parameters
    ----------
    P : int
        Ranks, >= 1.
    nbytes : float
        Bytes to broadcast.
    segments : int, optional
        Number of segments k, >= 1.
    element : int, optional
        Bytes per element (4 for float32): chunks are then whole elements, the first
        ``n % parts`` one element larger (:func:`~netsim.comm.collectives.schedule.split`);
        ``nbytes`` must be a whole number of elements. None (default): an even cut.

    Returns
    -------
    Trace
        ``(P - 1) * segments`` messages of ``nbytes / segments``.

    Examples
    --------
    >>> t = pipeline_broadcast(4, 1e6, segments=2)
    >>> t.num_messages, float(t.size[0])
    (6, 500000.0)
    """
    return build(_pipeline_broadcast, P, nbytes, segments=segments, element=element).trace()


def _pipeline_reduce(P, nbytes, segments, gamma=0.0, name="pipeline_reduce", element=None):
    s = Schedule(name, P, segments, split(nbytes, segments, element), gamma, nbytes=nbytes,
                  segments=segments, gamma=gamma)
    _chain(s, P, segments, True, "reduce", True)
    return s


def pipeline_reduce(P, nbytes, segments=1, gamma=0.0, element=None):
    """Linear-pipeline (LP) reduce to rank 0 along the chain P-1 -> ... -> 1 -> 0.

    Rank P-1 sends its segments one after the other; rank i reduces segment j
    when it arrives (after reducing segment j - 1) and forwards the reduced
    segment once its forward of segment j - 1 has completed.

    Parameters
    ----------
    P : int
        Ranks, >= 1.
    nbytes : float
        Bytes each rank contributes.
    segments : int, optional
        Number of segments k, >= 1.
    gamma : float, optional
        Reduction cost, seconds per byte.
    element : int, optional
        Bytes per element (4 for float32): chunks are then whole elements, the first
        ``n % parts`` one element larger (:func:`~netsim.comm.collectives.schedule.split`);
        ``nbytes`` must be a whole number of elements. None (default): an even cut.

    Returns
    -------
    Trace

    Examples
    --------
    >>> t = pipeline_reduce(3, 1e6, segments=4)
    >>> t.num_messages, int(t.rank[0]), int(t.peer[0])
    (8, 2, 1)
    """
    return build(_pipeline_reduce, P, nbytes, segments=segments, gamma=gamma,
                 element=element).trace()


def _pipeline_allreduce(P, nbytes, segments, gamma=0.0, element=None):
    s = _pipeline_reduce(P, nbytes, segments, gamma, "pipeline_allreduce", element)
    _chain(s, P, segments, False, "broadcast", False)
    return s


def pipeline_allreduce(P, nbytes, segments=1, gamma=0.0, element=None):
    """Linear-pipeline (LP) allreduce: :func:`pipeline_reduce` to rank 0, then
    :func:`pipeline_broadcast` from rank 0.

    The broadcast starts once rank 0 has reduced the last segment. Overlapping
    the two pipelines would put a reduce stream and a broadcast stream on the
    same link direction of every inner rank (its one NIC), so the phases are
    kept apart and every link direction carries one segment at a time.

    Parameters
    ----------
    P : int
        Ranks, >= 1.
    nbytes : float
        Bytes each rank contributes.
    segments : int, optional
        Number of segments k, >= 1.
    gamma : float, optional
        Reduction cost, seconds per byte.
    element : int, optional
        Bytes per element (4 for float32): chunks are then whole elements, the first
        ``n % parts`` one element larger (:func:`~netsim.comm.collectives.schedule.split`);
        ``nbytes`` must be a whole number of elements. None (default): an even cut.

    Returns
    -------
    Trace
        ``2 (P - 1) * segments`` messages.

    Examples
    --------
    >>> pipeline_allreduce(4, 1e6, segments=3).num_messages
    18
    """
    return build(_pipeline_allreduce, P, nbytes, segments=segments, gamma=gamma,
                 element=element).trace()


# -- bidirectional exchange (BE): scatter + allgather ------------------------------------------

def _be_broadcast(P, nbytes, element=None):
    p2 = pof2(P)
    s = Schedule("be_broadcast", P, p2, split(nbytes, p2, element), nbytes=nbytes)
    m = p2 // 2
    while m >= 1:  # binomial scatter: rank r sends the blocks of its child's subtree
        src = np.arange(0, p2, 2 * m)
        s.step(src, src + m, src + m, src + 2 * m, "scatter")
        m //= 2
    doubling(s, p2, identity, identity)
    extra = np.arange(p2, P)
    s.step(extra - p2, extra, 0, p2, "unfold")
    return s


def be_broadcast(P, nbytes, element=None):
    """Bidirectional-exchange (BE) broadcast: binomial scatter, then recursive-doubling allgather.

    MPICH's ``bcast_scatter_rec_dbl_allgather`` (van de Geijn): rank 0's
    message is cut into ``p'`` blocks (``p' = 2**floor(log2 P)``), scattered
    down a binomial tree over ranks ``0..p'-1`` and gathered back by recursive
    doubling. For non-power-of-two P, extra rank r then receives the whole
    message from rank ``r - p'``.

    Parameters
    ----------
    P : int
        Ranks, >= 1.
    nbytes : float
        Bytes to broadcast.
    element : int, optional
        Bytes per element (4 for float32): chunks are then whole elements, the first
        ``n % parts`` one element larger (:func:`~netsim.comm.collectives.schedule.split`);
        ``nbytes`` must be a whole number of elements. None (default): an even cut.

    Returns
    -------
    Trace

    Examples
    --------
    >>> t = be_broadcast(4, 4e6)
    >>> t.num_messages, t.size.tolist()[:3]
    (11, [2000000.0, 1000000.0, 1000000.0])
    """
    return build(_be_broadcast, P, nbytes, element=element).trace()


# Name -> schedule function, for netsim.comm.collectives.payloads.
SCHEDULES = MappingProxyType({
    "binomial_broadcast": _binomial_broadcast,
    "binomial_reduce": _binomial_reduce,
    "pipeline_broadcast": _pipeline_broadcast,
    "pipeline_reduce": _pipeline_reduce,
    "pipeline_allreduce": _pipeline_allreduce,
    "be_broadcast": _be_broadcast,
})
