"""Window walks (streams.window.window_walk, lower.schedule.window_walks; law in
proofs_notes/windows.md, "A window walk"): a compressed level read through a
step-1 window is walked whole, the window a test on each coordinate, long
segments narrowed by two searches first, and a scalar sum over it runs with no
branch. Against the reference on every backend (the stream interpreter with
its invariant checks), with the walk on and off, the narrowing at every
segment and at none, in several semirings; a scipy input changed in place
between calls is checked by the kernel itself (fused checks, the narrowing
dropped) and gives the right answer or an InputError naming it."""
import numpy as np
import pytest
import scipy.sparse as sp

import etchpy as ep
from etchpy.errors import InputError
from etchpy.testing import check_backends

pytestmark = pytest.mark.usefixtures("shared_cache")
i, j = ep.indices("i j")
TUNINGS = ({}, {"window_walk_long": 1}, {"window_walk": False})


def operand(seed: int, shape=(14, 40), density=0.3) -> np.ndarray:
    return sp.random_array(shape, density=density, format="csr",
                           random_state=seed).toarray().round(2)


@pytest.mark.parametrize("fmt, semiring, tuning", [
    ("csr", "real", TUNINGS[0]), ("csr", "real", TUNINGS[1]), ("csr", "real", TUNINGS[2]),
    ("csc", "min_plus", TUNINGS[0]), ("dcsr", "max_times", TUNINGS[1])])
def test_a_window_walk_is_the_restriction_and_the_shift(fmt, semiring, tuning):
    """On the stream interpreter, its invariant checks on (the C build, the
    branch-free sum included, in the tests below)."""
    A, x, y = ep.tensor("A", 2, fmt), ep.tensor("x", 1), ep.tensor("y", 1, ep.Format(["compressed"]))
    d = operand(1)
    if semiring != "real":
        d = np.where(d == 0, ep.semirings.get(semiring).zero, d)
    rng = np.random.default_rng(2)
    for lo, hi, lo2, hi2 in ((2, 11, 5, 25), (-3, 4, -6, 9), (10, 20, 30, 50), (3, 9, 7, 7)):
        win = A[i[lo:hi], j[lo2:hi2]]
        v = rng.random(max(hi2 - lo2, 0)) + 0.5
        check_backends(ep.sum(j, win * x[j]), {"A": d, "x": v}, semiring=semiring,
                       tuning=tuning, backends=("streams",))
        check_backends(win, {"A": d}, semiring=semiring, tuning=tuning, backends=("streams",))
        sv = np.where(np.arange(len(v)) % 3 == 0, v, 0.0)      # a merge with a sparse vector
        check_backends(ep.sum(j, win * y[j]), {"A": d, "y": sv}, semiring=semiring,
                       tuning=tuning, backends=("streams",))


@pytest.mark.parametrize("tuning", TUNINGS)
def test_window_walks_with_parameter_bounds_and_long_rows(tuning):
    """One kernel for all bounds; rows of 0 to 40 entries (the narrowing where
    longer than Tuning.window_walk_long), in C."""
    d = operand(3, (20, 60), 0.05)
    d[4] = np.arange(60) + 1.0
    d[9, ::2] = 2.0
    A, x = ep.tensor("A", 2, "csr"), ep.tensor("x", 1)
    win = A[i["lo":"hi"], j["lo2":"hi2"]]
    spmv = ep.compile(ep.sum(j, win * x[j]), tuning=tuning)
    M = sp.csr_array(d)
    for lo, hi, lo2, hi2 in ((0, 20, 10, 50), (3, 12, -5, 20), (2, 18, 55, 70), (4, 5, 0, 60)):
        want = d[max(lo, 0):hi, max(lo2, 0):hi2]
        pad = (max(0, -lo), max(0, -lo2))
        v = np.linspace(1, 2, hi2 - lo2)
        got = spmv(A=M, x=v, lo=lo, hi=hi, lo2=lo2, hi2=hi2)
        np.testing.assert_allclose(got[pad[0]:], want @ v[pad[1]:pad[1] + want.shape[1]])
    assert len(spmv._libs) == 1


