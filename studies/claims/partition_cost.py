"""What METIS placement costs, in modelled seconds: the same currency as simulated training.

The partitioned parameter server (:mod:`workloads.paradigms.ps_partitioned`) places its
samples and parameter rows with two METIS calls: multilevel k-way on the
bipartite sample-feature graph (one edge per non-zero of the data), then on
the bipartite worker-feature graph (one edge per distinct worker-feature
pair). Timing those calls in Python on a shared machine gives a number that
varies with the load and cannot be set against simulated seconds of
training; this module models it instead.

Multilevel k-way partitioning runs in time linear in the graph's edges
[KK98]_, so the model is ``seconds = edges / METIS_EDGES_PER_SECOND``. The
rate is read from the METIS authors' own statement [METIS]_ that graphs with
several million vertices are partitioned into 256 parts in a few seconds on a
workstation: about 1e6 vertices per second. Counted per *edge* it is a
conservative reading (those graphs have several edges per vertex, so METIS
handles more than 1e6 edges per second): the model charges the placement at
least what METIS would take, never less. It is a cited constant, not fitted
to any measurement of this machine, so a claim that uses it is deterministic
per seed.

References
----------
.. [KK98] G. Karypis and V. Kumar, "Multilevel k-way Partitioning Scheme for
   Irregular Graphs", Journal of Parallel and Distributed Computing 48(1),
   96-129, 1998 (the k-way scheme's run time is ``O(|E|)``, linear in the edges).
.. [METIS] G. Karypis, METIS overview page,
   http://glaros.dtc.umn.edu/gkhome/metis/metis/overview (METIS 5.1.0):
   "Graphs with several millions of vertices can be partitioned in 256 parts
   in a few seconds on current generation workstations and PCs."

Examples
--------
>>> metis_seconds(2_000_000)
2.0
"""

import numpy as np

from netsim.checks import check_int
from netsim.errors import NetsimError

__all__ = ["METIS_EDGES_PER_SECOND", "metis_seconds", "placement_edges"]

#: Edges METIS partitions per second (a conservative reading of [METIS]_: about 1e6
#: vertices per second, each with several edges, counted as 1e6 edges per second).
METIS_EDGES_PER_SECOND = 1e6


def metis_seconds(edges, rate=METIS_EDGES_PER_SECOND):
    """Modelled METIS time of graphs with ``edges`` edges in all: linear in the edges [KK98]_.

    Parameters
    ----------
    edges : int
        Undirected edges of the graphs METIS partitions.
    rate : float
        Edges per second (default :data:`METIS_EDGES_PER_SECOND`).

    Returns
    -------
    float
        Seconds.

    Examples
    --------
    >>> metis_seconds(50_000), metis_seconds(50_000, rate=5e6)
    (0.05, 0.01)
    """
    edges = check_int(edges, "edges", minimum=0)
    if not rate > 0:
        raise NetsimError(f"rate must be > 0 edges per second, got {rate}")
    return edges / rate


def placement_edges(X, sample_part, workers):
    """Edges of the two graphs :mod:`workloads.paradigms.ps_partitioned` gives METIS.

    The sample-feature graph has one edge per non-zero of ``X``; the
    worker-feature graph one per distinct (worker, feature) pair once the
    samples are placed (``sample_part``).

    Parameters
    ----------
    X : scipy.sparse matrix
        Samples x features (the training data).
    sample_part : ndarray of int
        Worker of every sample (:func:`workloads.paradigms.ps_partitioned.partition_samples`).
    workers : int
        Workers.

    Returns
    -------
    tuple of int
        ``(sample_feature_edges, worker_feature_edges)``.

    Examples
    --------
    Two samples on two workers, sharing feature 1:

    >>> import scipy.sparse
    >>> X = scipy.sparse.csr_matrix([[1, 1, 0], [0, 1, 1]])
    >>> placement_edges(X, np.array([0, 1]), 2)
    (4, 4)
    >>> placement_edges(X, np.array([0, 0]), 2)     # both on worker 0: features 0, 1, 2
    (4, 3)
    """
    import scipy.sparse

    X = scipy.sparse.csr_matrix(X)
    X.sum_duplicates()
    workers = check_int(workers, "workers")
    F = X.shape[1]
    rows = np.repeat(np.asarray(sample_part, np.int64), np.diff(X.indptr))
    pairs = np.unique(rows * F + X.indices)
    return int(X.nnz), int(len(pairs))
