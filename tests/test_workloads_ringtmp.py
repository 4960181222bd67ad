"""RingTMP: partitions, activation sizes and the comparison with ps-sync."""

import pytest

from studies.claims import ringtmp_vs_ps
from workloads import PartitionError, mlp
from workloads.paradigms import ringtmp


def test_layer_partition_bytes_are_activation_sizes():
    P, b = 3, 4
    r = ringtmp.run(workers=P, epochs=1, batch_size=b, hidden=(16, 16))
    B = P * b
    steps = r.iterations
    # Two hops forward (B x 16 activations) and two back (B x 16 gradients).
    assert r.total_bytes == steps * 2 * (P - 1) * B * 16 * 4
    t = r.trace
    assert set(zip(t.rank[t.is_message].tolist(), t.peer[t.is_message].tolist())) == \
        {(0, 1), (1, 2), (2, 1), (1, 0)}


def test_neuron_partition_bytes_are_ring_allgather_and_reduce_scatter():
    P, b, h = 3, 4, 12
    r = ringtmp.run(workers=P, epochs=1, batch_size=b, partition="neuron", hidden=(h,))
    B = P * b
    fwd = (P - 1) * B * (h + 3) * 4       # allgather of every layer's outputs
    bwd = (P - 1) * B * h * 4             # reduce-scatter of the hidden layer's input gradient
    assert r.total_bytes == r.iterations * (fwd + bwd)
    t = r.trace
    pairs = set(zip(t.rank[t.is_message].tolist(), t.peer[t.is_message].tolist()))
    assert pairs == {(0, 1), (1, 2), (2, 0)}  # the ring, one direction


def test_microbatches_keep_bytes_and_numerics():
    a = ringtmp.run(workers=2, epochs=2, hidden=(8,))
    m = ringtmp.run(workers=2, epochs=2, hidden=(8,), microbatches=4)
    assert m.total_bytes == a.total_bytes and m.messages == 4 * a.messages
    assert m.extra["test_loss"] == pytest.approx(a.extra["test_loss"], rel=1e-4)


def test_partition_helpers():
    assert ringtmp.partition_layers((4, 8, 8, 3), 2) == [range(0, 2), range(2, 3)]
    with pytest.raises(PartitionError, match="leaves node 1 without a layer"):
        ringtmp.partition_layers((4, 3), 2)
    b = ringtmp.partition_neurons((4, 10, 5), 4)
    assert b[0].tolist() == [0, 3, 6, 8, 10] and b[1].tolist() == [0, 2, 3, 4, 5]


def test_compare_small():
    cfg = [{"dataset": "iris", "partition": "layer", "hidden": (16,) * 2, "epochs": 3},
           {"dataset": "digits", "partition": "neuron", "hidden": (32,), "epochs": 1}]
    rows = ringtmp_vs_ps.compare(seeds=2, workers=3, configs=cfg)
    assert [r["dataset"] for r in rows] == ["iris", "digits"]
    iris = rows[0]
    n = mlp.num_params((4, 16, 16, 3))
    steps_per_epoch = 5  # 40 samples per worker, batch 8
    assert iris["ps_bytes_per_epoch"] == steps_per_epoch * 2 * 3 * 4 * n
    assert iris["ringtmp_bytes_per_epoch"] == steps_per_epoch * 2 * 2 * 24 * 16 * 4
    assert iris["ratio_mean"] == pytest.approx(iris["ps_bytes_per_epoch"]
                                               / iris["ringtmp_bytes_per_epoch"])
    assert iris["ratio_std"] == 0.0
    for r in rows:
        assert abs(r["delta_mean"]) < 0.05 and 0 <= r["acc_ringtmp_mean"] <= 1
    table = ringtmp_vs_ps.format_table(rows)
    assert table.count("\n") == 3 and "±" in table
