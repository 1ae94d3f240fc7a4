"""The C binder of call plans (runtime.binder) answers as the plan's Python does:
the same values, MISS where the Python misses (so the general path words the same
errors), for every input of a sequence of calls, malformed ones included; and it
holds no input between calls."""
import gc
import weakref

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st

import etchpy as ep
from etchpy.errors import InputError
from etchpy.runtime import binder, fingerprint
from etchpy.runtime.call_plans import MISS

pytestmark = [pytest.mark.usefixtures("shared_cache"),
              pytest.mark.skipif(binder.module() is None, reason="no binder on this machine")]

SPMV = "y[i] = A[i, j] * x[j]"
OFF = {"call_binder": False}


def _pair(expr, **options):
    """(kernel with the binder, the same kernel with the plan's Python)."""
    on = ep.compile(expr, **options)
    off = ep.compile(expr, **options, tuning={**options.pop("tuning", {}), **OFF})
    return on, off


def _outcome(kern, inputs):
    try:
        return ("value", np.asarray(kern(**inputs)))
    except InputError as exc:
        return ("error", type(exc))


def _same(a, b):
    assert a[0] == b[0]
    if a[0] == "value":
        assert a[1].dtype == b[1].dtype and a[1].shape == b[1].shape
        np.testing.assert_allclose(a[1], b[1], rtol=1e-12)
    else:
        assert a[1] is b[1]


def _csr(n, m, seed, fmt="csr", idx=np.int32, dtype=np.float64):
    A = sp.random_array((n, m), density=0.3, format=fmt, random_state=seed, dtype=dtype)
    A.indptr, A.indices = A.indptr.astype(idx), A.indices.astype(idx)
    return A


def test_the_binder_runs_the_plans_it_covers():
    on, off = _pair(SPMV, formats={"A": "csr"})
    A, x = _csr(6, 5, 0), np.ones(5)
    on(A=A, x=x), off(A=A, x=x)
    assert type(on._plan).__name__ == "partial" and type(off._plan).__name__ == "function"


@pytest.mark.parametrize("fmt", ["csr", "csc"])
@pytest.mark.parametrize("idx", [np.int32, np.int64])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_sparse_inputs_answer_as_the_python_plan(fmt, idx, dtype):
    on, off = _pair(SPMV, formats={"A": fmt})
    rng = np.random.default_rng(2)
    for seed in range(4):
        A, x = _csr(9, 7, seed, fmt, idx, dtype), rng.random(7).astype(dtype)
        _same(_outcome(on, dict(A=A, x=x)), _outcome(off, dict(A=A, x=x)))
        np.testing.assert_allclose(on(A=A, x=x), A @ x, rtol=1e-5)


def test_dense_scalar_and_order_3_outputs():
    for expr, shapes in [("y[i] = A[i, j] * x[j]", {"A": (4, 4), "x": (4,)}),
                         ("s = x[i] * z[i]", {"x": (9,), "z": (9,)}),
                         ("T[i, j, k] = X[i, j, l] * U[l, k]", {"X": (3, 4, 5), "U": (5, 2)})]:
        on, off = _pair(expr)
        rng = np.random.default_rng(3)
        for _ in range(3):
            ins = {k: rng.random(s) for k, s in shapes.items()}
            a, b = _outcome(on, ins), _outcome(off, ins)
            _same(a, b)
        assert type(on._plan).__name__ == "partial"


def _mutations(A, x):
    """Inputs a plan must miss or the kernel must refuse, each beside the last good."""
    bad_end = A.copy(); bad_end.indptr = bad_end.indptr.copy(); bad_end.indptr[-1] -= 1
    far = A.copy(); far.indices = far.indices.copy(); far.indices[0] = 10_000
    neg = A.copy(); neg.indices = neg.indices.copy(); neg.indices[-1] = -1
    unsorted = A.copy(); unsorted.indices = unsorted.indices.copy()
    row = int(np.argmax(np.diff(A.indptr)))
    lo, hi = A.indptr[row], A.indptr[row + 1]
    unsorted.indices[lo:hi] = unsorted.indices[lo:hi][::-1].copy()
    unsorted.data[lo:hi] = unsorted.data[lo:hi][::-1].copy()
    nan = A.copy(); nan.data = nan.data.copy(); nan.data[0] = np.nan
    return [dict(A=A, x=x), dict(A=bad_end, x=x), dict(A=A, x=x), dict(A=far, x=x),
            dict(A=neg, x=x), dict(A=unsorted, x=x), dict(A=nan, x=x),
            dict(A=A, x=x.astype(np.float32)), dict(A=A, x=x[::2].copy()),
            dict(A=A, x=np.ascontiguousarray(np.stack([x, x]).T)[:, 0]),
            dict(A=A, x=x.astype(">f8")), dict(A=A, x=x), dict(A=A.tocoo(), x=x),
            dict(A=A, x=x, z=x), dict(A=A), dict(A=A, x=x)]


