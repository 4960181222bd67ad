"""A collective's seconds in the transformer's closed form: the library's price, else MPICH's ring.

The closed form (:mod:`workloads.transformer.closed`) names each collective by the
group it runs on (``"tp"``, ``"dp"``, ``"ep"``, ``"edp"``), its operation and its
bytes as the trace holds them. A caller that knows how the replay runs that call
(on GPU nodes NCCL's plan: :class:`netsim.comm.priced.NcclPrices`) passes ``price``,
a callable ``price(group, op, nbytes)`` giving its seconds, or None where it has no
price; every other call costs what MPICH's schedule costs on the group's
``(alpha, beta)`` (:mod:`netsim.costmodel`: the ring for allreduce, allgather and
reduce-scatter; pairwise exchange for all-to-all), which is what a replay with
``library="mpich"`` runs.
"""

from netsim import costmodel

__all__ = ["MPICH", "seconds"]

#: MPICH's cost of each operation the transformer's trace holds: ``f(P, nbytes, alpha, beta)``.
MPICH = {"allreduce": costmodel.ring_allreduce, "allgather": costmodel.ring_allgather,
         "reduce_scatter": costmodel.ring_reduce_scatter, "alltoall": costmodel.alltoall}


def seconds(group, op, members, nbytes, links=None, price=None):
    """Seconds of one collective of ``members`` ranks on ``group``'s links.

    Parameters
    ----------
    group : str
        ``"tp"``, ``"dp"``, ``"ep"`` or ``"edp"``.
    op : str
        A key of :data:`MPICH`.
    members : int
        Ranks in the call; a call of one moves nothing.
    nbytes : float
        The call's bytes as the trace holds them.
    links : dict, optional
        ``{group: (alpha, beta)}``; a missing group is free.
    price : callable, optional
        ``price(group, op, nbytes)`` -> seconds, or None for MPICH's ring.

    Examples
    --------
    MPICH's ring allreduce of 4 MB among 4 ranks at 1 GB/s and 1 us: ``2 (P - 1)
    (alpha + n beta / P)``.

    >>> round(seconds("dp", "allreduce", 4, 4e6, {"dp": (1e-6, 1e-9)}), 9)
    0.006006
    >>> seconds("dp", "allreduce", 4, 4e6, {"dp": (1e-6, 1e-9)}, lambda g, op, n: 0.5)
    0.5
    """
    if members < 2 or nbytes == 0:
        return 0.0
    t = None if price is None else price(group, op, nbytes)
    if t is None:
        t = MPICH[op](members, nbytes, *((links or {}).get(group) or (0.0, 0.0)))
    return t
