"""A product of dense values materialised (Tuning.lazy_dense_products,
etchpy.lazy.regions): `maximum(X @ W1, 0) @ W2` (a two-layer MLP's forward) and
`H.T @ Z` run as numpy's `@` (one BLAS call on a replay), not as a kernel;
switched off, a kernel. Both equal numpy, on replays, new arrays and arrays
written in place; a sparse value's product is not one of them."""
import numpy as np
import pytest
import scipy.sparse as sp

import etchpy as ep

pytestmark = pytest.mark.usefixtures("shared_cache")

OFF = ep.Tuning(lazy_dense_products=False)


def mlp(F, X, W1, W2):
    return F.maximum(X @ W1, 0) @ W2


def transposed(F, X, W1, W2):
    H = F.exp(X @ W1)
    return H.T @ (X @ W2)


def _arrays(seed, dtype=np.float64, m=30, n=20, h=8, k=3):
    rng = np.random.default_rng(seed)
    return [(rng.random((m, n)) - 0.5).astype(dtype), rng.standard_normal((n, h)).astype(dtype),
            rng.standard_normal((h, k)).astype(dtype)]


@pytest.mark.parametrize("tuning", [None, OFF])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_an_mlp_forward_equals_numpy_with_its_product_by_blas_or_a_kernel(tuning, dtype):
    args = _arrays(0, dtype)
    text = ep.explain(mlp(ep, *(ep.lazy(a) for a in args)), tuning=tuning)
    assert ("numpy product (30, 3)" in text) == (tuning is None)
    rtol = 1e-5 if dtype == np.float32 else 1e-12
    for seed in range(1, 4):
        got = ep.compute(mlp(ep, *(ep.lazy(a) for a in args)), tuning=tuning)
        want = mlp(np, *args)
        assert got.dtype == want.dtype and got.shape == want.shape
        np.testing.assert_allclose(got, want, rtol=rtol, atol=rtol)
        for old, new in zip(args, _arrays(seed, dtype)):    # written in place
            old[...] = new
    new = _arrays(9, dtype)
    np.testing.assert_allclose(ep.compute(mlp(ep, *(ep.lazy(a) for a in new)), tuning=tuning),
                               mlp(np, *new), rtol=rtol, atol=rtol)


@pytest.mark.parametrize("tuning", [None, OFF])
def test_a_transposed_dense_value_times_a_dense_value(tuning):
    rng = np.random.default_rng(4)
    X, W1, W2 = rng.random((30, 20)) - 0.5, rng.standard_normal((20, 4)), rng.standard_normal((20, 5))
    for _ in range(3):
        got = ep.compute(transposed(ep, ep.lazy(X), ep.lazy(W1), ep.lazy(W2)), tuning=tuning)
        np.testing.assert_allclose(got, transposed(np, X, W1, W2), rtol=1e-12)
        X[::3] *= -0.5


def test_a_sparse_values_product_is_not_a_dense_one():
    rng = np.random.default_rng(5)
    X = sp.random_array((30, 20), density=0.2, format="csr", random_state=5)
    U, V, W = rng.random((30, 4)), rng.random((20, 4)), rng.random((20, 3))
    x, u, v, w = (ep.lazy(a) for a in (X, U, V, W))
    r = x * (u @ v.T)               # sampled on X's support: a sparse value
    text = ep.explain(r @ w)
    assert "numpy product (30, 3)" not in text
    Xd = X.toarray()
    np.testing.assert_allclose(ep.compute(r @ w), (Xd * (U @ V.T)) @ W, rtol=1e-12)
