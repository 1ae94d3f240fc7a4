"""imp.Fixpoint, a loop of steps around a compiled step: the interpreter and the
C printer (each turn the body twice, names exchanged; the state copied back
after an odd number of steps) agree on the steps taken and the state left,
for iterations that converge after an odd or an even number of steps, that
do not converge, and with a scratch pair; and the fusion of a pass over a
dense output into its stores (lower.fixpoint.at_each_cell)."""
from types import SimpleNamespace

import numpy as np
import pytest

import etchpy as ep
from etchpy import imp
from etchpy.c import render as c
from etchpy.errors import CompileError
from etchpy.imp import Const, Var
from etchpy.lower import Param, run_program
from etchpy.lower.fixpoint import at_each_cell
from etchpy.runtime import build

REAL = ep.semirings.get("real")
ZERO = Const(0.0, "value")


def _halving(limit_scratch: bool):
    """x'[i] = (x[i] + a[i]) / 2 with s'[i] = x'[i] (a scratch pair when asked),
    until Σ|x' − x| < tol; steps counted in `steps`."""
    i, n = Var("i"), Var("n")
    half = imp.Ring("mul", imp.Ring("add", imp.Load("x", i), imp.Load("a", i)),
                    Const(0.5, "value"))
    gap = imp.Ring("abs", imp.Bin("-", imp.Load("y", i), imp.Load("x", i)), ZERO)
    body = imp.seq(imp.Assign("err", ZERO), imp.Decl("i", "index", imp.ZERO),
                   imp.While(imp.lt(i, n), imp.seq(
                       imp.Store("y", i, half), imp.Store("t", i, imp.Load("y", i)),
                       imp.Assign("err", imp.Ring("add", Var("err"), gap)), imp.incr("i"))))
    pairs = (("x", "y", n), ("s", "t", None if limit_scratch else n))
    loop = imp.Fixpoint("steps", Var("limit"), body, pairs,
                        imp.lt(Var("err"), imp.Load("tol", imp.ZERO)))
    prog = imp.seq(imp.Decl("err", "value", ZERO), imp.Decl("steps", "index", Const(-1)),
                   loop)
    params = (Param("n", "dim", "index", ""), Param("limit", "dim", "index", ""),
              *(Param(a, "out_dense", "value", "") for a in "xyst"),
              Param("a", "in_array", "value", ""), Param("tol", "in_array", "value", ""),
              Param("steps", "out_count", "index", ""))
    return SimpleNamespace(params=params, body=prog, dims=(), refuse_above=(), error=None,
                           plan=SimpleNamespace(steps=()),
                           output=SimpleNamespace(mode="dense", axes=(), arrays={"vals": "y"}))


def _in_c(prog, env):
    src = c.render(prog, REAL, name="fixpoint_test", idx_type="int64_t")
    lib = build.load(src.c, src.cdef, name="fixpoint_test")
    ffi, out = lib.ffi, {k: (v.copy() if isinstance(v, np.ndarray) else v)
                         for k, v in env.items()}
    steps = ffi.new("int64_t *")
    args = [out[p.name] if p.kind == "dim" else steps if p.kind == "out_count"
            else ffi.from_buffer("double[]", out[p.name]) for p in prog.params]
    assert lib.lib.fixpoint_test(*args) == 0
    return out, steps[0]


@pytest.mark.parametrize("limit, tol", [(100, 1e-3), (100, 2e-3), (100, 5e-4), (3, 1e-12),
                                        (1, 1e-12), (0, 1.0)])
