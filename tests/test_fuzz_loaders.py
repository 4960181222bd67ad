"""Trace loaders under truncated, corrupted and adversarial files: TraceError, never a crash."""

import io
import json
import zipfile

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from netsim import TraceBuilder, TraceError, load_trace, save_trace


def valid_trace():
    b = TraceBuilder(3, metadata={"paradigm": "fuzz"})
    c = b.compute(0, seconds=1e-3, tag="fwd")
    m = b.message(0, 1, 4096, deps=[c], tag="push")
    b.message(1, 2, 8, deps=[m], iteration=1)
    b.compute(2, flops=1e9, deps=[m])
    return b.build()


@pytest.fixture(scope="module")
def originals(tmp_path_factory):
    d = tmp_path_factory.mktemp("orig")
    out = {}
    for ext in ("json", "npz"):
        p = d / f"t.{ext}"
        save_trace(valid_trace(), p)
        out[ext] = p.read_bytes()
    return out


COLUMNS = ("kind", "rank", "peer", "size", "duration", "flops", "iteration", "tag",
           "dep_ptr", "dep_idx")


def assert_round_trips(tmp_path, ext, t):
    """A trace the loader accepted saves and loads back unchanged."""
    p = tmp_path / f"again.{ext}"
    save_trace(t, p)
    u = load_trace(p)
    assert (u.ranks, u.tags) == (t.ranks, t.tags)
    for k in COLUMNS:
        np.testing.assert_array_equal(getattr(u, k), getattr(t, k), err_msg=k)


def load_bytes(tmp_path, ext, data):
    p = tmp_path / f"fuzz.{ext}"
    p.write_bytes(data)
    try:
        t = load_trace(p)
    except TraceError:
        return
    # A mutation may leave a valid trace; then it must be a real one that round-trips.
    assert_round_trips(tmp_path, ext, t)


settings_ = settings(suppress_health_check=[HealthCheck.function_scoped_fixture])


@settings_
@given(ext=st.sampled_from(["json", "npz"]), cut=st.floats(0, 1))
def test_truncated_files(tmp_path, originals, ext, cut):
    # Any strict prefix is unreadable: the JSON document ends with its closing "}" (no
    # trailing whitespace) and a zip's end-of-central-directory record is its last 22 bytes.
    data = originals[ext]
    assert ext == "npz" or data.endswith(b"}")
    head = data[:int(len(data) * cut)]
    p = tmp_path / f"cut.{ext}"
    p.write_bytes(head)
    if len(head) < len(data):
        with pytest.raises(TraceError):
            load_trace(p)
    else:
        assert_round_trips(tmp_path, ext, load_trace(p))


@settings_
@given(ext=st.sampled_from(["json", "npz"]),
       flips=st.lists(st.tuples(st.floats(0, 1), st.integers(0, 255)), min_size=1, max_size=8))
def test_corrupted_bytes(tmp_path, originals, ext, flips):
    data = bytearray(originals[ext])
    for where, value in flips:
        data[min(int(where * len(data)), len(data) - 1)] = value
    load_bytes(tmp_path, ext, bytes(data))


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=True) | st.text(max_size=5),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3),
    max_leaves=10)


@settings_
@given(key=st.sampled_from(["ranks", "ops", "tags", "metadata", "schema", "id", "type", "src", "dst",
                            "bytes", "seconds", "flops", "deps", "iteration", "tag", "rank"]),
       value=json_values, target=st.sampled_from(["top", "op"]))
def test_adversarial_json_values(tmp_path, originals, key, value, target):
    doc = json.loads(originals["json"])
    if target == "top":
        doc[key] = value
    else:
        doc["ops"][1][key] = value
    load_bytes(tmp_path, "json", json.dumps(doc).encode())


@settings_
@given(name=st.sampled_from(["kind", "rank", "peer", "size", "duration", "dep_ptr", "dep_idx", "header"]),
       dtype=st.sampled_from(["<i8", "<f8", "<u1", "<U3", "|b1"]),
       length=st.integers(0, 10))
def test_adversarial_npz_arrays(tmp_path, originals, name, dtype, length):
    with np.load(io.BytesIO(originals["npz"])) as z:
        arrays = {k: z[k] for k in z.files}
    arrays[name] = np.zeros(length, dtype=dtype)
    buf = io.BytesIO()
    np.savez(buf, **arrays)
    load_bytes(tmp_path, "npz", buf.getvalue())


def test_huge_declared_sizes_are_refused_fast(tmp_path):
    doc = {"ranks": 2, "ops": [{"id": 0, "type": "message", "src": 0, "dst": 1, "bytes": 1e308 * 10}]}
    p = tmp_path / "inf.json"
    p.write_text(json.dumps(doc))  # 1e309 -> Infinity in JSON
    with pytest.raises(TraceError):
        load_trace(p)
    doc = {"ranks": 10**30, "ops": []}
    p.write_text(json.dumps(doc))
    with pytest.raises(TraceError, match=r"ranks must be an integer in 1\.\.2147483647, got 10+$"):
        load_trace(p)
    # A zip member claiming 2^62 bytes uncompressed but holding a few.
    buf = io.BytesIO()
    np.lib.format.write_array_header_2_0(buf, {"descr": "<i8", "fortran_order": False,
                                               "shape": (2**59,)})
    p = tmp_path / "bomb.npz"
    with zipfile.ZipFile(p, "w") as zf:
        zf.writestr("kind.npy", buf.getvalue())
    with pytest.raises(TraceError, match="declares"):
        load_trace(p)
