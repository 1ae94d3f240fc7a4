"""A scipy matrix whose segments are out of order (scipy's own `A @ B` leaves
them so) is sorted once and the order kept for index arrays equal to the ones it
was made from (runtime.segment_sort): a later call compares the arrays in full
and gathers its values by the kept permutation. Equal arrays only: arrays written
in place between calls (values, the order within a segment, the pattern, a
coordinate out of range, a repeat) give the right answer or an InputError, never
the kept order's answer; the caller's arrays are never touched. A kernel checking
the input in a pass keeps its call plan (its binder orders the arrays); one
checking as it reads gets the input in order up front after one refusal.
Index names from the generated code's own."""
import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, strategies as st

import etchpy as ep
from etchpy.errors import InputError
from etchpy.runtime import segment_sort
from etchpy.settings import LIMITS

pytestmark = pytest.mark.usefixtures("shared_cache")

i, j = ep.indices("pos out")
A, B, x = ep.tensor("A", 2, format="csr"), ep.tensor("B", 2, format="csr"), ep.tensor("x", 1)
KERNELS = {"merge": (A[i, j] + B[i, j], lambda M, N: M + N),          # checks as it reads
           "meet": (A[i, j] * B[i, j], lambda M, N: M.multiply(N))}    # checks in a pass


def _unsorted(seed, n=40):
    M = sp.random_array((n, n), density=0.15, format="csr", random_state=seed)
    M = M @ M                                          # scipy leaves its indices unsorted
    assert any(np.any(np.diff(M.indices[a:b]) < 0) for a, b in zip(M.indptr, M.indptr[1:]))
    return M


def _kernel(name, _made={}):
    if name not in _made:
        _made[name] = ep.compile(KERNELS[name][0], threads=1, output="csr")
    return _made[name]


def _same(got, want):
    np.testing.assert_allclose(sp.csr_array(got).toarray(), want.toarray(), rtol=1e-12,
                               atol=1e-12)


def _shuffle_rows(M, rng):
    """M's arrays with each row's entries in a new order (in place)."""
    for a, b in zip(M.indptr[:-1], M.indptr[1:]):
        p = a + rng.permutation(b - a)
        M.indices[a:b], M.data[a:b] = M.indices[p].copy(), M.data[p].copy()


EDITS = ("values", "shuffle", "pattern", "none")


@pytest.mark.parametrize("kind", sorted(KERNELS))
@given(edits=st.lists(st.sampled_from(EDITS), min_size=1, max_size=4),
       seed=st.integers(0, 2**16))
def test_arrays_written_in_place_between_calls_give_the_right_answer(kind, edits, seed):
    kern, peer = _kernel(kind), KERNELS[kind][1]
    rng = np.random.default_rng(seed)
    M, N = _unsorted(seed % 7), sp.random_array((40, 40), density=0.3, format="csr",
                                                random_state=seed)
    for edit in ("none", *edits):
        if edit == "values":
            M.data[:] = rng.standard_normal(M.nnz)
        elif edit == "shuffle":
            _shuffle_rows(M, rng)
        elif edit == "pattern":      # another unsorted product, written into M's arrays
            other = _unsorted(seed % 7 + 1)
            M = sp.csr_array((other.data, other.indices, other.indptr), shape=M.shape)
        want = peer(sp.csr_array((M.data.copy(), M.indices.copy(), M.indptr.copy()),
                                 shape=M.shape), N)
        before = (M.indices.copy(), M.data.copy())
        _same(kern(A=M, B=N), want)
        assert np.array_equal(M.indices, before[0]) and np.array_equal(M.data, before[1])


@pytest.mark.parametrize("kind", sorted(KERNELS))
def test_a_coordinate_written_out_of_range_after_a_kept_order_is_refused(kind):
    kern, peer = _kernel(kind), KERNELS[kind][1]
    M, N = _unsorted(11), sp.random_array((40, 40), density=0.3, format="csr", random_state=2)
    for _ in range(2):
        _same(kern(A=M, B=N), peer(M, N))
    M.indices[M.indptr[3]] = 40                        # past the 40 columns
    with pytest.raises(InputError, match="A"):
        kern(A=M, B=N)


