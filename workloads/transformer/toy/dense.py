"""A toy transformer trained for real under TP x PP x DP in numpy, recording what it sends.

:func:`run` trains one iteration of a small decoder stack with the parameter
shapes and the communication of Megatron-LM's layers
(:mod:`workloads.transformer.iteration`): per layer a QKV projection split by heads over
the tensor-parallel shards, an output projection split by rows, an MLP
``h -> 4h -> h`` split the same way, two layer norms and the row-parallel
biases kept whole on every shard (``12 h^2 + 13 h`` parameters). Each shard
computes its part; the partial sums are added by a tensor-parallel allreduce
after each block in the forward and before it in the backward; a stage sends
its activation to the next stage and the gradient back; after the last
backward each shard's gradients are summed over the data-parallel replicas in
DDP-style buckets. Every transfer is recorded with the bytes of the array it
moved (``numpy.ndarray.nbytes``) into a trace. What makes it a toy: the
attention core is an elementwise mix ``q * tanh(k) + v`` instead of
``softmax(q k^T) v`` (same shapes and communication, no ``s^2`` work), the
model has no embedding and no logit layer (``vocab = 0``), the loss is
``||x||^2 / 2`` of the last stage's output over the global batch's tokens, and
the ranks are simulated in one process, in the order the pipeline schedule
runs them.

The test suite checks that the gradients equal the same model trained on one
rank and that the recorded transfers are the schedule's
(:func:`workloads.transformer.iteration.schedule`) at the same size, bytes exact.
"""

import numpy as np

from netsim.trace.core import TraceBuilder

from workloads.transformer import pipeline as _pipeline
from workloads.transformer.toy import moe as _moe
from workloads.errors import WorkloadError
from workloads.transformer.layout import layout as make_layout
from workloads.transformer.flops import config
from workloads.transformer.moe import is_moe, run_jointly

__all__ = ["init", "run"]

_SPLIT = ("wqkv", "bqkv", "wo", "w1", "b1", "w2")   # split over the shards
_ORDER = ("g1", "e1", "wqkv", "bqkv", "wo", "bo", "g2", "e2", "w1", "b1", "w2", "b2", "wr")


def init(layers, hidden, seed=0, dtype=np.float32):
    """Full (unsplit) parameters of every layer: a list of dicts of arrays.

    Examples
    --------
    >>> p = init(2, 8)
    >>> sum(a.size for a in p[0].values()) == 12 * 8**2 + 13 * 8
    True
    """
    rng = np.random.default_rng(seed)
    h = hidden
    out = []
    for _ in range(layers):
        w = {"g1": np.ones(h), "e1": np.zeros(h), "wqkv": rng.normal(0, h ** -0.5, (h, 3 * h)),
             "bqkv": rng.normal(0, 0.1, 3 * h), "wo": rng.normal(0, h ** -0.5, (h, h)),
             "bo": rng.normal(0, 0.1, h), "g2": np.ones(h), "e2": np.zeros(h),
             "w1": rng.normal(0, h ** -0.5, (h, 4 * h)), "b1": rng.normal(0, 0.1, 4 * h),
             "w2": rng.normal(0, (4 * h) ** -0.5, (4 * h, h)), "b2": rng.normal(0, 0.1, h)}
        out.append({k: v.astype(dtype) for k, v in w.items()})
    return out


def _columns(h, heads, tp, k):
    """Shard k's columns of the QKV output (its heads of q, k and v) and of the MLP."""
    width = h // tp
    own = np.arange(k * width, (k + 1) * width)
    return np.concatenate([own, own + h, own + 2 * h]), np.arange(4 * h)[k::tp]


