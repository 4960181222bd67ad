"""Chakra execution traces: round trips, a file written from the schema by hand, bad input."""

import importlib
import inspect
import os
import tempfile

import numpy as np
import pytest
from hypothesis import given, settings

pytest.importorskip("google.protobuf", reason="Chakra traces need the protobuf package")

import netsim  # noqa: E402
from netsim.comm.library import mpich_wire  # noqa: E402
from netsim.comm import collectives  # noqa: E402
from netsim.formats import et_def_pb2 as pb  # noqa: E402
from netsim.formats.chakra import load_chakra, read_et, save_chakra, write_et  # noqa: E402
from netsim.errors import TraceError  # noqa: E402
from strategies import cases  # noqa: E402

DATA = os.path.join(os.path.dirname(__file__), "data", "chakra")
GENERATORS = [g for g in collectives.__all__ if g != "payloads"]
PARADIGMS = ["single", "ps_sync", "ps_async", "allreduce", "admm", "model_averaging", "pf", "dgc",
             "slimdp", "ringtmp", "ps_partitioned"]


def _star(n, bandwidth=1.25e9, latency=1e-6):
    G = netsim.nx.Graph()
    G.add_node("switch", kind="switch")
    for i in range(n):
        G.add_node(i, kind="host")
        G.add_edge(i, "switch", bandwidth=bandwidth, latency=latency)
    return G


def _round_trip(trace, tmp_path):
    d = tmp_path / "et"
    save_chakra(trace, d)
    back = load_chakra(d)
    G = _star(trace.ranks)
    return netsim.simulate(trace, G, device_flops=1e9), netsim.simulate(back, G, device_flops=1e9), back


@pytest.mark.parametrize("name", GENERATORS)
@pytest.mark.parametrize("P", [5, 8])
def test_round_trip_every_collective(name, P, tmp_path):
    takes = inspect.signature(getattr(collectives, name)).parameters
    options = {"gamma": 1e-10} if "gamma" in takes else {}  # reductions as compute ops
    trace = getattr(collectives, name)(P, 3e6 + 1 / 3, **options)  # fractional chunk bytes
    a, b, back = _round_trip(trace, tmp_path)
    assert b.makespan == pytest.approx(a.makespan, rel=1e-9)
    assert back.num_ops == trace.num_ops
    assert sorted(back.size[back.is_message]) == sorted(trace.size[trace.is_message])


@pytest.mark.parametrize("paradigm", PARADIGMS)
def test_round_trip_every_recorded_paradigm(paradigm, tmp_path):
    module = importlib.import_module(f"workloads.paradigms.{paradigm}")
    trace = module.run(epochs=1).trace
    a, b, back = _round_trip(trace, tmp_path)
    assert b.makespan == pytest.approx(a.makespan, rel=1e-9)
    assert np.allclose(b.iteration_times, a.iteration_times, rtol=1e-9, atol=0)
    assert back.metadata["paradigm"] == trace.metadata["paradigm"]
    assert back.num_messages == trace.num_messages
    assert sorted(back.size[back.is_message]) == sorted(trace.size[trace.is_message])


def _node(nid, kind, name="", deps=(), data=(), micros=0, **attrs):
    n = pb.Node(id=nid, name=name, type=kind, ctrl_deps=list(deps), data_deps=list(data),
                duration_micros=micros)
    for key, value in attrs.items():
        a = n.attr.add(name=key)
        if isinstance(value, list):
            a.int64_list.values.extend(value)
        elif isinstance(value, str):
            a.string_val = value
        else:
            a.int64_val = value
    return n


def _write_ranks(d, per_rank):
    os.makedirs(d, exist_ok=True)
    for r, nodes in enumerate(per_rank):
        write_et(os.path.join(d, f"job.{r}.et"), pb.GlobalMetadata(version="0.0.4"), nodes)


