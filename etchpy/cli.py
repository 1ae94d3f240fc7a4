"""The ``etchpy`` command line.

    etchpy demo [--size small|medium] [--seed N]   compile, check and time a few kernels
    etchpy version                                  print the version
    python -m etchpy ...                            the same

The demo generates random inputs with fixed seeds, compiles five kernels (SpMV, an
inner-product SpGEMM, element-wise addition, a min-plus Bellman-Ford relaxation and
MTTKRP), checks every result against numpy / scipy and times it against the numpy /
scipy way of computing the same thing. It exits with status 1 if any check fails.

Timing: "compile+first call" is ``ep.compile`` plus the first call (lowering, C
compile or disk-cache load, dlopen). The kernel time is the median of 5 calls after
that warm-up, with inputs already converted to ``ep.Tensor`` (so the time is the
kernel, not the validation of scipy input, which is reported separately where it
matters); the reference time is the median of 5 calls after one warm-up call.
"""
from __future__ import annotations

import argparse
import os
import platform
import sys
import time
import traceback
from dataclasses import dataclass, field

import numpy as np

REPEATS = 5

SIZES = {
    "small": {
        "spmv": dict(n=20_000, nnz=200_000),
        "spgemm": dict(n=20_000, per_row=10),
        "ewise": dict(n=20_000, nnz=200_000),
        "bellman_ford": dict(n=20_000, out_degree=5),
        "mttkrp": dict(n=200, nnz=200_000, rank=16),
    },
    "medium": {
        "spmv": dict(n=100_000, nnz=1_000_000),
        "spgemm": dict(n=100_000, per_row=10),
        "ewise": dict(n=100_000, nnz=1_000_000),
        "bellman_ford": dict(n=100_000, out_degree=5),
        "mttkrp": dict(n=400, nnz=1_000_000, rank=32),
    },
}


# --------------------------------------------------------------------------- helpers

@dataclass
class Result:
    title: str
    expr: str = ""
    formats: str = ""
    semiring: str = ""
    data: str = ""
    check: str = ""
    passed: bool = False
    compile_s: float = float("nan")
    compile_kind: str = ""
    kernel_s: float = float("nan")
    ref_s: float = float("nan")
    ref_label: str = ""
    check_ref: str = ""          # what the check compared with, if not ref_label
    notes: list[str] = field(default_factory=list)


def _median_time(fn, repeats=REPEATS, warmup=0):
    for _ in range(warmup):
        fn()
    times = []
    result = None
    for _ in range(repeats):
        t = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - t)
    return float(np.median(times)), result


def _fmt_time(s: float) -> str:
    if not np.isfinite(s):
        return "-"
    if s >= 1.0:
        return f"{s:.2f} s"
    if s >= 1e-3:
        return f"{s * 1e3:.2f} ms"
    return f"{s * 1e6:.0f} us"


def _ratio(a: float, b: float) -> str:
    if not (np.isfinite(a) and np.isfinite(b)) or b <= 0:
        return "-"
    return f"{a / b:.2f}x"


def _formats(kern) -> str:
    ins = ", ".join(f"{name}: {t.format}" for name, t in sorted(kern.tensors.items()))
    out = kern.out_format if kern.out_format is not None else "dense"
    return f"{ins} -> {out}"


def _compile_and_first_call(ep, expr, inputs, **options):
    """ep.compile + the first call; returns (kernel, result, seconds, how it was built)."""
    t = time.perf_counter()
    kern = ep.compile(expr, **options)
    already = bool(getattr(kern, "_libs", None))
    result = kern(**inputs)
    seconds = time.perf_counter() - t
    kind = "compile+first call"
    try:
        if already:
            kind += ", library already loaded in this process"
        else:
            lib = next(iter(kern._libs.values()))
            kind += ", disk-cached .so" if lib.from_cache else ", cold C build"
    except Exception:  # kernel internals changed: just say what was timed
        pass
    return kern, result, seconds, kind


def _rand_sparse(rng, n, m, nnz):
    """A random n x m real csr array from nnz random coordinates (duplicates summed)."""
    import scipy.sparse as sp
    rows = rng.integers(0, n, nnz)
    cols = rng.integers(0, m, nnz)
    vals = rng.random(nnz) + 0.5
    a = sp.coo_array((vals, (rows, cols)), shape=(n, m)).tocsr()
    a.sum_duplicates()
    return a


def _close(err: float, scale: float, rtol=1e-9) -> tuple[bool, str]:
    tol = rtol * max(1.0, scale)
    if err == 0.0:
        return True, "exact match"
    return bool(err <= tol), f"max abs err {err:.3g} (tol {tol:.1g})"


# --------------------------------------------------------------------------- kernels

