"""A scipy csr/csc input whose values are of another dtype than the semiring's carrier
(float32 values beside a float64 x, integers, real values in a complex call) is bound
over its own index arrays with its values cast as `Semiring.cast` makes them
(runtime.scipy_arrays.carried), in the general path, the Python call plan and the C
binder (`dense_cast`'s scratch, `sparse` in binder_inputs.c.j2), where it was
rebuilt into a Tensor on every call. Each answers as scipy's own upcast does, reads
values written in place between calls, refuses NaN where the semiring does, and a
cast that could round (int64 into float64) is checked value by value on every call,
as the general path's is."""
import functools

import numpy as np
import pytest
import scipy.sparse as sp

import etchpy as ep
from etchpy.errors import InputError
from etchpy.runtime import binder
from etchpy.runtime.scipy_arrays import carries

pytestmark = pytest.mark.usefixtures("shared_cache")

SPMV = "y[pos] = A[pos, out] * x[out]"          # names the generated code uses
MERGE = "C[row, n] = A[row, n] + B[row, n]"
TUNINGS = {"binder": {}, "python plan": {"call_binder": False},
           "no binder casts": {"binder_casts": False}}
DTYPES = (np.float32, np.int32, np.int16, np.uint8, np.uint32, np.bool_)


def _matrix(dtype, layout="csr", n=70, m=50, seed=0):
    A = sp.random_array((n, m), density=0.2, format=layout, random_state=seed)
    A.data = np.round(A.data * 100 - 20).astype(dtype) if dtype != np.float32 else (
        A.data.astype(np.float32))
    return A


@pytest.mark.parametrize("tuning", sorted(TUNINGS))
@pytest.mark.parametrize("layout", ["csr", "csc"])
@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
def test_values_of_another_dtype_answer_as_scipy_calls_after_calls(dtype, layout, tuning):
    kern = ep.compile(SPMV, formats={"A": layout}, tuning=TUNINGS[tuning])
    A, rng = _matrix(dtype, layout), np.random.default_rng(1)
    assert carries(A.data.dtype, kern.semiring)
    for _ in range(4):                   # the general call, then its plan
        x = rng.standard_normal(A.shape[1])
        got = kern(A=A, x=x)
        assert got.dtype == np.float64
        np.testing.assert_allclose(got, A.astype(np.float64) @ x, rtol=1e-12, atol=1e-12)
    assert kern._plans, "the cast kind has a plan"
    A.data[:] = A.data[::-1]                  # values written in place: read afresh
    np.testing.assert_allclose(kern(A=A, x=x), A.astype(np.float64) @ x, rtol=1e-12,
                               atol=1e-12)
    assert A.data.dtype == dtype              # the input is never modified


def test_the_binder_runs_the_cast_in_c_and_the_python_plan_without_it():
    on = ep.compile(SPMV, formats={"A": "csr"}, name="values_cast_on")
    off = ep.compile(SPMV, formats={"A": "csr"}, tuning={"binder_casts": False},
                     name="values_cast_off")
    A, x = _matrix(np.float32), np.linspace(-1, 1, 50)
    for _ in range(3):
        assert np.array_equal(on(A=A, x=x), off(A=A, x=x))
    if binder.module() is not None:
        assert type(on._plan) is functools.partial          # the binder's
    assert type(off._plan) is not functools.partial


@pytest.mark.parametrize("tuning", sorted(TUNINGS))
def test_a_grown_output_over_cast_values(tuning):
    kern = ep.compile(MERGE, formats={"A": "csr", "B": "csr"}, output="csr",
                      tuning=TUNINGS[tuning])
    A, B = _matrix(np.float32, seed=3), _matrix(np.int32, seed=4)   # float64 holds both
    for _ in range(3):
        got = kern(A=A, B=B)
        want = A.astype(np.float64) + B.astype(np.float64)
        assert got.dtype == np.float64 and abs(sp.csr_array(got) - want).max() == 0


@pytest.mark.parametrize("tuning", sorted(TUNINGS))
def test_nan_in_cast_values_is_refused_by_a_semiring_that_refuses_it(tuning):
    kern = ep.compile(SPMV, formats={"A": "csr"}, semiring="min_plus",
                      tuning=TUNINGS[tuning])
    A, x = _matrix(np.float32, seed=5), np.linspace(0, 1, 50)
    want = np.full(A.shape[0], np.inf)
    for r in range(A.shape[0]):
        lo, hi = A.indptr[r], A.indptr[r + 1]
        if hi > lo:
            want[r] = np.min(A.data[lo:hi].astype(np.float64) + x[A.indices[lo:hi]])
    for _ in range(3):
        np.testing.assert_array_equal(kern(A=A, x=x), want)
    A.data[2] = np.nan
    with pytest.raises(InputError, match="A"):
        kern(A=A, x=x)


