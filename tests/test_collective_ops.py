"""Collective ops kept whole in the trace and expanded at replay by a chosen library.

Expected values come from: the same collective expanded at trace-build time with
today's generators and joined with ``concat`` (the MPICH library must give the same
replay), hand-worked alpha-beta times on a non-blocking star, and NCCL's lone call
(``netsim.nccl.simulate``) for the NCCL library.
"""

import networkx as nx
import numpy as np
import pytest

import netsim
from netsim import TraceBuilder
from netsim import nccl
from netsim.comm import collectives
from netsim.errors import NcclModelError, TraceError
from netsim.formats.tracefile import load_trace, save_trace
from netsim.trace.ops import concat, repeat
from topologies.devices import compute_capability


def star(n, bw=1e9, lat=1e-6):
    G = nx.Graph()
    G.add_nodes_from([f"h{i}" for i in range(n)], kind="host")
    G.add_edges_from([(f"h{i}", "sw") for i in range(n)], bandwidth=bw, latency=lat)
    return G


def nvswitch_box(n=8, model="H100", nvls=True, bw=450e9):
    G = nx.Graph()
    G.add_nodes_from([f"g{i}" for i in range(n)], kind="gpu", model=model, sm=compute_capability(model))
    G.add_node("sw", kind="nvswitch", nvls=nvls)
    G.add_edges_from([(f"g{i}", "sw") for i in range(n)], bandwidth=bw, latency=1e-7)
    return G


def iteration_with(P, coll, seconds):
    """Per rank ``seconds[r]`` of compute, then ``coll`` (a trace or a builder call), then an
    update of 1 ms on every rank."""
    work = TraceBuilder(P)
    for r in range(P):
        work.compute(r, seconds=seconds[r], tag="backward")
    upd = TraceBuilder(P)
    for r in range(P):
        upd.compute(r, seconds=1e-3, tag="update")
    return concat(concat(work.build(), coll), upd.build())


def one_collective(P, op, nbytes, **kw):
    b = TraceBuilder(P)
    b.collective(op, range(P), nbytes, **kw)
    return b.build()


# -- the trace ---------------------------------------------------------------------------

def test_bad_collectives_are_refused_naming_the_op():
    b = TraceBuilder(4)
    b.compute(0, seconds=1.0)
    with pytest.raises(TraceError, match=r"op 1: unknown collective 'allsum'"):
        b.collective("allsum", [0, 1], 8)
    with pytest.raises(TraceError, match=r"op 1: unknown algorithm 'fast'"):
        b.collective("allreduce", [0, 1], 8, algorithm="fast")
    for group, root, what in [([0, 7], None, "outside 0..3"), ([], None, "empty group"),
                              ([0, 1], 3, "root 3 is not in its group"),
                              ([1, 1], None, "repeats a rank")]:
        b = TraceBuilder(4)
        b.collective("reduce" if root is not None else "allreduce", group, 8, root=root)
        with pytest.raises(TraceError, match=what):
            b.build()


def test_json_and_npz_round_trip_collectives(tmp_path):
    b = TraceBuilder(4)
    c = [b.compute(r, seconds=1e-3 * (r + 1)) for r in range(4)]
    a = b.collective("broadcast", [1, 2, 3, 0], 4096, root=2, algorithm="lp", deps=c,
                     segments=4, element=4, priority=3, tag="bcast", iteration=1)
    b.collective("allgather", [0, 1], 100, deps=[a])
    t = b.build()
    for name in ("t.json", "t.npz"):
        save_trace(t, tmp_path / name)
        u = load_trace(tmp_path / name)
        assert u.specs.rows() == t.specs.rows()
        for col in ("kind", "rank", "size", "spec", "priority", "iteration", "dep_ptr",
                    "dep_idx"):
            assert np.array_equal(getattr(u, col), getattr(t, col)), col
        assert u.tags == t.tags


