"""Throughput of a replayed parameter-server run: samples/s, updates/s and time to N updates.

Time per iteration is the makespan over the steps, and with a fixed number of
steps per worker an asynchronous run (Downpour, SSP: :mod:`workloads.paradigms.ps_async`)
ends when its slowest worker does, like a synchronous one: a straggler makes
both equally slow per iteration although the asynchronous server keeps
applying the other workers' pushes. These figures say what the server did,
from the replay's op times (the server's update ops are tagged ``update``, as
:func:`workloads.paradigms.ps_async.staleness` reads them):

- **samples/s**: every worker's samples (``workers x batch_size`` per step,
  over the trace's steps) over the makespan;
- **updates/s**: model updates over the makespan. One model update is one
  update op on every server (its shard), so ``update ops / servers``: a
  synchronous server applies one per step (the P gradients summed), an
  asynchronous one one per push;
- **time to N updates**: the time by which the server has applied ``N`` model
  updates (the end of the ``N x servers``-th update op), ``N`` by default the
  trace's steps, the updates a synchronous (BSP) run applies over them.
"""

import math

import numpy as np

__all__ = ["ASYNCHRONOUS", "throughput"]

ASYNCHRONOUS = ("ps-async",)
"""Paradigms whose server applies each worker's push on its own (Downpour, and SSP as its option)."""


def throughput(trace, result, target=None):
    """Samples/s, updates/s and time to ``target`` updates of a replayed trace.

    Parameters
    ----------
    trace : netsim.Trace
        A parameter-server trace (tag ``update`` on the server updates;
        metadata ``workers``, ``servers`` and ``hyper.batch_size``).
    result : netsim.Result
        Its replay (of the trace or of a perturbed copy with the same ops).
    target : int, optional
        Model updates to reach; default the trace's steps (``num_iterations``).

    Returns
    -------
    dict or None
        ``samples_per_s``, ``updates_per_s`` (None without ``batch_size`` /
        update ops), ``updates`` (model updates applied), ``target_updates``
        and ``time_to_target`` (seconds; None if fewer updates were applied);
        None for a trace without update ops.

    Examples
    --------
    Two equal workers, one server linked to each directly (1.25 GB/s, 0.5 ms):
    a step is 1 ms of compute, a 1.25 MB push (1.5 ms), an update and a fetch
    (1.5 ms), 4 ms in all, so 2 x 8 samples per 4 ms:

    >>> import networkx as nx
    >>> from netsim import TraceBuilder, simulate
    >>> b = TraceBuilder(3, metadata={"workers": 2, "servers": 1, "hyper": {"batch_size": 8}})
    >>> for w in (0, 1):
    ...     prev = ()
    ...     for t in range(4):
    ...         c = b.compute(w, seconds=1e-3, deps=prev, iteration=t, tag="backward")
    ...         p = b.message(w, 2, 1.25e6, deps=[c], iteration=t, tag="push")
    ...         u = b.compute(2, seconds=0.0, deps=[p], iteration=t, tag="update")
    ...         prev = [b.message(2, w, 1.25e6, deps=[u], iteration=t, tag="fetch")]
    >>> G = nx.Graph()
    >>> G.add_nodes_from(range(3), kind="host")  # rank r on node r; the server (2) is the hub
    >>> G.add_edges_from([(0, 2), (1, 2)], bandwidth=1.25e9, latency=5e-4)
    >>> f = throughput(b.build(), simulate(b.build(), G))
    >>> round(f["samples_per_s"], 6), round(f["updates_per_s"], 6), round(f["time_to_target"], 9)
    (4000.0, 500.0, 0.0065)
    """
    names = list(trace.tags)
    if "update" not in names:
        return None
    upd = np.flatnonzero(trace.tag == names.index("update"))
    if len(upd) == 0:
        return None
    meta = trace.metadata
    servers = max(int(meta.get("servers") or 1), 1)
    workers = int(meta.get("workers", trace.ranks - servers))
    steps = max(trace.num_iterations, 1)
    batch = (meta.get("hyper") or {}).get("batch_size")
    span = float(result.makespan)
    updates = len(upd) / servers
    target = steps if target is None else int(target)
    ends = np.sort(np.asarray(result.ops["end"], np.float64)[upd])
    k = math.ceil(target * servers)
    return {"samples_per_s": workers * batch * steps / span if batch and span > 0 else None,
            "updates_per_s": updates / span if span > 0 else None,
            "updates": updates, "target_updates": target,
            "time_to_target": float(ends[k - 1]) if 0 < k <= len(ends) else None}
