"""Tests of ps-partitioned: METIS placement beats random placement in traffic."""

import numpy as np
import pytest

from studies.claims import metis_vs_random
from workloads.paradigms import ps_partitioned as pp
from workloads.datasets import sparse
from workloads.errors import WorkloadError

pytest.importorskip("pymetis")


@pytest.fixture(scope="module")
def comparison():
    return metis_vs_random.compare()


def test_metis_beats_random_in_traffic(comparison):
    m, r = comparison["metis"], comparison["random"]
    assert m.total_bytes < r.total_bytes
    assert comparison["traffic_ratio"] == pytest.approx(r.total_bytes / m.total_bytes)
    assert comparison["traffic_ratio"] > 1.5
    assert m.extra["rows_per_step"] < r.extra["rows_per_step"]


def test_both_learn_alike(comparison):
    m, r = comparison["metis"], comparison["random"]
    assert r.accuracy >= 0.7                          # a logistic regression scores ~0.8 here
    assert abs(m.accuracy - r.accuracy) <= 0.05


@pytest.mark.parametrize("partition", pp.PARTITIONS)
def test_bytes_are_the_true_sizes(comparison, partition):
    res = comparison[partition]
    t = res.trace
    assert res.total_bytes == t.total_bytes and res.messages == t.num_messages
    C = 2
    by_tag = {name: float(t.size[t.is_message & (t.tag == t.tags.index(name))].sum())
              for name in ("pull-request", "pull", "push")}
    assert by_tag == {k: float(v) for k, v in res.extra["bytes_by_tag"].items()}
    # A request carries 4-byte keys, a reply C float32 values per key, a push both.
    assert by_tag["pull"] == C * by_tag["pull-request"]
    assert by_tag["push"] == (C + 1) * by_tag["pull-request"]
    # Servers come after the workers and only workers talk to servers.
    P = t.metadata["workers"]
    msg = t.is_message
    assert np.all((t.rank[msg] < P) != (t.peer[msg] < P))


def test_same_seed_same_placement_and_trace():
    a = pp.run(epochs=2, seed=3)
    b = pp.run(epochs=2, seed=3)
    for col in ("kind", "rank", "peer", "size", "flops", "iteration", "dep_ptr", "dep_idx"):
        assert np.array_equal(getattr(a.trace, col), getattr(b.trace, col))
    assert a.accuracy == b.accuracy


def test_metis_recovers_clean_clusters():
    X, _, cluster = sparse(400, 200, 4, seed=2, nnz=10, locality=1.0)
    part = pp.partition_samples(X, 4, seed=0)
    assert np.bincount(part).tolist() == [100] * 4
    for w in range(4):
        assert len(set(cluster[part == w].tolist())) == 1
    owner = pp.partition_features(X, part, 4, 2, seed=0)
    # Each worker's features sit on a single server.
    for w in range(4):
        used = np.unique(X[part == w].indices)
        assert len(set(owner[used].tolist())) == 1


def test_bad_partition_name():
    with pytest.raises(WorkloadError, match="unknown partition"):
        pp.run(partition="hash")
    with pytest.raises(WorkloadError):
        metis_vs_random.compare(partition="metis")
