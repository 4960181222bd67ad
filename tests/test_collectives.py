"""Collective traces: structure, symbolic correctness of every schedule, speed, bad input.

The symbolic replay gives each rank its data as chunks tagged with contributions
(a Counter of origin ranks), walks the messages in dependency order and moves
what each carries (``collectives.payloads``): a reduction adds the sender's
contributions to the receiver's, a copy replaces them. A message may only carry
chunks its sender holds *as of the ops it depends on*. Afterwards the result must
hold every required contribution exactly once: dropped or duplicated chunks fail.
"""

from collections import Counter

import numpy as np
import pytest

from netsim import COMPUTE, MESSAGE, Trace, TraceError, simulate
from netsim.comm import collectives as C
from topologies import star

GENERATORS = [getattr(C, name) for name in C.__all__ if name != "payloads"]

KIND = {
    "binomial_broadcast": "broadcast",
    "pipeline_broadcast": "broadcast",
    "be_broadcast": "broadcast",
    "binomial_reduce": "reduce",
    "pipeline_reduce": "reduce",
    "pipeline_allreduce": "allreduce",
    "recursive_doubling_allreduce": "allreduce",
    "rabenseifner_allreduce": "allreduce",
    "ring_allreduce": "allreduce",
    "ring_allgather": "allgather",
    "recursive_doubling_allgather": "allgather",
    "ring_reduce_scatter": "reduce_scatter",
    "recursive_halving_reduce_scatter": "reduce_scatter",
    "alltoall": "alltoall",
    "ps_push_pull": "ps",
}

REDUCING = {name for name, kind in KIND.items()
            if kind in ("reduce", "allreduce", "reduce_scatter", "ps")}


def test_every_generator_has_a_kind():
    assert {g.__name__ for g in GENERATORS} == set(KIND)


# -- the symbolic interpreter ------------------------------------------------------------------

def replay(trace, payload, init):
    """Final per-rank states ``{chunk: Counter(origin -> count)}`` after the trace.

    A reduce message's data only counts on its receiver once the compute op
    reducing it (one that depends on it, on the receiver) has run, if any.
    """
    n = trace.num_ops
    anc = [0] * n  # bitset of every op each op waits for, directly or not
    for i in range(n):
        a = 0
        for d in trace.deps(i).tolist():
            a |= anc[d] | (1 << d)
        anc[i] = a
    kind, rank, peer = trace.kind, trace.rank.tolist(), trace.peer.tolist()
    lo, hi, red = payload["lo"].tolist(), payload["hi"].tolist(), payload["reduce"].tolist()
    reducer = {}
    for c in np.flatnonzero(kind == COMPUTE).tolist():
        for d in trace.deps(c).tolist():
            if kind[d] == MESSAGE and peer[d] == rank[c] and red[d]:
                reducer.setdefault(d, c)
    incoming = {r: [] for r in range(trace.ranks)}
    carried = {}

    def visible(m, at):
        if at is None:
            return True
        if not (anc[at] >> m) & 1:
            return False
        if red[m] and m in reducer:
            return bool((anc[at] >> reducer[m]) & 1)
        return True

    def state(r, at=None):
        st = {c: Counter(v) for c, v in init[r].items()}
        for m in incoming[r]:
            if visible(m, at):
                for c, v in carried[m].items():
                    st[c] = st.get(c, Counter()) + v if red[m] else Counter(v)
        return st

    for m in np.flatnonzero(kind == MESSAGE).tolist():
        st = state(rank[m], m)
        for c in range(lo[m], hi[m]):
            assert st.get(c), f"op {m}: rank {rank[m]} sends chunk {c} it does not hold"
        carried[m] = {c: st[c] for c in range(lo[m], hi[m])}
        incoming[peer[m]].append(m)
    return [state(r) for r in range(trace.ranks)]


def initial(kind, P, chunks, ranks):
    if kind == "broadcast":
        return [{c: Counter({0: 1}) for c in range(chunks)} if r == 0 else {} for r in range(P)]
    if kind == "allgather":
        return [{r: Counter({r: 1})} for r in range(P)]
    if kind == "alltoall":
        return [{r * P + d: Counter({r: 1}) for d in range(P)} for r in range(P)]
    if kind == "ps":
        return [{c: Counter({r: 1}) for c in range(chunks)} if r < P else {}
                for r in range(ranks)]
    return [{c: Counter({r: 1}) for c in range(chunks)} for r in range(P)]


