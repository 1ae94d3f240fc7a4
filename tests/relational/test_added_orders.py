"""Orders added to a table loaded once (Table.add_order): a third order of the
key columns, converted once and kept with the table, shared by queries, its
value copies following writes in place; a query walking it gives the
pure-Python answer."""
import collections

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from tests.relational.test_tables import small_columns

import etchpy as ep
from etchpy.errors import InputError


@st.composite
def tables_and_orders(draw):
    cols = small_columns(draw, ("v", "w"))
    n = len(cols["a"])
    unique = draw(st.booleans())            # a primary key: singletons in other orders
    if unique:
        cols["a"] = np.arange(n)
    added = draw(st.permutations(["a", "b", "s"]))
    return cols, list(added)


def reference(T, cols, value) -> np.ndarray:
    want = collections.defaultdict(float)
    for row in zip(cols["a"].tolist(), cols["b"].tolist(), cols["s"].tolist(),
                   cols[value].tolist()):
        want[tuple(T.keys[m].code(np.array([row[m]]))[0] for m in range(3))] += row[3]
    dense = np.zeros(T.relation(value).shape)
    for k, v in want.items():
        dense[k] = v
    return dense


@settings(max_examples=20, deadline=None)
@given(tables_and_orders())
def test_an_added_order_holds_the_rows_and_follows_writes(case):
    cols, added = case
    T = ep.table(cols, ["a"], keys=["b", "s"], values=["v", "w"], secondary=["b", "a", "s"],
                 name="T")
    assert T.add_order(added) == tuple(added)
    assert T.add_order(added) == tuple(added)             # added once
    for v in ("v", "w"):
        np.testing.assert_array_equal(T.tensor(v, order=added).to_dense(),
                                      reference(T, cols, v))
    V, W = (T.tensor(v, order=added) for v in "vw")     # one structure
    assert all(x[k] is y[k] for x, y in zip(V.levels, W.levels) for k in x)
    assert T.tensor("v", order=added) is V                # kept while unwritten
    T.tensor("v").vals[:] += 1.0                          # a write: the copy follows
    stored = T.tensor("v").to_dense()
    np.testing.assert_array_equal(T.tensor("v", order=added).to_dense(), stored)
    a, b, s = ep.indices("a b s")                        # a query walking it, s first
    kern = ep.compile(ep.sum((a, b), T.var("v", order=added, name="V")[a, b, s]),
                      order=[{"a": a, "b": b, "s": s}[k] for k in added])
    np.testing.assert_allclose(kern(V=T.tensor("v", order=added)), stored.sum(axis=(0, 1)))


def test_an_added_order_is_listed_and_a_bad_one_refused():
    cols = {"o": np.arange(4), "p": np.array([5, 6, 5, 7]), "q": np.array([1, 1, 2, 2]),
            "v": np.array([1.0, 2.0, 4.0, 8.0])}
    T = ep.table(cols, ["o"], keys=["p", "q"], values=["v"], secondary=["p", "o", "q"],
                 name="L")
    with pytest.raises(InputError, match=r"not \('q', 'o', 'p'\).*add_order"):
        T.var(order=["q", "o", "p"])
    T.add_order(["q", "o", "p"])
    print(T.explain())
    assert "order added ('q', 'o', 'p'): dense, compressed, singleton" in T.explain()
    assert T.tensor("v", order=["q", "o", "p"]).to_dense()[2, 0, 1] == 4.0   # o=2 p=5 q=2
    with pytest.raises(InputError, match="table 'L': order .* must list the key columns"):
        T.add_order(["q", "o"])
