"""Coordinate inputs (runtime.coo_inputs): a scipy coo or pydata COO input of a coo
tensor in row-major order without repeats is read over its own arrays after one
check in C, by the general path and by call plans; one a scatter kernel reads
(lower.schedule.entries) is read as it is in any order, the kernel checking its
coordinates' range (lower.schedule.coo_checks); anything else (unsorted,
repeated, out of range, changed in place between calls) gives the right answer
or an InputError naming the input, never a crash."""
import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings, strategies as st

import etchpy as ep
from etchpy.runtime import calling, coo_inputs
from etchpy.runtime.call_plans import MISS

pytestmark = pytest.mark.usefixtures("shared_cache")

SPMV = "y[i] = A[i, j] * x[j]"


def _coo(n=30, m=33, idx=np.int32, dtype=np.float64, seed=0):
    """A coo_array in row-major order without repeats, has_canonical_format False."""
    A = sp.random_array((n, m), density=0.2, format="csr", random_state=seed, dtype=dtype)
    C = sp.coo_array((A.tocoo().data, tuple(c.astype(idx) for c in A.tocoo().coords)),
                     shape=A.shape)
    assert not C.has_canonical_format
    return C


def _kern(**kw):
    return ep.compile(SPMV, formats={"A": "coo"}, **kw)


def _planned(kern, **inputs):
    got = kern._plan(inputs)
    assert got is not MISS, "the plan missed"
    return got


@pytest.mark.parametrize("idx", [np.int32, np.int64])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_in_order_coo_is_read_as_it_is_and_planned(idx, dtype):
    kern, rng = _kern(), np.random.default_rng(0)
    tol = 1e-5 if dtype == np.float32 else 1e-12
    C = _coo(idx=idx, dtype=dtype)
    x = rng.random(C.shape[1]).astype(dtype)
    np.testing.assert_allclose(kern(A=C, x=x), C @ x, rtol=tol)
    tv = kern.tensors["A"]
    sr = ep.semirings.real32 if dtype == np.float32 else ep.semirings.real
    b = calling.bind(C, tv, sr)
    assert b.roles["crd0"] is C.coords[0] and b.roles["crd1"] is C.coords[1]
    assert b.roles["vals"] is C.data and b.own
    for seed in range(1, 4):                 # new matrices and vectors every call
        D, v = _coo(idx=idx, dtype=dtype, seed=seed), rng.random(C.shape[1]).astype(dtype)
        np.testing.assert_allclose(_planned(kern, A=D, x=v), D @ v, rtol=tol)
        np.testing.assert_allclose(kern(A=D, x=v), D @ v, rtol=tol)


def test_the_check_codes():
    def check(rows, cols, shape=(4, 5), dtype=np.int64):
        return coo_inputs.check((np.array(rows, dtype), np.array(cols, dtype)), shape)
    assert check([0, 0, 1, 3], [1, 4, 0, 0]) == 0
    assert check([], []) == 0
    assert check([0, 0, 1], [1, 1, 0]) == 5            # repeated
    assert check([0, 1, 0], [1, 0, 2]) == 5            # unsorted rows
    assert check([0, 0], [3, 2]) == 5                  # unsorted within a row
    assert check([0, 4], [0, 0]) == 4                  # row out of range, sorted
    assert check([-1, 0], [0, 0]) == 4
    assert check([0, 1], [0, 5]) == 4
    assert check([1, 0], [0, -2], dtype=np.int32) == 4  # out of range wins over order
    assert check([0, 0], [0, 1], shape=(0, 5)) == 4
    three = [np.array(c) for c in ([0, 0, 1], [1, 1, 0], [0, 2, 0])]
    assert coo_inputs.check(three, (2, 2, 3)) == 0
    assert coo_inputs.check(three[::-1], (3, 2, 2)) == 5
    assert coo_inputs.check(three, (2, 2, 2)) == 4
    big = (2 ** 40,) * 3                        # 2^120 cells: no row-major key, the flags
    assert coo_inputs.check(three, big) == 0
    assert coo_inputs.check(three[::-1], big) == 5
    assert coo_inputs.check([three[0] - 1] + three[1:], big) == 4
    assert coo_inputs.check((np.array([0.0]), np.array([0.0])), (1, 1)) is None


@settings(deadline=None)
@given(st.integers(1, 5), st.integers(0, 12), st.integers(0, 2 ** 32 - 1),
       st.sampled_from([np.int32, np.int64]))