def test_repeat_keeps_one_spec_per_distinct_call():
    t = repeat(iteration_with(4, one_collective(4, "allreduce", 1e6), [1e-3] * 4), 5)
    assert t.num_collectives == 5 and len(t.specs) == 1
    # Each copy's collective waits for the backward op of every member.
    for k in range(5):
        op = int(np.flatnonzero(t.is_collective)[k])
        assert sorted(t.kind[t.deps(op)].tolist()) == [0] * 4


# -- MPICH: the same replay as the trace expanded when it was built ----------------------

CASES = [
    ("ring_allreduce", "allreduce", None, {}, True),
    ("rabenseifner_allreduce", "allreduce", "be", {}, False),
    ("recursive_doubling_allreduce", "allreduce", "rd", {}, False),
    ("ring_allgather", "allgather", None, {}, True),
    ("ring_reduce_scatter", "reduce_scatter", None, {}, True),
    ("alltoall", "alltoall", None, {}, False),
    ("binomial_broadcast", "broadcast", "mst", {}, False),
    ("pipeline_broadcast", "broadcast", "lp", {"segments": 3}, False),
    ("pipeline_allreduce", "allreduce", "lp", {"segments": 3}, False),
]


@pytest.mark.parametrize("skewed", [False, True])
@pytest.mark.parametrize("name,op,hint,kw,chained", CASES)
def test_mpich_library_replays_the_prebuilt_expansion(name, op, hint, kw, chained, skewed):
    # With every rank ready at once, the call replays exactly as its schedule joined with
    # concat at build time. With ranks ready at different times that still holds for the
    # rings; elsewhere the library holds a message until its receiver has entered the call
    # and a tree's inner rank until it is ready, which concat (senders' first ops only)
    # does not: see test_an_inner_tree_rank_forwards_once_it_is_ready.
    if skewed and not chained:
        pytest.skip("covered by the hand-worked tree test")
    P, n = 6, 6 * 4 * 1000
    skew = [1e-3 * (1 + (0.37 * r if skewed else 0)) for r in range(P)]
    gen = getattr(collectives, name)
    old = iteration_with(P, gen(P, n, element=4, **kw), skew)
    b = TraceBuilder(P)
    b.collective(op, range(P), n, algorithm=hint, element=4, **kw)
    new = iteration_with(P, b.build(), skew)
    G = star(P)
    a = netsim.simulate(old, G)
    for library in ("mpich", "auto"):   # hosts: auto is MPICH
        r = netsim.simulate(new, G, library=library)
        assert r.makespan == pytest.approx(a.makespan, rel=1e-12, abs=0)
        assert np.allclose(r.iteration_times, a.iteration_times, rtol=1e-12, atol=0)
        assert np.allclose(r.links["bytes"], a.links["bytes"], rtol=1e-12, atol=0)
        assert r.collectives["library"].tolist() == ["mpich"]


def test_mpich_rooted_call_counts_from_its_root():
    # Binomial broadcast from root 2 of 4 hosts on a non-blocking star: log2(4) = 2 steps of
    # (2 hop latencies + n / bw), whatever the root; the root sends first.
    n, bw, lat = 1e6, 1e9, 1e-6
    b = TraceBuilder(4)
    b.collective("broadcast", [0, 1, 2, 3], n, root=2, algorithm="mst")
    r = netsim.simulate(b.build(), star(4, bw, lat))
    assert r.makespan == pytest.approx(2 * (2 * lat + n / bw), rel=1e-12)
    x = r.expanded.trace
    first = int(np.argmin(r.expanded_ops["start"] + np.where(x.is_message, 0, np.inf)))
    assert x.rank[first] == 2