def test_file_written_from_the_schema_by_hand(tmp_path):
    """Two ranks: compute, a 1 MB send 0 -> 1, then an 8 MB allreduce over both."""
    d = str(tmp_path / "hand")
    _write_ranks(d, [
        [_node(10, pb.COMP_NODE, "fwd", micros=500),
         _node(11, pb.COMM_SEND_NODE, "act", data=[10], comm_dst=1, comm_size=1_000_000, comm_tag=7),
         _node(12, pb.COMM_COLL_NODE, "grads", deps=[11], comm_type=pb.ALL_REDUCE,
               comm_size=8_000_000, pg_name="0")],
        [_node(1, pb.COMM_RECV_NODE, "act", comm_src=0, comm_size=1_000_000, comm_tag=7),
         _node(2, pb.COMP_NODE, "bwd", data=[1], micros=300),
         _node(3, pb.COMM_COLL_NODE, "grads", deps=[2], comm_type=pb.ALL_REDUCE,
               comm_size=8_000_000, pg_name="0")],
    ])
    t = load_chakra(d)
    assert t.ranks == 2
    # 1 send + one allreduce op; MPICH's ring over 2 ranks: 2 (P - 1) P = 4 messages of 4 MB.
    assert t.num_messages == 1 and t.num_collectives == 1
    wire = mpich_wire(t)
    assert wire.num_messages == 5 and wire.total_bytes == 1e6 + 4 * 4e6
    # On a 1 GB/s star with 1 us links (2 us a path): 500 us fwd, the send (2 us + 1 ms),
    # 300 us bwd, then the allreduce: 2 steps of 2 us + 4 MB / 1 GB/s.
    G = _star(2, bandwidth=1e9, latency=1e-6)
    expected = 500e-6 + (2e-6 + 1e-3) + 300e-6 + 2 * (2e-6 + 4e-3)
    assert netsim.simulate(t, G).makespan == pytest.approx(expected, rel=1e-12)
    assert t.metadata["chakra_version"] == "0.0.4"


def _converter_graph(nodes):
    """The rule of netsim.formats.chakra's docstring, worked independently: data_deps always, a
    ctrl_deps entry unless its node is outside the file or the edge closes a cycle (its head
    reaches its tail)."""
    ids = {n.id for n in nodes}
    G = netsim.nx.DiGraph()
    G.add_nodes_from(ids)
    G.add_edges_from((d, n.id) for n in nodes for d in n.data_deps)
    ctrl = [(d, n.id) for n in nodes for d in n.ctrl_deps if d in ids and d not in n.data_deps]
    G.add_edges_from(ctrl)
    on_cycle = [(u, v) for u, v in ctrl if netsim.nx.has_path(G, v, u)]
    G.remove_edges_from(on_cycle)
    return G, on_cycle


def test_pytorch_converters_own_trace_imports_under_the_documented_rule():
    """Chakra's PyTorch-converted test trace (tests/data/chakra/README.md), whole: its ctrl_deps
    (the call-tree parent) point outside the file 1277 times and close cycles with data_deps;
    netsim drops exactly those, says so, and replays the remaining graph's critical path."""
    path = os.path.join(DATA, "pytorch_converter", "chakra.0.et.gz")
    _, nodes = read_et(path)
    ids = {n.id for n in nodes}
    outside = sum(d not in ids for n in nodes for d in {*n.ctrl_deps, *n.data_deps})
    assert outside == 1277 and all(d in ids for n in nodes for d in n.data_deps)
    G, on_cycle = _converter_graph(nodes)
    assert netsim.nx.is_directed_acyclic_graph(G) and len(on_cycle) > 0
    t = load_chakra(os.path.dirname(path))
    assert t.metadata["chakra_dropped_deps"] == {"outside": 1277, "cycle": len(on_cycle)}
    assert t.num_ops == len(nodes)
    # One rank: a collective moves nothing, so the makespan is the longest path of compute
    # durations (GPU collective kernels weigh 0; the host-side c10d calls their duration).
    pb_coll = [n for n in nodes if n.type == pb.COMM_COLL_NODE]
    kernels = {n.id for n in pb_coll if not any(a.name == "is_cpu_op" and a.bool_val
                                                for a in n.attr)}
    assert t.num_collectives == len(kernels) == 7
    weight = {n.id: 0 if n.id in kernels else n.duration_micros * 1e-6 for n in nodes}
    longest = {}
    for v in netsim.nx.topological_sort(G):
        longest[v] = weight[v] + max((longest[u] for u in G.predecessors(v)), default=0.0)
    one = netsim.nx.Graph()
    one.add_node(0, kind="host")
    assert netsim.simulate(t, one).makespan == pytest.approx(max(longest.values()), rel=1e-12)


def test_cycles_of_data_deps_are_refused_naming_the_nodes(tmp_path):
    d = str(tmp_path / "cyc")
    _write_ranks(d, [[_node(1, pb.COMP_NODE, data=[3], micros=1),
                      _node(2, pb.COMP_NODE, data=[1], micros=1),
                      _node(3, pb.COMP_NODE, data=[2], micros=1),
                      _node(4, pb.COMP_NODE, micros=1)]])
    with pytest.raises(TraceError, match=r"job.0.et: dependency cycle among nodes \[1, 2, 3\] "
                                         r"\(data_deps alone\)"):
        load_chakra(d)


