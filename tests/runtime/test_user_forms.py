"""Forms a numpy/scipy user writes (bench/user_forms.py), on the paths made for them:
numpy inputs a call casts or copies contiguous get a call plan (Tuning.plan_casts),
a canonical scipy csr/csc of the other layout is transposed by scipy after a full
check (Tuning.scipy_transpose), and ep.evaluate of a statement declares its tensors
in their inputs' sparse formats (Tuning.input_formats). Each path answers as numpy
and scipy do on random inputs, as it does switched off, and bad inputs still raise
ep.InputError."""
import warnings

import numpy as np
import pytest
import scipy.sparse as sp

import etchpy as ep
from etchpy.runtime import statements
from etchpy.runtime.call_plans import MISS

pytestmark = pytest.mark.usefixtures("shared_cache")

SPMV = "y[i] = A[i, j] * x[j]"
OFF = {"plan_casts": False, "scipy_transpose": False, "adopt_layouts": False,
       "input_formats": False}
PY_CASTS = {"binder_casts": False}     # the copies in the plan's Python (the binder's:
                                       # tests/runtime/test_binder_casts.py)
TRANSPOSE = {"adopt_layouts": False}


def _matrix(fmt="csr", n=40, m=37, seed=0, idx=np.int32):
    A = sp.random_array((n, m), density=0.15, format=fmt, random_state=seed)
    if fmt in ("csr", "csc"):
        A.indptr, A.indices = A.indptr.astype(idx), A.indices.astype(idx)
    return A


def _vectors(rng, m):
    """x as a user may pass it: float32, int32, int64, a strided view, a reversed view."""
    base = rng.standard_normal(2 * m)
    return [base[:m].astype(np.float32), rng.integers(-5, 5, m).astype(np.int32),
            rng.integers(-5, 5, m), base[::2], base[m:][::-1]]


def _has_cast_plan(kern):
    """Whether a plan the kernel keeps makes a DenseCast's copy (its lines name it)."""
    return any("contiguous" in getattr(p, "__globals__", ())
               for plans in kern._plans.values() for p in plans)


@pytest.mark.parametrize("tuning", [None, OFF])
def test_cast_and_strided_vectors_answer_as_scipy(tuning):
    kern = ep.compile(SPMV, formats={"A": "csr"}, tuning=tuning)
    rng = np.random.default_rng(3)
    A = _matrix()
    for _ in range(3):                     # new arrays of each kind, every call
        for x in _vectors(rng, A.shape[1]):
            want = A @ x.astype(np.float64)
            got = kern(A=A, x=x)
            assert got.dtype == np.float64
            np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)


def test_a_cast_vector_has_a_plan_that_answers():
    kern = ep.compile(SPMV, formats={"A": "csr"}, tuning=PY_CASTS)
    rng = np.random.default_rng(4)
    A = _matrix(seed=4)
    for x, new in zip(_vectors(rng, A.shape[1]), _vectors(rng, A.shape[1])):
        kern(A=A, x=x)                     # the general call, which makes the plan
        assert _has_cast_plan(kern)
        got = kern._plan({"A": A, "x": new})               # a new array of that kind
        assert got is not MISS
        np.testing.assert_allclose(got, A @ new.astype(np.float64), rtol=1e-12, atol=1e-12)
        new[...] = 0 if new.dtype.kind != "f" else np.float32(7.5)   # changed in place
        np.testing.assert_allclose(kern(A=A, x=new), A @ new.astype(np.float64), rtol=1e-12)