def test_the_check_of_any_order_agrees_with_numpy(order, n, seed, idx):
    """The n-mode check (branch-free passes, then ep_find on a rejection) gives
    what numpy says of the tuples: 4 for any coordinate outside its mode (first),
    else 5 unless strictly increasing, else 0. Small ranges make equal prefixes,
    repeats and descents at every mode common."""
    rng = np.random.default_rng(seed)
    shape = tuple(int(s) for s in rng.integers(1, 4, order))
    coords = [rng.integers(-1, s + 1, n).astype(idx) for s in shape]
    if rng.random() < 0.5:                          # in range, often in order
        coords = [np.clip(c, 0, s - 1).astype(idx) for c, s in zip(coords, shape)]
        if rng.random() < 0.5:
            coords = [c[o] for c, o in [(c, np.lexsort(coords[::-1])) for c in coords]]
    tuples = list(zip(*(c.tolist() for c in coords)))
    if any(not 0 <= v < s for t in tuples for v, s in zip(t, shape)):
        want = 4
    else:
        want = 0 if all(a < b for a, b in zip(tuples, tuples[1:])) else 5
    assert coo_inputs.check(coords, shape) == want


@pytest.mark.parametrize("entries", [True, False])
def test_unsorted_and_repeated_entries_are_combined(entries):
    kern, x = _kern(tuning={"entries": entries}), np.arange(1.0, 6.0)
    rows, cols = np.array([2, 0, 0, 2, 1]), np.array([1, 3, 3, 0, 4])
    C = sp.coo_array((np.array([1.0, 2, 3, 4, 5]), (rows, cols)), shape=(3, 5))
    want = C.toarray() @ x
    for _ in range(3):
        np.testing.assert_allclose(kern(A=C, x=x), want)
    if entries:     # a scatter takes any order: read as it is, planned
        assert kern._fused == {"A"}
        np.testing.assert_allclose(_planned(kern, A=C, x=x), want)
    else:           # runs need the order: sorted and combined first, never planned
        assert not kern._fused
        assert kern._plan is None or kern._plan({"A": C, "x": x}) is MISS


def test_out_of_range_named():
    kern = _kern()
    C = _coo()
    kern(A=C, x=np.ones(C.shape[1]))
    for mode, bad in [(1, C.shape[1]), (1, -1), (0, C.shape[0])]:
        D = _coo(seed=5)
        D.coords[mode][-1] = bad                # written after scipy's own checks
        with pytest.raises(ep.InputError, match="A"):
            kern(A=D, x=np.ones(C.shape[1]))


def test_arrays_changed_in_place_between_calls():
    kern, rng = _kern(), np.random.default_rng(4)
    C = _coo(n=40, m=40, seed=7)
    x = rng.random(40)
    np.testing.assert_allclose(kern(A=C, x=x), C @ x)
    np.testing.assert_allclose(kern(A=C, x=x), C @ x)        # planned, arrays held
    C.data[:] = rng.random(C.nnz)                              # new values
    np.testing.assert_allclose(kern(A=C, x=x), C @ x)
    row, col = C.coords
    row[[0, -1]] = row[[-1, 0]]                                # now out of order
    col[[0, -1]] = col[[-1, 0]]
    np.testing.assert_allclose(kern(A=C, x=x), C.toarray() @ x)
    row[[0, -1]] = row[[-1, 0]]                                # in order again
    col[[0, -1]] = col[[-1, 0]]
    col[3] = col[2]                                            # a repeat, or unsorted
    np.testing.assert_allclose(kern(A=C, x=x), C.toarray() @ x)
    col[5] = 10 ** 6                                           # out of range
    with pytest.raises(ep.InputError, match="A"):
        kern(A=C, x=x)
    C.coords = (row.copy(), np.sort(col % 40))                 # rebound on the matrix
    np.testing.assert_allclose(kern(A=C, x=x), C.toarray() @ x)


def test_empty_and_boolean_and_min_plus():
    kern = _kern()
    E = sp.coo_array((np.zeros(0), (np.zeros(0, np.int32), np.zeros(0, np.int32))),
                     shape=(3, 4))
    np.testing.assert_array_equal(kern(A=E, x=np.ones(4)), np.zeros(3))
    np.testing.assert_array_equal(kern(A=E, x=np.ones(4)), np.zeros(3))
    C = _coo(n=6, m=6, seed=2)
    mp = _kern(semiring="min_plus")
    C.data[0] = 0.0                                   # a stored 0 is a real edge
    d = np.arange(6.0)
    want = np.full(6, np.inf)
    for r, c, v in zip(*C.coords, C.data):
        want[r] = min(want[r], v + d[c])
    for _ in range(2):
        np.testing.assert_allclose(mp(A=C, x=d), want)
    B = sp.coo_array((C.data > 0.5, C.coords), shape=C.shape)
    bk = _kern(semiring="boolean")
    for _ in range(2):
        np.testing.assert_array_equal(bk(A=B, x=np.ones(6, bool)),
                                      (B.toarray() @ np.ones(6)) > 0)


