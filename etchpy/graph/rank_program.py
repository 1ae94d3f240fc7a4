"""PageRank's compiled parts: the step's pull kernel and the power iteration
around a compiled step as one Imp program (an imp.Fixpoint), shared by a
Graph's C call (graph.rank) and a scipy matrix's (graph.rank_scipy).

    prog, roles = _iteration(_pull_kernel(iso, tuning, 1).compiled.program)
"""
from __future__ import annotations

from dataclasses import replace

import numpy as np

from .. import imp
from ..api import compile as ep_compile
from ..errors import CompileError
from ..expr.nodes import indices, sum as esum, tensor as etensor
from ..lower import Param
from ..lower.fixpoint import at_each_cell
from ..lower.schedule.fused_checks import ERROR_CODE, program_names
from ..runtime.kernel_cache import kept
from ..semiring import semirings
from ..tuning import DEFAULT, Tuning


@kept("graph.rank_pull")
def _pull_kernel(iso: bool = False, tuning: Tuning = DEFAULT,
                 threads: int | None = None):
    """The step's kernel; `iso`: A is a pattern (every weight 1), its values unread;
    threads: as ep.compile's (1 for the C iteration, whose loop is serial)."""
    i, j = indices("i j")
    A, w = etensor("A", 2, format="csc", iso=iso), etensor("w", 1)
    return ep_compile(etensor("c", 0)[()] + esum(j, A[j, i] * w[j]),
                      semiring=semirings.real, tuning=tuning, threads=threads)


def _iteration(step, push: bool = False, degrees=None, span=None):
    """PageRank's power iteration as one program: an imp.Fixpoint around the
    compiled step `step`: the pull x'[i] = c + Σ_j A[j, i]·w[j] (A in csc),
    which adds |x'[i] − x[i]| to the distance at the store of each x'[i]
    (lower.fixpoint.at_each_cell), or, when `push`, y[i] = Σ_j A[j, i]·w[j]
    (A in csr, y zeroed by it) and a loop making x'[i] = c + y[i] and the
    distance. Each step first writes w[j] = (inv[j]·alpha)·x[j] and sums x
    over the dangling vertices (inv[j] = 0) in one loop; c = (1−alpha)/n +
    alpha/n·that. degrees: None (inv given), or the checked program of
    deg[j] = Σ_i A[j, i] run first (_checked_degrees). Returns (the program, each
    parameter's role: "dim" for a size, else its name in `step` or _parameters')."""
    names = program_names(step)
    for used in () if degrees is None else sorted(imp.names_used(degrees.body)):
        names.fresh(used)                        # (its scope's names: kept out too)
    x, inv, k, steps, limit, err, mass, c, j, q, v = (names.fresh(b) for b in (
        "x", "inv", "consts", "steps", "max_iter", "err", "mass", "c", "j", "q", "v"))
    w, y, n = "w_vals", step.output.arrays["vals"], imp.Var(f"dim_{step.output.axes[0]}")
    V, zero = imp.Var, imp.Const(0.0, "value")
    const = lambda at: imp.Load(k, imp.Const(at))                   # noqa: E731
    plus = lambda a, b: imp.Ring("add", a, b)                       # noqa: E731
    times = lambda a, b: imp.Ring("mul", a, b)                      # noqa: E731
    gap = lambda i, value: imp.Assign(err, plus(V(err), imp.Ring(  # noqa: E731
        "abs", imp.Bin("-", value, imp.Load(x, i)), zero)))
    scale = imp.While(imp.lt(V(j), n), imp.seq(                     # w = s·x, dangling mass
        imp.Assign(mass, plus(V(mass), imp.select(imp.Bin("==", imp.Load(inv, V(j)), zero),
                                                  imp.Load(x, V(j)), zero))),
        imp.Store(w, V(j), times(times(imp.Load(inv, V(j)), const(0)), imp.Load(x, V(j)))),
        imp.incr(j)))
    if push:
        finish = imp.While(imp.lt(V(q), n), imp.seq(
            imp.Decl(v, "value", plus(V(c), imp.Load(y, V(q)))), gap(V(q), V(v)),
            imp.Store(y, V(q), V(v)), imp.incr(q)))
        made = imp.seq(imp.substitute(step.body, "out_zeroed", imp.ZERO),
                       imp.Decl(q, "index", imp.ZERO), finish)
    else:
        made = imp.replaced(at_each_cell(step, names, gap).body,
                            imp.Load("c_vals", imp.ZERO), V(c))
    body = imp.seq(imp.Assign(mass, zero), imp.Decl(j, "index", imp.ZERO), scale,
                   imp.Decl(c, "value", plus(const(1), times(const(2), V(mass)))),
                   imp.Assign(err, zero), made)
    loop = imp.Fixpoint(steps, V(limit), body, ((x, y, n),), imp.lt(V(err), const(3)))
    made = imp.seq(imp.Decl(mass, "value", zero), imp.Decl(err, "value", zero),
                   imp.Decl(steps, "index", imp.Const(-1)))
    params, roles = _parameters(step, w, (x, inv, k, steps, limit), degrees is not None)
    if degrees is None:
        return replace(step, params=params, body=imp.seq(made, loop)), roles
    bad = names.fresh("input_error")
    program = imp.seq(made, imp.Decl(bad, "index", imp.ZERO),
                      _checked_degrees(degrees, span, inv, bad, names, n, loop))
    return replace(step, params=params, body=program, error=bad, fused=degrees.fused), roles


