"""Project a trace recorded at a small P to any number of workers P.

A paradigm's run at P = 4 or 8 (:mod:`workloads`) records every message it
sends. :func:`project` turns such a trace into the trace of the same paradigm
at any P (P = 1024 in seconds), so that scaling can be studied without
training 1,024 workers. The projection keeps the paradigm's communication
pattern -- who sends what to whom, waiting for what, exactly as the
paradigm's recorder orders it -- and takes every per-message byte statistic
from the recorded run itself (message sizes by tag and iteration, read from
the trace), never from the paradigm's hyper-parameters.

Scaling is **weak**: the batch per worker stays fixed (``batch_size=`` to
change it), so each worker's compute ops keep their FLOPs; only the ops whose
work depends on P by the paradigm's own definition (a server averaging P
pushes, RingTMP's ring batch of P x batch) change with P, and say so below.
Servers S stay as recorded unless ``servers=`` is given (parameters are then
re-sharded evenly, :func:`workloads.ps_sync.shard_bounds`). The number of
iterations is the recorded count unless ``iterations=`` is given.

Projection assumptions, per paradigm
------------------------------------
"Measured" is read from the recorded trace; n is the parameter count, n_s a
server's shard, b the batch per worker, P0 the recorded worker count.

=============== ========================== =================================================
paradigm        measured in the recording  pattern at P, and how P enters
=============== ========================== =================================================
single          (no messages)              one rank trains the union batch of P workers:
                                           forward and backward FLOPs scale with P x b
ps-sync         push and pull bytes per    P workers push S shards, servers average (P + 4
                parameter                  FLOPs per value: P adds, 4 for the step), every
                                           worker pulls every shard
ps-async        push and fetch bytes per   Downpour rounds; pushes reach the servers in
                parameter                  worker order rotated by the step, so staleness
                                           grows with P; fetch every n_fetch, push every
                                           n_push steps and at the last step
allreduce       gradient bytes: bytes per  the recorded collective of
                iteration over the         :mod:`netsim.collectives` at P (ring:
                collective's bytes per     2 P (P - 1) messages of 1/P of the gradient)
                gradient byte at P0
model-averaging model bytes per parameter  local steps; the master averages (P n FLOPs)
                                           every ``period`` steps and after the last
admm            x+u and z bytes per        rounds of ``local_steps`` steps (every round,
                parameter                  also a last one the recording cut short); the
                                           master averages (P n FLOPs)
ringtmp         bytes per activation       layer partition: ring batch P x b, so every
                value                      activation grows with P; with the default widths
                                           one hidden layer per node (depth grows with P,
                                           ``default_hidden`` in the metadata), with given
                                           widths the model is cut into P runs of layers
                                           (P <= layers). The neuron partition is not
                                           projected (every layer needs >= P neurons)
pf              per iteration, bytes per   worker w pushes as recorded worker w mod P0 (a
                parameter of each worker's worker filters its own step, independent of P);
                push and of the broadcast  the broadcast filters the average of P steps,
                (pass rate x 8 bytes)      whose noise shrinks as 1 / sqrt(P): its pass
                                           rate scales by r(P) / r(P0), r(P) = f + (1 - f)
                                           / sqrt(P), the signal share f fitted to the
                                           recorded broadcast / push ratio r(P0) (below);
                                           server FLOPs nnz + 2 n_s; iteration i takes
                                           recorded iteration i (tau decays with the step)
dgc             per warm-up stage (epoch)  every worker sends each layer's top-k to every
                and layer, bytes per       other; an epoch has ceil(ceil(N / P) / b) steps
                message                    at P (N training samples), so the warm-up takes
                                           fewer iterations as P grows; iteration i takes
                                           the stage of epoch i // steps(P); update FLOPs
                                           2 n + P K (summing P sparse sets)
slimdp          per iteration, bytes per   K = round(alpha n) does not depend on P; worker
                parameter of each worker's w sends as recorded worker w mod P0; server
                push and pull per shard    FLOPs 2 nnz + 1; iteration i takes recorded
                                           iteration i
=============== ========================== =================================================

Beyond the recorded iterations, per-iteration statistics (pf, slimdp) repeat
the recording's last epoch, and DGC stages the recording did not reach follow
the warm-up schedule of :mod:`workloads.dgc` (its hyper-parameters). Ops are
generated with numpy, a block of P (or P x S, or P x (P - 1) x layers) at a
time. At P = 1024, projecting a 4-worker Iris recording takes 0.1-0.3 s for
the PS-like paradigms and RingTMP over its 120 iterations (600,000 ops); the
all-to-all patterns (ring allreduce, DGC) have 2 million messages per
iteration and take about 0.7 s per iteration, so project them over a few.

Filter pass rates and P (pf)
----------------------------
A worker's push rate hardly depends on P, the broadcast rate does. Measured
with ``tau0 = 0.05`` (seed 0, the same number of iterations at every P), per
worker and iteration, the fraction of values pushed / broadcast:

======= ============================= =============================
P       Iris (131 parameters)         digits (1,210 parameters)
======= ============================= =============================
2       0.45 / 0.38                   0.31 / 0.25
4       0.49 / 0.39                   0.28 / 0.21
8       0.52 / 0.40                   0.28 / 0.18
16      0.53 / 0.40                   0.29 / 0.16
======= ============================= =============================

The 1 / sqrt(P) model fitted at P0 = 4 predicts the total bytes at P = 8 to
+3 % on digits (keeping the broadcast rate fixed: +8 %) and at P = 16 to
+0.4 % (+9 %), from P0 = 2 to P = 16 to +5 % (+26 %). On Iris, whose tiny
model's broadcast is almost all signal, it underestimates: -7 % at 4 -> 8
(fixed rate: -4 %), -22 % at 2 -> 16 (-11 %). See ``tests/test_projection.py``
for the acceptance comparison.

Not projected: ``ps-partitioned`` (its traffic depends on which features
each worker's data touch and on a METIS placement at P, which a recording at
another P does not determine), traces without paradigm metadata, and traces
that are themselves projections (project the recording instead).

Examples
--------
>>> import workloads
>>> t = workloads.record("ps-sync", workers=2, epochs=1).trace
>>> big = project(t, 64)
>>> big.ranks, big.metadata["workers"], big.num_iterations == t.num_iterations
(65, 64, True)
"""

