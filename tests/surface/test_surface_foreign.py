"""Issue 21, trap 4: pydata sparse (COO, GCXS) and python-graphblas (Matrix, Vector)
inputs are accepted by evaluate, einsum and kernels, read in their own layout."""
import subprocess
import sys

import numpy as np
import pytest
import scipy.sparse as sp

import etchpy as ep

sparse = pytest.importorskip("sparse")

i, j, k = ep.indices("i j k")
A, x = ep.tensor("A", 2, format="csr"), ep.tensor("x", 1)
SPMV = ep.sum(j, A[i, j] * x[j])
M = sp.random(30, 20, density=0.2, format="csr", random_state=3)
V = np.arange(20.0)


@pytest.mark.parametrize("make", [sparse.COO.from_scipy_sparse,
                                  lambda m: sparse.GCXS.from_scipy_sparse(sp.csr_array(m)),
                                  lambda m: sparse.GCXS(sparse.COO.from_scipy_sparse(m),
                                                        compressed_axes=(1,))])
@pytest.mark.parametrize("backend", ["c", "streams", "reference"])
def test_pydata_sparse_matrices(make, backend):
    S = make(M)
    np.testing.assert_allclose(ep.evaluate(SPMV, A=S, x=V, backend=backend), M @ V)
    np.testing.assert_allclose(ep.einsum("ij,j->i", S, V, backend=backend), M @ V)


def test_a_csr_gcxs_binds_without_a_warning_and_an_nd_coo_is_read():
    import warnings
    G = sparse.GCXS.from_scipy_sparse(sp.csr_array(M))
    kern = ep.compile(SPMV, name="gcxs_as_is")
    with warnings.catch_warnings():
        warnings.simplefilter("error")                  # no per-call conversion
        np.testing.assert_allclose(kern(A=G, x=V), M @ V)
    T = sparse.random((6, 7, 8), density=0.2, random_state=1)
    C, u = ep.tensor("C", 3, format="coo"), ep.tensor("u", 1)
    want = np.einsum("ijk,k->ij", T.todense(), np.arange(8.0))
    got = ep.evaluate(ep.sum(k, C[i, j, k] * u[k]), C=T, u=np.arange(8.0))
    np.testing.assert_allclose(got, want)
    np.testing.assert_allclose(ep.einsum("ijk,k->ij", T, np.arange(8.0)), want)


def test_a_fill_value_the_semiring_cannot_read_is_refused():
    S = sparse.COO.from_scipy_sparse(M)
    odd = sparse.COO(S.coords, S.data, shape=S.shape, fill_value=5.0)
    with pytest.raises(ep.InputError, match="fill_value"):
        ep.evaluate(SPMV, A=odd, x=V)
    inf = sparse.COO(S.coords, S.data, shape=S.shape, fill_value=np.inf)
    got = ep.evaluate(SPMV, semiring="min_plus", A=inf, x=V)
    want = ep.evaluate(SPMV, semiring="min_plus", A=M, x=V)
    np.testing.assert_array_equal(got, want)


def test_graphblas_matrices_and_vectors():
    gb = pytest.importorskip("graphblas")
    gM = gb.Matrix.from_coo(*M.tocoo().coords, M.tocoo().data, nrows=30, ncols=20)
    gv = gb.Vector.from_coo(np.arange(20), V, size=20)
    for backend in ("c", "streams"):
        np.testing.assert_allclose(ep.evaluate(SPMV, A=gM, x=gv, backend=backend), M @ V)
    np.testing.assert_allclose(ep.einsum("ij,j->i", gM, V), M @ V)


def test_neither_package_is_imported_with_etchpy():
    code = "import sys, etchpy; print('sparse' in sys.modules, 'graphblas' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.stdout.split() == ["False", "False"], out.stderr