def _spmv(ep, rng, n, nnz):
    r = Result("SpMV")
    i, j = ep.indices("i j")
    A, x = ep.tensor("A", 2, format="csr"), ep.tensor("x", 1)
    e = ep.sum(j, A[i, j] * x[j])
    a = _rand_sparse(rng, n, n, nnz)
    xv = rng.random(n)
    r.data = f"A {n}x{n}, nnz {a.nnz:,}; x dense {n}"
    at = ep.Tensor.from_scipy(a, "csr", name="A")
    kern, y, r.compile_s, r.compile_kind = _compile_and_first_call(ep, e, {"A": at, "x": xv})
    r.expr, r.formats, r.semiring = f"y[i] = {e}", _formats(kern), kern.semiring.name
    r.kernel_s, y = _median_time(lambda: kern(A=at, x=xv))
    r.ref_s, ref = _median_time(lambda: a @ xv, warmup=1)
    r.ref_label = "scipy A @ x"
    r.passed, r.check = _close(float(np.max(np.abs(y - ref))), float(np.max(np.abs(ref))))
    with_scipy, _ = _median_time(lambda: kern(A=a, x=xv))
    r.notes.append(f"call with scipy input (validated and converted each call): "
                   f"{_fmt_time(with_scipy)}")
    return r


def _spgemm(ep, rng, n, per_row):
    r = Result("SpGEMM (row-wise, sorted rows)")
    i, j, k = ep.indices("i j k")
    A, B = ep.tensor("A", 2, format="csr"), ep.tensor("B", 2, format="csr")
    e = ep.sum(j, A[i, j] * B[j, k])
    a, b = _rand_sparse(rng, n, n, n * per_row), _rand_sparse(rng, n, n, n * per_row)
    r.data = f"A, B {n}x{n}, nnz {a.nnz:,} / {b.nnz:,} ({per_row} per row)"
    at, bt = ep.Tensor.from_scipy(a, "csr", name="A"), ep.Tensor.from_scipy(b, "csr", name="B")
    kern, c, r.compile_s, r.compile_kind = _compile_and_first_call(
        ep, e, {"A": at, "B": bt}, output="csr")
    r.expr, r.formats, r.semiring = f"C[i,k] = {e}", _formats(kern), kern.semiring.name
    r.kernel_s, c = _median_time(lambda: kern(A=at, B=bt))
    def scipy_sorted():
        out = a @ b
        out.sort_indices()     # etchpy's rows are sorted; compare like with like
        return out

    r.ref_s, ref = _median_time(scipy_sorted, warmup=1)
    r.ref_label = "scipy A @ B + sort_indices"
    diff = abs(c - ref)
    err = float(diff.max()) if diff.nnz else 0.0
    r.passed, r.check = _close(err, float(abs(ref).max()) if ref.nnz else 0.0)
    if c.shape != ref.shape:
        r.passed, r.check = False, f"shape {c.shape} != {ref.shape}"
    r.notes.append(f"stored entries: etchpy {c.nnz:,}, scipy {ref.nnz:,}")
    return r


def _ewise(ep, rng, n, nnz):
    r = Result("element-wise add")
    i, j = ep.indices("i j")
    A, B = ep.tensor("A", 2, format="csr"), ep.tensor("B", 2, format="csr")
    e = A[i, j] + B[i, j]
    a, b = _rand_sparse(rng, n, n, nnz), _rand_sparse(rng, n, n, nnz)
    r.data = f"A, B {n}x{n}, nnz {a.nnz:,} / {b.nnz:,}"
    at, bt = ep.Tensor.from_scipy(a, "csr", name="A"), ep.Tensor.from_scipy(b, "csr", name="B")
    kern, c, r.compile_s, r.compile_kind = _compile_and_first_call(
        ep, e, {"A": at, "B": bt}, output="csr")
    r.expr, r.formats, r.semiring = f"C[i,j] = {e}", _formats(kern), kern.semiring.name
    r.kernel_s, c = _median_time(lambda: kern(A=at, B=bt))
    r.ref_s, ref = _median_time(lambda: a + b, warmup=1)
    r.ref_label = "scipy A + B"
    diff = abs(c - ref)
    err = float(diff.max()) if diff.nnz else 0.0
    r.passed, r.check = _close(err, float(abs(ref).max()) if ref.nnz else 0.0)
    if c.nnz != ref.nnz:
        r.notes.append(f"stored entries differ: etchpy {c.nnz:,}, scipy {ref.nnz:,}")
    return r


