"""The compiled sorts (codegen_templates/checks.c.j2) against numpy statements of
their contracts: a sound compressed level's segments (checks.sort_segments), each
segment's coordinates in increasing order with the position each came from, or
False where a segment repeats one, per segment and by two counting sorts alike;
and a coordinate list's stable order (checks.sort_entries, entries.sort_order)."""
import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, strategies as st

import etchpy as ep
from etchpy.runtime.checks import sort_entries, sort_segments
from etchpy.runtime.entries import counted_order, prefix_key, sort_order
from etchpy.runtime.segment_sort import _counting_pays


def reference(pos, crd):
    """(ordered coordinates, permutation) by a stable lexsort on (segment,
    coordinate); False where a segment repeats a coordinate."""
    seg = np.repeat(np.arange(len(pos) - 1), np.diff(pos))
    perm = np.lexsort((crd, seg))
    out = crd[perm]
    if np.any((out[1:] == out[:-1]) & (seg[1:] == seg[:-1])):
        return False
    return out, perm


@st.composite
def levels(draw):
    """A sound level (pointers nondecreasing, coordinates in range): segments of
    0 to 300 entries (ranked whole up to 128, in blocks of 128 merged once or twice
    above), with or without repeats, int32 or int64, and the coordinates' bound."""
    size = draw(st.integers(1, 400))
    lengths = draw(st.lists(st.integers(0, 300), max_size=5))
    repeats = draw(st.booleans())
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    segs = [rng.integers(0, size, n) if repeats else rng.permutation(size)[:n]
            for n in lengths]
    crd = np.concatenate([np.zeros(0, np.int64), *segs])
    pos = np.concatenate([[0], np.cumsum([len(c) for c in segs], dtype=np.int64)])
    dtype = draw(st.sampled_from([np.int32, np.int64]))
    return pos.astype(dtype), crd.astype(dtype), size


@given(levels())
def test_both_sorts_state_the_reference(level):
    pos, crd, size = level
    want = reference(pos, crd)
    before = crd.copy()
    for got in (sort_segments(pos, crd), sort_segments(pos, crd, size)):
        if want is False:
            assert got is False
        else:
            np.testing.assert_array_equal(got[0], want[0])
            np.testing.assert_array_equal(got[1], want[1])
            assert got[0].dtype == crd.dtype and got[1].dtype == np.int64
    np.testing.assert_array_equal(crd, before)        # the caller's array untouched


def test_arrays_it_does_not_take_are_left_to_the_caller():
    """Mixed dtypes, strided or 2-d arrays: None (the caller sorts another way)."""
    pos, crd = np.array([0, 3]), np.array([2, 0, 1])
    assert sort_segments(pos.astype(np.int32), crd) is None
    assert sort_segments(pos, np.array([2, 9, 0, 9, 1, 9])[::2]) is None
    assert sort_segments(pos, crd.reshape(1, 3)) is None


@pytest.mark.parametrize("k,minor", [(4, 200), (12, 200), (40, 60), (200, 400), (5, 100_000)])
def test_an_unsorted_scipy_input_is_bound_in_order_either_way(k, minor):
    """Short segments (per-segment sort), longer ones (counting sorts) and a
    hypersparse matrix (per-segment sort) give the canonical Tensor and kernel
    answer; which sort ran is _counting_pays'."""
    rng = np.random.default_rng(k)
    major = 30
    crd = np.concatenate([rng.choice(minor, size=k, replace=False) for _ in range(major)])
    M = sp.csr_array((rng.standard_normal(major * k), crd, np.arange(0, major * k + 1, k)),
                     shape=(major, minor))
    assert not M.has_sorted_indices
    assert _counting_pays(major, minor, M.nnz) == (k >= 8 and minor < 16 * major * k)
    assert not _counting_pays(10**5, 10**5, 16 * 10**5)        # many entries: per segment
    assert _counting_pays(10**4, 10**4, 200 * 10**4)           # unless segments are long
    want = sp.csr_array(M, copy=True)
    want.sort_indices()
    t = ep.Tensor.from_scipy(M)
    np.testing.assert_array_equal(np.asarray(t.levels[1]["crd"]), want.indices)
    np.testing.assert_array_equal(np.asarray(t.vals), want.data)
    C = sp.csr_array(want[::-1], copy=True)
    C.sort_indices()
    kern = ep.compile("C[i, j] = A[i, j] + B[i, j]", formats={"A": "csr", "B": "csr"},
                      output="csr")
    got = sp.csr_array(kern(A=M, B=C))
    assert abs(got - (want + C)).max() <= 1e-12


@given(st.integers(1, 40), st.integers(1, 300), st.integers(0, 600),
       st.integers(0, 2**32 - 1))
def test_entries_are_ordered_stably_by_both_keys(m, spread, n, seed):
    """sort_entries: the permutation np.lexsort gives (stable: ties in input order),
    runs of one first key from 0 to 600 entries (ranked, and merged past 128)."""
    rng = np.random.default_rng(seed)
    a, b = rng.integers(0, m, n), rng.integers(-spread, spread, n)
    np.testing.assert_array_equal(sort_entries(a, b, m), np.lexsort((b, a)))


@given(st.integers(1, 3), st.integers(2, 400), st.integers(0, 2**32 - 1))
def test_a_coordinate_list_is_ordered_as_lexsort_orders_it(order, n, seed):
    """entries.sort_order over drawn coordinates of 1-3 rows (repeats and all):
    the compiled counting path where the first row's bound allows, the packed
    sort elsewhere, both np.lexsort's stable order."""
    rng = np.random.default_rng(seed)
    storage = np.stack([rng.integers(0, rng.integers(1, 2 * n), n) for _ in range(order)])
    got = sort_order(storage)
    want = np.lexsort(storage[::-1])
    np.testing.assert_array_equal(np.arange(n) if got is None else got, want)
    dims = [int(d) + 1 for d in storage.max(axis=1)]
    key, _ = prefix_key(storage)
    if storage[0].max() < 4 * n:
        assert counted_order(storage, key, dims) is not None


def test_a_negative_coordinate_is_not_given_to_the_compiled_sort():
    """counted_order declines a list with a negative first coordinate (its counts
    are indexed by them); sort_order then sorts it as before."""
    storage = np.array([[2, -1, 0, 2]])
    assert counted_order(storage, storage[0].astype(np.int64), [3]) is None
    np.testing.assert_array_equal(sort_order(storage), [1, 2, 0, 3])
