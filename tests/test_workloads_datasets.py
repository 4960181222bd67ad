"""Datasets: fixed stratified splits, standardisation, the IDX reader and MNIST loader, sparse data."""

import gzip
import os
import struct

import numpy as np
import pytest

from workloads import DatasetError, datasets


def _idx_bytes(code, dims, data_be):
    return bytes([0, 0, code, len(dims)]) + struct.pack(f">{len(dims)}I", *dims) + data_be


def test_iris_and_digits_shapes_split_and_scaling():
    d = datasets.load("iris")
    assert (d.n_train, d.n_test, d.n_features, d.n_classes) == (120, 30, 4, 3)
    assert np.bincount(d.y_test).tolist() == [10, 10, 10]  # stratified
    np.testing.assert_allclose(d.X_train.mean(axis=0), 0, atol=1e-5)
    np.testing.assert_allclose(d.X_train.std(axis=0), 1, atol=1e-4)
    g = datasets.load("digits")
    assert (g.n_train + g.n_test, g.n_features, g.n_classes) == (1797, 64, 10)
    assert g.X_train.dtype == np.float32 and g.y_train.dtype == np.int64


def test_split_is_fixed_and_seeded():
    a, b = datasets.load("iris"), datasets.load("iris")
    np.testing.assert_array_equal(a.X_test, b.X_test)
    c = datasets.load("iris", split_seed=1)
    assert not np.array_equal(a.y_test, c.y_test) or not np.array_equal(a.X_test, c.X_test)
    tr, te = datasets.split(np.repeat([0, 1, 2], 10), 0.2, seed=3)
    assert len(np.intersect1d(tr, te)) == 0 and len(tr) + len(te) == 30


def test_unknown_dataset_and_option():
    with pytest.raises(DatasetError, match="known datasets: iris, digits, mnist, sparse"):
        datasets.load("cifar10")
    with pytest.raises(DatasetError, match="takes no option"):
        datasets.load("iris", n_samples=3)
    with pytest.raises(DatasetError, match="needs path="):
        datasets.load("mnist")


def test_read_idx_hand_written_files(tmp_path):
    p = tmp_path / "a-idx2-ubyte"
    p.write_bytes(_idx_bytes(0x08, (2, 3), bytes(range(6))))
    np.testing.assert_array_equal(datasets.read_idx(p), [[0, 1, 2], [3, 4, 5]])
    q = tmp_path / "b-idx1-int.gz"
    with gzip.open(q, "wb") as f:
        f.write(_idx_bytes(0x0C, (3,), struct.pack(">3i", -1, 2, 70000)))
    out = datasets.read_idx(str(q))
    assert out.tolist() == [-1, 2, 70000] and out.dtype == np.int32
    r = tmp_path / "c"
    datasets.write_idx(r, np.arange(12, dtype=np.float64).reshape(2, 2, 3))
    assert datasets.read_idx(r).shape == (2, 2, 3)


@pytest.mark.parametrize("content, match", [
    (b"", "bad magic"),
    (b"\x01\x00\x08\x01\x00\x00\x00\x01\x05", "bad magic"),
    (b"\x00\x00\x07\x01\x00\x00\x00\x01\x05", "type code 0x07"),
    (b"\x00\x00\x08\x02\x00\x00\x00\x01", "truncated IDX header"),
    (b"\x00\x00\x08\x01\x00\x00\x00\x03\x05", "1 data bytes"),
    (b"\x00\x00\x08\x01\x00\x00\x00\x01\x05\x06", "2 data bytes"),
])
def test_read_idx_rejects_corrupt_files(tmp_path, content, match):
    p = tmp_path / "bad"
    p.write_bytes(content)
    with pytest.raises(DatasetError, match=match):
        datasets.read_idx(p)


def test_read_idx_missing_file(tmp_path):
    with pytest.raises(DatasetError, match="not found"):
        datasets.read_idx(tmp_path / "nope")


def _write_mnist(d, n_train=5, n_test=3, labels_train=None):
    rng = np.random.default_rng(0)
    for part, n in (("train", n_train), ("t10k", n_test)):
        imgs = rng.integers(0, 256, (n, 28, 28)).astype(np.uint8)
        (d / f"{part}-images-idx3-ubyte").write_bytes(_idx_bytes(0x08, (n, 28, 28), imgs.tobytes()))
        lab = np.arange(n, dtype=np.uint8) % 10 if labels_train is None or part == "t10k" \
            else labels_train
        (d / f"{part}-labels-idx1-ubyte").write_bytes(_idx_bytes(0x08, (len(lab),), lab.tobytes()))


def test_mnist_loader_on_tiny_files(tmp_path):
    _write_mnist(tmp_path)
    m = datasets.load("mnist", path=str(tmp_path))
    assert (m.n_train, m.n_test, m.n_features, m.n_classes) == (5, 3, 784, 10)
    assert m.y_train.tolist() == [0, 1, 2, 3, 4]
    assert datasets.load("mnist", path=str(tmp_path), max_train=2).n_train == 2


def test_mnist_loader_errors(tmp_path):
    with pytest.raises(DatasetError, match="directory not found"):
        datasets.mnist(str(tmp_path / "none"))
    _write_mnist(tmp_path, labels_train=np.arange(4, dtype=np.uint8))
    with pytest.raises(DatasetError, match="5 images but 4 labels"):
        datasets.mnist(str(tmp_path))
    os.remove(tmp_path / "t10k-labels-idx1-ubyte")
    with pytest.raises(DatasetError, match="t10k-labels-idx1-ubyte .* not found"):
        datasets.mnist(str(tmp_path))


def test_sparse_is_seeded_clustered_and_loadable():
    X, y, cluster = datasets.sparse(400, 200, 4, seed=0, nnz=10, locality=0.9)
    X2, y2, _ = datasets.sparse(400, 200, 4, seed=0, nnz=10, locality=0.9)
    X3, _, _ = datasets.sparse(400, 200, 4, seed=1, nnz=10, locality=0.9)
    assert X.format == "csr" and X.shape == (400, 200) and X.dtype == np.float32
    assert (X != X2).nnz == 0 and np.array_equal(y, y2) and (X != X3).nnz > 0
    block = X.indices // 50  # cluster c owns features 50c..50c+49
    rows = np.repeat(np.arange(400), np.diff(X.indptr))
    assert np.mean(block == cluster[rows]) > 0.85
    assert 0.2 < y.mean() < 0.8
    d = datasets.load("sparse", n_samples=300, n_features=100, nnz=5)
    assert d.is_sparse and d.n_train + d.n_test == 300
    with pytest.raises(DatasetError, match="nnz"):
        datasets.sparse(10, 10, 5, nnz=3)


def test_shards_and_minibatches():
    s = datasets.shards(10, 3, 0)
    assert sorted(np.concatenate(s).tolist()) == list(range(10))
    with pytest.raises(DatasetError, match="a worker would get no data"):
        datasets.shards(3, 4, 0)
    b = datasets.minibatches(np.arange(10), 3, np.random.default_rng(0))
    assert [len(x) for x in b] == [3, 3, 3, 1]


def test_paradigms_run_on_mnist_files_and_sparse_data(tmp_path):
    import workloads

    _write_mnist(tmp_path, n_train=8, n_test=4)
    r = workloads.record("ps-sync", dataset="mnist", data_path=str(tmp_path), workers=2, epochs=1,
                         batch_size=4)
    assert r.trace.metadata["layers"] == [784, 16, 10] and r.total_bytes == r.trace.total_bytes
    s = workloads.record("single", dataset="sparse", epochs=1)
    assert s.trace.metadata["dataset"] == "sparse"
