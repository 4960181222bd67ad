"""Asynchronous parameter server: Downpour SGD (Dean et al. 2012, "Large Scale
Distributed Deep Networks", NIPS, section 4.1).

Each worker keeps a copy of the weights and, on its own schedule,

* fetches the current weights from the servers every ``n_fetch`` steps,
* computes gradients on its mini-batch with the copy it has (no local update),
* adds them to an accumulator, and every ``n_push`` steps pushes the
  accumulated gradients (float32 shards, ``4 * len(shard)`` bytes each); the
  servers apply them at once with an SGD step (Downpour used Adagrad; we use
  momentum SGD, ``momentum=0`` by default). A server's update of a push is a
  compute op of ``5 * len(shard)`` FLOPs: ps-sync's ``(P + 4)`` per value for a
  single push (1 to take the pushed value in, 4 for the momentum update,
  :func:`workloads.mlp.update_flops`), whatever the momentum.

The trace is truly asynchronous: a worker's chain depends only on its own
exchanges with the servers. Its fetch from server ``s`` waits for its own last
compute and for server ``s``'s update of its own last push (the server answers a
worker's requests in order), never for another worker's push; an update waits
for its push alone (updates of different workers are independent ops on the
server rank, which the engine may overlap: the server is lock-free, as
Hogwild!). So a slow worker delays nobody but itself. The staleness of an
update is measured after a replay by :func:`staleness` from the op times.

**SSP** (stale synchronous parallel, Ho et al. 2013, "More Effective Distributed
ML via a Stale Synchronous Parallel Parameter Server", NIPS) with bound
``ssp=s``: a worker may start step ``t + s + 1`` only once every worker's update
of step ``t`` is applied, so its fetch of step ``t`` also waits for every
worker's update of step ``t - s - 1`` (static dependencies; needs
``n_fetch = n_push = 1``). ``ssp=0`` is lock-step (every read sees every update
of the previous step).

The real training interleaves the workers as the trace does when every worker
runs at the same speed, in rounds: in round ``t`` the workers due to fetch read
the servers' current weights, every worker computes its step ``t``, and the
pushes due reach the servers one after another, in worker order rotated by ``t``
(round-robin). With ``n_fetch=1`` the staleness is 0..P-1, mean (P-1)/2. A replay
of the trace with equal device speeds ends the round's updates at one instant;
:func:`staleness` breaks such ties in the same rotated order, so it gives the
training's staleness exactly (``tests/test_async.py``). The round-robin
interleaving never runs a worker ahead of another, so it satisfies every SSP
bound. A replay with stragglers (:mod:`netsim.trace.perturb`) gives other staleness
than the recording trained with: the trace is replayed, not retrained.

Staleness of an update: the number of server updates applied between the
fetch whose weights produced the oldest of the accumulated gradients and this
update. ``RunResult.extra`` reports its mean and maximum.
"""

import math

import numpy as np

from netsim.trace.core import COMPUTE, MESSAGE

from workloads import mlp
from workloads.paradigms import ps
from workloads.plan.closed import Asymptotic
from workloads.errors import WorkloadError
from workloads.option_ranges import check_option
from workloads.plan.frontier import Frontier, cols, interleave, merge, one
from workloads.plan.phases import Phases
from workloads.plan.measure import Recording, finish, plan
from workloads.paradigms.ps import init_servers, measure_dense, server_update_flops, shard_layout
from workloads.recorder import V100_FP32_FLOPS, bytes_per_value, count_sent, run_result
from workloads.training import epochs_of, first_nonfinite, prepare, worker_batches

__all__ = ["run", "schedule", "measure", "staleness", "closed_form", "phases", "ASYMPTOTIC",
           "SERVERS", "DESCRIPTION", "OPTIONS"]

#: Any number of servers >= 1 (see :func:`workloads.plan.measure.plan`).
SERVERS = "servers"

DESCRIPTION = "parameter server, asynchronous (Downpour SGD): fetch every n_fetch, push every n_push steps."

#: Worst-case cost per step (:func:`closed_form`).
ASYMPTOTIC = Asymptotic(
    "Downpour SGD (asynchronous)", "parameter server, S servers",
    "(alpha + 4 max(P, S) n beta / S) (1 / n_push + 1 / n_fetch)",
    "C + 5 P n / (S F n_push)",
    "O(P n / S) bytes on a server link; O(C + P n / S) compute",
    "Dean et al., NIPS 2012, section 4.1")
