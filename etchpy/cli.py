"""The ``etchpy`` command line.

    etchpy demo [--size small|medium] [--seed N]   compile, check and time five kernels
    etchpy version | etchpy --version               print the version
    etchpy                                          print this help
    python -m etchpy ...                            the same

The demo generates random inputs with fixed seeds, compiles five kernels (SpMV, an
inner-product SpGEMM, element-wise addition, a min-plus Bellman-Ford relaxation to
its fixpoint and MTTKRP), checks every result against numpy / scipy and prints one
timing line per kernel: "compile" is ``ep.compile`` plus the first call (C build or
disk-cache load); the etchpy and reference times are medians of REPEATS calls after
that, with the inputs already converted to ``ep.Tensor``. It exits with status 1 if
any check fails. A longer benchmark of the same cases is bench/demo.py.
"""
from __future__ import annotations

import argparse
import os
import platform
import sys
import time
import traceback
from dataclasses import dataclass, field
from typing import Callable

import numpy as np
import scipy
import scipy.sparse as sp
from scipy.sparse.csgraph import shortest_path

import etchpy as ep
from .runtime import build

REPEATS = 5
SIZE_NAMES = ("small", "medium")


@dataclass
class Setup:
    """One demo kernel on generated inputs: what to compile, run and compare with."""

    title: str
    expr: object                          # an etchpy expression
    lhs: str                              # the output as written, e.g. "y[i]"
    data: str                             # the inputs, in words
    inputs: dict                          # tensor name -> ep.Tensor or ndarray
    reference: Callable[[], object]       # the numpy / scipy computation
    ref_label: str
    options: dict = field(default_factory=dict)       # ep.compile options
    run: Callable | None = None           # kern -> result; default kern(**inputs)
    raw: dict = field(default_factory=dict)   # scipy inputs, for bench/demo.py

    def call(self, kern):
        return self.run(kern) if self.run else kern(**self.inputs)


@dataclass
class Result:
    title: str
    passed: bool = False
    check: str = ""
    lines: list[tuple[str, str]] = field(default_factory=list)
    seconds: dict = field(default_factory=dict)   # compile, kernel, reference


# --------------------------------------------------------------------------- inputs

def random_csr(rng, n, m, nnz):
    """A random n x m real csr array from nnz random coordinates (duplicates summed)."""
    rows, cols = rng.integers(0, n, nnz), rng.integers(0, m, nnz)
    a = sp.coo_array((rng.random(nnz) + 0.5, (rows, cols)), shape=(n, m)).tocsr()
    a.sum_duplicates()
    return a


def random_graph(rng, n, out_degree):
    """A csc weight matrix: out_degree random out-edges per vertex, weights in [1, 10),
    no self-loops, no duplicate edges."""
    src = np.repeat(np.arange(n, dtype=np.int64), out_degree)
    dst = rng.integers(0, n, n * out_degree)
    w = rng.uniform(1.0, 10.0, n * out_degree)
    keep = src != dst
    src, dst, w = src[keep], dst[keep], w[keep]
    _, first = np.unique(src * n + dst, return_index=True)
    return sp.coo_array((w[first], (src[first], dst[first])), shape=(n, n)).tocsc()


# --------------------------------------------------------------------------- kernels

def spmv(rng, size):
    n, nnz = {"small": (20_000, 200_000), "medium": (100_000, 1_000_000)}[size]
    i, j = ep.indices("i j")
    A, x = ep.tensor("A", 2, format="csr"), ep.tensor("x", 1)
    a, xv = random_csr(rng, n, n, nnz), rng.random(n)
    return Setup("SpMV", ep.sum(j, A[i, j] * x[j]), "y[i]",
                 f"A {n}x{n}, nnz {a.nnz:,}; x dense {n}",
                 {"A": ep.Tensor.from_scipy(a, "csr", name="A"), "x": xv},
                 lambda: a @ xv, "scipy A @ x", raw={"A": a, "x": xv})


def spgemm(rng, size):
    n = {"small": 20_000, "medium": 100_000}[size]
    i, j, k = ep.indices("i j k")
    A, B = ep.tensor("A", 2, format="csr"), ep.tensor("B", 2, format="csr")
    a, b = random_csr(rng, n, n, n * 10), random_csr(rng, n, n, n * 10)

    def scipy_sorted():
        out = a @ b
        out.sort_indices()     # etchpy's rows are sorted; compare like with like
        return out

    return Setup("SpGEMM (row-wise, sorted rows)", ep.sum(j, A[i, j] * B[j, k]), "C[i,k]",
                 f"A, B {n}x{n}, nnz {a.nnz:,} / {b.nnz:,} (10 per row)",
                 {"A": ep.Tensor.from_scipy(a, "csr", name="A"),
                  "B": ep.Tensor.from_scipy(b, "csr", name="B")},
                 scipy_sorted, "scipy A @ B + sort_indices", {"output": "csr"},
                 raw={"A": a, "B": b})