@pytest.mark.parametrize("strided", [False, True])
def test_a_cast_plan_still_refuses_bad_vectors(strided):
    kern = ep.compile(SPMV, formats={"A": "csr"})
    A, rng = _matrix(seed=5), np.random.default_rng(5)
    x = rng.standard_normal(A.shape[1]).astype(np.float32)
    kern(A=A, x=x)
    kern(A=A, x=x[::-1])
    low = ep.compile(SPMV, formats={"A": "csr"}, semiring="min_plus",   # refuses NaN
                     tuning=PY_CASTS)
    w = np.abs(x) if not strided else np.repeat(np.abs(x), 2)[::2]
    np.testing.assert_allclose(low(A=A, x=w), low(A=A, x=w.astype(np.float64)))
    assert _has_cast_plan(low)
    bad = w.copy() if not strided else np.repeat(w, 2)[::2]
    bad[3] = np.nan
    with pytest.raises(ep.InputError, match="NaN"):
        low(A=A, x=bad)
    with pytest.raises(ep.InputError):
        kern(A=A, x=np.ones(A.shape[1] + 1, np.float32))
    real = ep.compile(SPMV, formats={"A": "csr"}, semiring="real")
    real(A=A, x=x)
    with pytest.raises(ep.InputError):
        real(A=A, x=np.ones(A.shape[1], np.complex128) * 1j)
    with pytest.raises(ep.InputError):                 # integral only: 0.5 is refused
        ep.compile(SPMV, formats={"A": "csr"}, semiring="integer")(
            A=_matrix(seed=5).astype(np.int64), x=np.full(A.shape[1], 0.5))


def test_a_contiguous_vector_after_a_strided_one_gets_its_own_plan():
    """A copy plan made for a strided float64 x misses a C-contiguous one (else every
    later call of the kind copied x in the Python plan): that call learns the plan of
    a Dense step, which the calls after it run; both kinds keep answering."""
    kern = ep.compile(SPMV, formats={"A": "csr"}, tuning=PY_CASTS)
    A, rng = _matrix(seed=8), np.random.default_rng(8)
    m = A.shape[1]
    for _ in range(2):
        strided = np.repeat(rng.standard_normal(m), 2)[::2]
        np.testing.assert_allclose(kern(A=A, x=strided), A @ strided, rtol=1e-12)
    assert _has_cast_plan(kern)
    for _ in range(3):
        x = rng.standard_normal(m)
        np.testing.assert_allclose(kern(A=A, x=x), A @ x, rtol=1e-12)
    assert "contiguous" not in getattr(kern._plan, "__globals__", ())   # a Dense's plan
    for x in (strided, x, strided[::-1], x):
        np.testing.assert_allclose(kern(A=A, x=x), A @ x, rtol=1e-12)


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int64])
def test_a_dense_tensor_stored_column_major_takes_no_c_order_copy(dtype):
    """A dense tensor declared with mode order (1, 0): its numpy inputs, C- or
    Fortran-order, of the carrier's dtype or another, answer right on every call (a
    plan's C-order copy would be read transposed, so no copy plan is made for it)."""
    i, j = ep.indices("i j")
    column_major = ep.Format([ep.Dense(), ep.Dense()], mode_order=(1, 0))
    kern = ep.compile(ep.sum(j, ep.tensor("M", 2, column_major)[i, j] * ep.tensor("x", 1)[j]))
    rng = np.random.default_rng(6)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ep.PerformanceWarning)
        for _ in range(3):
            a = (rng.standard_normal((7, 5)) * 4).astype(dtype)
            x = rng.standard_normal(5)
            for m in (np.asfortranarray(a), a, a[:, ::-1].copy()[:, ::-1]):
                np.testing.assert_allclose(kern(M=m, x=x), a.astype(np.float64) @ x,
                                           rtol=1e-12)


