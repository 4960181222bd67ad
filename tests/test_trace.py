"""Trace format: columns, validation, JSON and npz round trips, composition."""

import json

import numpy as np
import pytest

from netsim import COMPUTE, MESSAGE, Trace, TraceBuilder, TraceError, concat, load_trace, repeat, save_trace
from netsim.trace.core import deps_csr
from netsim.trace.ops import terminal_ops


def sample():
    b = TraceBuilder(3, metadata={"paradigm": "demo", "seed": 7})
    c = b.compute(0, seconds=1e-3, tag="fwd")
    f = b.compute(1, flops=2e9, tag="fwd", iteration=1)
    m = b.message(0, 1, 4096, deps=[c], tag="push")
    b.message(1, 2, 0, deps=[m, f], iteration=1)
    return b.build()


def same(a, b):
    for col in ("kind", "rank", "peer", "size", "duration", "flops", "iteration", "tag",
                "dep_ptr", "dep_idx"):
        np.testing.assert_array_equal(getattr(a, col), getattr(b, col))
    assert a.ranks == b.ranks and a.tags == b.tags


@pytest.mark.parametrize("ext", ["json", "npz"])
def test_round_trip(tmp_path, ext):
    t = sample()
    p = tmp_path / f"t.{ext}"
    save_trace(t, p)
    u = load_trace(p)
    same(t, u)
    assert u.metadata["paradigm"] == "demo" and u.metadata["seed"] == 7
    assert u.metadata["netsim_version"]


def test_columns_are_numpy_and_counts():
    t = sample()
    assert t.num_ops == 4 and t.num_messages == 2 and t.total_bytes == 4096
    assert t.num_iterations == 2
    # The documented dtypes (a wrong one would overflow ranks or tags, or lose bytes).
    dtypes = {"kind": np.uint8, "rank": np.int32, "peer": np.int32, "size": np.float64,
              "duration": np.float64, "flops": np.float64, "iteration": np.int32,
              "tag": np.int16, "dep_ptr": np.int64, "dep_idx": np.int64}
    for col, dtype in dtypes.items():
        assert getattr(t, col).dtype == dtype, col
    # The builder's dependency lists in CSR form: op 2 waits for 0, op 3 for 2 and 1.
    assert t.dep_ptr.tolist() == [0, 0, 0, 1, 3] and t.dep_idx.tolist() == [0, 2, 1]
    assert t.peer.tolist() == [-1, -1, 1, 2] and t.tag.tolist() == [0, 0, 1, -1]
    assert np.isnan(t.duration[1]) and t.flops.tolist() == [0, 2e9, 0, 0]
    assert t.kind.tolist() == [COMPUTE, COMPUTE, MESSAGE, MESSAGE]


def test_json_ids_may_be_arbitrary(tmp_path):
    doc = {"ranks": 2, "ops": [
        {"id": 10, "type": "compute", "rank": 0, "seconds": 1.0},
        {"id": 3, "type": "message", "src": 0, "dst": 1, "bytes": 5, "deps": [10]}]}
    p = tmp_path / "t.json"
    p.write_text(json.dumps(doc))
    assert load_trace(p).deps(1).tolist() == [0]


@pytest.mark.parametrize("op, message", [
    ({"type": "message", "src": 0, "dst": 5, "bytes": 1}, "unknown rank 5"),
    ({"type": "message", "src": 0, "dst": 1, "bytes": -1}, "bytes must be finite and >= 0, got -1"),
    ({"type": "message", "src": 0, "dst": 1, "bytes": float("nan")}, "bytes must be finite"),
    ({"type": "message", "src": 0, "dst": 1, "bytes": 1, "deps": [99]}, "depends on missing op 99"),
    ({"type": "compute", "rank": 0, "seconds": float("nan")}, "seconds must be finite"),
    ({"type": "compute", "rank": 0}, "needs 'seconds' or 'flops'"),
    ({"type": "send", "rank": 0}, "type must be 'message', 'compute' or 'collective'"),
    ({"type": "message", "src": 0, "dst": 1, "bytes": 1, "colour": 2}, "unknown keys"),
])
def test_bad_json_ops_are_named(tmp_path, op, message):
    p = tmp_path / "t.json"
    p.write_text(json.dumps({"ranks": 2, "ops": [{"id": 4, **op}]}))
    with pytest.raises(TraceError, match="op 4") as exc:
        load_trace(p)
    assert message in str(exc.value)


