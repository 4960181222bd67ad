"""Datasets the paradigms train on, with fixed train/test splits.

========== ================================ ====================================
name       what                             train / test
========== ================================ ====================================
``iris``   Fisher's Iris, 150 x 4, 3        stratified 80/20, fixed seed
           classes (shipped with
           scikit-learn)
``digits`` scikit-learn's 8x8 digits,       stratified 80/20, fixed seed
           1,797 x 64, 10 classes
``mnist``  real MNIST IDX files the user    the official 60,000 / 10,000
           has (``path=`` a directory)
``sparse`` synthetic sparse data with       stratified 80/20, fixed seed
           clustered feature use, from a
           seed (:func:`sparse`)
========== ================================ ====================================

Dense features are standardised with the training set's mean and standard
deviation (a constant feature is left at 0). Sparse features are not centred
(that would make them dense); they are already of unit scale.

The split is fixed (``split_seed=SPLIT_SEED`` by default) and independent of the run's
seed, so runs with different seeds are scored on the same held-out data.
Nothing is downloaded: Iris and digits ship inside scikit-learn; MNIST is read
from files the user has.
"""

import gzip
import os
from dataclasses import dataclass

import numpy as np

from netsim import checks

from workloads.errors import DatasetError

__all__ = [
    "NAMES",
    "SPLIT_SEED",
    "Dataset",
    "SparseData",
    "load",
    "iris",
    "digits",
    "mnist",
    "sparse",
    "read_idx",
    "write_idx",
    "split",
    "standardise",
    "shards",
    "minibatches",
]

NAMES = ("iris", "digits", "mnist", "sparse")

#: Seed of the fixed stratified train/test split. Seed 5 gives Iris a split of
#: typical difficulty: a logistic regression scores 0.967 on its test set, the
#: median over split seeds 0-7 (seed 0 happens to hold out an unusually hard set
#: of versicolor/virginica flowers, where it scores 0.90).
SPLIT_SEED = 5

# IDX type codes (LeCun's MNIST page, "THE IDX FILE FORMAT"): code -> big-endian dtype.
_IDX_TYPES = {0x08: ">u1", 0x09: ">i1", 0x0B: ">i2", 0x0C: ">i4", 0x0D: ">f4", 0x0E: ">f8"}
_IDX_CODES = {np.dtype(v).newbyteorder("="): k for k, v in _IDX_TYPES.items()}


@dataclass(frozen=True)
class Dataset:
    """A dataset with its fixed train/test split.

    Attributes
    ----------
    name : str
    X_train, X_test : ndarray (float32) or scipy.sparse.csr_matrix
        Features, one row per sample.
    y_train, y_test : ndarray (int64)
        Class labels ``0..n_classes-1``.
    n_classes : int

    Examples
    --------
    >>> import numpy as np
    >>> X, y = np.zeros((4, 3), dtype=np.float32), np.array([0, 1, 0, 1])
    >>> d = Dataset("toy", X[:3], y[:3], X[3:], y[3:], 2)
    >>> d.n_features, d.n_train, d.n_test, d.is_sparse
    (3, 3, 1, False)
    """

    name: str
    X_train: object
    y_train: np.ndarray
    X_test: object
    y_test: np.ndarray
    n_classes: int

    @property
    def n_features(self):
        """Number of input features."""
        return int(self.X_train.shape[1])

    @property
    def n_train(self):
        """Number of training samples."""
        return int(self.X_train.shape[0])

    @property
    def n_test(self):
        """Number of test samples."""
        return int(self.X_test.shape[0])

    @property
    def is_sparse(self):
        """True when the features are a scipy.sparse matrix."""
        return hasattr(self.X_train, "tocsr")


class SparseData(tuple):
    """``(X, y, cluster)`` returned by :func:`sparse`: CSR features, labels, cluster of each row.

    Examples
    --------
    >>> data = sparse(100, 50, 5, seed=1, nnz=4)
    >>> data.X.shape, data.y.shape == data.cluster.shape == (100,)
    ((100, 50), True)
    """

    __slots__ = ()

    def __new__(cls, X, y, cluster):
        return super().__new__(cls, (X, y, cluster))

    X = property(lambda self: self[0], doc="CSR matrix of features (float32).")
    y = property(lambda self: self[1], doc="Class labels (int64).")
    cluster = property(lambda self: self[2], doc="Cluster of each row (int64).")


