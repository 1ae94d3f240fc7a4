"""The cost of a call (issue 39): etchpy called the way users call numpy and scipy.

    python -m bench calls --json PATH [--quick] [--only PART[,PART]] [--seconds S] [--cpu]

Parts (names for --only):
  einsum   ep.einsum("ij,jk->ik") at 10², 100², 300² against np.einsum,
           np.einsum(optimize=True), a @ b and opt_einsum.contract (when it imports);
           then other dense specs (matvec, sums, transposes, traces, outer, batched,
           3-operand chains) on small operands against np.einsum, and on operands
           above 1e4 elements against the fastest of np.einsum(optimize=True),
           opt_einsum and numpy's @ where the spec is one. Targets: ≤ 2× np.einsum
           on operands of ≤ 1e4 elements, ≤ 1.1× the fastest peer above.
           Then the string front end: ep.compile and ep.evaluate of a statement.
  matvec   a compiled dense 4×4 matvec, a new x on every call and the same x,
           against numpy's A @ x (target: ≤ 2 µs with a new x).
  spmv     y = A·x with A a scipy csr array and a new x on every call against
           scipy's A @ x, 1e3 to 5e6 stored entries: random rows (10 a row), 2-D
           5-point and 3-D 7-point Poisson stencils (target: ≤ 1.0×).
  spmv32   the same in float32 (matrix and x; the kernel runs in real32).
  coo      the same on a coo tensor with a scipy coo_array input in row-major order
           without repeats, against scipy's coo A @ x (target: ≤ 1.2×).
  cg       150 scipy.sparse.linalg.cg iterations, a LinearOperator over the kernel
           against cg(A), the spmv part's matrices (target: ≤ 1.0×). Both:
           bench/calls_sparse.py.
  checks   the SpMV kernel's C function with its fused checks (what a scipy input
           runs) against its build without them (an ep.Tensor's), same arguments,
           the spmv part's matrices (target: ≤ 1.03×; bench/calls_sparse.py).
  checks2  the same on two threads, and the two-thread call against a check
           pass before it and against the one-thread call.
  outside  a 4×4 SpMV (≤ 16 entries) per input kind of A (numpy, scipy csr, csc,
           coo, ep.Tensor), same arrays, new ones, new ones into out= (beside): the call,
           its C function called with prebuilt arguments, and their difference,
           the time outside the kernel (target: ≤ 2 µs). grown: the same for
           kernels growing a sparse output, against scipy (bench/calls_grown.py);
           mergechecks: A+B's in-merge input checks against its unchecked build.
  import   `import etchpy` against `import scipy.sparse`, new processes (target ≤ 1.2×).
  warm     a new process: ep.compile + first call of a cached kernel, SpMV and BLAS
           matmul (target ≤ 10 ms). Both: bench/calls_startup.py.
  kernels  other kernels (SpMM, Aᵀx, A+B, ...) vs scipy, real matrices (bench/calls_kernels.py).
  structured  ep.einsum's SpMV on scipy bsr and dia inputs (bench/calls_structured.py).
  graph    BFS, components, Bellman-Ford and PageRank, a scipy csr matrix passed each
           call and a reused ep.graph.Graph, against csgraph and python-graphblas;
           grids 300² to 1000² and two real graphs (bench/calls_graph.py; ≤ 1.0×).

Method: one process (new ones for import and warm); each case alternates its
implementations call by call, and reports medians and their ratios (etchpy /
peer). "A new x on every call" cycles through a pool of distinct arrays, the
same sequence for both sides, so no copy is timed. BLAS runs on one thread on
both sides (bench._env). --quick: smaller sizes (spmv up to 1e5 entries) and
shorter runs. --cpu: medians of the calling thread's CPU time instead of wall
time (import and warm, new processes, stay wall; `kernels` reports both anyway),
for a machine other jobs load: a wall median there counts their time slices.
The JSON holds one row per case and the clock (`"clock"`: "wall" or "cpu").
"""
from __future__ import annotations

from bench import _env  # noqa: F401  (environment first)

import argparse
import datetime
import itertools
import json
import sys

import numpy as np
import scipy.sparse as sp

import etchpy as ep

from bench import (calls_graph, calls_grown, calls_kernels, calls_sparse, calls_startup,
                   calls_structured)
from bench.kernels import per_row_csr, rng_for, stencil_csr
from bench.timing import alternate_clocks, fmt_time

