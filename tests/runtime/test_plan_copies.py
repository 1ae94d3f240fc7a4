"""Issue 39: every copy a call makes is shown. A call plan that copies a numpy
input on every call (strided, or cast to the carrier's dtype: a DenseCast step,
made in C by the binder or by the plan's Python) is named by the kernel's
explain() with the copy's bytes; an input read as it is, is not. explain()
names the copies of the latest plan made for each kind of call (its inputs'
names and types); without call plans, those the general path makes on every call."""
import numpy as np
import pytest
import scipy.sparse as sp

import etchpy as ep

pytestmark = pytest.mark.usefixtures("shared_cache")

SPMV = "y[i] = A[i, j] * x[j]"
A = sp.random_array((60, 50), density=0.2, format="csr", random_state=0)
X = np.random.default_rng(1).standard_normal(50)
KINDS = [(np.repeat(X, 2)[::2], "strided"),
         (X.astype(np.float32), "float32 cast to float64"),
         (np.repeat(np.round(X * 8), 3).astype(np.int32)[1::3], "strided, int32 cast to float64"),
         (X, None)]                     # read as it is: not named


@pytest.mark.parametrize("tuning", [None, {"binder_casts": False}])
def test_explain_names_an_input_a_call_plan_copies_and_its_bytes(tuning):
    kern = ep.compile(SPMV, formats={"A": "csr"}, tuning=tuning,
                      name=f"copies_{tuning is None}")       # a kernel of its own
    assert "copied per call" not in kern.explain()
    for x, why in KINDS:
        for _ in range(2):              # the general call, then the plan
            np.testing.assert_allclose(kern(A=A, x=x), A @ x.astype(np.float64), rtol=1e-12)
        assert kern._plan is not None
        text = kern.explain()
        if why is None:
            assert "copied per call" not in text
        else:
            assert f"call plans' copies:\n  input x: {why}, copied per call (400 bytes)" in text


def test_a_matrix_in_another_order_than_the_kernels_is_named_so():
    """A Fortran-order matrix, with dense_orders off (its kernel reads row-major)."""
    kern = ep.compile("y[i] = M[i, j] * x[j]", tuning={"dense_orders": False},
                      name="copies_fortran")
    M = np.asfortranarray(np.arange(12.0).reshape(4, 3))
    for _ in range(2):
        np.testing.assert_allclose(kern(M=M, x=X[:3]), M @ X[:3], rtol=1e-12)
    assert "input M: not in the kernel's order, copied per call (96 bytes)" in kern.explain()


@pytest.mark.parametrize("tuning", [{"call_plans": False},
                                    {"call_plans": False, "keep_last_call": False}])
def test_without_call_plans_the_general_paths_copy_is_named_so(tuning):
    """call_plans off: the general path (calling.bind) copies the same inputs on
    every call; explain() names them in the same words, under their own heading."""
    kern = ep.compile(SPMV, formats={"A": "csr"}, tuning=tuning,
                      name=f"copies_no_plans_{len(tuning)}")
    for x, why in KINDS:
        for _ in range(2):
            np.testing.assert_allclose(kern(A=A, x=x), A @ x.astype(np.float64), rtol=1e-12)
        text = kern.explain()
        assert "call plans' copies" not in text
        if why is None:
            assert "copied per call" not in text
        else:
            assert f"general path's copies:\n  input x: {why}, copied per call (400 bytes)" in text


def test_without_call_plans_a_matrix_in_another_order_is_named_so():
    kern = ep.compile("y[i] = M[i, j] * x[j]", name="copies_fortran_no_plans",
                      tuning={"dense_orders": False, "call_plans": False})
    M = np.asfortranarray(np.arange(12.0).reshape(4, 3))
    np.testing.assert_allclose(kern(M=M, x=X[:3]), M @ X[:3], rtol=1e-12)
    text = kern.explain()
    assert "general path's copies:\n  input M: not in the kernel's order, copied per call " \
           "(96 bytes)" in text
    assert "input x" not in text                # read as it is