def _shard(w, h, heads, tp, k):
    qkv, mlp = _columns(h, heads, tp, k)
    own = qkv[: h // tp]
    return {**w, "wqkv": w["wqkv"][:, qkv], "bqkv": w["bqkv"][qkv], "wo": w["wo"][own],
            "w1": w["w1"][:, mlp], "b1": w["b1"][mlp], "w2": w["w2"][mlp]}


def _ln(x, g, e):
    mu, sd = x.mean(-1, keepdims=True), np.sqrt(x.var(-1, keepdims=True) + 1e-5)
    xh = (x - mu) / sd
    return xh * g + e, (xh, sd)


def _ln_back(dy, g, cache):
    xh, sd = cache
    dxh = dy * g
    dx = (dxh - dxh.mean(-1, keepdims=True) - xh * (dxh * xh).mean(-1, keepdims=True)) / sd
    return dx, (dy * xh).sum(0), dy.sum(0)


def _block_partials(shards, x, which):
    """Each shard's partial output of one block (attention or MLP) and what backward needs."""
    outs, caches = [], []
    for w in shards:
        if which == "attention":
            a, ln = _ln(x, w["g1"], w["e1"])
            qkv = a @ w["wqkv"] + w["bqkv"]
            q, kk, v = np.split(qkv, 3, axis=1)
            t = np.tanh(kk)
            z = q * t + v
            outs.append(z @ w["wo"])
            caches.append((a, ln, q, t, z))
        else:
            c, ln = _ln(x, w["g2"], w["e2"])
            g = np.tanh(c @ w["w1"] + w["b1"])
            outs.append(g @ w["w2"])
            caches.append((c, ln, g))
    return outs, caches


def _block_back(shards, grads, caches, dy, which):
    """Each shard's partial input gradient of one block; its weight gradients into ``grads``."""
    parts = []
    for w, gr, cache in zip(shards, grads, caches):
        if which == "attention":
            a, ln, q, t, z = cache
            gr["bo"] += dy.sum(0)
            gr["wo"] += z.T @ dy
            dz = dy @ w["wo"].T
            dqkv = np.concatenate([dz * t, dz * q * (1 - t * t), dz], axis=1)
            gr["wqkv"] += a.T @ dqkv
            gr["bqkv"] += dqkv.sum(0)
            dx, dg, de = _ln_back(dqkv @ w["wqkv"].T, w["g1"], ln)
            gr["g1"] += dg
            gr["e1"] += de
        else:
            c, ln, g = cache
            gr["b2"] += dy.sum(0)
            gr["w2"] += g.T @ dy
            du = (dy @ w["w2"].T) * (1 - g * g)
            gr["w1"] += c.T @ du
            gr["b1"] += du.sum(0)
            dx, dg, de = _ln_back(du @ w["w1"].T, w["g2"], ln)
            gr["g2"] += dg
            gr["e2"] += de
        parts.append(dx)
    return parts


def run(tp=2, pp=2, dp=2, layers=2, hidden=8, heads=2, seq=4, micro_batch=1, global_batch=4,
        pipeline="1f1b", bucket_bytes=25 * 2**20, seed=0, moe=None, ep=1):
    """Train one iteration for real; return ``(trace, gradients, loss)``.

    With ``moe`` (a :class:`workloads.transformer.moe.Moe`), its layers are
    mixtures of experts over expert-parallel groups of ``ep`` replicas
    (:mod:`workloads.transformer.toy.moe`; ``tp = 1``), their all-to-alls
    tagged ``ep``.

    Returns
    -------
    trace : netsim.Trace
        Every transfer (tags ``tp``, ``pp``, ``dp``) with the bytes of its array,
        each after the rank's previous op; metadata as
        :func:`workloads.transformer.iteration.schedule`'s (``config``, ``tp``, ...).
    gradients : list of dict
        The full gradient of every layer (the shards put back together), summed
        over the replicas.
    loss : float

    Examples
    --------
    >>> t, g, loss = run()
    >>> t.ranks, sorted(set(t.tags)), loss > 0
    (8, ['backward', 'dp', 'forward', 'pp', 'tp'], True)
    """
    c = config(layers, hidden, heads, seq, 0, micro_batch, global_batch, "fp32")
    dtype = np.float32
    L = make_layout(tp, pp, dp)
    m = global_batch // (micro_batch * dp)
    per = layers // pp
    full = init(layers, hidden, seed, dtype)
    if moe is not None:
        if tp != 1 or dp % ep or moe.experts % ep:
            raise WorkloadError(f"the toy's experts need tp 1 and ep {ep} dividing dp {dp} "
                                f"and the {moe.experts} experts")
        full = _moe.init_experts(full, moe, hidden, seed, dtype)
    elif ep != 1:
        raise WorkloadError(f"ep {ep} needs experts")
    data = np.random.default_rng(seed + 1).normal(size=(global_batch, seq, hidden)).astype(dtype)
    n_tokens = global_batch * seq
    b = TraceBuilder(L.world, metadata={"paradigm": "transformer-toy", "config": c._asdict(),
                                        "tp": tp, "pp": pp, "dp": dp, "pipeline": pipeline})
    last = {}   # rank -> the ops its next op waits for: its last op and messages it received

    def op(rank, oid):
        last[rank] = [oid]
        return oid

    def dep(*ranks):
        return sorted({x for r in ranks for x in last.get(r, ())})

    def receive(group, msgs):
        for rank, msg in zip(group, msgs):
            last.setdefault(rank, []).append(msg)

    def allreduce(group, arrays, tag):
        oid = b.collective("allreduce", group, arrays[0].nbytes, deps=dep(*group), tag=tag)
        for r in group:
            op(r, oid)
        total = sum(arrays)
        return [total] * len(arrays)

    def send(group, to, r, array):
        """Every shard sends its copy of ``array`` to the same shard of stage ``to``."""
        msgs = [b.message(rank, L.rank(to, r, k), array.nbytes, deps=dep(rank), tag="pp")
                for k, rank in enumerate(group)]
        for rank, msg in zip(group, msgs):
            op(rank, msg)
        return array.copy(), msgs

    shards = {(s, k): [_shard(full[i], hidden, heads, tp, k) if "w1" in full[i] else full[i]
                       for i in range(s * per, (s + 1) * per)]
              for s in range(pp) for k in range(tp)}

    def expert(s, i):
        return moe is not None and is_moe(moe, s * per + i)

    def exchange(s, blocks):
        if ep == 1:
            return np.stack([blocks[0]])
        return (yield (s, blocks))

    grads = {(s, r, k): [{n: np.zeros_like(v) for n, v in w.items()} for w in shards[(s, k)]]
             for s in range(pp) for r in range(dp) for k in range(tp)}
    inbox, cache, loss = {}, {}, 0.0
    orders = [_pipeline.order(pipeline, pp, m, s) for s in range(pp)]
    pos = [0] * pp
    while any(pos[s] < len(orders[s]) for s in range(pp)):
        for s in range(pp):
            while pos[s] < len(orders[s]):
                kind, j, _ = orders[s][pos[s]]
                if _pipeline.source(kind, s, 0, pp) is not None and (kind, s, j, 0) not in inbox:
                    break
                def replica(r):
                    nonlocal loss
                    group = L.tp_group(s, r)
                    if kind == "F":
                        if s == 0:
                            first = (r * m + j) * micro_batch
                            x = data[first:first + micro_batch].reshape(-1, hidden)
                        else:
                            x, msgs = inbox.pop((kind, s, j, r))
                            receive(group, msgs)
                        saved = []
                        for i in range(per):
                            ws = [shards[(s, k)][i] for k in range(tp)]
                            layer_cache = []
                            for which in ("attention", "mlp"):
                                if which == "mlp" and expert(s, i):
                                    out, moe_cache = yield from _moe.forward(
                                        ws[0], x, moe, ep, r % ep, _ln,
                                        lambda blocks: exchange(s, blocks))
                                    layer_cache.append((x, moe_cache))
                                    x = x + out
                                    continue
                                outs, caches = _block_partials(ws, x, which)
                                for rank, flops in zip(group, outs):
                                    op(rank, b.compute(rank, flops=float(x.size), deps=dep(rank),
                                                       tag="forward"))
                                if tp > 1:
                                    outs = allreduce(group, outs, "tp")
                                layer_cache.append((x, caches))
                                bias = ws[0]["bo"] if which == "attention" else ws[0]["b2"]
                                x = x + outs[0] + bias
                            saved.append(layer_cache)
                        cache[(s, r, j)] = saved
                        if s == pp - 1:
                            loss += 0.5 * float((x.astype(np.float64) ** 2).sum()) / n_tokens
                            inbox[("B", s, j, r)] = (x / n_tokens, [])
                        else:
                            inbox[("F", s + 1, j, r)] = send(group, s + 1, r, x)
                    else:
                        dy, msgs = inbox.pop((kind, s, j, r))
                        receive(group, msgs)
                        saved = cache.pop((s, r, j))
                        for i in reversed(range(per)):
                            ws = [shards[(s, k)][i] for k in range(tp)]
                            gs = [grads[(s, r, k)][i] for k in range(tp)]
                            for which, (x_in, caches) in zip(("mlp", "attention"),
                                                             reversed(saved[i])):
                                if which == "mlp" and expert(s, i):
                                    dy = dy + (yield from _moe.backward(
                                        ws[0], gs[0], caches, dy, moe, ep, r % ep, _ln_back,
                                        lambda blocks: exchange(s, blocks)))
                                    continue
                                parts = _block_back(ws, gs, caches, dy, which)
                                for rank in group:
                                    op(rank, b.compute(rank, flops=float(dy.size), deps=dep(rank),
                                                       tag="backward"))
                                if tp > 1:
                                    parts = allreduce(group, parts, "tp")
                                dy = dy + parts[0]
                        if s > 0:
                            inbox[("B", s - 1, j, r)] = send(group, s - 1, r, dy)

                # the replicas meet at the experts' all-to-alls (none without experts)
                run_jointly([replica(r) for r in range(dp)], _moe.make_meet(b, L, ep, dep, op))
                pos[s] += 1
    if moe is not None:
        _moe.reduce_experts(L, moe, ep, per, grads, bucket_bytes, b, dep, op)
    _reduce_gradients(L, per, grads, bucket_bytes, b, dep, op)
    if moe is not None:
        return b.build(), _moe.assemble(grads, L, per, moe, ep), loss
    return b.build(), _assemble(grads, L, per, hidden, heads), loss


def _reduce_gradients(L, per, grads, bucket_bytes, b, dep, op):
    """Sum each shard's gradients over the replicas, last layer first, in DDP-style buckets."""
    for s in range(L.pp):
        for k in range(L.tp):
            arrays = [[grads[(s, r, k)][i][n] for i in reversed(range(per)) for n in _ORDER
                       if n in grads[(s, r, k)][i]] for r in range(L.dp)]
            start, size = 0, 0
            for idx, a in enumerate(arrays[0]):
                size += a.nbytes
                if size >= bucket_bytes or idx == len(arrays[0]) - 1:
                    group = L.dp_group(s, k)
                    if L.dp > 1:
                        oid = b.collective("allreduce", group, size, deps=dep(*group), tag="dp")
                        for rank in group:
                            op(rank, oid)
                    for j in range(start, idx + 1):
                        total = sum(arrays[r][j] for r in range(L.dp))
                        for r in range(L.dp):
                            arrays[r][j][...] = total
                    start, size = idx + 1, 0


def _assemble(grads, L, per, h, heads):
    """The full gradient of every layer from replica 0's shards."""
    out = []
    for s in range(L.pp):
        for i in range(per):
            g = {n: np.zeros_like(v) for n, v in grads[(s, 0, 0)][i].items() if n not in _SPLIT}
            g.update(wqkv=np.zeros((h, 3 * h)), bqkv=np.zeros(3 * h), wo=np.zeros((h, h)),
                     w1=np.zeros((h, 4 * h)), b1=np.zeros(4 * h), w2=np.zeros((4 * h, h)))
            for k in range(L.tp):
                qkv, mlp = _columns(h, heads, L.tp, k)
                own = qkv[: h // L.tp]
                part = grads[(s, 0, k)][i]
                g["wqkv"][:, qkv] = part["wqkv"]
                g["bqkv"][qkv] = part["bqkv"]
                g["wo"][own] = part["wo"]
                g["w1"][:, mlp] = part["w1"]
                g["b1"][mlp] = part["b1"]
                g["w2"][mlp] = part["w2"]
            out.append(g)
    return out