def _checked_degrees(degrees, span, inv: str, bad: str, names, n, then):
    """degrees' body (Compiled.checked of deg[j] = Σ_i A[j, i] over the step's
    A: deg into inv, its fused checks of A's pointers and indices reporting in
    `bad`) in its own scope; when they passed, one loop over the values the
    step reads (span, as _iteration's) testing each (nonnegative, at most the
    largest double: no NaN, no inf), a linear pass the compiler runs in SIMD
    lanes (a test inside the degrees' scattered walk doubled its time); then,
    when all passed, inv = 1/deg (0 where deg = 0) and `then`; else bad =
    ERROR_CODE (graph.rank_scipy, proofs_notes/fixpoint_loop.md). Its sums in
    SIMD lanes (imp.GatherSum) run as their loops: lanes may report a bad
    coordinate only after the whole program. CompileError when span names an
    array or size that is not a parameter of degrees."""
    body = imp.rename(_loops_only(degrees.body), {"out": inv, degrees.error: bad})
    body = imp.replaced(imp.substitute(body, "out_zeroed", imp.ZERO),
                        imp.Decl(bad, "index", imp.ZERO), imp.Assign(bad, imp.ZERO))
    vals = next(p.name for p in degrees.params if p.kind == "in_array" and p.type == "value")
    pos, last = span
    if not {pos, last or pos} <= {p.name for p in degrees.params}:
        raise CompileError(f"the out-degree kernel has no parameter {pos} or {last}")
    fine, d, j, q, end = (names.fresh(b) for b in ("values_bad", "d", "j", "q", "q_end"))
    V, zero, top = imp.Var, imp.Const(0.0, "value"), float(np.finfo(np.float64).max)
    at = imp.Load(vals, V(q))
    ok = imp.Bin("&", imp.Bin(">=", at, zero), imp.Bin("<=", at, imp.Const(top, "value")))
    values = imp.seq(
        imp.Decl(q, "index", imp.Load(pos, imp.ZERO)),
        imp.Decl(end, "index", imp.Load(pos, V(last) if last else imp.Const(1))),
        imp.While(imp.lt(V(q), V(end)), imp.seq(
            imp.Assign(fine, imp.Bin("|", V(fine), imp.Not(ok))), imp.incr(q))))
    invert = imp.seq(imp.Decl(j, "index", imp.ZERO), imp.While(imp.lt(V(j), n), imp.seq(
        imp.Decl(d, "value", imp.Load(inv, V(j))),
        imp.Store(inv, V(j), imp.select(imp.Bin(">", V(d), zero),
                                        imp.Bin("/", imp.Const(1.0, "value"), V(d)), zero)),
        imp.incr(j))))
    return imp.seq(imp.Decl(fine, "index", imp.ZERO), imp.Block(body),
                   imp.If(imp.eq(V(bad), imp.ZERO), imp.Block(values)), imp.If(
        imp.eq(imp.Bin("|", V(bad), V(fine)), imp.ZERO), imp.seq(invert, then),
        imp.If(imp.eq(V(bad), imp.ZERO), imp.Assign(bad, imp.Const(ERROR_CODE)))))


def _parameters(step, w: str, mine: tuple, written: bool) -> tuple[tuple, tuple]:
    """(the iteration's parameters: step's but c and out_zeroed, w written, then
    `mine`: x (the ranks, in and out), inv (written when `written`), consts
    (alpha, (1−alpha)/n, alpha/n, n·tol), steps (the steps taken, -1 when not
    converged), max_iter; the role of each, see _iteration)."""
    params = [replace(p, kind="out_dense") if p.name == w else p
              for p in step.params if p.name != "c_vals" and p.kind != "out_zeroed"]
    roles = ["dim" if p.kind == "dim" else p.name for p in params]
    docs = (("out_dense", "value", "the ranks: the start, then the result"),
            ("out_dense" if written else "in_array", "value", "1/outdeg, 0 where dangling"),
            ("in_array", "value", "alpha, (1-alpha)/n, alpha/n, n*tol"),
            ("out_count", "index", "the steps taken, -1: not converged"),
            ("dim", "index", "the most steps"))
    params += [Param(name, *doc) for name, doc in zip(mine, docs)]
    roles += ["x", "inv", "consts", "steps", "max_iter"]
    return tuple(params), tuple(roles)


def _loops_only(node):
    """node with each imp.GatherSum replaced by its fallback (the walk loop with
    the same effect, checks included) and each pick set to 0 (a pick only
    chooses between computations of the same result: the one without lanes)."""
    match node:
        case imp.GatherSum(fallback=loop):
            return _loops_only(loop)
        case imp.GatherPick(var=var):
            return imp.Decl(var, "index", imp.ZERO)
        case imp.Load() | imp.Var() | imp.Const() | imp.Bin():
            return node
    return imp.map_parts(node, _loops_only, notes=True)
