"""Far rows' window hits gathered in blocks (Tuning.window_blocks,
lower.schedule.window_blocks; law in proofs_notes/windows.md, "Hits gathered in
blocks"): each row's in-window entries kept in a buffer, then ⊕-added into the
row's cell in one flat loop per block, where the call's far pick finds the rows
far, x is between half of Tuning.prefetch_min_bytes and it and the window at
most a third of the columns (window_blocks_share) or x of window_blocks_wide bytes
or more. Small operands here, so the tests lower
prefetch_min_bytes (x of 16 to 31 values, 40 or more columns) and the
buffer (3 or 5 entries: flushed between rows, rows longer than it walked as
before). Against the dense reference: steps, shifts, bounds as parameters,
int and float, empty windows, a scipy operand (checked as walked) and a
Tensor: three C builds in all."""
import numpy as np
import pytest
import scipy.sparse as sp

import etchpy as ep
from etchpy.errors import InputError

pytestmark = pytest.mark.usefixtures("shared_cache")
i, j = ep.indices("i j")
BLOCKS = {"prefetch_min_bytes": 256, "window_blocks": 5}        # x of 16 to 31 values


def random_rows(seed: int, shape=(30, 128), dtype=float) -> np.ndarray:
    """Rows of 0 to about 12 entries at random columns (far: spans over 1/8)."""
    rng = np.random.default_rng(seed)
    d = np.where(rng.random(shape) < rng.random((shape[0], 1)) * 0.08,
                 rng.integers(1, 9, shape), 0).astype(dtype)
    d[7] = 0
    return d


def test_hits_gathered_in_blocks_are_the_restriction_and_the_shift():
    """int64, step 2, a buffer of 3 (flushed between rows, rows longer than it
    walked), one kernel for all bounds on an ep.Tensor (the trusted build; the
    checked one below); the blocks are in both builds' programs, and not with
    window_blocks 0."""
    from etchpy import imp
    A, x = ep.tensor("A", 2, "csr"), ep.tensor("x", 1)
    d = random_rows(1, dtype=np.int64)
    T = ep.Tensor.from_scipy(sp.csr_array(d), "csr")
    expr = ep.sum(j, A[i["lo":"hi":2], j["lo2":"hi2"]] * x[j])
    kern = ep.compile(expr, semiring="integer", tuning={**BLOCKS, "window_blocks": 3})
    for lo, hi, lo2, hi2 in ((0, 30, 5, 30), (-4, 20, -6, 20), (3, 28, 100, 128),
                             (5, 5, 0, 20), (2, 9, 12, 12), (1, 29, 60, 76)):
        v = np.arange(hi2 - lo2, dtype=np.int64) % 7 + 1
        rows, cols = np.arange(lo, hi, 2), np.arange(lo2, hi2)
        inside = np.zeros((len(rows), len(cols)), dtype=np.int64)    # the fill outside d
        r_in, c_in = (rows >= 0) & (rows < 30), (cols >= 0) & (cols < 128)
        inside[np.ix_(r_in, c_in)] = d[np.ix_(rows[r_in], cols[c_in])]
        got = kern(A=T, x=v, lo=lo, hi=hi, lo2=lo2, hi2=hi2)
        assert got.dtype == np.int64 and (got == inside @ v).all()
    for tuning, there in ((BLOCKS, True), ({**BLOCKS, "window_blocks": 0}, False)):
        compiled = ep.compile(expr, semiring="integer", tuning=tuning).compiled
        for prog in (compiled.program, compiled.checked):
            arrays = [n for n in imp.statements(prog.body) if isinstance(n, imp.LocalArray)]
            assert bool(arrays) == there


def test_hits_gathered_in_blocks_add_in_each_rows_order():
    """A float sum whose order shows (1e16 + 1 − 1e16 is 0, 1e16 − 1e16 + 1 is
    1): each row's hits are ⊕-added into its cell in the row's order, as the
    walk adds them; near rows (a band) run the walk (the pick), same answers."""
    d = np.zeros((12, 128))
    d[:, 3], d[:, 20], d[:, 27] = 1e16, 1.0, -1e16
    d[::2, 20], d[::2, 28] = 0.0, 1.0
    band = np.eye(12, 128) + np.eye(12, 128, 1)
    A, x = ep.tensor("A", 2, "csr"), ep.tensor("x", 1)
    kern = ep.compile(ep.sum(j, A[i["lo":"hi"], j["lo2":"hi2"]] * x[j]), tuning=BLOCKS)
    v = np.ones(28)
    for m in (d, band):
        want = [0.0] * 12
        for r in range(12):
            for c in range(2, 30):
                if m[r, c]:
                    want[r] += m[r, c]
        got = kern(A=sp.csr_array(m), x=v, lo=0, hi=12, lo2=2, hi2=30)   # checked as walked
        np.testing.assert_array_equal(got, want)


def test_a_bad_scipy_operand_read_in_blocks_is_an_input_error_or_summed():
    """The checked build's first pass is the level's walk: a coordinate out of
    range in a window's row is an InputError naming A; a repeated coordinate is
    summed as scipy sums it (the pass is order-free)."""
    d = random_rows(3)
    M = sp.csr_array(d)
    A, x = ep.tensor("A", 2, "csr"), ep.tensor("x", 1)
    kern = ep.compile(ep.sum(j, A[i["lo":"hi"], j["lo2":"hi2"]] * x[j]), tuning=BLOCKS)
    v = np.arange(20.0) + 1
    row = next(r for r in range(2, 20) if M.indptr[r + 1] - M.indptr[r] >= 2)
    R = M.copy()
    R.indices[R.indptr[row] + 1] = R.indices[R.indptr[row]]              # a repeat
    np.testing.assert_allclose(kern(A=R, x=v, lo=2, hi=20, lo2=5, hi2=25),
                               R.toarray()[2:20, 5:25] @ v)
    R.indices[R.indptr[row]] = 999                                       # out of range
    with pytest.raises(InputError, match="A"):
        kern(A=R, x=v, lo=2, hi=20, lo2=5, hi2=25)


