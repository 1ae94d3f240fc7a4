"""Lazy programs on edge values and inputs: non-canonical scipy inputs
(duplicates, unsorted), signed zeros and NaN scalars, powers of inf/NaN,
the square expansion on ill-conditioned or non-finite inputs, stored NaN/inf
under `* 0`, and results never sharing memory with the inputs; each result
equals numpy's on dense copies."""
import numpy as np
import pytest
import scipy.sparse as sp

import etchpy as ep

pytestmark = pytest.mark.usefixtures("shared_cache")


def dense(v):
    return v.toarray() if hasattr(v, "toarray") else np.asarray(v)


def _noncanonical():
    """Sparse inputs with duplicate (and unsorted) entries, the caller's arrays."""
    data = np.array([1.0, 3.0, 2.0, -0.5, 4.0, 0.25])
    rows, cols = np.array([0, 0, 2, 1, 2, 0]), np.array([0, 0, 1, 2, 1, 2])
    coo = sp.coo_array((data, (rows, cols)), shape=(3, 3))
    unsorted = sp.csr_array((np.array([5.0, 1.0, 2.0, 7.0]), np.array([2, 0, 2, 1]),
                             np.array([0, 3, 3, 4])), shape=(3, 3))
    by_rows = sp.csr_array((data[[0, 1, 5, 3, 2, 4]], cols[[0, 1, 5, 3, 2, 4]],
                            np.array([0, 3, 4, 6])), shape=(3, 3))   # sorted, duplicates
    by_cols = sp.csc_array((data, rows, np.array([0, 2, 4, 6])), shape=(3, 3))
    return [by_rows, by_cols, unsorted, sp.csr_matrix(by_rows),
            sp.csr_array((coo.data, (coo.row, coo.col)), shape=(3, 3)), by_rows.T]


PROGRAMS = [
    (lambda F, x, u, v: x * (u @ v.T), {}),
    (lambda F, x, u, v: ((x - u @ v.T) ** 2).sum(), {}),
    (lambda F, x, u, v: F.sqrt(F.abs(x)), {"optimize": False}),
    (lambda F, x, u, v: F.minimum(x, 2), {"optimize": False}),
    (lambda F, x, u, v: F.maximum(x, -1) * (u @ v.T) - x, {}),
    (lambda F, x, u, v: x.T @ (u @ v.T).sum(axis=1) + x.sum(axis=0), {}),
]


@pytest.mark.parametrize("k", range(len(PROGRAMS)))
def test_duplicate_and_unsorted_scipy_entries_are_summed_and_the_input_is_kept(k):
    f, options = PROGRAMS[k]
    rng = np.random.default_rng(k)
    U, V = rng.random((3, 2)), rng.random((3, 2))
    for X in _noncanonical():
        before = [a.copy() for a in (X.data, X.indices, X.indptr)]
        got = f(ep, ep.lazy(X), ep.lazy(U), ep.lazy(V)).compute(**options)
        want = f(np, X.toarray(), U, V)
        np.testing.assert_allclose(dense(got), want, rtol=1e-12, atol=1e-12)
        for a, b in zip(before, (X.data, X.indices, X.indptr)):
            np.testing.assert_array_equal(a, b)          # the caller's object untouched


def test_signed_zero_and_nan_scalars_are_distinct_operands_in_every_cache():
    """0.0 and -0.0 are == but 1/x tells them apart: no node, replay or kernel
    cache may take one for the other (built in either order, run twice)."""
    w = np.array([1.0, -2.0, 0.5, 3.0])
    S = sp.random_array((4, 3), density=0.5, format="csr", random_state=0)
    for zeros in ((0.0, -0.0), (-0.0, 0.0), (np.float64(-0.0), np.float64(0.0))):
        for _ in range(2):
            a, x = ep.lazy(w.copy()), ep.lazy(S)
            for z in zeros:
                with np.errstate(all="ignore"):
                    np.testing.assert_array_equal((a / z).compute(), w / z)
                    got = (x.T @ (a / z)).compute()
                    np.testing.assert_array_equal(got, S.T @ (w / z))
            with np.errstate(all="ignore"):
                want = w / zeros[0] + w / zeros[1]
                np.testing.assert_array_equal((a / zeros[0] + a / zeros[1]).compute(), want)
    a = ep.lazy(w)
    assert (a + float("nan")).key == (a + float("nan")).key        # one NaN, one node
    assert np.isnan((a * float("nan") + a * float("nan")).compute()).all()


