"""Imp's syntax and its smart constructors: nodes are frozen values, and each
constructor means what the plain node it folds means."""
import dataclasses

import numpy as np
import pytest
from hypothesis import given, strategies as st

import etchpy as ep
from etchpy import imp, tuning
from etchpy.imp import Bin, Const, Not, Select, Var

REAL = ep.semirings.get("real")


def test_nodes_are_frozen_values():
    a, b = imp.Load("x", imp.add(Var("i"), imp.ONE)), imp.Load("x", imp.add(Var("i"), imp.ONE))
    assert a == b and hash(a) == hash(b)
    with pytest.raises(dataclasses.FrozenInstanceError):
        a.array = "y"


def test_short_intersect_width_defaults_to_the_tuning():
    s = imp.ShortIntersect("qa", "ea", "a", "qb", "eb", "b", imp.SKIP)
    assert s.width == tuning.DEFAULT.short_segment
    assert imp.ShortIntersect("qa", "ea", "a", "qb", "eb", "b", imp.SKIP, 2).width == 2


def test_package_face_exports_every_public_name():
    for name in imp.__all__:
        assert getattr(imp, name) is not None
    assert not hasattr(imp, "SHORT_SEGMENT") and not hasattr(imp, "SEEK_LINEAR")


def test_seq_flattens_and_drops_nothing_else():
    a, b, c = (imp.Comment(t) for t in "abc")
    assert imp.seq(a) == a
    assert imp.seq(None, imp.seq(a, b), c) == imp.Seq((a, b, c))
    assert imp.seq() == imp.SKIP


def test_if_folds_constant_conditions():
    s = imp.Comment("then")
    assert imp.if_(imp.TRUE, s) == s
    assert imp.if_(imp.FALSE, s) == imp.SKIP
    assert imp.if_(imp.FALSE, s, imp.Comment("else")) == imp.Comment("else")
    assert imp.if_(Var("c"), s) == imp.If(Var("c"), s, None)


def test_incr_and_sort_bits_words():
    assert imp.incr("n") == imp.Assign("n", Bin("+", Var("n"), imp.ONE))
    m = imp.Machine(REAL)
    for size in (0, 1, 63, 64, 4095, 4096, 10**6):
        assert m.eval(imp.sort_bits_words(Const(size))) == size // 64 + 1 + size // 4096 + 1


def test_bounds():
    assert imp.min_bound(None, Var("a")) == Var("a") == imp.min_bound(Var("a"), None)
    assert imp.min_bound(Var("a"), Var("b")) == Bin("min", Var("a"), Var("b"))
    assert imp.sum_bound(Var("a"), None) is None
    assert imp.sum_bound(Const(2), Const(3)) == Const(5)


# Expressions over three bool variables and two index variables, built with the
# plain nodes; the smart constructors must evaluate to the same values.
bools = st.sampled_from([Var("p"), Var("q"), Var("s"), imp.TRUE, imp.FALSE])
ints = st.sampled_from([Var("x"), Var("y"), imp.ZERO, imp.ONE, Const(7)])


@st.composite
def bool_exprs(draw, depth=3):
    if depth == 0 or draw(st.booleans()):
        return draw(bools)
    op = draw(st.sampled_from(["&&", "||", "!", "<", "sel"]))
    sub = lambda: draw(bool_exprs(depth - 1))   # noqa: E731
    if op == "!":
        return Not(sub())
    if op == "<":
        return Bin("<", draw(ints), draw(ints))
    if op == "sel":
        return Select(sub(), sub(), sub())
    return Bin(op, sub(), sub())


def smart(e):
    """e rebuilt with the smart constructors."""
    match e:
        case Bin("&&", a, b):
            return imp.and_(smart(a), smart(b))
        case Bin("||", a, b):
            return imp.or_(smart(a), smart(b))
        case Bin("<", a, b):
            return imp.lt(a, b)
        case Not(a):
            return imp.not_(smart(a))
        case Select(c, a, b):
            return imp.select(smart(c), smart(a), smart(b))
    return e


@given(bool_exprs(), st.booleans(), st.booleans(), st.booleans(), st.integers(-3, 9),
       st.integers(-3, 9))
def test_smart_constructors_keep_meaning(e, p, q, s, x, y):
    m = imp.Machine(REAL, dict(p=p, q=q, s=s, x=x, y=y))
    assert bool(m.eval(smart(e))) == bool(m.eval(e))


@given(ints, ints, st.integers(-5, 5), st.integers(-5, 5))
def test_arithmetic_constructors_keep_meaning(a, b, x, y):
    m = imp.Machine(REAL, dict(x=x, y=y))
    assert m.eval(imp.add(a, b)) == m.eval(Bin("+", a, b))
    assert m.eval(imp.mul(a, b)) == m.eval(Bin("*", a, b))
    assert m.eval(imp.max_(a, b)) == max(m.eval(a), m.eval(b))
    assert m.eval(imp.min_(a, b)) == min(m.eval(a), m.eval(b))
    assert np.int64(m.eval(imp.eq(a, b))) == (m.eval(a) == m.eval(b))