@pytest.mark.parametrize("declared,given", [("csr", "csc"), ("csc", "csr")])
@pytest.mark.parametrize("idx", [np.int32, np.int64])
@pytest.mark.parametrize("tuning", [None, TRANSPOSE, OFF])
def test_the_other_compressed_layout_answers_as_scipy(declared, given, idx, tuning):
    kern = ep.compile(SPMV, formats={"A": declared}, tuning=tuning)
    rng = np.random.default_rng(6)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ep.PerformanceWarning)
        for seed in range(4):
            A = _matrix(given, seed=seed, idx=idx)
            x = rng.standard_normal(A.shape[1])
            np.testing.assert_allclose(kern(A=A, x=x), A @ x, rtol=1e-12, atol=1e-12)
            np.testing.assert_allclose(kern(A=A.T.T, x=x), A @ x, rtol=1e-12, atol=1e-12)
        B = _matrix("csr" if given == "csc" else "csc", n=37, m=40, seed=9, idx=idx)
        x = rng.standard_normal(37)
        np.testing.assert_allclose(kern(A=B.T, x=x), B.T @ x, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("tuning", [None, TRANSPOSE])
def test_the_other_layout_unsorted_or_broken(tuning):
    kern = ep.compile(SPMV, formats={"A": "csr"}, tuning=tuning)
    A = _matrix("csc", seed=7)
    x = np.random.default_rng(7).standard_normal(A.shape[1])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ep.PerformanceWarning)
        want = A @ x
        U = A.copy()                                    # each column's rows reversed
        for c in range(U.shape[1]):
            lo, hi = U.indptr[c], U.indptr[c + 1]
            U.indices[lo:hi], U.data[lo:hi] = U.indices[lo:hi][::-1], U.data[lo:hi][::-1]
        np.testing.assert_allclose(kern(A=U, x=x), want, rtol=1e-12)
        kern(A=A, x=x)
        A.indices[2] = A.shape[0] + 5                   # changed in place between calls
        with pytest.raises(ep.InputError):
            kern(A=A, x=x)
        A.indices[2] = -1
        with pytest.raises(ep.InputError):
            kern(A=A, x=x)


def test_an_adopted_layout_runs_a_kernel_declaring_it_and_does_not_warn():
    kern = ep.compile(SPMV, formats={"A": "csr"})
    A = _matrix("csr", seed=13)
    x = np.random.default_rng(13).standard_normal(A.shape[0])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for M in (A.T, sp.csc_array(A.T), sp.csc_matrix(A.T)):
            np.testing.assert_allclose(kern(A=M, x=x), M @ x, rtol=1e-12, atol=1e-12)
            assert _planned(kern).tensors["A"].format.name == "csc"
        y = np.random.default_rng(14).standard_normal(A.shape[1])
        np.testing.assert_allclose(kern(A=A, x=y), A @ y, rtol=1e-12)  # csr: as declared
        assert _planned(kern) is None or _planned(kern).tensors["A"].format.name == "csr"


def _planned(kern):
    """The kernel planned for kern's last call (a size class's known plan, read from
    its manifest when asked: signature.PlannedLater, where another test made it)."""
    last = kern._last
    return last.resolve() if hasattr(last, "resolve") else last


@pytest.mark.parametrize("declared", ["csr", "csc"])
@pytest.mark.parametrize("semiring", ["real", "min_plus"])
def test_a_coo_input_of_a_compressed_tensor(declared, semiring):
    kern = ep.compile(SPMV, formats={"A": declared}, semiring=semiring)
    ref = ep.compile(SPMV, formats={"A": declared}, semiring=semiring,
                     tuning={"adopt_layouts": False})
    rng = np.random.default_rng(17)
    M = _matrix("csr", seed=17)
    x = np.abs(rng.standard_normal(M.shape[1]))
    rows, cols = M.nonzero()
    vals = np.asarray(M[rows, cols]).ravel()
    cases = [sp.coo_array(M), sp.coo_array(sp.csc_array(M)),           # row-, column-major
             sp.coo_array((np.r_[vals, vals[:5]], (np.r_[rows, rows[:5]], np.r_[cols, cols[:5]])),
                          shape=M.shape)]                              # repeated entries
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ep.PerformanceWarning)
        for C in cases:
            np.testing.assert_allclose(kern(A=C, x=x), ref(A=C, x=x), rtol=1e-12, atol=1e-12)
        if semiring == "real":
            np.testing.assert_allclose(kern(A=cases[2], x=x), cases[2].tocsr() @ x, rtol=1e-12)
        bad = sp.coo_array(M)
        bad.col[1] = M.shape[1] + 2                     # out of range
        with pytest.raises(ep.InputError):
            kern(A=bad, x=x)