import math
from types import MappingProxyType
from typing import NamedTuple

import numpy as np

from netsim.trace import COMPUTE, MESSAGE, Trace, TraceBuilder, deps_csr
from netsim.trace import ranges as _ranges
from netsim.traceops import concat, repeat

from . import mlp
from .allreduce import collective_trace
from .dgc import values_per_layer, warmup_sparsity
from .errors import WorkloadError, check_int, check_number
from .models import mlp_model
from .ps_sync import shard_bounds
from .recorder import SPARSE_BYTES_PER_VALUE
from .ringtmp import DEFAULT_WIDTH

__all__ = ["project", "ProjectionError", "PROJECTABLE"]


class ProjectionError(WorkloadError):
    """A trace cannot be projected: unknown or unsupported paradigm, bad P, bad option."""


# -- the model as the projection sees it ---------------------------------------------------

class _Net(NamedTuple):
    """Per unit (a dense layer, a residual block, a transformer block...): parameters,
    forward FLOPs per sample and output activation values per sample."""

    name: str
    params: np.ndarray
    fwd: np.ndarray
    act: np.ndarray

    @property
    def n(self):
        return int(self.params.sum())

    @property
    def L(self):
        return len(self.params)

    @property
    def bwd(self):
        # Backward = 2 x forward (weight and input gradients), the convention of
        # workloads.mlp (Kaplan et al. 2020, section 2.1).
        return 2.0 * self.fwd

    @property
    def offsets(self):
        return np.concatenate([[0], np.cumsum(self.params)]).astype(np.int64)


def _net_from_model(model):
    """A :class:`workloads.models.Model` (anything with ``layers`` of params, flops,
    activations) as a _Net."""
    layers = list(model.layers)
    return _Net(str(model.name), np.array([l.params for l in layers], np.int64),
                np.array([float(l.flops) for l in layers]),
                np.array([l.activations for l in layers], np.int64))


def _units(net, lo):
    """Unit of each flat-parameter position ``lo`` (what grad_ready looks up)."""
    return np.minimum(np.searchsorted(net.offsets, lo, side="right") - 1, net.L - 1)


# -- CSR dependency helpers --------------------------------------------------------------------

def _one(ops):
    """Each op waits for one op."""
    ops = np.asarray(ops, np.int64)
    return np.ones(len(ops), np.int64), ops


def _cols(*cols):
    """Deps from columns of op ids, -1 for none (:func:`netsim.trace.deps_csr`, as counts)."""
    ptr, idx = deps_csr(*cols)
    return np.diff(ptr), idx


def _merge(a, b):
    """Row-wise concatenation of two CSR dependency lists."""
    ca, ia = a
    cb, ib = b
    c = ca + cb
    start = np.cumsum(c) - c
    idx = np.empty(int(c.sum()), np.int64)
    idx[_ranges(start, ca)] = ia
    idx[_ranges(start + ca, cb)] = ib
    return c, idx


class _Builder:
    """A vectorised :class:`workloads.recorder.Recorder`: blocks of ops, same frontiers.

    A rank's frontier is its last compute op plus the messages it received
    since; a compute op waits for it (unless given deps) and replaces it; a
    message waits for the sender's frontier (unless given deps) and joins the
    receiver's. Within one compute block every rank appears at most once.
    """

    def __init__(self, ranks):
        self.ranks = ranks
        self.n = 0
        self.blocks = []
        self.tags = {}
        self.last = np.full(ranks, -1, np.int64)
        self.p_rank = np.zeros(0, np.int64)
        self.p_op = np.zeros(0, np.int64)

    def tag(self, name):
        return self.tags.setdefault(name, len(self.tags))

    def add(self, kind, rank, peer, size, flops, iteration, tag, deps):
        """Append a block of ops; ``kind`` and ``tag`` (an id) may be per op. Returns ids."""
        rank = np.asarray(rank, np.int64)
        m = len(rank)

        def col(x, dtype):
            return np.broadcast_to(np.asarray(x, dtype), (m,))

        counts, idx = deps
        self.blocks.append((col(kind, np.uint8), rank, col(peer, np.int64),
                            col(size, np.float64), col(flops, np.float64),
                            col(iteration, np.int64), col(tag, np.int16),
                            np.asarray(counts, np.int64), np.asarray(idx, np.int64)))
        ids = np.arange(self.n, self.n + m, dtype=np.int64)
        self.n += m
        return ids

    def frontier(self, ranks):
        """CSR deps: the frontier of each entry of ``ranks``."""
        ranks = np.asarray(ranks, np.int64)
        last = self.last[ranks]
        has = last >= 0
        if len(self.p_rank):
            order = np.argsort(self.p_rank, kind="stable")
            pr, po = self.p_rank[order], self.p_op[order]
            lo = np.searchsorted(pr, ranks, "left")
            cnt = np.searchsorted(pr, ranks, "right") - lo
        else:
            po = lo = cnt = np.zeros(len(ranks), np.int64)
        counts = has.astype(np.int64) + cnt
        start = np.cumsum(counts) - counts
        idx = np.empty(int(counts.sum()), np.int64)
        idx[start[has]] = last[has]
        idx[_ranges(start + has, cnt)] = po[_ranges(lo, cnt)]
        return counts, idx

    def settle(self, ranks, ops):
        """``ops`` become the frontier of ``ranks`` (their received messages are consumed)."""
        ranks = np.asarray(ranks, np.int64)
        self.last[ranks] = ops
        if len(self.p_rank):
            keep = ~np.isin(self.p_rank, ranks)
            self.p_rank, self.p_op = self.p_rank[keep], self.p_op[keep]

    def compute(self, rank, flops, iteration, tag, deps=None):
        rank = np.asarray(rank, np.int64)
        ids = self.add(COMPUTE, rank, -1, 0.0, flops, iteration, self.tag(tag),
                       self.frontier(rank) if deps is None else deps)
        self.settle(rank, ids)
        return ids

    def send(self, src, dst, size, iteration, tag, deps=None):
        src = np.asarray(src, np.int64)
        ids = self.add(MESSAGE, src, dst, size, 0.0, iteration, self.tag(tag),
                       self.frontier(src) if deps is None else deps)
        self.p_rank = np.concatenate([self.p_rank, np.broadcast_to(
            np.asarray(dst, np.int64), ids.shape)])
        self.p_op = np.concatenate([self.p_op, ids])
        return ids

    def forward_backward(self, ranks, net, batch, iteration):
        """Forward op, then one backward op per unit, last to first; returns bwd[unit, rank]."""
        ranks = np.asarray(ranks, np.int64)
        self.compute(ranks, net.fwd.sum() * batch, iteration, "forward")
        bwd = np.empty((net.L, len(ranks)), np.int64)
        for l in range(net.L - 1, -1, -1):
            bwd[l] = self.compute(ranks, net.bwd[l] * batch, iteration, "backward")
        return bwd

    def trace(self):
        if not self.blocks:
            return TraceBuilder(self.ranks).build()
        kind, rank, peer, size, flops, iteration, tag, counts, idx = (
            np.concatenate(c) for c in zip(*self.blocks))
        ptr = np.zeros(len(kind) + 1, np.int64)
        np.cumsum(counts, out=ptr[1:])
        # Compute ops are given in FLOPs; a unit without FLOPs (an embedding lookup)
        # becomes a zero-second op.
        duration = np.where((kind == COMPUTE) & (flops > 0), np.nan, 0.0)
        return Trace(self.ranks, kind, rank, np.where(kind == MESSAGE, peer, -1), size,
                     duration, flops, iteration, tag, ptr, idx, tags=list(self.tags))