def check(name, P, trace, payload):
    """Assert the collective's postcondition on the symbolic replay."""
    kind = KIND[name]
    chunks = payload["chunks"]
    final = replay(trace, payload, initial(kind, P, chunks, trace.ranks))
    all_ranks = Counter(range(P))
    if kind == "broadcast":
        want = {r: {c: Counter({0: 1}) for c in range(chunks)} for r in range(P)}
    elif kind == "reduce":
        want = {0: {c: all_ranks for c in range(chunks)}}
    elif kind == "allreduce":
        want = {r: {c: all_ranks for c in range(chunks)} for r in range(P)}
    elif kind == "ps":  # workers hold every shard, server P + k shard k, all summed once
        want = {r: {c: all_ranks for c in range(chunks)} for r in range(P)}
        want.update({P + k: {k: all_ranks} for k in range(chunks)})
    elif kind == "allgather":
        want = {r: {c: Counter({c: 1}) for c in range(P)} for r in range(P)}
    elif kind == "reduce_scatter":
        want = {r: {r: all_ranks} for r in range(P)}
    else:  # alltoall
        want = {d: {o * P + d: Counter({o: 1}) for o in range(P)} for d in range(P)}
    for r, chunks_wanted in want.items():
        for c, contrib in chunks_wanted.items():
            got = final[r].get(c, Counter())
            assert got == contrib, f"{name} P={P}: rank {r} chunk {c} holds {dict(got)}"


def options(gen, segments=3, gamma=0.0, servers=2):
    import inspect

    params = inspect.signature(gen).parameters
    out = {}
    if "segments" in params:
        out["segments"] = segments
    if "gamma" in params:
        out["gamma"] = gamma
    if "servers" in params:
        out["servers"] = servers
    return out


@pytest.mark.parametrize("gen", GENERATORS, ids=lambda g: g.__name__)
@pytest.mark.parametrize("P", [1, 2, 3, 4, 5, 6, 7, 8, 12, 13, 16])
def test_symbolic_replay(gen, P):
    for opts in ({**options(gen, segments=1, servers=1)}, options(gen, segments=3, servers=3),
                 options(gen, segments=2, gamma=1e-9, servers=2)):
        trace, payload = C.payloads(gen, P, 6e6, **opts)
        m = trace.is_message
        # Payload sizes agree with the trace.
        np.testing.assert_allclose(trace.size[m], (payload["hi"] - payload["lo"])[m]
                                   * payload["chunk_bytes"])
        check(gen.__name__, P, trace, payload)


def test_payloads_match_the_generator():
    trace, _ = C.payloads("ring_allreduce", 5, 1e6, gamma=1e-9)
    direct = C.ring_allreduce(5, 1e6, gamma=1e-9)
    for col in ("kind", "rank", "peer", "size", "duration", "dep_ptr", "dep_idx"):
        np.testing.assert_array_equal(getattr(trace, col), getattr(direct, col))


# -- the interpreter catches broken schedules -----------------------------------------------

def _append_copy(trace, payload, m):
    """The trace with message m sent a second time (same deps, same chunks)."""
    cols = {}
    for col in ("kind", "rank", "peer", "size", "duration", "flops", "iteration", "tag"):
        v = getattr(trace, col)
        cols[col] = np.concatenate([v, v[m:m + 1]])
    deps = trace.deps(m)
    ptr = np.concatenate([trace.dep_ptr, [trace.dep_ptr[-1] + len(deps)]])
    idx = np.concatenate([trace.dep_idx, deps])
    t = Trace(trace.ranks, dep_ptr=ptr, dep_idx=idx, tags=trace.tags, **cols)
    p = dict(payload)
    for key in ("lo", "hi", "reduce"):
        p[key] = np.concatenate([payload[key], payload[key][m:m + 1]])
    return t, p


def test_dropped_chunk_fails():
    trace, payload = C.payloads(C.ring_allreduce, 4, 4e6)
    p = dict(payload, hi=payload["hi"].copy())
    last = np.flatnonzero(trace.is_message)[-1]
    p["hi"][last] = p["lo"][last]  # the last allgather message carries nothing
    with pytest.raises(AssertionError):
        check("ring_allreduce", 4, trace, p)


