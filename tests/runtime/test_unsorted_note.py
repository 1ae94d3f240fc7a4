"""scipy's note that a matrix's indices are unsorted (`has_sorted_indices` read as
False, as scipy's own products leave it) is not read by a call plan: a kernel whose
walks take any order (an SpMV's, a sum of rows) runs its call plan on the arrays as
they are, and one that needs the order (a union or intersection merge) finds the
disorder itself and the call is made again canonicalised. Before, the note alone
sent every call to the general path, which sorted a copy each call (an SpMV of
`A @ A`, 2.2e5 entries: 21.8 ms against scipy's 0.13). Index names from the
generated code's own."""
import numpy as np
import pytest
import scipy.sparse as sp

import etchpy as ep
from etchpy.runtime.call_plans import MISS

pytestmark = pytest.mark.usefixtures("shared_cache")


def _unsorted(seed, fmt):
    M = sp.random_array((60, 60), density=0.1, format=fmt, random_state=seed)
    M = M @ M                                          # scipy leaves its indices unsorted
    assert not M.has_sorted_indices                    # the note, read (and kept)
    return M


@pytest.mark.parametrize("names, fmt", [(("pos", "row"), "csr"), (("out", "n"), "csc")])
def test_an_order_free_kernel_runs_its_plan_on_an_unsorted_input(names, fmt):
    i, j = ep.indices(" ".join(names))
    A, x = ep.tensor("A", 2, format=fmt), ep.tensor("x", 1)
    kern = ep.compile(ep.sum(j, A[i, j] * x[j]), threads=1)
    M, xv = _unsorted(1, fmt), np.random.default_rng(1).standard_normal(60)
    np.testing.assert_allclose(kern(A=M, x=xv), M @ xv, rtol=1e-12, atol=1e-12)
    got = kern._plan({"A": M, "x": xv})
    assert got is not MISS                             # the plan ran, no sort
    np.testing.assert_allclose(got, M @ xv, rtol=1e-12, atol=1e-12)
    assert not M.has_sorted_indices                    # the caller's arrays untouched


def test_an_order_needing_kernel_still_canonicalises():
    i, j = ep.indices("i j")
    A, B = ep.tensor("A", 2, format="csr"), ep.tensor("B", 2, format="csr")
    M, N = _unsorted(2, "csr"), sp.random_array((60, 60), density=0.2, format="csr",
                                                random_state=3)
    for e, want in ((A[i, j] + B[i, j], M + N), (A[i, j] * B[i, j], M.multiply(N))):
        kern = ep.compile(e, threads=1, output="csr")
        for _ in range(2):
            np.testing.assert_allclose(kern(A=M, B=N).toarray(), want.toarray(),
                                       rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("fmt", ["csr", "csc"])
def test_an_unsorted_scipy_matrix_is_sorted_by_segment_and_repeats_combine_by_the_semiring(fmt):
    M = _unsorted(4, fmt)
    t = ep.Tensor.from_scipy(M)
    np.testing.assert_allclose(t.to_dense(), M.toarray(), rtol=1e-12, atol=1e-12)
    ptr, crd = (np.asarray(t.levels[1][k]) for k in ("pos", "crd"))
    assert all(np.all(np.diff(crd[a:b]) > 0) for a, b in zip(ptr[:-1], ptr[1:]))
    cls = sp.csr_array if fmt == "csr" else sp.csc_array     # a segment with a repeat
    R = cls((np.array([5.0, 2.0, 7.0, 1.0]), np.array([3, 1, 3, 0]), np.array([0, 3, 4])),
            shape=(2, 4) if fmt == "csr" else (4, 2))
    got = ep.Tensor.from_scipy(R, semiring="min_plus").to_dense()
    want = np.full((2, 4), np.inf)
    want[0, 3], want[0, 1], want[1, 0] = 5.0, 2.0, 1.0          # min(5, 7) at (0, 3)
    np.testing.assert_array_equal(got, want if fmt == "csr" else want.T)


@pytest.mark.parametrize("fmt", ["csr", "csc"])
@pytest.mark.parametrize("k, minor", [(40, 60), (40, 10**6), (7, 60)])
def test_both_ways_of_sorting_segments_agree_and_leave_the_input_alone(fmt, k, minor):
    """Segments out of order are sorted in C by two stable counting sorts where
    they are long (40 a segment), and per segment where they are short or the
    other dimension is far longer than the entries: both give the canonical
    arrays, and the caller's arrays are not written."""
    rng = np.random.default_rng(5)
    major = 40
    crd = np.concatenate([rng.choice(minor, size=k, replace=False) for _ in range(major)])
    ptr = np.arange(0, major * k + 1, k)
    vals = rng.standard_normal(major * k)
    shape = (major, minor) if fmt == "csr" else (minor, major)
    cls = sp.csr_array if fmt == "csr" else sp.csc_array
    M = cls((vals, crd.astype(np.int64), ptr.astype(np.int64)), shape=shape)
    before = M.indices.copy(), M.data.copy()
    t = ep.Tensor.from_scipy(M)
    got_ptr, got_crd = (np.asarray(t.levels[1][key]) for key in ("pos", "crd"))
    want = cls(M, copy=True)
    want.sort_indices()
    np.testing.assert_array_equal(got_crd, want.indices)
    np.testing.assert_array_equal(got_ptr, want.indptr)
    np.testing.assert_array_equal(np.asarray(t.vals), want.data)
    np.testing.assert_array_equal(M.indices, before[0])
    np.testing.assert_array_equal(M.data, before[1])
