"""Allreduce, allgather and reduce-scatter: recursive doubling and halving, Rabenseifner, ring.

See :mod:`netsim.comm.collectives` for the step semantics, the fold of non-power-of-two
P and the references.
"""

from types import MappingProxyType

import numpy as np

from netsim.comm.collectives.schedule import (Schedule, build, chunk_start, doubling, fold, fold_core, halving, identity,
                       split,
                       unfold)

__all__ = ["recursive_doubling_allreduce", "rabenseifner_allreduce", "ring_allreduce",
           "ring_allgather", "ring_reduce_scatter", "recursive_doubling_allgather",
           "recursive_halving_reduce_scatter", "SCHEDULES"]


# -- allreduce -------------------------------------------------------------------------------------

def _recursive_doubling_allreduce(P, nbytes, gamma=0.0, element=None):
    s = Schedule("recursive_doubling_allreduce", P, 1, nbytes, gamma, nbytes=nbytes,
                  gamma=gamma)
    p2, rem, real = fold_core(P)
    fold(s, rem, 0, 1, True)
    nr = np.arange(p2)
    m = 1
    while m < p2:
        s.step(real(nr), real(nr ^ m), 0, 1, "exchange", reduce=True)
        m *= 2
    unfold(s, rem, 0, 1)
    return s


def recursive_doubling_allreduce(P, nbytes, gamma=0.0, element=None):
    """Recursive-doubling allreduce (MPICH's short-message allreduce).

    In step s every core rank exchanges its whole vector with the rank
    ``2**s`` away and reduces. Non-power-of-two P folds and unfolds.

    Parameters
    ----------
    P : int
        Ranks, >= 1.
    nbytes : float
        Bytes each rank contributes.
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
    >>> recursive_doubling_allreduce(8, 1e6).num_messages
    24
    >>> recursive_doubling_allreduce(5, 1e6).num_messages  # fold 1 + 4 * 2 + unfold 1
    10
    """
    return build(_recursive_doubling_allreduce, P, nbytes, gamma=gamma, element=element).trace()


def _rabenseifner_allreduce(P, nbytes, gamma=0.0, element=None):
    p2, rem, real = fold_core(P)
    s = Schedule("rabenseifner_allreduce", P, p2, split(nbytes, p2, element), gamma, nbytes=nbytes,
                  gamma=gamma)
    fold(s, rem, 0, p2, True)
    halving(s, p2, real, identity)
    doubling(s, p2, real, identity)
    unfold(s, rem, 0, p2)
    return s


def rabenseifner_allreduce(P, nbytes, gamma=0.0, element=None):
    """Rabenseifner's allreduce: reduce-scatter by recursive halving, then allgather by
    recursive doubling (bidirectional exchange, BE; MPICH's long-message allreduce).

    The vector is cut into ``p'`` blocks. In reduce-scatter step s a core rank
    sends half of its current range to the rank ``p' / 2**s`` away and reduces
    the half it keeps; the allgather retraces the steps with doubling blocks.
    Non-power-of-two P folds and unfolds.

    Parameters
    ----------
    P : int
        Ranks, >= 1.
    nbytes : float
        Bytes each rank contributes.
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
    >>> t = rabenseifner_allreduce(4, 4e6)
    >>> t.num_messages, sorted(set(t.size.tolist()))
    (16, [1000000.0, 2000000.0])
    """
    return build(_rabenseifner_allreduce, P, nbytes, gamma=gamma, element=element).trace()


def _ring_steps(s, P, kind):
    r = np.arange(P)
    nxt = (r + 1) % P
    for k in range(P - 1):
        if kind == "reduce-scatter":
            c = (r - k - 1) % P
            s.step(r, nxt, c, c + 1, kind, reduce=True, rendezvous=False)
        else:
            c = (r - k) % P
            s.step(r, nxt, c, c + 1, kind, rendezvous=False)


def _ring_allreduce(P, nbytes, gamma=0.0, element=None):
    s = Schedule("ring_allreduce", P, P, split(nbytes, P, element), gamma,
                 nbytes=nbytes, gamma=gamma)
    _ring_steps(s, P, "reduce-scatter")
    _ring_steps(s, P, "allgather")
    return s


def ring_allreduce(P, nbytes, gamma=0.0, element=None):
    """Ring allreduce: ring reduce-scatter, then ring allgather.

    The vector is cut into P chunks; in each of ``2 (P - 1)`` steps every rank
    sends one chunk (``nbytes / P``) to its right neighbour. After the
    reduce-scatter rank r holds the reduced chunk r.

    Parameters
    ----------
    P : int
        Ranks, >= 1.
    nbytes : float
        Bytes each rank contributes.
    gamma : float, optional
        Reduction cost, seconds per byte.
    element : int, optional
        Bytes per element (4 for float32): chunks are then whole elements, the first
        ``n % parts`` one element larger (:func:`~netsim.comm.collectives.schedule.split`);
        ``nbytes`` must be a whole number of elements. None (default): an even cut.

    Returns
    -------
    Trace
        ``2 (P - 1) P`` messages.

    Examples
    --------
    >>> ring_allreduce(1024, 100e6).num_messages
    2095104
    """
    return build(_ring_allreduce, P, nbytes, gamma=gamma, element=element).trace()


