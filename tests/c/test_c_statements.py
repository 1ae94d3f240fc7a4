"""Imp statements as C text (c.statements), and the C they give running as the
interpreter says."""
from types import SimpleNamespace

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import etchpy as ep
from etchpy import imp, tuning
from etchpy.c import render as c
from etchpy.c.statements import FunctionBody, _bare, c_literal
from etchpy.imp import ONE, ZERO, Bin, Const, Load, Var
from etchpy.runtime import build

REAL = ep.semirings.get("real")


def param(name, kind, type="index"):
    return SimpleNamespace(name=name, kind=kind, type=type, doc=name)


def program(body, params=()):
    return SimpleNamespace(params=tuple(params), body=body, dims=(), refuse_above=(), error=None,
                           plan=SimpleNamespace(steps=()),
                           output=SimpleNamespace(mode="dense", axes=(), arrays={"vals": "out_vals"}))


def text(stmt, **kw):
    return FunctionBody(program(stmt), REAL, **kw).stmt(stmt, 0)


def test_simple_statements():
    assert text(imp.Decl("n", "index", Const(3))) == "int64_t n = 3;"
    assert text(imp.Accum("a", Var("i"), Const(2.5, "value"))) == "a[i] = a[i] + 2.5;"
    assert text(imp.While(imp.lt(Var("i"), Var("n")), imp.incr("i"))) == \
        "while (i < n) {\n    i = (i + 1);\n}"
    assert text(imp.Comment("a */ b")) == "/* a * / b */"
    assert text(imp.Seek("q", Var("e"), "crd", Var("t"), imp.TRUE)) == \
        "q = ep_seek_at(crd, q, e, t, 1);"
    assert text(imp.SetBit("b", Var("i"), False)) == "b[(i) >> 6] &= ~((uint64_t)1 << ((i) & 63));"
    assert text(imp.Prefetch("a", imp.add(Var("i"), ONE), True)) == "EP_PREFETCH_W(&a[i + 1]);"


def test_alloc_uses_calloc_for_zero_bytes_only():
    zero = text(imp.Alloc("a", "value", Var("n"), Const(0.0, "value")))
    neg = text(imp.Alloc("a", "value", Var("n"), Const(-0.0, "value")))
    assert "ep_calloc(" in zero and "for (" not in zero
    assert "ep_malloc(" in neg and "a[k_] = (-0.0);" not in neg and "a[k_] = -0.0;" in neg


def test_c_only_names_keep_clear_of_program_names():
    """A fill loop's counter, a sorted walk's count and a short intersection's
    lanes are renamed when a program name in their scope has the same text."""
    fill = text(imp.Alloc("a", "index", Var("n"), Var("k_")))
    assert "for (int64_t k__ = 0; k__ < a_cap; k__++) a[k__] = k_;" in fill
    assert "k_ = 0" not in text(imp.Alloc("a", "index", Var("n"), ZERO)).replace("cap", "")
    walk = text(imp.ForSorted("v", "l", Var("m"), Var("s"), None,
                              imp.Store("o", Var("v_n"), Var("v"))))
    assert "const int64_t v_n_ = m;" in walk and "o[v_n] = v;" in walk
    short = text(imp.ShortIntersect("qa", "ea", "ca", "qb", "eb", "cb",
                                    imp.Store("o", Var("qa_m"), Var("qa_0"))))
    assert "int qa_m_ = " in short and "o[qa_m] = qa_0;" in short
    grow = text(imp.Reserve("cap_", "index", Var("grown_")))
    assert "int64_t cap__ = ep_max(grown_, 2 * cap__cap);" in grow


def test_short_intersect_is_simd_only_at_the_helpers_width():
    body = imp.Store("o", ZERO, Var("qa"))
    four = text(imp.ShortIntersect("qa", "ea", "ca", "qb", "eb", "cb", body, 4))
    three = text(imp.ShortIntersect("qa", "ea", "ca", "qb", "eb", "cb", body, 3))
    assert "#if EP_SHORT_SIMD" in four and "ep_short_match" in four
    assert "EP_SHORT_SIMD" not in three and "while (qa < ea && qb < eb)" in three


def test_parallel_body_may_not_assign_outer_scalars():
    body = imp.seq(imp.Decl("n", "index", ZERO),
                   imp.ParallelFor("i", ZERO, Var("n"), imp.Assign("n", ONE), 2))
    with pytest.raises(TypeError, match="assigns"):
        FunctionBody(program(body), REAL).stmt(body, 0)


def test_literals():
    assert c_literal(float("nan"), np.float64) == "NAN"
    assert c_literal(float("-inf"), np.float64) == "(-INFINITY)"
    assert c_literal(2, np.float32) == "2.0f"
    assert c_literal(7, np.int64) == "INT64_C(7)"
    assert c_literal(True, np.bool_) == "1"
    assert _bare("(a < b)") == "a < b" and _bare("(a) + (b)") == "(a) + (b)"


