"""Personalised exchange: pairwise all-to-all and parameter-server push/pull.

See :mod:`netsim.comm.collectives` for the step semantics.
"""

from types import MappingProxyType

import numpy as np

from netsim.comm.collectives.schedule import Schedule, build, split

__all__ = ["alltoall", "ps_push_pull", "SCHEDULES"]


def _alltoall(P, nbytes, element=None):
    block = split(nbytes, P, element)  # rank o's block for rank d is chunk o * P + d
    s = Schedule("alltoall", P, P * P, block if element is None else np.tile(block, P),
                 nbytes=nbytes)
    r = np.arange(P)
    for k in range(1, P):
        d = (r + k) % P
        s.step(r, d, r * P + d, r * P + d + 1, "alltoall", rendezvous=False)
    return s


def alltoall(P, nbytes, element=None):
    """Pairwise-exchange all-to-all (MPICH's long-message alltoall).

    Rank r holds ``nbytes``: P blocks of ``nbytes / P``, block d for rank d.
    In step s = 1..P-1 it sends block ``r + s`` to rank ``(r + s) mod P`` and
    receives from ``(r - s) mod P``. (MPICH pairs by XOR when P is a power of
    two; on a non-blocking network both give the same times.)

    Parameters
    ----------
    P : int
        Ranks, >= 1.
    nbytes : float
        Bytes each rank sends in all, its own block included.
    element : int, optional
        Bytes per element (4 for float32): chunks are then whole elements, the first
        ``n % parts`` one element larger (:func:`~netsim.comm.collectives.schedule.split`);
        ``nbytes`` must be a whole number of elements. None (default): an even cut.

    Returns
    -------
    Trace
        ``P (P - 1)`` messages.

    Examples
    --------
    >>> alltoall(4, 4e6).num_messages
    12
    """
    return build(_alltoall, P, nbytes, element=element).trace()


# -- parameter server ------------------------------------------------------------------------

def _ps_push_pull(P, nbytes, servers=1, gamma=0.0, element=None):
    S = servers
    s = Schedule("ps_push_pull", P + S, S, split(nbytes, S, element), gamma,
                 nbytes=nbytes, workers=P,
                  servers=S, gamma=gamma)
    w = np.repeat(np.arange(P), S)
    k = np.tile(np.arange(S), P)
    push = s.messages(w, P + k, k, k + 1, "push", reduce=True)
    into = push.reshape(P, S).T  # into[k]: the pushes to server k
    if gamma > 0:
        shard = nbytes / S if element is None else s.chunk_bytes
        ready = s.computes(P + np.arange(S), gamma * (P - 1) * shard, "reduce", into)[:, None]
    else:
        ready = into
    k = np.repeat(np.arange(S), P)
    w = np.tile(np.arange(P), S)
    s.messages(P + k, w, k, k + 1, "pull", deps=ready[k])
    return s


def ps_push_pull(P, nbytes, servers=1, gamma=0.0, element=None):
    """Parameter-server push/pull: P workers push gradients, servers answer pulls.

    Ranks ``0..P-1`` are workers and ``P..P+S-1`` servers; parameters are
    sharded evenly, ``nbytes / S`` per server. Every worker pushes its shard
    to every server at once; a server sums the P pushes (``gamma (P - 1)
    nbytes / S`` seconds when ``gamma > 0``) and then sends the new shard to
    every worker.

    Parameters
    ----------
    P : int
        Workers, >= 1.
    nbytes : float
        Bytes of gradients (and parameters) per worker.
    servers : int, optional
        Servers S, >= 1.
    gamma : float, optional
        Reduction cost, seconds per byte.
    element : int, optional
        Bytes per element (4 for float32): chunks are then whole elements, the first
        ``n % parts`` one element larger (:func:`~netsim.comm.collectives.schedule.split`);
        ``nbytes`` must be a whole number of elements. None (default): an even cut.

    Returns
    -------
    Trace
        ``P + S`` ranks and ``2 P S`` messages.

    Examples
    --------
    >>> t = ps_push_pull(4, 1e6, servers=2)
    >>> t.ranks, t.num_messages, float(t.size[0])
    (6, 16, 500000.0)
    """
    return build(_ps_push_pull, P, nbytes, servers=servers, gamma=gamma, element=element).trace()


# Name -> schedule function, for netsim.comm.collectives.payloads.
SCHEDULES = MappingProxyType({"alltoall": _alltoall, "ps_push_pull": _ps_push_pull})