def test_the_sum_over_a_window_walk_has_no_branch_and_its_check_no_search():
    """The trusted build searches and stops on long rows (Tuning.window_walk_stop)
    and selects on short ones; with the choice off it narrows long rows and
    selects on all; the checked build (a scipy input bound without its check)
    walks whole rows, no search, long ones branching."""
    from etchpy import imp
    A, x = ep.tensor("A", 2, "csr"), ep.tensor("x", 1)
    for tuning, n_seeks in (({"window_prefetch": 0, "window_blocks": 0}, 1),
                            ({"window_walk_stop": 0, "window_prefetch": 0, "window_blocks": 0}, 2)):
        kern = ep.compile(ep.sum(j, A[i["lo":"hi"], j["lo2":"hi2"]] * x[j]), tuning=tuning)
        trusted, checked = kern.compiled.program, kern.compiled.checked
        seeks = [n for n in imp.statements(trusted.body) if isinstance(n, imp.Seek)]
        assert len(seeks) == n_seeks and not any(isinstance(n, imp.Seek)
                                                 for n in imp.statements(checked.body))
        walks = [n for n in imp.statements(trusted.body) if isinstance(n, imp.While)
                 and n.walk is not None]
        selects = [w for w in walks if not any(isinstance(n, imp.If) and not _hint(n)
                                               for n in imp.statements(w.body))]
        assert len(selects) == 1 and len(walks) == 2 - n_seeks + 1
        assert checked.fused


def _hint(node) -> bool:
    """An If that only prefetches (Tuning.window_prefetch): no branch of the sum."""
    from etchpy import imp
    return all(isinstance(n, (imp.Prefetch, imp.Seq)) for n in imp.statements(node.then))


def long_rows(seed: int, shape=(24, 50)) -> np.ndarray:
    """Rows of 0 to shape[1] entries, some as a band (banded matrices' rows)."""
    rng = np.random.default_rng(seed)
    d = np.where(rng.random(shape) < rng.random((shape[0], 1)), rng.random(shape) + 0.5, 0.0)
    for r in range(0, shape[0], 3):
        d[r] = 0.0
        d[r, max(2 * r - 6, 0):2 * r + 6] = r + 1.0
    return d.round(2)


@pytest.mark.parametrize("fmt, semiring, stop", [
    ("csr", "max_times", 3), ("dcsr", "min_plus", 5)])
def test_the_choice_per_segment_is_the_restriction_and_the_shift(fmt, semiring, stop):
    """The search and stop on segments longer than window_walk_stop, the walk on
    the others: against the reference, through the Imp interpreter and in C."""
    d = long_rows(4)
    if semiring != "real":
        d = np.where(d == 0, ep.semirings.get(semiring).zero, d)
    A, x = ep.tensor("A", 2, fmt), ep.tensor("x", 1)
    expr = ep.sum(j, A[i["lo":"hi"], j["lo2":"hi2"]] * x[j])
    rng = np.random.default_rng(5)
    for lo, hi, lo2, hi2 in ((2, 20, 10, 30), (-3, 9, -4, 60), (5, 26, 0, 50), (1, 8, 33, 33)):
        v = rng.random(max(hi2 - lo2, 0)) + 0.5
        check_backends(expr, {"A": d, "x": v, "lo": lo, "hi": hi, "lo2": lo2, "hi2": hi2},
                       semiring=semiring, tuning={"window_walk_stop": stop}, backends=("c",))


def test_the_choice_per_segment_with_parameter_bounds_on_scipy_and_tensor_inputs():
    """One kernel for all bounds, on a scipy input (checked as walked, long rows
    branching) and on its ep.Tensor (trusted: long rows searched and stopped),
    rows of 0 to 50 entries. A step > 1 keeps the generic window (no walk)."""
    d = long_rows(6)
    M = sp.csr_array(d)
    T = ep.Tensor.from_scipy(M, "csr")
    A, x = ep.tensor("A", 2, "csr"), ep.tensor("x", 1)
    spmv = ep.compile(ep.sum(j, A[i["lo":"hi"], j["lo2":"hi2"]] * x[j]),
                      tuning={"window_walk_stop": 1})
    for lo, hi, lo2, hi2 in ((0, 24, 10, 40), (3, 12, -5, 20), (2, 18, 45, 70), (4, 5, 0, 50)):
        v = np.linspace(1, 2, hi2 - lo2)
        pad = max(0, -lo2)
        want = d[lo:hi, max(lo2, 0):hi2] @ v[pad:pad + d[:, max(lo2, 0):hi2].shape[1]]
        for operand_ in (M, T):
            np.testing.assert_allclose(spmv(A=operand_, x=v, lo=lo, hi=hi, lo2=lo2, hi2=hi2),
                                       want)