def test_wrong_chunk_fails():
    trace, payload = C.payloads(C.recursive_halving_reduce_scatter, 8, 8e6)
    p = dict(payload, lo=payload["lo"].copy(), hi=payload["hi"].copy())
    m = np.flatnonzero(p["hi"] - p["lo"] == 1)[0]
    p["lo"][m] = (p["lo"][m] + 1) % 8
    p["hi"][m] = p["lo"][m] + 1
    with pytest.raises(AssertionError):
        check("recursive_halving_reduce_scatter", 8, trace, p)


@pytest.mark.parametrize("name, P", [("recursive_doubling_allreduce", 4),
                                     ("binomial_reduce", 8), ("ps_push_pull", 3)])
def test_duplicated_reduction_fails(name, P):
    trace, payload = C.payloads(name, P, 1e6)
    m = int(np.flatnonzero(payload["reduce"])[0])
    t, p = _append_copy(trace, payload, m)
    with pytest.raises(AssertionError):
        check(name, P, t, p)


def test_send_before_arrival_fails():
    # A pipeline whose rank 1 forwards segment 0 without waiting for it to arrive.
    trace, payload = C.payloads(C.pipeline_broadcast, 3, 3e6, segments=2)
    forward = int(np.flatnonzero(trace.rank == 1)[0])
    deps = [trace.deps(i).tolist() for i in range(trace.num_ops)]
    deps[forward] = []
    ptr = np.concatenate([[0], np.cumsum([len(d) for d in deps])])
    idx = np.array([x for d in deps for x in d], np.int64)
    t = Trace(trace.ranks, trace.kind, trace.rank, trace.peer, trace.size, trace.duration,
              dep_ptr=ptr, dep_idx=idx)
    with pytest.raises(AssertionError, match="does not hold"):
        check("pipeline_broadcast", 3, t, payload)


def test_send_before_reduction_fails():
    # With gamma > 0, forwarding a received chunk before reducing it loses contributions.
    trace, payload = C.payloads(C.ring_reduce_scatter, 3, 3e6, gamma=1e-9)
    deps = [trace.deps(i).tolist() for i in range(trace.num_ops)]
    comp = set(np.flatnonzero(trace.kind == COMPUTE).tolist())
    m = next(i for i in np.flatnonzero(trace.is_message).tolist() if comp & set(deps[i]))
    deps[m] = [d for d in deps[m] if d not in comp] + [trace.deps(c).tolist()[0]
                                                       for c in comp & set(deps[m])]
    ptr = np.concatenate([[0], np.cumsum([len(d) for d in deps])])
    idx = np.array([x for d in deps for x in d], np.int64)
    t = Trace(trace.ranks, trace.kind, trace.rank, trace.peer, trace.size, trace.duration,
              dep_ptr=ptr, dep_idx=idx)
    check("ring_reduce_scatter", 3, trace, payload)
    with pytest.raises(AssertionError):
        check("ring_reduce_scatter", 3, t, payload)


# -- structure -------------------------------------------------------------------------------

@pytest.mark.parametrize("P", [1, 2, 5, 8])
def test_message_counts(P):
    p2 = 1 << (P.bit_length() - 1)
    rem = P - p2
    L = p2.bit_length() - 1
    assert C.binomial_broadcast(P, 1e6).num_messages == P - 1
    assert C.binomial_reduce(P, 1e6).num_messages == P - 1
    assert C.pipeline_broadcast(P, 1e6, segments=4).num_messages == (P - 1) * 4
    assert C.pipeline_allreduce(P, 1e6, segments=4).num_messages == 2 * (P - 1) * 4
    assert C.ring_allreduce(P, 1e6).num_messages == 2 * (P - 1) * P
    assert C.ring_allgather(P, 1e6).num_messages == (P - 1) * P
    assert C.alltoall(P, 1e6).num_messages == (P - 1) * P
    assert C.recursive_doubling_allreduce(P, 1e6).num_messages == p2 * L + 2 * rem
    assert C.rabenseifner_allreduce(P, 1e6).num_messages == 2 * p2 * L + 2 * rem
    assert C.be_broadcast(P, 1e6).num_messages == (p2 - 1) + p2 * L + rem
    assert C.ps_push_pull(P, 1e6, servers=3).num_messages == 2 * P * 3