def ewise(rng, size):
    n, nnz = {"small": (20_000, 200_000), "medium": (100_000, 1_000_000)}[size]
    i, j = ep.indices("i j")
    A, B = ep.tensor("A", 2, format="csr"), ep.tensor("B", 2, format="csr")
    a, b = random_csr(rng, n, n, nnz), random_csr(rng, n, n, nnz)
    return Setup("element-wise add", A[i, j] + B[i, j], "C[i,j]",
                 f"A, B {n}x{n}, nnz {a.nnz:,} / {b.nnz:,}",
                 {"A": ep.Tensor.from_scipy(a, "csr", name="A"),
                  "B": ep.Tensor.from_scipy(b, "csr", name="B")},
                 lambda: a + b, "scipy A + B", {"output": "csr"}, raw={"A": a, "B": b})


def bellman_ford(rng, size):
    n = {"small": 20_000, "medium": 100_000}[size]
    u, v = ep.indices("u v")
    d, W = ep.tensor("d", 1), ep.tensor("W", 2, format="csc")
    sr = ep.semirings.min_plus
    g = random_graph(rng, n, 5)
    wt = ep.Tensor.from_scipy(g, "csc", semiring=sr, name="W")
    d0 = np.full(n, np.inf)
    d0[0] = 0.0

    def fixpoint(kern):
        dist = d0
        for _ in range(n + 1):
            new = kern(d=dist, W=wt)
            if np.array_equal(new, dist):
                break
            dist = new
        return new

    return Setup("Bellman-Ford (min-plus, pull, to the fixpoint)",
                 ep.sum(u, d[u] * W[u, v]) + d[v], "d'[v]",
                 f"graph {n:,} vertices, {g.nnz:,} edges, source 0", {"d": d0, "W": wt},
                 lambda: shortest_path(g, method="D", directed=True, indices=0),
                 "scipy shortest_path(method='D')", {"semiring": sr}, fixpoint,
                 raw={"W": g})


def mttkrp(rng, size):
    n, nnz, rank = {"small": (200, 200_000, 16), "medium": (400, 1_000_000, 32)}[size]
    i, j, k, q = ep.indices("i j k r")
    B, C, D = ep.tensor("B", 3, format="csf"), ep.tensor("C", 2), ep.tensor("D", 2)
    coords, vals = rng.integers(0, n, (3, nnz)), rng.random(nnz) + 0.5
    cm, dm = rng.random((n, rank)), rng.random((n, rank))
    bt = ep.Tensor.from_coords(coords, vals, (n, n, n), "csf", name="B")

    def gather_and_row_sum():
        prod = vals[:, None] * np.take(cm, coords[1], axis=0)
        prod *= np.take(dm, coords[2], axis=0)
        rows = sp.csr_array((np.ones(nnz), (coords[0], np.arange(nnz))), shape=(n, nnz))
        return rows @ prod

    return Setup("MTTKRP", ep.sum((j, k), B[i, j, k] * C[j, q] * D[k, q]), "A[i,r]",
                 f"B {n}^3 csf, {nnz:,} coordinates ({bt.nnz:,} stored); C, D {n}x{rank}",
                 {"B": bt, "C": cm, "D": dm}, gather_and_row_sum,
                 "numpy gather + scipy row-sum")


CASES = (spmv, spgemm, ewise, bellman_ford, mttkrp)


# --------------------------------------------------------------------------- running

def median_time(fn, repeats=REPEATS, warmup=0):
    """(median seconds of `repeats` calls after `warmup` calls, the last result)."""
    for _ in range(warmup):
        fn()
    times, result = [], None
    for _ in range(repeats):
        t = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - t)
    return float(np.median(times)), result


def fmt_time(s: float) -> str:
    if not np.isfinite(s):
        return "-"
    if s >= 1.0:
        return f"{s:.2f} s"
    return f"{s * 1e3:.2f} ms" if s >= 1e-3 else f"{s * 1e6:.0f} us"


def compare(got, ref, rtol=1e-9) -> tuple[bool, str]:
    """(passed, message): same shape, same infinite entries, and a max absolute
    difference within rtol of the largest finite reference entry (at least 1)."""
    if got.shape != ref.shape:
        return False, f"shape {got.shape} != {ref.shape}"
    if sp.issparse(got) or sp.issparse(ref):
        diff = abs(sp.csr_array(got) - sp.csr_array(ref))
        err = float(diff.max()) if diff.nnz else 0.0
        scale = float(abs(sp.csr_array(ref)).max()) if ref.nnz else 0.0
    else:
        got, ref = np.asarray(got), np.asarray(ref)
        if not np.array_equal(np.isinf(got), np.isinf(ref)):
            return False, "infinite entries differ"
        fin = np.isfinite(ref)
        err = float(np.max(np.abs(got[fin] - ref[fin]))) if fin.any() else 0.0
        scale = float(np.max(np.abs(ref[fin]))) if fin.any() else 0.0
    tol = rtol * max(1.0, scale)
    if err == 0.0:
        return True, "exact match"
    return err <= tol, f"max abs err {err:.3g} (tol {tol:.1g})"


