"""Dense numpy inputs read in the order their buffer holds them (Tuning.dense_orders,
runtime.dense_orders): a Fortran-order array, a transposed view, any view whose
strides are a permutation of a contiguous layout's, runs a kernel planned with its
tensor declared dense in that mode order, over the array's own buffer (no copy);
other layouts (strided, negative strides, other dtypes) are copied as before. Calls
alternating layouts on one kernel answer as numpy each time, and each layout runs
its own plan: a C-order array is never caught by the plan made for a Fortran one."""
import warnings

import numpy as np
import pytest
from hypothesis import given, strategies as st

import etchpy as ep
from etchpy.runtime import dense_orders
from etchpy.runtime.call_plans import MISS

pytestmark = pytest.mark.usefixtures("shared_cache")

i, j, k, l = ep.indices("i j k l")
M, N, x = ep.tensor("M", 2), ep.tensor("N", 2), ep.tensor("x", 1)
T = ep.tensor("T", 3)
MATVEC = ep.sum(j, M[i, j] * x[j])
MATMUL = ep.sum(k, M[i, k] * N[k, j])
ELEMENTWISE = M[i, j] * N[i, j] + M[i, j]
CONTRACT3 = ep.sum(k, T[i, j, k] * x[k])
OFF = {"dense_orders": False}
# layouts of a 2-d operand of shape (n, m): each a function of a C-order array of it
LAYOUTS = {
    "C": lambda a: a,
    "F": np.asfortranarray,
    "T": lambda a: a.T.copy().T,                        # a transposed view of a C array
    "strided": lambda a: np.repeat(a, 2, axis=0)[::2],
    "negative": lambda a: a[::-1].copy()[::-1],
    "both_negative": lambda a: np.asfortranarray(a)[::-1, ::-1].copy()[::-1, ::-1],
    "float32": lambda a: np.asfortranarray(a.astype(np.float32)),
    "int64": lambda a: np.asfortranarray(np.round(a * 4).astype(np.int64)),
    "bool": lambda a: np.asfortranarray(a > 0),
}
CASTS = ("float32", "int64", "bool")


def _exact(a):
    """The values numpy computes from `a` as the kernel reads them (float64)."""
    return np.asarray(a, dtype=np.float64)


def test_stored_order_names_permuted_contiguous_layouts_only():
    a = np.arange(24.0).reshape(2, 3, 4)
    assert dense_orders.stored_order(a) is None
    assert dense_orders.stored_order(np.asfortranarray(a)) == (2, 1, 0)
    assert dense_orders.stored_order(a.transpose(1, 0, 2)) == (1, 0, 2)
    assert dense_orders.stored_order(a[:, :, ::2]) is None         # strided
    assert dense_orders.stored_order(a[::-1]) is None              # negative strides
    assert dense_orders.stored_order(a[0].T) == (1, 0)
    assert dense_orders.stored_order(np.ones(5)) is None
    v = dense_orders.readable_in(a.transpose(2, 0, 1), (1, 2, 0))
    assert v is not None and np.shares_memory(v, a)
    assert np.array_equal(v, a.ravel())


@pytest.mark.parametrize("tuning", [None, OFF])
@given(st.lists(st.sampled_from(sorted(LAYOUTS)), min_size=2, max_size=8),
       st.sampled_from([(3, 5), (7, 7), (33, 20)]), st.integers(0, 2 ** 16))
def test_alternating_layouts_answer_as_numpy(tuning, layouts, shape, seed):
    rng = np.random.default_rng(seed)
    kernels = _kernels(tuning)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ep.PerformanceWarning)
        for name in layouts:
            a = rng.standard_normal(shape)
            b = rng.standard_normal(shape[::-1])
            c = rng.standard_normal(shape)
            v = rng.standard_normal(shape[1])
            A = LAYOUTS[name](a)         # a cast A only (all float32: real32's; bool: boolean's)
            B, C = (LAYOUTS["F" if name in CASTS else name](z) for z in (b, c))
            got = kernels["mv"](M=A, x=v)
            np.testing.assert_allclose(got, _exact(A) @ v, rtol=1e-9, atol=1e-9)
            got = kernels["mm"](M=A, N=B)
            np.testing.assert_allclose(got, _exact(A) @ _exact(B), rtol=1e-9, atol=1e-9)
            got = kernels["ew"](M=A, N=C)
            want = _exact(A) * _exact(C) + _exact(A)
            np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)


_KERNELS = {}


def _kernels(tuning):
    key = repr(tuning)
    if key not in _KERNELS:
        _KERNELS[key] = {"mv": ep.compile(MATVEC, tuning=tuning),
                         "mm": ep.compile(MATMUL, tuning=tuning),
                         "ew": ep.compile(ELEMENTWISE, tuning=tuning)}
    return _KERNELS[key]


