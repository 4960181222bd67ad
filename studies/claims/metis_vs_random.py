"""METIS placement against random placement of the partitioned parameter server: a study.

:mod:`workloads.paradigms.ps_partitioned` places samples and parameter rows either with
METIS or at random; :func:`compare` runs both with the same options and, on a
topology, sets the placement's wall time against the simulated training time
it saves.
"""

from netsim import simulate
from workloads.paradigms import ps_partitioned
from workloads.errors import WorkloadError

__all__ = ["compare"]


def compare(dataset="sparse", workers=4, topology=None, **options):
    """Run the METIS placement and the random baseline with the same options; with a
    topology, also what the placement costs against the training time it saves.

    Parameters
    ----------
    dataset : str or Dataset
    workers : int
    topology : callable or networkx.Graph, optional
        ``topology(ranks)`` (or a graph) on which both traces are simulated.
    **options
        Passed to :func:`workloads.paradigms.ps_partitioned.run` (not ``partition``).

    Returns
    -------
    dict
        ``metis`` and ``random`` (their :class:`RunResult`), ``traffic_ratio``
        (random bytes / METIS bytes), ``message_ratio``, ``accuracy_change``
        (METIS accuracy minus random accuracy), ``partition_seconds`` (METIS's
        placement wall time minus the random one's, measured on this machine).
        With a ``topology``: ``epoch_seconds`` (simulated training time of one
        epoch, ``{"metis": ..., "random": ...}``), ``saved_per_epoch`` (random
        minus METIS) and ``payback_epochs`` = ``partition_seconds /
        saved_per_epoch``, the epochs of training after which the placement has
        paid for itself (None if it saves no time); else those three are None.

    Examples
    --------
    >>> import networkx as nx
    >>> def star(n):
    ...     G = nx.Graph()
    ...     G.add_nodes_from([f"h{i}" for i in range(n)], kind="host")
    ...     G.add_edges_from([(f"h{i}", "sw") for i in range(n)], bandwidth=1.25e8, latency=1e-5)
    ...     return G
    >>> c = compare(epochs=1, topology=star)
    >>> c["traffic_ratio"] > 1, c["saved_per_epoch"] > 0
    (True, True)
    >>> c["payback_epochs"] == c["partition_seconds"] / c["saved_per_epoch"]
    True
    """
    if "partition" in options:
        raise WorkloadError("compare runs both partitions; do not pass partition=")
    part = ps_partitioned.run(dataset, workers, partition="metis", **options)
    base = ps_partitioned.run(dataset, workers, partition="random", **options)
    cost = part.extra["partition_seconds"] - base.extra["partition_seconds"]
    out = {"metis": part, "random": base,
           "traffic_ratio": base.total_bytes / part.total_bytes,
           "message_ratio": base.messages / part.messages,
           "accuracy_change": part.accuracy - base.accuracy, "partition_seconds": cost,
           "epoch_seconds": None, "saved_per_epoch": None, "payback_epochs": None}
    if topology is not None:
        epochs = int(part.trace.metadata["hyper"]["epochs"])
        secs = {}
        for name, r in (("metis", part), ("random", base)):
            G = topology(r.trace.ranks) if callable(topology) else topology
            secs[name] = simulate(r.trace, G).makespan / epochs
        saved = secs["random"] - secs["metis"]
        out.update(epoch_seconds=secs, saved_per_epoch=saved,
                   payback_epochs=max(cost, 0.0) / saved if saved > 0 else None)
    return out