@pytest.mark.parametrize("row, stop", [(3, 8), (12, 8), (3, 1)])  # in and out of the
def test_a_scipy_operand_changed_in_place_is_checked_by_the_walk(row, stop):  # rows 2..9
    """The rows the window reads are checked as they are walked (long rows too,
    which the trusted build searches and stops: Tuning.window_walk_stop): a bad
    one is an InputError naming A; a row outside the window is not read (right
    answer)."""
    d = operand(5, (16, 30))
    M = sp.csr_array(d)
    A, x = ep.tensor("A", 2, "csr"), ep.tensor("x", 1)
    kern = ep.compile(ep.sum(j, A[i["lo":"hi"], j["lo2":"hi2"]] * x[j]),
                      tuning={"window_walk_stop": stop})
    v = np.arange(10.0) + 1
    bounds = dict(lo=2, hi=10, lo2=5, hi2=15)
    want = d[2:10, 5:15] @ v

    def bad_or_right():
        if 2 <= row < 10:
            with pytest.raises(InputError, match="A"):
                kern(A=M, x=v, **bounds)
        else:
            np.testing.assert_allclose(kern(A=M, x=v, **bounds), want)

    for _ in range(2):
        np.testing.assert_allclose(kern(A=M, x=v, **bounds), want)
    a, b = M.indptr[row], M.indptr[row + 1]
    assert b - a >= 2
    good, vals = M.indices[a:b].copy(), M.data[a:b].copy()
    M.indices[a] = 10 ** 6                              # out of range
    bad_or_right()
    M.indices[a:b], M.data[a:b] = good[::-1], vals[::-1]    # unsorted: canonicalised
    np.testing.assert_allclose(kern(A=M, x=v, **bounds), want)
    M.indices[a:b], M.data[a:b] = good, vals
    M.indptr[row + 1] = 10 ** 6                         # a pointer past the entries
    bad_or_right()


PREFETCHED = {"prefetch_min_bytes": 0, "prefetch_near_share": 0, "window_prefetch": 3,
              "window_walk_stop": 4, "window_walk_long": 6}


def test_a_window_walk_prefetching_ahead_is_the_restriction_and_the_shift():
    """Tuning.window_prefetch: every segment far (no size or span test), 3
    states ahead (crd read past the segment, up to crd's end), rows walked,
    searched and stopped, and walked whole by length, in a copy of the loops
    under the segment's `far` flag: one kernel for all bounds, on a scipy input
    (checked as walked) and on its ep.Tensor, against the reference; with
    Tuning.window_prefetch 0, or outside the loops' copy, nothing prefetches."""
    from etchpy import imp
    d = long_rows(9)
    M = sp.csr_array(d)
    T = ep.Tensor.from_scipy(M, "csr")
    A, x = ep.tensor("A", 2, "csr"), ep.tensor("x", 1)
    expr = ep.sum(j, A[i["lo":"hi"], j["lo2":"hi2"]] * x[j])
    kern = ep.compile(expr, tuning=PREFETCHED)
    for lo, hi, lo2, hi2 in ((0, 24, 10, 40), (-3, 24, -5, 20), (2, 18, 45, 70), (5, 9, 0, 50)):
        v = np.linspace(1, 2, hi2 - lo2)
        pad = max(0, -lo2)
        want = d[max(lo, 0):hi, max(lo2, 0):hi2] @ v[pad:pad + d[:, max(lo2, 0):hi2].shape[1]]
        for operand_ in (M, T):
            got = kern(A=operand_, x=v, lo=lo, hi=hi, lo2=lo2, hi2=hi2)
            np.testing.assert_allclose(got[max(0, -lo):], want)
    for tuning, fetches in ((PREFETCHED, True), ({**PREFETCHED, "window_prefetch": 0,
                                                  "window_blocks_ahead": 0}, False)):
        compiled = ep.compile(expr, tuning=tuning).compiled
        for prog in (compiled.program, compiled.checked):
            fetched = [n for n in imp.statements(prog.body) if isinstance(n, imp.Prefetch)]
            flags = [n for n in imp.statements(prog.body) if isinstance(n, imp.Decl)
                     and n.name.startswith("j_far")]
            assert bool(fetched) == fetches == bool(flags)


