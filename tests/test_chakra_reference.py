"""Chakra files written by other tools (ASTRA-sim's converters), whole: decoded here with the
protobuf descriptors alone, then imported and replayed against closed forms."""

import os

import pytest

pb = pytest.importorskip("netsim.formats.et_def_pb2", reason="Chakra traces need the protobuf package")

import netsim  # noqa: E402
from netsim.formats.chakra import load_chakra  # noqa: E402
from netsim.comm.library import mpich_wire  # noqa: E402

DATA = os.path.join(os.path.dirname(__file__), "data", "chakra")
RING = os.path.join(DATA, "astra_msccl_ring_8")
MICRO = os.path.join(DATA, "astra_all_reduce_4")


def _decode(path):
    """GlobalMetadata and Nodes of a .et file: varint length, message, varint length, ..."""
    raw, pos, msgs = open(path, "rb").read(), 0, []
    while pos < len(raw):
        size = shift = 0
        while True:
            byte = raw[pos]
            pos += 1
            size |= (byte & 0x7F) << shift
            shift += 7
            if byte < 0x80:
                break
        msg = pb.Node() if msgs else pb.GlobalMetadata()
        msg.ParseFromString(raw[pos:pos + size])
        msgs.append(msg)
        pos += size
    return msgs[0], msgs[1:]


def _attr(node, name):
    a = next(a for a in node.attr if a.name == name)
    return getattr(a, a.WhichOneof("value"))


def _star(P, bandwidth, latency):
    G = netsim.nx.Graph()
    G.add_node("sw", kind="switch")
    for r in range(P):
        G.add_node(r, kind="host")
        G.add_edge(r, "sw", bandwidth=bandwidth, latency=latency)
    return G


def test_msccl_ring_allreduce_from_astra_sim():
    files = sorted(os.listdir(RING))
    assert files == [f"custom_allreduce.{r}.et" for r in range(8)]
    sends, comp_us = [], []
    for r in range(8):
        _, nodes = _decode(os.path.join(RING, f"custom_allreduce.{r}.et"))
        for n in nodes:
            if n.type == pb.COMM_SEND_NODE:
                sends.append((r, _attr(n, "comm_dst"), _attr(n, "comm_size")))
            elif n.type == pb.COMP_NODE:
                comp_us.append(n.duration_micros)
    # A ring: every rank sends 14 chunks of 1 MiB / 8 to its successor; 7 reductions each.
    assert len(sends) == 8 * 14 and {(r, (r + 1) % 8) for r, d, _ in sends} == \
        {(r, d) for r, d, _ in sends}
    assert {s for _, _, s in sends} == {131072} and comp_us == [7] * 56
    t = load_chakra(RING)
    assert t.ranks == 8 and t.num_messages == len(sends)
    assert t.total_bytes == sum(s for _, _, s in sends) == 2 * 7 * 2 ** 20
    # Each rank's program is one chain: 14 sends, each after the receive (and, in the
    # reduce-scatter half, the 7 us reduction) before it. One flow per link direction at a
    # time on a star: 14 (2 alpha + n / 8 / B) + 7 x 7 us.
    B, alpha = 1.25e9, 1e-6
    want = 14 * (2 * alpha + 131072 / B) + 7 * 7e-6
    assert netsim.simulate(t, _star(8, B, alpha)).makespan == pytest.approx(want, rel=1e-12)


def test_all_reduce_microbenchmark_from_astra_sim():
    nodes = [_decode(os.path.join(MICRO, f"all_reduce.{r}.et"))[1] for r in range(4)]
    assert [len(n) for n in nodes] == [1] * 4
    n = _attr(nodes[0][0], "comm_size")
    assert n == 2 ** 20 and nodes[0][0].type == pb.COMM_COLL_NODE
    assert _attr(nodes[0][0], "comm_type") == pb.ALL_REDUCE
    t = load_chakra(MICRO)
    P, B, alpha = 4, 1.25e9, 1e-6
    # One collective op; MPICH expands it as a ring allreduce: 2 (P - 1) P messages of n / P.
    assert t.num_collectives == 1 and t.num_messages == 0
    w = mpich_wire(t)
    assert w.num_messages == 2 * (P - 1) * P and w.total_bytes == 2 * (P - 1) * n
    want = 2 * (P - 1) * (2 * alpha + n / P / B)
    assert netsim.simulate(t, _star(P, B, alpha)).makespan == pytest.approx(want, rel=1e-12)


def test_foreign_sends_do_not_wait_for_the_receive(tmp_path):
    """Chakra semantics: a send starts when its own deps are done. Two ranks that each send
    first and then receive (a 2-rank ring) would deadlock as a rendezvous."""
    from netsim.formats.chakra import write_et

    for r in range(2):
        send = pb.Node(id=1, name="s", type=pb.COMM_SEND_NODE)
        send.attr.add(name="comm_dst").int64_val = 1 - r
        send.attr.add(name="comm_size").int64_val = 1000
        recv = pb.Node(id=2, name="r", type=pb.COMM_RECV_NODE, data_deps=[1])
        recv.attr.add(name="comm_src").int64_val = 1 - r
        recv.attr.add(name="comm_size").int64_val = 1000
        done = pb.Node(id=3, name="c", type=pb.COMP_NODE, data_deps=[2], duration_micros=5)
        write_et(str(tmp_path / f"x.{r}.et"), pb.GlobalMetadata(version="0.0.4"),
                 [send, recv, done])
    t = load_chakra(tmp_path)
    want = 2e-6 + 1000 / 1e9 + 5e-6   # both messages at once, one per link direction
    assert netsim.simulate(t, _star(2, 1e9, 1e-6)).makespan == pytest.approx(want, rel=1e-12)
