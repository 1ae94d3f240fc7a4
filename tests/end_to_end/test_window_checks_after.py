"""A window's coordinates checked after each block of its rows
(Tuning.check_after; lower.schedule.segment_checks.block_loop, fused_checks;
law in proofs_notes/validation.md, "Coordinates checked after a block"): the
checked build of a scipy operand read through a row window walks each block's
rows with no count of bad coordinates (window walks, whose reads are inside
the window whatever the coordinate, Walk.inside: not even a clamp), then tests
the block's coordinates in one flat pass. And the far copy's terms kept by
their bytes are order-free (order_free: `acc ⊕ keep(t, v)`), so it walks with
no order test. Small operands: prefetch_min_bytes 256 and a buffer of 5 make
narrow column windows run in blocks and wide ones in the far copy; blocks of 4
rows. Against the dense reference: shifts, bounds as parameters, a bad
coordinate inside and outside the column window, in a later block, in a row
outside the window (answered); one kernel, its checked and trusted builds."""
import numpy as np
import pytest
import scipy.sparse as sp

import etchpy as ep
from etchpy import imp
from etchpy.errors import InputError

pytestmark = pytest.mark.usefixtures("shared_cache")
i, j = ep.indices("i j")
TUNING = {"prefetch_min_bytes": 256, "window_blocks": 5, "check_block": 4}
ROWS, COLS = 30, 160


def random_rows(seed: int) -> np.ndarray:
    """Rows of 0 to about 12 entries at random columns (far: spans over 1/8)."""
    rng = np.random.default_rng(seed)
    d = np.where(rng.random((ROWS, COLS)) < rng.random((ROWS, 1)) * 0.08,
                 rng.integers(1, 9, (ROWS, COLS)), 0).astype(float)
    d[7] = 0
    return d


def expected(d, lo, hi, lo2, hi2, v):
    """The window's restriction and shift (the fill outside d) times v."""
    rows, cols = np.arange(lo, hi), np.arange(lo2, hi2)
    inside = np.zeros((len(rows), len(cols)))
    r_in, c_in = (rows >= 0) & (rows < ROWS), (cols >= 0) & (cols < COLS)
    inside[np.ix_(r_in, c_in)] = d[np.ix_(rows[r_in], cols[c_in])]
    return inside @ v


def _names(prog, suffix):
    return [n.name for n in imp.statements(prog.body) if isinstance(n, imp.Decl)
            and n.name.endswith(suffix)]


def test_a_windows_coordinates_checked_after_each_block_answer_or_refuse():
    """Blocks (columns 5..30, x of 25 values) and the far copy (columns -6..80
    and 70..170: more than a third of the columns, x of 86 to 100 values);
    the scipy operand (checked build) and its Tensor (trusted) agree with the
    reference; a coordinate out of range (-5 or 10**6) in a window's row, in or
    out of the column window, in its first or a later block, is an InputError
    naming A; one in a row outside the window is never read."""
    d = random_rows(4)
    M, T = sp.csr_array(d), ep.Tensor.from_scipy(sp.csr_array(d), "csr")
    A, x = ep.tensor("A", 2, "csr"), ep.tensor("x", 1)
    kern = ep.compile(ep.sum(j, A[i["lo":"hi"], j["lo2":"hi2"]] * x[j]), tuning=TUNING)
    windows = ((2, 27, 5, 30), (-4, 20, -6, 80), (3, 33, 70, 170), (9, 9, 0, 40))
    for lo, hi, lo2, hi2 in windows:
        v = np.arange(hi2 - lo2) % 7 + 1.0
        for operand in (M, T):
            np.testing.assert_allclose(kern(A=operand, x=v, lo=lo, hi=hi, lo2=lo2, hi2=hi2),
                                       expected(d, lo, hi, lo2, hi2, v))
    full = [r for r in range(ROWS) if M.indptr[r + 1] - M.indptr[r] >= 2]
    for row, at in ((full[1], 0), (full[-3], 1)):             # a first and a later block
        for bad in (-5, 10**6):
            R = M.copy()
            R.indices[R.indptr[row] + at] = bad
            for lo, hi, lo2, hi2 in windows[:3]:
                v = np.ones(hi2 - lo2)
                if lo <= row < hi:
                    with pytest.raises(InputError, match="A"):
                        kern(A=R, x=v, lo=lo, hi=hi, lo2=lo2, hi2=hi2)
                else:                                          # a row never read
                    np.testing.assert_allclose(kern(A=R, x=v, lo=lo, hi=hi, lo2=lo2, hi2=hi2),
                                               expected(d, lo, hi, lo2, hi2, v))


def test_the_switch_restores_the_count_and_the_far_copy_is_order_free():
    """check_after on: the checked program tests each block's coordinates after
    it (the pass's `_cmax`) and counts none in its walks (no `input_bad`); off:
    the walks count them. Either way the far copy (window_keep's terms) walks
    with no order test (no `_prev`), and a repeated coordinate in a far row is
    summed as scipy sums it."""
    A, x = ep.tensor("A", 2, "csr"), ep.tensor("x", 1)
    expr = ep.sum(j, A[i["lo":"hi"], j["lo2":"hi2"]] * x[j])
    for tuning, after in ((TUNING, True), ({**TUNING, "check_after": False}, False)):
        checked = ep.compile(expr, tuning=tuning).compiled.checked
        assert bool(_names(checked, "_cmax")) == after
        assert (not _names(checked, "input_bad")) == after
        assert not _names(checked, "_prev")
    d = random_rows(6)
    M = sp.csr_array(d)
    row = next(r for r in range(2, 20) if M.indptr[r + 1] - M.indptr[r] >= 2)
    M.indices[M.indptr[row] + 1] = M.indices[M.indptr[row]]                  # a repeat
    v = np.arange(100) % 5 + 1.0
    np.testing.assert_allclose(ep.compile(expr, tuning=TUNING)(A=M, x=v, lo=2, hi=20, lo2=-6,
                                                               hi2=94),
                               expected(M.toarray(), 2, 20, -6, 94, v))
