"""The toy transformer's mixture-of-experts layers, trained for real under expert parallelism.

:func:`workloads.transformer.toy.dense.run` with ``moe`` makes every ``every``-th
layer's MLP ``E`` expert MLPs (``h -> 4h -> h``, tanh, the dense MLP's
shapes) and a router ``h x E`` (no bias), as :mod:`workloads.transformer.moe`
describes. Per micro-batch, each replica routes its ``T = b s`` tokens: the
router's softmax over the experts, each token to its ``top_k`` most probable,
each expert taking at most ``ceil(k c T / E)`` tokens in token order (the rest
dropped, the empty places padded with zeros), then

* **dispatch**: the ``E x capacity x h`` buffer split into ``ep`` blocks of
  ``E / ep`` experts, block ``d`` to member ``d`` of the expert-parallel group
  (:func:`workloads.transformer.layout.ep_group`): one recorded all-to-all of the
  buffer's bytes;
* each member runs its own ``E / ep`` experts on what it received;
* **combine**: the outputs back by the same all-to-all, and each token adds
  its experts' outputs weighted by their router probabilities.

The backward sends the outputs' gradients to the experts and the inputs'
gradients back (two more all-to-alls) and goes through the router's softmax.
After the last backward the expert gradients are summed over the replicas
holding the same experts (the expert-data-parallel group), before the dense
ones. The toy has one tensor-parallel shard (``tp = 1``).
"""

import math

import numpy as np

from workloads.errors import WorkloadError
from workloads.transformer.layout import ep_group
from workloads.transformer.moe import is_moe

__all__ = ["init_experts", "forward", "backward", "make_meet", "reduce_experts", "assemble"]

_EXPERT = ("w1", "b1", "w2", "b2")


def init_experts(full, m, hidden, seed=0, dtype=np.float32):
    """Replace the MLP of each MoE layer of ``full`` by a router ``wr`` and experts ``w1.e`` ...

    Examples
    --------
    >>> from workloads.transformer.moe import moe
    >>> mlp = {"w1": np.zeros((8, 32)), "b1": np.zeros(32), "w2": np.zeros((32, 8)),
    ...        "b2": np.zeros(8)}
    >>> p = init_experts([dict(mlp), dict(mlp)], moe(4, every=2), 8)
    >>> sorted(k for k in p[0] if k.endswith(".3")), "w1" in p[1], p[0]["wr"].shape
    (['b1.3', 'b2.3', 'w1.3', 'w2.3'], True, (8, 4))
    """
    rng = np.random.default_rng(seed + 7)
    h, out = hidden, []
    for i, w in enumerate(full):
        if not is_moe(m, i):
            out.append(w)
            continue
        w = {k: v for k, v in w.items() if k not in _EXPERT}
        w["wr"] = rng.normal(0, h ** -0.5, (h, m.experts)).astype(dtype)
        for e in range(m.experts):
            w.update({f"w1.{e}": rng.normal(0, h ** -0.5, (h, 4 * h)).astype(dtype),
                      f"b1.{e}": rng.normal(0, 0.1, 4 * h).astype(dtype),
                      f"w2.{e}": rng.normal(0, (4 * h) ** -0.5, (4 * h, h)).astype(dtype),
                      f"b2.{e}": rng.normal(0, 0.1, h).astype(dtype)})
        out.append(w)
    return out


def _route(p, k, capacity):
    """``slot[e, c]``: the token in place ``c`` of expert ``e`` (-1: padding)."""
    E = p.shape[1]
    top = np.argsort(-p, axis=1, kind="stable")[:, :k]
    slot = np.full((E, capacity), -1)
    fill = np.zeros(E, dtype=int)
    for t in range(p.shape[0]):
        for e in top[t]:
            if fill[e] < capacity:
                slot[e, fill[e]] = t
                fill[e] += 1
    return slot