def _bellman_ford(ep, rng, n, out_degree):
    import scipy.sparse as sp
    from scipy.sparse.csgraph import shortest_path

    r = Result("Bellman-Ford (min-plus, pull)")
    u, v = ep.indices("u v")
    d, W = ep.tensor("d", 1), ep.tensor("W", 2, format="csc")
    e = ep.sum(u, d[u] * W[u, v]) + d[v]
    sr = ep.semirings.min_plus
    # 5 random out-edges per vertex, weights in [1, 10); no self-loops, no duplicates.
    src = np.repeat(np.arange(n, dtype=np.int64), out_degree)
    dst = rng.integers(0, n, n * out_degree)
    w = rng.uniform(1.0, 10.0, n * out_degree)
    keep = src != dst
    src, dst, w = src[keep], dst[keep], w[keep]
    _, first = np.unique(src * n + dst, return_index=True)
    src, dst, w = src[first], dst[first], w[first]
    g = sp.coo_array((w, (src, dst)), shape=(n, n)).tocsc()
    r.data = f"graph {n:,} vertices, {g.nnz:,} edges, source 0"
    wt = ep.Tensor.from_scipy(g, "csc", semiring=sr, name="W")
    d0 = np.full(n, np.inf)
    d0[0] = 0.0

    t = time.perf_counter()
    kern = ep.compile(e, semiring=sr)
    already = bool(getattr(kern, "_libs", None))

    def solve():
        dist, rounds = d0, 0
        while True:
            new = kern(d=dist, W=wt)
            rounds += 1
            if np.array_equal(new, dist) or rounds > n:
                return new, rounds
            dist = new

    kern(d=d0, W=wt)
    r.compile_s = time.perf_counter() - t
    r.compile_kind = "compile+first call"
    try:
        if already:
            r.compile_kind += ", library already loaded in this process"
        else:
            lib = next(iter(kern._libs.values()))
            r.compile_kind += ", disk-cached .so" if lib.from_cache else ", cold C build"
    except Exception:
        pass
    r.expr = f"d'[v] = {e}"
    r.formats, r.semiring = _formats(kern), kern.semiring.name
    r.kernel_s, (dist, rounds) = _median_time(solve)
    r.ref_s, ref = _median_time(lambda: shortest_path(g, method="D", directed=True,
                                                      indices=0), warmup=1)
    r.ref_label = "scipy shortest_path(method='D')"
    same_inf = np.array_equal(np.isinf(dist), np.isinf(ref))
    fin = np.isfinite(ref)
    err = float(np.max(np.abs(dist[fin] - ref[fin]))) if fin.any() else 0.0
    r.passed, r.check = _close(err, float(np.max(ref[fin])) if fin.any() else 0.0)
    if not same_inf:
        r.passed, r.check = False, "reachable sets differ"
    r.notes.append(f"fixpoint after {rounds} relaxation rounds (one kernel call each); "
                   f"{int(fin.sum()):,} vertices reachable")
    return r


def _mttkrp(ep, rng, n, nnz, rank):
    r = Result("MTTKRP")
    i, j, k, q = ep.indices("i j k r")
    B = ep.tensor("B", 3, format="csf")
    C, D = ep.tensor("C", 2), ep.tensor("D", 2)
    e = ep.sum((j, k), B[i, j, k] * C[j, q] * D[k, q])
    coords = rng.integers(0, n, (3, nnz))
    vals = rng.random(nnz) + 0.5
    cm, dm = rng.random((n, rank)), rng.random((n, rank))
    bt = ep.Tensor.from_coords(coords, vals, (n, n, n), "csf", name="B")
    r.data = f"B {n}^3 csf, {nnz:,} coordinates ({bt.nnz:,} stored); C, D {n}x{rank}"
    kern, out, r.compile_s, r.compile_kind = _compile_and_first_call(
        ep, e, {"B": bt, "C": cm, "D": dm})
    r.expr, r.formats, r.semiring = f"A[i,r] = {e}", _formats(kern), kern.semiring.name
    r.kernel_s, out = _median_time(lambda: kern(B=bt, C=cm, D=dm))

    # The check: np.add.at over the nonzeros, straight from the coordinates.
    ref = np.zeros((n, rank))
    np.add.at(ref, coords[0], vals[:, None] * cm[coords[1]] * dm[coords[2]])

    # The timing baseline: the quickest plain numpy/scipy route found (gather the
    # factor rows per nonzero, then sum rows per i with a sparse 0/1 matrix product).
    import scipy.sparse as sp

    def baseline():
        prod = vals[:, None] * np.take(cm, coords[1], axis=0)
        prod *= np.take(dm, coords[2], axis=0)
        rows = sp.csr_array((np.ones(nnz), (coords[0], np.arange(nnz))), shape=(n, nnz))
        return rows @ prod

    r.ref_s, base = _median_time(baseline, warmup=1)
    r.ref_label = "numpy gather + scipy row-sum"
    if not np.allclose(base, ref):
        r.notes.append("warning: the timing baseline disagrees with np.add.at")
    r.passed, r.check = _close(float(np.max(np.abs(out - ref))), float(np.max(np.abs(ref))))
    r.check_ref = "numpy np.add.at over the nonzeros"
    try:
        r.notes.append("loop order: " + ", ".join(
            f"{s.target} over ({', '.join(s.order)})" for s in kern.plan.steps))
    except Exception:
        pass
    return r