def test_dependency_on_a_collective_waits_for_the_own_rank_part_only():
    # Binomial reduce to root 0 of 4 hosts: rank 1 sends in step 1 and is done; an op on
    # rank 1 that waits for the reduce starts when rank 1's send ends, long before the root
    # has everything (the MPICH per-rank semantics).
    n, bw, lat = 1e6, 1e9, 0.0
    b = TraceBuilder(4)
    c = b.collective("reduce", [0, 1, 2, 3], n, root=0, algorithm="mst")
    after = b.compute(1, seconds=1e-3, deps=[c])
    root_after = b.compute(0, seconds=1e-3, deps=[c])
    r = netsim.simulate(b.build(), star(4, bw, lat))
    assert r.ops["start"][after] == pytest.approx(n / bw, rel=1e-12)
    assert r.ops["start"][root_after] == pytest.approx(2 * n / bw, rel=1e-12)
    assert r.ops["end"][c] == pytest.approx(2 * n / bw, rel=1e-12)


def test_an_inner_tree_rank_forwards_once_it_is_ready():
    # Binomial reduce to 0 over 4 hosts: rank 3 sends to 2, then 2 sends to 0 (and 1 to 0).
    # Rank 2 enters the call only at 10 ms: rank 3's message to it moves from then (a
    # rendezvous: nothing moves to a member before it has entered), and 2 forwards the sum
    # after it, so the reduce ends at 10 ms + 2 n / bw (zero latency).
    n, bw = 1e6, 1e9
    b = TraceBuilder(4)
    late = b.compute(2, seconds=10e-3)
    c = b.collective("reduce", [0, 1, 2, 3], n, root=0, deps=[late], algorithm="mst")
    r = netsim.simulate(b.build(), star(4, bw, 0.0))
    assert r.ops["end"][c] == pytest.approx(10e-3 + 2 * n / bw, rel=1e-12)


def test_unknown_mpich_schedule_names_the_op():
    b = TraceBuilder(4)
    b.compute(0, seconds=1.0)
    b.collective("alltoall", range(4), 1e6, algorithm="mst")
    with pytest.raises(TraceError, match=r"op 1: MPICH has no 'mst' alltoall"):
        netsim.simulate(b.build(), star(4))


# -- NCCL ----------------------------------------------------------------------------------

@pytest.mark.parametrize("op", ["allreduce", "allgather", "reduce_scatter", "broadcast",
                                "alltoall"])
def test_one_collective_trace_equals_the_lone_call(op):
    G = nvswitch_box()
    n = 64 << 20
    lone = nccl.simulate(G, op, n)
    r = netsim.simulate(one_collective(8, op, n), G, library="nccl")
    assert abs(r.makespan - lone.makespan) <= 1e-12 * lone.makespan
    assert r.collectives["algorithm"][0] == lone.plan.algorithm
    assert int(r.collectives["channels"][0]) == lone.plan.channels
    auto = netsim.simulate(one_collective(8, op, n), G)   # every member on a gpu: NCCL
    assert auto.makespan == r.makespan


def test_nccl_call_starts_when_its_last_member_is_ready():
    G = nvswitch_box()
    n = 32 << 20
    skew = [1e-3 * (1 + r) for r in range(8)]
    t = iteration_with(8, one_collective(8, "allreduce", n), skew)
    r = netsim.simulate(t, G, library="nccl")
    call = nccl.simulate(G, "allreduce", n).makespan
    assert r.makespan == pytest.approx(max(skew) + call + 1e-3, rel=1e-12)
    # Rank 0 was ready 7 ms early: its part of the call (waiting included) is communication.
    assert r.ranks["communication"][0] == pytest.approx(7e-3 + call, rel=1e-9)
    assert r.ranks["communication"][7] == pytest.approx(call, rel=1e-9)


def test_two_concurrent_nccl_calls_share_the_links():
    # Two GPUs on one NVLink, 1 GB each: alone, L + T; two at once share the link, L + 2T.
    G = nx.Graph()
    G.add_nodes_from(["g0", "g1"], kind="gpu", model="V100", sm=70)
    G.add_edge("g0", "g1", bandwidth=25e9, latency=0.0)
    n = 10**9
    lone = nccl.simulate(G, "allreduce", n)
    L = lone.plan.latency
    b = TraceBuilder(2)
    b.collective("allreduce", [0, 1], n)
    b.collective("allreduce", [0, 1], n)
    r = netsim.simulate(b.build(), G)
    assert r.makespan == pytest.approx(L + 2 * (lone.makespan - L), rel=1e-9)


