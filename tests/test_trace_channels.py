"""The trace's channel and priority columns: validation, composition, files, old schema."""

import json
import os

import numpy as np
import pytest

import netsim
from netsim import Trace, TraceBuilder, TraceError, concat, load_trace, repeat, save_trace
from netsim.formats.chakra import load_chakra, save_chakra
from netsim.comm.collectives import ring_allreduce
from netsim.formats.kineto.load import assemble
from netsim.formats.tracefile import SCHEMA

DATA = os.path.join(os.path.dirname(__file__), "data", "traces")
COLUMNS = ("kind", "rank", "peer", "size", "duration", "flops", "iteration", "tag", "channel",
           "priority", "dep_ptr", "dep_idx")


def same(a, b):
    for col in COLUMNS:
        np.testing.assert_array_equal(getattr(a, col), getattr(b, col), err_msg=col)
    assert a.ranks == b.ranks and a.tags == b.tags


def pathy():
    b = TraceBuilder(3)
    c = b.compute(0, seconds=1e-3)
    m = b.message(0, 1, 4096, deps=[c], channel=2, priority=-3, tag="push")
    b.message(1, 2, 10, deps=[m], priority=7)
    b.message(2, 0, 0, channel=1)
    return b.build()


def test_defaults_are_zero_and_builder_sets_them():
    t = pathy()
    assert t.channel.dtype == np.int16 and t.priority.dtype == np.int16
    assert t.channel.tolist() == [0, 2, 0, 1]
    assert t.priority.tolist() == [0, -3, 7, 0]
    plain = Trace(2, kind=[1], rank=[0], peer=[1], size=[8])
    assert plain.channel.tolist() == [0] and plain.priority.tolist() == [0]
    with pytest.raises(ValueError):
        t.channel[0] = 1  # read-only like every column


@pytest.mark.parametrize("column, values, match", [
    ("channel", [0, -1], "op 1 has a negative channel"),
    ("channel", [3, 0], "op 0 is a compute op with a channel"),
    ("priority", [1, 0], "op 0 is a compute op with a priority"),
    ("channel", [0, 40000], "column 'channel' has values outside int16"),
    ("priority", [0, 1.5], "op 1 has non-integer priority"),
])
def test_bad_values_are_refused_naming_the_op(column, values, match):
    with pytest.raises(TraceError, match=match):
        Trace(2, kind=[0, 1], rank=[0, 0], peer=[-1, 1], size=[0, 8], duration=[1.0, 0],
              **{column: values})


def test_join_and_repeat_keep_channel_and_priority():
    t = pathy()
    both = concat(t, ring_allreduce(3, 3e3))
    assert both.channel.tolist()[:4] == t.channel.tolist()
    assert not both.channel[4:].any() and not both.priority[4:].any()
    r = repeat(t, 3)
    assert r.channel.tolist() == t.channel.tolist() * 3
    assert r.priority.tolist() == t.priority.tolist() * 3


@pytest.mark.parametrize("ext", ["json", "npz"])
def test_files_round_trip_channels_and_priority(tmp_path, ext):
    t = pathy()
    p = tmp_path / f"t.{ext}"
    save_trace(t, p)
    same(t, load_trace(p))
    if ext == "json":
        doc = json.loads(p.read_text())
        assert doc["schema"] == SCHEMA == "netsim-trace/3"
        # Zero channel and priority are left out, so a channel-free trace reads as before.
        assert [sorted(set(op) & {"channel", "priority"}) for op in doc["ops"]] == \
            [[], ["channel", "priority"], ["priority"], ["channel"]]


def schema1_sample():
    """The trace tests/data/traces/make_schema1.py saved, built with today's code."""
    b = TraceBuilder(3, metadata={"device_flops": 1e12, "paradigm": "schema-1 sample"})
    c0 = b.compute(0, seconds=1e-3, tag="fwd")
    c1 = b.compute(1, flops=2e9, tag="fwd")
    m0 = b.message(0, 1, 1.5e6, deps=[c0], tag="push")
    m1 = b.message(1, 2, 123457, deps=[c1, m0], tag="push")
    b.message(2, 0, 0, deps=[m1], iteration=0)
    b.compute(2, seconds=2e-4, deps=[m1], tag="bwd")
    return repeat(concat(b.build(), ring_allreduce(3, 3e6), iteration_offset=0), 2)