KERNELS = (("spmv", _spmv), ("spgemm", _spgemm), ("ewise", _ewise),
           ("bellman_ford", _bellman_ford), ("mttkrp", _mttkrp))


# --------------------------------------------------------------------------- commands

def _print_result(n: int, total: int, r: Result, out):
    status = "PASS" if r.passed else "FAIL"
    out(f"[{n}/{total}] {r.title}")
    rows = [("expr", r.expr), ("formats", r.formats), ("semiring", r.semiring),
            ("data", r.data), ("check", f"{status}  {r.check}  (vs {r.check_ref or r.ref_label})"),
            ("compile", f"{_fmt_time(r.compile_s)}  ({r.compile_kind})"),
            ("time", f"etchpy {_fmt_time(r.kernel_s)}  |  {r.ref_label} "
                     f"{_fmt_time(r.ref_s)}  |  etchpy/ref {_ratio(r.kernel_s, r.ref_s)}"
                     f"  (median of {REPEATS})")]
    rows += [("note", note) for note in r.notes]
    for key, value in rows:
        if value:
            out(f"    {key:<9} {value}")
    out("")


def _header(ep, size, seed, out):
    out(f"etchpy {ep.__version__} demo  (size={size}, seed={seed})")
    import scipy
    out(f"    python {platform.python_version()}, numpy {np.__version__}, "
        f"scipy {scipy.__version__}, {os.cpu_count()} cpu(s)")
    try:
        from .runtime import build
        cc = build.find_compiler()
        out(f"    compiler  {' '.join(cc.command)}  ({cc.version})")
        out(f"    cache     {build.cache_directory()}")
    except Exception as exc:  # no compiler: the kernels below will say so
        out(f"    compiler  unavailable: {exc}")
    out("")


def demo(size: str = "small", seed: int = 0) -> int:
    import etchpy as ep

    def out(line=""):
        print(line, flush=True)

    start = time.perf_counter()
    _header(ep, size, seed, out)
    results: list[Result] = []
    for n, (key, fn) in enumerate(KERNELS, 1):
        rng = np.random.default_rng([seed, n])
        try:
            r = fn(ep, rng, **SIZES[size][key])
        except Exception as exc:
            r = Result(key, check=f"error: {type(exc).__name__}: {exc}", passed=False)
            r.notes.extend(traceback.format_exc().rstrip().splitlines()[-6:])
        results.append(r)
        _print_result(n, len(KERNELS), r, out)

    head = f"{'kernel':<31} {'check':<5} {'compile':>10} {'etchpy':>10} {'reference':>10} " \
           f"{'etchpy/ref':>10}"
    out("summary (etchpy/ref < 1 means etchpy is faster; times are medians of "
        f"{REPEATS} calls)")
    out(head)
    out("-" * len(head))
    for r in results:
        out(f"{r.title:<31} {'PASS' if r.passed else 'FAIL':<5} {_fmt_time(r.compile_s):>10} "
            f"{_fmt_time(r.kernel_s):>10} {_fmt_time(r.ref_s):>10} "
            f"{_ratio(r.kernel_s, r.ref_s):>10}")
    out("")
    failed = [r.title for r in results if not r.passed]
    elapsed = time.perf_counter() - start
    if failed:
        out(f"demo: {len(results)} kernels, {len(failed)} check(s) FAILED: "
            f"{', '.join(failed)}  ({elapsed:.1f} s)")
        return 1
    out(f"demo: {len(results)} kernels, all checks passed  ({elapsed:.1f} s)")
    return 0


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="etchpy", description="etchpy: named-index "
                                "contraction expressions over semirings, compiled to C")
    sub = p.add_subparsers(dest="command", metavar="command")
    d = sub.add_parser("demo", help="compile, check and time a few kernels against scipy")
    d.add_argument("--size", choices=list(SIZES), default="small",
                   help="problem sizes (default: small)")
    d.add_argument("--seed", type=int, default=0, help="random seed (default: 0)")
    sub.add_parser("version", help="print the etchpy version")
    return p


def main(argv=None) -> int:
    parser = _parser()
    args = parser.parse_args(argv)
    if args.command == "version":
        from . import __version__
        print(f"etchpy {__version__}")
        return 0
    if args.command == "demo":
        return demo(args.size, args.seed)
    parser.print_help()
    return 2


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
