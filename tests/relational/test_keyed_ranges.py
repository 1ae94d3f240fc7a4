"""Comparisons of a value column read in an order keyed by that value (expr.keyed):
`Day[d, o, ln, p] >= lo`, on a table's order keyed by day, is compiled as a range
of the day's codes (a search and a stop) and gives what a test of every row gives
(a pure-Python reference over the rows): bounds as parameters and numbers, strict
and not, empty and open, with other tests of the row beside it; values written in
place between calls; a tensor passed that is not so keyed is checked (an
InputError when its values are not one nondecreasing value per code)."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import etchpy as ep
from etchpy.errors import InputError
from etchpy.expr.compare import CompareVar, KeyedVar
from etchpy.expr.walk import accesses
from etchpy.formats import Format
from etchpy.runtime import keyed
from lines import lines

BY_DAY = ("day", "order", "line", "part")
d, o, ln, p = ep.indices("d o ln p")


def _table(cols, **kw):
    T = ep.table(cols, ["order", "line"], keys=["part"], values=["rev", "day"], name="L",
                 **kw)
    T.add_order(BY_DAY)
    return T


def _expr(T):
    """Σ rev over the rows of one order with lo <= day < hi and rev < most, the
    day's comparisons written on its column (its order's keyed column)."""
    Rev, Day = T.var("rev", order=BY_DAY, name="R")[d, o, ln, p], \
        T.var("day", order=BY_DAY, name="D")[d, o, ln, p]
    return ep.sum((d, ln, p), Rev * ((Day >= "lo") & (Rev < "most") & (Day < "hi")))


# the kernel's declared levels: dense, then compressed (a table's order may store
# singleton levels where its rows allow it; its tensors convert to these)
GENERAL = Format(["dense", "compressed", "compressed", "compressed"])


@pytest.fixture(scope="module")
def in_range():
    """_expr over variables of GENERAL levels: one kernel for every random table."""
    R, D = ep.tensor("R", 4, GENERAL), KeyedVar("D", 4, GENERAL, by=0)
    Rev, Day = R[d, o, ln, p], D[d, o, ln, p]
    expr = ep.sum((d, ln, p), Rev * ((Day >= "lo") & (Rev < "most") & (Day < "hi")))
    return ep.compile(expr, order=["d", "o", "ln", "p"])


def _keyed(expr) -> list:
    return [a.tensor for a in accesses(expr) if isinstance(a.tensor, CompareVar)
            and a.tensor.kind == "range" and a.tensor.keyed]


def _call(kern, T, **params):
    return kern(R=T.tensor("rev", order=BY_DAY), D=T.tensor("day", order=BY_DAY), **params)


def _want(cols, lo, hi, most=np.inf):
    order = ep.Keys(cols["order"]).code(cols["order"])
    keep = (cols["day"] >= lo) & (cols["day"] < hi) & (cols["rev"] < most)
    return np.bincount(order[keep], cols["rev"][keep], minlength=5)


def _same(got, want):
    np.testing.assert_array_equal(got[:len(want)], want[:len(got)])
    assert not got[len(want):].any() and not want[len(got):].any()


def test_the_day_comparisons_are_a_range_of_its_codes(in_range):
    T = _table(lines(np.random.default_rng(1), 5))
    assert isinstance(T.var("day", order=BY_DAY), KeyedVar)          # the order's value
    assert not isinstance(T.var("rev", order=BY_DAY), KeyedVar)
    expr = ep.compile(_expr(T), order=["d", "o", "ln", "p"]).request.expr
    [r] = _keyed(expr)
    assert r.keyed[0][:2] == ("D", 0) and r.tests == ((">=", "lo"), ("<", "hi"))
    rows = [a.tensor for a in accesses(expr) if getattr(a.tensor, "kind", "") == "value"]
    assert "D" in [c[0] for c in rows[0].columns]          # the rows D stores, still
    assert rows[0].params == ("most",)
    off = ep.compile(_expr(T), order=["d", "o", "ln", "p"],
                     tuning=ep.Tuning(keyed_ranges=False))
    assert _keyed(off.request.expr) == []                  # the row test as written
    assert len(_keyed(in_range.request.expr)) == 1


@settings(max_examples=20, deadline=None)
@given(seed=st.integers(0, 10**6), n=st.integers(1, 14),
       lo=st.sampled_from([-np.inf, -1, 0, 1.5, 2, 3, 5]),
       hi=st.sampled_from([0, 2, 2.5, 4, 6, np.inf]), most=st.sampled_from([3, 9]),
       skip=st.booleans())
def test_a_keyed_range_matches_the_rows_it_keeps(in_range, seed, n, lo, hi, most, skip):
    cols = lines(np.random.default_rng(seed), n)
    T = _table(cols, skip_unwritten=skip)
    _same(_call(in_range, T, lo=lo, hi=hi, most=most), _want(cols, lo, hi, most))


def test_values_written_in_place_between_calls():
    """On the table's own levels (its copies marked: the searched range; the
    summed levels below the line read as one, runtime.shared), the key value
    and another column written between calls."""
    rng = np.random.default_rng(3)
    cols = lines(rng, 12)
    T = _table(cols)
    at = (d, o, ln, p)
    Rev, Day = T.var("rev", order=BY_DAY, name="R")[at], T.var("day", order=BY_DAY, name="D")[at]
    kern = ep.compile(ep.sum((d, ln, p), (Day >= "lo") & (Rev < "most") & (Day < "hi")),
                      order=["d", "o", "ln", "p"])               # rows counted
    for step in range(3):
        ones = {**cols, "rev": np.ones(len(cols["rev"]))}
        keep = cols["rev"] < 9
        _same(_call(kern, T, lo=1, hi=4, most=9),
              _want({k: v[keep] for k, v in ones.items()}, 1, 4))
        days, revs = T.tensor("day").vals, T.tensor("rev").vals    # storage order
        days[rng.integers(0, len(days), 3)] = rng.integers(0, 8, 3)
        revs[step] = 5.0 + step
        coords, _ = T.relation("day").tensor.to_coords()
        keys = T.keys[0].values()[coords[0]]
        cols = {"order": keys, "day": days.copy(), "rev": revs.copy()}


def test_a_tensor_not_keyed_by_its_values_is_checked(in_range):
    cols = lines(np.random.default_rng(4), 10)
    T = _table(cols)
    D = T.tensor("day", order=BY_DAY)
    loose = ep.Tensor(D.shape, D.format, D.levels, D.vals.copy(), name="D")   # unmarked
    got = in_range(R=T.tensor("rev", order=BY_DAY), D=loose, lo=1, hi=4, most=9)
    _same(got, _want(cols, 1, 4, 9))
    loose.vals[:] += 2.0                 # written in place: still keyed, read as it is
    got = in_range(R=T.tensor("rev", order=BY_DAY), D=loose, lo=1, hi=4, most=9)
    _same(got, _want({**cols, "day": cols["day"] + 2.0}, 1, 4, 9))
    vals = D.vals.copy()
    vals[[0, -1]] = vals[[-1, 0]]
    if vals[0] != vals[-1]:
        bad = ep.Tensor(D.shape, D.format, D.levels, vals, name="D")
        with pytest.raises(InputError, match="input D .* keyed by its value"):
            in_range(R=T.tensor("rev", order=BY_DAY), D=bad, lo=1, hi=4, most=9)


def test_code_range_under_a_compressed_first_level():
    """runtime.keyed on a first level that stores its codes (a wide span of
    values): the marked search and the checked pass agree."""
    fmt = Format(["compressed", "compressed"])
    coords = np.array([[2, 2, 7, 9, 9, 9], [0, 3, 1, 0, 2, 4]])
    vals = np.array([20.0, 20.0, 70.0, 90.0, 90.0, 90.0])
    t = ep.Tensor.from_coords(coords, vals, (12, 5), fmt)
    frozen = ep.Tensor.from_coords(coords, vals, (12, 5), fmt)
    frozen = type(frozen)._of((frozen.shape, fmt, frozen.levels,
                               np.frombuffer(vals.tobytes()), 0.0), "t")
    keyed.mark(frozen, 0)
    for tests, want in (([(">=", 20.0), ("<", 90.0)], (2, 8)), ([(">", 20.0)], (7, 10)),
                        ([("<=", 19.0)], (0, 0)), ([("<=", 70.0), (">=", 70.0)], (7, 8))):
        assert keyed.code_range(t, 0, tests, "t") == want
        assert keyed.code_range(frozen, 0, tests, "t") == want


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 10**6), n=st.integers(1, 14), days=st.sampled_from([3, 40]),
       tests=st.lists(st.tuples(st.sampled_from([">=", ">", "<", "<="]),
                                st.sampled_from([-1.0, 0.0, 1.5, 2.0, 5.0, 39.0])),
                      min_size=1, max_size=3))
def test_the_searched_range_is_the_checked_one(seed, n, days, tests):
    """The binary searches on a table's (marked) copy of its order's value column
    give the codes the one-pass check gives, and those are the codes whose value
    passes (the table's own levels: singleton ones where its rows allow)."""
    T = _table(lines(np.random.default_rng(seed), n, days))
    D = T.tensor("day", order=BY_DAY)
    loose = ep.Tensor(D.shape, D.format, D.levels, D.vals.copy(), name="D")
    got = keyed.code_range(D, 0, tests, "D")
    assert got == keyed.code_range(loose, 0, tests, "D")
    values = T.value_keys(BY_DAY).values().astype(float)
    ok = np.ones(len(values), dtype=bool)
    for op, x in tests:
        ok &= {">=": values >= x, ">": values > x, "<": values < x, "<=": values <= x}[op]
    rows = T.tensor(None, order=BY_DAY).to_dense().reshape(len(values), -1)  # row counts
    held = np.flatnonzero(ok & (rows != 0).any(axis=1))
    want = (int(held[0]), int(held[-1]) + 1) if len(held) else (0, 0)
    assert got == want