OPTIONS = {
    "epochs": "passes over each worker's shard of the training set",
    "seed": "seed of the initial weights, shards and mini-batch order",
    "servers": "number of servers; the parameters are sharded evenly among them",
    "n_fetch": "fetch the weights every n_fetch local steps",
    "n_push": "push the accumulated gradients every n_push local steps",
    "hidden": "hidden-layer widths",
    "batch_size": "samples per step per worker",
    "lr": "learning rate (applied by the servers to every push)",
    "momentum": "SGD momentum on the servers",
    "ssp": "bounded staleness s (SSP): start step t+s+1 only after every worker's step t "
           "(needs n_fetch=n_push=1); none for fully asynchronous",
    "overlap": "let a gradient shard leave once its layers' backward is done",
    "device_flops": "device throughput in FLOP/s for the compute ops",
    "data_path": "directory of the MNIST IDX files",
}


def run(dataset="iris", workers=4, epochs=30, seed=0, servers=1, n_fetch=1, n_push=1,
        hidden=(16,), batch_size=8, lr=0.02, momentum=0.0, overlap=True,
        device_flops=V100_FP32_FLOPS, data_path=None, progress=None, ssp=None):
    """Train with Downpour SGD; record every fetch, push and server update.

    Parameters
    ----------
    dataset : str or Dataset
    workers : int
    epochs : int
        Passes over each worker's shard.
    seed : int
    servers : int
    n_fetch, n_push : int
        Fetch every ``n_fetch`` and push every ``n_push`` local steps (a
        worker's last step always pushes).
    hidden : sequence of int
    batch_size : int
    lr, momentum : float
    overlap : bool
    device_flops : float
    data_path : str, optional
    progress : callable, optional
        Called as ``progress(epochs_done, epochs)`` after each epoch (progress bars).
    ssp : int, optional
        Staleness bound s of SSP (>= 0); None (default) for fully asynchronous.

    Returns
    -------
    RunResult
        ``extra``: ``mean_staleness``, ``max_staleness``, ``staleness`` (of
        every push, in the order applied), ``updates`` (server
        updates applied), ``shard_sizes`` (values per server), ``test_loss``.

    Examples
    --------
    >>> r = run(workers=3, epochs=1, n_push=2)
    >>> r.extra["updates"], r.extra["max_staleness"]
    (9, 2)
    """
    n_fetch = check_option("n_fetch", n_fetch)
    n_push = check_option("n_push", n_push)
    ssp = _check_ssp(ssp, n_fetch, n_push)
    setup = prepare(dataset, workers, seed, hidden, data_path, epochs=epochs, lr=lr,
                    momentum=momentum)
    data, layers = setup.data, setup.layers
    n = mlp.num_params(layers)
    bounds, shard, velocity, models = init_servers(setup, servers)
    acc = [np.zeros(n, np.float32) for _ in range(workers)]
    base = [0] * workers          # server version of the weights a worker holds
    oldest = [None] * workers     # version behind the oldest accumulated gradient
    version, bad = 0, None
    stale = []
    sent = {"push": {}, "fetch": {}}
    schedule_ = [b for _ in range(epochs)
                 for b in worker_batches(setup.shards, batch_size, setup.rng)]
    steps = len(schedule_)
    for t, batch in enumerate(epochs_of(schedule_, epochs, progress)):
        # Round t: the workers due to fetch read the servers' current weights, all
        # compute concurrently, then their pushes reach the servers one by one, in an
        # order rotated every round so that no worker is always the freshest.
        for w, idx in enumerate(batch):
            if t % n_fetch == 0 and t > 0:
                pulled = [count_sent(sent["fetch"], shard[s].copy()) for s in range(servers)]
                models[w] = mlp.unflatten(np.concatenate(pulled), layers)
                base[w] = version
            loss, grads = mlp.loss_and_grads(models[w], data.X_train[idx], data.y_train[idx])
            bad = first_nonfinite(bad, loss, t)
            acc[w] += mlp.flatten(grads)
            if oldest[w] is None:
                oldest[w] = base[w]
        if (t + 1) % n_push and t != steps - 1:
            continue
        for k in range(workers):
            w = (t + k) % workers
            for s in range(servers):
                lo, hi = bounds[s], bounds[s + 1]
                payload = count_sent(sent["push"], acc[w][lo:hi].copy())
                mlp.sgd_momentum_step([shard[s]], [payload], [velocity[s]], lr, momentum)
            stale.append(version - oldest[w])
            version += 1
            acc[w][:] = 0.0
            oldest[w] = None
    final = mlp.unflatten(np.concatenate(shard), layers)
    hyper = dict(epochs=epochs, servers=servers, n_fetch=n_fetch, n_push=n_push, hidden=hidden,
                 batch_size=batch_size, lr=lr, momentum=momentum, overlap=overlap,
                 device_flops=device_flops, ssp=ssp)
    extra = {"mean_staleness": float(np.mean(stale)), "max_staleness": int(np.max(stale)),
             "staleness": stale,
             "updates": len(stale), "shard_sizes": np.diff(bounds).tolist(),
             "test_loss": mlp.loss(final, data.X_test, data.y_test)}
    stats = {"recording": Recording(workers, servers, steps, mlp.model_of(layers),
                                    np.array([len(idx) for idx in schedule_[0]]), hyper, {}),
             "push": bytes_per_value(sent["push"]), "pull": bytes_per_value(sent["fetch"])}
    return run_result("ps-async", schedule(workers, stats), setup,
                      mlp.accuracy(final, data.X_test, data.y_test),
                      sent["push"]["bytes"] + sent["fetch"].get("bytes", 0),
                      sent["push"]["messages"] + sent["fetch"].get("messages", 0), steps, hyper,
                      servers=servers, extra=extra, diverged_at=bad)


