"""Two-column comparisons A[i, j] < B[i, j] as 0/1 factors (kind "pair" of
expr.compare): the entries both store where A's value passes against B's,
against a pure-Python relational reference (TPC-H Q4/Q12's l_commitdate <
l_receiptdate, grouped by order), on the C, streams and reference backends;
tensors of different structures; and the refusals."""
import collections

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import etchpy as ep
from etchpy.errors import ExpressionTypeError, InputError

o, ln = ep.indices("o ln")
OPS = {"<": lambda a, b: a < b, "<=": lambda a, b: a <= b, ">": lambda a, b: a > b,
       ">=": lambda a, b: a >= b}


def late_lines(rows, op):
    """order -> Σ price over its lines whose commit date `op` receipt date."""
    out = collections.defaultdict(float)
    for order, _, commit, receipt, price in rows:
        if OPS[op](commit, receipt):
            out[order] += price
    return dict(out)


row = st.tuples(st.integers(0, 6), st.integers(0, 3), st.integers(0, 5), st.integers(0, 5),
                st.sampled_from([0.5, 1.0, 2.0]))


@settings(max_examples=15, deadline=None)
@given(rows=st.lists(row, min_size=1, max_size=20, unique_by=lambda r: r[:2]),
       op=st.sampled_from(sorted(OPS)))
def test_two_value_columns_compared_per_row_match_the_relational_reference(rows, op):
    cols = {k: np.array([r[n] for r in rows]) for n, k in
            enumerate(["o", "ln", "commit", "receipt", "price"])}
    rel = ep.relation(cols, ["o", "ln"], values=["commit", "receipt", "price"], name="L")
    C, R, P = (rel[v].var(n) for v, n in (("commit", "C"), ("receipt", "R"), ("price", "P")))
    cmp = {"<": C[o, ln] < R[o, ln], "<=": C[o, ln] <= R[o, ln],
           ">": C[o, ln] > R[o, ln], ">=": C[o, ln] >= R[o, ln]}[op]
    expr = ep.sum(ln, P[o, ln] * cmp)
    want = late_lines(rows, op)
    keys = rel["price"].keys[0]
    for backend in ("c", "streams", "reference"):
        got = ep.evaluate(expr, backend=backend, C=rel["commit"].tensor,
                          R=rel["receipt"].tensor, P=rel["price"].tensor)
        out = ep.decode(got, [keys], columns=["o"])
        assert dict(zip(out["o"].tolist(), out["value"].tolist())) == pytest.approx(want)


def test_tensors_of_different_structures_are_compared_where_both_store():
    i, j = ep.indices("i j")
    A = ep.Tensor.from_coords([np.array([0, 0, 1, 2]), np.array([0, 2, 1, 2])],
                              np.array([1.0, 5.0, 2.0, -3.0]), (3, 3), "csr")
    B = ep.Tensor.from_coords([np.array([0, 1, 2, 2]), np.array([2, 1, 0, 2])],
                              np.array([6.0, 2.0, 9.0, -1.0]), (3, 3), "csr")
    X, Y = ep.tensor("A", 2, "csr"), ep.tensor("B", 2, "csr")
    for backend in ("c", "reference"):
        got = ep.evaluate(X[i, j] < Y[i, j], backend=backend, A=A, B=B)
        dense = got.to_dense() if isinstance(got, ep.Tensor) else np.asarray(got)
        # both store (0, 2): 5 < 6, (1, 1): 2 < 2 no, (2, 2): -3 < -1
        assert dense.tolist() == [[0, 0, 1], [0, 0, 0], [0, 0, 1]]


def test_pair_comparisons_are_refused_when_they_do_not_line_up():
    i, j = ep.indices("i j")
    A, B = ep.tensor("A", 2, "csr"), ep.tensor("B", 2, "csr")
    with pytest.raises(ExpressionTypeError, match="at the same indices"):
        A[i, j] < B[j, i]
    with pytest.raises(ExpressionTypeError, match="with itself"):
        A[i, j] < A[i, j]
    small = ep.Tensor.from_coords([[0], [0]], [1.0], (2, 2), "csr")
    large = ep.Tensor.from_coords([[0], [0]], [1.0], (3, 3), "csr")
    with pytest.raises(InputError, match="compared entry by entry"):
        ep.evaluate(ep.sum((i, j), A[i, j] < B[i, j]), backend="c", A=small, B=large)


def test_the_reference_reads_a_hash_levels_columns_at_its_slots():
    """A hash level's values sit at its tables' slots, not in entry order: the
    reference backend's dense value of A < B read B there (it failed on shapes)."""
    t = {"o": np.array([0, 1]), "n": np.array([0, 2]), "a": np.array([-2.0, 1.0]),
         "b": np.array([-2.0, 3.0])}
    L = ep.relation(t, ["o", "n"], values=["a", "b"], levels=["dense", "hash"], name="L")
    A, B = L["a"].var("A"), L["b"].var("B")
    for backend in ("c", "reference"):
        got = ep.evaluate(ep.sum(ln, A[o, ln] < B[o, ln]), backend=backend,
                          A=L["a"].tensor, B=L["b"].tensor)
        assert np.asarray(got).tolist() == [0.0, 1.0], backend