@pytest.mark.parametrize("optimize", [True, False])
def test_a_power_zero_is_one_for_inf_and_nan_entries_fused_or_not(optimize):
    A = np.array([[np.inf, 1.0, -np.inf], [np.nan, 2.0, 0.0]])
    B = np.arange(6.0).reshape(3, 2)
    for X in (A, sp.csr_array(A), A[1], np.array([[3, 0, -1]])):
        Xd = dense(X)
        for f in (lambda F, x: (x ** 0).sum(), lambda F, x: (x ** 0).sum(axis=-1),
                  lambda F, x: F.exp(x ** 0) * 2, lambda F, x: (x ** 0) @ (x ** 0).T,
                  lambda F, x: (x ** 0 + 1) @ B[:Xd.shape[-1]]):
            with np.errstate(all="ignore"):
                want = f(np, Xd)
                got = f(ep, ep.lazy(X)).compute(optimize=optimize)
            np.testing.assert_array_equal(dense(got), want)


def test_a_sparse_result_shares_no_memory_with_the_inputs():
    S = sp.csr_array(np.array([[1.0, 0.0, 2.0], [0.0, 3.0, 0.0], [4.0, 0.0, 5.0]]))
    U = np.arange(6.0).reshape(3, 2)
    s, u = ep.lazy(S), ep.lazy(U)
    for _ in range(2):                                  # recorded, then replayed
        for r in ep.compute(s, s * (u @ u.T), ep.sqrt(s), s.T, s * 2, s * s):
            assert sp.issparse(r)
            for a in (r.data, r.indices, r.indptr):
                assert not any(np.shares_memory(a, b) for b in (S.data, S.indices, S.indptr))


def test_the_square_expansion_is_never_negative_nor_nan_for_a_non_finite_input():
    rng = np.random.default_rng(0)
    U, V = rng.random((50, 4)) * 100, rng.random((40, 4)) * 100
    loss = lambda F, x, u, v: ((x - u @ v.T) ** 2).sum()            # noqa: E731
    exact = ep.compute(loss(ep, ep.lazy(U @ V.T), ep.lazy(U), ep.lazy(V)))
    assert 0 <= exact <= 1e-6 * (U @ V.T).max() ** 2            # cancellation, clamped
    for bad in (np.inf, -np.inf, np.nan):                       # replays a finite run first
        for where in ("x", "u"):
            X, Uc = U @ V.T, U.copy()
            (X if where == "x" else Uc)[3, 1] = bad
            for Xk in (X, sp.csr_array(X)):
                got = loss(ep, ep.lazy(Xk), ep.lazy(Uc), ep.lazy(V)).compute()
                with np.errstate(all="ignore"):
                    want = loss(np, X, Uc, V)
                np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("wrap", ["abs", "maximum", "exp"])
def test_the_square_expansion_looks_through_maps_of_its_terms(wrap):
    """A map inside the squared residual (abs(X), maximum(X, 0), exp(X)) is checked
    for finiteness like any operand (a map without a scalar argument crashed)."""
    rng = np.random.default_rng(1)
    X, U, V = rng.random((6, 5)) - 0.5, rng.random((6, 2)), rng.random((5, 2))
    f = {"abs": (ep.abs, np.abs), "exp": (ep.exp, np.exp),
         "maximum": (lambda a: ep.maximum(a, 0.0), lambda a: np.maximum(a, 0.0))}[wrap]
    got = ((f[0](ep.lazy(X)) - ep.lazy(U) @ ep.lazy(V).T) ** 2).sum().compute()
    assert np.isclose(got, ((f[1](X) - U @ V.T) ** 2).sum())
