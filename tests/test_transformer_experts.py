"""Mixture-of-experts transformer layers under expert parallelism: the replay equals the closed
form where nothing contends, the all-to-all and gradient bytes are the hand-counted ones, and
the groups follow Megatron-LM's rank order."""

import math

import numpy as np

import pytest
from test_transformer_pipeline import star

from netsim import simulate
from workloads.errors import WorkloadError
from workloads.transformer.layout import Layout, ep_group, expert_dp_group
from workloads.transformer.iteration import measure, schedule
from workloads.transformer.closed import closed_form
from workloads.transformer.flops import config, iteration_flops
from workloads.transformer.memory import memory_per_gpu
from workloads.transformer.moe import iteration_flops_delta, moe

RATE = 1e9   # FLOP/s
C = config(4, 64, 4, 32, 0, micro_batch=1, global_batch=16)   # no logit layer: stages alike
H, S = 64, 32


def both(kw, m, bandwidth=1e30, latency=1e-6, **extra):
    t = schedule(C, moe=m, device_flops=RATE, **kw, **extra)
    r = simulate(t, star(t.ranks, bandwidth, latency), library="mpich")
    ab = (2 * latency, 1 / bandwidth)   # host -> switch -> host
    f = closed_form(C, moe=m, device_flops=RATE, **kw, **extra,
                    links={k: ab for k in ("tp", "pp", "dp", "ep", "edp")})
    return t, r, f


@pytest.mark.parametrize("kw", [
    dict(dp=2, ep=2), dict(dp=4, ep=2), dict(pp=2, dp=4, ep=4),
    dict(tp=2, dp=2, ep=2, sequence_parallel=True),
    dict(pp=2, dp=4, ep=2, pipeline="gpipe", recompute="none"),
    dict(tp=2, pp=2, dp=4, ep=2, sequence_parallel=True, bucket_bytes=3e4)])