@pytest.mark.parametrize("kwargs, message", [
    (dict(rank=[0, 7], peer=[1, -1]), "op 1 names unknown rank"),
    (dict(rank=[0, 0], peer=[9, -1]), "op 0 sends to unknown rank"),
    (dict(rank=[0, 0], peer=[1, -1], size=[-5.0, 0]), "op 0 has invalid bytes"),
    (dict(rank=[0, 0], peer=[1, -1], size=[np.nan, 0]), "op 0 has NaN bytes"),
    (dict(rank=[0, 0], peer=[1, -1], duration=[0, np.inf]), "op 1 has invalid duration"),
    (dict(rank=[0, 0], peer=[1, -1], dep_ptr=[0, 0, 1], dep_idx=[5]), "op 1 depends on missing op 5"),
    (dict(rank=[0, 0], peer=[1, -1], dep_ptr=[0, 1, 2], dep_idx=[1, 0]), "dependency cycle"),
    (dict(rank=[0, 0], peer=[1, -1], dep_ptr=[0, 1, 1], dep_idx=[0]), "op 0 depends on itself"),
    (dict(rank=[1, 0], peer=[1, -1]), "op 0 is a message from a rank to itself, rank: 1"),
    (dict(rank=[0, 0], peer=[1, -1], size=[2.2e-313, 0]), "op 0 has a size between 0 and 1 byte"),
    (dict(rank=[0, 0], peer=[1, -1], size=[0.999, 0]), "op 0 has a size between 0 and 1 byte"),
])
def test_bad_columns_raise_trace_error(kwargs, message):
    with pytest.raises(TraceError, match=message):
        Trace(2, kind=[MESSAGE, COMPUTE], **kwargs)


def test_zero_and_one_byte_messages_stay_valid():
    t = Trace(2, kind=[MESSAGE, MESSAGE], rank=[0, 1], peer=[1, 0], size=[0.0, 1.0])
    assert t.total_bytes == 1.0


def test_cycle_is_shown():
    b = TraceBuilder(2)
    b.message(0, 1, 1, deps=[2])
    b.message(1, 0, 1, deps=[0])
    b.compute(0, seconds=1, deps=[1])
    with pytest.raises(TraceError, match=r"cycle among 3 ops: .*0.*<-.*<-"):
        b.build()


@pytest.mark.parametrize("content", [b"", b"{", b"[]", b'{"ranks": 2}', b'{"ranks": 1e30, "ops": []}',
                                     b"[" * 100000 + b"]" * 100000, b"\xff\xfe"])
def test_corrupt_json_raises_trace_error(tmp_path, content):
    p = tmp_path / "t.json"
    p.write_bytes(content)
    with pytest.raises(TraceError):
        load_trace(p)


