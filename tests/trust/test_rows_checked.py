"""A full serial loop of scalar walks checks its input's segments as each row
opens (Tuning.check_rows, lower.schedule.row_checks; proofs_notes/validation.md,
"Segments checked as each row opens"): one rare test a row, leaving the loop
(imp.Break) on the first bad one, in place of the pass over indptr. Rows of
five (a 2-D stencil: the near scalar loop): good inputs give scipy's result;
indptr past nnz, decreasing or negative, a coordinate outside [0, dim) and a
matrix of no columns are refused (an InputError naming A) or answered, never
read past; arrays changed in place between calls too. (Under ASan and UBSan:
test_segment_checks.py's property, which holds two check_rows kernels.)"""
import numpy as np
import pytest
import scipy.sparse as sp

import etchpy as ep
from etchpy import pipeline
from etchpy.errors import InputError

SPMV = "y[i] = A[i, j] * x[j]"
ON = ep.Tuning(check_rows=True)


def stencil(side, idx):
    """The 5-point Laplacian on a side² grid, csr with `idx` index arrays."""
    one = sp.diags_array([-1.0, 2.0, -1.0], offsets=[-1, 0, 1], shape=(side, side))
    A = sp.csr_array(sp.kronsum(one, one, format="csr"))
    A.sort_indices()
    return sp.csr_array((A.data, A.indices.astype(idx), A.indptr.astype(idx)), shape=A.shape)


def test_the_switch_tests_rows_in_the_scalar_loop_only():
    kern = ep.compile(SPMV, formats={"A": "csr"}, tuning=ON)
    src = pipeline.render_c(kern.compiled, "int32_t").c
    assert src.count("if (EP_RARE(") == 1 and "break;" in src    # the near scalar loop
    assert "ep_gather_clamped(acc" in src                         # lanes keep their blocks
    off = ep.compile(SPMV, formats={"A": "csr"})
    assert "EP_RARE" not in pipeline.render_c(off.compiled, "int32_t").c
    two = ep.compile(SPMV, formats={"A": "csr"}, tuning=ON, threads=2)
    assert "EP_RARE" not in pipeline.render_c(two.compiled, "int32_t").c


@pytest.mark.parametrize("idx", [np.int32, np.int64])
@pytest.mark.parametrize("on", [True, False])
def test_bad_segments_and_coordinates_are_refused(idx, on):
    A = stencil(30, idx)
    n, nnz = A.shape[0], A.nnz
    x = np.random.default_rng(5).random(n)
    kern = ep.compile(SPMV, formats={"A": "csr"}, tuning=ep.Tuning(check_rows=on))
    np.testing.assert_allclose(kern(A=A, x=x), A @ x, rtol=1e-12)

    def spoiled(where, at, value):
        B = A.copy()
        getattr(B, where)[at] = value
        return B
    bad = [("indptr", 7, nnz + 3), ("indptr", 400, A.indptr[398]),       # past nnz, decreasing
           ("indptr", 200, -5), ("indptr", n - 1, nnz + 1),                # negative, the last row
           ("indices", 0, n), ("indices", 3 * nnz // 4, -1), ("indices", nnz - 1, 2**31 - 1)]
    for where, at, value in bad:
        with pytest.raises(InputError, match="A"):
            kern(A=spoiled(where, at, value), x=x)
    np.testing.assert_allclose(kern(A=A, x=x), A @ x, rtol=1e-12)     # good again after


def test_arrays_changed_in_place_between_calls():
    A = stencil(20, np.int32)
    x = np.ones(A.shape[0])
    kern = ep.compile(SPMV, formats={"A": "csr"}, tuning=ON)
    np.testing.assert_allclose(kern(A=A, x=x), A @ x)
    keep = A.indptr[50]
    A.indptr[50] = A.indptr[49] - 1                 # a segment that runs backwards
    with pytest.raises(InputError, match="A"):
        kern(A=A, x=x)
    A.indptr[50] = keep
    A.indices[17] = 10**6
    with pytest.raises(InputError, match="A"):
        kern(A=A, x=x)
    A.indices[17] = 0 if A.indices[16] != 0 else 1
    A.sort_indices()
    A.sum_duplicates()
    np.testing.assert_allclose(kern(A=A, x=x), A @ x)


def test_no_columns():
    kern = ep.compile(SPMV, formats={"A": "csr"}, tuning=ON)
    A = sp.csr_array((40, 0))
    np.testing.assert_array_equal(kern(A=A, x=np.zeros(0)), np.zeros(40))