def test_pydata_coo_is_planned_and_checked():
    sparse = pytest.importorskip("sparse")
    kern, rng = _kern(), np.random.default_rng(5)
    for seed in range(3):
        S = sparse.COO.from_scipy_sparse(_coo(seed=seed))
        x = rng.random(S.shape[1])
        want = S.todense() @ x
        np.testing.assert_allclose(kern(A=S, x=x), want)
        if seed:
            np.testing.assert_allclose(_planned(kern, A=S, x=x), want)
    S.coords[:, [0, -1]] = S.coords[:, [-1, 0]]       # out of order, flags now stale
    np.testing.assert_allclose(kern(A=S, x=x), S.todense() @ x)
    S.coords[1, 0] = 10 ** 6
    with pytest.raises(ep.InputError, match="A"):
        kern(A=S, x=x)
    F = sparse.COO.from_scipy_sparse(_coo()).copy()
    F.fill_value = np.float64(2.0)
    with pytest.raises(ep.InputError, match="fill_value"):
        kern(A=F, x=x)


def test_pydata_coo_of_order_three():
    sparse = pytest.importorskip("sparse")
    i, j, k = ep.indices("i j k")
    T = ep.tensor("T", 3, format="coo")
    v = ep.tensor("v", 1)
    kern = ep.compile(ep.sum((j, k), T[i, j, k] * v[k]))
    S = sparse.random((5, 6, 7), density=0.2, random_state=0)
    x = np.arange(7.0)
    tv = kern.tensors["T"]
    assert calling.bind(S, tv, kern.semiring).roles["vals"] is S.data
    for _ in range(2):
        np.testing.assert_allclose(kern(T=S, v=x), np.einsum("ijk,k->i", S.todense(), x))


@pytest.mark.parametrize("fmt", ["csr", "csc"])
def test_pydata_gcxs_is_bound_as_scipy_would_be_and_planned(fmt):
    sparse = pytest.importorskip("sparse")
    kern, rng = ep.compile(SPMV, formats={"A": fmt}), np.random.default_rng(6)
    axis = (0,) if fmt == "csr" else (1,)
    for seed in range(3):
        M = sp.random_array((20, 24), density=0.2, format=fmt, random_state=seed)
        G = sparse.GCXS(M.toarray(), compressed_axes=axis)
        x = rng.random(24)
        np.testing.assert_allclose(kern(A=G, x=x), M @ x)
        b = calling.bind(G, kern.tensors["A"], kern.semiring)
        assert b.roles["vals"] is G.data
        if seed:
            np.testing.assert_allclose(_planned(kern, A=G, x=x), M @ x)
    G.indices[[0, 1]] = G.indices[[1, 0]]          # a segment now out of order
    want = sp.csr_array((G.data, G.indices, G.indptr), shape=G.shape) if fmt == "csr" else \
        sp.csc_array((G.data, G.indices, G.indptr), shape=G.shape)
    np.testing.assert_allclose(kern(A=G, x=x), want.toarray() @ x)
    G.indices[0] = 10 ** 6
    with pytest.raises(ep.InputError, match="A"):
        kern(A=G, x=x)
    other = sparse.GCXS(M.toarray(), compressed_axes=(1,) if fmt == "csr" else (0,))
    np.testing.assert_allclose(kern(A=other, x=x), M @ x)   # the other layout: converted


@pytest.mark.parametrize("n", [0, 5])
def test_a_scipy_coo_of_three_axes_converts_to_any_coo_layout(n):
    """Tensor.from_scipy of an n-d coo_array into coo formats of its order, the mode
    order permuted too (convert.from_scipy asks whether a format is csr or csc
    without parsing it as a 2-d one)."""
    rng = np.random.default_rng(n)
    flat = np.sort(rng.choice(5 * 6 * 7, n, replace=False))
    coords = tuple(c.astype(np.int32) for c in np.unravel_index(flat, (5, 6, 7)))
    S = sp.coo_array((rng.random(n), coords), shape=(5, 6, 7))
    fmt = ep.Format.named("coo", 3)
    for layout in (fmt, ep.Format(list(fmt.levels), mode_order=(1, 2, 0))):
        t = ep.Tensor.from_scipy(S, layout)
        np.testing.assert_allclose(t.to_dense(), S.toarray())
