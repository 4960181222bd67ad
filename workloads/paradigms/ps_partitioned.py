"""Parameter server on sparse data, with samples and parameters placed by graph partitioning.

The model is a one-layer softmax (multinomial logistic) regression over
sparse features: a table of ``F + 1`` rows of ``C`` float32 values, row ``j < F``
holding the weights of feature ``j`` and row ``F`` the biases. A worker's
mini-batch touches only the rows of the features present in it, so every step
each worker, for each server holding some of those rows,

1. sends a pull request with their keys (int32, 4 bytes each); server 0 always
   gets one, since it holds the bias row;
2. receives their values (float32, ``4 * C`` bytes per row), nothing else;
3. computes the loss gradient on its mini-batch with exactly those values;
4. pushes the gradient rows (int32 key + ``C`` float32 values per row).

Each server then averages (sum over workers / P) the pushed rows and takes an
SGD step on them (synchronous: after every push of the step; the next pull
from that server waits for the update). The traffic therefore depends on how
many distinct features a worker's mini-batch touches, and the number of
messages on how many servers hold them.

Placement (``partition=``):

``"metis"``
    Samples among workers: METIS (``pymetis.part_graph``, multilevel k-way)
    on the bipartite sample-feature graph (an edge for every non-zero; samples
    weigh 1 and features 0, so the parts have balanced sample counts and the
    cut counts the feature rows shared between workers). Then rows among
    servers: METIS on the bipartite worker-feature graph (edge weight = how
    many of the worker's samples use the feature; a feature weighs its number
    of uses, its pull/push load), so a server holds the features its workers
    use. The bias row is on server 0.
``"random"``
    The seeded baseline: samples shuffled into equal shards
    (:func:`workloads.datasets.shards`), rows assigned to servers by a
    seeded random permutation (equal counts).

:func:`studies.claims.metis_vs_random.compare` runs both and reports the traffic ratio random / partitioned.
Li, Andersen and Smola report that their partitioner (Parsa) removes 90 % of
the network communication of a distributed learning system on text data;
this project's brief quotes "up to 14x". On the synthetic ``sparse`` dataset
with its defaults (90 % of a row's features from its cluster's block, 8
clusters) the ratio is far smaller: about 2.1x with 4 workers and 2 servers,
3.1x with 16 workers and 4 servers, at the default batch of 64; it grows
with the locality of the data (5.2x at ``locality=0.99``, 11x at
``locality=1.0`` with 16 clusters, 16 workers).

References
----------
George Karypis and Vipin Kumar, "A Fast and High Quality Multilevel Scheme for
Partitioning Irregular Graphs", SIAM Journal on Scientific Computing 20(1),
1998 (METIS, used through pymetis). Mu Li, David G. Andersen and Alexander J.
Smola, "Graph Partitioning via Parallel Submodular Approximation to
Accelerate Distributed Machine Learning", arXiv:1505.04636, 2015: data and
parameter placement for a parameter server as partitioning of the bipartite
sample-parameter graph (section 2), against random placement. Mu Li et al.,
"Scaling Distributed Machine Learning with the Parameter Server", OSDI 2014:
the key-value push/pull of only the keys a worker's data touch (sections 3.1,
3.2), on sparse logistic regression.
"""

import time

import numpy as np

from netsim import checks

from workloads import mlp
from workloads.datasets import shards as _random_shards
from workloads.option_ranges import check_option
from workloads.errors import PartitionError, ProjectionError, WorkloadError
from workloads.plan.closed import terms, worker_mask
from workloads.plan.measure import tag_mask
from workloads.recorder import V100_FP32_FLOPS, Recorder
from workloads.training import epochs_of, first_nonfinite, prepare, worker_batches

__all__ = ["run", "measure", "closed_form", "FORMULA", "UNEVEN", "partition_samples", "partition_features",
           "random_features", "PARTITIONS", "DESCRIPTION", "OPTIONS"]

DESCRIPTION = ("parameter server on sparse data: workers pull/push only the rows their "
               "mini-batch touches; samples and rows placed by METIS (or at random).")
