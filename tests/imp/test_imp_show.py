"""The debugging listing of Imp."""
import numpy as np

from etchpy import imp
from etchpy.imp import Const, Var


def test_constants_print_as_plain_numbers():
    assert imp.show(Const(np.float64(0.0), "value")) == "0.0"
    assert imp.show(Const(np.int64(3))) == "3"
    assert imp.show(Const(np.float32(1.5), "value")) == "1.5"
    assert imp.show(imp.TRUE) == "true" and imp.show(imp.FALSE) == "false"
    assert imp.show(Const(float("inf"), "value")) == "inf"


def test_listing_nests_bodies():
    s = imp.seq(imp.Decl("n", "index", imp.ZERO),
                imp.While(imp.lt(Var("n"), Const(3)),
                          imp.If(Var("c"), imp.incr("n"), imp.Comment("no"))))
    assert imp.show(s) == ("index n = 0;\n"
                           "while (n < 3) {\n"
                           "  if c {\n"
                           "    n = (n + 1);\n"
                           "  } else {\n"
                           "    // no\n"
                           "  }\n"
                           "}")


def test_every_statement_has_a_listing():
    body = imp.Store("a", Var("i"), imp.Ring("mul", Var("x"), Const(2.0, "value")))
    stmts = [
        imp.Block(body), imp.Alloc("a", "value", Var("n"), Const(0.0, "value")),
        imp.Reserve("a", "value", Var("n")), imp.Move("a", "b"), imp.SetBit("b", Var("i"), True),
        imp.ForSorted("k", "l", Var("n"), Var("m"), "b", body, marks="mk"), imp.Opaque("q"),
        imp.LocalArray("r", 4, Const(0.0, "value")), imp.Prefetch("a", Var("i"), True),
        imp.Seek("q", Var("e"), "crd", Var("t"), imp.TRUE),
        imp.ShortIntersect("qa", "ea", "ca", "qb", "eb", "cb", body, 4),
        imp.ParallelFor("i", imp.ZERO, Var("n"), body, 2, "acc",
                        (("w", "value", Var("n"), imp.ZERO),)),
        imp.Accum("a", imp.Bit("b", Var("i")), imp.Select(Var("c"), Var("x"), Var("y"))),
        imp.Assign("h", imp.Bin("hash", Var("k"), Var("mask"))),
    ]
    for s in stmts:
        text = imp.show(s)
        assert "np." not in text and not text.startswith(type(s).__name__ + "("), text
    assert imp.show(stmts[-1]) == "h = hash(k, mask);"
    assert "(≤4 each)" in imp.show(stmts[10])
    assert "parallel(2, reduce acc, private w[n])" in imp.show(stmts[11])
