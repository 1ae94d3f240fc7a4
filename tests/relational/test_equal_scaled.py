"""ep.eq / ep.ne and scaled operands in comparisons (`A[i, j] > 0.5 * B[i]`),
against pure-Python relational references: TPC-H Q2's rows at their part's
least cost (a value against a vector read at one of its indices), Q20's
`availqty > 0.5 * sum`, on the C, streams and reference backends; bounds and
codes compared for equality; and the refusals."""
import collections

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import etchpy as ep
from etchpy.errors import ExpressionTypeError, SemiringError

p, s = ep.indices("p s")
OPS = {"==": lambda a, b: a == b, "!=": lambda a, b: a != b, "<": lambda a, b: a < b,
       "<=": lambda a, b: a <= b, ">": lambda a, b: a > b, ">=": lambda a, b: a >= b}
BUILD = {"==": ep.eq, "!=": ep.ne, "<": lambda a, b: a < b, "<=": lambda a, b: a <= b,
         ">": lambda a, b: a > b, ">=": lambda a, b: a >= b}
BACKENDS = ("c", "streams", "reference")

row = st.tuples(st.integers(0, 5), st.integers(0, 4), st.sampled_from([1.0, 2.0, 3.0, 4.0]))


def per_part(rows, test):
    """part -> Σ cost over its rows where test(cost, the part's least cost)."""
    least = {}
    for part, _, cost in rows:
        least[part] = min(cost, least.get(part, np.inf))
    out = collections.defaultdict(float)
    for part, _, cost in rows:
        if test(cost, least[part]):
            out[part] += cost
    return dict(out)


def _decoded(got, keys):
    out = ep.decode(got, [keys], columns=["p"])
    return {k: v for k, v in zip(out["p"].tolist(), out["value"].tolist()) if v}


@settings(max_examples=5, deadline=None)
@given(rows=st.lists(row, min_size=1, max_size=15, unique_by=lambda r: r[:2]),
       op=st.sampled_from(sorted(OPS)), scale=st.sampled_from([1, 0.5, 2, -1]),
       left=st.booleans())
def test_a_value_against_its_groups_least_matches_the_relational_reference(rows, op, scale,
                                                                           left):
    cols = {k: np.array([r[n] for r in rows]) for n, k in enumerate(["part", "supp", "cost"])}
    Pc = ep.relation(cols, ["part", "supp"], values="cost", name="Pc")
    least = ep.evaluate(ep.sum(s, Pc.var()[p, s]), semiring=ep.semirings.min_plus,
                        Pc=Pc.tensor)
    C, Least = Pc.var()[p, s], ep.tensor("Least", 1)[p]
    if left:              # the scale on the row's value, else on the located least
        expr = ep.sum(s, C * BUILD[op](scale * C, Least))
        want = per_part(rows, lambda c, m: OPS[op](scale * c, m))
    else:
        expr = ep.sum(s, C * BUILD[op](C, Least * scale))
        want = per_part(rows, lambda c, m: OPS[op](c, m * scale))
    for backend in BACKENDS:
        got = ep.evaluate(expr, backend=backend, Pc=Pc.tensor, Least=least)
        assert _decoded(got, Pc.keys[0]) == pytest.approx(want), backend


@settings(max_examples=6, deadline=None)
@given(rows=st.lists(row, min_size=1, max_size=15, unique_by=lambda r: r[:2]),
       frac=st.sampled_from([0.5, 0.25, 1.5]), op=st.sampled_from(sorted(OPS)))
def test_two_relations_compared_with_a_scale_match_the_relational_reference(rows, frac, op):
    """Q20: ps_availqty > 0.5 * (the pair's sum of line quantities), where both store."""
    cols = {k: np.array([r[n] for r in rows]) for n, k in enumerate(["part", "supp", "q"])}
    Av = ep.relation(cols, ["part", "supp"], values="q", name="Av")
    half = {(r[0], r[1]): 2.0 * r[2] + (r[0] % 2) for r in rows[::2]}   # another structure
    hk = list(half)
    Sum = ep.relation({"part": np.array([k[0] for k in hk]), "supp": np.array([k[1] for k in hk]),
                       "v": np.array(list(half.values()))}, ["part", "supp"], values="v",
                      coding={"part": Av.keys[0], "supp": Av.keys[1]}, name="Sum")
    A, B = ep.tensor("Av", 2, Av.tensor.format), ep.tensor("Sum", 2, Sum.tensor.format)
    expr = ep.sum(s, BUILD[op](A[p, s], frac * B[p, s]))
    want = collections.defaultdict(float)
    for part, supp, q in rows:
        if (part, supp) in half and OPS[op](q, frac * half[part, supp]):
            want[part] += 1.0
    for backend in BACKENDS:
        got = ep.evaluate(expr, backend=backend, Av=Av.tensor, Sum=Sum.tensor)
        assert _decoded(got, Av.keys[0]) == pytest.approx(dict(want)), backend