OPTIONS = {
    "epochs": "passes over each worker's shard of the training set",
    "seed": "seed of the initial weights, the placement (METIS and random) and mini-batch order",
    "servers": "number of servers holding the rows of the weight table",
    "partition": "placement of samples and rows: metis (pymetis) or random (seeded baseline)",
    "batch_size": "samples per step per worker",
    "lr": "learning rate (SGD on the servers)",
    "dataset_options": "options of the dataset (e.g. {'locality': 0.99} for sparse)",
    "device_flops": "device throughput in FLOP/s for the compute ops",
    "data_path": "directory of the MNIST IDX files",
}

PARTITIONS = ("metis", "random")


def _csr(X):
    import scipy.sparse

    return X.tocsr() if scipy.sparse.issparse(X) else scipy.sparse.csr_matrix(np.asarray(X))


def _metis(parts, ptr, adj, seed, vweights, eweights=None):
    try:
        import pymetis
    except ImportError:
        raise WorkloadError("partition='metis' needs pymetis (pip install pymetis)") from None
    if parts == 1:
        return np.zeros(len(ptr) - 1, np.int64)
    res = pymetis.part_graph(parts, adjacency=pymetis.CSRAdjacency(ptr, adj),
                             vweights=vweights, eweights=eweights,
                             options=pymetis.Options(seed=int(seed)))
    return np.asarray(res.vertex_part, np.int64)


def _bipartite(rows, cols, n_rows, n_cols, weights=None):
    """CSR adjacency of the bipartite graph with vertices rows ``0..n_rows-1`` then columns."""
    src = np.concatenate([rows, cols + n_rows]).astype(np.int64)
    dst = np.concatenate([cols + n_rows, rows]).astype(np.int64)
    order = np.lexsort((dst, src))
    ptr = np.zeros(n_rows + n_cols + 1, np.int64)
    np.cumsum(np.bincount(src, minlength=n_rows + n_cols), out=ptr[1:])
    w = None if weights is None else np.concatenate([weights, weights])[order].astype(np.int64)
    return ptr, dst[order], w


def partition_samples(X, workers, seed=0):
    """Assign samples to workers with METIS on the bipartite sample-feature graph.

    Parameters
    ----------
    X : scipy.sparse matrix or ndarray
        Samples x features; an edge joins a sample and each feature it uses.
    workers : int
    seed : int
        METIS's random seed.

    Returns
    -------
    ndarray of int
        Worker of every sample.

    Raises
    ------
    PartitionError
        If there are more workers than samples.

    Notes
    -----
    When METIS leaves a worker without samples (it can on dense data: digits
    at 16 workers), the samples, ordered by METIS part, are dealt to the
    workers in contiguous runs of equal size instead, so every worker count up
    to the number of samples works.

    Examples
    --------
    >>> from workloads.datasets import sparse
    >>> X, _, cluster = sparse(200, 100, 4, seed=0, nnz=8, locality=1.0)
    >>> part = partition_samples(X, 4)
    >>> np.bincount(part).tolist()
    [50, 50, 50, 50]
    >>> all(len(set(cluster[part == w].tolist())) == 1 for w in range(4))
    True
    """
    X = _csr(X)
    n, F = X.shape
    if workers > n:
        raise PartitionError(f"cannot place {n} samples on {workers} workers")
    rows = np.repeat(np.arange(n), np.diff(X.indptr))
    ptr, adj, _ = _bipartite(rows, X.indices, n, F)
    vw = np.concatenate([np.ones(n, np.int64), np.zeros(F, np.int64)])
    part = _metis(workers, ptr, adj, seed, vw)[:n]
    if (np.bincount(part, minlength=workers) == 0).any():
        # METIS may leave parts empty on dense data (digits at 16 workers: 6 of 16). Deal
        # the samples, ordered by METIS part, in contiguous equal runs: balanced, each run
        # within one or two of METIS's parts.
        order = np.argsort(part, kind="stable")
        part = np.empty(n, np.int64)
        for w, run in enumerate(np.array_split(order, workers)):
            part[run] = w
    return part


