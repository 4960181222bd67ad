"""What ASTRA-sim reads in an exported Chakra file: collective sizes, the world group, FLOPs.

The files are decoded as Chakra's feeder decodes them (``ETFeederNode``'s constructor,
``src/feeder/et_feeder_node.cpp`` of github.com/mlcommons/chakra at commit 21585d8): each
attribute is taken from the one typed field the feeder reads for its name, so a value
written in another field reads as the feeder's default. Expected values come from:

* ASTRA-sim's ring (``Ring.cc`` of github.com/astra-sim/astra-sim at 518bd51): an
  ``All_Gather`` of ``data_size`` sends ``msg_size = data_size`` per step and ends with
  ``data_size * nodes_in_ring`` (comm_size: one rank's input); a ``Reduce_Scatter`` ends with
  ``data_size / nodes_in_ring`` (comm_size: the whole input). netsim's size is nccl-tests'
  whole buffer, so an allgather of 8 MB over 4 ranks is comm_size 2 MB and a reduce_scatter
  of 8 MB is comm_size 8 MB.
* ``Workload::extract_comm_group`` of ASTRA-sim before 8817510 accepts only ``""`` as the
  group of every rank; Chakra's converter writes no pg_name for it (read as ``""``).
* ``num_ops`` is an ``int64_val``; 3e9 FLOPs at 1e12 FLOP/s last 3 ms = 3000 us.
"""

import os
import subprocess
import sys

import pytest

pb = pytest.importorskip("netsim.formats.et_def_pb2", reason="Chakra traces need the protobuf package")

import netsim  # noqa: E402
from netsim.formats.chakra import load_chakra, read_et, save_chakra, write_et  # noqa: E402

# (attribute name, the field Chakra's feeder reads it from, its default)
_FEEDER_FIELDS = {"num_ops": ("int64_val", 0), "tensor_size": ("uint64_val", 0),
                  "comm_type": ("int64_val", 0), "comm_size": ("int64_val", 0),
                  "pg_name": ("string_val", "")}
_ALLGATHER, _REDUCE_SCATTER = 2, 7    # CollectiveCommType of et_def.proto


def _as_feeder_reads(node):
    """The fields ETFeederNode keeps for ``node``: runtime (duration_micros) and the above."""
    out = {name: default for name, (_, default) in _FEEDER_FIELDS.items()}
    out["runtime"] = node.duration_micros
    for a in node.attr:
        if a.name in _FEEDER_FIELDS:
            field = _FEEDER_FIELDS[a.name][0]
            out[a.name] = getattr(a, field) if a.WhichOneof("value") == field else \
                _FEEDER_FIELDS[a.name][1]
    return out


def _export(trace, d):
    save_chakra(trace, d)
    return [[_as_feeder_reads(n) for n in read_et(os.path.join(d, f"chakra.{r}.et"))[1]]
            for r in range(trace.ranks)]


def _foreign(d, per_rank):
    """A file set another tool wrote: no netsim attributes, nodes given per rank."""
    os.makedirs(d, exist_ok=True)
    for r, nodes in enumerate(per_rank):
        write_et(os.path.join(d, f"et.{r}.et"), pb.GlobalMetadata(version="0.0.4"), nodes)


def _coll(node_id, comm_type, size, pg=None):
    attrs = [pb.AttributeProto(name="comm_type", int64_val=comm_type),
             pb.AttributeProto(name="comm_size", int64_val=size)]
    if pg is not None:
        attrs.append(pb.AttributeProto(name="pg_name", string_val=pg))
    return pb.Node(id=node_id, name="ncclKernel", type=pb.COMM_COLL_NODE, attr=attrs)


def test_allgather_comm_size_is_each_ranks_input_reduce_scatter_the_whole_input(tmp_path):
    b = netsim.TraceBuilder(4)
    g = b.collective("allgather", [0, 1, 2, 3], 8e6)
    b.collective("reduce_scatter", [0, 1, 2, 3], 8e6, deps=[g])
    trace = b.build()
    for nodes in _export(trace, str(tmp_path)):
        assert [(n["comm_type"], n["comm_size"]) for n in nodes] == [
            (_ALLGATHER, 2_000_000), (_REDUCE_SCATTER, 8_000_000)]
    back = load_chakra(str(tmp_path))
    assert back.size.tolist() == [8e6, 8e6]


def test_a_foreign_allgather_is_read_as_its_group_times_comm_size(tmp_path):
    _foreign(str(tmp_path), [[_coll(1, _ALLGATHER, 1_000_000), _coll(2, _REDUCE_SCATTER, 4096)]
                             for _ in range(4)])
    t = load_chakra(str(tmp_path))
    assert t.size.tolist() == [4e6, 4096.0]


