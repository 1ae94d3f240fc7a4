"""Steps of a lazy program that are one library call or one generated numpy
function (etchpy.lazy.regions, etchpy.lazy.region_code): a lone product of a
dense 2-d input is numpy's `@`, as a sparse one is scipy's loop; a dense
element-wise region is one function of numpy calls. Each equals numpy on the
first run and on replays, with new arrays and with arrays written in place
between evaluations."""
import warnings

import numpy as np
import pytest
import scipy.sparse as sp

import etchpy as ep

pytestmark = pytest.mark.usefixtures("shared_cache")


def logistic(F, X, w, y):
    return X.T @ (1 / (1 + F.exp(-(X @ w))) - y)


def least_squares(F, X, w, y):
    return X.T @ (X @ w - y)


def softmax(F, X, V, Y):
    E = F.exp(X @ V)
    return X.T @ (E / E.sum(axis=1, keepdims=True) - Y)


def _dense(seed, m=40, k=4, dtype=np.float64):
    rng = np.random.default_rng(seed)
    X = (rng.random((m, m)) / m).astype(dtype)
    return X, rng.standard_normal(m).astype(dtype), rng.random(m).astype(dtype), \
        rng.random((m, k)).astype(dtype), np.eye(m, k, dtype=dtype)


@pytest.mark.parametrize("prog", [logistic, least_squares])
def test_a_dense_input_product_is_numpys_and_replays_on_new_and_rewritten_arrays(prog):
    X, w, y, _, _ = _dense(0, m=200)
    blas = ep.Tuning(lazy_library_work=0.05)    # library steps priced cheap: X·w and Xᵀ·r
    steps = ep.explain(prog(ep, *(ep.lazy(a) for a in (X, w, y))), tuning=blas)
    assert steps.split("steps:")[1].count("numpy product") == 2
    for seed in range(3):                       # new arrays: replayed steps
        X, w, y, _, _ = _dense(seed, m=200)
        for tuning in (None, blas):
            got = ep.compute(prog(ep, *(ep.lazy(a) for a in (X, w, y))), tuning=tuning)
            np.testing.assert_allclose(got, prog(np, X, w, y), rtol=1e-12)
    X *= 3.0                                    # the same arrays written in place
    w[:] = np.linspace(-1, 1, w.size)
    got = ep.compute(prog(ep, *(ep.lazy(a) for a in (X, w, y))), tuning=blas)
    np.testing.assert_allclose(got, prog(np, X, w, y), rtol=1e-12)


def test_dense_products_of_other_layouts_and_dtypes_equal_numpys():
    X, w, y, V, Y = _dense(1)
    for Xk in (np.asfortranarray(X), X.T.copy().T, X[:, ::-1]):     # not C-contiguous too
        got = ep.compute(least_squares(ep, *(ep.lazy(a) for a in (Xk, w, y))))
        np.testing.assert_allclose(got, least_squares(np, Xk, w, y), rtol=1e-12)
    got = ep.compute(softmax(ep, *(ep.lazy(a) for a in (X, V, Y))))
    np.testing.assert_allclose(got, softmax(np, X, V, Y), rtol=1e-12)
    X32, w32, y32, _, _ = _dense(2, dtype=np.float32)
    got = ep.compute(least_squares(ep, *(ep.lazy(a) for a in (X32, w32, y32))))
    want = least_squares(np, X32, w32, y32)
    assert got.dtype == want.dtype
    np.testing.assert_allclose(got, want, rtol=1e-5)
    Xi = np.arange(16, dtype=np.int64).reshape(4, 4)
    wi = np.arange(4, dtype=np.int64)
    got = ep.compute(ep.lazy(Xi).T @ (ep.lazy(Xi) @ ep.lazy(wi) - ep.lazy(wi)))
    np.testing.assert_array_equal(got, Xi.T @ (Xi @ wi - wi))


def test_a_sparse_program_still_uses_scipys_loop():
    X = sp.random_array((30, 30), density=0.2, format="csr", random_state=3)
    w, y = np.linspace(-1, 1, 30), np.linspace(0, 1, 30)
    x = ep.lazy(X)
    assert "scipy product" in ep.explain(x.T @ ep.lazy(w))
    np.testing.assert_allclose(ep.compute(logistic(ep, x, ep.lazy(w), ep.lazy(y))),
                               logistic(np, X, w, y), rtol=1e-12)


def _regions(F, a, b, c):
    """Dense element-wise regions: chains written over one temporary, transposes,
    maps with and without a scalar, powers, subtraction and negation."""
    return (F.exp(-a) * 2 + 1 - b,
            F.maximum(a.T, 0.5) * b.T - c.T,
            (a - b) ** 3 / (1 + F.sqrt(F.abs(c))),
            -(a * b) + F.log(F.abs(c) + 1))


def test_generated_regions_equal_numpy_on_first_runs_and_replays():
    rng = np.random.default_rng(5)
    for _ in range(3):
        a, b, c = (rng.standard_normal((6, 5)) for _ in range(3))
        got = ep.compute(*_regions(ep, *(ep.lazy(x) for x in (a, b, c))))
        for g, w in zip(got, _regions(np, a, b, c)):
            np.testing.assert_allclose(g, w, rtol=1e-12)
    a_before = a.copy()
    ep.compute(*_regions(ep, *(ep.lazy(x) for x in (a, b, c))))
    np.testing.assert_array_equal(a, a_before)      # an input is never overwritten


def test_a_region_meeting_inf_and_nan_warns_nothing_and_gives_numpys_values():
    a = np.array([1000.0, -1000.0, 0.0, np.nan])
    b = np.array([0.0, 1.0, 0.0, 2.0])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got = ep.compute(ep.exp(ep.lazy(a)) / ep.lazy(b) - ep.lazy(b))
    with np.errstate(all="ignore"):
        want = np.exp(a) / b - b
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int64])
@pytest.mark.parametrize("scalars", [True, False])
def test_a_regions_python_numbers_give_numpys_dtypes_and_values(dtype, scalars):
    """Tuning.lazy_region_scalars: a python number read by a region's ufunc as a
    0-d array of the operation's dtype where it holds the number exactly; the
    results' dtypes and values are numpy's either way (0.1 in float32, 2**60 in
    float32, 1e300 and nan kept as numbers)."""
    rng = np.random.default_rng(6)
    a = (rng.standard_normal((5, 4)) * 10).astype(dtype)
    b = (rng.standard_normal(4) * 10).astype(dtype)

    def prog(F, a, b):
        return (F.maximum(a * 2 + 1, 0) - 0.1 * b, 2 ** 60 + a, (a + 1e300) * 0 + b,
                F.minimum(a, 3) + float("nan") * b, 1 / (1 + a * a) + 0.5)
    tuning = ep.Tuning(lazy_region_scalars=scalars)
    for _ in range(2):
        with np.errstate(all="ignore"):
            got = ep.compute(*prog(ep, ep.lazy(a), ep.lazy(b)), tuning=tuning)
            want = prog(np, a, b)
        for g, w in zip(got, want):
            assert g.dtype == w.dtype
            np.testing.assert_allclose(g, w, rtol=1e-6 if dtype == np.float32 else 1e-12)
