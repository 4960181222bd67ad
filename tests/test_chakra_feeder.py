"""Exported Chakra files as Chakra's own ET feeder reads them.

Chakra's C++ feeder (``src/feeder/et_feeder_node.cpp`` of github.com/mlcommons/chakra, commit
21585d8, which ASTRA-sim links) reads ``comm_src``, ``comm_dst`` and ``comm_tag`` as
``int32_val`` and ``comm_type``, ``comm_size`` as ``int64_val``, and follows ``data_deps`` only
(``et_feeder.cpp``: ``freeChildrenNodes``). The first tests check those field types and the
dependency counts with the protobuf descriptors alone; the last runs the feeder itself on every
exported file when ``NETSIM_CHAKRA_FEEDER`` names a ``chakra_feeder_dump`` built by
``tests/chakra_feeder/build.sh`` (skipped otherwise).
"""

import os
import subprocess

import pytest

pb = pytest.importorskip("netsim.formats.et_def_pb2", reason="Chakra traces need the protobuf package")

import netsim  # noqa: E402
from netsim.formats.chakra import read_et, save_chakra  # noqa: E402
from netsim.comm.collectives import ring_allreduce  # noqa: E402

FEEDER = os.environ.get("NETSIM_CHAKRA_FEEDER", "")
KINETO = os.path.join(os.path.dirname(__file__), "data", "kineto", "hta_a100_ddp_rank0.json.gz")
P2P = (pb.COMM_SEND_NODE, pb.COMM_RECV_NODE)


def _ring():
    return ring_allreduce(8, 64e6)


def _parameter_server():
    from workloads.paradigms import ps_sync

    return ps_sync.run(epochs=1).trace


def _profile():
    from netsim.formats.kineto.load import load_kineto

    return load_kineto(KINETO, symmetric=True, steps=[5])


TRACES = {"ring 8 x 64 MB": _ring, "parameter server": _parameter_server,
          "imported profile": _profile}


def _value(node, name):
    """(oneof field, value) of attribute ``name``, None if absent."""
    for a in node.attr:
        if a.name == name:
            kind = a.WhichOneof("value")
            return kind, getattr(a, kind)
    return None


def _exported(trace, tmp_path):
    d = tmp_path / "et"
    save_chakra(trace, d)
    return [read_et(d / f"chakra.{r}.et")[1] for r in range(trace.ranks)], d


@pytest.mark.parametrize("name", TRACES)
def test_fields_have_the_feeders_types_and_deps_are_data_deps(name, tmp_path):
    trace = TRACES[name]()
    per_rank, _ = _exported(trace, tmp_path)
    deps_written = 0
    for r, nodes in enumerate(per_rank):
        for n in nodes:
            assert not n.ctrl_deps
            deps_written += len(n.data_deps)
            kind = pb.NodeType.Name(n.type)
            assert n.name == kind or n.name.startswith(kind + "_")   # the timeline visualiser
            if n.type in P2P:
                op = n.id // 2    # save_chakra's ids: 2 i send, 2 i + 1 receive
                src, dst = int(trace.rank[op]), int(trace.peer[op])
                assert _value(n, "comm_src") == ("int32_val", src)
                assert _value(n, "comm_dst") == ("int32_val", dst)
                assert _value(n, "comm_tag") == ("int32_val", op)
                assert r == (src if n.type == pb.COMM_SEND_NODE else dst)
                assert _value(n, "comm_size") == ("int64_val", round(trace.size[op]))
            if n.type == pb.COMM_COLL_NODE:
                assert _value(n, "comm_type")[0] == "int64_val"
                assert _value(n, "comm_size")[0] == "int64_val"
            if n.type == pb.COMP_NODE:
                op = n.id // 2
                if trace.flops[op]:   # given in FLOPs: num_ops, ASTRA-sim's roofline input
                    assert _value(n, "num_ops") == ("int64_val", round(trace.flops[op]))
                else:
                    assert n.duration_micros == round(trace.duration[op] * 1e6)
    # Every netsim dependency is written once, on the rank of the op that waits, except a
    # collective's, which each member that shares a rank with the dependency waits for.
    expected = 0
    for i in range(trace.num_ops):
        if trace.is_collective[i]:
            members = set(trace.group(i).tolist())
            for d in trace.deps(i):
                touched = {int(trace.rank[d])} | ({int(trace.peer[d])} if trace.is_message[d]
                                                  else set())
                if trace.is_collective[d]:
                    touched = set(trace.group(int(d)).tolist())
                expected += len(touched & members)
        else:
            expected += len(trace.deps(i))
    assert deps_written == expected