@pytest.mark.parametrize("semiring", ["real", "min_plus"])
def test_malformed_and_other_inputs_get_the_general_paths_answer(semiring):
    on, off = _pair(SPMV, formats={"A": "csr"}, semiring=semiring)
    A, x = _csr(12, 10, 5), np.arange(10.0)
    for inputs in _mutations(A, x):
        a, b = _outcome_any(on, inputs), _outcome_any(off, inputs)
        _same(a, b)


def _outcome_any(kern, inputs):
    try:
        return _outcome(kern, inputs)
    except (TypeError, ValueError) as exc:          # e.g. a missing input
        return ("error", type(exc))


@settings(max_examples=25, deadline=None)
@given(st.lists(st.tuples(st.integers(1, 40), st.integers(1, 40), st.integers(0, 3),
                          st.sampled_from(["csr", "csc"])), min_size=1, max_size=6))
def test_call_sequences_agree(calls):
    on, off = _pair(SPMV, formats={"A": "csr"})
    for n, m, seed, fmt in calls:
        A = _csr(n, m, seed, fmt)
        x = np.random.default_rng(seed).random(m)
        _same(_outcome(on, dict(A=A, x=x)), _outcome(off, dict(A=A, x=x)))


def test_the_binder_holds_no_input():
    kern = ep.compile(SPMV, formats={"A": "csr"}, name="binder_holds_nothing")
    A, x = _csr(300, 303, 1), np.ones(303)
    kern(A=A, x=x), kern(A=A, x=x)
    gone = (weakref.ref(A), weakref.ref(A.data), weakref.ref(x))
    kern(A=A, x=x)
    del A, x
    gc.collect()
    assert all(ref() is None for ref in gone)


def test_a_kernel_error_is_a_miss():
    kern = ep.compile(SPMV, formats={"A": "csr"})
    A, x = _csr(8, 8, 2), np.ones(8)
    kern(A=A, x=x), kern(A=A, x=x)
    far = A.copy()
    far.indices = far.indices.copy()
    far.indices[0] = 9          # in range for the size class, out of range for m
    assert kern._plan(dict(A=far, x=x)) is MISS
    with pytest.raises(InputError, match="A"):
        kern(A=far, x=x)


def _tensor_cases(A):
    """Tensors a csr plan must answer or miss as the plan's Python does."""
    good = ep.Tensor.from_scipy(A, "csr")
    csc = ep.Tensor.from_scipy(A, "csc")
    retyped = ep.Tensor.from_scipy(A, "csr")
    retyped.vals.dtype = np.int64                 # in place: the layout check refuses it
    reshaped = ep.Tensor.from_scipy(A, "csr")
    reshaped.levels[1]["crd"].shape = (1, -1)
    filled = ep.Tensor(A.shape, "csr", [{}, {"pos": A.indptr, "crd": A.indices}], A.data,
                       fill=np.nan)
    small = ep.Tensor.from_scipy(A[:3], "csr")
    return [good, csc, good, retyped, good, reshaped, filled, small, good]


@pytest.mark.parametrize("fmt, cases", [("csr", "_tensor_cases"), ("coo", "_coo_cases")])
def test_tensor_and_coo_inputs_answer_as_the_python_plan(fmt, cases):
    """Each input of the sequence (its first, good, one last) answered as the plan's
    Python answers it; the binder runs the plan."""
    on, off = _pair(SPMV, formats={"A": fmt})
    A, x = _csr(12, 10, 7), np.arange(10.0)
    inputs = globals()[cases](A)
    for M in inputs:
        _same(_outcome_any(on, dict(A=M, x=x)), _outcome_any(off, dict(A=M, x=x)))
    on(A=inputs[0], x=x)
    assert type(on._plan).__name__ == "partial"


def test_tensor_inputs_of_order_3():
    expr = "y[i, j] = X[i, j, k] * z[k]"
    on, off = _pair(expr, formats={"X": "csf"})
    rng = np.random.default_rng(4)
    for seed in range(3):
        coords = np.unique(rng.integers(0, 6, size=(40, 3)), axis=0).T
        X = ep.Tensor.from_coords(coords, rng.random(coords.shape[1]), (6, 6, 6), "csf")
        z = rng.random(6)
        _same(_outcome(on, dict(X=X, z=z)), _outcome(off, dict(X=X, z=z)))
    assert type(on._plan).__name__ == "partial"


def _coo_cases(A):
    """coo inputs a plan must answer or miss as the plan's Python does."""
    good = A.tocoo()
    good.sum_duplicates()
    swapped = good.copy()
    swapped.coords = (good.coords[0].copy(), good.coords[1].copy())
    swapped.coords[1][[0, 1]] = swapped.coords[1][[1, 0]]
    repeated = good.copy()
    repeated.coords = (good.coords[0].copy(), good.coords[1].copy())
    repeated.coords[0][1], repeated.coords[1][1] = good.coords[0][0], good.coords[1][0]
    far = good.copy()
    far.coords = (good.coords[0].copy(), good.coords[1].copy())
    far.coords[1][-1] = 10_000
    wide = good.copy()
    wide.coords = tuple(c.astype(np.int64) for c in good.coords)
    return [good, swapped, good, repeated, far, wide, good, A, good]