@pytest.mark.parametrize("kind", sorted(KERNELS))
def test_a_repeat_written_into_a_segment_combines_by_the_semiring(kind):
    kern, peer = _kernel(kind), KERNELS[kind][1]
    M, N = _unsorted(12), sp.random_array((40, 40), density=0.3, format="csr", random_state=3)
    _same(kern(A=M, B=N), peer(M, N))
    r = next(r for r in range(40) if M.indptr[r + 1] - M.indptr[r] >= 3)
    a = M.indptr[r]
    M.indices[a + 1] = M.indices[a]                    # a repeat, out of order around it
    canon = sp.csr_array((M.data.copy(), M.indices.copy(), M.indptr.copy()), shape=M.shape)
    canon.sum_duplicates()
    _same(kern(A=M, B=N), peer(canon, N))


def test_a_pass_checked_kernel_keeps_its_call_plan_and_a_fused_one_orders_up_front():
    M, N = _unsorted(13), sp.random_array((40, 40), density=0.3, format="csr", random_state=4)
    meet, merge = (ep.compile(KERNELS[k][0], threads=1, output="csr") for k in ("meet", "merge"))
    for _ in range(3):
        _same(meet(A=M, B=N), M.multiply(N))
        _same(merge(A=M, B=N), M + N)
    assert meet._plans and not meet._unplanned         # the unsorted kind kept its plan
    assert merge._presort == {"A"}                     # refused once: in order up front
    got, names = segment_sort.presorted(merge._presort, {"A": M, "B": N})
    assert names == {"A"} and got["A"] is not M and got["A"].has_sorted_indices
    assert got["B"] is N
    _same(got["A"], M)
    P = _unsorted(14)                                  # another pattern: sorted up front too
    got, names = segment_sort.presorted(merge._presort, {"A": P, "B": N})
    assert names == {"A"} and got["A"].has_sorted_indices
    _same(got["A"], P)
    _same(merge(A=P, B=N), P + N)
    assert merge._presort == {"A"}
    S = M.copy()
    S.sort_indices()                                   # in order: passed as it is, forgotten
    got, names = segment_sort.presorted(merge._presort, {"A": S, "B": N})
    assert got["A"] is S and not names
    _same(merge(A=S, B=N), M + N)
    assert not merge._presort


def test_an_order_free_kernel_reads_the_unsorted_arrays_as_they_are():
    M, xv = _unsorted(14), np.arange(40.0)
    kern = ep.compile(ep.sum(j, A[i, j] * x[j]), threads=1)
    _same(_kernel("merge")(A=M, B=M), M + M)           # an order kept for M's arrays
    np.testing.assert_allclose(kern(A=M, x=xv), M @ xv, rtol=1e-12)
    assert not kern._presort


def test_the_kept_orders_are_bounded():
    kern = _kernel("meet")
    for seed in range(20, 20 + LIMITS.sorted_inputs + 3):
        M = _unsorted(seed, n=30 + seed)               # another shape: another order
        for _ in range(2):                             # kept from its second sort
            _same(kern(A=M, B=M), M.multiply(M))
    assert 0 < len(segment_sort._KEPT) <= LIMITS.sorted_inputs
    assert sum(k.nbytes() for k in segment_sort._KEPT.values()) <= LIMITS.sorted_bytes


@pytest.mark.parametrize("dtype", [np.complex128, np.int64])
def test_values_of_any_dtype_move_with_their_coordinates(dtype):
    M = _unsorted(15)
    M = sp.csr_array(((M.data * 7).astype(dtype) * (1 + 1j if dtype == np.complex128 else 1),
                      M.indices, M.indptr), shape=M.shape)
    kern = _kernel("merge")
    for _ in range(2):
        _same(kern(A=M, B=M), M + M)


def test_a_pattern_sorted_once_is_noted_not_kept():
    """The first sort of a pattern keeps nothing but a note (and `held` knows the
    array it sorted, so a refused kernel still orders it up front); its second
    sort keeps the order, which a third call takes by comparison."""
    M = _unsorted(41, n=77)
    before = set(segment_sort._KEPT)
    ok, (_, ix, _) = segment_sort.sorted_segments(M.shape, "csr", M.indptr, M.indices, M.data)
    assert ok and set(segment_sort._KEPT) == before and segment_sort.held(M.indices)
    ok, (_, again, _) = segment_sort.sorted_segments(M.shape, "csr", M.indptr, M.indices,
                                                      M.data)
    assert ok and len(set(segment_sort._KEPT) - before) == 1
    np.testing.assert_array_equal(ix, again)
    ok, (_, third, _) = segment_sort.sorted_segments(M.shape, "csr", M.indptr.copy(),
                                                      M.indices.copy(), M.data)
    assert ok and third is again                       # the kept order, by comparison
