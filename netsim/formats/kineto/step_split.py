"""Where a rank's step goes: compute, exposed communication, waiting for peers and host gaps.

One rule, applied to a measured profile and to a replayed timeline alike. A rank's
kernels in a step are GPU intervals, each a compute kernel (any kernel, memcpy or
memset that is not communication) or a communication kernel (a rank's part in a
collective, or one side of a message), which belongs to a *call* with members on
other ranks. A call's *arrival* is the latest start of its members' kernels: before
it, a member's kernel cannot move data, it waits for a late peer.

Over the step's GPU span on the rank (from the start of its first kernel of the
step to the end of its last; the time between steps is in no step), each instant is
counted once, in this order:

* **compute**: a compute kernel runs;
* **exposed communication**: no compute kernel runs, and a communication kernel runs
  past its call's arrival (data moving that nothing hides);
* **waiting**: neither, and a communication kernel runs before its call's arrival
  (the rank waits for a late peer);
* **host gap**: no kernel runs: the GPU is idle (the host launching, Python, data
  loading, a stream waiting on the host).

The four add up to the span. In a replay the kernels are
:func:`netsim.formats.kineto.timeline.kernels` (a collective's part on a rank starts when the
rank's own dependencies are done, so its arrival is when the last member was ready,
``Result.collectives["ready"]``; the host gaps an imported profile replays are ops
tagged ``idle``, which run no kernel). In a profile they are the recorded kernels of
the kept steps (:func:`netsim.formats.kineto.load.load_kineto` stores the split in
``metadata["measured_split"]``): waiting is known only for calls whose every member's
file was imported (all ranks, on one clock: the profiler's timestamps are each host's
clock, so ranks on different hosts carry their clocks' offset), else it is None and the
call's kernel time counts as exposed communication.
"""

import numpy as np

from netsim.formats.kineto.timeline import kernels
from netsim.result import union_length
from netsim.trace.core import HOST_GAP

__all__ = ["split", "replayed_split", "profile_split", "PARTS"]

#: The parts of a step, in the order :func:`split` returns them.
PARTS = ("span", "compute", "exposed_communication", "waiting", "host_gaps")


def split(rank, step, start, end, call, ranks, steps):
    """The split of every rank's steps (see the module docstring), in seconds.

    Parameters
    ----------
    rank, step : array of int
        Each kernel's rank and step (0 .. steps - 1).
    start, end : array of float
        Each kernel's interval (s).
    call : array of int
        -1 for a compute kernel, else the id of the call it is a part of; a
        call whose id is negative other than -1 (``-2 - id``) is one whose
        arrival is unknown (not every member recorded): all of it counts as
        exposed communication and the rank's waiting in that step is None.
    ranks, steps : int

    Returns
    -------
    ndarray, shape (ranks, steps, 5)
        Per rank and step, :data:`PARTS`; waiting NaN where unknown, all zero for
        a step in which a rank ran no kernel.

    Examples
    --------
    Rank 0 computes 0-3 then joins an allreduce at 3; rank 1 computes 0-5 then
    joins it at 5; the call ends at 7 on both. Rank 0 waits 3-5 and moves data 5-7.

    >>> s = split([0, 0, 1, 1], [0] * 4, [0, 3, 0, 5], [3, 7, 5, 7], [-1, 0, -1, 0], 2, 1)
    >>> s[:, 0].tolist()      # span, compute, exposed, waiting, host gaps
    [[7.0, 3.0, 2.0, 2.0, 0.0], [7.0, 5.0, 2.0, 0.0, 0.0]]
    """
    rank, step, call = (np.asarray(x, np.int64) for x in (rank, step, call))
    start, end = np.asarray(start, float), np.asarray(end, float)
    known = call >= 0
    ids = np.where(known, call, 0)
    arrive = np.full(ids.max() + 1 if len(ids) else 1, -np.inf)
    np.maximum.at(arrive, ids[known], start[known])
    comm = call != -1
    moving = np.where(known, np.maximum(start, arrive[ids]), start)   # past the arrival
    g = rank * steps + step
    n = ranks * steps
    lo, hi = np.full(n, np.inf), np.full(n, -np.inf)
    np.minimum.at(lo, g, start)
    np.maximum.at(hi, g, end)
    span = np.where(hi > lo, hi - lo, 0.0)
    c = ~comm
    compute = union_length(start[c], end[c], g[c], n)
    busy_x = union_length(np.concatenate([start[c], moving[comm]]),
                          np.concatenate([end[c], np.maximum(moving, end)[comm]]),
                          np.concatenate([g[c], g[comm]]), n)
    busy = union_length(start, end, g, n)
    unknown = np.zeros(n, bool)
    unknown[g[comm & ~known]] = True
    waiting = np.where(unknown, np.nan, busy - busy_x)
    out = np.stack([span, compute, busy_x - compute, waiting, span - busy], axis=1)
    return out.reshape(ranks, steps, len(PARTS))