def load(name, path=None, split_seed=SPLIT_SEED, test_fraction=0.2, **options):
    """Load a dataset by name with its fixed train/test split.

    Parameters
    ----------
    name : str
        One of :data:`NAMES`.
    path : str, optional
        Directory of the MNIST IDX files (``mnist`` only).
    split_seed : int
        Seed of the stratified split (not used by ``mnist``, whose split is official).
    test_fraction : float
        Held-out fraction (not used by ``mnist``).
    **options
        ``mnist``: ``max_train``, ``max_test``. ``sparse``: the arguments of
        :func:`sparse` (``n_samples``, ``n_features``, ``n_clusters``, ``nnz``,
        ``n_classes``, ``locality``, ``seed``).

    Returns
    -------
    Dataset

    Raises
    ------
    DatasetError
        For an unknown name (listing the known ones), unknown options, or a
        missing or corrupt file.

    Examples
    --------
    >>> d = load("iris")
    >>> d.n_train, d.n_test, d.n_features, d.n_classes
    (120, 30, 4, 3)
    >>> load("cifar")
    Traceback (most recent call last):
    ...
    workloads.errors.DatasetError: unknown dataset 'cifar'; known datasets: iris, digits, mnist, sparse
    """
    if not isinstance(name, str) or name not in NAMES:   # an array has no one ==
        raise DatasetError(f"unknown dataset {name!r}; known datasets: {', '.join(NAMES)}")
    allowed = {"mnist": {"max_train", "max_test"},
               "sparse": {"n_samples", "n_features", "n_clusters", "nnz", "n_classes",
                          "locality", "seed"}}.get(name, set())
    unknown = set(options) - allowed
    if unknown:
        raise DatasetError(f"dataset {name!r} takes no option(s) {sorted(unknown)}; "
                           f"it takes {sorted(allowed) or 'none'}")
    if name == "mnist":
        return mnist(path, **options)
    if path is not None:
        raise DatasetError(f"dataset {name!r} is not read from files; path= is for mnist")
    if name == "iris":
        return iris(split_seed, test_fraction)
    if name == "digits":
        return digits(split_seed, test_fraction)
    X, y, _ = sparse(**options)
    tr, te = split(y, test_fraction, split_seed)
    return Dataset("sparse", X[tr], y[tr], X[te], y[te], int(y.max()) + 1)


def _dense(name, X, y, split_seed, test_fraction):
    y = np.asarray(y, np.int64)
    tr, te = split(y, test_fraction, split_seed)
    Xtr, Xte = standardise(X[tr], X[te])
    return Dataset(name, Xtr, y[tr], Xte, y[te], int(y.max()) + 1)


def iris(split_seed=SPLIT_SEED, test_fraction=0.2):
    """Fisher's Iris (150 x 4, 3 classes) from scikit-learn, split and standardised.

    Parameters
    ----------
    split_seed : int
        Seed of the stratified train/test split.
    test_fraction : float
        Share of the samples held out for testing.

    Examples
    --------
    >>> d = iris()
    >>> d.X_train.dtype, sorted(np.bincount(d.y_test).tolist())
    (dtype('float32'), [10, 10, 10])
    """
    from sklearn.datasets import load_iris

    X, y = load_iris(return_X_y=True)
    return _dense("iris", X, y, split_seed, test_fraction)


def digits(split_seed=SPLIT_SEED, test_fraction=0.2):
    """scikit-learn's 8x8 handwritten digits (1,797 x 64, 10 classes), split and standardised.

    Parameters
    ----------
    split_seed : int
        Seed of the stratified train/test split.
    test_fraction : float
        Share of the samples held out for testing.

    Examples
    --------
    >>> d = digits()
    >>> d.n_train + d.n_test, d.n_features, d.n_classes
    (1797, 64, 10)
    """
    from sklearn.datasets import load_digits

    X, y = load_digits(return_X_y=True)
    return _dense("digits", X, y, split_seed, test_fraction)


_MNIST_FILES = {
    "train_images": "train-images-idx3-ubyte",
    "train_labels": "train-labels-idx1-ubyte",
    "test_images": "t10k-images-idx3-ubyte",
    "test_labels": "t10k-labels-idx1-ubyte",
}


def _find_mnist_file(directory, stem):
    # Distributions spell these "train-images-idx3-ubyte" or "train-images.idx3-ubyte", maybe gzipped.
    for base in (stem, stem.replace("-idx", ".idx")):
        for ext in ("", ".gz"):
            p = os.path.join(directory, base + ext)
            if os.path.isfile(p):
                return p
    raise DatasetError(f"MNIST file {stem} (or {stem}.gz) not found in {directory}")