def test_real_values_in_a_complex_call_and_an_unsorted_input():
    kern = ep.compile(SPMV, formats={"A": "csr"})
    A = _matrix(np.float32, seed=6)
    U = sp.csr_array((A.data[::-1].copy(), A.indices.copy(), A.indptr.copy()), shape=A.shape)
    for r in range(U.shape[0]):                      # each row's columns reversed
        lo, hi = U.indptr[r], U.indptr[r + 1]
        U.indices[lo:hi] = U.indices[lo:hi][::-1].copy()
    U.has_sorted_indices = False
    z = np.linspace(-1, 1, 50) * (1 - 2j)
    for M in (A, U, A, U):
        got = kern(A=M, x=z)
        assert got.dtype == np.complex128
        np.testing.assert_allclose(got, M.astype(np.complex128) @ z, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("tuning", sorted(TUNINGS))
@pytest.mark.parametrize("dtype", [np.int64, np.uint64])
def test_64_bit_integers_are_cast_and_checked_on_every_call(dtype, tuning):
    """float64 holds an integer past 2**53 only where it has trailing zeros: the cast
    is Semiring.cast's checked one in every route (the binder's C tests each value
    comes back), so such a value in a scipy input's values or in a vector is an
    InputError naming it on a planned call as on the first, never rounded."""
    kern = ep.compile(SPMV, formats={"A": "csr"}, tuning=TUNINGS[tuning],
                      name=f"checked_{np.dtype(dtype).name}_{tuning.replace(' ', '_')}")
    A = _matrix(np.uint8, seed=7)
    A.data = A.data.astype(dtype)
    x = np.linspace(-1, 1, 50)
    for _ in range(3):
        np.testing.assert_allclose(kern(A=A, x=x), A.astype(np.float64) @ x, rtol=1e-12)
    assert kern._plans
    A.data[1] = 2 ** 53 + 2 ** 11                 # exact: trailing zeros
    np.testing.assert_allclose(kern(A=A, x=x), A.astype(np.float64) @ x, rtol=1e-12)
    A.data[1] = 2 ** 53 + 1                       # no exact double
    with pytest.raises(InputError, match="A"):
        kern(A=A, x=x)
    F, v = A.astype(np.float64) / 2 ** 60, np.arange(50).astype(dtype)
    for _ in range(3):
        np.testing.assert_allclose(kern(A=F, x=v), F @ v.astype(np.float64), rtol=1e-12)
    v[3] = 2 ** 63 + 1 if dtype == np.uint64 else -(2 ** 62) - 1
    with pytest.raises(InputError, match="x"):
        kern(A=F, x=v)


def test_64_bit_integers_into_a_complex_call_are_checked_too():
    kern = ep.compile(SPMV, formats={"A": "csr"}, name="checked_complex")
    A, z = _matrix(np.int64, seed=10), np.linspace(-1, 1, 50) * (1 + 1j)
    for _ in range(3):
        np.testing.assert_allclose(kern(A=A, x=z), A.astype(np.complex128) @ z, rtol=1e-12)
    A.data[0] = 2 ** 53 + 1
    with pytest.raises(InputError, match="A"):
        kern(A=A, x=z)


def _complex(A, dtype):
    """A with complex values of `dtype` (an imaginary part in every entry)."""
    C = A.astype(dtype)
    C.data = C.data * dtype(1 - 0.5j)
    return C


@pytest.mark.parametrize("pair", ["complex64 A, complex128 x", "float32 A, complex128 x",
                                  "complex128 A, float32 x", "complex128 A, int16 x"])
def test_complex_carriers_cast_in_c_bit_for_bit_as_the_python_plan(pair):
    """Into a complex carrier the binder writes each value as its two parts (a real
    source's imaginary part 0), for a scipy input's values and a numpy input alike."""
    a_kind, x_kind = (part.split()[0] for part in pair.split(", "))
    on = ep.compile(SPMV, formats={"A": "csr"}, name="complex_casts_on")
    off = ep.compile(SPMV, formats={"A": "csr"}, tuning={"binder_casts": False},
                     name="complex_casts_off")
    A, rng = _matrix(np.float32, seed=8), np.random.default_rng(8)
    A = _complex(A, np.dtype(a_kind).type) if a_kind.startswith("complex") else A
    for _ in range(3):
        x = rng.standard_normal(50) * 8
        x = (x * (1 + 2j)).astype(x_kind) if x_kind.startswith("complex") else x.astype(x_kind)
        got, want = on(A=A, x=x), off(A=A, x=x)
        assert got.dtype == np.complex128 and np.array_equal(got, want)
        np.testing.assert_allclose(got, A.astype(np.complex128) @ x.astype(np.complex128),
                                   rtol=1e-6, atol=1e-6)
    if binder.module() is not None:
        assert type(on._plan) is functools.partial


def test_boolean_values_read_as_numpy_casts_them_any_nonzero_byte_one():
    """A boolean byte 2 is True to numpy (its cast gives 1): the binder's C cast reads
    any nonzero byte as 1 too, bit for bit as the Python plan's astype."""
    on = ep.compile(SPMV, formats={"A": "csr"}, name="bool_values_on")
    off = ep.compile(SPMV, formats={"A": "csr"}, tuning={"binder_casts": False},
                     name="bool_values_off")
    A, x = _matrix(np.bool_, seed=9), np.linspace(1, 2, 50)
    A.data.view(np.uint8)[::2] *= 2               # bytes 2: True to numpy
    for _ in range(3):
        got = on(A=A, x=x)
        assert np.array_equal(got, off(A=A, x=x))
        np.testing.assert_allclose(got, A.astype(np.float64) @ x, rtol=1e-12)
    if binder.module() is not None:
        assert type(on._plan) is functools.partial


@pytest.mark.parametrize("tuning", sorted(TUNINGS))
@pytest.mark.parametrize("dtype", [np.float32, np.int64, np.bool_], ids=lambda d: np.dtype(d).name)
def test_a_coo_input_of_another_dtype_is_cast_not_rebuilt(dtype, tuning):
    """A scipy coo input of a coo tensor (coo_inputs.as_is, coo_steps.coo_step): its
    values cast beside its own coordinates, checked where the cast may round; a
    pydata COO of float32 answers too (its general path)."""
    kern = ep.compile("y[pos] = A[pos, out] * x[out]", formats={"A": "coo"},
                      tuning=TUNINGS[tuning], name=f"coo_cast_{tuning.replace(' ', '_')}")
    A = _matrix(dtype, seed=11).tocoo()
    x = np.linspace(-1, 1, 50)
    for _ in range(3):
        np.testing.assert_allclose(kern(A=A, x=x), A.astype(np.float64) @ x, rtol=1e-6)
    assert kern._plans
    A.data[0] = not A.data[0] if dtype == np.bool_ else A.data[0] * 3   # in place: read
    np.testing.assert_allclose(kern(A=A, x=x), A.astype(np.float64) @ x, rtol=1e-6)
    if dtype == np.int64:
        A.data[1] = 2 ** 53 + 1
        with pytest.raises(InputError, match="A"):
            kern(A=A, x=x)
    sparse = pytest.importorskip("sparse")
    P = sparse.COO.from_scipy_sparse(_matrix(np.float32, seed=12))
    np.testing.assert_allclose(kern(A=P, x=x), P.to_scipy_sparse().astype(np.float64) @ x,
                               rtol=1e-6)


def test_a_tensor_of_another_dtype_keeps_its_cast_copy_and_reads_writes():
    """An ep.Tensor of float32 values in a float64 call: its cast copy is made once and
    kept on it (inputs._recast: not validated again), its values cast into it on every
    call, so values written through `T.vals`, or through a view still held, are read."""
    kern = ep.compile(SPMV, formats={"A": "csr"}, name="tensor_recast")
    T, x = ep.Tensor.from_scipy(_matrix(np.float32, seed=13), "csr"), np.linspace(-1, 1, 50)

    def want():
        return T.to_dense().astype(np.float64) @ x
    w = want()                                  # to_dense hands its values out once
    np.testing.assert_allclose(kern(A=T, x=x), w, rtol=1e-6)
    made = [hit[1] for hit in T.__dict__["_etchpy_recast"].values()]
    for _ in range(3):
        np.testing.assert_allclose(kern(A=T, x=x), w, rtol=1e-6)
    assert [hit[1] for hit in T.__dict__["_etchpy_recast"].values()] == made   # made once
    v = T.vals
    v[0] = 100
    np.testing.assert_allclose(kern(A=T, x=x), want(), rtol=1e-6)
    v[1] = -7                                   # through a view still held
    np.testing.assert_allclose(kern(A=T, x=x), want(), rtol=1e-6)
    del v
    T.vals[2] = 5
    np.testing.assert_allclose(kern(A=T, x=x), want(), rtol=1e-6)