def run_case(setup: Setup, repeats: int = REPEATS) -> tuple[Result, object]:
    """Compile, call, check and time one kernel; also returns the kernel."""
    t = time.perf_counter()
    kern = ep.compile(setup.expr, **setup.options)
    setup.call(kern)
    compile_s = time.perf_counter() - t
    kernel_s, got = median_time(lambda: setup.call(kern), repeats)
    ref_s, ref = median_time(setup.reference, repeats, warmup=1)
    passed, check = compare(got, ref)
    inputs = ", ".join(f"{n}: {t.format}" for n, t in sorted(kern.tensors.items()))
    r = Result(setup.title, passed, check, seconds={
        "compile": compile_s, "kernel": kernel_s, "reference": ref_s})
    r.lines = [("expr", f"{setup.lhs} = {setup.expr}"),
               ("formats", f"{inputs} -> {kern.out_format or 'dense'}"),
               ("semiring", kern.semiring.name), ("data", setup.data),
               ("check", f"{'PASS' if passed else 'FAIL'}  {check}  (vs {setup.ref_label})"),
               ("compile", f"{fmt_time(compile_s)}  (ep.compile + first call)"),
               ("time", f"etchpy {fmt_time(kernel_s)}  |  {setup.ref_label} "
                        f"{fmt_time(ref_s)}  (median of {repeats})")]
    return r, kern


def failure(make, exc: Exception) -> Result:
    """The Result of a case that raised `exc` (call it while handling the exception)."""
    r = Result(make.__name__, False, f"error: {type(exc).__name__}: {exc}")
    r.lines = [("check", f"FAIL  {r.check}")]
    r.lines += [("trace", line) for line in traceback.format_exc().rstrip().splitlines()[-6:]]
    return r


def header(size: str, seed: int) -> list[str]:
    """Versions, compiler and cache directory."""
    lines = [f"etchpy {ep.__version__} demo  (size={size}, seed={seed})",
             f"    python {platform.python_version()}, numpy {np.__version__}, "
             f"scipy {scipy.__version__}, {os.cpu_count()} cpu(s)"]
    try:
        cc = build.find_compiler()
        lines += [f"    compiler  {' '.join(cc.command)}  ({cc.version})",
                  f"    cache     {build.cache_directory()}"]
    except ep.CompileError as exc:  # no compiler: the kernels below will say so
        lines.append(f"    compiler  unavailable: {exc}")
    return lines + [""]


def demo(size: str = "small", seed: int = 0, cases=CASES) -> int:
    """Run every case in `cases` (functions (rng, size) -> Setup); 1 if a check fails."""
    start = time.perf_counter()
    for line in header(size, seed):
        print(line, flush=True)
    failed = []
    for n, make in enumerate(cases, 1):
        try:
            r, _ = run_case(make(np.random.default_rng([seed, n]), size))
        except Exception as exc:
            r = failure(make, exc)
        print(f"[{n}/{len(cases)}] {r.title}")
        for key, value in r.lines:
            print(f"    {key:<9} {value}")
        print("", flush=True)
        if not r.passed:
            failed.append(r.title)
    elapsed = time.perf_counter() - start
    if failed:
        print(f"demo: {len(cases)} kernels, {len(failed)} check(s) FAILED: "
              f"{', '.join(failed)}  ({elapsed:.1f} s)")
        return 1
    print(f"demo: {len(cases)} kernels, all checks passed  ({elapsed:.1f} s)")
    return 0


# --------------------------------------------------------------------------- commands

def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="etchpy", description="etchpy: named-index "
                                "contraction expressions over semirings, compiled to C")
    p.add_argument("--version", action="version", version=f"etchpy {ep.__version__}")
    sub = p.add_subparsers(dest="command", metavar="command")
    d = sub.add_parser("demo", help="compile, check and time five kernels against scipy")
    d.add_argument("--size", choices=SIZE_NAMES, default="small",
                   help="problem sizes (default: small)")
    d.add_argument("--seed", type=int, default=0, help="random seed (default: 0)")
    sub.add_parser("version", help="print the etchpy version")
    return p


def main(argv=None) -> int:
    """The console script: 0 on success, 1 if a demo check fails, 2 on a usage error."""
    parser = _parser()
    args = parser.parse_args(argv)
    if args.command == "version":
        print(f"etchpy {ep.__version__}")
        return 0
    if args.command == "demo":
        return demo(args.size, args.seed)
    parser.print_help()
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
