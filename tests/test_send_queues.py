"""Messages on one send queue leave in order; different queues share links max-min.

Expected times are hand-worked on a 10 GbE star (1.25 GB/s, 1 us per link, 2 us a path):
a 65 kB message alone takes 2 us + 52 us.
"""

import networkx as nx
import numpy as np
import pytest

import netsim
from netsim import TraceBuilder
from netsim.errors import DeadlockError, TraceError
from netsim.formats.tracefile import load_trace, save_trace

BW, LAT, N = 1.25e9, 1e-6, 65e3


def star(n):
    G = nx.Graph()
    G.add_nodes_from([f"h{i}" for i in range(n)], kind="host")
    G.add_edges_from([(f"h{i}", "sw") for i in range(n)], bandwidth=BW, latency=LAT)
    return G


def four_sends(queue):
    # Node 0 issues four 65 kB sends to node 1 within 3 us (one every microsecond).
    b = TraceBuilder(2)
    prev = None
    for k in range(4):
        c = b.compute(0, seconds=1e-6 if k else 0.0, deps=[] if prev is None else [prev])
        b.message(0, 1, N, deps=[c], queue=queue)
        prev = c
    return b.build()


def message_ends(trace, result):
    return result.ops["end"][trace.is_message]


def test_four_queued_sends_end_one_after_another():
    t = four_sends(queue=0)
    r = netsim.simulate(t, star(2))
    # The first: 2 us latency + 52 us. Each next one's latency passed while it waited, so
    # its first byte follows the last byte of the one before: 52 us later each.
    assert message_ends(t, r) == pytest.approx([54e-6, 106e-6, 158e-6, 210e-6], rel=1e-12)


def test_without_a_queue_they_share_the_link_and_end_together():
    t = four_sends(queue=-1)
    r = netsim.simulate(t, star(2))
    # Max-min: node 0's link is busy from 2 us on with 4 x 52 us of bytes, shared, so the
    # last ends at 210 us. The first is ahead by what it sent before all four shared (1 us
    # alone, 1 us of two, 1 us of three: 2.29 kB) and ends first, at 205.7 us.
    ends = message_ends(t, r)
    assert ends.max() == pytest.approx(210e-6, rel=1e-9) and ends.min() > 205e-6


def test_two_queues_share_the_link_max_min():
    # Two queues of node 0, two 65 kB messages each, all issued at 0 (to nodes 1 and 2):
    # each queue's head gets half of node 0's link (104 us), then each second message half.
    b = TraceBuilder(3)
    for q, dst in ((0, 1), (1, 2)):
        for _ in range(2):
            b.message(0, dst, N, queue=q)
    t = b.build()
    r = netsim.simulate(t, star(3))
    assert message_ends(t, r) == pytest.approx([106e-6, 210e-6, 106e-6, 210e-6], rel=1e-12)


def test_small_and_batch_paths_and_the_reference_engine_agree():
    from netsim.engine import reference
    from netsim.engine.replay import replay
    from netsim.network.compiled import Network

    b = TraceBuilder(4)
    for q in range(3):
        c = b.compute(q, seconds=1e-5 * q)
        for k in range(5):
            b.message(q, 3, N * (k + 1), queue=q, deps=[c])
    t = b.build()
    net = Network(star(4))
    nodes = net.placement(4)
    args = (t, net, nodes, t.compute_seconds())
    small = replay(*args, small_event=10**9)
    batch = replay(*args, small_event=-1)
    ref = reference.replay(*args)
    assert np.array_equal(small.end, batch.end)
    assert np.allclose(ref.end, small.end, rtol=1e-12, atol=0)
    assert np.allclose(ref.transfer, small.transfer, rtol=1e-12, atol=0, equal_nan=True)


def test_a_queue_belongs_to_one_sender_and_files_keep_it(tmp_path):
    b = TraceBuilder(3)
    b.message(0, 1, 8, queue=4)
    b.message(2, 1, 8, queue=4)
    with pytest.raises(TraceError, match="a queue belongs to one sender"):
        b.build()
    b = TraceBuilder(2)
    b.compute(0, seconds=1.0)
    t = four_sends(queue=3)
    for name in ("q.json", "q.npz"):
        save_trace(t, tmp_path / name)
        assert load_trace(tmp_path / name).queue.tolist() == t.queue.tolist()


def test_a_queue_waiting_on_a_later_message_deadlocks_by_name():
    # The second message on the queue is sent before the first can start (it waits for it).
    b = TraceBuilder(2)
    first = b.message(0, 1, 8, queue=0, deps=[1])
    b.message(0, 1, 8, queue=0)
    b.message(1, 0, 8, deps=[first])
    with pytest.raises((DeadlockError, TraceError)):
        netsim.simulate(b.build(), star(2))


def test_chakra_round_trip_keeps_the_queues(tmp_path):
    from netsim.formats.chakra import load_chakra, save_chakra

    t = four_sends(queue=2)
    save_chakra(t, tmp_path)
    back = load_chakra(tmp_path)
    assert back.queue[back.is_message].tolist() == [2] * 4
    assert netsim.simulate(back, star(2)).makespan == pytest.approx(210e-6, rel=1e-12)
