"""A sparse input times a dense matrix of many columns (Tuning.lazy_spmm_columns,
lazy_spmm_work; etchpy.lazy.spmm) runs as an etchpy kernel in a scipy product
step, X·W and Xᵀ·W, csr and csc, equal to scipy's to rounding, on replays and
arrays written in place; below the columns or the work, or switched off,
scipy's loop runs it."""
import numpy as np
import pytest
import scipy.sparse as sp

import etchpy as ep
from etchpy.lazy import spmm

pytestmark = pytest.mark.usefixtures("shared_cache")

ON = ep.Tuning(lazy_spmm_work=0)
OFF = ep.Tuning(lazy_spmm_columns=0)


@pytest.mark.parametrize("fmt", ["csr", "csc"])
def test_products_of_many_columns_run_as_kernels_equal_to_scipy(fmt):
    rng = np.random.default_rng(0)
    X = sp.random_array((40, 30), density=0.2, format=fmt, random_state=1)
    W, V = rng.standard_normal((30, 16)), rng.standard_normal((40, 16))
    spmm._KERNELS.clear()         # made on first use: which ran
    for _ in range(3):                  # recorded, replayed, then written in place
        H, G = ep.compute(ep.lazy(X) @ ep.lazy(W), ep.lazy(X).T @ ep.lazy(V), tuning=ON)
        np.testing.assert_allclose(H, X @ W, rtol=1e-13, atol=1e-14)
        np.testing.assert_allclose(G, X.T @ V, rtol=1e-13, atol=1e-14)
        X.data *= -1.5
        W[0] += 1.0
    assert set(spmm._KERNELS) == {(fmt, False), (fmt, True)}


def test_few_columns_little_work_or_off_run_scipys_loop():
    rng = np.random.default_rng(2)
    X = sp.random_array((40, 30), density=0.2, format="csr", random_state=3)
    spmm._KERNELS.clear()
    for W, tuning in ((rng.standard_normal((30, 15)), ON), (rng.standard_normal((30, 16)), OFF),
                      (rng.standard_normal((30, 16)), None)):     # 240 entries · 16 < the work
        for _ in range(2):
            np.testing.assert_allclose(ep.compute(ep.lazy(X) @ ep.lazy(W), tuning=tuning), X @ W,
                                       rtol=1e-13, atol=1e-14)
    assert not spmm._KERNELS


@pytest.mark.parametrize("fmt", ["csr", "csc"])
def test_vectors_run_as_kernels_unless_switched_off(fmt):
    """A product by a vector is the kernel (its loop checks X's arrays); with
    lazy_spmm_columns 0, scipy's loop after etchpy.lazy.fits' pass."""
    rng = np.random.default_rng(4)
    X = sp.random_array((40, 30), density=0.2, format=fmt, random_state=5)
    w, v = rng.standard_normal(30), rng.standard_normal(40)
    for tuning, made in ((OFF, set()), (None, {(fmt, False, 1), (fmt, True, 1)})):
        spmm._KERNELS.clear()
        for _ in range(2):
            a, b = ep.compute(ep.lazy(X) @ ep.lazy(w), ep.lazy(X).T @ ep.lazy(v), tuning=tuning)
            np.testing.assert_allclose(a, X @ w, rtol=1e-13, atol=1e-14)
            np.testing.assert_allclose(b, X.T @ v, rtol=1e-13, atol=1e-14)
        assert set(spmm._KERNELS) == made


@pytest.mark.parametrize("fmt", ["csr", "csc"])
@pytest.mark.parametrize("flip", [False, True])
def test_a_vector_product_step_is_replayed_by_its_kernels_call_plan(fmt, flip):
    """The scipy product step of X·w (Xᵀ·w) that ran the vector kernel is a kernel
    step: a replay calls the kernel's plan on the slots (fast_replay's `c0`), the
    step itself where that plan misses; new matrices (int64 indices too) give
    scipy's answer, arrays written in place are read, an index out of bounds is
    refused."""
    from etchpy.lazy import replay
    from etchpy.runtime import binder
    rng = np.random.default_rng(6)
    X = sp.random_array((40, 30), density=0.2, format=fmt, random_state=7)
    w = rng.standard_normal(40 if flip else 30)

    def prog(L):
        return (L(X).T if flip else L(X)) @ L(w)
    want = (X.T if flip else X) @ w
    np.testing.assert_allclose(ep.compute(prog(ep.lazy)), want, rtol=1e-13)
    tape = replay.PROGRAMS.get((replay.signature([prog(ep.lazy)])[0], True, 1, None))
    (_, fn), = tape.steps
    assert fn.kernel[0] is spmm._kernel(fmt, flip, 1)
    assert "c0" in tape.run.__globals__ or binder.module() is None
    for seed in (8, 9):
        Y = sp.random_array(X.shape, density=0.2, format=fmt, random_state=seed)
        v = rng.standard_normal(w.shape[0])
        wide = getattr(sp, f"{fmt}_array")((Y.data, Y.indices.astype(np.int64),
                                            Y.indptr.astype(np.int64)), shape=Y.shape)
        for M in (Y, wide):
            got, = tape.run([M, v])
            np.testing.assert_allclose(got, (M.T if flip else M) @ v, rtol=1e-13)
        Y.data *= -3.0                                      # written in place: read
        got, = tape.run([Y, v])
        np.testing.assert_allclose(got, (Y.T if flip else Y) @ v, rtol=1e-13)
    Y.indices[0] = 10 ** 6                                  # broken: refused, never read
    with pytest.raises(ep.errors.InputError):
        tape.run([Y, v])
