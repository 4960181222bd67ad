"""The memory-lean paths of building and replaying give what the plain numpy idioms give."""

from types import SimpleNamespace

import numpy as np
import pytest

import netsim
import netsim.trace.core as trace_module
from netsim.errors import TraceError
from netsim.network.compiled import _unique_pairs
from netsim.trace.graph import successors


def test_unique_pairs_equal_numpys_unique():
    rng = np.random.default_rng(1)
    for _ in range(300):
        n, m = int(rng.integers(1, 40)), int(rng.integers(0, 400))
        src, dst = rng.integers(0, n, size=(2, m))
        keys, inv = np.unique(src * n + dst, return_inverse=True)
        got_keys, got_inv = _unique_pairs(src, dst, n)
        assert np.array_equal(got_keys, keys) and np.array_equal(got_inv, inv.reshape(-1))
        assert got_inv.dtype == np.int64


def test_successors_equal_the_owner_array_rule():
    rng = np.random.default_rng(2)
    for _ in range(300):
        n = int(rng.integers(1, 50))
        ptr = np.concatenate([[0], np.cumsum(rng.integers(0, 4, size=n))])
        idx = rng.integers(0, n, size=ptr[-1])
        owner = np.repeat(np.arange(n), np.diff(ptr))        # every entry's op, written out
        succ_ptr, succ = successors(SimpleNamespace(num_ops=n, dep_ptr=ptr, dep_idx=idx))
        assert np.array_equal(succ, owner[np.argsort(idx, kind="stable")])
        assert np.array_equal(succ_ptr, np.concatenate([[0], np.cumsum(np.bincount(idx, minlength=n))]))


def _chain(n, bad=None):
    b = netsim.TraceBuilder(1)
    ops = [b.compute(0, seconds=1.0)]
    for _ in range(n - 1):
        ops.append(b.compute(0, seconds=1.0, deps=[ops[-1]]))
    t = b.build()
    if bad is None:
        return t
    idx = t.dep_idx.copy()
    idx[t.dep_ptr[bad]] = bad                                 # op `bad` waits for itself
    return t.replace(dep_idx=idx)


@pytest.mark.parametrize("bad", [1, 4, 5, 9, 10])
def test_dependency_checks_in_chunks_find_the_first_bad_op(monkeypatch, bad):
    monkeypatch.setattr(trace_module, "_CHUNK", 4)            # chunks of 4 ops: 0-3, 4-7, 8-10
    _chain(11)                                                # valid across chunk edges
    with pytest.raises(TraceError, match=f"op {bad} depends on itself"):
        _chain(11, bad)
