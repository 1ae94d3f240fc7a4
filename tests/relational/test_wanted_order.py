"""Table.wanted and Table.keep_wanted_order: the orders a table's queries were
converted to, counted per call, and the one wanted most kept as its one
secondary order (relational.secondary), answers equal to the dense reference
before and after values are written in place."""
import numpy as np
import pytest

import etchpy as ep
from etchpy.errors import InputError

LINES = {"order": np.array([1, 1, 2, 3, 3]), "line": np.array([1, 2, 1, 1, 2]),
         "part": np.array([3, 1, 1, 2, 3]), "rev": np.array([10.0, 20.0, 5.0, 7.0, 1.0])}
BY_LINE = ("line", "order", "part")


def _table(secondary=None):
    return ep.table(LINES, ["order", "line"], keys=["part"], values=["rev"],
                    secondary=secondary, name="Lt")


def _by_line():
    """A query whose Q is stored line first: the planner reads Lt line first."""
    o, ln, p = ep.indices("o ln p")
    Lt = _table()
    kern = ep.compile(ep.sum((o, ln, p), Lt.var("rev")[o, ln, p] * (ep.tensor("Q", 2, "csr")[
        ln, o] > 0.5)))
    q = ep.Tensor.from_coords([[0, 1, 1], [0, 2, 1]], [1.0, 2.0, 3.0], (2, 3), "csr")
    return kern, q


def _reference(Lt, q) -> float:
    dense = Lt.tensor("rev").to_dense()               # [order, line, part]
    return float(np.einsum("olp,lo->", dense, q.to_dense() > 0.5))


def test_conversions_paid_are_counted_and_the_wanted_order_kept():
    kern, q = _by_line()
    Lt = _table()
    assert Lt.wanted() == {} and Lt.keep_wanted_order() is None     # nothing asked yet
    for calls in (1, 2, 3):
        assert kern(Lt=Lt.tensor("rev"), Q=q) == _reference(Lt, q)
        assert Lt.wanted() == {BY_LINE: calls}
    assert "wanted, not stored ('line', 'order', 'part'): converted in 3 calls" in Lt.explain()
    assert Lt.keep_wanted_order(least=4) is None          # not paid often enough
    assert Lt.keep_wanted_order(least=3) == BY_LINE == Lt.secondary
    assert Lt.orders == (("order", "line", "part"), BY_LINE) and Lt.wanted() == {}
    assert "secondary order ('line', 'order', 'part')" in Lt.explain()
    assert kern(Lt=Lt.tensor("rev"), Q=q) == _reference(Lt, q)
    assert "the planner reads Lt in the secondary order" in Lt.explain(kern)
    assert Lt.wanted() == {}                               # read stored: no conversion paid
    Lt.tensor("rev").vals[:] = [1.0, 2.0, 4.0, 8.0, 16.0]  # written between queries
    assert kern(Lt=Lt.tensor("rev"), Q=q) == _reference(Lt, q) == 17.0
    o, ln, p = ep.indices("o ln p")
    declared = ep.compile(ep.sum((o, p), Lt.var("rev", order=BY_LINE)[o, ln, p]),
                          order=["ln", "o", "p"])
    assert declared(Lt=Lt.tensor("rev", order=BY_LINE)).tolist() == [13.0, 18.0]


def test_a_secondary_order_given_at_load_stays_unless_replaced():
    kern, q = _by_line()
    by_part = ("part", "order", "line")
    Lt = _table(secondary=by_part)
    kern(Lt=Lt.tensor("rev"), Q=q)
    assert Lt.wanted() == {BY_LINE: 1}
    assert Lt.keep_wanted_order() == by_part and Lt.orders[1:] == (by_part,)
    assert Lt.keep_wanted_order(replace=True) == BY_LINE
    assert Lt.orders == (("order", "line", "part"), BY_LINE)        # at most one
    with pytest.raises(InputError, match=r"stored in the orders .*not \('part'"):
        Lt.tensor("rev", order=by_part)
    Lt.tensor("rev").vals[0] = 100.0
    assert kern(Lt=Lt.tensor("rev"), Q=q) == _reference(Lt, q)
    o, ln, p = ep.indices("o ln p")
    per_part = ep.compile(ep.sum((o, ln), Lt.var("rev")[o, ln, p]), order=["o", "ln", "p"])
    assert per_part(Lt=Lt.tensor("rev")).tolist() == [25.0, 7.0, 101.0]


@pytest.mark.parametrize("least", [0, -1, 1.5, True, "2"])
def test_a_bad_least_is_an_input_error_naming_the_table(least):
    with pytest.raises(InputError, match="table 'Lt'.*least"):
        _table().keep_wanted_order(least=least)