def test_a_strided_window_prefetches_the_rows_ahead_and_is_the_restriction():
    """Tuning.window_prefetch_rows: a row window of step s, its rows not
    consecutive in storage, prefetches at the same place of the row
    window_prefetch_rows rows on (pos[min(o + p·s + r·s, rows)] − pos[o + p·s]
    ahead, read only inside crd): steps 2 and 3, shifted, on a scipy input
    (checked as walked) and its ep.Tensor, against the reference, with a
    pointer past the entries in a row the window never reads; 0: nothing
    prefetched."""
    from etchpy import imp
    d = long_rows(4, (30, 50))
    A, x = ep.tensor("A", 2, "csr"), ep.tensor("x", 1)
    for step in (2, 3):
        expr = ep.sum(j, A[i["lo":"hi":step], j["lo2":"hi2"]] * x[j])
        kern = ep.compile(expr, tuning={**PREFETCHED, "window_prefetch_rows": 2})
        M = sp.csr_array(d)
        M.indptr[29] = 10 ** 6                              # row 28 is never read
        T = ep.Tensor.from_scipy(sp.csr_array(d), "csr")
        for lo, hi, lo2, hi2 in ((0, 27, 10, 40), (-4, 20, -5, 20), (3, 28, 0, 50)):
            v = np.linspace(1, 2, hi2 - lo2)
            rows, cols = np.arange(lo, hi, step), np.arange(lo2, hi2)
            inside = np.zeros((len(rows), len(cols)))            # the fill outside d
            r_in, c_in = (rows >= 0) & (rows < 30), (cols >= 0) & (cols < 50)
            inside[np.ix_(r_in, c_in)] = d[np.ix_(rows[r_in], cols[c_in])]
            for operand_ in (M, T):
                got = kern(A=operand_, x=v, lo=lo, hi=hi, lo2=lo2, hi2=hi2)
                np.testing.assert_allclose(got, inside @ v)
    off = ep.compile(expr, tuning={**PREFETCHED, "window_prefetch_rows": 0,
                                   "window_rows_span": 0, "window_blocks_ahead": 0}).compiled
    for prog, fetches in ((kern.compiled, True), (off, False)):
        for body in (prog.program.body, prog.checked.body):
            assert any(isinstance(n, imp.Prefetch) for n in imp.statements(body)) == fetches


def test_a_windows_rows_are_checked_ahead_and_its_repeats_summed():
    """Tuning.check_windows: the checked build runs a window's rows in blocks,
    each block's segments checked ahead (segment_checks: pos[o + r] <= pos[o + r
    + 1], pos[o + end] <= nnz, pos[o + c] >= 0), and walks them with no order
    test (the sum is order-free: its coordinate only says where and whether,
    fused_checks.order_free). A scipy input with a repeated coordinate in a row
    is summed as scipy sums it; a row ending before its start inside the window
    is an InputError naming A. Off: no block loop."""
    from etchpy import imp
    d = operand(5, (16, 30))
    M = sp.csr_array(d)
    rows = [M.indices[M.indptr[r]:M.indptr[r + 1]] for r in range(16)]
    vals = [M.data[M.indptr[r]:M.indptr[r + 1]] for r in range(16)]
    rows[4], vals[4] = np.r_[rows[4], rows[4][:1]], np.r_[vals[4], 5.0]    # a repeat
    R = sp.csr_array((np.concatenate(vals), np.concatenate(rows),
                      np.r_[0, np.cumsum([len(r) for r in rows])]), shape=(16, 30))
    A, x = ep.tensor("A", 2, "csr"), ep.tensor("x", 1)
    expr = ep.sum(j, A[i["lo":"hi"], j["lo2":"hi2"]] * x[j])
    kern = ep.compile(expr, tuning={"window_walk_stop": 8})
    v = np.arange(10.0) + 1
    np.testing.assert_allclose(kern(A=R, x=v, lo=2, hi=10, lo2=5, hi2=15),
                               R.toarray()[2:10, 5:15] @ v)
    R.indptr[6] = R.indptr[5] - 1                           # row 5 ends before it starts
    with pytest.raises(InputError, match="A"):
        kern(A=R, x=v, lo=2, hi=10, lo2=5, hi2=15)
    for tuning, blocks in (({}, True), ({"check_windows": False}, False)):
        checked = ep.compile(expr, tuning=tuning).compiled.checked
        assert blocks == any(isinstance(n, imp.Decl) and n.name.endswith("_block")
                             for n in imp.statements(checked.body))