def replayed_split(trace, result):
    """:func:`split` of a replay, per rank and iteration.

    Parameters
    ----------
    trace : Trace
    result : Result
        Its replay.

    Returns
    -------
    ndarray, shape (trace.ranks, iterations, 5)

    Examples
    --------
    >>> import networkx as nx
    >>> from netsim import TraceBuilder, simulate
    >>> G = nx.Graph(); G.add_edge(0, 1, bandwidth=1e9, latency=0.0)
    >>> b = TraceBuilder(2); c = b.compute(0, seconds=1e-3)
    >>> _ = b.message(0, 1, 1e6, deps=[c])
    >>> (replayed_split(b.build(), simulate(b.build(), G))[:, 0] * 1e3).round(6).tolist()
    [[2.0, 1.0, 1.0, 0.0, 0.0], [1.0, 0.0, 1.0, 0.0, 0.0]]
    """
    k = kernels(trace, result)
    keep = k["comm"] | ~trace.tagged(HOST_GAP)[k["op"]]   # host gaps replayed are GPU idle
    k = {name: v[keep] for name, v in k.items()}
    call = np.where(k["comm"], k["op"], -1)
    return split(k["rank"], trace.iteration[k["op"]], k["start"], k["end"], call,
                 trace.ranks, max(trace.num_iterations, 1))


def profile_split(programs, steps):
    """:func:`split` of imported per-rank records, as the metadata ``measured_split``.

    Parameters
    ----------
    programs : dict
        Recorded rank -> its records (:func:`netsim.trace.programs.assemble`), each
        kernel's with ``"at": (start, end)`` in microseconds as the profile
        records them; host gaps (``tag`` ``idle``) are no kernel.
    steps : int
        Number of kept steps.

    Returns
    -------
    dict
        ``parts`` (:data:`PARTS`) and ``ranks``: rank (str) -> per step the
        parts in seconds (waiting None where unknown: a call not every member
        of which was recorded).

    Examples
    --------
    >>> ar = lambda at: {"op": "coll", "key": ("0", 0), "group": [0, 1], "at": at,
    ...                  "iteration": 0}
    >>> gemm = lambda at: {"op": "compute", "tag": "kernel", "at": at, "iteration": 0}
    >>> s = profile_split({0: [gemm((0, 3)), ar((3, 7))], 1: [gemm((0, 5)), ar((5, 7))]}, 1)
    >>> [[round(x * 1e6, 6) for x in s["ranks"][r][0]] for r in ("0", "1")]
    [[7.0, 3.0, 2.0, 2.0, 0.0], [7.0, 5.0, 2.0, 0.0, 0.0]]
    >>> profile_split({0: [gemm((0, 3)), ar((3, 7))]}, 1)["ranks"]["0"][0][3] is None
    True
    """
    cols, ids = ([], [], [], [], []), {}
    for r, recs in programs.items():
        for rec in recs:
            if "at" not in rec or rec.get("tag") == "idle":
                continue
            if rec["op"] == "compute":
                call = -1
            else:
                members = rec["group"] if rec["op"] == "coll" else rec["key"][:2]
                call = ids.setdefault(rec["key"], len(ids))
                if any(m not in programs for m in members):
                    call = -2 - call
            for col, v in zip(cols, (r, rec.get("iteration", 0), rec["at"][0] / 1e6,
                                     rec["at"][1] / 1e6, call)):
                col.append(v)
    ranks = max(programs) + 1 if programs else 0
    out = split(*cols, ranks, max(steps, 1))
    return {"parts": list(PARTS),
            "ranks": {str(r): [[None if x != x else float(x) for x in row] for row in out[r]]
                      for r in sorted(programs)}}