def _interleave(a, b):
    """CSR deps of ops laid out as a[0], b[0], a[1], b[1], ..."""
    (ca, ia), (cb, ib) = a, b
    counts = np.empty(2 * len(ca), np.int64)
    counts[0::2], counts[1::2] = ca, cb
    starts = np.cumsum(counts) - counts
    idx = np.empty(int(counts.sum()), np.int64)
    idx[_ranges(starts[0::2], ca)] = ia
    idx[_ranges(starts[1::2], cb)] = ib
    return counts, idx


def _rows(front, pick, mask):
    """For each entry: row ``pick[i]`` of the CSR ``front`` where ``mask[i]``, else nothing."""
    fc, fi = front
    starts = np.cumsum(fc) - fc
    cnt = np.where(mask, fc[pick], 0)
    return cnt, fi[_ranges(starts[pick][mask], fc[pick][mask])]


# -- reading the recorded run ---------------------------------------------------------------

def _tag_mask(trace, name, kind=MESSAGE):
    if name not in trace.tags:
        return np.zeros(trace.num_ops, bool)
    return (trace.kind == kind) & (trace.tag == trace.tags.index(name))


def _dense_bpv(trace, tag, values, fallback):
    """Bytes per parameter of the messages tagged ``tag``; ``values`` gives each message's
    parameter count (from its rank and peer)."""
    m = _tag_mask(trace, tag)
    if not m.any():
        return fallback
    vals = values(trace.rank[m], trace.peer[m])
    total = float(np.sum(vals))
    return float(trace.size[m].sum()) / total if total > 0 else fallback


def _per(trace, mask, shape, *keys):
    """Sum of message bytes of ``mask`` into a dense array indexed by ``keys``."""
    flat = np.ravel_multi_index(tuple(np.asarray(k, np.int64) for k in keys), shape)
    return np.bincount(flat, weights=trace.size[mask], minlength=math.prod(shape)).reshape(shape)


def _rec_index(i, n_rec, window):
    """Recorded iteration of projected iteration ``i``: itself, or beyond the recording
    the last ``window`` recorded iterations over and over."""
    i = np.asarray(i, np.int64)
    window = max(1, min(int(window), n_rec))
    return np.where(i < n_rec, i, n_rec - window + (i - n_rec) % window)


def _steps_per_epoch(N, P, b):
    return max(1, math.ceil(math.ceil(N / P) / b))


# -- paradigms --------------------------------------------------------------------------------
# Each paradigm has measure(trace, ctx) -> stats and generate(ctx, stats) -> Trace, where
# ctx holds P, S, iterations, the net at P, the batch per worker and the recorded metadata.

class _Ctx(NamedTuple):
    P: int
    S: int
    iterations: int
    net: _Net
    batch: int
    P0: int
    S0: int
    n_rec: int
    net0: _Net
    hyper: dict
    md: dict


def _grad_deps(net, bounds, bwd, ranks, overlap, b):
    """Deps of the pushes ``ranks x shards``: the backward op of the lowest unit a shard
    touches (``overlap``), else the sender's frontier."""
    S = len(bounds) - 1
    src = np.repeat(ranks, S)
    if not overlap:
        return b.frontier(src)
    unit = np.tile(_units(net, bounds[:-1]), len(ranks))
    return _one(bwd[unit, np.repeat(np.arange(len(ranks)), S)])


# single ----------------------------------------------------------------------------------

def _measure_none(trace, c):
    return {}


def _gen_single(c, st):
    b = _Builder(1)
    for it in range(c.iterations):
        b.forward_backward([0], c.net, c.P * c.batch, it)
        b.compute([0], 4.0 * c.net.n, it, "update")
    return b.trace()


# ps-sync -------------------------------------------------------------------------------

def _measure_ps(trace, c, push="push", pull="pull"):
    sizes = np.diff(shard_bounds(c.net0.n, c.S0))
    bpv = c.md.get("bytes_per_value", mlp.BYTES_PER_VALUE)
    return {"push": _dense_bpv(trace, push, lambda r, p: sizes[p - c.P0], bpv),
            "pull": _dense_bpv(trace, pull, lambda r, p: sizes[r - c.P0], bpv)}


