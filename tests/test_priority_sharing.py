"""Strict-priority sharing: the allocation, the engine and the reference engine agree, and
an urgent message overtakes a less urgent one already on the wire (hand-worked times)."""

import json

import networkx as nx
import numpy as np
import pytest

from netsim import NetsimError, TraceBuilder, simulate
from netsim.engine.maxmin import max_min_rates, max_min_rates_small
from netsim.engine import reference
from netsim.engine.reference import maxmin
from engines import result
from random_cases import random_case


def _pair(bandwidth=1e9):
    G = nx.Graph()
    G.add_nodes_from(["a", "b"], kind="host")
    G.add_edge("a", "b", bandwidth=bandwidth, latency=0.0)
    return G


def _overtake_trace():
    # op 0: 10 MB of low priority leaves rank 0 at t = 0; op 1: 4 ms of compute on rank 0;
    # op 2: 2 MB of high priority, sent after the compute, on the same link direction.
    b = TraceBuilder(2)
    b.message(0, 1, 10e6)
    c = b.compute(0, seconds=4e-3)
    b.message(0, 1, 2e6, deps=[c])
    return b.build()


PRIORITY = np.array([0, 0, 1])


@pytest.mark.parametrize("engine", ["engine", "reference"])
def test_a_high_priority_chunk_overtakes_a_low_priority_one_in_flight(engine):
    # 1 GB/s. Up to 4 ms the low message is alone: 4 MB sent, 6 MB left.
    # Strict priority: the 2 MB take the whole link, 4 + 2 = 6 ms; the low one resumes
    # and ends at 6 + 6 = 12 ms (work conserving: the link never idles).
    # Max-min: both get 0.5 GB/s, the 2 MB end at 4 + 4 = 8 ms, the rest of the low
    # one (6 - 2 = 4 MB) alone at 1 GB/s: 8 + 4 = 12 ms.
    trace, G = _overtake_trace(), _pair()
    expected = {"priority": [12e-3, 4e-3, 6e-3], "maxmin": [12e-3, 4e-3, 8e-3]}
    for sharing, want in expected.items():
        if engine == "engine":
            end = simulate(trace, G, sharing=sharing, priority=PRIORITY).ops["end"].tolist()
        else:
            ref = result(trace, G, reference, sharing=sharing, priority=PRIORITY)
            end = ref.ops["end"].tolist()
        assert end == pytest.approx(want, rel=1e-12), sharing


def test_priority_with_one_class_is_maxmin_exactly():
    for seed in range(30):
        G, trace = random_case(seed)
        plain = simulate(trace, G)
        same = simulate(trace, G, sharing="priority", priority=np.full(trace.num_ops, 3))
        assert same.ops["end"].tolist() == plain.ops["end"].tolist()


@pytest.mark.parametrize("seed", range(60))
def test_engine_matches_reference_under_priority(seed):
    G, trace = random_case(seed)
    prio = np.random.default_rng(seed).integers(0, 3, trace.num_ops)
    r = simulate(trace, G, sharing="priority", priority=prio)
    ref = result(trace, G, reference, sharing="priority", priority=prio)
    assert r.ops["end"].tolist() == pytest.approx(ref.ops["end"].tolist(), rel=1e-9, abs=1e-15)
    assert r.links["busy"].tolist() == pytest.approx(ref.links["busy"].tolist(), rel=1e-9,
                                                     abs=1e-15)


def test_batch_and_small_allocations_agree_bit_for_bit_and_with_the_reference():
    rng = np.random.default_rng(7)
    for _ in range(200):
        nlinks, nflows = int(rng.integers(1, 6)), int(rng.integers(1, 12))
        cap = rng.uniform(1.0, 10.0, nlinks)
        routes = [sorted(set(rng.integers(0, nlinks, int(rng.integers(1, 4))).tolist()))
                  for _ in range(nflows)]
        prio = rng.integers(0, 3, nflows).tolist()
        hops = max(map(len, routes))
        padded = np.array([r + [-1] * (hops - len(r)) for r in routes])
        batch = max_min_rates(padded, cap, priority=np.array(prio)).tolist()
        assert batch == max_min_rates_small(routes, cap.tolist(), prio)
        ref = maxmin(dict(enumerate(routes)), dict(enumerate(cap.tolist())),
                     dict(enumerate(prio)))
        assert batch == pytest.approx([ref[f] for f in range(nflows)], rel=1e-12, abs=1e-12)
        # Work conservation: a link is full, or every flow crossing it is limited elsewhere
        # (no flow could grow without taking from an equal or more urgent one).
        load = np.zeros(nlinks)
        for r, x in zip(routes, batch):
            load[r] += x
        assert (load <= cap * (1 + 1e-12)).all()


def test_unknown_sharing_is_named():
    with pytest.raises(NetsimError, match="unknown sharing 'fifo'"):
        simulate(_overtake_trace(), _pair(), sharing="fifo")


def test_replay_command_takes_sharing(tmp_path, capsys):
    from netsim import TraceBuilder, save_trace
    from studies.cli.parser import main

    b = TraceBuilder(2)
    b.message(0, 1, 10e6)
    c = b.compute(0, seconds=4e-3)
    m = b.message(0, 1, 2e6, deps=[c], priority=1)
    b.compute(1, seconds=10e-3, deps=[m])      # rank 1 works on what the urgent chunk brings
    path = str(tmp_path / "t.npz")
    save_trace(b.build(), path)
    ends = {}
    for sharing in ("maxmin", "priority"):
        assert main(["replay", path, "--topology", "star:n=2,bandwidth=8Gbps,latency=0s",
                     "--sharing", sharing, "--json"]) in (0, None)
        ends[sharing] = json.loads(capsys.readouterr().out)
    # The hand-worked case above through the star (1 GB/s, no latency): the urgent chunk
    # arrives at 8 ms under max-min, at 6 ms under priority; then 10 ms of compute.
    assert ends["maxmin"]["makespan"] == pytest.approx(18e-3, rel=1e-9)
    assert ends["priority"]["makespan"] == pytest.approx(16e-3, rel=1e-9)
