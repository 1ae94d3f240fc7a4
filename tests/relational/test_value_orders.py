"""An order keyed by a value column (Table.add_order([value, *keys]),
relational.by_value): a range of the value read as a range of its first level
gives what a test of every row gives, and stays right when the values (of the
key value or of another column) are written in place between calls."""
import numpy as np
import pytest

import etchpy as ep
from etchpy.errors import InputError
from lines import lines

BY_DAY = ("day", "order", "line", "part")


@pytest.fixture(scope="module")
def by_day_sum():
    """Σ over the rows of one order whose day lies in [lo, hi), read by the day's
    range: one kernel for every test (its C compiled once)."""
    d, o, ln, p = ep.indices("d o ln p")
    T = ep.table(lines(np.random.default_rng(0)), ["order", "line"], keys=["part"],
                 values=["rev", "day"], name="L")
    T.add_order(BY_DAY)
    expr = ep.sum((d, ln, p), T.var("rev", order=BY_DAY)[d, o, ln, p]
                  * ep.between(d, "lo", "hi"))
    return ep.compile(expr, order=["d", "o", "ln", "p"])


def _call(kern, T, lo, hi):
    first, end = T.value_keys(BY_DAY).codes_between(lo, hi)
    return kern(L=T.tensor("rev", order=BY_DAY), lo=first, hi=end)


def _expected(cols, lo, hi):
    keep = (cols["day"] >= lo) & (cols["day"] < hi)
    return np.bincount(cols["order"][keep], cols["rev"][keep], minlength=5)


@pytest.mark.parametrize("seed", range(4))
def test_a_range_of_the_value_is_the_rows_in_it(by_day_sum, seed):
    rng = np.random.default_rng(seed)
    cols = lines(rng)
    T = ep.table(cols, ["order", "line"], keys=["part"], values=["rev", "day"], name="L",
                 skip_unwritten=bool(seed % 2))
    assert T.add_order(BY_DAY) == BY_DAY and BY_DAY in T.orders
    assert "order keyed by a value ('day', 'order', 'line', 'part')" in T.explain()
    assert "the query reads L in the order keyed by a value ('day', 'order', 'line', " \
        "'part')" in T.explain(by_day_sum)
    cols = {**cols, "order": T.keys[0].code(cols["order"])}
    for lo, hi in ((0, 6), (1, 3), (2.5, 4), (5, 1), (-1, 0)):
        got, want = _call(by_day_sum, T, lo, hi), _expected(cols, lo, hi)
        np.testing.assert_array_equal(got[:len(want)], want[:len(got)])
    # written in place between calls: the key value (the order is built again, and
    # a level that was one child a parent keeps its kind) and another column
    for k in range(3):
        days = T.tensor("day").vals
        days[rng.integers(0, len(days), 3)] = rng.integers(0, 8, 3)
        T.tensor("rev").vals[k] = 100.0 + k
        rows = T.relation("day").tensor.to_coords()
        cols = {"order": rows[0][0], "day": T.tensor("day").vals.copy(),
                "rev": T.tensor("rev").vals.copy()}
        for lo, hi in ((0, 8), (3, 6)):
            got = _call(by_day_sum, T, lo, hi)
            want = _expected(cols, lo, hi)
            np.testing.assert_array_equal(got[:len(want)], want[:len(got)])


def test_value_keyed_orders_refuse_what_they_cannot_be():
    cols = lines(np.random.default_rng(1))
    T = ep.table(cols, ["order", "line"], keys=["part"], values=["rev", "day"], name="L")
    with pytest.raises(InputError, match="a value column .* then the key columns"):
        T.add_order(["day", "order", "line"])
    with pytest.raises(InputError, match="once each"):
        T.add_order(["order", "day", "line", "part"])
    with pytest.raises(InputError, match="not a value-keyed order"):
        T.value_keys(("order", "line", "part"))
    cols["day"][2] = np.nan
    U = ep.table(cols, ["order", "line"], keys=["part"], values=["rev", "day"], name="L")
    with pytest.raises(InputError, match="NaN"):
        U.add_order(BY_DAY)


@pytest.mark.parametrize("order", [BY_DAY, ("day", "part", "order", "line")])
def test_a_value_keyed_order_holds_each_row_at_its_values_code(order):
    """Keys in storage order (the levels below the primary key gathered, not
    sorted again) or in another order (every level sorted and packed)."""
    cols = lines(np.random.default_rng(5), n=20)
    T = ep.table(cols, ["order", "line"], keys=["part"], values=["rev", "day"], name="L")
    T.add_order(order)
    keys = T.value_keys(order)
    got = T.tensor("rev", order=order).to_dense()
    want = np.zeros_like(got)
    at = [keys.code(cols["day"].astype(np.int64))] + [
        k.code(cols[c]) for k, c in zip(T.keys, T.order)]
    want[tuple(at)] = cols["rev"]
    np.testing.assert_array_equal(got, want)
    assert T.tensor(None, order=order).nnz == len(cols["rev"])