def _gen_ps_sync(c, st):
    P, S, net = c.P, c.S, c.net
    bounds = shard_bounds(net.n, S)
    sizes = np.diff(bounds).astype(np.float64)
    W, srv = np.arange(P), P + np.arange(S)
    overlap = c.hyper.get("overlap", True)
    b = _Builder(P + S)
    for it in range(c.iterations):
        bwd = b.forward_backward(W, net, c.batch, it)
        b.send(np.repeat(W, S), np.tile(srv, P), np.tile(sizes * st["push"], P), it, "push",
               _grad_deps(net, bounds, bwd, W, overlap, b))
        b.compute(srv, (P + 4) * sizes, it, "update")
        b.send(np.repeat(srv, P), np.tile(W, S), np.repeat(sizes * st["pull"], P), it, "pull")
    return b.trace()


# ps-async ------------------------------------------------------------------------------

def _measure_ps_async(trace, c):
    return _measure_ps(trace, c, push="push", pull="fetch")


def _gen_ps_async(c, st):
    P, S, net = c.P, c.S, c.net
    bounds = shard_bounds(net.n, S)
    sizes = np.diff(bounds).astype(np.float64)
    W, srv = np.arange(P), P + np.arange(S)
    n_fetch, n_push = int(c.hyper.get("n_fetch", 1)), int(c.hyper.get("n_push", 1))
    overlap = c.hyper.get("overlap", True)
    unit = _units(net, bounds[:-1])
    b = _Builder(P + S)
    for t in range(c.iterations):
        if t % n_fetch == 0 and t > 0:
            b.send(np.tile(srv, P), np.repeat(W, S), np.tile(sizes * st["pull"], P), t, "fetch")
        bwd = b.forward_backward(W, net, c.batch, t)
        if (t + 1) % n_push and t != c.iterations - 1:
            continue
        # The pushes reach the servers one by one, in worker order rotated by t; each is
        # applied at once by an update op that follows the server's previous update.
        # Laid out as push, update, push, update, ... so every dependency points back.
        k = np.repeat(np.arange(P), S)
        w, s = (t + k) % P, np.tile(np.arange(S), P)
        push_id = b.n + 2 * np.arange(P * S)
        upd_id = push_id + 1
        pdeps = _one(bwd[unit[s], w]) if overlap else b.frontier(w)
        udeps = _merge(_merge(_rows(b.frontier(srv), s, k == 0),
                              _cols(np.where(k > 0, upd_id - 2 * S, -1))), _one(push_id))
        kind = np.tile(np.array([MESSAGE, COMPUTE], np.uint8), P * S)
        rank = np.ravel(np.column_stack([w, P + s]))
        peer = np.ravel(np.column_stack([P + s, np.full(P * S, -1)]))
        size = np.ravel(np.column_stack([sizes[s] * st["push"], np.zeros(P * S)]))
        flops = np.ravel(np.column_stack([np.zeros(P * S), 5.0 * sizes[s]]))
        tag = np.tile(np.array([b.tag("push"), b.tag("update")], np.int16), P * S)
        b.add(kind, rank, peer, size, flops, t, tag, _interleave(pdeps, udeps))
        b.settle(srv, upd_id[-S:])
    return b.trace()


# allreduce -----------------------------------------------------------------------------

def _measure_allreduce(trace, c):
    name, seg = c.hyper.get("collective", "ring"), int(c.hyper.get("segments", 4))
    unit = collective_trace(name, c.P0, 1.0, seg).total_bytes   # bytes per gradient byte
    if unit == 0 or not trace.num_messages:
        return {"bpv": float(c.md.get("bytes_per_value", mlp.BYTES_PER_VALUE))}
    G0 = trace.total_bytes / c.n_rec / unit
    return {"bpv": G0 / c.net0.n}


def _gen_allreduce(c, st):
    # The paradigm's own construction (workloads.allreduce.run): each worker's forward
    # and backward ops, then the collective after each rank's last backward op, then the
    # update after everything that touched the rank, repeated.
    P, net, L = c.P, c.net, c.net.L
    C = collective_trace(c.hyper.get("collective", "ring"), P, st["bpv"] * net.n,
                         int(c.hyper.get("segments", 4)))
    # Per worker: forward, then backward from the last unit to the first, each op
    # waiting for the one before it.
    fl = np.tile(np.concatenate([[net.fwd.sum() * c.batch], net.bwd[::-1] * c.batch]), P)
    chained = np.tile(np.r_[False, np.ones(L, bool)], P)
    ops = np.arange(P * (L + 1), dtype=np.int64)
    dep_ptr, dep_idx = deps_csr(np.where(chained, ops - 1, -1))
    work = Trace(P, np.full(len(ops), COMPUTE, np.uint8), np.repeat(np.arange(P), L + 1),
                 flops=fl, duration=np.where(fl > 0, np.nan, 0.0),
                 tag=chained.astype(np.int16), dep_ptr=dep_ptr, dep_idx=dep_idx,
                 tags=["forward", "backward"])
    upd = Trace(P, np.full(P, COMPUTE, np.uint8), np.arange(P), flops=np.full(P, 4.0 * net.n),
                duration=np.full(P, np.nan if net.n else 0.0), tag=np.zeros(P, np.int16),
                tags=["update"])
    return repeat(concat(concat(work, C), upd), c.iterations)


# model averaging and ADMM -----------------------------------------------------------------

def _measure_master(trace, c, up, down):
    n0 = c.net0.n
    bpv = c.md.get("bytes_per_value", mlp.BYTES_PER_VALUE)
    return {"up": _dense_bpv(trace, up, lambda r, p: np.full(len(r), n0), bpv),
            "down": _dense_bpv(trace, down, lambda r, p: np.full(len(r), n0), bpv)}


