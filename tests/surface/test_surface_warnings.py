"""Issue 21, trap 6: an input whose layout is not the declared format's is converted
on every call; the kernel says so once per input, with a PerformanceWarning that
names the input and how to convert it once."""
import warnings

import numpy as np
import pytest
import scipy.sparse as sp

import etchpy as ep

i, j = ep.indices("i j")
A, x = ep.tensor("A", 2, format="csr"), ep.tensor("x", 1)
SPMV = ep.sum(j, A[i, j] * x[j])
M = sp.random(50, 40, density=0.1, format="csr", random_state=2)
V = np.arange(40.0)


def test_a_dense_array_for_a_csr_input_warns_once_per_kernel_and_input():
    kern = ep.compile(SPMV, name="warns_once")
    with pytest.warns(ep.PerformanceWarning, match=r"input A .*csr.*Tensor\.from_dense") as seen:
        kern(A=M.toarray(), x=V)
    assert len([w for w in seen if issubclass(w.category, ep.PerformanceWarning)]) == 1
    assert seen[0].filename == __file__            # points at the caller
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        np.testing.assert_allclose(kern(A=M.toarray(), x=V), M @ V)     # no second word
        kern(A=M, x=V)                                                   # matches: silent
        kern(A=ep.Tensor.from_dense(M.toarray(), "csr"), x=V)


def test_scipy_in_another_layout_warns_and_matching_inputs_do_not():
    kern = ep.compile(SPMV, name="warns_layout", tuning={"adopt_layouts": False})
    with pytest.warns(ep.PerformanceWarning, match="input A .*csc"):
        kern(A=sp.csc_array(M), x=V)
    with warnings.catch_warnings():     # read as it is (runtime.adopt): nothing converted
        warnings.simplefilter("error")
        ep.compile(SPMV, name="adopts_layout")(A=sp.csc_array(M), x=V)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ep.compile(SPMV, name="silent")(A=M, x=V)
    assert issubclass(ep.PerformanceWarning, UserWarning)