PARTS = ("einsum", "matvec", "spmv", "spmv32", "coo", "cg", "checks", "checks2", "outside",
         "grown", "mergechecks", "import", "warm", "graph", "kernels", "structured")


CLOCKS = ("cpu", "wall")     # alternate_clocks' pair, in its order
_run = {"clock": "wall"}     # the clock of the run main() is making (--cpu)


def alternate(fns, seconds: float, most: int = 20000, clock: str | None = None) -> list[float]:
    """Median seconds of each of `fns`, called alternately one call at a time
    (bench.timing.alternate_clocks): wall seconds, or the thread's CPU seconds
    where `clock` (default: the run's, main's --cpu) is "cpu"."""
    at = CLOCKS.index(clock or _run["clock"])
    return [pair[at] for pair in alternate_clocks(fns, seconds, most)]


def cycling(pool):
    """A function returning the pool's arrays in turn."""
    return itertools.cycle(pool).__next__


def row(part, case, ours, peer_name, peer, target=None, **extra) -> dict:
    ratio = ours / peer
    return {"part": part, "case": case, "etchpy_s": ours, "peer": peer_name, "peer_s": peer,
            "ratio": ratio, "target": target,
            "met": None if target is None else ratio <= target, **extra}


def say_row(r, say):
    target = "" if r["target"] is None else \
        f"  (target ≤ {r['target']}: {'ok' if r['met'] else 'MISSED'})"
    say(f"    {r['case']:<44} {fmt_time(r['etchpy_s']):>9}  {r['peer']:<22} "
        f"{fmt_time(r['peer_s']):>9}  {r['ratio']:5.2f}×{target}")


# ------------------------------------------------------------------------ einsum

def part_einsum(quick, seconds, say) -> list[dict]:
    rows = []
    try:
        import opt_einsum
    except ImportError:
        opt_einsum = None
    rng = rng_for("calls-einsum")
    for n in (10, 100, 300):
        a, b = rng.random((n, n)), rng.random((n, n))
        peers = {"np.einsum": lambda: np.einsum("ij,jk->ik", a, b),
                 "np.einsum(optimize)": lambda: np.einsum("ij,jk->ik", a, b, optimize=True),
                 "a @ b": lambda: a @ b}
        if opt_einsum is not None:
            peers["opt_einsum"] = lambda: opt_einsum.contract("ij,jk->ik", a, b)
        ours = lambda: ep.einsum("ij,jk->ik", a, b)      # noqa: E731
        np.testing.assert_allclose(ours(), a @ b, rtol=1e-10)
        times = alternate([ours, *peers.values()], seconds)
        by_peer = dict(zip(peers, times[1:]))
        fastest = min((k for k in by_peer if k != "np.einsum"), key=by_peer.get)
        small = a.size <= 10_000
        for name in ("np.einsum", fastest):
            target = (2.0 if name == "np.einsum" else None) if small else \
                (1.1 if name == fastest else None)
            rows.append(row("einsum", f"ep.einsum ij,jk->ik {n}²", times[0], name,
                             by_peer[name], target, peers_s=by_peer))
            say_row(rows[-1], say)
    return rows + _einsum_specs(rng, seconds, say) + _statements(rng, seconds, say)


def _einsum_specs(rng, seconds, say) -> list[dict]:
    """Other dense specs on small operands against np.einsum (the ≤ 2× target)."""
    a, b, c = (rng.random((10, 10)) for _ in range(3))
    x = rng.random(10)
    t, u, v = rng.random((10, 10, 10)), rng.random((10, 4)), rng.random((10, 4))
    rows = []
    for spec, ops in [("ij,j->i", (a, x)), ("ij,kj->ik", (a, b)), ("ij,ij->", (a, b)),
                      ("ij->i", (a,)), ("ij,ij->ij", (a, b)), ("ii->", (a,)),
                      ("ijk,jr,kr->ir", (t, u, v)), ("ij->ji", (a,)), ("ii->i", (a,)),
                      ("i,j->ij", (x, x)), ("bij,bjk->bik", (t, t)),
                      ("ij,jk,kl->il", (a, b, c)), ("ijk->kji", (t,))]:
        ours = lambda: ep.einsum(spec, *ops)       # noqa: E731
        np.testing.assert_allclose(ours(), np.einsum(spec, *ops), rtol=1e-10)
        times = alternate([ours, lambda: np.einsum(spec, *ops)], seconds / 2)
        rows.append(row("einsum", f"ep.einsum {spec} (10 a side)", times[0], "np.einsum",
                         times[1], 2.0))
        say_row(rows[-1], say)
    return rows + _einsum_large(rng, seconds, say)