def test_auto_takes_mpich_for_an_mpich_only_hint_and_nccl_refuses_it():
    G = nvswitch_box(4)
    t = one_collective(4, "allreduce", 4 << 20, algorithm="mst")
    assert netsim.simulate(t, G).collectives["library"].tolist() == ["mpich"]
    with pytest.raises(NcclModelError, match="op 0: NCCL has no algorithm 'mst'"):
        netsim.simulate(t, G, library="nccl")


def test_nccl_off_gpu_nodes_names_the_rank():
    with pytest.raises(NcclModelError, match=r"op 0: .* rank 0 sits on a 'host' node"):
        netsim.simulate(one_collective(4, "allreduce", 1e6), star(4), library="nccl")
    with pytest.raises(TraceError, match="unknown library 'openmpi'"):
        netsim.simulate(one_collective(4, "allreduce", 1e6), star(4), library="openmpi")


def test_a_trace_without_collectives_replays_the_same_under_every_library():
    b = TraceBuilder(2)
    b.message(0, 1, 1e6)
    G = star(2)
    times = {lib: netsim.simulate(b.build(), G, library=lib).makespan
             for lib in ("auto", "mpich", "nccl")}
    assert len(set(times.values())) == 1


def test_one_member_or_zero_bytes_moves_nothing():
    b = TraceBuilder(2)
    c0 = b.compute(0, seconds=1e-3)
    a = b.collective("allreduce", [0], 1e6, deps=[c0])
    z = b.collective("allreduce", [0, 1], 0, deps=[a])
    end = b.compute(1, seconds=1e-3, deps=[z])
    r = netsim.simulate(b.build(), star(2))
    assert r.ops["start"][end] == pytest.approx(1e-3) and r.links["bytes"].sum() == 0
    assert r.collectives["library"].tolist() == ["none", "none"]


# -- traces in and out -------------------------------------------------------------------------

def test_chakra_round_trip_keeps_collectives_under_both_libraries(tmp_path):
    from netsim.formats.chakra import load_chakra, save_chakra

    b = TraceBuilder(4)
    c = [b.compute(r, seconds=1e-3 * (r + 1)) for r in range(4)]
    a = b.collective("allreduce", range(4), 4 << 20, deps=c, tag="grad", element=4)
    u = [b.compute(r, seconds=1e-4, deps=[a]) for r in range(4)]
    b.collective("broadcast", [1, 2, 3, 0], 1 << 20, root=2, algorithm="mst", deps=u,
                 priority=2)
    t = b.build()
    save_chakra(t, tmp_path)
    back = load_chakra(tmp_path)
    assert back.num_collectives == 2 and back.specs.rows() == t.specs.rows()
    assert back.priority[back.is_collective].tolist() == [0, 2]
    for G in (star(4), nvswitch_box(4)):
        for library in ("mpich", "auto"):
            want = netsim.simulate(t, G, library=library).makespan
            got = netsim.simulate(back, G, library=library).makespan
            assert got == pytest.approx(want, rel=1e-9)


def test_timeline_shows_a_collective_on_every_member():
    from netsim.formats.timeline import timeline_events

    G = nvswitch_box(4)
    b = TraceBuilder(4)
    b.collective("allreduce", range(4), 8 << 20, tag="grad")
    t = b.build()
    r = netsim.simulate(t, G, link_series=True)
    slices = [e for e in timeline_events(t, r) if e["ph"] == "X"]
    assert sorted(e["pid"] for e in slices) == [1, 2, 3, 4]
    assert {e["cat"] for e in slices} == {"collective"}
    # Timelines are in whole nanoseconds.
    assert [e["dur"] for e in slices] == pytest.approx([r.makespan * 1e6] * 4, abs=1e-3)