def partition_features(X, sample_part, workers, servers, seed=0):
    """Assign feature rows to servers with METIS on the bipartite worker-feature graph.

    The edge between worker ``w`` and feature ``j`` weighs the number of
    ``w``'s samples that use ``j``; a feature weighs its total number of uses
    (its share of the pull and push traffic), a worker nothing. Cutting few
    heavy edges puts each feature on the server that its main users talk to.

    Parameters
    ----------
    X : scipy.sparse matrix or ndarray
    sample_part : ndarray of int
        Worker of every sample (e.g. from :func:`partition_samples`).
    workers, servers : int
    seed : int

    Returns
    -------
    ndarray of int
        Server of every feature (features no sample uses still get one).

    Examples
    --------
    >>> from workloads.datasets import sparse
    >>> X, _, _ = sparse(200, 100, 4, seed=0, nnz=8, locality=1.0)
    >>> part = partition_samples(X, 4)
    >>> owner = partition_features(X, part, 4, 2)
    >>> owner.shape, sorted(set(owner.tolist()))
    ((100,), [0, 1])
    """
    X = _csr(X)
    n, F = X.shape
    sample_part = np.asarray(sample_part, np.int64)
    rows = np.repeat(sample_part, np.diff(X.indptr))
    key = rows * F + X.indices
    pairs, counts = np.unique(key, return_counts=True)
    ptr, adj, ew = _bipartite(pairs // F, pairs % F, workers, F, counts)
    uses = np.bincount(X.indices, minlength=F).astype(np.int64)
    vw = np.concatenate([np.zeros(workers, np.int64), uses])
    return _metis(servers, ptr, adj, seed, vw, ew)[workers:]


def random_features(F, servers, rng):
    """The baseline: rows dealt to servers by a seeded random permutation (equal counts).

    Parameters
    ----------
    F : int
        Feature rows.
    servers : int
        Servers.
    rng : numpy.random.Generator

    Examples
    --------
    >>> np.bincount(random_features(10, 3, np.random.default_rng(0))).tolist()
    [4, 3, 3]
    """
    return (np.random.default_rng(rng).permutation(F) % servers).astype(np.int64)


def run(dataset="sparse", workers=4, epochs=20, seed=0, servers=2, partition="metis",
        batch_size=64, lr=2.0, dataset_options=None, device_flops=V100_FP32_FLOPS,
        data_path=None, progress=None):
    """Train sparse softmax regression on a parameter server; record every pull and push.

    Parameters
    ----------
    dataset : str or Dataset
        Any dataset works (a dense one touches every row); ``sparse`` is the
        intended one.
    workers : int
        Worker ranks ``0..P-1``; servers are ranks ``P..P+S-1``.
    epochs : int
    seed : int
        Seed of the initial weights, of the placement and of the mini-batch order.
    servers : int
    partition : {"metis", "random"}
    batch_size : int
    lr : float
        SGD learning rate applied by the servers to the averaged gradient rows.
    dataset_options : dict, optional
        Passed to :func:`workloads.datasets.load`.
    device_flops : float
    data_path : str, optional
    progress : callable, optional
        Called as ``progress(epochs_done, epochs)`` after each epoch (progress bars).

    Returns
    -------
    RunResult
        ``dropped_fraction``: values not sent over those of a dense PS that
        pulls and pushes the whole table every step. ``extra``: ``partition``,
        ``rows_per_step`` (mean rows a worker pulls per step),
        ``servers_per_step`` (mean servers a worker contacts per step),
        ``shard_features`` (distinct features of each worker's shard),
        ``samples_per_worker``, ``rows_per_server``, ``bytes_by_tag``,
        ``partition_seconds`` (wall time of the placement, measured),
        ``test_loss``.

    Examples
    --------
    >>> r = run(epochs=1, workers=2)
    >>> r.trace.ranks, r.extra["partition"], r.extra["samples_per_worker"]
    (4, 'metis', [801, 799])
    >>> r.total_bytes == sum(r.extra["bytes_by_tag"].values())
    True
    """
    check_option("partition", partition, "ps-partitioned")
    servers = checks.check_int(servers, "servers", error=WorkloadError)
    setup = prepare(dataset, workers, seed, (), data_path, dataset_options, epochs=epochs, lr=lr)
    data = setup.data
    P = len(setup.shards)
    X = _csr(data.X_train)
    F, C = data.n_features, data.n_classes
    y = data.y_train
    t0 = time.perf_counter()   # the placement's cost, for studies.claims.metis_vs_random's pay-back
    if partition == "metis":
        sample_part = partition_samples(X, P, seed)
        shard_list = [np.flatnonzero(sample_part == w) for w in range(P)]
        owner = partition_features(X, sample_part, P, servers, seed)
    else:
        # A second draw from setup.rng rather than prepare's setup.shards: recorded
        # random-placement runs have always used it, and dropping it would change them.
        shard_list = _random_shards(data.n_train, P, setup.rng)
        owner = random_features(F, servers, setup.rng)
    partition_seconds = time.perf_counter() - t0
    owner = np.concatenate([owner, [0]])       # row F (the biases) lives on server 0
    table = np.vstack([setup.params[0], setup.params[1][None, :]]).astype(np.float32)
    rec = Recorder(P, servers)
    last_update = [None] * servers
    bytes_by_tag = {"pull-request": 0, "pull": 0, "push": 0}
    rows_pulled = contacts = steps = sent_values = 0
    lr32, inv_p = np.float32(lr), np.float32(1.0 / P)
    it, bad = 0, None
    for _ in epochs_of(range(epochs), epochs, progress):
        for batch in worker_batches(shard_list, batch_size, setup.rng):
            plans = []
            # 1-2. Pull requests and replies (the reply waits for the server's last update).
            for w, idx in enumerate(batch):
                Xb = X[idx]
                keys = np.append(np.unique(Xb.indices), F).astype(np.int64)
                by_server = {}
                for s in np.unique(owner[keys]).tolist():
                    k = keys[owner[keys] == s]
                    req, nb = rec.send(w, rec.server(s), k.astype(np.int32), iteration=it,
                                       tag="pull-request")
                    bytes_by_tag["pull-request"] += nb
                    vals = table[k].copy()
                    deps = [req] + ([last_update[s]] if last_update[s] is not None else [])
                    _, nb = rec.send(rec.server(s), w, vals, deps=deps, iteration=it, tag="pull")
                    bytes_by_tag["pull"] += nb
                    by_server[s] = (k, vals)
                    sent_values += vals.size
                plans.append((idx, Xb, by_server))
                rows_pulled += len(keys)
                contacts += len(by_server)
                steps += 1
            # 3-4. Gradient on exactly the pulled values, then push the gradient rows.
            pushed = [[] for _ in range(servers)]
            for w, (idx, Xb, by_server) in enumerate(plans):
                local = np.zeros((F + 1, C), np.float32)
                for k, vals in by_server.values():
                    local[k] = vals
                loss, grads = mlp.loss_and_grads([local[:F], local[F]], Xb, y[idx])
                bad = first_nonfinite(bad, loss, it)
                grad_table = np.vstack([grads[0], grads[1][None, :]])
                fwd = 2.0 * Xb.nnz * C + C * len(idx)
                rec.compute(w, fwd, iteration=it, tag="forward")
                rec.compute(w, 2 * fwd, iteration=it, tag="backward")
                for s, (k, _) in by_server.items():
                    payload = (grad_table[k].copy(), k.astype(np.int32))
                    _, nb = rec.send(w, rec.server(s), payload, iteration=it, tag="push")
                    bytes_by_tag["push"] += nb
                    pushed[s].append(payload)
                    sent_values += payload[0].size
            # Servers: average the pushed rows over the P workers and step.
            for s in range(servers):
                if not pushed[s]:
                    continue
                total = sum(v.size for v, _ in pushed[s])
                last_update[s] = rec.compute(rec.server(s), 3 * total, iteration=it, tag="update")
                for vals, k in pushed[s]:
                    table[k.astype(np.int64)] -= lr32 * inv_p * vals
            it += 1
    final = [table[:F], table[F]]
    dense = 2 * steps * (F + 1) * C
    shard_features = [int(len(np.unique(X[s].indices))) for s in shard_list]
    hyper = dict(epochs=epochs, servers=servers, partition=partition, batch_size=batch_size,
                 lr=lr, dataset_options=dict(dataset_options or {}), device_flops=device_flops)
    extra = {"partition": partition,
             "rows_per_step": rows_pulled / steps if steps else 0.0,
             "servers_per_step": contacts / steps if steps else 0.0,
             "shard_features": shard_features,
             "samples_per_worker": [int(len(s)) for s in shard_list],
             "rows_per_server": np.bincount(owner, minlength=servers).tolist(),
             "bytes_by_tag": bytes_by_tag, "partition_seconds": partition_seconds,
             "test_loss": mlp.loss(final, data.X_test, data.y_test)}
    return rec.result("ps-partitioned", setup, mlp.accuracy(final, data.X_test, data.y_test), it,
                      hyper, dropped_fraction=1.0 - sent_values / dense if dense else 0.0,
                      extra=extra, diverged_at=bad)


def measure(trace):
    """A partitioned parameter server's recording has no statistics to schedule it at
    another P from: this says why.

    Raises
    ------
    ProjectionError
        Always: its traffic depends on which features each worker's mini-batches touch
        and on a METIS placement computed for P workers.

    Examples
    --------
    >>> from netsim import TraceBuilder
    >>> measure(TraceBuilder(1).build())  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    workloads.errors.ProjectionError: paradigm 'ps-partitioned' cannot be projected: ...
    """
    raise ProjectionError("paradigm 'ps-partitioned' cannot be projected: its traffic depends "
                          "on which features each worker's mini-batches touch and on a METIS "
                          "placement computed for P workers, which a recording at another P "
                          "does not determine; record it at the P you want")


#: The closed form's words (``formula`` of :func:`closed_form`, printed by ``netsim scale``).
FORMULA = ("compute + per server in turn (request: alpha + R_s beta, values: alpha + D_s beta; "
           "a worker asks the next server only once the last one's values are in) + push "
           "(alpha + max_s U_s beta) + server; R_s, D_s, U_s the bytes on server s's link, "
           "P flows each")


#: Why the simulation departs from the in-step chain where the workers' messages differ.
UNEVEN = ("the closed form puts the workers in step at each server (all P requests, then all P "
          "replies on that server's link); where a server's replies to the workers differ in "
          "size, a worker served early moves on to its next server while the others still share "
          "this one's link: the hops overlap, and the chain overstates the simulation")


def closed_form(trace, alpha, beta, device_flops=None):
    """Alpha-beta closed form of one iteration of the partitioned parameter server.

    A worker contacts its servers one after another: its pull request to server
    ``s`` waits for the values of the server before it (the recording's program
    order: a request leaves once the worker has what it received so far), so the
    pull phase is a chain of round trips, one per server contacted, not one
    round trip to all of them at once. With the workers in step, the P requests
    to server ``s`` share its link (``R_s`` bytes in all), then its P replies
    (``D_s`` bytes), then the next server's; after the compute, every worker
    pushes to all its servers at once, and the busiest server link (``U_s``
    bytes) ends the phase. Per iteration::

        sum_s [(alpha + R_s beta) + (alpha + D_s beta)] + alpha + max_s U_s beta

    where the request to the first server is left out after the run's first
    iteration: it leaves with the previous push, right after the backward pass,
    and is in long before that server's update. Compute and server work add to
    it (:func:`workloads.plan.closed.terms`).

    The generic parameter-server form (:func:`workloads.paradigms.ps.closed_form`,
    one push and one pull phase over the mean bytes) is 29-71 % below the
    simulation for this paradigm: it has one latency where the chain has ``2 S``
    (less the hidden request) and overlaps the servers' replies, which here come
    one after another.

    Parameters
    ----------
    trace : Trace
        A recording of ``ps-partitioned`` (messages tagged ``pull-request``,
        ``pull`` and ``push``).
    alpha : float
        Latency of a message, seconds.
    beta : float
        Seconds per byte.
    device_flops : float, optional
        FLOP/s of the compute ops (default: the trace's metadata).

    Returns
    -------
    dict
        ``compute``, ``server``, ``communication``, ``time`` (seconds per
        iteration), ``formula`` and ``gap``: where the workers' messages to a
        server differ in size, ``why`` (:data:`UNEVEN`) the simulation may differ
        from the in-step chain and ``detail`` (how much they differ); None where
        they are alike.

    Examples
    --------
    Two workers and two servers, one iteration, by hand: requests of 8 bytes and
    values of 100 bytes per worker and server, pushes of 120. The chain is
    ``(alpha + 16 beta) + (alpha + 200 beta)`` for each server, then
    ``alpha + 240 beta``: ``5 alpha + 672 beta``.

    >>> from netsim import TraceBuilder
    >>> b = TraceBuilder(4, metadata={"workers": 2, "servers": 2})
    >>> for s in (2, 3):
    ...     for w in (0, 1):
    ...         _ = b.message(w, s, 8, tag="pull-request"); _ = b.message(s, w, 100, tag="pull")
    >>> for w in (0, 1):
    ...     for s in (2, 3): _ = b.message(w, s, 120, tag="push")
    >>> cf = closed_form(b.build(), 1e-6, 1e-9)
    >>> abs(cf["communication"] - (5e-6 + 672e-9)) < 1e-18
    True
    """
    worker = worker_mask(trace)
    niter = max(trace.num_iterations, 1)
    servers = np.flatnonzero(~worker)
    it = trace.iteration

    def per_pair(tag, server, peer):
        # bytes of each (iteration, worker, server) pair's tagged message
        m = tag_mask(trace, tag)
        grid = np.zeros((niter, trace.ranks, trace.ranks))
        np.add.at(grid, (it[m], peer[m], server[m]), trace.size[m])
        return grid[:, worker][:, :, servers]

    R = per_pair("pull-request", trace.peer, trace.rank)
    D = per_pair("pull", trace.rank, trace.peer)
    U = per_pair("push", trace.peer, trace.rank)
    comm = np.zeros(niter)
    for i in range(niter):
        chains = [0.0]
        for w in range(R.shape[1]):
            visited = np.flatnonzero(R[i, w] > 0)
            hops = [_shared(R[i, :, s], R[i, w, s], alpha, beta)
                    for s in visited[1 if i > 0 else 0:]]
            hops += [_shared(D[i, :, s], D[i, w, s], alpha, beta) for s in visited]
            chains.append(sum(hops))
        push = max((_shared(U[i, :, s], U[i, :, s].max(), alpha, beta)
                    for s in range(U.shape[2]) if U[i, :, s].any()), default=0.0)
        comm[i] = max(chains) + push
    return {**terms(trace, comm, device_flops, FORMULA), "gap": _uneven(D, servers)}


def _shared(sizes, x, alpha, beta):
    """Seconds until a message of ``x`` bytes is in when the messages of ``sizes`` (it among
    them) start together on one link shared max-min: each runs at the same share until it
    is done, so the message of ``x`` waits for ``min(size, x)`` bytes of every one."""
    return alpha + beta * float(np.minimum(sizes, x).sum())


def _uneven(D, servers):
    """Why the simulation may differ from the in-step chain, or None: the spread of the
    workers' replies from the busiest server (``D``: iteration x worker x server bytes)."""
    s = int(D.sum(axis=(0, 1)).argmax())
    sizes = D[:, :, s][D[:, :, s] > 0]
    if not len(sizes) or sizes.max() <= 1.05 * sizes.min():
        return None
    return {"why": UNEVEN, "detail": f"the replies of the busiest server (rank "
            f"{int(servers[s])}) to one worker range over {sizes.min():,.0f}.."
            f"{sizes.max():,.0f} bytes"}
