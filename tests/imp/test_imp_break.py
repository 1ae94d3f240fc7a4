"""imp.Break and imp.If.rare (proofs_notes/imp_break.md): a Break leaves the
innermost While around it, through If, Seq and Block only (analysis.loose_breaks
finds one that does not; the interpreter and the C renderer refuse it); `rare`
is a hint that changes nothing. The interpreter and the compiled C agree on a
program that leaves nested loops early."""
import dataclasses
from types import SimpleNamespace

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import etchpy as ep
from etchpy import imp
from etchpy.c import render as c
from etchpy.imp import Break, Const, If, Load, Var, While, lt
from etchpy.runtime import build

REAL = ep.semirings.get("real")


def _find(limit_var="lim"):
    """out[0] := the first k < n with a[k] >= lim (n when none), out[1] := how many
    inner steps ran: for each row r < 3, j counts up to 5 but leaves at a[j] >= r."""
    k, r, j = Var("k"), Var("r"), Var("j")
    first = imp.seq(
        imp.Decl("k", "index", Const(0)),
        While(lt(k, Var("n")), imp.seq(
            If(imp.le(Var(limit_var), Load("a", k)), Break(), rare=True), imp.incr("k"))),
        imp.Store("out", Const(0), k))
    nested = imp.seq(
        imp.Decl("steps", "index", Const(0)), imp.Decl("r", "index", Const(0)),
        While(lt(r, Const(3)), imp.seq(
            imp.Decl("j", "index", Const(0)),
            While(lt(j, Const(5)), imp.seq(
                imp.Block(If(imp.le(r, Load("a", j)), imp.seq(imp.Comment("leave"), Break()))),
                imp.incr("steps"), imp.incr("j"))),
            imp.incr("r"))),
        imp.Store("out", Const(1), Var("steps")))
    return imp.seq(first, nested)


def test_break_leaves_the_innermost_loop_only():
    m = imp.Machine(REAL, dict(a=np.array([0, 1, 5, 2, 7, 0, 0, 0]), n=8, lim=4,
                               out=np.zeros(2)))
    m.exec(_find())
    assert list(m.env["out"]) == [2, 0 + 1 + 2]      # rows 0, 1, 2 stop at a[j] >= r


def test_loose_breaks_are_found_and_refused():
    ok = While(imp.TRUE, imp.seq(If(imp.TRUE, imp.Block(Break())), Break()))
    assert imp.loose_breaks(ok) == []
    for loose in (Break(), If(imp.TRUE, Break()),
                  While(imp.TRUE, imp.ParallelFor("i", Const(0), Const(2), Break(), 2)),
                  While(imp.TRUE, imp.ForSorted("v", "a", Const(1), Const(2), None, Break()))):
        assert imp.loose_breaks(loose) == [Break()]
    m = imp.Machine(REAL, dict(a=np.array([0, 1])))
    with pytest.raises(imp.ImpRuntimeError, match="Break leaves a ParallelFor"):
        m.exec(While(imp.TRUE, imp.ParallelFor("i", Const(0), Const(2), Break(), 1)))
    with pytest.raises(ValueError, match="Break outside a While"):
        c.render(_program(If(imp.TRUE, Break())), REAL, name="loose", idx_type="int32_t")


def test_rare_is_printed_as_a_hint_and_changes_nothing():
    assert "if rarely" in imp.show(_find()) and "break;" in imp.show(_find())
    src = c.render(_program(_find()), REAL, name="hint", idx_type="int32_t").c
    assert "if (EP_RARE(" in src and "#define EP_RARE(c) __builtin_expect(!!(c), 0)" in src
    assert "break;" in src
    plain = c.render(_program(imp.Store("out", Const(0), Const(1))), REAL, name="plain",
                     idx_type="int32_t").c
    assert "EP_RARE" not in plain      # the macro only where a test uses it
    assert "rarely" not in imp.show(_plain(_find()))
    m1, m2 = (imp.Machine(REAL, dict(a=np.array([3, 9]), n=2, lim=5, out=np.zeros(2)))
              for _ in range(2))
    m1.exec(_find())
    m2.exec(_plain(_find()))                # the same program without the hint
    assert list(m1.env["out"]) == list(m2.env["out"])


def _plain(node):
    """node with every If's hint off."""
    if isinstance(node, If):
        node = dataclasses.replace(node, rare=False)
    return imp.map_parts(node, _plain) if hasattr(node, "__dataclass_fields__") or \
        isinstance(node, tuple) else node


def _param(name, kind, type="index"):
    return SimpleNamespace(name=name, kind=kind, type=type, doc=name)


def _program(body):
    params = (_param("a", "in_array"), _param("n", "dim"), _param("lim", "dim"),
              _param("out", "out_dense", "value"))
    return SimpleNamespace(params=params, body=body, dims=(), refuse_above=(), error=None,
                           plan=SimpleNamespace(steps=()),
                           output=SimpleNamespace(mode="dense", axes=(),
                                                  arrays={"vals": "out_vals"}))


@settings(max_examples=40, deadline=None)
@given(st.lists(st.integers(0, 9), min_size=5, max_size=12), st.integers(0, 10))
def test_c_leaves_its_loops_as_the_interpreter_says(a, lim):
    src = c.render(_program(_find()), REAL, name="breaks", idx_type="int32_t")
    lib = build.load(src.c, src.cdef, name="breaks_test")
    arr, out = np.array(a, dtype=np.int32), np.zeros(2)
    assert lib.lib.breaks(lib.ffi.cast("idx_t *", arr.ctypes.data), len(a), lim,
                          lib.ffi.cast("val_t *", out.ctypes.data)) == 0
    m = imp.Machine(REAL, dict(a=arr.astype(np.int64), n=len(a), lim=lim, out=np.zeros(2)))
    m.exec(_find())
    np.testing.assert_array_equal(out, m.env["out"])