def _waves(nodes):
    """Each node's wave when issued by data_deps alone: 0 without deps, else 1 + the latest."""
    G = netsim.nx.DiGraph()
    G.add_nodes_from(n.id for n in nodes)
    G.add_edges_from((d, n.id) for n in nodes for d in n.data_deps)
    wave = {}
    for v in netsim.nx.topological_sort(G):
        wave[v] = 1 + max((wave[u] for u in G.predecessors(v)), default=-1)
    return wave


def test_the_ring_is_issued_one_step_at_a_time(tmp_path):
    """Ring allreduce over 8 ranks: 2 (P - 1) = 14 sends per rank, each after the previous
    step's receive, so a feeder following data_deps issues them in 14 waves (all at once when
    dependencies were ctrl_deps)."""
    per_rank, _ = _exported(_ring(), tmp_path)
    for nodes in per_rank:
        wave = _waves(nodes)
        sends = sorted(wave[n.id] for n in nodes if n.type == pb.COMM_SEND_NODE)
        assert len(sends) == 14 and len(set(sends)) == 14


@pytest.mark.skipif(not os.path.isfile(FEEDER), reason="set NETSIM_CHAKRA_FEEDER to a "
                    "chakra_feeder_dump built by tests/chakra_feeder/build.sh")
@pytest.mark.parametrize("name", TRACES)
def test_chakras_own_feeder_reads_every_exported_file(name, tmp_path):
    trace = TRACES[name]()
    per_rank, d = _exported(trace, tmp_path)
    for r, nodes in enumerate(per_rank):
        out = subprocess.run([FEEDER, str(d / f"chakra.{r}.et")], capture_output=True,
                             text=True, check=True).stdout.splitlines()
        assert out[-1] == "stuck 0"
        issued = {int(line.split()[1]): line.split() for line in out[:-1]}
        assert sorted(issued) == sorted(n.id for n in nodes)    # every node, once
        wave = _waves(nodes)
        for n in nodes:
            w, _, kind, src, dst, tag, size, _micros = issued[n.id][:8]
            assert (int(w), int(kind)) == (wave[n.id], n.type)
            if n.type in P2P:
                op = n.id // 2
                assert (int(src), int(dst), int(tag)) == (trace.rank[op], trace.peer[op], op)
                assert int(size) == round(trace.size[op])


def test_process_groups_are_astra_sims_integers_with_a_group_file(tmp_path):
    """ASTRA-sim reads pg_name with std::stoi: "" is every rank (also "0" from commit 8817510
    on), any other id must be in the --comm-group-configuration file
    (Workload::extract_comm_group)."""
    import json

    from netsim.formats.chakra import load_chakra

    b = netsim.TraceBuilder(4)
    a = b.collective("allreduce", [0, 1, 2, 3], 4e6)
    s = b.collective("allreduce", [1, 3], 1e6, deps=[a])
    b.collective("allgather", [0, 2], 2e6, deps=[a])
    b.collective("allreduce", [1, 3], 1e6, deps=[s])
    trace = b.build()
    per_rank, d = _exported(trace, tmp_path)
    pg = {r: [_value(n, "pg_name")[1] for n in nodes] for r, nodes in enumerate(per_rank)}
    assert pg == {0: ["", "2"], 1: ["", "1", "1"], 2: ["", "2"], 3: ["", "1", "1"]}
    assert json.load(open(d / "chakra.comm_group.json")) == {"1": [1, 3], "2": [0, 2]}
    back = load_chakra(d)
    calls = [sorted((tuple(t.group(i).tolist()), float(t.size[i])) for i in range(t.num_ops))
             for t in (back, trace)]
    assert calls[0] == calls[1]
