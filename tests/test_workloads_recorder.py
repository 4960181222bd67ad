"""Recorder: true payload sizes, per-rank dependencies, layer-wise overlap, run results."""

import numpy as np
import pytest
import scipy.sparse

from netsim import COMPUTE, MESSAGE, TraceBuilder
from workloads import WorkloadError, mlp
from workloads.recorder import (Recorder, grad_ready, payload_bytes, prepare, run_result,
                                sparse_payload, worker_batches)


def test_payload_bytes_are_true_sizes():
    assert payload_bytes(np.zeros(25, np.float32)) == 100
    assert payload_bytes(np.zeros((3, 4), np.float64)) == 96
    vals, idx = sparse_payload(np.array([0, 1.5, 0, 0, -2], np.float32))
    assert (vals.dtype, idx.dtype) == (np.float32, np.int32)
    assert payload_bytes((vals, idx)) == 2 * (4 + 4)
    m = scipy.sparse.csr_matrix(np.array([[0, 1.0], [2.0, 0]], np.float32))
    assert payload_bytes(m) == 2 * 4 + 2 * 4 + 3 * 4
    for bad in (100, None, (), "x"):
        with pytest.raises(WorkloadError, match="payload must be"):
            payload_bytes(bad)


def test_sparse_payload_with_mask_and_indices():
    v = np.arange(5, dtype=np.float32)
    assert sparse_payload(v, v > 2)[1].tolist() == [3, 4]
    assert sparse_payload(v, np.array([4, 0]))[0].tolist() == [0.0, 4.0]


def test_dependencies_follow_program_order_and_receipts():
    rec = Recorder(2, servers=1)
    c0 = rec.compute(0, 10)
    m, nbytes = rec.send(0, 2, np.zeros(3, np.float32), tag="push")
    assert nbytes == 12
    u = rec.compute(2, 5)
    back, _ = rec.send(2, 0, np.zeros(3, np.float32))
    nxt = rec.compute(0, 10)
    t = rec.builder.build()
    assert t.deps(m).tolist() == [c0]          # a send waits for the sender's last op
    assert t.deps(u).tolist() == [m]           # the receiver waits for the message
    assert t.deps(back).tolist() == [u]
    assert sorted(t.deps(nxt).tolist()) == [c0, back]
    assert (rec.total_bytes, rec.messages) == (24, 2)
    with pytest.raises(WorkloadError, match="server 1 does not exist"):
        rec.server(1)
    with pytest.raises(WorkloadError, match="flops > 0"):
        rec.compute(0, 0)


def test_forward_backward_records_layer_flops_and_allows_overlap():
    layers = (4, 16, 8, 3)
    rec = Recorder(1, servers=1)
    bwd = rec.forward_backward(0, layers, batch=5, iteration=2)
    t0 = rec.builder.build()
    comp = t0.kind == COMPUTE
    # One forward op per layer, first to last, then one backward op per layer, last to first.
    assert t0.flops[comp].tolist() == [*mlp.forward_flops(layers, 5),
                                       *mlp.backward_flops(layers, 5)[::-1]]
    assert bwd == [5, 4, 3] and set(t0.iteration.tolist()) == {2}
    # Each op waits for the one before it: forward up the layers, backward down.
    assert [t0.deps(op).tolist() for op in range(6)] == [[], [0], [1], [2], [3], [4]]
    # Layer 2's gradient may leave after its own backward op, before layer 1's and 0's.
    off = mlp.layer_offsets(layers)
    assert grad_ready(bwd, layers, off[2], off[3]) == bwd[2]
    assert grad_ready(bwd, layers, off[1] + 3, off[3]) == bwd[1]
    op, _ = rec.send(0, 1, np.zeros(off[3] - off[2], np.float32),
                     deps=[grad_ready(bwd, layers, off[2], off[3])])
    t = rec.builder.build()
    assert t.deps(op).tolist() == [bwd[2]] and t.kind[op] == MESSAGE


def test_prepare_and_worker_batches_are_seeded():
    a, b = prepare("iris", 3, seed=4), prepare("iris", 3, seed=4)
    assert all(np.array_equal(x, y) for x, y in zip(a.params, b.params))
    assert all(np.array_equal(x, y) for x, y in zip(a.shards, b.shards))
    steps = worker_batches(a.shards, 16, a.rng)
    assert len(steps) == 3 and all(len(x) == 16 for row in steps for x in row)
    with pytest.raises(WorkloadError, match="workers must be an integer >= 1"):
        prepare("iris", 0, seed=0)


def test_run_result_checks_the_accounting_and_fills_metadata():
    s = prepare("iris", 2, seed=0)
    b = TraceBuilder(3)
    b.message(0, 2, 8)
    with pytest.raises(RuntimeError, match="differs from the trace"):
        run_result("x", b.build(), s, accuracy=1, total_bytes=9, messages=1, iterations=1,
                   hyper={})
    r = run_result("x", b.build(), s, accuracy=0.5, total_bytes=8, messages=1, iterations=1,
                   hyper={"lr": 0.1, "hidden": (16,)}, servers=1)
    md = r.trace.metadata
    for key in ("paradigm", "dataset", "workers", "servers", "layers", "hyper", "accuracy",
                "seed", "device_flops"):
        assert key in md
    assert md["workers"] == 2 and md["roles"] == ["worker", "worker", "server"]
    assert md["device_flops"] == 15.7e12 and md["hyper"]["hidden"] == [16]
