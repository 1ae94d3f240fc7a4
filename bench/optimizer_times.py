"""Optimizer wall time and the speed of the kernels it produces.

    python bench/optimizer_times.py [--out PATH]

* `ep.optimize` (median of 5 calls after one warm-up) on
  (a) a deterministic 15-operator expression,
  (b) a deterministic 40-operator expression (sums of products of tensors sharing
      indices), and
  (c) the squared loss Σ_{i,j} (X[i,j] − U[i]·V[j])² with X csr, |i| = |j| = 1e4,
      nnz(X) = 1e5,
  printing each expression, its operator count (Mul + Add + Σ nodes), the estimated
  cost before/after, the saturation iterations, the stop reason and the time.
* The compiled squared-loss kernel with optimize=True vs optimize=False on a
  1e4 × 1e4 csr X with 1e5 nonzeros (median of 3 calls after a warm-up call).

Writes bench/OPTIMIZER.md (or --out) with a machine/date header and the tables.
"""
from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse  # noqa: E402
import datetime  # noqa: E402
import gc  # noqa: E402
import platform  # noqa: E402
import statistics  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402
import scipy.sparse as sp  # noqa: E402

import etchpy as ep  # noqa: E402
from etchpy.expr.nodes import Add, Mul, Sum  # noqa: E402

HERE = Path(__file__).resolve().parent
N, NNZ = 10_000, 100_000
SQ_DIMS = {"i": N, "j": N}
SQ_NNZ = {"X": NNZ}

i, j, k, l = ep.indices("i j k l")


def n_ops(e) -> int:
    """Operator nodes (Mul, Add, Σ) of an expression tree."""
    match e:
        case Sum(_, body):
            return 1 + n_ops(body)
        case Mul(a, b) | Add(a, b):
            return 1 + n_ops(a) + n_ops(b)
    return 0


def _tensors():
    A, B, C, D = (ep.tensor(n, 2) for n in "ABCD")
    S = ep.tensor("S", 2, "csr")
    u, v, w = (ep.tensor(n, 1) for n in "uvw")
    return A, B, C, D, S, u, v, w


def expr15():
    """A sparse-weighted product of two differences plus a small contraction: 15 operators."""
    A, B, C, D, S, u, v, w = _tensors()
    return (ep.sum((i, j), (S[i, j] - u[i] * v[j]) * (S[i, j] - u[i] * w[j]) * A[i, j])
            + ep.sum((i, j), B[i, j] * v[j] * w[i]))


def expr40():
    """Five Σ-blocks (chains, sparse-weighted products, shared factors): 40 operators."""
    A, B, C, D, S, u, v, w = _tensors()
    return (ep.sum((i, j, k), A[i, j] * B[j, k] * C[k, i] * u[i])
            + ep.sum((i, j, k, l), A[i, j] * B[j, k] * D[k, l] * u[l])
            + ep.sum((i, j), S[i, j] * u[i] * v[j] + S[i, j] * u[i] * w[j])
            + ep.sum((i, j, k), S[i, j] * (C[j, k] + D[j, k]) * v[k] * w[i])
            + ep.sum((i, j), (A[i, j] - u[i] * v[j]) * (B[i, j] - u[i] * w[j])))


def squared_loss():
    X = ep.tensor("X", 2, "csr")
    U, V = ep.tensor("U", 1), ep.tensor("V", 1)
    return ep.sum((i, j), (X[i, j] - U[i] * V[j]) ** 2)


def timed(fn):
    gc.disable()
    try:
        t0 = time.perf_counter()
        out = fn()
        return time.perf_counter() - t0, out
    finally:
        gc.enable()


def median_time(fn, repeat):
    fn()                                         # warm-up
    runs = [timed(fn) for _ in range(repeat)]
    return statistics.median(t for t, _ in runs), runs[-1][1]


def bench_optimize():
    cases = [("15-op", expr15(), {}), ("40-op", expr40(), {}),
             ("squared loss", squared_loss(), {"dims": SQ_DIMS, "nnz": SQ_NNZ})]
    rows = []
    for name, e, opts in cases:
        t, opt = median_time(lambda: ep.optimize(e, **opts), 5)
        s = opt.stats
        row = dict(case=name, ops=n_ops(e), expr=str(e), after=str(opt.expr),
                   before_cost=opt.cost_before, after_cost=opt.cost_after,
                   iterations=s.get("iterations"), stop=s.get("stop"),
                   nodes=s.get("nodes"), seconds=t)
        rows.append(row)
        print(f"[{name}] {row['ops']} operators\n  expr:      {row['expr']}\n"
              f"  optimized: {row['after']}\n"
              f"  cost {opt.cost_before:.4g} -> {opt.cost_after:.4g}, "
              f"{row['iterations']} iterations, {row['nodes']} nodes, stop: {row['stop']}, "
              f"median {t * 1e3:.1f} ms", flush=True)
    return rows


