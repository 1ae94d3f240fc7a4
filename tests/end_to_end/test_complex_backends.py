"""Complex operands end to end: every map on every backend, dense and sparse
outputs, complex64, two threads, repeated calls (call plans), against numpy
and scipy."""
import numpy as np
import pytest
import scipy.sparse as sp

import etchpy as ep
from etchpy.testing import check_backends

pytestmark = pytest.mark.usefixtures("shared_cache")
i, j, k = ep.indices("i j k")
A, B = ep.tensor("A", 2, format="csr"), ep.tensor("B", 2, format="csr")
x = ep.tensor("x", 1)


def cmatrix(n, m, density, seed, dtype=np.complex128):
    rng = np.random.default_rng(seed)
    M = sp.random_array((n, m), density=density, format="csr", rng=rng)
    M.data = M.data - 0.5 + 1j * rng.standard_normal(M.nnz)
    return M.astype(dtype)


@pytest.mark.parametrize("fn", ["conj", "real", "imag", "abs", "neg", "exp", "sqrt", "recip"])
def test_every_complex_map_on_every_backend(fn):
    M, v = cmatrix(7, 5, 0.5, 1), np.linspace(-1, 2, 5) + 0.5j
    e = ep.map(fn, ep.sum(j, A[i, j] * x[j]))
    want = check_backends(e, {"A": M, "x": v}, semiring="complex", backends=("streams", "c"))
    with np.errstate(all="ignore"):
        ref = {"conj": np.conj, "real": np.real, "imag": np.imag, "abs": np.abs,
               "neg": np.negative, "exp": np.exp, "sqrt": np.sqrt,
               "recip": lambda z: 1 / z}[fn](M @ v)
    np.testing.assert_allclose(want, ref)
    got = ep.evaluate(e, A=M, x=v)                # the semiring chosen by the dtype
    assert got.dtype == np.complex128             # the carrier's dtype (maps.py)
    np.testing.assert_allclose(got, ref)


@pytest.mark.parametrize("output", ["dense", "csr", "csc", "dcsr"])
@pytest.mark.parametrize("dtype", [np.complex128, np.complex64])
def test_complex_spgemm_outputs(output, dtype):
    M, N = cmatrix(20, 15, 0.2, 2, dtype), cmatrix(15, 12, 0.2, 3, dtype)
    e = ep.sum(j, A[i, j] * ep.map("conj", B[j, k]))
    got = ep.evaluate(e, A=M, B=N, output=output)
    dense = got.to_dense() if hasattr(got, "to_dense") else (
        got.toarray() if hasattr(got, "toarray") else got)
    assert dense.dtype == dtype
    np.testing.assert_allclose(dense, (M @ N.conj()).toarray(), rtol=1e-5)


def test_complex_threads_and_repeated_calls():
    e = ep.sum(j, A[i, j] * x[j]) * 1j
    kern = ep.compile(e, threads=2)
    for seed in range(3):                         # new arrays: the call plan's path
        M = cmatrix(300, 200, 0.05, seed)
        v = np.random.default_rng(seed).standard_normal(200) * (1 - 1j)
        np.testing.assert_allclose(kern(A=M, x=v), 1j * (M @ v))
        np.testing.assert_allclose(kern(A=M, x=v), 1j * (M @ v))   # the last call's
    assert kern.semiring is ep.semirings.complex


def test_tensor_round_trips_complex():
    D = cmatrix(6, 5, 0.4, 4).toarray()
    for fmt in ("dense", "csr", "csc", "coo", "dcsr"):
        T = ep.Tensor.from_dense(D, fmt)
        assert T.dtype == np.complex128
        np.testing.assert_array_equal(T.to_dense(), D)
    r, c = np.nonzero(D)
    T = ep.Tensor.from_coords([r, c], D[r, c].astype(np.complex64), D.shape, "csr")
    assert T.dtype == np.complex64
    np.testing.assert_allclose(T.to_dense(), D, rtol=1e-6)
    np.testing.assert_array_equal(ep.Tensor.from_scipy(sp.csr_array(D)).to_dense(), D)


def test_real_inputs_with_a_complex_literal_compute_in_complex():
    M, v = sp.random_array((6, 4), density=0.5, format="csr", rng=1), np.arange(4.0)
    got = ep.evaluate(ep.sum(j, A[i, j] * x[j] * (1 + 2j)), A=M, x=v)
    np.testing.assert_allclose(got, (1 + 2j) * (M @ v))


def test_lazy_arrays_refuse_complex_and_say_where_it_computes():
    with pytest.raises(ep.InputError, match="complex128.*ep.einsum"):
        ep.lazy(np.ones((2, 2), dtype=complex))