def test_hits_gathered_in_blocks_from_a_large_x_prefetch_it_ahead():
    """Tuning.window_blocks_ahead: x of prefetch_min_bytes or more runs in blocks
    too (the window still at most a third of the columns), each flush
    prefetching x at the hit 2 on; float, step 1, one kernel for all bounds, a
    scipy operand (checked as walked) and a Tensor; 0: no prefetch there."""
    from etchpy import imp
    A, x = ep.tensor("A", 2, "csr"), ep.tensor("x", 1)
    d = random_rows(5, shape=(30, 400))
    M, T = sp.csr_array(d), ep.Tensor.from_scipy(sp.csr_array(d), "csr")
    expr = ep.sum(j, A[i["lo":"hi"], j["lo2":"hi2"]] * x[j])
    ahead = {**BLOCKS, "window_blocks_ahead": 2}
    kern = ep.compile(expr, tuning=ahead)
    for lo, hi, lo2, hi2 in ((0, 30, 5, 100), (-4, 20, -6, 60), (3, 28, 340, 420),
                             (2, 9, 50, 50), (1, 29, 100, 140)):
        v = np.arange(hi2 - lo2) % 7 + 1.0
        rows, cols = np.arange(lo, hi), np.arange(lo2, hi2)
        inside = np.zeros((len(rows), len(cols)))                   # the fill outside d
        r_in, c_in = (rows >= 0) & (rows < 30), (cols >= 0) & (cols < 400)
        inside[np.ix_(r_in, c_in)] = d[np.ix_(rows[r_in], cols[c_in])]
        for operand in (M, T):
            np.testing.assert_allclose(kern(A=operand, x=v, lo=lo, hi=hi, lo2=lo2, hi2=hi2),
                                       inside @ v)
    for tuning, there in ((ahead, True), ({**ahead, "window_blocks_ahead": 0}, False)):
        prog = ep.compile(expr, tuning=tuning).compiled.program
        flushes = [n for n in imp.statements(prog.body) if isinstance(n, imp.Prefetch)
                   and isinstance(n.index, imp.Load) and n.index.array.endswith("_hc")]
        assert bool(flushes) == there


def test_hits_gathered_in_blocks_from_a_wide_x_whatever_the_share():
    """Tuning.window_blocks_wide: x of that many bytes or more runs in blocks
    whatever share of the columns the window keeps (here 50 values or more: the
    wide windows below keep 40% to all of the 128 columns, over the third of
    window_blocks_share); under it, and with 0, the share test holds. Float,
    steps 1 and 2, one kernel for all bounds; a scipy operand whose values and
    coordinates are written in place between calls (read again each call) and
    a Tensor; every answer the dense one."""
    A, x = ep.tensor("A", 2, "csr"), ep.tensor("x", 1)
    d = random_rows(6)
    M, T = sp.csr_array(d), ep.Tensor.from_scipy(sp.csr_array(d), "csr")
    wide = {**BLOCKS, "window_blocks_ahead": 2, "window_blocks_wide": 400}

    def dense(m, lo, hi, step, lo2, hi2, v):
        rows, cols = np.arange(lo, hi, step), np.arange(lo2, hi2)
        inside = np.zeros((len(rows), len(cols)))                   # the fill outside m
        r_in, c_in = (rows >= 0) & (rows < m.shape[0]), (cols >= 0) & (cols < m.shape[1])
        inside[np.ix_(r_in, c_in)] = m[np.ix_(rows[r_in], cols[c_in])]
        return inside @ v

    for step in (1, 2):
        rows = i["lo":"hi":step] if step > 1 else i["lo":"hi"]
        expr = ep.sum(j, A[rows, j["lo2":"hi2"]] * x[j])
        kerns = [ep.compile(expr, tuning=t) for t in (wide, {**wide, "window_blocks_wide": 0})]
        assert "400" in kerns[0].c_source and "400" not in kerns[1].c_source
        for lo, hi, lo2, hi2 in ((0, 30, 0, 128), (-4, 20, -6, 70), (3, 28, 20, 140),
                                 (2, 9, 50, 50), (1, 29, 10, 61), (0, 30, 0, 40)):
            v = np.arange(hi2 - lo2) % 7 + 1.0
            for kern in kerns:
                for operand in (M, T):
                    np.testing.assert_allclose(
                        kern(A=operand, x=v, lo=lo, hi=hi, lo2=lo2, hi2=hi2),
                        dense(d, lo, hi, step, lo2, hi2, v))
                W = M.copy()                       # written in place between calls
                for _ in range(2):
                    W.data *= -1.5
                    r = next(r for r in range(30) if W.indptr[r + 1] - W.indptr[r] >= 1)
                    W.indices[W.indptr[r]] = 0             # a first coordinate moved to 0
                    np.testing.assert_allclose(
                        kern(A=W, x=v, lo=lo, hi=hi, lo2=lo2, hi2=hi2),
                        dense(W.toarray(), lo, hi, step, lo2, hi2, v))
