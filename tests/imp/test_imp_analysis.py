"""Facts read off Imp syntax: statements, names, what is declared, assigned and
written, and the rewrites substitute and assume."""
import numpy as np
from hypothesis import given, strategies as st

import etchpy as ep
from etchpy import imp
from etchpy.imp import Bin, Const, Load, Var

REAL = ep.semirings.get("real")

# A program that uses one of each statement with a body.
BODY = imp.seq(imp.Store("out", Var("i"), Load("x", Var("k"))), imp.incr("n"))
PROG = imp.seq(
    imp.Decl("n", "index", imp.ZERO),
    imp.Alloc("w", "value", Var("dim_i"), None),
    imp.While(imp.lt(Var("n"), Const(3)), imp.Block(imp.Decl("t", "index", Var("n")))),
    imp.If(Var("c"), imp.Comment("then"), imp.Seek("q", Var("e"), "crd", Var("t0"), imp.TRUE)),
    imp.ForSorted("k", "lst", Var("m"), Var("dim_k"), "bits", imp.SetBit("bits", Var("k"), False),
                  marks="marks"),
    imp.ShortIntersect("qa", "ea", "ca", "qb", "eb", "cb",
                       imp.Accum("acc", Const(0), Load("v", Var("qa")))),
    imp.ParallelFor("i", imp.ZERO, Var("dim_i"), BODY, 2,
                    private=(("ws", "value", Var("dim_j"), Const(0, "value")),)),
    imp.Move("w", "w2"),
    imp.Reserve("r", "index", Var("n")))


def test_statements_visits_every_nested_statement_outermost_first():
    kinds = [type(s).__name__ for s in imp.statements(PROG)]
    assert kinds[0] == "Seq"
    for k in ("Decl", "Alloc", "While", "Block", "If", "Comment", "Seek", "ForSorted", "SetBit",
              "ShortIntersect", "Accum", "ParallelFor", "Store", "Assign", "Move", "Reserve"):
        assert k in kinds
    assert kinds.index("While") < kinds.index("Block")


def test_names_used():
    names = imp.names_used(PROG)
    assert {"n", "w", "dim_i", "t", "c", "q", "e", "crd", "t0", "k", "lst", "m", "bits", "marks", "qa",
            "ea", "ca", "qb", "eb", "cb", "acc", "v", "i", "out", "x", "w2", "r"} <= names
    assert {"ws", "dim_j"} <= names           # a parallel loop's private arrays
    assert "then" not in names                # comments name nothing


def test_declared_assigned_written():
    assert imp.declared_in(PROG) == {"n", "t", "k", "i"}
    assert imp.scalars_assigned(PROG) == {"n", "q", "qa", "qb"}
    assert imp.arrays_written(PROG) == {"w", "w2", "lst", "bits", "marks", "acc", "out", "r"}


def test_arrays_loaded_at():
    e = imp.add(Load("a", Var("p")), imp.add(Load("b", Var("q")), Load("c", Var("p"))))
    assert imp.arrays_loaded_at(e, Var("p")) == ["a", "c"]
    assert imp.arrays_loaded_at(imp.Store("z", Var("p"), e), None) == ["a", "b", "c"]


def test_substitute_replaces_reads():
    s = imp.Store("a", Var("i"), Bin("+", Var("i"), Var("j")))
    want = imp.Store("a", Const(3), Bin("+", Const(3), Var("j")))
    assert imp.substitute(s, "i", Const(3)) == want


def test_assume_folds_known_conditions():
    c = imp.lt(Var("i"), Var("n"))
    e = imp.and_(c, imp.lt(Var("j"), Var("m")))
    assert imp.assume(e, {c: True}) == imp.lt(Var("j"), Var("m"))
    assert imp.assume(e, {c: False}) == imp.FALSE
    assert imp.assume(imp.select(c, Var("a"), Var("b")), {c: False}) == Var("b")
    assert imp.assume(imp.not_(c), {c: True}) == imp.FALSE


@given(st.integers(0, 5), st.integers(0, 5), st.booleans())
def test_assume_is_sound_where_the_facts_hold(i, n, other):
    c = imp.lt(Var("i"), Var("n"))
    e = imp.select(imp.or_(c, Var("o")), Load("a", Const(0)), Load("a", Const(1)))
    m = imp.Machine(REAL, dict(i=i, n=n, o=other, a=np.array([1.0, 2.0])))
    assert m.eval(imp.assume(e, {c: i < n})) == m.eval(e)


def test_most_on_a_path_takes_the_larger_branch_and_a_loop_body_once():
    st = imp.Store("out", imp.Var("i"), imp.Var("v"))
    other = imp.Store("w", imp.Var("i"), imp.Var("v"))
    loop = imp.While(imp.lt(imp.Var("i"), imp.Var("n")), imp.seq(st, imp.incr("i")))
    hit = lambda s: isinstance(s, imp.Store) and s.array == "out"     # noqa: E731
    assert imp.most_on_a_path(loop, hit) == 1
    assert imp.most_on_a_path(imp.If(imp.Var("g"), loop, loop), hit) == 1
    assert imp.most_on_a_path(imp.If(imp.Var("g"), other, loop), hit) == 1
    assert imp.most_on_a_path(imp.seq(loop, imp.If(imp.Var("g"), st)), hit) == 2
    assert imp.most_on_a_path(imp.seq(other, imp.If(imp.Var("g"), other)), hit) == 0


def test_parts_and_map_parts_see_a_loop_note_only_when_asked():
    note = ("a note",)
    loop = imp.While(imp.lt(Var("q"), Var("e")), imp.incr("q"), walk=note)
    assert imp.parts(loop) == (loop.cond, loop.body)
    assert imp.parts(loop, notes=True) == (loop.cond, loop.body, note)
    assert imp.parts((1, "x")) == (1, "x") and imp.parts("x") == ()
    seen = []
    same = imp.map_parts(loop, lambda x: seen.append(x) or x)
    assert same == loop and seen == [loop.cond, loop.body]
    renamed = imp.map_parts(loop, lambda x: ("b",) if x == note else x, notes=True)
    assert renamed.walk == ("b",) and renamed.cond == loop.cond
    assert imp.map_parts((Var("a"), 2), lambda x: x) == (Var("a"), 2)


def test_seq_parts_are_a_seqs_statements_or_the_statement_alone():
    a, b = imp.incr("i"), imp.incr("j")
    assert imp.seq_parts(imp.Seq((a, b))) == (a, b)
    assert imp.seq_parts(a) == (a,)