@pytest.mark.parametrize("name", ["schema1.json", "schema1.npz"])
def test_schema_1_files_load_and_replay_identically(name):
    from topologies import star

    old = load_trace(os.path.join(DATA, name))
    new = schema1_sample()
    same(old, new)
    assert not old.channel.any() and not old.priority.any()
    G = star(3, bandwidth=1.25e9, latency=1e-6)
    makespan = netsim.simulate(old, G).makespan
    # Printed by make_schema1.py under schema 1 (see tests/data/traces/README.md).
    assert makespan == 0.011421531200000005
    assert makespan == netsim.simulate(new, G).makespan


def schema2_sample():
    """The trace tests/data/traces/make_schema2.py saved, built with today's code."""
    b = TraceBuilder(3, metadata={"device_flops": 1e12, "paradigm": "schema-2 sample"})
    c0 = b.compute(0, seconds=1e-3, tag="fwd")
    c1 = b.compute(1, flops=2e9, tag="fwd")
    m0 = b.message(0, 1, 1.5e6, deps=[c0], tag="push", channel=1, priority=2)
    m1 = b.message(1, 2, 123457, deps=[c1, m0], tag="push", priority=-1)
    b.message(2, 0, 0, deps=[m1], iteration=0, channel=2)
    b.compute(2, seconds=2e-4, deps=[m1], tag="bwd")
    return repeat(concat(b.build(), ring_allreduce(3, 3e6), iteration_offset=0), 2)


@pytest.mark.parametrize("name", ["schema2.json", "schema2.npz"])
def test_schema_2_files_load_and_replay_identically(name):
    from topologies import star

    old = load_trace(os.path.join(DATA, name))
    new = schema2_sample()
    same(old, new)
    assert old.channel.any() and old.priority.any() and not old.num_collectives
    G = star(3, bandwidth=1.25e9, latency=1e-6)
    for library in ("auto", "mpich", "nccl"):
        # Printed by make_schema2.py under schema 2 (see tests/data/traces/README.md).
        assert netsim.simulate(old, G, library=library).makespan == 0.011421531200000005
    assert netsim.simulate(new, G).makespan == 0.011421531200000005


def test_schema_1_refuses_the_new_columns_and_unknown_schemas_are_named(tmp_path):
    doc = json.load(open(os.path.join(DATA, "schema1.json")))
    doc["ops"][2]["channel"] = 1
    p = tmp_path / "bad.json"
    p.write_text(json.dumps(doc))
    with pytest.raises(TraceError, match="unknown keys \\['channel'\\]"):
        load_trace(p)
    doc["schema"] = "netsim-trace/9"
    p.write_text(json.dumps(doc))
    with pytest.raises(TraceError, match="unsupported schema 'netsim-trace/9'.*netsim-trace/1"):
        load_trace(p)


def test_json_compute_op_with_a_channel_is_refused(tmp_path):
    p = tmp_path / "c.json"
    p.write_text(json.dumps({"schema": SCHEMA, "ranks": 1, "ops": [
        {"type": "compute", "rank": 0, "seconds": 1, "priority": 2}]}))
    with pytest.raises(TraceError, match="compute op has no 'priority'"):
        load_trace(p)


def messages(t):
    m = t.is_message
    return sorted(zip(t.rank[m].tolist(), t.peer[m].tolist(), t.size[m].tolist(),
                      t.channel[m].tolist(), t.priority[m].tolist()))


def test_chakra_round_trip_keeps_channel_and_priority(tmp_path):
    t = pathy()
    save_chakra(t, tmp_path)
    back = load_chakra(tmp_path)
    assert messages(back) == messages(t)


def test_chakra_files_without_the_attributes_load_with_zeros(tmp_path):
    from netsim.formats.chakra import read_et

    save_chakra(ring_allreduce(3, 3e3), tmp_path)
    for r in range(3):
        _, nodes = read_et(os.path.join(tmp_path, f"chakra.{r}.et"))
        names = {a.name for node in nodes for a in node.attr}
        assert "comm_dst" in names and not names & {"netsim_channel", "netsim_priority"}
    t = load_chakra(tmp_path)
    assert t.num_messages == 12 and not t.channel.any() and not t.priority.any()


def test_assemble_takes_channel_and_priority_from_the_send_side():
    progs = [[{"op": "send", "key": "a", "peer": 1, "nbytes": 8, "channel": 3, "priority": 1}],
             [{"op": "recv", "key": "a", "peer": 0}]]
    t = assemble(progs)
    assert t.channel.tolist() == [3] and t.priority.tolist() == [1]
