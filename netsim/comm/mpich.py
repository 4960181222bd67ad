"""The MPICH library: a collective op expanded with :mod:`netsim.comm.collectives`' schedules.

Which schedule runs a call (its algorithm hint, else the default of the first
column):

================ ========================================================
op               hints (schedule)
================ ========================================================
allreduce        ``ring`` (ring_allreduce), ``be`` (rabenseifner_allreduce),
                 ``rd`` (recursive_doubling_allreduce), ``lp``
                 (pipeline_allreduce), ``mst`` (binomial_reduce then
                 binomial_broadcast)
allgather        ``ring`` (ring_allgather), ``rd`` (recursive_doubling_allgather)
reduce_scatter   ``ring`` (ring_reduce_scatter), ``rh``
                 (recursive_halving_reduce_scatter)
broadcast        ``lp`` (pipeline_broadcast: the ring's rooted form, a chain),
                 ``mst`` (binomial_broadcast), ``be`` (be_broadcast)
reduce           ``lp`` (pipeline_reduce), ``mst`` (binomial_reduce)
alltoall         ``pairwise`` (alltoall)
sendrecv         ``ring``: member i sends the buffer to member i + 1
================ ========================================================

The schedule is built for the group's size with local ranks ``0..k-1``;
local rank ``j`` is the group's ``j``-th member, counted from the root for
broadcast and reduce (MPICH's relative ranks). Chunks are whole elements when
the op gives ``element`` (:func:`netsim.comm.collectives.schedule.split`), and
``lp`` cuts ``segments`` pieces (default 1, as the generators).
"""

from types import MappingProxyType
from typing import NamedTuple

import numpy as np

from netsim.comm import collectives
from netsim.trace.collop import ROOTED
from netsim.errors import TraceError
from netsim.trace.core import TraceBuilder
from netsim.trace.ops import concat, terminal_ops

__all__ = ["SCHEDULES", "DEFAULT", "Block", "schedule", "block", "check_calls", "local_order"]


def _mst_allreduce(P, nbytes, element=None):
    return concat(collectives.binomial_reduce(P, nbytes, element=element),
                  collectives.binomial_broadcast(P, nbytes, element=element))


def _sendrecv(P, nbytes, element=None):
    b = TraceBuilder(P)
    for r in range(P if P > 1 else 0):
        b.message(r, (r + 1) % P, nbytes, tag="sendrecv")
    return b.build()


#: (op, hint) -> generator(P, nbytes, element=..., [segments=...]).
SCHEDULES = MappingProxyType({
    ("allreduce", "ring"): collectives.ring_allreduce,
    ("allreduce", "be"): collectives.rabenseifner_allreduce,
    ("allreduce", "rd"): collectives.recursive_doubling_allreduce,
    ("allreduce", "lp"): collectives.pipeline_allreduce,
    ("allreduce", "mst"): _mst_allreduce,
    ("allgather", "ring"): collectives.ring_allgather,
    ("allgather", "rd"): collectives.recursive_doubling_allgather,
    ("reduce_scatter", "ring"): collectives.ring_reduce_scatter,
    ("reduce_scatter", "rh"): collectives.recursive_halving_reduce_scatter,
    ("broadcast", "mst"): collectives.binomial_broadcast,
    ("broadcast", "lp"): collectives.pipeline_broadcast,
    ("broadcast", "be"): collectives.be_broadcast,
    ("reduce", "mst"): collectives.binomial_reduce,
    ("reduce", "lp"): collectives.pipeline_reduce,
    ("alltoall", "pairwise"): collectives.alltoall,
    ("sendrecv", "ring"): _sendrecv,
})
#: The schedule of a call without a hint.
DEFAULT = MappingProxyType({"allreduce": "ring", "allgather": "ring", "reduce_scatter": "ring",
                            "broadcast": "lp", "reduce": "lp", "alltoall": "pairwise",
                            "sendrecv": "ring"})


class Block(NamedTuple):
    """One call's schedule on local ranks: the trace, its entry ops and its last ops.

    ``entries`` (op ids) and ``entry_ranks``: the pairs (op, rank) of an op and
    a rank it touches (a message touches its sender and its receiver) where no
    dependency of the op touches that rank: there the op waits for the call's
    own dependencies on the rank, so nothing moves to or from a member before it
    has entered the call (MPICH's rendezvous, NCCL's kernel per member); every
    other op touching the rank comes after one of them. ``ends_ptr``/``ends``: per local rank (CSR),
    the ops after which that rank's part is done (:func:`netsim.trace.ops.terminal_ops`).
    """

    trace: object
    algorithm: str
    entries: np.ndarray
    entry_ranks: np.ndarray
    ends_ptr: np.ndarray
    ends: np.ndarray


def local_order(spec):
    """The group in local-rank order: from the root for broadcast and reduce.

    Examples
    --------
    >>> from netsim.trace.collop import Spec
    >>> local_order(Spec("broadcast", (4, 5, 6), 5, None, 0, 0))
    (5, 6, 4)
    """
    g = spec.group
    if spec.op in ROOTED:
        i = g.index(spec.root)
        return g[i:] + g[:i]
    return g