def _einsum_large(rng, seconds, say) -> list[dict]:
    """Dense specs on operands above 1e4 elements (300², 20×100², 50³) against the
    fastest of np.einsum(optimize=True), opt_einsum.contract and numpy's matmul
    where the spec is one (the ≤ 1.1× target); plain np.einsum is in peers_s
    (but for the 3-operand chain)."""
    try:
        import opt_einsum
    except ImportError:
        opt_einsum = None
    a, b, c = (rng.random((300, 300)) for _ in range(3))
    x = rng.random(300)
    p, q, t = rng.random((20, 100, 100)), rng.random((20, 100, 100)), rng.random((50, 50, 50))
    rows = []
    for spec, ops, matmul in [
            ("ij,j->i", (a, x), lambda: a @ x), ("ij->i", (a,), None), ("ij->j", (a,), None),
            ("ij->ji", (a,), None), ("ij->", (a,), None), ("ii->", (a,), None),
            ("ij,kj->ik", (a, b), lambda: a @ b.T), ("ij,ij->", (a, b), None),
            ("ij,ij->i", (a, b), None), ("i,j->ij", (x, x), None),
            ("bij,bjk->bik", (p, q), lambda: p @ q), ("ij,jk,kl->il", (a, b, c),
                                                       lambda: a @ b @ c),
            ("ijk->kji", (t,), None), ("ijk->ik", (t,), None)]:
        peers = {"np.einsum(optimize)": lambda: np.einsum(spec, *ops, optimize=True)}
        if opt_einsum is not None:
            peers["opt_einsum"] = lambda: opt_einsum.contract(spec, *ops)
        if matmul is not None:
            peers["numpy @"] = matmul
        if len(ops) < 3:                  # unoptimized, a 3-operand chain takes seconds
            peers["np.einsum"] = lambda: np.einsum(spec, *ops)
        ours = lambda: ep.einsum(spec, *ops)       # noqa: E731
        np.testing.assert_allclose(ours(), np.einsum(spec, *ops, optimize=True), rtol=1e-9)
        times = alternate([ours, *peers.values()], seconds / 2)
        by_peer = dict(zip(peers, times[1:]))
        fastest = min((k for k in by_peer if k != "np.einsum"), key=by_peer.get)
        size = "x".join(map(str, ops[0].shape))
        rows.append(row("einsum", f"ep.einsum {spec} ({size})", times[0], fastest,
                         by_peer[fastest], 1.1, peers_s=by_peer))
        say_row(rows[-1], say)
    return rows


def _statements(rng, seconds, say) -> list[dict]:
    """The string front end: ep.compile of a statement (the kernel found again) and
    ep.evaluate of one on a 10×10 matrix-vector product, against numpy's A @ x."""
    a, x = rng.random((10, 10)), rng.random(10)
    text = "y[i] = A[i, j] * x[j]"
    kern = ep.compile(text)
    np.testing.assert_allclose(ep.evaluate(text, A=a, x=x), a @ x)
    rows = []
    for case, ours in [("ep.compile(statement), found again", lambda: ep.compile(text)),
                       ("ep.evaluate(statement, A, x) 10²", lambda: ep.evaluate(text, A=a, x=x)),
                       ("  its kernel, called", lambda: kern(A=a, x=x))]:
        times = alternate([ours, lambda: a @ x], seconds / 2)
        rows.append(row("statement", case, times[0], "numpy A @ x", times[1]))
        say_row(rows[-1], say)
    return rows


# ------------------------------------------------------------------------ matvec

def part_matvec(quick, seconds, say) -> list[dict]:
    rng = rng_for("calls-matvec")
    A = rng.random((4, 4))
    pool = [rng.random(4) for _ in range(64)]
    kern = ep.compile("y[i] = A[i, j] * x[j]")
    np.testing.assert_allclose(kern(A=A, x=pool[0]), A @ pool[0])
    ours_x, peer_x = cycling(pool), cycling(pool)
    new = alternate([lambda: kern(A=A, x=ours_x()), lambda: A @ peer_x()], seconds)
    x = pool[0]
    same = alternate([lambda: kern(A=A, x=x), lambda: A @ x], seconds)
    rows = [row("matvec", "dense 4×4 matvec, a new x each call", new[0], "numpy A @ x",
                 new[1], None, target_s=2e-6, met_abs=new[0] <= 2e-6),
            row("matvec", "dense 4×4 matvec, the same x", same[0], "numpy A @ x", same[1])]
    for r in rows:
        say_row(r, say)
    return rows