def measure(trace):
    """Bytes per parameter of the pushes and fetches of a recorded Downpour run
    (:func:`workloads.paradigms.ps.measure_dense` of tags ``push`` and ``fetch``).

    Examples
    --------
    >>> m = measure(run(workers=2, epochs=1).trace)
    >>> m["push"], m["pull"]
    (4.0, 4.0)
    """
    return measure_dense(trace, push="push", pull="fetch")


def _check_ssp(ssp, n_fetch, n_push):
    """The SSP bound (None or an int >= 0); SSP needs a fetch and a push every step."""
    if ssp is None or (isinstance(ssp, str) and ssp.lower() == "none"):
        return None
    ssp = check_option("ssp", ssp)
    if n_fetch != 1 or n_push != 1:
        raise WorkloadError(f"ssp={ssp} needs n_fetch=1 and n_push=1 (a read and a write "
                            f"every step), got n_fetch={n_fetch}, n_push={n_push}")
    return ssp


def phases(trace):
    """Downpour's phases (:mod:`workloads.plan.phases`): period ``lcm(n_fetch, n_push)``,
    the steps after which the pattern of fetches and pushes repeats.

    Parameters
    ----------
    trace : netsim.Trace
        A ps-async recording or projection (its ``hyper``).

    Returns
    -------
    workloads.plan.phases.Phases

    Examples
    --------
    >>> phases(run(workers=2, epochs=1, n_fetch=2, n_push=3).trace).period
    6
    """
    hyper = trace.metadata.get("hyper") or {}
    f, p = int(hyper.get("n_fetch", 1)), int(hyper.get("n_push", 1))
    period = math.lcm(f, p)
    return Phases(period=period, what=(f"fetch every {f}, push every {p} steps: a period of "
                                       f"{period}"))