@pytest.mark.parametrize("semiring", ["min_plus", "integer"])
def test_exact_semirings_are_bit_equal_to_the_c_order_path(semiring):
    """Where ⊕ is exact (min, integer sums) every layout's answer is the C-order
    array's, bit for bit; float sums may be added in another order (the kernel of
    another loop order, or BLAS's other routine, as numpy's own `a_F @ v`)."""
    rng = np.random.default_rng(1)
    dtype = np.float64 if semiring == "min_plus" else np.int64
    for e in (MATVEC, MATMUL, ELEMENTWISE):
        kern = ep.compile(e, semiring=semiring)
        for _ in range(2):
            a = (rng.standard_normal((9, 6)) * 8).astype(dtype)
            b = (rng.standard_normal((6, 9) if e is MATMUL else (9, 6)) * 8).astype(dtype)
            v = (rng.standard_normal(6) * 8).astype(dtype)
            inputs = (lambda p, q: dict(M=p, x=v)) if e is MATVEC else (
                lambda p, q: dict(M=p, N=q))
            want = kern(**inputs(a, b))
            for f in ("F", "T", "C", "F", "strided", "C"):
                got = kern(**inputs(LAYOUTS[f](a), LAYOUTS[f](b)))
                assert got.dtype == want.dtype and np.array_equal(got, want), f


def test_a_fortran_array_runs_a_kernel_declaring_its_order_over_its_buffer():
    kern = ep.compile(ep.sum(j, M[i, j] * x[j]), name="fortran_matvec")   # its own plans
    rng = np.random.default_rng(2)
    a, v = rng.standard_normal((40, 30)), rng.standard_normal(30)
    with warnings.catch_warnings():
        warnings.simplefilter("error")              # no conversion warned of, none made
        for _ in range(3):
            F = np.asfortranarray(a)
            np.testing.assert_allclose(kern(M=F, x=v), a @ v, rtol=1e-12)
            assert kern._last.tensors["M"].format.mode_order == (1, 0)
            assert kern._plan(dict(M=np.ascontiguousarray(a), x=v)) is MISS   # C: not its kind
            np.testing.assert_allclose(kern(M=a, x=v), a @ v, rtol=1e-12)
            assert kern._last is None or kern._last.tensors["M"].format.mode_order == (0, 1)
            F[0, 0] += 1.0                              # written in place: read afresh
            np.testing.assert_allclose(kern(M=F, x=v), F @ v, rtol=1e-12)
    assert len(kern._plans[("M", "x", np.ndarray, np.ndarray)]) == 2    # one plan a layout


def test_an_order_three_permuted_view_and_the_switch_off():
    rng = np.random.default_rng(3)
    t, v = rng.standard_normal((4, 5, 6)), rng.standard_normal(6)
    on, off = ep.compile(CONTRACT3), ep.compile(CONTRACT3, tuning=OFF)
    views = [t.transpose(2, 0, 1).copy().transpose(1, 2, 0),      # stored order (2, 0, 1)
             np.asfortranarray(t), t]
    for view in views * 2:
        want = np.einsum("ijk,k->ij", t, v)
        np.testing.assert_allclose(on(T=view, x=v), want, rtol=1e-12)
        np.testing.assert_allclose(off(T=view, x=v), want, rtol=1e-12)
        order = dense_orders.stored_order(view)
        assert on._last is None and order is None or (
            on._last.tensors["T"].format.mode_order == (order or (0, 1, 2)))
        assert off._last is None or off._last.tensors["T"].format.mode_order == (0, 1, 2)


def test_bad_fortran_inputs_still_raise():
    kern = ep.compile(MATVEC, semiring="min_plus")       # refuses NaN
    a = np.asfortranarray(np.ones((5, 4)))
    kern(M=a, x=np.ones(4))
    kern(M=np.asfortranarray(np.ones((5, 4))), x=np.ones(4))      # the plan's call
    bad = np.asfortranarray(np.ones((5, 4)))
    bad[2, 1] = np.nan
    with pytest.raises(ep.InputError, match="NaN"):
        kern(M=bad, x=np.ones(4))
    with pytest.raises(ep.InputError):
        kern(M=np.asfortranarray(np.ones((5, 3))), x=np.ones(4))
    with pytest.raises(ep.InputError):
        kern(M=np.asfortranarray(np.ones((5, 4, 2))), x=np.ones(4))


@pytest.mark.parametrize("fmt", ["csr", "coo", "dcsr"])
def test_an_operand_read_at_sparse_coordinates_is_copied_to_rows_not_adopted(fmt):
    """SpMM's X[j, k] in Fortran order: j is read at A's stored coordinates, so stored
    j-innermost each coordinate would read every column's line; it is copied to row
    order (one row a coordinate). An operand no sparse level gathers keeps its order."""
    import scipy.sparse as sp
    S = ep.tensor("S", 2, format=fmt)
    kern = ep.compile(ep.sum(j, S[i, j] * N[j, k]), name=f"gathered_fortran_{fmt}")
    A = sp.random_array((30, 40), density=0.2, format="csr", random_state=4)
    X = np.asfortranarray(np.random.default_rng(4).standard_normal((40, 6)))
    for _ in range(3):
        got = kern(S=ep.Tensor.from_scipy(A, fmt), N=X)
        np.testing.assert_allclose(got, A @ X, rtol=1e-12, atol=1e-12)
        assert kern._last is None or kern._last.tensors["N"].format.mode_order == (0, 1)
    dense = ep.compile(ep.sum(j, M[i, j] * N[j, k]), name="dense_fortran_kept")
    dense(M=np.asfortranarray(X.T), N=X)
    assert dense._last.tensors["N"].format.mode_order == (1, 0)
