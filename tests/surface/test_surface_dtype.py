"""Issue 21, trap 1: with no semiring given, the result's dtype follows the inputs'
common dtype (float32 -> real32, float64 -> real, integers -> integer (int64),
bool -> boolean), on every backend, from evaluate, einsum and compiled kernels."""
import numpy as np
import pytest
import scipy.sparse as sp

import etchpy as ep

i, j = ep.indices("i j")
A, x = ep.tensor("A", 2, format="csr"), ep.tensor("x", 1)
SPMV = ep.sum(j, A[i, j] * x[j])
M = sp.csr_array(np.array([[1.0, 0, 2], [0, 3, 0]]))
V = np.array([1.0, 2.0, 3.0])

CASES = [(np.float32, np.float32), (np.float64, np.float64), (np.int32, np.int64),
         (np.int64, np.int64), (np.uint8, np.int64), (np.bool_, np.bool_)]


@pytest.mark.parametrize("dtype, want", CASES)
@pytest.mark.parametrize("backend", ["c", "streams", "reference"])
def test_evaluate_keeps_the_inputs_dtype(dtype, want, backend):
    y = ep.evaluate(SPMV, A=M.astype(dtype), x=V.astype(dtype), backend=backend)
    assert y.dtype == want
    np.testing.assert_array_equal(y, (M.astype(dtype) @ V.astype(dtype)).astype(want))


@pytest.mark.parametrize("dtype, want", CASES)
def test_einsum_and_a_compiled_kernel_keep_the_inputs_dtype(dtype, want):
    dense = M.toarray().astype(dtype)
    assert ep.einsum("ij,j->i", dense, V.astype(dtype)).dtype == want
    assert ep.einsum("ij,j->i", sp.csr_array(dense), V.astype(dtype)).dtype == want
    kern = ep.compile(SPMV, name="follows_dtype")
    assert kern(A=M.astype(dtype), x=V.astype(dtype)).dtype == want
    assert kern(A=M, x=V).dtype == np.float64          # one kernel, per-call variants


def test_mixed_inputs_promote_as_numpy_does_and_literals_are_weak():
    f32 = V.astype(np.float32)
    assert ep.evaluate(SPMV, A=M.astype(np.float32), x=V).dtype == np.float64
    assert ep.evaluate(SPMV, A=M.astype(np.int64), x=f32).dtype == np.float64
    assert ep.evaluate(SPMV, A=M.astype(np.bool_), x=f32).dtype == np.float32
    half = ep.sum(j, 0.5 * A[i, j] * x[j])
    assert ep.evaluate(half, A=M.astype(np.float32), x=f32).dtype == np.float32
    got = ep.evaluate(half, A=M.astype(np.int64), x=V.astype(np.int64))
    assert got.dtype == np.float64                     # int * 0.5 is a float in numpy
    np.testing.assert_array_equal(got, 0.5 * (M @ V))


def test_an_explicit_semiring_still_casts_and_other_dtypes_are_refused():
    y = ep.evaluate(SPMV, semiring="real", A=M.astype(np.float32), x=V.astype(np.float32))
    assert y.dtype == np.float64
    with pytest.raises(ep.InputError, match="complex"):    # complex into real: refused
        ep.evaluate(SPMV, semiring="real", A=M, x=V.astype(np.complex128))
    z = ep.evaluate(SPMV, A=M, x=V.astype(np.complex128))  # else the complex ring
    assert z.dtype == np.complex128
    with pytest.raises(ep.InputError, match="object"):
        ep.evaluate(SPMV, A=M, x=V.astype(object))
    assert ep.semirings.for_dtype(np.float32) is ep.semirings.real32
    assert ep.semirings.for_dtype(bool, negation=True) is ep.semirings.integer


def test_subtracting_booleans_computes_in_integers():
    y = ep.tensor("y", 1)
    got = ep.evaluate(x[i] - y[i], x=np.array([True, False]), y=np.array([False, True]))
    assert got.dtype == np.int64 and list(got) == [1, -1]
