"""An OR of clauses that each test some of the indices alone (a part's brand and
size, read at a line's part) gets the OR of those tests as a factor of its own
(expr.logic `_implied`, proofs_notes/predicates.md "Implied factors"): checked
against a pure-Python relational reference, compiled, with NOT around the OR,
clauses that overlap, and values written in place between calls."""
import collections
import operator

import numpy as np
from hypothesis import given, settings, strategies as st

import etchpy as ep
from etchpy.expr.nodes import Mul
from etchpy.expr.walk import spine

o, n = ep.indices("o n")
OPS = {"<": operator.lt, "<=": operator.le, ">": operator.gt, ">=": operator.ge}
KINDS = (["compressed", "compressed"], ["dense", "compressed"])
clause = st.tuples(st.sampled_from(sorted(OPS)), st.integers(-1, 4),
                   st.sampled_from(sorted(OPS)), st.integers(-1, 4))
row = st.tuples(st.integers(0, 4), st.integers(0, 3), st.integers(-1, 4))


def load(rows, kinds):
    rows = sorted(rows)                  # storage order: the values' positions
    keys = ep.Keys(np.arange(5), name="k")
    rel = ep.relation({"o": np.array([r[0] for r in rows]), "n": np.array([r[1] for r in rows]),
                       "a": np.array([r[2] for r in rows], dtype=float)}, ["o", "n"],
                      values=["a"], levels=kinds, coding={"o": keys, "n": keys}, name="L")
    return rows, rel, keys


def query(clauses, negate: bool, A, X):
    expr = None
    for k, (ox, _, oa, _) in enumerate(clauses):
        c = OPS[ox](X[o], f"x{k}") & OPS[oa](A[o, n], f"a{k}")
        expr = c if expr is None else expr | c
    return ep.sum(n, ~expr if negate else expr)


def reference(rows, x, clauses, negate):
    got = collections.Counter()
    for a, _, v in rows:
        hit = any(OPS[ox](x[a], bx) and OPS[oa](v, ba) for ox, bx, oa, ba in clauses)
        if hit != negate:
            got[a] += 1
    return dict(got)


def counts(result, keys) -> dict:
    out = ep.decode(result, [keys], columns=["o"])
    return {k: v for k, v in zip(out["o"].tolist(), out["value"].tolist()) if v}


def test_the_or_of_the_tests_of_the_order_is_a_factor_of_its_own():
    A, X = ep.tensor("A", 2, "dcsr"), ep.tensor("X", 1)
    expr = ((X[o] > 4) & (A[o, n] < 3)) | ((X[o] < 1) & (A[o, n] >= 1))
    factors = sorted((f.tensor.kind, f.indices) for f in spine(expr, Mul))
    assert factors == [("value", (o,)), ("value", (o, n))]


@settings(max_examples=25, deadline=None)
@given(rows=st.lists(row, min_size=1, max_size=12, unique_by=lambda r: r[:2]),
       x=st.lists(st.integers(-1, 4), min_size=5, max_size=5),
       clauses=st.lists(clause, min_size=2, max_size=3), negate=st.booleans(),
       kinds=st.sampled_from(KINDS), seed=st.integers(0, 2**16))
def test_implied_factors_keep_the_or_of_overlapping_clauses_and_its_not(
        rows, x, clauses, negate, kinds, seed):
    rows, rel, keys = load(rows, kinds)
    X = ep.relation({"o": np.arange(5), "x": np.array(x, dtype=float)}, ["o"], values="x",
                    coding={"o": keys}, levels=["dense"], name="X")
    kern = ep.compile(query(clauses, negate, rel["a"].var("A"), X.var("X")))
    params = {f"x{k}": c[1] for k, c in enumerate(clauses)}
    params.update({f"a{k}": c[3] for k, c in enumerate(clauses)})
    rng = np.random.default_rng(seed)
    for _ in range(2):                   # values written in place between calls
        got = kern(A=rel["a"].tensor, X=X.tensor, **params)
        assert counts(got, keys) == reference(rows, x, clauses, negate)
        x = rng.integers(-1, 5, size=5).tolist()
        X.tensor.vals[:] = x
        new = rng.integers(-1, 5, size=len(rows))
        rel["a"].tensor.vals[:] = new
        rows = [(a, b, int(v)) for (a, b, _), v in zip(rows, new)]