def schedule(P, stats, servers=None, iterations=None, batch_size=None, model=None,
             start=0):
    """Downpour steps with ``P`` workers: fetch every ``n_fetch`` steps, forward and
    backward every step, push every ``n_push`` steps and at the last; each push is
    applied by an update (:func:`workloads.paradigms.ps.server_update_flops` of one push).
    A worker's fetch waits for its own last compute and its own last update on that
    server only (with SSP bound s, also every worker's update of step ``t - s - 1``);
    an update waits for its push only.

    Parameters
    ----------
    P : int
    stats : dict
        From :func:`measure`.
    servers, iterations, batch_size : int, optional
    model : workloads.mlp.Model, optional
    start : int, optional
        The run's iteration the trace begins at (:class:`workloads.plan.measure.Plan`).

    Returns
    -------
    netsim.Trace

    Examples
    --------
    >>> t = schedule(16, measure(run(workers=2, epochs=1).trace), iterations=2)
    >>> t.ranks, t.num_messages
    (17, 48)
    """
    c = plan(P, stats["recording"], SERVERS, servers, iterations, batch_size, model, start)
    P, S, model = c.P, c.S, c.model
    bounds, sizes, W, srv = shard_layout(c)
    n_fetch, n_push = int(c.rec.hyper.get("n_fetch", 1)), int(c.rec.hyper.get("n_push", 1))
    ssp = _check_ssp(c.rec.hyper.get("ssp"), n_fetch, n_push)
    overlap = c.rec.hyper.get("overlap", True)
    unit = model.unit_of(bounds[:-1])
    b = Frontier(P + S)
    last = np.full((P, S), -1, np.int64)     # each worker's last update on each server
    updates = []                             # [step] -> (P, S) update ids, for SSP
    for t in range(c.iterations):
        g = c.start + t                     # the step's place in the run
        # The trace's first step starts from the weights it was given, as the run's does.
        if g % n_fetch == 0 and t > 0:
            # Fetch (w, s) for w, then s: the worker's last compute, its last update on s
            # and, with SSP, every worker's update of step t - ssp - 1 on s.
            columns = [np.repeat(_last_compute(b, W), S), last.ravel()]
            if ssp is not None and t - ssp - 1 >= 0:
                columns += [np.tile(u, P) for u in updates[t - ssp - 1]]
            b.send(np.tile(srv, P), np.repeat(W, S), np.tile(sizes * stats["pull"], P), t,
                   "fetch", deps=cols(*columns))
        bwd = b.forward_backward(W, model, c.batch, t)
        if (g + 1) % n_push and t != c.iterations - 1:
            continue
        # Laid out as push, update, push, update, ... in worker order rotated by t (the
        # training's order of applying them); an update waits for its push only.
        k = np.repeat(np.arange(P), S)
        w, s = (t + k) % P, np.tile(np.arange(S), P)
        push_id = b.n + 2 * np.arange(P * S)
        upd_id = push_id + 1
        pdeps = one(bwd[unit[s], w]) if overlap else b.frontier(w)
        kind = np.tile(np.array([MESSAGE, COMPUTE], np.uint8), P * S)
        rank = np.ravel(np.column_stack([w, P + s]))
        peer = np.ravel(np.column_stack([P + s, np.full(P * S, -1)]))
        size = np.ravel(np.column_stack([sizes[s] * stats["push"], np.zeros(P * S)]))
        flops = np.ravel(np.column_stack([np.zeros(P * S), server_update_flops(1, sizes[s])]))
        tag = np.tile(np.array([b.tag("push"), b.tag("update")], np.int16), P * S)
        b.add(kind, rank, peer, size, flops, t, tag, interleave(pdeps, one(push_id)))
        last[w, s] = upd_id
        updates.append(last.copy())
    return finish(b.build(), c, SERVERS)


def _last_compute(b, ranks):
    """Each rank's last compute op in the builder ``b`` (its frontier's first entry)."""
    counts, idx = b.frontier(ranks)
    return idx[np.cumsum(counts) - counts]


