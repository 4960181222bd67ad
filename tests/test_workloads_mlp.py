"""The numpy MLP: gradients against finite differences, FLOP counts, SGD, sparse input."""

import numpy as np
import pytest
import scipy.sparse

from workloads import WorkloadError, mlp


def _data(rng, n=6, d=4, c=3):
    return rng.standard_normal((n, d)).astype(np.float32), rng.integers(0, c, n)


def test_gradients_match_finite_differences():
    rng = np.random.default_rng(1)
    X, y = _data(rng)
    params = [p.astype(np.float64) for p in mlp.init_params((4, 5, 3), rng)]
    # Work in float64 by hand-casting: forward/backward keep the parameters' dtype for W.
    _, grads = mlp.loss_and_grads([p.astype(np.float32) for p in params], X, y)
    eps = 1e-2
    for k, p in enumerate(params):
        for idx in list(np.ndindex(p.shape))[:6]:
            plus = [q.copy() for q in params]
            minus = [q.copy() for q in params]
            plus[k][idx] += eps
            minus[k][idx] -= eps
            num = (mlp.loss([q.astype(np.float32) for q in plus], X, y)
                   - mlp.loss([q.astype(np.float32) for q in minus], X, y)) / (2 * eps)
            assert grads[k][idx] == pytest.approx(num, rel=2e-2, abs=2e-3)


def test_init_is_seeded_float32_and_he_scaled():
    a = mlp.init_params((100, 50, 3), 7)
    b = mlp.init_params((100, 50, 3), np.random.default_rng(7))
    c = mlp.init_params((100, 50, 3), 8)
    assert all(np.array_equal(x, y) for x, y in zip(a, b))
    assert not np.array_equal(a[0], c[0])
    assert all(p.dtype == np.float32 for p in a)
    assert a[0].std() == pytest.approx(np.sqrt(2 / 100), rel=0.1)
    assert not a[1].any()


def test_flops_follow_the_shapes():
    fwd = mlp.forward_flops((4, 16, 3), 8)
    assert fwd.tolist() == [2 * 8 * 4 * 16, 2 * 8 * 16 * 3]
    assert mlp.backward_flops((4, 16, 3), 8).tolist() == (2 * fwd).tolist()
    assert mlp.update_flops(10) == 40


def test_sgd_momentum_matches_the_formula():
    p, v = [np.array([1.0, 2.0], np.float32)], [np.array([0.5, 0.0], np.float32)]
    g = [np.array([1.0, -1.0], np.float32)]
    mlp.sgd_momentum_step(p, g, v, lr=0.1, momentum=0.9)
    np.testing.assert_allclose(v[0], [0.45 + 1.0, -1.0], rtol=1e-6)
    np.testing.assert_allclose(p[0], [1.0 - 0.145, 2.1], rtol=1e-6)


def test_training_reduces_the_loss():
    rng = np.random.default_rng(0)
    X, y = _data(rng, n=40)
    p = mlp.init_params((4, 8, 3), rng)
    v = mlp.zeros_like(p)
    before = mlp.loss(p, X, y)
    for _ in range(50):
        _, g = mlp.loss_and_grads(p, X, y)
        mlp.sgd_momentum_step(p, g, v, 0.05)
    assert mlp.loss(p, X, y) < before / 2


def test_sparse_input_gives_the_dense_result():
    rng = np.random.default_rng(2)
    X = scipy.sparse.random(7, 10, density=0.3, random_state=3, format="csr", dtype=np.float32)
    y = rng.integers(0, 2, 7)
    p = mlp.init_params((10, 4, 2), rng)
    ls, gs = mlp.loss_and_grads(p, X, y)
    ld, gd = mlp.loss_and_grads(p, X.toarray(), y)
    assert ls == pytest.approx(ld, rel=1e-6)
    for a, b in zip(gs, gd):
        assert isinstance(a, np.ndarray) and a.dtype == np.float32
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-7)


def test_flatten_round_trip_and_errors():
    p = mlp.init_params((3, 2, 2), 0)
    flat = mlp.flatten(p)
    assert flat.shape == (mlp.num_params((3, 2, 2)),) == (14,)
    assert mlp.layer_offsets((3, 2, 2)).tolist() == [0, 8, 14]
    with pytest.raises(WorkloadError, match="expected \\(14,\\)"):
        mlp.unflatten(flat[:-1], (3, 2, 2))
    with pytest.raises(WorkloadError, match="at least an input and an output"):
        mlp.layer_shapes((3,))
    with pytest.raises(WorkloadError, match=">= 1"):
        mlp.layer_shapes((3, 0, 2))
