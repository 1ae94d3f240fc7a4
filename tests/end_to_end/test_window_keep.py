"""A far window walk's terms kept by their bytes (Tuning.window_keep,
lower.schedule.window_walks; law in proofs_notes/windows.md, "Far terms kept
by their bytes"): in the prefetching (far) copy of a windowed sum, each state's
term is ⊕-added with its bytes masked by the window test, no branch, where the
carrier's zero is all-zero bytes. Small operands here, so the tests lower
prefetch_min_bytes (x of 16 values or more) and turn window_blocks off (its
blocks would take these rows). Against the dense reference: steps, shifts,
bounds as parameters, int and float, empty windows, a scipy operand and a
Tensor (one C build each), an infinity and a NaN at the index a missed entry reads, and a
semiring whose zero is not zero bytes (the select kept)."""
import numpy as np
import pytest
import scipy.sparse as sp

import etchpy as ep
from etchpy import imp
from tests.end_to_end.test_window_blocks import random_rows

pytestmark = pytest.mark.usefixtures("shared_cache")
i, j = ep.indices("i j")
FAR = {"prefetch_min_bytes": 128, "window_blocks": 0}      # x of 16 values or more is far


def window(d, lo, hi, step, lo2, hi2):
    """d[lo:hi:step, lo2:hi2] with the rows and columns outside d as zeros."""
    rows, cols = np.arange(lo, hi, step), np.arange(lo2, hi2)
    out = np.zeros((len(rows), len(cols)), dtype=d.dtype)
    r_in, c_in = (rows >= 0) & (rows < d.shape[0]), (cols >= 0) & (cols < d.shape[1])
    out[np.ix_(r_in, c_in)] = d[np.ix_(rows[r_in], cols[c_in])]
    return out


def keeps(kern) -> bool:
    """Whether both C builds (the trusted one and the checked one) keep by bytes."""
    c = kern.compiled
    found = [any(isinstance(x, imp.Bin) and x.op == "keep" for x in imp.subterms(p.body))
             for p in (c.program, c.checked)]
    assert found[0] == found[1]
    return found[0]


def test_far_terms_kept_by_their_bytes_are_the_restriction_and_the_shift():
    """float, step 1, one kernel for all bounds (shifts past both ends, empty
    windows) on a scipy operand (the checked build); the keep is in both
    builds' programs, and not with window_keep off."""
    A, x = ep.tensor("A", 2, "csr"), ep.tensor("x", 1)
    d = random_rows(1)
    M = sp.csr_array(d)
    expr = ep.sum(j, A[i["lo":"hi"], j["lo2":"hi2"]] * x[j])
    kern = ep.compile(expr, tuning=FAR)
    assert keeps(kern) and not keeps(ep.compile(expr, tuning={**FAR, "window_keep": False}))
    for lo, hi, lo2, hi2 in ((0, 30, 5, 60), (-4, 20, -6, 40), (3, 28, 100, 128),
                             (5, 5, 0, 20), (2, 9, 12, 12), (1, 29, 40, 120)):
        v = np.arange(hi2 - lo2) % 7 + 1.0
        want = window(d, lo, hi, 1, lo2, hi2) @ v
        np.testing.assert_allclose(kern(A=M, x=v, lo=lo, hi=hi, lo2=lo2, hi2=hi2), want)


def test_far_int_terms_kept_in_a_strided_window():
    """int64, step 2, on an ep.Tensor (the trusted build): exact sums."""
    A, x = ep.tensor("A", 2, "csr"), ep.tensor("x", 1)
    d = random_rows(4, dtype=np.int64)
    T = ep.Tensor.from_scipy(sp.csr_array(d), "csr")
    kern = ep.compile(ep.sum(j, A[i["lo":"hi":2], j["lo2":"hi2"]] * x[j]), semiring="integer",
                      tuning=FAR)
    assert keeps(kern)
    for lo, hi, lo2, hi2 in ((0, 30, 5, 60), (-3, 21, -6, 40), (1, 29, 40, 120), (4, 4, 0, 9)):
        v = np.arange(hi2 - lo2, dtype=np.int64) % 7 + 1
        got = kern(A=T, x=v, lo=lo, hi=hi, lo2=lo2, hi2=hi2)
        assert got.dtype == np.int64 and (got == window(d, lo, hi, 2, lo2, hi2) @ v).all()


def test_a_missed_entry_never_adds_the_infinity_or_nan_it_reads():
    """A miss reads x at the window's safe index and drops the term by its
    bytes: an infinity or a NaN there reaches only the rows that hold that
    column (0·inf would be NaN, a masked product is 0)."""
    A, x = ep.tensor("A", 2, "csr"), ep.tensor("x", 1)
    d = random_rows(2)
    d[3, 10], d[5, 10] = 2.0, 0.0
    kern = ep.compile(ep.sum(j, A[i["lo":"hi"], j["lo2":"hi2"]] * x[j]), tuning=FAR)
    assert keeps(kern)
    for bad in (np.inf, -np.inf, np.nan):
        v = np.arange(1.0, 81.0)
        v[0] = bad
        want = np.array([sum(w * v[c] for c, w in enumerate(row) if w)
                         for row in window(d, 0, 30, 1, 10, 90)])
        got = kern(A=sp.csr_array(d), x=v, lo=0, hi=30, lo2=10, hi2=90)
        np.testing.assert_array_equal(got, want)
        assert np.isfinite(got[5]) and not np.isfinite(got[3])


def test_a_semiring_whose_zero_is_not_zero_bytes_keeps_the_select():
    """min_plus (zero ∞): no keep, the select (its sums: test_window_walks)."""
    A, x = ep.tensor("A", 2, "csr"), ep.tensor("x", 1)
    expr = ep.sum(j, A[i["lo":"hi"], j["lo2":"hi2"]] * x[j])
    assert not keeps(ep.compile(expr, semiring="min_plus", tuning=FAR))