def staleness(trace, result):
    """Staleness of every server update of a replayed Downpour trace, from its op times.

    For the update of worker ``w``'s push on server ``s`` at step ``t``: the weights
    behind its oldest accumulated gradient were read when the fetch ``s -> w`` of
    the last fetch step ``<= o`` began (``o``: the step after ``w``'s previous
    push; no such fetch: the initial weights, read at -inf). Then

    * ``updates``: the updates on ``s`` applied after that read and before this
      one: ended after the read, and before this update (ties at one instant in
      the training's order: by step, then worker rotated by the step);
    * ``clocks``: ``o - t'`` for the oldest step ``t' < o`` of an update on ``s``
      not yet applied at the read, else 0 (SSP's staleness in steps: with bound s
      it is at most s).

    Parameters
    ----------
    trace : netsim.Trace
        A ps-async trace (tags ``fetch``, ``push``, ``update``).
    result : netsim.Result
        Its replay (:func:`netsim.simulate`, possibly of a perturbed copy).

    Returns
    -------
    dict of ndarray
        One entry per update op, in op order: ``op``, ``worker``, ``server``
        (index), ``step``, ``updates``, ``clocks``.

    Examples
    --------
    >>> import netsim
    >>> G = netsim.nx.star_graph(4)  # hub 0, ranks on the leaves
    >>> netsim.nx.set_edge_attributes(G, 1.25e9, "bandwidth")
    >>> netsim.nx.set_edge_attributes(G, 1e-6, "latency")
    >>> r = run(workers=3, epochs=1, n_push=2)
    >>> st = staleness(r.trace, netsim.simulate(r.trace, G))
    >>> st["updates"].tolist() == r.extra["staleness"], int(st["clocks"].max())
    (True, 0)
    """
    names = list(trace.tags)
    P = int(trace.metadata.get("workers", trace.ranks - 1))

    def ops(tag):
        return (np.flatnonzero(trace.tag == names.index(tag)) if tag in names
                else np.zeros(0, np.int64))

    start, end = result.ops["start"], result.ops["end"]
    upd, push, fetch = ops("update"), ops("push"), ops("fetch")
    # An update's push is the message among its dependencies.
    dep_of = trace.dep_idx[trace.dep_ptr[upd]]
    worker, server, step = trace.rank[dep_of].astype(np.int64), trace.rank[upd] - P, \
        trace.iteration[upd].astype(np.int64)
    # Oldest step of each push: one after the same worker's previous push to the server.
    key = (worker * (trace.ranks + 1) + server) * (trace.num_iterations + 1)
    order = np.lexsort((step, key))
    oldest = np.zeros(len(upd), np.int64)
    same = key[order][1:] == key[order][:-1]
    oldest[order[1:][same]] = step[order[:-1][same]] + 1
    # The read: start of the last fetch (server -> worker) at a step <= oldest.
    read = np.full(len(upd), -np.inf)
    if len(fetch):
        fkey = (trace.peer[fetch].astype(np.int64) * (trace.ranks + 1) + trace.rank[fetch] - P) \
            * (trace.num_iterations + 1) + trace.iteration[fetch]
        forder = np.argsort(fkey, kind="stable")
        at = np.searchsorted(fkey[forder], key + oldest, "right") - 1
        ok = at >= 0
        ok[ok] = (fkey[forder][at[ok]] // (trace.num_iterations + 1)
                  == key[ok] // (trace.num_iterations + 1))
        read[ok] = start[fetch[forder[at[ok]]]]
    n_upd, n_clk = np.zeros(len(upd), np.int64), np.zeros(len(upd), np.int64)
    for srv in np.unique(server):
        i = np.flatnonzero(server == srv)
        # Order of application: end time, then step, then worker rotated by the step.
        seq = i[np.lexsort(((worker[i] - step[i]) % P, step[i], end[upd[i]]))]
        pos = np.empty(len(upd), np.int64)
        pos[seq] = np.arange(len(seq))
        ends = end[upd[seq]]
        seen = np.searchsorted(ends, read[i], "right")
        n_upd[i] = np.maximum(pos[i] - seen, 0)
        # Oldest step not yet applied at the read: a suffix minimum over the order.
        tail = np.minimum.accumulate(step[seq][::-1])[::-1]
        first = np.append(tail, np.iinfo(np.int64).max)[seen]
        n_clk[i] = np.where(first < oldest[i], oldest[i] - first, 0)
    return {"op": upd, "worker": worker, "server": server, "step": step,
            "updates": n_upd, "clocks": n_clk}


def closed_form(trace, alpha, beta, device_flops=None):
    """Worst-case alpha-beta closed form of one Downpour step (Dean et al. 2012, 4.1).

    A step of P workers with S servers moves, when every worker pushes and
    fetches at once (the worst case: nothing overlaps), ``n / S`` bytes per
    worker-server pair each way: a push phase and a fetch phase of
    ``alpha + max(P, S) n beta / S`` each (:func:`workloads.paradigms.ps.closed_form`,
    on the steps that push or fetch: every ``n_push``-th and ``n_fetch``-th),
    and each server applies the P pushes one after another, ``P x 5 n / S``
    FLOPs (:func:`workloads.paradigms.ps.server_update_flops` of one push each), on
    top of the worker's forward and backward compute:

        T = compute + P 5 n / (S F) + (alpha + max(P, S) n beta / S) (1 / n_push + 1 / n_fetch)

    Communication ``O(P n / S)`` on a server's link, computation ``O(C + P n /
    S)`` per step. Workers that never wait for each other overlap one another's
    fetches, computes and pushes and take less, down to the largest term; with
    equal workers and one server they nearly meet every round, within 0.002 % of
    it on Iris at P = 4 (with S = 2 a worker's shards leave as their layers'
    backward ends, 0.2 % above it).

    Parameters
    ----------
    trace : Trace
        A Downpour recording or schedule.
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
        iteration) and ``formula``.

    Examples
    --------
    Two workers push 1,000 bytes each to one server and fetch them back:

    >>> from netsim import TraceBuilder
    >>> b = TraceBuilder(3, metadata={"workers": 2, "servers": 1})
    >>> for w in (0, 1): _ = b.message(w, 2, 1000)
    >>> for w in (0, 1): _ = b.message(2, w, 1000)
    >>> cf = closed_form(b.build(), 1e-6, 1e-9)
    >>> abs(cf["communication"] - 2 * (1e-6 + 2 * 1000 * 1e-9)) < 1e-18
    True
    """
    out = ps.closed_form(trace, alpha, beta, device_flops)
    out["formula"] = ("worst case, nothing overlapped: compute + P serial updates + "
                      "push and fetch (alpha + max(P,S) n beta / S) on the steps that do them")
    return out