@pytest.mark.parametrize("gen", GENERATORS, ids=lambda g: g.__name__)
def test_gamma_makes_compute_ops(gen):
    plain = gen(6, 6e6, **options(gen))
    assert plain.num_ops == plain.num_messages  # gamma = 0: no compute ops
    if gen.__name__ not in REDUCING:
        return
    t, payload = C.payloads(gen, 6, 6e6, **options(gen, gamma=1e-9))
    comp = t.kind == COMPUTE
    assert comp.any() and t.num_messages == plain.num_messages
    if gen.__name__ == "ps_push_pull":  # one summation per server, of P - 1 shards
        np.testing.assert_allclose(t.duration[comp], 1e-9 * 5 * 6e6 / 2)
    else:  # one reduction per reduce message, gamma x its bytes
        red = payload["reduce"] & t.is_message
        assert comp.sum() == red.sum()
        np.testing.assert_allclose(np.sort(t.duration[comp]), np.sort(1e-9 * t.size[red]))


def test_every_rank_takes_part():
    for gen in GENERATORS:
        t = gen(7, 1e6, **options(gen))
        touched = set(t.rank[t.is_message].tolist()) | set(t.peer[t.is_message].tolist())
        assert touched == set(range(t.ranks)), gen.__name__


def test_dependencies_point_backwards():
    # Generators emit ops in a topological order (no cycle check needed on load).
    for gen in GENERATORS:
        t = gen(6, 1e6, **options(gen, gamma=1e-9))
        owner = np.repeat(np.arange(t.num_ops), np.diff(t.dep_ptr))
        assert np.all(t.dep_idx < owner), gen.__name__


def test_metadata_and_tags():
    t = C.rabenseifner_allreduce(6, 1e6, gamma=1e-9)
    assert t.metadata["collective"] == "rabenseifner_allreduce"
    assert t.metadata["nbytes"] == 1e6 and t.metadata["gamma"] == 1e-9
    assert t.tags == ["fold", "reduce-scatter", "allgather", "unfold"]
    assert C.ps_push_pull(2, 1e6, servers=2).tags == ["push", "pull"]


def test_single_rank_and_zero_bytes():
    for gen in GENERATORS:
        t = gen(1, 1e6, **options(gen))
        if gen.__name__ == "ps_push_pull":
            assert t.ranks == 3 and t.num_messages == 4
        else:
            assert t.num_ops == 0 and simulate(t, star(1)).makespan == 0.0
    t = C.ring_allreduce(4, 0)
    assert t.total_bytes == 0
    # Zero-byte messages still pay latency: 6 steps of 2 us on a star.
    assert simulate(t, star(4, latency=1e-6)).makespan == pytest.approx(12e-6, rel=1e-12)


def test_ring_allreduce_1024_counts():
    # 2(P-1) steps of P messages of n/P bytes (speed is measured in benchmarks/engine.py).
    t = C.ring_allreduce(1024, 100e6)
    assert t.num_messages == 2_095_104
    assert t.total_bytes == pytest.approx(2 * 1023 * 100e6)


# -- bad input --------------------------------------------------------------------------------

@pytest.mark.parametrize("call, match", [
    (lambda: C.ring_allreduce(0, 1e6), "P must be an integer in 1..2147483647, got 0$"),
    # Ranks are int32 (netsim.trace.core.MAX_RANKS): refused before any allocation (a MemoryError).
    (lambda: C.ring_allreduce(2**40, 1e6), "P must be an integer in 1..2147483647, got 1099511627776$"),
    (lambda: C.ring_allreduce(2.5, 1e6), "P must be an integer"),
    (lambda: C.ring_allreduce(True, 1e6), "P must be an integer"),
    (lambda: C.binomial_broadcast(4, -1), "nbytes must be a finite number >= 0"),
    (lambda: C.binomial_broadcast(4, float("nan")), "nbytes must be"),
    (lambda: C.binomial_broadcast(4, "1MB"), "nbytes must be"),
    (lambda: C.pipeline_broadcast(4, 1e6, segments=0), "segments must be an integer >= 1, got 0$"),
    (lambda: C.pipeline_reduce(4, 1e6, segments=2.0), "segments must be an integer"),
    (lambda: C.ring_allreduce(4, 1e6, gamma=-1e-9), "gamma must be"),
    (lambda: C.ps_push_pull(4, 1e6, servers=0), "servers must be an integer >= 1, got 0$"),
    (lambda: C.payloads("bogus", 4, 1e6), "unknown collective 'bogus'"),
    (lambda: C.payloads(C.ring_allreduce, 4, 1e6, segments=2), "takes no option 'segments'"),
])
def test_bad_input(call, match):
    with pytest.raises(TraceError, match=match) as info:
        call()
    assert "\n" not in str(info.value)


