"""Linear-algebra programs optimised whole (ep.lazy) against numpy/scipy as written.

    python -m bench.lazy [--rounds N] [--n N] [--quick]

Each program is written once, as a function of a namespace F for the
element-wise functions (numpy, or etchpy) and of the arrays it reads (by
parameter name, from `data`): the peer calls it on the scipy csr_array and
numpy arrays, etchpy on their ep.lazy wrappings (made in the timed call, as a
training loop does) and computes the results with ep.compute (several results
as one program); "traced" is the same program as `ep.lazy.function(prog)`
called with the arrays (traced on its first call, replayed after: no node
built per call). X is n×n at 1% density, the factors are dense of rank 10 and
20; the programs with nothing to fuse run again on a dense X (n/5 × n/5, numpy's
`@` a BLAS call: the "dense X" rows, outside the geometric mean). One thread,
one process; after a warm-up call the calls alternate, each side starting half
the rounds, the collector paused per call; the speedup is the
peer's median over etchpy's. Three programs have nothing to fuse (logistic,
least-squares and softmax-regression gradients: the peer's own library calls
are the best plan), their target is parity (≥ 1.0); the four that fuse are
gated at ≥ 2 and the geometric mean at ≥ 5 (at the default n).
"plan" is the cold cost of ep.explain on empty kernel caches: the array-level
rewrites, the etchpy optimizer and the compilation to Imp of every kernel (no C
build); "e-graph" is the optimizer's share (its saturation and extraction, summed
over the program's kernels). optimize=False runs each step as written (3 calls).
"""
from __future__ import annotations

from bench import _env  # noqa: F401  (environment first)

import argparse
import math
import inspect
import re
import time

import numpy as np
import scipy.sparse as sp

import etchpy as ep
from etchpy.runtime import kernel_cache
from bench.timing import alternating_medians, fmt_ratio, fmt_time, timed


def squared_loss(F, X, U, V):
    return ((X - U @ V.T) ** 2).sum(),


def pnmf(F, X, U, V):
    return (U @ V.T).sum() - (X * F.log(U @ V.T)).sum(),


def als_gradient(F, X, U, V, M):
    return (M * (U @ V.T) - X) @ V,


def shared_residual(F, X, U, V, M):
    R = M * (U @ V.T) - X
    return R @ V, R.T @ U


def logistic_gradient(F, X, w, y):
    return X.T @ (1 / (1 + F.exp(-(X @ w))) - y),


def least_squares_gradient(F, X, w, y):
    return X.T @ (X @ w - y),


def softmax_gradient(F, X, V, Y):
    """Softmax regression: X's rows scored against V's columns (classes), Y one-hot."""
    E = F.exp(X @ V)
    return X.T @ (E / E.sum(axis=1, keepdims=True) - Y),


PROGRAMS = [("squared loss", squared_loss), ("PNMF objective", pnmf),
            ("masked ALS gradient", als_gradient), ("two gradients, shared R", shared_residual),
            ("logistic gradient", logistic_gradient),
            ("least-squares gradient", least_squares_gradient),
            ("softmax gradient", softmax_gradient)]
GATED = {"squared loss", "PNMF objective", "masked ALS gradient", "two gradients, shared R"}
# nothing to fuse: the peer's own library calls are the plan; the target is parity
UNFUSED = {"logistic gradient", "least-squares gradient", "softmax gradient"}


def data(n: int, rank: int, seed: int = 0) -> dict:
    """The arrays by the programs' parameter names: X n×n at 1% density, M its
    pattern, U and V n×rank, w and y vectors, Y one-hot n×rank (V's columns as
    classes)."""
    rng = np.random.default_rng(seed)
    X = sp.random_array((n, n), density=0.01, format="csr", random_state=seed)
    M = sp.csr_array((np.ones(X.nnz), X.indices, X.indptr), shape=X.shape)
    U, V = rng.random((n, rank)), rng.random((n, rank))
    w, y = rng.standard_normal(n) / math.sqrt(n), (rng.random(n) > 0.5).astype(float)
    Y = np.zeros((n, rank))
    Y[np.arange(n), rng.integers(0, rank, n)] = 1.0
    return dict(X=X, U=U, V=V, M=M, w=w, y=y, Y=Y)