# ------------------------------------------------------------------------ spmv

def stencil3_csr(g):
    """The 3-D 7-point Laplacian on a g×g×g grid, canonical csr."""
    one = sp.diags_array([-np.ones(g - 1), 2 * np.ones(g), -np.ones(g - 1)], offsets=[-1, 0, 1])
    eye = sp.eye_array(g)
    A = (sp.kron(sp.kron(one, eye), eye) + sp.kron(sp.kron(eye, one), eye)
         + sp.kron(sp.kron(eye, eye), one))
    A = sp.csr_array(A)
    A.sum_duplicates()
    A.sort_indices()
    return A


def spmv_matrices(quick):
    """(family, csr matrix) for 1e3 .. 5e6 stored entries (quick: up to 1e5)."""
    rng = rng_for("calls-spmv")
    sizes = range(3 if quick else 5)
    rows = [100, 1000, 10_000, 100_000, 500_000]
    grids2, grids3 = [14, 45, 141, 300, 1000], [5, 11, 23, 50, 90]
    for k in sizes:
        yield "random rows, 10 a row", per_row_csr(rng, rows[k], rows[k], 10)
        yield "2-D 5-point Poisson", stencil_csr(grids2[k])
        yield "3-D 7-point Poisson", stencil3_csr(grids3[k])


def part_spmv(quick, seconds, say, dtype=np.float64) -> list[dict]:
    """SpMV with a scipy csr input of `dtype` and a new x each call vs `A @ x`."""
    kern = ep.compile("y[i] = A[i, j] * x[j]", formats={"A": "csr"})
    rows, eps = [], np.finfo(dtype).eps * 8
    for family, A in spmv_matrices(quick):
        A, n = A.astype(dtype), A.shape[1]
        rng = rng_for(f"calls-x-{n}")
        pool = [rng.random(n).astype(dtype) for _ in range(8 if n < 100_000 else 3)]
        # sums reassociated (gathered sums): compare within a few ulps of |A|·|x|
        np.testing.assert_array_less(abs(kern(A=A, x=pool[0]) - A @ pool[0]),
                                     eps * (abs(A) @ abs(pool[0])) + 1e-30)
        ours_x, peer_x = cycling(pool), cycling(pool)
        t = alternate([lambda: kern(A=A, x=ours_x()), lambda: A @ peer_x()],
                      seconds * (2 if A.nnz > 1e6 else 1), most=5000)
        kind = "" if dtype == np.float64 else f" {np.dtype(dtype).name}"
        rows.append(row("spmv", f"{family}{kind} n={A.shape[0]:,} nnz={A.nnz:,}", t[0],
                        "scipy A @ x", t[1], 1.0, nnz=int(A.nnz), family=family))
        say_row(rows[-1], say)
    ratios = [r["ratio"] for r in rows]
    say(f"    geometric mean of the ratios {float(np.exp(np.mean(np.log(ratios)))):.2f} "
        f"(target ≤ 0.9)")
    return rows


def part_spmv32(quick, seconds, say) -> list[dict]:
    """part_spmv in float32 (the kernel runs in real32, chosen by the dtype)."""
    return part_spmv(quick, seconds, say, np.float32)


# ------------------------------------------------------------------------ outside

def c_call(kern, inputs):
    """The kernel's C function with the arguments a call of `inputs` made, prebuilt
    (read from the kernel's internals: what a call costs beyond its C)."""
    runner, lib, types, function, in_args, bound, out_shape, _, _ = kern._make(inputs, None)
    args = list(in_args)
    runner._output_args(args, None, out_shape, bound, lib, types)
    return lambda: function(*args)


def _kinds(A):
    """(name, declared format, make an input of that kind from csr A); pydata sparse
    when it imports."""
    kinds = [("numpy", "dense", lambda: A.toarray()), ("scipy csr", "csr", lambda: A.copy()),
             ("scipy csc", "csc", lambda: A.tocsc()), ("scipy coo", "coo", lambda: A.tocoo()),
             ("ep.Tensor csr", "csr", lambda: ep.Tensor.from_scipy(A, "csr"))]
    try:
        import sparse
    except ImportError:
        return kinds
    return kinds + [("pydata COO", "coo", lambda: sparse.COO.from_scipy_sparse(A)),
                    ("pydata GCXS csr", "csr", lambda: sparse.GCXS.from_scipy_sparse(A))]