def test_the_world_group_is_written_empty_and_both_names_are_read(tmp_path):
    b = netsim.TraceBuilder(2)
    b.collective("allreduce", [0, 1], 1e6)
    for nodes in _export(b.build(), str(tmp_path / "out")):
        assert [n["pg_name"] for n in nodes] == [""]
    # rank 0 names the world "0" (ASTRA-sim from 8817510), rank 1 leaves it out (the converter)
    _foreign(str(tmp_path / "in"), [[_coll(1, 0, 1000, pg="0")], [_coll(1, 0, 1000)]])
    t = load_chakra(str(tmp_path / "in"))
    assert t.num_ops == 1 and t.group(0).tolist() == [0, 1]


def test_compute_in_flops_gets_num_ops_and_a_duration_from_the_device_rate(tmp_path):
    b = netsim.TraceBuilder(2, metadata={"device_flops": 1e12})
    c = b.compute(0, flops=3e9)
    b.message(0, 1, 64, deps=[c])
    nodes = _export(b.build(), str(tmp_path))[0]
    assert (nodes[0]["num_ops"], nodes[0]["runtime"]) == (3_000_000_000, 3000)
    back = load_chakra(str(tmp_path))
    assert back.flops[0] == 3e9 and back.compute_seconds()[0] == pytest.approx(3e-3)


def test_compute_in_flops_without_a_rate_warns_and_keeps_num_ops(tmp_path):
    b = netsim.TraceBuilder(1)
    b.compute(0, flops=3e9)
    with pytest.warns(UserWarning, match=r"1 compute op\(s\) are given in FLOPs and the trace "
                                         r"has no device_flops"):
        nodes = _export(b.build(), str(tmp_path))[0]
    assert (nodes[0]["num_ops"], nodes[0]["runtime"]) == (3_000_000_000, 0)
    assert load_chakra(str(tmp_path)).flops.tolist() == [3e9]


def test_a_foreign_node_of_num_ops_and_no_duration_is_read_as_flops(tmp_path):
    node = pb.Node(id=1, name="gemm", type=pb.COMP_NODE,
                   attr=[pb.AttributeProto(name="num_ops", int64_val=5_000_000)])
    timed = pb.Node(id=2, name="relu", type=pb.COMP_NODE, duration_micros=7,
                    attr=[pb.AttributeProto(name="num_ops", int64_val=10)])
    _foreign(str(tmp_path), [[node, timed]])
    t = load_chakra(str(tmp_path))
    assert t.flops.tolist() == [5e6, 0.0]
    assert t.duration[1] == pytest.approx(7e-6)


def test_the_export_command_says_one_warning_line(tmp_path):
    b = netsim.TraceBuilder(1)
    b.compute(0, flops=3e9)
    b.compute(0, flops=1e9)
    netsim.save_trace(b.build(), str(tmp_path / "t.npz"))
    env = {**os.environ, "PYTHONPATH": os.path.dirname(os.path.dirname(os.path.abspath(__file__)))}
    run = subprocess.run([sys.executable, "-m", "studies.cli.entry", "export", "chakra",
                          str(tmp_path / "t.npz"), "-o", str(tmp_path / "et"), "--quiet"],
                         capture_output=True, text=True, env=env)
    assert run.returncode == 0, run.stderr
    lines = run.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("warning: 2 compute op(s) are given in FLOPs")


def test_a_dependency_named_twice_is_written_once(tmp_path):
    """Chakra's feeders release a node when as many parents as its ``data_deps`` entries have
    finished (a set would not count twice), so a repeated entry leaves the node waiting for
    ever: ASTRA-sim ends with no rank finished. A netsim trace may name a dependency twice
    (the transformer's sequence-parallel allgather waits for the reduce-scatter once per
    member); each node lists it once."""
    b = netsim.TraceBuilder(2)
    rs = b.collective("reduce_scatter", [0, 1], 64e3)
    ag = b.collective("allgather", [0, 1], 64e3, deps=[rs, rs])
    c = b.compute(0, seconds=1e-6, deps=[ag, ag])
    _ = b.message(0, 1, 8, deps=[c, c])
    trace = b.build()
    assert trace.deps(ag).tolist() == [rs, rs]          # the trace keeps both
    save_chakra(trace, tmp_path)
    for r in range(2):
        _, nodes = read_et(tmp_path / f"chakra.{r}.et")
        for node in nodes:
            assert len(node.data_deps) == len(set(node.data_deps)), (r, node.name)
        assert {n.id: list(n.data_deps) for n in nodes}[2 * ag] == [2 * rs]