@pytest.mark.parametrize("out", ["dense", "csr", "csc"])
@pytest.mark.parametrize("given", ["csr", "csc"])
def test_adopted_layouts_of_other_kernels(out, given):
    i, j, k = ep.indices("i j k")
    A, B = (ep.tensor(n, 2, format="csr") for n in "AB")
    exprs = [A[i, j] + B[i, j], A[i, j] * B[i, j], ep.sum(k, A[i, k] * B[k, j]),
             ep.sum(j, A[i, j] * A[j, i])]
    M, N = _matrix(given, 30, 30, seed=15), _matrix(given, 30, 30, seed=16)
    want = [M + N, M * N, M @ N, (M * M.T).sum(axis=1)]
    for e, w in zip(exprs, want):
        if out != "dense" and len(ep.expr.nodes.free_indices(e)) != 2:
            continue
        got = ep.compile(e, output=out)(A=M, B=N) if "B" in str(e) else \
            ep.compile(e, output=out)(A=M)
        got = got.toarray() if sp.issparse(got) else got
        w = w.toarray() if sp.issparse(w) else np.asarray(w)
        np.testing.assert_allclose(got, w, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("fmt", ["csr", "csc", "coo", "tensor"])
@pytest.mark.parametrize("tuning", [None, OFF])
def test_evaluate_of_a_statement_reads_sparse_inputs_as_they_are(fmt, tuning):
    A = _matrix("csr" if fmt == "tensor" else fmt, seed=8)
    if fmt == "tensor":
        A = ep.Tensor.from_scipy(A, "csr")
    want = A.to_scipy() if fmt == "tensor" else A
    x = np.random.default_rng(8).standard_normal(A.shape[1])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ep.PerformanceWarning)
        got = ep.evaluate(SPMV, A=A, x=x, tuning=tuning)
    np.testing.assert_allclose(got, want @ x, rtol=1e-12, atol=1e-12)
    declared = statements.input_formats(SPMV, {"A": A, "x": x}, tuning)
    if tuning is OFF:
        assert declared is None                     # every tensor dense, as before
    else:
        assert declared == {"A": A.format}          # A as it is; x (numpy) dense


def test_input_formats_names_only_the_statement_s_sparse_tensors():
    A, x = _matrix(seed=12), np.ones(37)
    assert statements.input_formats(SPMV, {"A": A, "x": x, "B": A}) == {"A": "csr"}
    assert statements.input_formats(SPMV, {"A": A.toarray(), "x": x}) is None
    assert statements.input_formats("y[i] = A[i, i, j] * x[j]", {"A": A, "x": x}) is None
    i, j = ep.indices("i j")
    e = ep.sum(j, ep.tensor("A", 2)[i, j] * ep.tensor("x", 1)[j])
    assert statements.input_formats(e, {"A": A, "x": x}) is None     # an expression



def test_input_formats_walks_a_text_once_and_keys_by_its_text():
    A, x = _matrix(seed=13), np.ones(37)
    statements._orders.clear()
    for _ in range(2):
        assert statements.input_formats(SPMV, {"A": A, "x": x}) == {"A": "csr"}
    assert statements._orders == {SPMV: {"A": 2, "x": 1}}
    # another text naming A with another order: its own entry, A not declared sparse
    assert statements.input_formats("y[i] = A[i] * x[i]", {"A": A, "x": x}) is None
    assert statements.input_formats(SPMV, {"A": A, "x": x}) == {"A": "csr"}
    for k in range(300):                        # bounded
        statements.input_formats(f"y[i] = A{k}[i, j] * x[j]", {"x": x})
    assert len(statements._orders) <= 256

def test_evaluate_of_a_statement_still_refuses_bad_inputs():
    A = _matrix(seed=10)
    x = np.ones(A.shape[1])
    with pytest.raises(ep.InputError):
        ep.evaluate(SPMV, A=A, x=np.ones(A.shape[1] + 2))
    A.indices[0] = A.shape[1] + 3
    with pytest.raises(ep.InputError):
        ep.evaluate(SPMV, A=A, x=x)
    with pytest.raises(ep.InputError):               # an input the statement does not name
        ep.evaluate(SPMV, A=_matrix(seed=11), x=x, B=_matrix(seed=11))