def mnist(path, max_train=None, max_test=None):
    """Real MNIST from its four IDX files in directory ``path``.

    The official split (60,000 train, 10,000 test) is kept; pixels are scaled
    to [0, 1], flattened to 784 features and standardised. ``max_train`` and
    ``max_test`` keep only the first samples (for quick runs).

    Parameters
    ----------
    path : str
        Directory of the four IDX files (gzipped or not).
    max_train : int, optional
        Keep at most this many training samples.
    max_test : int, optional
        Keep at most this many test samples.

    Raises
    ------
    DatasetError
        If ``path`` is missing, a file is missing or corrupt, or the image and
        label counts disagree.

    Examples
    --------
    >>> import tempfile, os
    >>> d = tempfile.mkdtemp()
    >>> rng = np.random.default_rng(0)
    >>> for part, n in (("train", 6), ("t10k", 4)):
    ...     write_idx(os.path.join(d, f"{part}-images-idx3-ubyte"),
    ...               rng.integers(0, 256, (n, 28, 28), dtype=np.uint8))
    ...     write_idx(os.path.join(d, f"{part}-labels-idx1-ubyte"), np.arange(n, dtype=np.uint8))
    >>> m = mnist(d)
    >>> m.n_train, m.n_test, m.n_features
    (6, 4, 784)
    """
    if path is None:
        raise DatasetError("dataset 'mnist' needs path= a directory holding the MNIST IDX files "
                           f"({', '.join(_MNIST_FILES.values())})")
    if not os.path.isdir(path):
        raise DatasetError(f"MNIST directory not found: {path}")
    arr = {k: read_idx(_find_mnist_file(path, v)) for k, v in _MNIST_FILES.items()}
    out = []
    for part, limit in (("train", max_train), ("test", max_test)):
        X, y = arr[f"{part}_images"], arr[f"{part}_labels"]
        if X.ndim != 3 or y.ndim != 1:
            raise DatasetError(f"MNIST {part} images must be 3-d and labels 1-d, "
                               f"got shapes {X.shape} and {y.shape}")
        if len(X) != len(y):
            raise DatasetError(f"MNIST {part}: {len(X)} images but {len(y)} labels")
        if limit is not None:
            X, y = X[:limit], y[:limit]
        out.append((X.reshape(len(X), -1).astype(np.float32) / 255.0, y.astype(np.int64)))
    (Xtr, ytr), (Xte, yte) = out
    if ytr.size and (ytr.min() < 0 or ytr.max() > 9) or yte.size and (yte.min() < 0 or yte.max() > 9):
        raise DatasetError("MNIST labels must be in 0..9")
    Xtr, Xte = standardise(Xtr, Xte)
    return Dataset("mnist", Xtr, ytr, Xte, yte, 10)


def read_idx(path):
    """Read an IDX file (the MNIST format), plain or gzipped.

    Format: two zero bytes, a type code (0x08 uint8, 0x09 int8, 0x0B int16,
    0x0C int32, 0x0D float32, 0x0E float64), the number of dimensions, then
    each dimension as a big-endian uint32, then the data, big-endian, row-major.

    Raises
    ------
    DatasetError
        For a missing file, a bad magic number, or a size that does not match
        the header.

    Examples
    --------
    >>> import tempfile, os
    >>> p = os.path.join(tempfile.mkdtemp(), "x-idx2-ubyte")
    >>> write_idx(p, np.arange(6, dtype=np.uint8).reshape(2, 3))
    >>> read_idx(p).tolist()
    [[0, 1, 2], [3, 4, 5]]
    """
    path = str(path)
    try:
        opener = gzip.open if path.endswith(".gz") else open
        with opener(path, "rb") as f:
            raw = f.read()
    except FileNotFoundError:
        raise DatasetError(f"IDX file not found: {path}") from None
    except (OSError, EOFError) as exc:
        raise DatasetError(f"{path}: cannot read IDX file ({exc})") from None
    if len(raw) < 4 or raw[0] != 0 or raw[1] != 0:
        raise DatasetError(f"{path}: not an IDX file (bad magic number {raw[:4].hex() or 'empty'})")
    code, ndim = raw[2], raw[3]
    if code not in _IDX_TYPES:
        raise DatasetError(f"{path}: unknown IDX type code 0x{code:02x}")
    header = 4 + 4 * ndim
    if len(raw) < header:
        raise DatasetError(f"{path}: truncated IDX header ({len(raw)} bytes, need {header})")
    dims = tuple(int(d) for d in np.frombuffer(raw, ">u4", count=ndim, offset=4))
    dtype = np.dtype(_IDX_TYPES[code])
    need = int(np.prod(dims, dtype=np.int64)) * dtype.itemsize
    have = len(raw) - header
    if have != need:
        raise DatasetError(f"{path}: IDX header says {dims} of {dtype.name} ({need} bytes) "
                           f"but the file has {have} data bytes")
    return np.frombuffer(raw, dtype, offset=header).reshape(dims).astype(dtype.newbyteorder("="))