def part_outside(quick, seconds, say) -> list[dict]:
    rng = rng_for("calls-outside")
    A = sp.csr_array(np.array([[1.0, 0, 2, 0], [0, 3, 0, 0], [4, 0, 5, 6], [0, 0, 0, 7]]))
    xs = [rng.random(4) for _ in range(16)]
    rows = []
    for name, fmt, make in _kinds(A):
        kern = ep.compile("y[i] = A[i, j] * x[j]", formats={"A": fmt})
        for arrays in ("same arrays", "new arrays", "new arrays, out="):
            out = {"out": np.empty(4)} if "out" in arrays else {}
            if arrays == "same arrays":
                a0, x0 = make(), xs[0]
                call = lambda: kern(A=a0, x=x0)           # noqa: E731
            else:
                next_a, next_x = cycling([make() for _ in range(16)]), cycling(xs)
                call = lambda: kern(A=next_a(), x=next_x(), **out)    # noqa: E731
            inner = c_call(kern, {"A": make(), "x": xs[0]})
            full, c = alternate([call, inner], seconds / 2)
            rows.append({"part": "outside", "case": f"4×4 SpMV, A {name}, {arrays}",
                         "etchpy_s": full, "c_call_s": c, "outside_s": full - c,     # out=: beside
                         "target_s": None if out else 2e-6, "met": bool(out) or full - c <= 2e-6})
            say(f"    A {name:<16} {arrays:<16} call {fmt_time(full):>9}, C function "
                f"{fmt_time(c):>9}: outside {fmt_time(full - c):>9} " + ("(beside)" if out else
                f"(target ≤ 2 µs: {'ok' if rows[-1]['met'] else 'MISSED'})"))
    return rows


# ------------------------------------------------------------------------ main

def parser() -> argparse.ArgumentParser:
    """The command line of `python -m bench calls`."""
    ap = argparse.ArgumentParser(prog="python -m bench calls", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--json", required=True, help="where to write the JSON")
    ap.add_argument("--quick", action="store_true", help="smaller sizes, shorter runs")
    ap.add_argument("--only", default="", help="comma-separated parts: " + ", ".join(PARTS))
    ap.add_argument("--seconds", type=float, default=None,
                    help="seconds of alternating calls per case (default 1.5; quick 0.4)")
    ap.add_argument("--cpu", action="store_true",
                    help="medians of thread CPU time, not wall time (a loaded machine)")
    return ap


def main(argv=None) -> int:
    ap = parser()
    argv = sys.argv[1:] if argv is None else list(argv)
    args = ap.parse_args(argv)
    parts = [p.strip() for p in args.only.split(",") if p.strip()] or list(PARTS)
    bad = [p for p in parts if p not in PARTS]
    if bad:
        ap.error(f"unknown part(s) {', '.join(bad)}; choose from {', '.join(PARTS)}")
    seconds = args.seconds or (0.4 if args.quick else 1.5)
    runs = 7 if args.quick else 21
    say = lambda *a: print(*a, flush=True)      # noqa: E731
    rows = []
    _run["clock"] = "cpu" if args.cpu else "wall"
    try:
        _parts(parts, args, seconds, runs, say, rows)
    finally:
        _run["clock"] = "wall"
    from bench.run import machine_info
    result = {"command": "python -m bench calls " + " ".join(argv), "machine": machine_info(),
              "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
              "quick": args.quick, "clock": "cpu" if args.cpu else "wall",
              "etchpy": ep.__version__, "numpy": np.__version__, "rows": rows}
    with open(args.json, "w", encoding="utf-8") as f:
        json.dump(result, f, indent=1)
    return 0


def _parts(parts, args, seconds, runs, say, rows):
    """Run each part of `parts`, its rows appended to `rows`."""
    for part in parts:
        say(f"== {part} ==")
        if part in ("import", "warm"):
            measure = getattr(calls_startup, f"measure_{part}")
            rows += measure(runs, say)
        elif f"part_{part}" not in globals():
            module = {"graph": calls_graph, "grown": calls_grown, "kernels": calls_kernels,
                      "mergechecks": calls_grown, "structured": calls_structured}.get(
                part, calls_sparse)
            rows += getattr(module, f"part_{part}")(args.quick, seconds, say, sys.modules[__name__])
        else:
            rows += globals()[f"part_{part}"](args.quick, seconds, say)