# -- allgather, reduce-scatter, all-to-all ----------------------------------------------------

def _ring_allgather(P, nbytes, element=None):
    s = Schedule("ring_allgather", P, P, split(nbytes, P, element), nbytes=nbytes)
    _ring_steps(s, P, "allgather")
    return s


def ring_allgather(P, nbytes, element=None):
    """Ring allgather: P - 1 steps, each rank forwarding one chunk to its right neighbour.

    Parameters
    ----------
    P : int
        Ranks, >= 1.
    nbytes : float
        Bytes of the gathered result; rank r contributes chunk r (``nbytes / P``).
    element : int, optional
        Bytes per element (4 for float32): chunks are then whole elements, the first
        ``n % parts`` one element larger (:func:`~netsim.comm.collectives.schedule.split`);
        ``nbytes`` must be a whole number of elements. None (default): an even cut.

    Returns
    -------
    Trace

    Examples
    --------
    >>> ring_allgather(4, 4e6).num_messages
    12
    """
    return build(_ring_allgather, P, nbytes, element=element).trace()


def _ring_reduce_scatter(P, nbytes, gamma=0.0, element=None):
    s = Schedule("ring_reduce_scatter", P, P, split(nbytes, P, element), gamma,
                 nbytes=nbytes, gamma=gamma)
    _ring_steps(s, P, "reduce-scatter")
    return s


def ring_reduce_scatter(P, nbytes, gamma=0.0, element=None):
    """Ring reduce-scatter: P - 1 steps; rank r ends with the reduced chunk r.

    Parameters
    ----------
    P : int
        Ranks, >= 1.
    nbytes : float
        Bytes each rank contributes (chunks of ``nbytes / P``).
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
    >>> ring_reduce_scatter(4, 4e6, gamma=1e-10).num_ops  # 12 messages, 12 reductions
    24
    """
    return build(_ring_reduce_scatter, P, nbytes, gamma=gamma, element=element).trace()


def _recursive_doubling_allgather(P, nbytes, element=None):
    s = Schedule("recursive_doubling_allgather", P, P, split(nbytes, P, element), nbytes=nbytes)
    p2, rem, real = fold_core(P)
    fold(s, rem, None, None, False)
    doubling(s, p2, real, chunk_start(P))
    unfold(s, rem, 0, P)
    return s


def recursive_doubling_allgather(P, nbytes, element=None):
    """Recursive-doubling allgather: log2 P exchanges of doubling blocks.

    Non-power-of-two P folds (each even rank below ``2 rem`` hands its chunk
    to its odd neighbour), runs the core on blocks of one or two chunks, and
    unfolds (the odd rank sends the whole result back).

    Parameters
    ----------
    P : int
        Ranks, >= 1.
    nbytes : float
        Bytes of the gathered result; rank r contributes chunk r (``nbytes / P``).
    element : int, optional
        Bytes per element (4 for float32): chunks are then whole elements, the first
        ``n % parts`` one element larger (:func:`~netsim.comm.collectives.schedule.split`);
        ``nbytes`` must be a whole number of elements. None (default): an even cut.

    Returns
    -------
    Trace

    Examples
    --------
    >>> recursive_doubling_allgather(8, 8e6).size.tolist()[::8]
    [1000000.0, 2000000.0, 4000000.0]
    """
    return build(_recursive_doubling_allgather, P, nbytes, element=element).trace()


def _recursive_halving_reduce_scatter(P, nbytes, gamma=0.0, element=None):
    s = Schedule("recursive_halving_reduce_scatter", P, P, split(nbytes, P, element), gamma,
                 nbytes=nbytes,
                  gamma=gamma)
    p2, rem, real = fold_core(P)
    fold(s, rem, 0, P, True)
    halving(s, p2, real, chunk_start(P))
    unfold(s, rem, None, None)
    return s


def recursive_halving_reduce_scatter(P, nbytes, gamma=0.0, element=None):
    """Recursive-halving reduce-scatter (MPICH's for commutative operations).

    Step s sends half of the current range to the rank ``p' / 2**s`` away and
    reduces the other half; rank r ends with the reduced chunk r. Non-power-of-
    two P folds (whole vectors), runs the core on blocks of one or two chunks
    (MPICH's ``newcnts``), and unfolds (the even rank's chunk).

    Parameters
    ----------
    P : int
        Ranks, >= 1.
    nbytes : float
        Bytes each rank contributes (chunks of ``nbytes / P``).
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
    >>> recursive_halving_reduce_scatter(4, 4e6).size.tolist()[::4]
    [2000000.0, 1000000.0]
    """
    return build(_recursive_halving_reduce_scatter, P, nbytes, gamma=gamma, element=element).trace()


# Name -> schedule function, for netsim.comm.collectives.payloads.
SCHEDULES = MappingProxyType({
    "recursive_doubling_allreduce": _recursive_doubling_allreduce,
    "rabenseifner_allreduce": _rabenseifner_allreduce,
    "ring_allreduce": _ring_allreduce,
    "ring_allgather": _ring_allgather,
    "ring_reduce_scatter": _ring_reduce_scatter,
    "recursive_doubling_allgather": _recursive_doubling_allgather,
    "recursive_halving_reduce_scatter": _recursive_halving_reduce_scatter,
})