def _measure_model_averaging(trace, c):
    return _measure_master(trace, c, "model", "average")


def _gen_model_averaging(c, st):
    P, n = c.P, c.net.n
    W, master = np.arange(P), P
    period = int(c.hyper.get("period", 1))
    b = _Builder(P + 1)
    for t in range(c.iterations):
        b.forward_backward(W, c.net, c.batch, t)
        b.compute(W, 4.0 * n, t, "update")
        if (t + 1) % period and t != c.iterations - 1:
            continue
        b.send(W, master, st["up"] * n, t, "model")
        b.compute([master], float(P * n), t, "average")
        b.send(np.full(P, master), W, st["down"] * n, t, "average")
    return b.trace()


def _measure_admm(trace, c):
    return _measure_master(trace, c, "x+u", "z")


def _gen_admm(c, st):
    P, n = c.P, c.net.n
    W, master = np.arange(P), P
    steps = int(c.hyper.get("local_steps", 1))
    b = _Builder(P + 1)
    for k in range(c.iterations):
        for _ in range(steps):
            b.forward_backward(W, c.net, c.batch, k)
            b.compute(W, 7.0 * n, k, "update")   # 4 for the step, 3 for the prox gradient
        b.send(W, master, st["up"] * n, k, "x+u")
        b.compute([master], float(P * n), k, "average")
        b.send(np.full(P, master), W, st["down"] * n, k, "z")
        b.compute(W, 2.0 * n, k, "dual")
    return b.trace()


# ringtmp ---------------------------------------------------------------------------------

def _measure_ringtmp(trace, c):
    if c.hyper.get("partition", "layer") != "layer":
        raise ProjectionError("ringtmp with partition='neuron' cannot be projected: every "
                              "layer would need at least P neurons; record a layer-partitioned "
                              "run (partition='layer')")
    bpv = float(c.md.get("bytes_per_value", mlp.BYTES_PER_VALUE))
    if c.P0 > 1 and trace.num_messages:
        owned = np.array_split(np.arange(c.net0.L), c.P0)
        w_out = np.array([c.net0.act[o[-1]] for o in owned], np.float64)
        B0 = c.P0 * int(c.hyper.get("batch_size", c.batch))
        bpv = trace.total_bytes / (c.n_rec * B0 * 2 * w_out[:-1].sum())
    return {"bpv": bpv}


def _gen_ringtmp(c, st):
    P, net = c.P, c.net
    if net.L < P:
        raise ProjectionError(f"ringtmp: the layer partition of {net.name} ({net.L} layers) "
                              f"over {P} ring nodes leaves a node without a layer; project to "
                              f"P <= {net.L}, or record with the default hidden widths (one "
                              "layer per node, depth growing with P)")
    m = int(c.hyper.get("microbatches", 1))
    B = P * c.batch
    if m > B:
        raise ProjectionError(f"ringtmp: {m} microbatches exceed the ring batch of {B} samples")
    owned = np.array_split(np.arange(net.L), P)
    fwd = np.array([net.fwd[o].sum() for o in owned])
    params = np.array([net.params[o].sum() for o in owned], np.float64)
    w_out = np.array([net.act[o[-1]] for o in owned], np.float64)
    rows = np.array([len(x) for x in np.array_split(np.arange(B), m)], np.float64)
    G = 2 * P - 1                 # ops of one micro-batch in one direction
    j = np.repeat(np.arange(m), P)
    k = np.tile(np.arange(P), m)
    nodes = np.arange(P)
    b = _Builder(P)
    for it in range(c.iterations):
        # Forward, in program order: micro-batch j, node k computes (F) and sends its
        # activations to k + 1 (A, right after F). F waits for the node's previous op
        # (its frontier at the start of the step for j = 0) and for A of node k - 1.
        F = b.n + j * G + 2 * k
        fdeps = _merge(_rows(b.frontier(nodes), k, j == 0),
                       _cols(np.where(j > 0, F - G, -1), np.where(k > 0, F - 1, -1)))
        _pipeline(b, it, F - b.n, k, fdeps, fwd[k] * rows[j], k < P - 1, k + 1,
                  w_out[k] * rows[j] * st["bpv"], "forward", "activation")
        last_f = F[j == m - 1]
        # Backward: micro-batches and nodes in reverse; node k computes (Bk) and sends the
        # gradient of its input to k - 1 (D). Bk waits for the node's previous op and for
        # D of node k + 1 (laid out just before it).
        jj, kk = m - 1 - j, P - 1 - k
        Bk = b.n + jj * G + 2 * kk
        bdeps = _cols(np.where(j < m - 1, Bk - G, last_f[k]), np.where(k < P - 1, Bk - 1, -1))
        _pipeline(b, it, Bk - b.n, k, bdeps, 2 * fwd[k] * rows[j], k > 0, k - 1,
                  w_out[np.maximum(k - 1, 0)] * rows[j] * st["bpv"], "backward",
                  "activation-grad")
        b.compute(nodes, 4.0 * params, it, "update", _one(Bk[j == 0]))
    return b.trace()


def _pipeline(b, it, pos, node, deps, flops, has_msg, peer, size, ctag, mtag):
    """Add one pipeline direction: compute op i at position ``pos[i]`` of the block, and
    its message (when ``has_msg[i]``) right after it, waiting for it."""
    n = int(pos.max()) + 1 + int(has_msg[np.argmax(pos)])
    mpos = pos[has_msg] + 1
    kind = np.full(n, MESSAGE, np.uint8)
    kind[pos] = COMPUTE
    rank = np.empty(n, np.int64)
    rank[pos], rank[mpos] = node, node[has_msg]
    peers = np.full(n, -1, np.int64)
    peers[mpos] = peer[has_msg]
    sizes, fl = np.zeros(n), np.zeros(n)
    sizes[mpos], fl[pos] = size[has_msg], flops
    dc, di = deps
    counts = np.zeros(n, np.int64)
    counts[pos], counts[mpos] = dc, 1
    starts = np.cumsum(counts) - counts
    idx = np.empty(int(counts.sum()), np.int64)
    idx[_ranges(starts[pos], dc)] = di
    idx[starts[mpos]] = b.n + pos[has_msg]
    tag = np.where(kind == COMPUTE, b.tag(ctag), b.tag(mtag)).astype(np.int16)
    b.add(kind, rank, peers, sizes, fl, it, tag, (counts, idx))


