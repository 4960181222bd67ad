"""netsim.trace.graph.distinct and unique_pairs against numpy's own unique (the reference)."""

import numpy as np
import pytest

from netsim.trace.graph import unique_pairs


@pytest.mark.parametrize("seed", range(20))
def test_unique_pairs_equal_numpys_unique_with_an_axis(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 200))
    a, b = rng.integers(-5, 40, n), rng.integers(-1, 10**6, n)
    assert np.array_equal(unique_pairs(a, b), np.unique(np.stack([a, b]), axis=1))


def test_no_pairs():
    assert unique_pairs([], []).shape == (2, 0)


@pytest.mark.parametrize("seed", range(10))
def test_distinct_equals_numpys_unique(seed):
    from netsim.trace.graph import distinct

    rng = np.random.default_rng(seed)
    x = rng.integers(-50, 10**7, int(rng.integers(0, 5000)))
    got, want = distinct(x), np.unique(x)
    assert got.dtype == want.dtype and np.array_equal(got, want)