def _coo_n_cases(good):
    """coo inputs of good's order (scipy's n-d coo_array) a plan must answer or miss
    as the plan's Python does: out of order, repeated, out of range, int64, fewer."""
    def made(change):                 # written in place after scipy's checks
        M = good.copy()
        M.coords = tuple(c.copy() for c in good.coords)
        change(M.coords)
        return M

    def swap(c):
        c[-1][[0, 1]], c[0][[0, 1]] = c[-1][[1, 0]], c[0][[1, 0]]

    def repeat(c):
        for m in range(len(c)):
            c[m][1] = c[m][0]

    def far(c):
        c[-1][-1] = 10_000
    wide = sp.coo_array((good.data, tuple(c.astype(np.int64) for c in good.coords)),
                        shape=good.shape)
    fewer = sp.coo_array((good.data[:3], tuple(c[:3] for c in good.coords)), shape=good.shape)
    return [good, made(swap), good, made(repeat), made(far), wide, fewer, good]


@pytest.mark.parametrize("expr, shape", [("y[i, j] = X[i, j, k] * z[k]", (5, 6, 7)),
                                         ("y[j] = X[i, j, k, l] * z[l]", (3, 4, 2, 7)),
                                         ("y[] = X[k] * z[k]", (7,))])
def test_coo_inputs_of_other_orders_answer_as_the_python_plan(expr, shape):
    """scipy and pydata coo inputs of order 1, 3 and 4 (coo_steps.coo_step_n; the
    binder's `coo` of in->ndim modes), a sequence of good and malformed ones."""
    on, off = _pair(expr, formats={"X": "coo"})
    rng = np.random.default_rng(len(shape))
    dense = rng.random(shape) * (rng.random(shape) < 0.4)
    dense.flat[0] = dense.flat[-1] = 1.0              # an entry at each end
    z = rng.random(shape[-1])
    good = sp.coo_array(dense)
    good.coords = tuple(c.astype(np.int32) for c in good.coords)
    cases = _coo_n_cases(good)
    sparse = pytest.importorskip("sparse")
    S = sparse.COO.from_numpy(dense)
    filled = sparse.COO(S.coords, S.data, shape=S.shape, fill_value=np.nan)
    fortran = sparse.COO(np.asfortranarray(S.coords), S.data, shape=S.shape)
    cases += [S, filled, S, fortran, S]
    spec = "".join("ijkl"[:len(shape) - 1]) + "z," + "z->"
    for M in cases:
        got = _outcome_any(on, dict(X=M, z=z))
        _same(got, _outcome_any(off, dict(X=M, z=z)))
        if got[0] == "value":                   # and the right one
            full = M.toarray() if sp.issparse(M) else M.todense()
            np.testing.assert_allclose(got[1].sum(), np.einsum(spec, full, z).sum())
    on(X=good, z=z)
    assert type(on._plan).__name__ == "partial"


def test_pydata_coo_inputs_answer_as_the_python_plan():
    sparse = pytest.importorskip("sparse")
    on, off = _pair(SPMV, formats={"A": "coo"})
    A, x = _csr(14, 11, 9), np.arange(11.0)
    for M in [sparse.COO.from_scipy_sparse(A), sparse.COO.from_scipy_sparse(2 * A),
              sparse.COO.from_scipy_sparse(A[:5])]:
        _same(_outcome_any(on, dict(A=M, x=x)), _outcome_any(off, dict(A=M, x=x)))


def test_pydata_gcxs_inputs_answer_as_the_python_plan():
    sparse = pytest.importorskip("sparse")
    on, off = _pair(SPMV, formats={"A": "csr"})
    A, x = _csr(14, 11, 10), np.arange(11.0)
    cases = [sparse.GCXS.from_scipy_sparse(A), sparse.GCXS.from_scipy_sparse(3 * A),
             sparse.GCXS.from_scipy_sparse(A.tocsc()), sparse.GCXS.from_scipy_sparse(A)]
    filled = sparse.GCXS.from_scipy_sparse(A)
    cases.insert(2, sparse.GCXS((filled.data, filled.indices, filled.indptr), shape=A.shape,
                                compressed_axes=(0,), fill_value=1.0))
    for M in cases:
        _same(_outcome_any(on, dict(A=M, x=x)), _outcome_any(off, dict(A=M, x=x)))
    on(A=cases[0], x=x)
    assert type(on._plan).__name__ == "partial"


def test_the_binder_key_covers_every_binder_template():
    """The binder's cache key holds its templates' (path, size, mtime) as the
    package fingerprint read them: every template it includes, so an edit of any
    of them builds it again."""
    folder = fingerprint.template_folder()
    on_disk = sorted(p.name for p in folder.glob("binder*.c.j2"))
    assert sorted(binder._TEMPLATES) == on_disk
    key = binder._templates_key()
    assert all(repr(str(folder / name)) in key for name in on_disk)