def test_equality_with_a_bound_a_parameter_and_a_code():
    cols = {"part": np.array([0, 0, 1, 2]), "supp": np.array([0, 1, 1, 2]),
            "cost": np.array([2.0, 3.0, 1.0, 2.0])}
    Pc = ep.relation(cols, ["part", "supp"], values="cost", name="Pc")
    C = Pc.var()[p, s]
    kern = ep.compile(ep.sum(s, ep.eq(C, "t")))
    assert kern(Pc=Pc.tensor, t=2.0).tolist() == [1.0, 0.0, 1.0]
    assert kern(Pc=Pc.tensor, t=2.5).tolist() == [0.0, 0.0, 0.0]
    assert ep.eq(2.0, C) == ep.eq(C, 2.0) and ep.ne("t", C) == ep.ne(C, "t")
    for backend in BACKENDS:
        at = ep.evaluate(ep.sum(s, ep.eq(C, s)), backend=backend, Pc=Pc.tensor)
        assert np.asarray(at).tolist() == [0.0, 1.0, 1.0]       # cost 1 at code 1, 2 at 2
        nth = ep.evaluate(ep.sum(s, C * ep.eq(s, 1)), backend=backend, Pc=Pc.tensor)
        assert np.asarray(nth).tolist() == [3.0, 1.0, 0.0]
        other = ep.evaluate(ep.sum(s, C * ep.ne(s, 1)), backend=backend, Pc=Pc.tensor)
        assert np.asarray(other).tolist() == [2.0, 0.0, 2.0]


def test_integer_values_take_integer_scales_only():
    cols = {"part": np.array([0, 1]), "supp": np.array([0, 1]), "n": np.array([3, 4])}
    N = ep.relation(cols, ["part", "supp"], values="n", semiring=ep.semirings.integer,
                    name="N")
    C = N.var()[p, s]
    got = ep.evaluate(ep.sum(s, 2 * C > 7), semiring=ep.semirings.integer, N=N.tensor)
    assert np.asarray(got).tolist() == [0, 1]
    with pytest.raises(SemiringError, match="scales a value by 0.5"):
        ep.evaluate(ep.sum(s, 0.5 * C > 1), semiring=ep.semirings.integer, N=N.tensor)


def test_equality_is_a_function_and_a_truth_value_is_refused():
    A, B = ep.tensor("A", 2, "csr"), ep.tensor("B", 1)
    with pytest.raises(ExpressionTypeError, match="ep.eq"):
        A[p, s] * (A[p, s] == B[p])               # structural equality: False
    with pytest.raises(ExpressionTypeError, match="two indices"):
        ep.eq(p, s)
    with pytest.raises(ExpressionTypeError, match="cannot compare"):
        (A[p, s] + B[p]) < 1.0                    # a sum of two accesses is no operand


@pytest.mark.parametrize("kinds", [["dense", "compressed"], ["compressed", "compressed"],
                                   ["compressed", "singleton"]])
def test_equality_with_a_located_least_on_each_level_kind(kinds):
    cols = {"part": np.array([0, 1, 1, 2]), "supp": np.array([0, 1, 2, 3]),
            "cost": np.array([2.0, 3.0, 1.0, 2.0])}
    if kinds[1] == "singleton":                  # one supplier per part: a singleton level
        cols = {k: v[[0, 1, 3]] for k, v in cols.items()}
    Pc = ep.relation(cols, ["part", "supp"], values="cost", levels=kinds, name="Pc")
    least = ep.evaluate(ep.sum(s, Pc.var()[p, s]), semiring=ep.semirings.min_plus,
                        Pc=Pc.tensor)
    C, Least = Pc.var()[p, s], ep.tensor("Least", 1)[p]
    want = per_part([tuple(r) for r in zip(*cols.values())], lambda c, m: c == m)
    for backend in BACKENDS:
        got = ep.evaluate(ep.sum(s, C * ep.eq(C, Least)), backend=backend, Pc=Pc.tensor,
                          Least=least)
        assert _decoded(got, Pc.keys[0]) == pytest.approx(want), (kinds, backend)