def forward(w, x, m, ep, member, ln, exchange):
    """An MoE block's output for tokens ``x`` (a generator: it yields at its all-to-alls).

    ``ln(x, g, e)`` is the toy's layer norm; ``exchange(blocks)`` the
    all-to-all (``blocks[d]`` for member ``d``). Returns ``(output, cache)``.
    """
    T, h = x.shape
    E = m.experts
    a, norm = ln(x, w["g2"], w["e2"])
    z = a @ w["wr"]
    p = np.exp(z - z.max(1, keepdims=True))
    p /= p.sum(1, keepdims=True)
    slot = _route(p, m.top_k, math.ceil(m.top_k * m.capacity_factor * T / E))
    buf = np.where((slot >= 0)[..., None], a[np.maximum(slot, 0)], 0).astype(x.dtype)
    recv = yield from exchange(buf.reshape(ep, E // ep, -1, h))
    outs, caches = [], []
    for j in range(E // ep):
        e = member * (E // ep) + j
        u = recv[:, j].reshape(-1, h)
        g = np.tanh(u @ w[f"w1.{e}"] + w[f"b1.{e}"])
        outs.append((g @ w[f"w2.{e}"] + w[f"b2.{e}"]).reshape(ep, -1, h))
        caches.append((u, g))
    back = (yield from exchange(np.stack(outs, axis=1))).reshape(E, -1, h)
    out = np.zeros_like(x)
    for e, c in zip(*np.nonzero(slot >= 0)):
        out[slot[e, c]] += p[slot[e, c], e] * back[e, c]
    return out, (a, norm, p, slot, back, caches)


def backward(w, grads, cache, dy, m, ep, member, ln_back, exchange):
    """The input gradient of an MoE block (a generator); its weight gradients into ``grads``."""
    a, norm, p, slot, back, caches = cache
    E, h = m.experts, dy.shape[1]
    dback = np.zeros_like(back)
    dp = np.zeros_like(p)
    for e, c in zip(*np.nonzero(slot >= 0)):
        t = slot[e, c]
        dback[e, c] = p[t, e] * dy[t]
        dp[t, e] += dy[t] @ back[e, c]
    dout = yield from exchange(dback.reshape(ep, E // ep, -1, h))
    dins = []
    for j, (u, g) in enumerate(caches):
        e = member * (E // ep) + j
        d = dout[:, j].reshape(-1, h)
        grads[f"b2.{e}"] += d.sum(0)
        grads[f"w2.{e}"] += g.T @ d
        du = (d @ w[f"w2.{e}"].T) * (1 - g * g)
        grads[f"w1.{e}"] += u.T @ du
        grads[f"b1.{e}"] += du.sum(0)
        dins.append((du @ w[f"w1.{e}"].T).reshape(ep, -1, h))
    dbuf = (yield from exchange(np.stack(dins, axis=1))).reshape(E, -1, h)
    da = np.zeros_like(dy)
    for e, c in zip(*np.nonzero(slot >= 0)):
        da[slot[e, c]] += dbuf[e, c]
    dz = p * (dp - (dp * p).sum(1, keepdims=True))   # through the softmax
    grads["wr"] += a.T @ dz
    dx, dg, de = ln_back(da + dz @ w["wr"].T, w["g2"], norm)
    grads["g2"] += dg
    grads["e2"] += de
    return dx


def make_meet(b, L, ep, dep, op):
    """Answer a round of all-to-alls: exchange the blocks and record one alltoall per group.

    A request is ``(stage, blocks)`` from a replica; the answer its received blocks.
    """
    def meet(requests):
        out = {}
        for r, (s, _) in requests.items():
            if r in out:
                continue
            members = range(r - r % ep, r - r % ep + ep)
            group = ep_group(L, ep, s, 0, r // ep)
            sent = [requests[x][1] for x in members]
            oid = b.collective("alltoall", group, sent[0].nbytes, deps=dep(*group), tag="ep")
            for rank in group:
                op(rank, oid)
            for d, x in enumerate(members):
                out[x] = np.stack([blocks[d] for blocks in sent])
        return out

    return meet


def reduce_experts(L, m, ep, per, grads, bucket_bytes, b, dep, op):
    """Sum each expert's gradients over its expert-data-parallel group, last layer first."""
    if L.tp != 1:
        raise WorkloadError("the toy's experts need tp 1")
    for s in range(L.pp):
        for e in range(ep):
            members = range(e, L.dp, ep)
            if len(members) < 2:
                continue
            own = [f"{n}.{e * (m.experts // ep) + j}" for j in range(m.experts // ep)
                   for n in _EXPERT]
            layers = [i for i in reversed(range(per)) if is_moe(m, s * per + i)]
            arrays = [[grads[(s, r, 0)][i][n] for i in layers for n in own] for r in members]
            size = 0
            for idx, x in enumerate(arrays[0]):
                size += x.nbytes
                if size >= bucket_bytes or idx == len(arrays[0]) - 1:
                    group = tuple(L.rank(s, r, 0) for r in members)
                    oid = b.collective("allreduce", group, size, deps=dep(*group), tag="dp")
                    for rank in group:
                        op(rank, oid)
                    size = 0
            for j in range(len(arrays[0])):
                total = sum(a[j] for a in arrays)
                for a in arrays:
                    a[j][...] = total


def assemble(grads, L, per, m, ep):
    """The full gradient of every layer: the dense parts from replica 0, each expert's from
    the member of the first expert-parallel group that holds it."""
    out = []
    for s in range(L.pp):
        for i in range(per):
            g = dict(grads[(s, 0, 0)][i])
            for name in (k for k in g if "." in k):
                e = int(name.split(".")[1])
                g[name] = grads[(s, e // (m.experts // ep), 0)][i][name]
            out.append(g)
    return out
