"""The C binder's copy of a numpy input the plan copies or casts (Tuning.binder_casts,
codegen_templates/binder_inputs.c.j2 `dense_cast`): a strided, reversed or
other-dtype array (or, for a kernel reading a tensor stored in another mode order, an
array of another dtype) is copied in C into a scratch buffer the plan keeps, instead
of the plan's Python. It answers bit for bit as the Python plan and the general path
do, misses the arrays a Dense plan reads as they are, reads values written in place
between calls, refuses NaN where the semiring does, and two threads calling at once
do not share a scratch."""
import functools

import numpy as np
import pytest
import scipy.sparse as sp

import etchpy as ep
from etchpy.runtime import binder
from etchpy.runtime.call_plans import MISS
from in_threads import run_threads

pytestmark = [pytest.mark.usefixtures("shared_cache"),
              pytest.mark.skipif(binder.module() is None, reason="no binder on this machine")]

SPMV = "y[i] = A[i, j] * x[j]"
OFF = {"binder_casts": False}
KINDS = {
    "strided": lambda x: np.repeat(x, 2)[::2],
    "reversed": lambda x: x[::-1].copy()[::-1],
    "float32": lambda x: x.astype(np.float32),
    "int64": lambda x: np.round(x * 8).astype(np.int64),
    "int32 reversed": lambda x: np.round(x * 8).astype(np.int32)[::-1],
    "uint8": lambda x: np.abs(np.round(x * 8)).astype(np.uint8),
    "float32 strided": lambda x: np.repeat(x, 3).astype(np.float32)[1::3],
    "bool": lambda x: x > 0,
    "bool bytes 2": lambda x: (np.abs(np.round(x)) * 2).astype(np.uint8).view(np.bool_),
}


def _matrix(n=60, m=50, seed=0):
    return sp.random_array((n, m), density=0.2, format="csr", random_state=seed)


def _in_c(plan):
    return type(plan) is functools.partial


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_a_cast_or_strided_vector_runs_in_c_as_the_python_plan_answers(kind):
    on = ep.compile(SPMV, formats={"A": "csr"})
    off = ep.compile(SPMV, formats={"A": "csr"}, tuning=OFF)
    A, rng = _matrix(), np.random.default_rng(1)
    for _ in range(4):
        x = KINDS[kind](rng.standard_normal(A.shape[1]))
        got, want = on(A=A, x=x), off(A=A, x=x)
        assert got.dtype == want.dtype and np.array_equal(got, want)
        np.testing.assert_allclose(got, A @ x.astype(np.float64), rtol=1e-12, atol=1e-12)
    assert _in_c(on._plan) and not _in_c(off._plan)
    x[...] = 3                                      # written in place: read afresh
    np.testing.assert_array_equal(on(A=A, x=x), off(A=A, x=x))


def test_the_cast_plan_misses_what_a_dense_plan_reads_as_it_is():
    kern = ep.compile(SPMV, formats={"A": "csr"}, name="casts_and_dense")
    A, rng = _matrix(seed=2), np.random.default_rng(2)
    strided = KINDS["strided"](rng.standard_normal(A.shape[1]))
    kern(A=A, x=strided)
    cast = kern._plan
    assert _in_c(cast)
    x = rng.standard_normal(A.shape[1])
    assert cast({"A": A, "x": x}) is MISS               # C-contiguous: a Dense's kind
    assert cast({"A": A, "x": KINDS["float32"](x)}) is MISS      # another given dtype
    for y in (x, strided, x, KINDS["reversed"](x), x):            # alternating kinds
        np.testing.assert_allclose(kern(A=A, x=y), A @ y, rtol=1e-12, atol=1e-12)
    plans = kern._plans[("A", "x", sp.csr_array, np.ndarray)]
    assert cast in plans and len(plans) == 2 and all(_in_c(p) for p in plans)


def test_a_cast_of_an_array_for_a_kernel_stored_in_another_order():
    """float32 in Fortran order: the class plans M stored (1, 0); its copy is made in
    that order (an order-2 cast's loop nest in the kernel's storage order)."""
    i, j = ep.indices("i j")
    kern = ep.compile(ep.sum(j, ep.tensor("M", 2)[i, j] * ep.tensor("x", 1)[j]),
                      name="cast_fortran")
    rng = np.random.default_rng(3)
    for _ in range(4):
        a = rng.standard_normal((9, 7))
        for m in (np.asfortranarray(a.astype(np.float32)), np.asfortranarray(a)):
            v = rng.standard_normal(7)
            np.testing.assert_allclose(kern(M=m, x=v), m.astype(np.float64) @ v, rtol=1e-12)


def test_nan_and_bad_sizes_are_still_refused():
    low = ep.compile(SPMV, formats={"A": "csr"}, semiring="min_plus")
    A, rng = _matrix(seed=4), np.random.default_rng(4)
    w = np.abs(rng.standard_normal(A.shape[1]))
    for _ in range(2):
        low(A=A, x=KINDS["float32 strided"](w))
    assert _in_c(low._plan)
    bad = KINDS["float32 strided"](w)
    bad[5] = np.nan
    with pytest.raises(ep.InputError, match="NaN"):
        low(A=A, x=bad)
    with pytest.raises(ep.InputError):
        low(A=A, x=KINDS["float32 strided"](np.ones(A.shape[1] + 1)))


@pytest.mark.parametrize("keep", [64, None])
def test_threads_calling_at_once_do_not_share_a_scratch(keep):
    """keep: 64 bytes, every copy a new buffer (none kept); None: the default, one
    scratch kept, a call finding it held by another thread's makes its own."""
    tuning = None if keep is None else {"keep_call_bytes": keep}
    kern = ep.compile(SPMV, formats={"A": "csr"}, tuning=tuning)
    A, rng = _matrix(400, 300, seed=5), np.random.default_rng(5)
    xs = [KINDS["strided"](rng.standard_normal(A.shape[1])) for _ in range(8)]
    wants = [A @ x for x in xs]
    kern(A=A, x=xs[0])
    assert _in_c(kern._plan)
    errors = []

    def work(k):
        for r in range(200):
            q = (k + r) % len(xs)
            if not np.allclose(kern(A=A, x=xs[q]), wants[q], rtol=1e-12, atol=1e-12):
                errors.append(q)
    assert not run_threads(work, 4) and not errors