def dense_data(n: int, rank: int, seed: int = 0) -> dict:
    """data() for the dense rows: X a dense n/5 × n/5 array (uniform over
    [0, 1/m): X @ w stays small), the vectors and factors of its size."""
    m = max(n // 5, 2)
    rng = np.random.default_rng(seed)
    arrays = data(m, rank, seed)
    arrays["X"] = rng.random((m, m)) / m
    return arrays


def arguments(prog, arrays: dict) -> list:
    """The arrays prog takes, in its parameters' order (after F)."""
    names = list(inspect.signature(prog).parameters)[1:]
    return [arrays[k] for k in names]


def same(a, b) -> bool:
    return all(np.allclose(x.toarray() if hasattr(x, "toarray") else np.asarray(x),
                           z.toarray() if hasattr(z, "toarray") else np.asarray(z),
                           rtol=1e-8, atol=1e-8) for x, z in zip(a, b))


def cases(arrays: dict, programs=PROGRAMS, suffix: str = ""):
    for name, prog in programs:
        args = arguments(prog, arrays)
        name = name + suffix

        def peer(prog=prog, args=args):
            return prog(np, *args)

        def ours(prog=prog, args=args, optimize=True):
            out = ep.compute(*prog(ep, *(ep.lazy(a) for a in args)), optimize=optimize)
            return out if isinstance(out, tuple) else (out,)

        traced_fn = ep.lazy.function(lambda *a, prog=prog: prog(ep, *a))

        def traced(fn=traced_fn, args=args):
            return fn(*args)

        def plan(prog=prog, args=args):
            kernel_cache.KERNELS.clear()
            t = time.perf_counter()
            text = ep.explain(*prog(ep, *(ep.lazy(a) for a in args)))
            egraph = sum(float(m) for m in re.findall(r"e-graph .*, ([0-9.]+) ms", text))
            return time.perf_counter() - t, egraph / 1e3
        yield name, ours, traced, peer, plan


def measure(ours, traced, peer, rounds: int):
    """Medians of etchpy's (built from operators, and traced) and the peer's
    calls, alternating call by call (each starts a share of the rounds), the
    collector paused per call."""
    return alternating_medians([ours, traced, peer], rounds)


def run(n: int, rank: int, rounds: int) -> list:
    """The rows at n and rank: every program on the sparse X, then the programs
    with nothing to fuse on a dense X (n/5 × n/5: numpy's `@` is BLAS)."""
    unfused = [(name, prog) for name, prog in PROGRAMS if name in UNFUSED]
    rows = []
    print(f"n={n}, density 1%, rank {rank}; dense X: {max(n // 5, 2)}² ")
    print(f"{'program':<34} {'etchpy':>9} {'peer':>9} {'speedup':>8} {'traced':>9} "
          f"{'speedup':>8} {'no-opt':>9} {'plan':>8} {'e-graph':>8}  same")
    for name, ours, traced, peer, plan in [*cases(data(n, rank)),
                                   *cases(dense_data(n, rank), unfused, ", dense X")]:
        t_plan, t_egraph = plan()
        ok = same(ours(), peer()) and same(traced(), peer())
        t_ours, t_traced, t_peer = measure(ours, traced, peer, rounds)
        t_noopt = float(np.median([timed(lambda: ours(optimize=False))[0]
                                   for _ in range(3)]))
        rows.append((name, t_peer / t_ours, ok, t_peer / t_traced))
        print(f"{name:<34} {fmt_time(t_ours):>9} {fmt_time(t_peer):>9} "
              f"{fmt_ratio(t_peer / t_ours):>8} {fmt_time(t_traced):>9} "
              f"{fmt_ratio(t_peer / t_traced):>8} {fmt_time(t_noopt):>9} "
              f"{fmt_time(t_plan):>8} {fmt_time(t_egraph):>8}  {'yes' if ok else 'NO'}")
    return rows


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench.lazy", description=__doc__)
    ap.add_argument("--rounds", type=int, default=15)
    ap.add_argument("--n", type=int, default=5000)
    ap.add_argument("--quick", action="store_true", help="n divided by 10")
    args = ap.parse_args(argv)
    n = args.n // 10 if args.quick else args.n
    rows = [r for rank in (10, 20) for r in run(n, rank, args.rounds)]
    speedups = [s for name, s, *_ in rows if "dense X" not in name]    # the gate's rows
    geo = math.exp(sum(math.log(s) for s in speedups) / len(speedups))
    gated = all(s >= 2 for name, s, *_ in rows if name in GATED)
    unfused = min(s for name, s, *_ in rows if name.split(",")[0] in UNFUSED)
    traced = min(t for name, _, _, t in rows if name.split(",")[0] in UNFUSED)
    ok = gated and geo >= 5 and unfused >= 1 and all(o for _, _, o, _ in rows)
    print(f"geometric mean speedup {geo:.2f}x over the sparse-X rows (target ≥ 5); slowest with nothing to fuse "
          f"{unfused:.2f}x (target ≥ 1.0), traced {traced:.2f}x; gated programs ≥ 2x: {gated}")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
