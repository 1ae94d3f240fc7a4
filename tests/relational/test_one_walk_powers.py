"""A power of one access (A[i,j]·A[i,j]) is not a structure two factors share
(expr.sums `once`): the kernel as written reads the access once and maps its
value (streams.from_expr), where a one walk over it read the column twice, a
scalar product each entry. With another column of the same structure the
product is still one walk, the repeated column read as often as it is written."""
import numpy as np
import pytest

import etchpy as ep
from etchpy.expr import shared

o, n = ep.indices("o n")
ROWS = [(0, 0, 1.5, 2.0), (0, 3, -2.0, 1.0), (2, 1, 4.0, 0.5), (4, 4, 3.0, -1.0)]


def relation(kinds):
    cols = {k: np.array([r[m] for r in ROWS]) for m, k in enumerate("onab")}
    keys = ep.Keys(np.arange(5), name="k")
    return ep.relation(cols, ["o", "n"], values=["a", "b"], levels=kinds,
                       coding={"o": keys, "n": keys}, name="P")


def dense(rel, col):
    t = rel[col].tensor
    coords, vals = t.to_coords()
    out = np.zeros(t.shape)
    out[tuple(coords)] = vals
    return out


def test_a_repeated_access_is_no_group_and_is_not_fused():
    X, Y = ep.tensor("X", 2, "csr"), ep.tensor("Y", 2, "csr")
    most = ep.Tuning().one_walk_terms
    assert shared.groups(X[o, n] * X[o, n], most) == ()
    assert shared.groups(ep.sum(n, X[o, n] * X[o, n]), most) == ()
    assert shared.groups(X[o, n] * X[o, n] * Y[o, n], most) == (("X", "Y"),)
    assert shared.groups(X[o, n] * X[n, o], most) == ()       # other indices: apart anyway
    sq = X[o, n] * X[o, n]
    assert shared.fused(sq, {"X": "X"}, most) == sq
    three = shared.fused(X[o, n] * X[o, n] * Y[o, n], {"X": "X", "Y": "X"}, most).tensor
    assert [c[0] for c in three.columns] == ["X", "X", "Y"] and three.weights == (0, 1, 2)


@pytest.mark.parametrize("kinds", [["dense", "compressed"], ["compressed", "compressed"]])
def test_powers_run_as_written_and_with_a_column_one_walk(kinds):
    rel = relation(kinds)
    a, b = dense(rel, "a"), dense(rel, "b")
    A, B = rel["a"].var("A")[o, n], rel["b"].var("B")[o, n]
    ins = {"A": rel["a"].tensor, "B": rel["b"].tensor}
    total = ep.compile(ep.sum(o, ep.sum(n, A * A)))
    assert np.isclose(total(A=ins["A"]), (a * a).sum())
    assert total._walked is None                      # the kernel as written ran
    rows = ep.compile(ep.sum(n, A * A * B), tuning=ep.Tuning(one_walk_from=0))
    got = rows(**ins)
    np.testing.assert_allclose(got, (a * a * b).sum(axis=1))
    assert rows._walked is not None                   # A, A and B: one walk