# One kernel that runs Seek, ShortIntersect (both ways), ForSorted with marks,
# Reserve, Move, LocalArray, Bit, Select and Ring, writing what it sees into out.
N_OUT = 8


def _kernel_body():
    i = Var("i")
    copy = imp.seq(imp.Decl("i", "index", ZERO), imp.While(imp.lt(i, Var("nl")), imp.seq(
        imp.Store("L", i, Load("lst", i)), imp.Store("K", Load("lst", i), ONE),
        imp.SetBit("D", Load("lst", i), True), imp.incr("i"))))
    hit = lambda k: imp.seq(                              # noqa: E731
        imp.Accum("out", Const(k), imp.Ring("mul", Load("ca", Var("qa")), Const(1, "value"))),
        imp.Accum("out", Const(k + 1), Bin("+", Bin("*", Var("qa"), Const(10)), Var("qb"))))
    return imp.seq(
        imp.Decl("s", "index", ZERO),
        imp.Seek("s", Var("na"), "ca", Var("t"), Bin("!=", Var("r"), ZERO)),
        imp.Store("out", ZERO, Var("s")),
        *(imp.seq(imp.Decl(qa, "index", ZERO), imp.Decl(qb, "index", ZERO),
                  imp.ShortIntersect(qa, "na", "ca", qb, "nb", "cb",
                                     imp.substitute(imp.substitute(hit(k), "qa", Var(qa)),
                                                    "qb", Var(qb)), w))
          for qa, qb, k, w in (("qa", "qb", 1, 4), ("pa", "pb", 3, 3))),
        imp.Alloc("L", "index", ONE, None), imp.Reserve("L", "index", Var("size")),
        imp.Alloc("B", "bits", imp.sort_bits_words(Var("size")), ZERO),
        imp.Alloc("K", "byte", Var("size"), ZERO),
        imp.Alloc("D", "bits", imp.sort_bits_words(Var("size")), ZERO), copy,
        imp.Alloc("M", "index", ONE, ZERO), imp.Move("M", "L"), imp.Alloc("L", "index", ONE, ZERO),
        imp.Move("L", "M"),
        imp.Store("out", Const(6), imp.Select(imp.Bit("D", Load("lst", ZERO)), Const(1), Const(2))),
        imp.LocalArray("acc", 1, Const(0.0, "value")),
        imp.ForSorted("v", "L", Var("nl"), Var("size"), "B", imp.Store(
            "acc", ZERO, imp.Ring("add", imp.Ring("mul", Load("acc", ZERO), Const(3.0, "value")),
                                  Var("v"))), marks="K"),
        imp.Store("out", Const(7), Load("acc", ZERO)),
        imp.Store("out", Const(5), imp.add(Load("B", ZERO), Load("K", Load("lst", ZERO)))))


PARAMS = [param("ca", "in_array"), param("cb", "in_array"), param("lst", "in_array"),
          param("na", "dim"), param("nb", "dim"), param("nl", "dim"), param("size", "dim"),
          param("t", "dim"), param("r", "dim"), param("out", "out_dense", "value")]


def _compiled(t):
    src = c.render(program(_kernel_body(), PARAMS), REAL, name="statements", idx_type="int32_t",
                   tuning=t)
    return build.load(src.c, src.cdef, name="statements_test")


@pytest.mark.parametrize("t", [tuning.DEFAULT, tuning.DEFAULT.with_(
    seek_linear=0, sort_run=2, marks_walk_min=0, marks_walk_spread=10**6)],
    ids=["default", "small"])
@settings(max_examples=30)
@given(st.lists(st.integers(0, 9), unique=True, max_size=3).map(sorted),
       st.lists(st.integers(0, 9), unique=True, max_size=3).map(sorted),
       st.lists(st.integers(0, 299), unique=True, min_size=1, max_size=40),
       st.integers(-1, 11), st.booleans())
def test_c_runs_as_the_interpreter_says(t, a, b, lst, target, r):
    lib = _compiled(t)
    ca = np.array(a + [50] * 4, dtype=np.int32)
    cb = np.array(b + [60] * 4, dtype=np.int32)
    ls = np.array(lst, dtype=np.int32)
    dims = dict(na=len(a), nb=len(b), nl=len(lst), size=300, t=target, r=int(r))
    out = np.zeros(N_OUT)
    cast = lambda x, ty="idx_t *": lib.ffi.cast(ty, x.ctypes.data)   # noqa: E731
    assert lib.lib.statements(cast(ca), cast(cb), cast(ls), *dims.values(),
                              cast(out, "val_t *")) == 0
    m = imp.Machine(REAL, dict(ca=ca.astype(np.int64), cb=cb.astype(np.int64),
                               lst=ls.astype(np.int64), out=np.zeros(N_OUT), **dims))
    m.exec(_kernel_body())
    np.testing.assert_array_equal(out[:5], m.env["out"][:5])
    np.testing.assert_array_equal(out[6:], m.env["out"][6:])     # out[5]: cleared marks
    assert out[5] == 0 and m.env["out"][5] == 0
