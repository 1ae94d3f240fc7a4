"""The compiled structural check of compressed levels against a numpy statement of
its contract (codegen_templates/checks.c.j2): which problem is reported, and where."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from etchpy.runtime.checks import check_compressed


def reference(pos, crd, n_parents, size):
    """(code, where) as documented: pos problems first (in row order), then the
    first coordinate out of range, then the first descent inside a segment."""
    pos, crd = pos.astype(np.int64), crd.astype(np.int64)
    if pos[0] != 0:
        return 1, 0
    for p in range(n_parents):
        if pos[p + 1] < pos[p]:
            return 2, p
        if pos[p + 1] > len(crd):
            return 3, n_parents
    if pos[n_parents] != len(crd):
        return 3, n_parents
    out = np.flatnonzero((crd < 0) | (crd >= size))
    if len(out):
        return 4, int(out[0])
    starts = np.zeros(len(crd), bool)
    starts[pos[:-1][pos[:-1] < pos[1:]]] = True          # first entry of each segment
    inside = np.flatnonzero((crd[1:] <= crd[:-1]) & ~starts[1:]) + 1
    if len(inside):
        return 5, int(inside[0])
    return 0, None


def _level(rng, n_parents, size, per_row):
    counts = rng.poisson(per_row, n_parents)
    counts[rng.random(n_parents) < 0.2] = 0                 # empty rows
    counts = np.minimum(counts, size)
    crd = np.concatenate([np.sort(rng.choice(size, c, replace=False)) for c in counts]
                         or [np.zeros(0, np.int64)])
    pos = np.concatenate([[0], np.cumsum(counts)])
    return pos, crd


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), dtype=st.sampled_from([np.int32, np.int64]),
       n_parents=st.sampled_from([1, 3, 50, 4095, 4097, 9000]),
       defect=st.sampled_from(["none", "swap", "duplicate", "high", "negative",
                               "pos down", "pos past end", "short end", "first pos",
                               "swap and high"]))
def test_check_matches_its_contract(seed, dtype, n_parents, defect):
    """Random levels (empty rows, rows that cross the 4096-row chunks), each with
    at most one kind of defect, or two of different rank."""
    rng = np.random.default_rng(seed)
    size = int(rng.integers(1, 40))
    pos, crd = _level(rng, n_parents, size, per_row=rng.uniform(0.5, 6))
    pos, crd = pos.astype(dtype), crd.astype(dtype)
    nz = np.flatnonzero(np.diff(pos) >= 2)                  # rows with two entries or more
    if defect in ("swap", "swap and high") and len(nz):
        p = nz[rng.integers(len(nz))]
        crd[pos[p]], crd[pos[p] + 1] = crd[pos[p] + 1], crd[pos[p]]
    if defect == "duplicate" and len(nz):
        p = nz[rng.integers(len(nz))]
        crd[pos[p] + 1] = crd[pos[p]]
    if defect in ("high", "swap and high") and len(crd):
        crd[rng.integers(len(crd))] = size + int(rng.integers(0, 3))
    if defect == "negative" and len(crd):
        crd[rng.integers(len(crd))] = -1
    if defect == "pos down" and n_parents > 1 and pos[-1] > 0:
        p = int(rng.integers(1, n_parents))
        pos[p] = pos[-1] + 1 if pos[p + 1] <= pos[-1] else pos[p]
        pos[p + 1] = max(pos[p] - 1, 0)
    if defect == "pos past end":
        pos[int(rng.integers(1, n_parents + 1)):] = len(crd) + 3
    if defect == "short end" and len(crd):
        crd = crd[:-1].copy()
    if defect == "first pos":
        pos[0] = 1
    got = check_compressed(pos, crd, n_parents, size)
    if got is None:
        pytest.skip("no C compiler")
    want = reference(pos, crd, n_parents, size)
    assert got[0] == want[0], (defect, got, want)
    if want[0]:
        assert got[1] == want[1], (defect, got, want)


def test_crossing_descents_are_not_unsorted():
    """Every row starts lower than the row before ends: only crossings descend."""
    pos = np.array([0, 3, 3, 6, 9], np.int32)
    crd = np.array([5, 6, 7, 0, 1, 2, 0, 8, 9], np.int32)
    assert check_compressed(pos, crd, 4, 10)[0] == 0
    crd[7] = 0                                               # now a duplicate inside row 3
    assert check_compressed(pos, crd, 4, 10) == (5, 7)


@pytest.mark.parametrize("dtype", [np.int32, np.int64])
def test_edges_of_the_index_type_and_wild_positions(dtype):
    """A size beyond the index type (its largest coordinate is then in range), and
    positions far outside crd: found in row order, never read through."""
    top = int(np.iinfo(dtype).max)
    big, high = (2**40, top) if dtype == np.int32 else (top, top - 1)
    pos, crd = np.array([0, 2, 3], dtype), np.array([0, high, 5], dtype)
    assert check_compressed(pos, crd, 2, big)[0] == 0
    assert check_compressed(pos, crd, 2, high) == (4, 1)
    for wild in (-(2**30), top, -1):
        pos = np.array([0, 1, wild, 3], dtype)
        crd = np.array([1, 2, 3], dtype)
        got = check_compressed(pos, crd, 3, 10)
        assert got == reference(pos, crd, 3, 10), (wild, got)


@pytest.mark.parametrize("dtype", [np.int32, np.int64])
def test_levels_of_no_one_and_two_entries(dtype):
    """The crossings read two neighbouring entries of crd (for int32 as one 8-byte
    load): levels too short to hold a pair, empty rows before and after, and a
    crossing at the last entry, each against the reference."""
    cases = [([0, 0, 0], []), ([0, 1], [4]), ([0, 0, 1, 1], [4]), ([0, 1, 2], [5, 3]),
             ([0, 1, 2], [5, 5]), ([0, 2], [5, 5]), ([0, 2], [3, 5]), ([0, 0, 2, 2], [5, 3]),
             ([0, 1, 1, 2], [7, 7]), ([0, 1, 2, 2], [1, 0])]
    for pos, crd in cases:
        pos, crd = np.array(pos, dtype), np.array(crd, dtype)
        got = check_compressed(pos, crd, len(pos) - 1, 8)
        want = reference(pos, crd, len(pos) - 1, 8)
        assert got[0] == want[0] and (not want[0] or got[1] == want[1]), (pos, crd, got, want)