@pytest.mark.parametrize("every", [1, 2])
def test_replay_is_the_closed_form_on_latency_only_links(kw, every):
    t, r, f = both(kw, moe(4, every=every))
    assert r.makespan == pytest.approx(f["time"], rel=1e-12)
    # the exposed all-to-all: (m + p - 1) chunk passes, each with 2 per MoE layer in the
    # forward, the recomputed forward and the backward, pairwise: (ep - 1) steps of alpha
    p, ep = kw.get("pp", 1), kw["ep"]
    m = 16 // kw["dp"]
    moe_layers = len(range(0, 4 // p, every))
    calls = 2 * (2 if kw.get("recompute") == "none" else 3) * moe_layers
    assert f["ep"] == pytest.approx((m + p - 1) * calls * (ep - 1) * 2e-6, rel=1e-12)


@pytest.mark.parametrize("kw", [dict(dp=2, ep=2), dict(dp=4, ep=4),
                                dict(tp=2, dp=4, ep=4, sequence_parallel=True)])
def test_alltoall_bandwidth_term_replays_as_its_closed_form(kw):
    # real links; one gradient bucket at the end, so nothing overlaps an all-to-all
    t, r, f = both(kw, moe(4, capacity_factor=1.25), bandwidth=1e9, bucket_bytes=1e12)
    assert r.makespan == pytest.approx(f["time"], rel=1e-12)
    routed = 4 * math.ceil(2 * 1.25 * S / kw.get("tp", 1) / 4)    # E ceil(k c T / E)
    one = (kw["ep"] - 1) * (2e-6 + routed * H * 2 / kw["ep"] / 1e9)  # Thakur's pairwise
    assert f["ep"] == pytest.approx(16 // kw["dp"] * 4 * 6 * one, rel=1e-12)


def test_alltoall_and_gradient_bytes_are_the_hand_counted_ones():
    E, k, dp, ep = 4, 2, 4, 2
    got = measure(schedule(C, dp=dp, moe=moe(E, top_k=k), ep=ep))
    m = 16 // dp
    # each rank sends its b s k routed tokens of h fp16 values, in 2 groups of 2 ranks,
    # 6 times per layer (dispatch + combine in forward, recomputed forward, backward)
    assert got["ep_calls"] == (dp // ep) * m * 4 * 6
    assert got["ep"] == got["ep_calls"] * 1 * S * k * H * 2
    # dense gradients over all 4 replicas: per layer attention (4h^2 + 3h) + norms and
    # biases (5h) + router (h E); expert gradients over the 2 expert-data-parallel groups:
    # E/ep experts of (8h^2 + 5h) per layer
    dense = 4 * (4 * H**2 + 8 * H + H * E)
    experts = 4 * (E // ep) * (8 * H**2 + 5 * H)
    assert got["dp"] == (dense + (dp // ep) * experts) * 2


def test_capacity_pads_every_expert_buffer_to_its_capacity():
    # 32 tokens x top-1 x 1.1 / 3 experts = 11.73 -> capacity 12 each: 36 tokens per rank
    got = measure(schedule(C, dp=2, moe=moe(3, top_k=1, capacity_factor=1.1), ep=1))
    assert got["ep_calls"] == 0
    t = schedule(C, dp=2, moe=moe(4, top_k=1, capacity_factor=1.1), ep=2)
    assert measure(t)["ep"] / measure(t)["ep_calls"] == 4 * 9 * H * 2   # ceil(8.8) = 9


def test_flops_add_the_router_and_top_k_experts():
    for every, recompute in ((1, "full"), (2, "none")):
        m = moe(4, top_k=2, every=every)
        t = schedule(C, dp=2, ep=2, moe=m, recompute=recompute)
        moe_layers = 4 // every
        # per MoE layer and sequence: router 2 s h E and one more dense MLP (16 s h^2),
        # 3 passes (forward, backward x2) and a recomputed forward
        per = 2 * S * H * 4 + (2 - 1) * 16 * S * H**2
        passes = 4 if recompute == "full" else 3
        assert t.flops.sum() == pytest.approx(
            iteration_flops(C, recompute) + 16 * moe_layers * passes * per, rel=1e-12)
        assert iteration_flops_delta(C, m, recompute) == 16 * moe_layers * passes * per


def test_groups_follow_megatrons_tp_ep_dp_pp_order():
    # Megatron-LM core_r0.9.0 parallel_state.RankGenerator, order "tp-cp-ep-dp-pp" (cp = 1):
    # rank = tp_i + tp (ep_i + ep (edp_i + dp/ep pp_i))
    tp, pp, dp, ep = 2, 2, 4, 2
    L = Layout(tp, pp, dp)

    def megatron(t, e, d, p):
        return t + tp * (e + ep * (d + dp // ep * p))

    for p in range(pp):
        for t in range(tp):
            for d in range(dp // ep):
                assert ep_group(L, ep, p, t, d) == tuple(megatron(t, e, d, p) for e in range(ep))
            for e in range(ep):
                assert expert_dp_group(L, ep, p, t, e) == tuple(
                    megatron(t, e, d, p) for d in range(dp // ep))
    trace = schedule(C, tp, pp, dp, ep=ep, moe=moe(4), sequence_parallel=True)
    ops = [trace.specs.row(int(s)) for s in trace.spec[trace.is_collective]]
    a2a = {g.group for g in ops if g.op == "alltoall"}
    assert a2a == {ep_group(L, ep, p, t, d) for p in range(pp) for t in range(tp)
                   for d in range(dp // ep)}


def test_expert_states_are_split_over_ep():
    m = moe(8, every=2)
    one, eight = (memory_per_gpu(C, dp=8, moe=m, ep=e)["states"] for e in (1, 8))
    # 2 MoE layers on the stage, 7 experts' (8h^2 + 5h) fewer each, 16 B per parameter
    assert one - eight == 16 * 2 * 7 * (8 * H**2 + 5 * H)


@pytest.mark.parametrize("kwargs,needle", [
    (dict(dp=4, ep=3, moe=moe(6)), "ep 3 does not divide dp 4"),
    (dict(dp=4, ep=4, moe=moe(6)), "ep 4 does not divide the 6 experts"),
    (dict(dp=2, ep=2), "ep 2 needs experts"),
    (dict(tp=2, moe=moe(4)), "sequence parallelism"),
    (dict(dp=2, zero=1, moe=moe(4)), "ZeRO or FSDP"),
    (dict(moe=moe(4), memory_bandwidth=2e12), "memory_bandwidth"),
    (dict(moe=(4, 2)), "Moe")])
def test_bad_expert_options_are_refused_by_name(kwargs, needle):
    with pytest.raises(WorkloadError, match=needle):
        schedule(C, **kwargs)
    with pytest.raises(WorkloadError, match=needle):
        closed_form(C, device_flops=RATE, **kwargs)


def test_without_experts_there_is_no_alltoall_and_no_ep_term():
    f = closed_form(C, dp=2, device_flops=RATE, links={"dp": (1e-6, 1e-9)})
    assert f["ep"] == 0.0
    assert measure(schedule(C, dp=2))["ep_calls"] == 0


# -- the toy run with experts: numpy, one process, tp = 1 -----------------------------------

TOY = dict(layers=2, hidden=8, heads=2, seq=4, micro_batch=1, global_batch=4)


def toy_comm(t):
    """Per rank, its transfers in op order: (op or message, group or peers, bytes, tag)."""
    out = {r: [] for r in range(t.ranks)}
    for i in range(t.num_ops):
        tag = t.tags[t.tag[i]]
        if t.is_collective[i]:
            g = tuple(t.group(i).tolist())
            for r in g:
                out[r].append((t.specs.row(int(t.spec[i])).op, g, float(t.size[i]), tag))
        elif t.is_message[i]:
            for r in (int(t.rank[i]), int(t.peer[i])):
                out[r].append(("msg", (int(t.rank[i]), int(t.peer[i])), float(t.size[i]), tag))
    return out


@pytest.mark.parametrize("pp,dp,ep,every", [(1, 2, 2, 1), (2, 2, 2, 2), (1, 4, 2, 1),
                                            (2, 4, 4, 1)])
def test_toy_records_the_schedules_alltoalls_bytes_exact(pp, dp, ep, every):
    from workloads.transformer.toy import run

    m = moe(4, top_k=2, capacity_factor=1.0, every=every)
    recorded, _, _ = run(1, pp, dp, **TOY, moe=m, ep=ep)
    c = config(2, 8, 2, 4, 0, 1, 4, "fp32")
    planned = schedule(c, 1, pp, dp, recompute="none", moe=m, ep=ep)
    assert toy_comm(recorded) == toy_comm(planned)
    # by hand: each rank sends E x ceil(k c T / E) = 4 x 2 places of h fp32 values
    sizes = {s for r in toy_comm(recorded).values() for (op, _, s, tag) in r if tag == "ep"}
    assert sizes == {4 * 2 * 8 * 4.0}


@pytest.mark.parametrize("dp,ep", [(2, 2), (4, 2), (4, 4)])
def test_toy_expert_gradients_are_the_one_rank_models(dp, ep):
    from workloads.transformer.toy import run

    m = moe(4, top_k=2, capacity_factor=1.0)
    _, g, loss = run(1, 1, dp, **TOY, moe=m, ep=ep)
    _, ref, ref_loss = run(1, 1, 1, **TOY, moe=m, ep=1)
    assert loss == pytest.approx(ref_loss, rel=1e-5)
    for mine, want in zip(g, ref):
        assert mine.keys() == want.keys()
        for name in want:
            np.testing.assert_allclose(mine[name], want[name], rtol=1e-4, atol=1e-6)


def test_toy_moe_block_backward_is_the_finite_difference_of_its_forward():
    from workloads.transformer.toy.dense import _ln, _ln_back, init
    from workloads.transformer.toy.moe import backward, forward, init_experts

    m = moe(3, top_k=2, capacity_factor=2.0)   # no token dropped: the routing is fixed
    w = {k: v.astype(np.float64)
         for k, v in init_experts(init(1, 6, seed=3), m, 6, seed=3)[0].items()}
    x = np.random.default_rng(4).normal(size=(5, 6))
    rdir = np.random.default_rng(5).normal(size=(5, 6))

    def local(blocks):   # ep = 1: the all-to-all hands the block back
        return np.stack([blocks[0]])
        yield

    def run_gen(gen):
        try:
            next(gen)
        except StopIteration as stop:
            return stop.value
        raise AssertionError("ep = 1 needs no all-to-all")

    out, cache = run_gen(forward(w, x, m, 1, 0, _ln, local))
    grads = {k: np.zeros_like(v) for k, v in w.items()}
    dx = run_gen(backward(w, grads, cache, rdir, m, 1, 0, _ln_back, local))
    eps = 1e-6
    for name, idx in (("wr", (2, 1)), ("w1.1", (3, 5)), ("b2.2", (4,)), ("g2", (0,))):
        wp, wm = dict(w), dict(w)
        wp[name] = w[name].copy()
        wp[name][idx] += eps
        wm[name] = w[name].copy()
        wm[name][idx] -= eps
        num = ((run_gen(forward(wp, x, m, 1, 0, _ln, local))[0] * rdir).sum()
               - (run_gen(forward(wm, x, m, 1, 0, _ln, local))[0] * rdir).sum()) / (2 * eps)
        assert grads[name][idx] == pytest.approx(num, rel=1e-5, abs=1e-8)
    xp, xm = x.copy(), x.copy()
    xp[1, 2] += eps
    xm[1, 2] -= eps
    num = ((run_gen(forward(w, xp, m, 1, 0, _ln, local))[0] * rdir).sum()
           - (run_gen(forward(w, xm, m, 1, 0, _ln, local))[0] * rdir).sum()) / (2 * eps)
    assert dx[1, 2] == pytest.approx(num, rel=1e-5, abs=1e-8)


def test_alltoall_groups_survive_chakra(tmp_path):
    from netsim.formats.chakra import load_chakra, save_chakra

    t = schedule(C, 1, 2, 4, moe=moe(4), ep=2)
    save_chakra(t, str(tmp_path))
    back = load_chakra(str(tmp_path))

    def calls(x):
        return sorted((x.specs.row(int(x.spec[i])).op, tuple(x.group(i).tolist()),
                       float(x.size[i])) for i in range(x.num_ops) if x.is_collective[i])

    assert calls(back) == calls(t)
    assert {g for op, g, _ in calls(t) if op == "alltoall"} == {
        ep_group(Layout(1, 2, 4), 2, s, 0, j) for s in range(2) for j in range(2)}