def test_a_ctrl_dependency_closing_a_cycle_or_leaving_the_file_is_dropped(tmp_path):
    """Node 2 runs 1 ms after node 1 (data); node 1's ctrl_deps on 2 closes a cycle and its
    ctrl_deps on 99 leaves the file: both dropped, so 1 then 2 then 3 (ctrl on 2) in 3 ms."""
    d = str(tmp_path / "ctrl")
    _write_ranks(d, [[_node(1, pb.COMP_NODE, deps=[2, 99], micros=1000),
                      _node(2, pb.COMP_NODE, data=[1], micros=1000),
                      _node(3, pb.COMP_NODE, deps=[2], micros=1000)]])
    t = load_chakra(d)
    assert t.metadata["chakra_dropped_deps"] == {"outside": 1, "cycle": 1}
    one = netsim.nx.Graph()
    one.add_node(0, kind="host")
    assert netsim.simulate(t, one).makespan == pytest.approx(3e-3, rel=1e-12)


def test_unmatched_send_missing_rank_and_truncation(tmp_path):
    d = str(tmp_path / "send")
    _write_ranks(d, [[_node(1, pb.COMM_SEND_NODE, comm_dst=1, comm_size=10, comm_tag=3)],
                     [_node(1, pb.COMP_NODE, micros=1)]])
    with pytest.raises(TraceError, match=r"message \(0, 1, 3, 0\) 0->1 \(rank 0, record 0\) "
                                         r"has no matching recv on rank 1"):
        load_chakra(d)
    os.remove(os.path.join(d, "job.0.et"))
    _write_ranks(str(tmp_path / "gap"), [[_node(1, pb.COMP_NODE, micros=1)]] * 3)
    os.remove(str(tmp_path / "gap" / "job.1.et"))
    with pytest.raises(TraceError, match=r"missing rank file for rank 1 \(have \[0, 2\]\)"):
        load_chakra(str(tmp_path / "gap"))
    p = tmp_path / "gap" / "job.0.et"
    raw = p.read_bytes()
    p.write_bytes(raw[:-1])
    with pytest.raises(TraceError, match=r"job.0.et: message 1 declares \d+ bytes but only"):
        read_et(str(p))


def test_export_refuses_a_dependency_chakra_cannot_express(tmp_path):
    b = netsim.TraceBuilder(2)
    c = b.compute(0, seconds=1e-3)
    b.compute(1, seconds=1e-3, deps=[c])
    with pytest.raises(TraceError, match=r"op 1 on rank 1 depends on op 0, which does not touch "
                                         r"rank 1"):
        save_chakra(b.build(), tmp_path / "x")


def test_imported_profile_round_trips(tmp_path):
    from netsim.formats.kineto.load import load_kineto

    path = os.path.join(os.path.dirname(__file__), "data", "kineto", "hta_a100_ddp_rank0.json.gz")
    trace = load_kineto(path, symmetric=True, steps=[5])
    a, b, back = _round_trip(trace, tmp_path)
    assert b.makespan == pytest.approx(a.makespan, rel=1e-9)
    assert back.metadata["measured_step_times"] == trace.metadata["measured_step_times"]


def _expressible(trace):
    """Every dependency joins two ops that share a rank (what a per-rank Chakra graph holds)."""
    def touches(op):
        return {int(trace.rank[op])} | ({int(trace.peer[op])} if trace.is_message[op] else set())
    return all(touches(i) & touches(int(d)) for i in range(trace.num_ops) for d in trace.deps(i))


@settings(deadline=None)
@given(cases())
def test_round_trip_property_on_random_traces(case):
    """A random DAG on a random graph: export then import replays to the same times, or the
    export is refused because some dependency joins ops on different ranks."""
    G, trace = case
    with tempfile.TemporaryDirectory() as d:
        if not _expressible(trace):
            with pytest.raises(TraceError, match="Chakra cannot express it"):
                save_chakra(trace, d)
            return
        save_chakra(trace, d)
        back = load_chakra(d)
    a, b = netsim.simulate(trace, G), netsim.simulate(back, G)
    assert b.makespan == pytest.approx(a.makespan, rel=1e-9, abs=1e-15)
    assert np.allclose(b.iteration_end, a.iteration_end, rtol=1e-9, atol=1e-15)
