"""A flag raised inside a loop split across threads (imp.ParallelFor.flag,
c/parallel.py): each block of the C split sets its own slot, and the flag is
raised after the loop when any block set it, as the interpreter (which runs the
iterations in order on one variable) says. The fused input checks of threaded
kernels report through it (proofs_notes/validation.md, "Checks inside a loop
split across threads")."""
from types import SimpleNamespace

import numpy as np

import etchpy as ep
from etchpy import imp, tuning
from etchpy.c import render as c
from etchpy.imp import ZERO, Bin, Const, Load, Var
from etchpy.runtime import build

REAL = ep.semirings.get("real")
PARAMS = [SimpleNamespace(name="a", kind="in_array", type="index", doc="a"),
          SimpleNamespace(name="n", kind="dim", type="index", doc="n"),
          SimpleNamespace(name="out", kind="out_dense", type="value", doc="out")]


def body():
    """err := 0; then two loops split across two threads, with flag err: one
    copies a into out and raises err where a[i] = 7, the other, with a private
    scratch array, raises it where a[i] = 8."""
    def loop(hit, private):
        row = imp.seq(imp.Store("out", Var("i"), Load("a", Var("i"))),
                      imp.If(Bin("==", Load("a", Var("i")), Const(hit)),
                             imp.Assign("err", Const(4))))
        return imp.ParallelFor("i", ZERO, Var("n"), row, 2, private=private, flag="err")
    return imp.seq(imp.Decl("err", "index", ZERO), loop(7, ()),
                   loop(8, (("w", "index", Const(3), ZERO),)))


def test_any_block_raises_the_flag_as_the_interpreter_says():
    prog = SimpleNamespace(params=tuple(PARAMS), body=body(), dims=(), refuse_above=(),
                           error="err", plan=SimpleNamespace(steps=()),
                           output=SimpleNamespace(mode="dense", axes=(),
                                                  arrays={"vals": "out_vals"}))
    src = c.render(prog, REAL, name="flagged", idx_type="int64_t", tuning=tuning.DEFAULT)
    assert src.c.count("int64_t err_slots[32];") == 2 and "*err_slot = err;" in src.c
    lib = build.load(src.c, src.cdef, name="flag_test", openmp=True)
    cases = [(1, None, 0), (1, 0, 7), (1, 0, 8), (5, 4, 7), (100, None, 0), (100, 0, 8),
             (100, 57, 7), (100, 57, 8), (100, 99, 7)]
    for n, at, value in cases:
        a = np.arange(10, 10 + n, dtype=np.int64)
        if at is not None:
            a[at] = value
        out = np.zeros(n)
        got = lib.lib.flagged(lib.ffi.cast("idx_t *", a.ctypes.data), n,
                              lib.ffi.cast("val_t *", out.ctypes.data))
        m = imp.Machine(REAL, dict(a=a, n=n, out=np.zeros(n)))
        m.exec(body())
        assert got == m.env["err"] == (0 if at is None else 4), (n, at, value)