def test_truncated_npz_raises_trace_error(tmp_path):
    p = tmp_path / "t.npz"
    save_trace(sample(), p)
    data = p.read_bytes()
    for cut in (0, 10, len(data) // 2, len(data) - 5):
        q = tmp_path / f"cut{cut}.npz"
        q.write_bytes(data[:cut])
        with pytest.raises(TraceError):
            load_trace(q)
    with pytest.raises(TraceError, match="not found"):
        load_trace(tmp_path / "missing.npz")
    with pytest.raises(TraceError, match="unknown trace format"):
        load_trace(tmp_path / "t.txt")


def test_deps_csr_and_terminals():
    ptr, idx = deps_csr([-1, 0, 1], [-1, -1, 0])
    assert ptr.tolist() == [0, 0, 1, 3] and idx.tolist() == [0, 1, 0]
    # Rank 0 sends to 1, then 1 replies: the reply is the last op touching both ranks.
    b = TraceBuilder(2)
    a = b.message(0, 1, 1)
    b.message(1, 0, 1, deps=[a])
    ops, ranks = terminal_ops(b.build())
    assert sorted(zip(ranks.tolist(), ops.tolist())) == [(0, 1), (1, 1)]


def test_concat_and_repeat_chain_rank_by_rank():
    b = TraceBuilder(2)
    b.message(0, 1, 10, tag="a")
    one = b.build()
    b2 = TraceBuilder(2)
    b2.compute(1, seconds=1.0, tag="b")
    two = concat(one, b2.build(), iteration_offset=1)
    assert two.deps(1).tolist() == [0] and two.tags == ["a", "b"]
    assert two.iteration.tolist() == [0, 1]
    r = repeat(one, 4)
    assert r.num_messages == 4 and r.num_iterations == 4
    assert [r.deps(i).tolist() for i in range(4)] == [[], [0], [1], [2]]
    with pytest.raises(TraceError):
        repeat(one, 0)


def test_npz_bytes_are_identical_for_identical_traces(tmp_path):
    a, b = tmp_path / "a.npz", tmp_path / "b.npz"
    save_trace(sample(), a)
    save_trace(sample(), b)
    assert a.read_bytes() == b.read_bytes()


def test_npz_member_promising_more_than_it_holds_is_refused(tmp_path):
    import io
    import zipfile

    # A valid .npy header declaring 10^12 float64 values, followed by 8 bytes of data.
    buf = io.BytesIO()
    np.lib.format.write_array_header_1_0(buf, {"descr": "<f8", "fortran_order": False,
                                               "shape": (10**12,)})
    buf.write(b"\0" * 8)
    p = tmp_path / "huge.npz"
    with zipfile.ZipFile(p, "w") as zf:
        zf.writestr("size.npy", buf.getvalue())
    with pytest.raises(TraceError, match="declares 8000000000000 bytes"):
        load_trace(p)


def test_npz_with_pickled_objects_is_refused(tmp_path):
    p = tmp_path / "obj.npz"
    np.savez(p, header=np.array([{"a": 1}], dtype=object))
    with pytest.raises(TraceError, match="Python objects"):
        load_trace(p)


def test_moved_names_still_import_from_netsim_trace_with_a_warning():
    import netsim.trace
    from netsim.formats import tracefile
    from netsim.trace import ops

    for name in ("concat", "repeat", "terminal_ops"):  # the package's own names: no warning
        assert getattr(netsim.trace, name) is getattr(ops, name)
    for name in ("load_trace", "save_trace", "SCHEMA"):
        with pytest.warns(DeprecationWarning, match=f"moved to netsim.formats.tracefile.{name}"):
            assert getattr(netsim.trace, name) is getattr(tracefile, name)
    with pytest.raises(AttributeError, match="no attribute 'bogus'"):
        netsim.trace.bogus


def test_json_tags_keep_header_order_for_unused_names(tmp_path):
    # Tags are numbered by first use in the ops, then the header's unused names follow.
    doc = {"ranks": 2, "tags": ["pull", "push", "spare"], "ops": [
        {"type": "message", "src": 0, "dst": 1, "bytes": 1, "tag": "push"},
        {"type": "message", "src": 1, "dst": 0, "bytes": 1, "tag": "pull", "deps": [0]}]}
    p = tmp_path / "t.json"
    p.write_text(json.dumps(doc))
    t = load_trace(p)
    assert t.tags == ["push", "pull", "spare"]
    assert t.tag.tolist() == [0, 1]


def test_trace_is_immutable_and_with_metadata_derives_a_new_one():
    t = sample()
    for col in ("kind", "rank", "peer", "size", "duration", "flops", "iteration", "tag",
                "dep_ptr", "dep_idx"):
        with pytest.raises(ValueError, match="read-only"):
            getattr(t, col)[0] = 1
    with pytest.raises(TypeError):
        t.metadata["paradigm"] = "changed"
    u = t.with_metadata(paradigm="other", accuracy=0.9)
    assert t.metadata["paradigm"] == "demo" and "accuracy" not in t.metadata
    assert dict(u.metadata) == {"paradigm": "other", "seed": 7, "accuracy": 0.9}
    assert u.size is t.size and u.dep_idx is t.dep_idx and u.tags == t.tags
    with pytest.raises(TypeError):
        u.metadata["seed"] = 8


def test_columns_passed_in_stay_writable_for_their_owner():
    size = np.array([8.0, 0.0])
    t = Trace(2, kind=[MESSAGE, COMPUTE], rank=[0, 1], peer=[1, -1], size=size, duration=[0, 1])
    size[0] = 16.0  # the caller's array is not frozen by the trace that views it
    assert size.flags.writeable and not t.size.flags.writeable


def test_trace_pickles_with_its_metadata_and_stays_read_only():
    import pickle

    t = sample()
    u = pickle.loads(pickle.dumps(t))
    same(t, u)
    assert dict(u.metadata) == dict(t.metadata)
    with pytest.raises(TypeError):
        u.metadata["seed"] = 1
    with pytest.raises(ValueError, match="read-only"):
        u.size[0] = 1.0
