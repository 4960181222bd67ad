"""The toy transformer trained for real under TP x PP x DP: its gradients are the one-rank
model's, and the transfers it recorded are the schedule's at its size, bytes exact."""

import numpy as np
import pytest

from workloads.transformer.iteration import schedule
from workloads.transformer.flops import config
from workloads.transformer.toy.dense import _block_back, _block_partials, init, run


def _comm(t):
    """Per rank, its transfers in op order: (kind, peer or group, bytes, tag)."""
    out = {r: [] for r in range(t.ranks)}
    for i in range(t.num_ops):
        tag = t.tags[t.tag[i]] if t.tag[i] >= 0 else None
        if t.is_collective[i]:
            g = tuple(t.group(i).tolist())
            for r in g:
                out[r].append(("coll", t.specs.row(int(t.spec[i])).op, g, float(t.size[i]), tag))
        elif t.is_message[i]:
            for r in (int(t.rank[i]), int(t.peer[i])):
                out[r].append(("msg", int(t.rank[i]), int(t.peer[i]), float(t.size[i]), tag))
    return out


@pytest.mark.parametrize("tp,pp,dp,pipeline", [(2, 2, 2, "1f1b"), (2, 2, 2, "gpipe"),
                                               (1, 2, 2, "1f1b"), (2, 1, 2, "1f1b")])
def test_recorded_transfers_are_the_schedules(tp, pp, dp, pipeline):
    layers, hidden, heads, seq, b, B = 2, 8, 2, 4, 1, 4
    recorded, _, _ = run(tp, pp, dp, layers, hidden, heads, seq, b, B, pipeline)
    c = config(layers, hidden, heads, seq, 0, b, B, "fp32")
    planned = schedule(c, tp, pp, dp, pipeline=pipeline, recompute="none")
    assert _comm(recorded) == _comm(planned)
    # and the bytes by hand: b s h fp32 values per activation, per-shard parameters per replica
    act = b * seq * hidden * 4
    sizes = {s for r in _comm(recorded).values() for (_, _, _, s, tag) in r if tag != "dp"}
    assert sizes <= {float(act)}
    dp_bytes = sum(float(recorded.size[i]) for i in np.flatnonzero(recorded.is_collective)
                   if recorded.tags[recorded.tag[i]] == "dp")
    shard = (12 * hidden**2 + 7 * hidden) // tp + 6 * hidden
    assert dp_bytes == (layers * shard * tp * 4 if dp > 1 else 0)


def _serial_gradient(layers, hidden, heads, seq, B, seed=0):
    """The same model and data on one rank: tp = pp = dp = 1."""
    _, g, loss = run(1, 1, 1, layers, hidden, heads, seq, 1, B, "1f1b", seed=seed)
    return g, loss


@pytest.mark.parametrize("tp,pp,dp", [(2, 2, 2), (2, 1, 1), (1, 2, 1), (1, 1, 4)])
def test_parallel_gradients_are_the_one_rank_models(tp, pp, dp):
    _, g, loss = run(tp, pp, dp, 2, 8, 2, 4, 1, 4)
    ref, ref_loss = _serial_gradient(2, 8, 2, 4, 4)
    assert loss == pytest.approx(ref_loss, rel=1e-5)
    for mine, want in zip(g, ref):
        for name in want:
            np.testing.assert_allclose(mine[name], want[name], rtol=1e-4, atol=1e-6)


def test_block_backward_is_the_finite_difference_of_its_forward():
    # float64, one shard: d(sum(out * r))/dw by central differences against _block_back
    w = {k: v.astype(np.float64) for k, v in init(1, 6, seed=3)[0].items()}
    x = np.random.default_rng(4).normal(size=(5, 6))
    rdir = np.random.default_rng(5).normal(size=(5, 6))
    for which, name, idx in (("attention", "wqkv", (2, 7)), ("attention", "g1", (1,)),
                             ("mlp", "w1", (3, 5)), ("mlp", "e2", (4,))):
        outs, caches = _block_partials([w], x, which)
        grads = [{k: np.zeros_like(v) for k, v in w.items()}]
        dx = _block_back([w], grads, caches, rdir, which)[0]
        eps = 1e-6
        wp = {k: v.copy() for k, v in w.items()}
        wp[name][idx] += eps
        wm = {k: v.copy() for k, v in w.items()}
        wm[name][idx] -= eps
        num = ((_block_partials([wp], x, which)[0][0] * rdir).sum()
               - (_block_partials([wm], x, which)[0][0] * rdir).sum()) / (2 * eps)
        assert grads[0][name][idx] == pytest.approx(num, rel=1e-5, abs=1e-8)
        xp, xm = x.copy(), x.copy()
        xp[1, 2] += eps
        xm[1, 2] -= eps
        num_x = ((_block_partials([w], xp, which)[0][0] * rdir).sum()
                 - (_block_partials([w], xm, which)[0][0] * rdir).sum()) / (2 * eps)
        assert dx[1, 2] == pytest.approx(num_x, rel=1e-5, abs=1e-8)