def sparse_x(rng):
    flat = np.unique(rng.integers(0, N * N, int(NNZ * 1.05)))
    flat = rng.permutation(flat)[:NNZ]
    return sp.csr_array((rng.random(NNZ), (flat // N, flat % N)), shape=(N, N))


def bench_kernel():
    rng = np.random.default_rng(0)
    Xs, u, v = sparse_x(rng), rng.random(N), rng.random(N)
    loss = squared_loss()
    out = {}
    for label, kw in (("optimize=False", {"optimize": False}),
                      ("default (optimizer on, no size hints)", {}),
                      ("optimize=True", {"optimize": True,
                                         "optimizer_options": {"dims": SQ_DIMS, "nnz": SQ_NNZ}})):
        t0 = time.perf_counter()
        kern = ep.compile(loss, **kw)
        compile_s = time.perf_counter() - t0
        t, val = median_time(lambda: kern(X=Xs, U=u, V=v), 3)
        out[label] = dict(seconds=t, value=float(val), compile=compile_s)
        print(f"[kernel {label}] compile {compile_s:.2f} s, median call {t * 1e3:.2f} ms, "
              f"value {float(val):.10g}", flush=True)
    a = out["optimize=False"]["value"]
    for label in ("default (optimizer on, no size hints)", "optimize=True"):
        b = out[label]["value"]
        assert abs(a - b) <= 1e-9 * abs(a), (a, b)
    out["speedup default"] = (out["optimize=False"]["seconds"]
                              / out["default (optimizer on, no size hints)"]["seconds"])
    out["speedup"] = out["optimize=False"]["seconds"] / out["optimize=True"]["seconds"]
    print(f"[kernel] speedup {out['speedup']:.1f}x", flush=True)
    return out


def machine() -> str:
    return (f"{platform.node() or 'host'}: {platform.machine()}, "
            f"{_cpu_model()}, {os.cpu_count()} CPUs, Python {platform.python_version()}, "
            f"numpy {np.__version__}")


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown CPU"


def write_md(path: Path, rows, kern):
    lim = ep.tuning.Saturation()
    lines = [
        "# Optimizer times",
        "",
        f"Generated by `python bench/optimizer_times.py` on "
        f"{datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M UTC}.",
        f"Machine: {machine()}.",
        f"Default limits: iterations {lim.iterations}, nodes {lim.nodes}, "
        f"seconds {lim.seconds}, patience {getattr(lim, 'patience', 'n/a')}.",
        "",
        "## `ep.optimize` (median of 5 after a warm-up)",
        "",
        "| case | operators | cost before | cost after | iterations | stop | time |",
        "|---|---:|---:|---:|---:|---|---:|",
    ]
    for r in rows:
        lines.append(f"| {r['case']} | {r['ops']} | {r['before_cost']:.4g} | "
                     f"{r['after_cost']:.4g} | {r['iterations']} | {r['stop']} | "
                     f"{r['seconds'] * 1e3:.1f} ms |")
    lines += ["", "Expressions:", ""]
    for r in rows:
        lines.append(f"- {r['case']}: `{r['expr']}`")
        lines.append(f"  - optimized: `{r['after']}`")
    lines += [
        "",
        f"## Squared-loss kernel, X {N}×{N} csr with {NNZ} nonzeros "
        "(median of 3 calls after a warm-up)",
        "",
        "| kernel | ep.compile (incl. optimize; the .so may come from the disk cache) | call |",
        "|---|---:|---:|",
    ]
    for label in ("optimize=False", "default (optimizer on, no size hints)", "optimize=True"):
        d = kern[label]
        lines.append(f"| {label} | {d['compile']:.2f} s | {d['seconds'] * 1e3:.2f} ms |")
    lines += ["", f"Speedup of the call with optimize=True (sizes given): "
                  f"**{kern['speedup']:.1f}x**; with the default (no sizes): "
                  f"**{kern['speedup default']:.1f}x**.", ""]
    path.write_text("\n".join(lines))
    print(f"wrote {path}")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=HERE / "OPTIMIZER.md")
    ap.add_argument("--no-kernel", action="store_true", help="skip the compiled-kernel timing")
    args = ap.parse_args(argv)
    rows = bench_optimize()
    kern = None if args.no_kernel else bench_kernel()
    if kern is not None:
        write_md(args.out, rows, kern)


if __name__ == "__main__":
    main()