def write_idx(path, array):
    """Write ``array`` as an IDX file (gzipped if ``path`` ends in ``.gz``).

    Parameters
    ----------
    path : str or path-like
        The file to write.
    array : numpy.ndarray
        uint8 array of any shape.

    Examples
    --------
    >>> import tempfile, os
    >>> p = os.path.join(tempfile.mkdtemp(), "y.gz")
    >>> write_idx(p, np.array([1.5, 2.5], np.float32)); read_idx(p).tolist()
    [1.5, 2.5]
    """
    array = np.asarray(array)
    dt = array.dtype.newbyteorder("=")
    if dt not in _IDX_CODES:
        raise DatasetError(f"IDX cannot store dtype {array.dtype}")
    code = _IDX_CODES[dt]
    head = bytes([0, 0, code, array.ndim]) + np.asarray(array.shape, ">u4").tobytes()
    data = head + array.astype(_IDX_TYPES[code]).tobytes()
    opener = gzip.open if str(path).endswith(".gz") else open
    with opener(path, "wb") as f:
        f.write(data)


def sparse(n_samples=2000, n_features=1000, n_clusters=8, seed=0, nnz=20, n_classes=2,
           locality=0.9):
    """Synthetic sparse data whose rows use clustered sets of features.

    Row ``i`` belongs to cluster ``c = cluster[i]`` (balanced, shuffled). Its
    ``nnz`` non-zero features are drawn without replacement, each with
    probability ``locality`` from cluster ``c``'s own block of
    ``n_features / n_clusters`` features and otherwise from all features
    (duplicates are merged, so a row may have slightly fewer). Values are 1.
    Labels come from a hidden linear model: ``y = argmax(X @ W + noise)`` with
    ``W`` standard normal, so the data are learnable. All randomness comes
    from ``seed``.

    Parameters
    ----------
    n_samples : int
        Rows.
    n_features : int
        Columns.
    n_clusters : int
        Feature clusters; a row belongs to one.
    seed : int
        Seed of the data.
    nnz : int
        Non-zero features per row.
    n_classes : int
        Classes of the labels.
    locality : float
        Share of a row's features drawn from its own cluster.

    Returns
    -------
    SparseData
        ``(X, y, cluster)``: a float32 ``scipy.sparse.csr_matrix`` of shape
        ``(n_samples, n_features)``, int64 labels and int64 cluster ids.

    Raises
    ------
    DatasetError
        For sizes that cannot work (e.g. ``nnz`` larger than a cluster block).

    Examples
    --------
    >>> X, y, cluster = sparse(100, 50, 5, seed=1, nnz=4)
    >>> X.shape, X.dtype, int(X.getnnz(axis=1).max()), sorted(set(cluster.tolist()))
    ((100, 50), dtype('float32'), 4, [0, 1, 2, 3, 4])
    """
    import scipy.sparse

    for name, v in (("n_samples", n_samples), ("n_features", n_features),
                    ("n_clusters", n_clusters), ("nnz", nnz)):
        checks.check_int(v, name, error=DatasetError)
    checks.check_int(n_classes, "n_classes", 2, error=DatasetError)
    if n_clusters > n_features:
        raise DatasetError(f"n_clusters ({n_clusters}) must not exceed n_features ({n_features})")
    checks.check_real(locality, "locality", 0, 1, error=DatasetError)
    blocks = np.array_split(np.arange(n_features), n_clusters)
    if nnz > min(len(b) for b in blocks):
        raise DatasetError(f"nnz ({nnz}) must not exceed the smallest cluster block "
                           f"({min(len(b) for b in blocks)} features)")
    rng = np.random.default_rng(seed)
    cluster = rng.permutation(np.arange(n_samples) % n_clusters).astype(np.int64)
    n_local = rng.binomial(nnz, locality, size=n_samples)
    rows = []
    for i in range(n_samples):
        local = rng.choice(blocks[cluster[i]], n_local[i], replace=False)
        other = rng.choice(n_features, nnz - n_local[i], replace=False)
        rows.append(np.unique(np.concatenate([local, other])))
    indptr = np.concatenate([[0], np.cumsum([len(r) for r in rows])])
    indices = np.concatenate(rows).astype(np.int32)
    X = scipy.sparse.csr_matrix((np.ones(len(indices), np.float32), indices, indptr),
                                shape=(n_samples, n_features))
    W = rng.standard_normal((n_features, n_classes))
    scores = np.asarray(X @ W) + 0.1 * rng.standard_normal((n_samples, n_classes))
    return SparseData(X, scores.argmax(axis=1).astype(np.int64), cluster)


