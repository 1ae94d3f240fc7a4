"""A strided row window's near rows prefetch the arrays of the row
Tuning.window_rows_ahead rows of the window on (lower.schedule.window_walks.
_rows_ahead; law in proofs_notes/windows.md, "Strided rows' arrays
prefetched"): at each row's start t := pos[min(o + p·s + r·s, rows)], and the
lines of crd and of the values holding window_rows_span entries from t, where t
is inside crd and x holds 1/8 of prefetch_min_bytes or more. A hint only: against the dense reference with steps 2 and 3,
shifts past both ends, empty windows, bounds as parameters, a scipy operand (its
checked build, a row the window never reads pointing far past the entries) and
an ep.Tensor, and semirings whose zero is all-zero bytes (real, integer) and
is not (min_plus)."""
import numpy as np
import pytest
import scipy.sparse as sp

import etchpy as ep
from etchpy import imp
from tests.end_to_end.test_window_keep import window

pytestmark = pytest.mark.usefixtures("shared_cache")
i, j = ep.indices("i j")
AHEAD = {"window_rows_ahead": 2, "window_rows_span": 8, "window_blocks": 0,
         "prefetch_min_bytes": 512}          # x of 8 values or more; no row is far


def near_rows(seed: int, shape=(30, 40), dtype=float) -> np.ndarray:
    """Rows of about 4 to 12 entries around the diagonal (near: no far copy)."""
    rng = np.random.default_rng(seed)
    rows, cols = np.indices(shape)
    d = np.where((abs(rows - cols) < 8) & (rng.random(shape) < 0.6),
                 rng.integers(1, 9, shape), 0).astype(dtype)
    d[7] = 0
    return d


def fetches_rows(kern) -> bool:
    """Whether both C builds (trusted and checked) declare the row ahead."""
    c = kern.compiled
    found = [any(isinstance(n, imp.Decl) and n.name.startswith("j_next")
                 for n in imp.statements(p.body)) for p in (c.program, c.checked)]
    assert found[0] == found[1]
    return found[0]


def test_strided_rows_prefetched_ahead_are_the_restriction_and_the_shift():
    """float, step 3, one kernel for all bounds, scipy operand and Tensor;
    off (window_rows_span 0) nothing declared."""
    A, x = ep.tensor("A", 2, "csr"), ep.tensor("x", 1)
    d = near_rows(1)
    M = sp.csr_array(d)
    M.indptr[29] = 10 ** 6                      # row 28: never read, but prefetched from
    T = ep.Tensor.from_scipy(sp.csr_array(d), "csr")
    expr = ep.sum(j, A[i["lo":"hi":3], j["lo2":"hi2"]] * x[j])
    kern = ep.compile(expr, tuning=AHEAD)
    assert fetches_rows(kern)
    assert not fetches_rows(ep.compile(expr, tuning={**AHEAD, "window_rows_span": 0}))
    for lo, hi, lo2, hi2 in ((0, 27, 5, 35), (-4, 20, -6, 30), (2, 27, 0, 40),
                             (5, 5, 0, 9), (1, 26, 12, 12), (24, 45, 30, 45)):
        v = np.arange(hi2 - lo2) % 7 + 1.0
        want = window(d, lo, hi, 3, lo2, hi2) @ v
        for operand in (M, T):
            got = kern(A=operand, x=v, lo=lo, hi=hi, lo2=lo2, hi2=hi2)
            np.testing.assert_allclose(got, want)


@pytest.mark.parametrize("semiring, dtype", [("integer", np.int64), ("min_plus", float)])
def test_strided_rows_prefetched_in_other_semirings(semiring, dtype):
    """Step 2 on an ep.Tensor, shifted, exact: the zero all-zero bytes or not."""
    A, x = ep.tensor("A", 2, "csr"), ep.tensor("x", 1)
    d = near_rows(2, (16, 24), dtype)
    sr = ep.semirings.get(semiring)
    if semiring == "min_plus":
        d = np.where(d == 0, np.inf, d)
    T = ep.Tensor.from_dense(d, "csr", semiring=semiring)
    kern = ep.compile(ep.sum(j, A[i["lo":"hi":2], j["lo2":"hi2"]] * x[j]), semiring=semiring,
                      tuning=AHEAD)
    assert fetches_rows(kern)
    for lo, hi, lo2, hi2 in ((1, 15, 2, 20), (-3, 12, -4, 10), (6, 20, 20, 30)):
        v = (np.arange(hi2 - lo2) % 5 + 1).astype(dtype)
        w = window(np.where(d == sr.zero, 0, d) if semiring == "min_plus" else d,
                   lo, hi, 2, lo2, hi2)
        if semiring == "min_plus":
            w = np.where(w == 0, np.inf, w)
            want = np.min(w + v, axis=1, initial=np.inf)
        else:
            want = w @ v
        np.testing.assert_array_equal(kern(A=T, x=v, lo=lo, hi=hi, lo2=lo2, hi2=hi2), want)