# -- whole elements (element=4: float32) -------------------------------------------------------

@pytest.mark.parametrize("gen", GENERATORS, ids=lambda g: g.__name__)
@pytest.mark.parametrize("P", [2, 3, 5, 8, 13])
def test_whole_elements_stay_correct_whole_and_exact(gen, P):
    # 524 bytes = 131 float32 values: no chunking below divides it evenly.
    for opts in (options(gen, segments=3, servers=3), options(gen, segments=2, gamma=1e-9)):
        trace, payload = C.payloads(gen, P, 524, element=4, **opts)
        even = gen(P, 524, **opts)
        m = trace.is_message
        assert (trace.size[m] % 4 == 0).all(), trace.size[m]  # whole float32 values
        sizes = np.concatenate([[0], np.cumsum(payload["chunk_bytes"])])
        np.testing.assert_array_equal(trace.size[m],
                                      (sizes[payload["hi"]] - sizes[payload["lo"]])[m])
        # The same schedule; the chunks of each rank's vector add up to exactly 524 B.
        assert trace.num_ops == even.num_ops
        vectors = P if gen.__name__ == "alltoall" else 1
        chunk_bytes = np.broadcast_to(payload["chunk_bytes"], payload["chunks"])
        assert chunk_bytes.sum() == 524 * vectors
        check(gen.__name__, P, trace, payload)


def test_whole_elements_ring_allreduce_of_524_bytes_over_8_ranks_by_hand():
    # 131 values over 8 chunks: 131 = 8 * 16 + 3, so chunks 0-2 hold 17 values (68 B) and
    # chunks 3-7 hold 16 (64 B). Each chunk travels P - 1 = 7 times in the reduce-scatter
    # and 7 times in the allgather: 3 * 14 = 42 messages of 68 B, 5 * 14 = 70 of 64 B,
    # 2 (P - 1) * 524 = 7336 B in all (the even cut: 112 messages of 65.5 B).
    t = C.ring_allreduce(8, 524, element=4)
    assert Counter(t.size.tolist()) == {68.0: 42, 64.0: 70}
    assert t.total_bytes == 7336.0
    assert set(C.ring_allreduce(8, 524).size.tolist()) == {65.5}
    # Alltoall of 10 B (5 int16 values) per rank over 3 ranks: blocks of 2, 2, 1 values.
    a = C.alltoall(3, 10, element=2)
    assert sorted(a.size.tolist()) == [2.0, 2.0, 4.0, 4.0, 4.0, 4.0]


@pytest.mark.parametrize("gen", GENERATORS, ids=lambda g: g.__name__)
def test_whole_elements_change_nothing_when_the_split_is_even(gen):
    # 192 B = 48 values: divisible by P = 4, p' = 4, 3 segments and 2 servers.
    opts = options(gen, segments=3, gamma=1e-9, servers=2)
    whole, even = gen(4, 192, element=4, **opts), gen(4, 192, **opts)
    for col in ("kind", "rank", "peer", "size", "duration", "dep_ptr", "dep_idx"):
        np.testing.assert_array_equal(getattr(whole, col), getattr(even, col))


def test_whole_elements_match_the_closed_form_on_a_star():
    from netsim import costmodel

    # 4000 B over 4 ranks: chunks of 250 values (1000 B); alpha = two 1 us link latencies.
    t = C.ring_allreduce(4, 4000, element=4)
    got = simulate(t, star(4, bandwidth=1e9, latency=1e-6)).makespan
    assert got == pytest.approx(costmodel.ring_allreduce(4, 4000, 2e-6, 1e-9), rel=1e-12)
    assert got == pytest.approx(2 * 3 * (2e-6 + 1000 / 1e9), rel=1e-12)


@pytest.mark.parametrize("call, match", [
    (lambda: C.ring_allreduce(4, 6, element=4), "whole number of 4-byte elements, got 6"),
    (lambda: C.ring_allreduce(4, 8.5, element=1), "whole number of 1-byte elements"),
    (lambda: C.ring_allreduce(4, 8, element=0), "element must be an integer >= 1, got 0$"),
])
def test_bad_element(call, match):
    with pytest.raises(TraceError, match=match):
        call()