@pytest.mark.parametrize("scratch", [False, True])
def test_interpreter_and_c_agree_on_steps_and_the_state_left(limit, tol, scratch):
    n = 5
    rng = np.random.default_rng(limit)
    env = dict(n=n, limit=limit, x=rng.random(n), y=np.zeros(n), s=np.zeros(n),
               t=np.zeros(n), a=rng.random(n), tol=np.array([tol]))
    prog = _halving(scratch)
    ran = run_program(prog, REAL, {k: (v.copy() if isinstance(v, np.ndarray) else v)
                                   for k, v in env.items()})
    out, steps = _in_c(prog, env)
    assert ran["steps"] == steps
    np.testing.assert_array_equal(ran["x"], out["x"])
    x, k = env["x"].copy(), 0                        # numpy, step by step
    while k < limit:
        new = (x + env["a"]) * 0.5
        k, done, x = k + 1, np.abs(new - x).sum() < tol, new
        if done:
            break
    assert steps == (k if limit and done else -1)
    np.testing.assert_allclose(out["x"], x, rtol=1e-15)


def test_both_parities_converge_in_the_cases_above():
    seen = set()
    for tol in (1e-3, 2e-3, 5e-4):
        rng = np.random.default_rng(100)
        x, a, k = rng.random(5), rng.random(5), 0
        while True:
            new = (x + a) * 0.5
            k, done, x = k + 1, np.abs(new - x).sum() < tol, new
            if done:
                break
        seen.add(k % 2)
    assert seen == {0, 1}


def test_the_listing_and_the_names_of_a_fixpoint():
    prog = _halving(False)
    assert "steps = fixpoint ≤ limit steps, x ⇄ y, s ⇄ t after each" in imp.show(prog.body)
    loop = prog.body.stmts[-1]
    assert {"x", "y", "s", "t", "steps"} <= imp.names_used(loop)
    assert {"x", "y", "s", "t"} <= imp.arrays_written(loop)
    swapped = imp.rename(loop.body, {"x": "y", "y": "x"})
    assert imp.Store("x", Var("i"), imp.Ring("mul", imp.Ring(
        "add", imp.Load("y", Var("i")), imp.Load("a", Var("i"))), Const(0.5, "value"))) \
        in imp.statements(swapped)


def _dense_step(layout: str):
    i, j = ep.indices("i j")
    A, w = ep.tensor("A", 2, format=layout), ep.tensor("w", 1)
    e = ep.tensor("c", 0)[()] + ep.sum(j, A[j, i] * w[j])
    return ep.compile(e, semiring=REAL, threads=1).compiled.program


def test_work_at_each_cell_runs_once_per_cell_with_the_value_stored():
    prog = _dense_step("csc")       # pulled: each cell stored once
    names = imp.Names()
    for used in sorted(imp.names_used(prog.body) | {p.name for p in prog.params}):
        names.fresh(used)
    fused = at_each_cell(prog, names, lambda at, v: imp.seq(
        imp.Store("copy", at, v), imp.Assign("total", imp.Ring("add", Var("total"), v))))
    M = np.array([[0, 2.0, 0], [1.0, 0, 3.0], [0, 0, 0]])
    T = ep.Tensor.from_dense(M, "csc")
    env = {"A_dim0": 3, "A_dim1": 3, "A_pos1": T.levels[1]["pos"],
           "A_crd1": T.levels[1]["crd"], "A_vals": T.vals, "c_vals": np.array([0.5]),
           "w_dim0": 3, "w_vals": np.array([1.0, 2.0, 4.0]), "out": np.zeros(3),
           "copy": np.zeros(3), "total": 0.0}
    ran = run_program(fused, REAL, env)
    want = 0.5 + M.T @ np.array([1.0, 2.0, 4.0])
    np.testing.assert_allclose(ran["out"], want)
    np.testing.assert_allclose(ran["copy"], want)
    assert ran["total"] == pytest.approx(want.sum())


def test_work_is_not_fused_where_a_cell_may_be_stored_twice_or_not_at_all():
    prog = _dense_step("csr")         # pushed: cells added into, row by row
    with pytest.raises(CompileError, match="not stored once per cell"):
        at_each_cell(prog, imp.Names(), lambda at, v: imp.SKIP)
