"""A sparse output stores no key whose row every filter emptied (Tuning.empty_rows_back,
proofs_notes/empty_rows.md): a workspace flush that moves nothing out, or an
appending level's segment closed empty, takes its parent's appended position back.
Against a dense numpy reference, with every upper level's segments checked non-empty.
(Switched off, the serial kernel stores the empty rows that rows on threads keep:
tests/lower/schedule/test_schedule_rows.py compares the two.)"""
import functools

import numpy as np
from hypothesis import given, strategies as st

import etchpy as ep

o, pr, n = ep.indices("o pr n")
SHAPE = (6, 3, 5)


@functools.cache
def kernels():
    """(a workspace: n summed between o and pr; three appending levels)."""
    A, B = ep.tensor("A", 3, "csf"), ep.tensor("B", 3, "csf")
    ws = ep.compile(ep.sum(n, A[o, n, pr] * (n < "hi")), output="dcsr", order=["o", "n", "pr"])
    ap3 = ep.compile(B[o, pr, n] * (n >= "hi"), output="csf", order=["o", "pr", "n"])
    return ws, ap3


def _no_empty_rows(t: ep.Tensor):
    for k in range(1, len(t.levels)):
        assert (np.diff(t.levels[k]["pos"]) > 0).all(), f"an empty segment at level {k}"


@given(st.lists(st.tuples(*(st.integers(0, s - 1) for s in SHAPE)), max_size=20),
       st.integers(0, 5))
def test_filtered_rows_are_not_stored(cells, hi):
    coords = np.array(sorted(set(cells)), dtype=np.int64).reshape(-1, 3).T
    vals = np.arange(1.0, coords.shape[1] + 1)
    dense = np.zeros(SHAPE)
    dense[tuple(coords)] = vals
    keep = np.arange(SHAPE[2]) < hi
    ws, ap3 = kernels()
    by_n = ep.Tensor.from_coords(coords[[0, 2, 1]], vals, (6, 5, 3), "csf")
    by_pr = ep.Tensor.from_coords(coords, vals, SHAPE, "csf")
    want = (dense * keep).sum(axis=2)
    got = ws(A=by_n, hi=hi)
    np.testing.assert_array_equal(got.to_dense(), want)
    assert got.levels[0]["crd"].tolist() == np.flatnonzero(want.any(axis=1)).tolist()
    _no_empty_rows(got)
    got3 = ap3(B=by_pr, hi=hi)       # levels 1 and 2 both close empty segments
    np.testing.assert_array_equal(got3.to_dense(), dense * ~keep)
    assert got3.levels[0]["crd"].tolist() == np.flatnonzero(
        (dense * ~keep).any(axis=(1, 2))).tolist()
    _no_empty_rows(got3)