# pf and slimdp -------------------------------------------------------------------------------

def _measure_sparse_ps(trace, c, push, down):
    """Per iteration, bytes per shard parameter of each worker's pushes and of each
    server's replies (broadcast or pull)."""
    P0, S0, n_rec = c.P0, c.S0, c.n_rec
    sizes = np.diff(shard_bounds(c.net0.n, S0)).astype(np.float64)
    mp, md_ = _tag_mask(trace, push), _tag_mask(trace, down)
    up = _per(trace, mp, (n_rec, P0, S0), trace.iteration[mp], trace.rank[mp],
              trace.peer[mp] - P0)
    dn = _per(trace, md_, (n_rec, P0, S0), trace.iteration[md_], trace.peer[md_],
              trace.rank[md_] - P0)
    return {"up": up / sizes, "down": dn / sizes, "up_all": up.sum(axis=2) / c.net0.n,
            "down_all": dn.sum(axis=2) / c.net0.n, "window": _recorded_epoch(c)}


def _recorded_epoch(c):
    """Steps of one recorded epoch, the window :func:`_rec_index` repeats beyond the
    recording: the formula used at P, at the recorded P0 and batch (``n_rec // epochs``
    is wrong for a trace cut to fewer iterations than it recorded)."""
    if c.iterations <= c.n_rec:
        return c.n_rec          # nothing beyond the recording: no dataset to load
    try:
        return _steps_per_epoch(_train_samples(c.md), c.P0, c.batch)
    except ProjectionError:
        # The epoch size is unknown (a dataset that needs a path): an uncut recording's.
        return max(1, c.n_rec // (int(c.hyper.get("epochs", 1)) or 1))


def _sparse_sizes(c, st, it, key):
    """Bytes of every (worker, server) message of iteration ``it`` at P, S."""
    i = int(_rec_index(it, c.n_rec, st["window"]))
    w0 = np.arange(c.P) % c.P0
    sizes = np.diff(shard_bounds(c.net.n, c.S)).astype(np.float64)
    if c.S == c.S0:
        rate = st[key][i][w0]                       # (P, S)
    else:
        rate = np.repeat(st[key + "_all"][i][w0][:, None], c.S, axis=1)
    return rate * sizes


def _measure_pf(trace, c):
    st = _measure_sparse_ps(trace, c, "push", "broadcast")
    # Signal share f of the broadcast pass rate: ratio(P) = f + (1 - f) / sqrt(P), fitted to
    # the recorded ratio of broadcast to push rates (see the module docstring).
    up = st["up_all"].mean() if st["up_all"].size else 0.0
    down = st["down_all"].mean() if st["down_all"].size else 0.0
    st["signal"] = 1.0
    if c.P0 > 1 and up > 0:
        g0 = 1.0 / math.sqrt(c.P0)
        st["signal"] = float(min(1.0, max(0.0, (down / up - g0) / (1.0 - g0))))
    return st


def _broadcast_scale(f, P, P0):
    """Broadcast pass rate at P over that at P0, for signal share f."""
    return (f + (1.0 - f) / math.sqrt(P)) / (f + (1.0 - f) / math.sqrt(P0))


def _gen_pf(c, st):
    P, S, net = c.P, c.S, c.net
    bounds = shard_bounds(net.n, S)
    sizes = np.diff(bounds).astype(np.float64)
    W, srv = np.arange(P), P + np.arange(S)
    overlap = c.hyper.get("overlap", True)
    scale = _broadcast_scale(st["signal"], P, c.P0)
    b = _Builder(P + S)
    for it in range(c.iterations):
        bwd = b.forward_backward(W, net, c.batch, it)
        up = _sparse_sizes(c, st, it, "up")                   # (P, S)
        b.send(np.repeat(W, S), np.tile(srv, P), up.ravel(), it, "push",
               _grad_deps(net, bounds, bwd, W, overlap, b))
        nnz = up.sum(axis=0) / SPARSE_BYTES_PER_VALUE
        b.compute(srv, nnz + 2 * sizes, it, "aggregate")
        # Every worker receives the same broadcast from a server: take recorded worker 0's,
        # scaled for the averaging of P workers' updates.
        down = _sparse_sizes(c, st, it, "down")[0] * scale    # (S,)
        b.send(np.repeat(srv, P), np.tile(W, S), np.repeat(down, P), it, "broadcast")
    return b.trace()


def _measure_slimdp(trace, c):
    return _measure_sparse_ps(trace, c, "push", "pull")


def _gen_slimdp(c, st):
    P, S, net = c.P, c.S, c.net
    W, srv = np.arange(P), P + np.arange(S)
    d = net.n
    alpha = float(c.hyper.get("alpha", 1.0))
    q = int(c.hyper.get("q", 1))
    K = max(1, int(round(alpha * d)))
    b = _Builder(P + S)
    for it in range(c.iterations):
        b.forward_backward(W, net, c.batch, it)
        b.compute(W, 4.0 * d + (3.0 * d if it % q == 0 else 0.0) + K, it, "update")
        up = _sparse_sizes(c, st, it, "up")
        b.send(np.repeat(W, S), np.tile(srv, P), up.ravel(), it, "push")
        nnz = up.sum(axis=0) / SPARSE_BYTES_PER_VALUE
        b.compute(srv, 2 * nnz + 1, it, "aggregate")
        down = _sparse_sizes(c, st, it, "down")               # (P, S)
        b.send(np.repeat(srv, P), np.tile(W, S), down.T.ravel(), it, "pull")
    return b.trace()


# dgc ---------------------------------------------------------------------------------------

def _train_samples(md):
    N = md.get("train_samples")
    if N is None:
        from .datasets import load

        try:
            N = load(md.get("dataset")).n_train
        except Exception as exc:  # a dataset that needs a path, or an unknown one
            raise ProjectionError(f"dgc: the trace does not say how many training samples an "
                                  f"epoch has (metadata 'train_samples') and dataset "
                                  f"{md.get('dataset')!r} cannot be loaded to find out: {exc}")
    return int(N)


def _measure_dgc(trace, c):
    L = c.net0.L
    comp = np.flatnonzero(_tag_mask(trace, "compress", COMPUTE))
    layer_of = np.full(trace.num_ops, -1, np.int64)
    if len(comp):
        key = trace.iteration[comp].astype(np.int64) * trace.ranks + trace.rank[comp]
        order = np.argsort(key, kind="stable")
        ks = key[order]
        first = np.searchsorted(ks, ks, "left")
        layer_of[comp[order]] = np.arange(len(comp)) - first
    msg = np.flatnonzero(_tag_mask(trace, "allgather"))
    N = _train_samples(c.md)
    spe0 = _steps_per_epoch(N, c.P0, c.batch)      # c.batch is the recorded batch here
    E = max(1, math.ceil(c.n_rec / spe0))
    sizes = np.zeros((E, L))
    if len(msg):
        layer = layer_of[trace.dep_idx[trace.dep_ptr[msg]]]
        e = trace.iteration[msg] // spe0
        tot = np.bincount(e * L + layer, weights=trace.size[msg], minlength=E * L)
        cnt = np.bincount(e * L + layer, minlength=E * L)
        sizes = (tot / np.maximum(cnt, 1)).reshape(E, L)
    return {"sizes": sizes, "N": N}


def _dgc_layer_bytes(c, st, epoch):
    """Bytes of each unit's message in an epoch at P."""
    if c.net is c.net0 and epoch < len(st["sizes"]):
        return st["sizes"][epoch]
    # A stage the recording did not reach, or another model: the warm-up schedule itself.
    s = warmup_sparsity(epoch, int(c.hyper.get("warmup_epochs", 4)),
                        float(c.hyper.get("final_sparsity", 0.999)))
    return SPARSE_BYTES_PER_VALUE * np.array(values_per_layer(c.net.params.tolist(), s), float)


def _gen_dgc(c, st):
    P, net, L = c.P, c.net, c.net.L
    W = np.arange(P)
    spe = _steps_per_epoch(st["N"], P, c.batch)
    # Message order of the recorder: per worker, per layer, to every other worker ascending.
    src = np.repeat(W, L * (P - 1))
    lay = np.tile(np.repeat(np.arange(L), P - 1), P)
    o = np.tile(np.arange(P - 1), P * L)
    dst = o + (o >= src)
    b = _Builder(P)
    for it in range(c.iterations):
        sizes = _dgc_layer_bytes(c, st, it // spe)
        bwd = b.forward_backward(W, net, c.batch, it)
        comp = np.empty((L, P), np.int64)
        for l in range(L):
            comp[l] = b.compute(W, 6.0 * net.params[l], it, "compress", _one(bwd[l]))
        b.send(src, dst, sizes[lay], it, "allgather", _one(comp[lay, src]))
        K = sizes.sum() / SPARSE_BYTES_PER_VALUE
        deps = _merge(b.frontier(W), (np.full(P, L, np.int64), comp.T.ravel()))
        b.compute(W, 2.0 * net.n + P * K, it, "update", deps)
    return b.trace()


# -- registry ------------------------------------------------------------------------------------

class _Paradigm(NamedTuple):
    measure: object
    generate: object
    servers: str  # "none", "master" (one, fixed) or "servers" (any S >= 1)


_PARADIGMS = MappingProxyType({
    "single": _Paradigm(_measure_none, _gen_single, "none"),
    "ps-sync": _Paradigm(_measure_ps, _gen_ps_sync, "servers"),
    "ps-async": _Paradigm(_measure_ps_async, _gen_ps_async, "servers"),
    "allreduce": _Paradigm(_measure_allreduce, _gen_allreduce, "none"),
    "model-averaging": _Paradigm(_measure_model_averaging, _gen_model_averaging, "master"),
    "admm": _Paradigm(_measure_admm, _gen_admm, "master"),
    "ringtmp": _Paradigm(_measure_ringtmp, _gen_ringtmp, "none"),
    "pf": _Paradigm(_measure_pf, _gen_pf, "servers"),
    "slimdp": _Paradigm(_measure_slimdp, _gen_slimdp, "servers"),
    "dgc": _Paradigm(_measure_dgc, _gen_dgc, "none"),
})

#: Paradigms :func:`project` supports.
PROJECTABLE = tuple(_PARADIGMS)

_WHY_NOT = MappingProxyType({
    "ps-partitioned": ("its traffic depends on which features each worker's mini-batches touch "
                       "and on a METIS placement computed for P workers, which a recording at "
                       "another P does not determine; record it at the P you want"),
})


def _recorded(trace):
    """The metadata of a trace recorded by a projectable paradigm, or why it is not one."""
    if not isinstance(trace, Trace):
        raise ProjectionError(f"expected a netsim Trace, got {type(trace).__name__}")
    md = trace.metadata
    paradigm = md.get("paradigm")
    if paradigm is None:
        raise ProjectionError("the trace has no 'paradigm' in its metadata: only traces recorded "
                              "by a paradigm (workloads.record, netsim record) can be projected")
    if "projection" in md:
        raise ProjectionError(f"the trace is already a projection (of a {paradigm} run at "
                              f"P = {md['projection'].get('from_workers')}); project the "
                              "recorded trace instead")
    if paradigm in _WHY_NOT:
        raise ProjectionError(f"paradigm {paradigm!r} cannot be projected: {_WHY_NOT[paradigm]}")
    if paradigm not in _PARADIGMS:
        raise ProjectionError(f"paradigm {paradigm!r} cannot be projected; projectable "
                              f"paradigms: {', '.join(PROJECTABLE)}")
    missing = [k for k in ("workers", "servers", "layers", "hyper") if k not in md]
    if missing:
        raise ProjectionError(f"the {paradigm} trace lacks metadata {', '.join(missing)}, which "
                              "the projection needs; record it again")
    return md


def _project(trace, P, servers=None, iterations=None, batch_size=None, device_flops=None,
             model=None):
    """:func:`project`, optionally onto another model (``model``: anything with ``name``
    and ``layers`` of ``params``, ``flops``, ``activations``; see workloads.models)."""
    md = _recorded(trace)
    P = check_int("P", P, error=ProjectionError)
    paradigm = md["paradigm"]
    spec = _PARADIGMS[paradigm]
    hyper = dict(md.get("hyper") or {})
    P0, S0 = int(md["workers"]), int(md["servers"])
    if paradigm == "single":
        P0 = int(md.get("virtual_workers", P0))
    n_rec = max(1, trace.num_iterations)
    if spec.servers == "servers":
        S = S0 if servers is None else check_int("servers", servers, error=ProjectionError)
    elif spec.servers == "master":
        if servers not in (None, 1):
            raise ProjectionError(f"{paradigm} has one master; servers must be 1, got {servers!r}")
        S = 1
    else:
        if servers not in (None, 0):
            raise ProjectionError(f"{paradigm} has no servers; servers must be None or 0, "
                                  f"got {servers!r}")
        S = 0
    iters = (n_rec if iterations is None
             else check_int("iterations", iterations, error=ProjectionError))
    b0 = int(hyper.get("batch_size", 1))
    if paradigm == "single":
        b0 = max(1, b0 // max(P0, 1))      # single records the union batch of P0 workers
    batch = (b0 if batch_size is None
             else check_int("batch_size", batch_size, error=ProjectionError))
    if device_flops is not None:
        device_flops = check_number("device_flops", device_flops, lo=0, strict=True,
                                    error=ProjectionError)
    layers = [int(w) for w in md["layers"]]
    net0 = _net_from_model(mlp_model(layers))
    grown = None
    if model is not None:
        net = _net_from_model(model)
    elif (paradigm == "ringtmp" and md.get("default_hidden")
          and hyper.get("partition", "layer") == "layer"):
        width = layers[1] if len(layers) > 2 else DEFAULT_WIDTH
        grown = [layers[0]] + [width] * (P - 1) + [layers[-1]]
        net = _net_from_model(mlp_model(grown))
    else:
        net = net0
    if S > net.n:
        raise ProjectionError(f"servers ({S}) exceeds the {net.n} parameters to shard")
    ctx = _Ctx(P, S, iters, net, batch, P0, S0, n_rec, net0, hyper, md)
    stats = spec.measure(trace, ctx._replace(batch=b0, net=net0))
    out = spec.generate(ctx, stats)
    meta = dict(md)
    roles = ["worker"] * (1 if paradigm == "single" else P)
    roles += ["master"] if spec.servers == "master" else ["server"] * S
    meta.update(workers=P, servers=S, ranks=out.ranks, roles=roles, iterations=iters,
                total_bytes=out.total_bytes, messages=out.num_messages, model_params=net.n)
    if grown is not None:
        meta["layers"] = grown
    if model is not None:
        meta.pop("layers", None)
        meta["model"] = net.name
    if device_flops is not None:
        meta["device_flops"] = float(device_flops)
    meta["hyper"] = dict(hyper, batch_size=batch * (P if paradigm == "single" else 1))
    meta["projection"] = {"from_workers": P0, "from_servers": S0, "from_iterations": n_rec,
                          "batch_size": batch, "scaling": "weak",
                          "model": None if model is None else net.name}
    out.metadata = meta
    return out


def project(trace, P, servers=None, iterations=None, batch_size=None, device_flops=None):
    """The trace of the same paradigm run with ``P`` workers, from a recording at another P.

    The communication pattern is the paradigm's at ``P``; message sizes come
    from the recorded trace (see the module docstring for what each paradigm
    measures and how P enters). Scaling is weak: the batch per worker, and so
    each worker's compute FLOPs, stay as recorded.

    Parameters
    ----------
    trace : netsim.Trace
        A trace recorded by a paradigm (its metadata names the paradigm,
        workers, servers, layers and hyper-parameters).
    P : int
        Workers of the projection, >= 1.
    servers : int, optional
        Servers (ps-sync, ps-async, pf, slimdp); the recorded count if None.
        The parameters are re-sharded evenly among them.
    iterations : int, optional
        Iterations to generate (the recorded count if None).
    batch_size : int, optional
        Samples per worker per step (the recorded one if None); compute ops
        scale with it, as do RingTMP's activations.
    device_flops : float, optional
        FLOP/s of the device, stored as ``metadata["device_flops"]`` (the
        recorded value if None); e.g. ``topologies.devices.device_flops("A100")``.

    Returns
    -------
    netsim.Trace
        ``P + S`` ranks. Its metadata is the recording's with ``workers``,
        ``servers``, ``ranks``, ``roles``, ``iterations``, ``total_bytes`` and
        ``messages`` updated, and ``projection`` saying from where (the
        recorded ``accuracy`` is kept: nothing was trained at P).

    Raises
    ------
    ProjectionError
        For a paradigm that cannot be projected (ps-partitioned, ringtmp's
        neuron partition, no paradigm metadata, an already projected trace),
        P < 1, or a bad option.

    Examples
    --------
    >>> import workloads
    >>> rec = workloads.record("allreduce", workers=4, epochs=1)
    >>> t = project(rec.trace, 16, iterations=2)
    >>> t.num_messages == 2 * (2 * 16 * 15), t.metadata["projection"]["from_workers"]
    (True, 4)
    >>> project(rec.trace, 0)
    Traceback (most recent call last):
    ...
    workloads.projection.ProjectionError: P must be an integer >= 1, got 0
    """
    return _project(trace, P, servers, iterations, batch_size, device_flops)