def schedule(op, hint, P, nbytes, segments=0, element=0):
    """MPICH's schedule of one call on local ranks ``0..P-1`` (see the module docstring).

    Parameters
    ----------
    op : str
    hint : str
        A schedule of :data:`SCHEDULES` for ``op``.
    P : int
        Members; one member sends nothing.
    nbytes : float
    segments : int, optional
        Pipeline segments of ``lp`` (0: 1).
    element : int, optional
        Bytes per element (0: an even cut).

    Raises
    ------
    TraceError
        For a hint MPICH has no schedule for with this op, or bytes that are not
        a whole number of elements.

    Examples
    --------
    >>> schedule("allreduce", "mst", 4, 400).total_bytes   # binomial reduce, then broadcast
    2400.0
    """
    gen = SCHEDULES.get((op, hint))
    if gen is None:
        known = ", ".join(h for (o, h) in SCHEDULES if o == op)
        raise TraceError(f"MPICH has no {hint!r} {op} (it has: {known})")
    kw = {"element": element or None}
    if hint == "lp":
        kw["segments"] = segments or 1
    return gen(P, nbytes, **kw) if P > 1 else TraceBuilder(P).build()


_RING_OPS = ("allreduce", "allgather", "reduce_scatter")  # each message one chunk of split()


def check_calls(trace):
    """Refuse, before any schedule is built, ring calls whose chunks would be under a byte.

    A ring's every message is one chunk (:func:`netsim.comm.collectives.schedule.split`), so
    its sizes are known from the call alone; the check is the schedule's own
    (:func:`netsim.comm.collectives.schedule.check_pieces`), made before a command announces
    the work (a 2-rank profile projected to 8192 ranks would be refused only at replay).
    Other schedules are checked as they are built.

    Raises
    ------
    TraceError
        ``op I: ring_OP on P ranks of N bytes would send messages of ... bytes``.

    Examples
    --------
    >>> from netsim import TraceBuilder
    >>> b = TraceBuilder(8); _ = b.collective("allreduce", range(8), 4.0)
    >>> check_calls(b.build())
    Traceback (most recent call last):
    ...
    netsim.errors.TraceError: op 0: ring_allreduce on 8 ranks of 4 bytes would send messages of 0.5 bytes (a message carries 0 or at least 1 byte); use fewer ranks or more bytes
    """
    from netsim.comm.collectives.schedule import check_pieces, split

    ops = np.flatnonzero(trace.is_collective)
    if not len(ops):
        return
    pairs = np.stack([trace.spec[ops].astype(np.float64), trace.size[ops]], axis=1)
    _, first = np.unique(pairs, axis=0, return_index=True)   # each (call, bytes) once
    for i in ops[np.sort(first)].tolist():
        spec = trace.specs.row(int(trace.spec[i]))
        if spec.op in _RING_OPS and (spec.algorithm or DEFAULT[spec.op]) == "ring":
            P, nbytes = len(spec.group), float(trace.size[i])
            try:
                check_pieces(split(nbytes, P, spec.element or None), f"ring_{spec.op}", P,
                             nbytes)
            except TraceError as exc:
                raise TraceError(f"op {i}: {exc}") from None


def block(spec, nbytes):
    """The schedule of one call of ``spec`` moving ``nbytes`` (see the module docstring).

    Raises
    ------
    TraceError
        For a hint MPICH has no schedule for with this op, or bytes that are not
        a whole number of elements.

    Examples
    --------
    >>> from netsim.trace.collop import Spec
    >>> b = block(Spec("allreduce", (0, 1, 2), -1, None, 0, 0), 3e6)
    >>> b.algorithm, b.trace.num_messages, b.ends_ptr.tolist()
    ('ring', 12, [0, 2, 4, 6])
    """
    hint = spec.algorithm or DEFAULT[spec.op]
    P = len(spec.group)
    t = schedule(spec.op, hint, P, nbytes, spec.segments, spec.element)
    ops, ranks = _entries(t)
    t_ops, t_ranks = terminal_ops(t)
    order = np.lexsort((t_ops, t_ranks))
    ptr = np.searchsorted(t_ranks[order], np.arange(P + 1))
    return Block(t, hint, ops, ranks, ptr, t_ops[order])


def _entries(t):
    """The (op, rank) pairs of a schedule where no dependency of the op touches the rank.

    A schedule holds compute ops and messages only, so an op touches its rank
    and, for a message, its peer: one flag per slot, as :func:`terminal_ops`.
    """
    msg = t.is_message
    owner = np.repeat(np.arange(t.num_ops, dtype=np.int64), np.diff(t.dep_ptr))
    d = t.dep_idx
    d_peer = np.where(msg[d], t.peer[d], -1)

    def covered(rank_of_owner):
        return (t.rank[d] == rank_of_owner) | (d_peer == rank_of_owner)

    hide_rank = np.zeros(t.num_ops, bool)
    hide_rank[owner[covered(t.rank[owner])]] = True
    hide_peer = np.zeros(t.num_ops, bool)
    hide_peer[owner[msg[owner] & covered(t.peer[owner])]] = True
    first = np.flatnonzero(~hide_rank)
    second = np.flatnonzero(msg & ~hide_peer)
    return (np.concatenate([first, second]),
            np.concatenate([t.rank[first], t.peer[second]]).astype(np.int64))
