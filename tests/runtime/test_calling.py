"""Calling a kernel with Tensors: a binding is kept while the Tensor's arrays
stay, and kept per index type, whatever the argument order."""
import numpy as np
import pytest

import etchpy as ep
from tuned import random_csr

i, j = ep.indices("i j")
A_csr = ep.tensor("A", 2, format="csr")

pytestmark = pytest.mark.usefixtures("shared_cache")


def test_tensor_inputs_are_bound_once_and_rebound_when_replaced():
    """A Tensor passed again reuses its validated binding; its arrays cannot be
    replaced, and a kernel declaring another format converts it on every call
    (a binding of the converted copy would miss writes into its values)."""
    x = ep.tensor("x", 1)
    kern = ep.compile(ep.sum(j, A_csr[i, j] * x[j]))
    M = random_csr(20, 10, 60, 9)
    T = ep.Tensor.from_scipy(M, "csr")
    xv = np.arange(10.0)
    np.testing.assert_allclose(kern(A=T, x=xv), M @ xv)
    assert len(T._etchpy_bound) == 1
    np.testing.assert_allclose(kern(A=T, x=xv), M @ xv)
    with pytest.raises(AttributeError):
        T.vals = T.vals * 2                      # a Tensor's arrays cannot be replaced
    want = 2 * (M @ xv)
    T.vals[:] *= 2                               # its values may be written in place
    np.testing.assert_allclose(kern(A=T, x=xv), want)
    csc = ep.tensor("A", 2, "csc")
    other = ep.compile(ep.sum(j, csc[i, j] * x[j]))
    with pytest.warns(ep.PerformanceWarning):
        np.testing.assert_allclose(other(A=T, x=xv), want)   # converted for csc
    # a conversion is a copy of the values: never kept, so a write is seen
    assert len(T._etchpy_bound) == 1
    T.vals[:] *= 3
    np.testing.assert_allclose(other(A=T, x=xv), 3 * want)


def _with_index_dtype(M, dtype):
    M = M.copy()
    M.indptr, M.indices = M.indptr.astype(dtype), M.indices.astype(dtype)
    return M


def test_a_tensor_reused_across_index_types_and_argument_orders():
    """A Tensor's C arguments are kept per library: an int32 Tensor meets an int64
    one (int64 library, its indices copied) and then an int32 one (int32 library),
    in either keyword order. Writes into its values are seen by later calls, a
    new shape is checked again, and swapped shapes are not taken for known ones."""
    B = ep.tensor("B", 2, "csr")
    kern = ep.compile(A_csr[i, j] * B[i, j], output="csr")
    M1, M2 = random_csr(30, 20, 150, 1), random_csr(30, 20, 150, 2)
    T32 = ep.Tensor.from_scipy(_with_index_dtype(M1, np.int32), "csr")
    T64 = ep.Tensor.from_scipy(_with_index_dtype(M2, np.int64), "csr")
    S32 = ep.Tensor.from_scipy(_with_index_dtype(M2, np.int32), "csr")
    want = M1.multiply(M2).toarray()
    for _ in range(2):
        np.testing.assert_allclose(kern(A=T32, B=T64).toarray(), want)
        np.testing.assert_allclose(kern(B=S32, A=T32).toarray(), want)
    T32.vals[:] *= 2                                 # the same array, written in place
    np.testing.assert_allclose(kern(A=T32, B=S32).toarray(), 2 * want)
    wide = ep.Tensor.from_scipy(random_csr(30, 21, 150, 3), "csr")
    with pytest.raises(ep.InputError, match="different sizes"):
        kern(A=T32, B=wide)
    x = ep.tensor("x", 1)
    y = ep.tensor("y", 1)
    outer = ep.compile(x[i] * y[j])
    xv, yv = np.arange(3.0), np.arange(5.0)
    assert outer(x=xv, y=yv).shape == (3, 5)
    assert outer(y=xv, x=yv).shape == (5, 3)