def split(y, test_fraction=0.2, seed=0):
    """Deterministic stratified split of sample indices into train and test.

    Each class keeps ``round(test_fraction * count)`` of its samples for the
    test set, chosen by a Generator seeded with ``seed``.

    Parameters
    ----------
    y : numpy.ndarray
        Class labels.
    test_fraction : float
        Share of each class held out.
    seed : int
        Seed of the split.

    Returns
    -------
    train, test : ndarray
        Sorted index arrays.

    Raises
    ------
    DatasetError
        If ``test_fraction`` is not in (0, 1).

    Examples
    --------
    >>> tr, te = split(np.array([0] * 5 + [1] * 5), 0.2, seed=0)
    >>> len(tr), len(te), sorted(np.array([0] * 5 + [1] * 5)[te].tolist())
    (8, 2, [0, 1])
    """
    if not 0.0 < test_fraction < 1.0:
        raise DatasetError(f"test_fraction must be in (0, 1), got {test_fraction}")
    y = np.asarray(y)
    rng = np.random.default_rng(seed)
    test = []
    for c in np.unique(y):
        idx = rng.permutation(np.flatnonzero(y == c))
        test.append(idx[:int(round(test_fraction * len(idx)))])
    test = np.sort(np.concatenate(test))
    train = np.setdiff1d(np.arange(len(y)), test)
    return train, test


def standardise(X_train, X_test):
    """Scale features to zero mean and unit variance using the training set's statistics.

    Features constant in the training set are centred and left unscaled.

    Parameters
    ----------
    X_train : numpy.ndarray
        Training features (the statistics come from these).
    X_test : numpy.ndarray
        Test features.

    Examples
    --------
    >>> a, b = standardise(np.array([[1.0, 5.0], [3.0, 5.0]]), np.array([[2.0, 6.0]]))
    >>> a.tolist(), b.tolist()
    ([[-1.0, 0.0], [1.0, 0.0]], [[0.0, 1.0]])
    """
    X_train = np.asarray(X_train, np.float64)
    X_test = np.asarray(X_test, np.float64)
    mean = X_train.mean(axis=0)
    std = X_train.std(axis=0)
    std[std < 1e-12] = 1.0
    return (((X_train - mean) / std).astype(np.float32),
            ((X_test - mean) / std).astype(np.float32))


def shards(n, parts, rng):
    """Split sample indices ``0..n-1`` into ``parts`` shuffled shards of nearly equal size.

    Parameters
    ----------
    n : int
        Number of samples.
    parts : int
        Number of shards (workers).
    rng : numpy.random.Generator or int

    Returns
    -------
    list of ndarray

    Raises
    ------
    DatasetError
        If there are fewer samples than shards (a worker would get no data).

    Examples
    --------
    >>> [len(s) for s in shards(10, 3, 0)]
    [4, 3, 3]
    """
    if parts > n:
        raise DatasetError(f"cannot split {n} training samples among {parts} workers "
                           "(a worker would get no data)")
    return np.array_split(np.random.default_rng(rng).permutation(n), parts)


def minibatches(indices, batch_size, rng):
    """One epoch of mini-batches: ``indices`` shuffled and cut into ``batch_size`` pieces.

    The last batch may be smaller.

    Parameters
    ----------
    indices : numpy.ndarray
        Sample indices.
    batch_size : int
        Samples per mini-batch.
    rng : numpy.random.Generator or int
        Shuffles the indices; an int seeds a new Generator.

    Examples
    --------
    >>> [len(b) for b in minibatches(np.arange(10), 4, 0)]
    [4, 4, 2]
    """
    idx = np.random.default_rng(rng).permutation(np.asarray(indices))
    return [idx[i:i + batch_size] for i in range(0, len(idx), batch_size)]
