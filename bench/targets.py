"""Kernel targets measured the way users call them (scipy inputs, one thread,
alternating with the peer call by call in one process, ratios of medians):

    python -m bench targets [--rounds N] [--only abt,spgemm,minplus,tropical]

abt      Σ_k A[i,k]·B[k,j]ᵀ (both csr, one random 5000² matrix, 5 a row, sorted csr
         output) against scipy's `M @ M.T` (rows left unsorted); target ≤ 1.5
spgemm   A·B, n = 2e4, 10 a row, sorted csr output, against the faster of scipy's
         `A @ B` and python-graphblas' `A.mxm(B, plus_times).new()` (no wait());
         target ≤ 1.0
minplus  Σ_j W[i,j]·d[j] over min_plus, W csr n = 1e6, 5 a row, d dense, against
         python-graphblas' `W.mxv(d, min_plus).new()`; target ≤ 0.7
tropical the same step at other shapes (3e5 with 20 a row, 1e5 with 50) over
         min_plus and max_plus; target ≤ 0.7 each
Without python-graphblas the GraphBLAS columns are skipped.
"""
from __future__ import annotations

from bench import _env  # noqa: F401  (environment first)

import argparse

import numpy as np

import etchpy as ep
from bench.kernels import per_row_csr
from bench.timing import alternating_medians, fmt_ratio, fmt_time


def _gb():
    try:
        import graphblas as gb
    except ImportError:
        return None
    gb.ss.config["nthreads"] = 1
    return gb


def abt(rounds, gb):
    i, j, k = ep.indices("i j k")
    M = per_row_csr(np.random.default_rng(0), 5000, 5000, 5).tocsr()
    A, B = ep.tensor("A", 2, "csr"), ep.tensor("B", 2, "csr")
    kern = ep.compile(ep.sum(k, A[i, k] * B[j, k]), output="csr")
    med = alternating_medians([lambda: kern(A=M, B=M), lambda: M @ M.T], rounds)
    return "A·Bᵀ csr 5000², 5 a row", med[0], med[1], "scipy M @ M.T", 1.5


def spgemm(rounds, gb):
    i, j, k = ep.indices("i j k")
    rng = np.random.default_rng(1)
    a, b = per_row_csr(rng, 20000, 20000, 10), per_row_csr(rng, 20000, 20000, 10)
    A, B = ep.tensor("A", 2, "csr"), ep.tensor("B", 2, "csr")
    kern = ep.compile(ep.sum(k, A[i, k] * B[k, j]), output="csr")
    calls = [lambda: kern(A=a, B=b), lambda: a @ b]
    if gb is not None:
        ag, bg = gb.io.from_scipy_sparse(a), gb.io.from_scipy_sparse(b)
        calls.append(lambda: ag.mxm(bg, gb.semiring.plus_times).new())
    med = alternating_medians(calls, rounds)
    return "SpGEMM csr 2e4, 10 a row", med[0], min(med[1:]), "faster of scipy, GraphBLAS", 1.0


def minplus(rounds, gb):
    if gb is None:
        return None
    i, j = ep.indices("i j")
    rng = np.random.default_rng(2)
    w, d = per_row_csr(rng, 1_000_000, 1_000_000, 5), rng.random(1_000_000) * 10
    W, D = ep.tensor("W", 2, "csr"), ep.tensor("d", 1)
    kern = ep.compile(ep.sum(j, W[i, j] * D[j]), semiring="min_plus")
    wg, dg = gb.io.from_scipy_sparse(w), gb.Vector.from_dense(d)
    med = alternating_medians([lambda: kern(W=w, d=d),
                               lambda: wg.mxv(dg, gb.semiring.min_plus).new()], rounds)
    return "min-plus W·d, W csr 1e6, 5 a row", med[0], med[1], "GraphBLAS mxv", 0.7


def _relax(rounds, gb, n, k, semiring, seed):
    """Σ_j W[i,j]·d[j] over `semiring`, W csr n×n with k a row, a scipy input."""
    i, j = ep.indices("i j")
    rng = np.random.default_rng(seed)
    w, d = per_row_csr(rng, n, n, k), rng.random(n) * 10
    W, D = ep.tensor("W", 2, "csr"), ep.tensor("d", 1)
    kern = ep.compile(ep.sum(j, W[i, j] * D[j]), semiring=semiring)
    wg, dg = gb.io.from_scipy_sparse(w), gb.Vector.from_dense(d)
    peer = getattr(gb.semiring, semiring)
    return alternating_medians([lambda: kern(W=w, d=d), lambda: wg.mxv(dg, peer).new()],
                               rounds)


def tropical(rounds, gb):
    if gb is None:
        return None
    return [(f"{sr.replace('_', '-')} W·d, {n:.0e}, {k} a row", *_relax(rounds, gb, n, k, sr, 3),
             "GraphBLAS mxv", 0.7)
            for sr in ("min_plus", "max_plus") for n, k in ((300_000, 20), (100_000, 50))]


CASES = {"abt": abt, "spgemm": spgemm, "minplus": minplus, "tropical": tropical}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench targets", description=__doc__)
    ap.add_argument("--rounds", type=int, default=21)
    ap.add_argument("--only", default=",".join(CASES))
    args = ap.parse_args(argv)
    gb, missed = _gb(), 0
    print(f"{'case':<34} {'etchpy':>9} {'peer':>9}  {'ratio':>5} {'target':>6}  peer")
    for name in args.only.split(","):
        rows = CASES[name](args.rounds, gb)
        if rows is None:
            print(f"{name:<34} skipped: python-graphblas is not installed")
            continue
        for label, ours, peer, who, target in rows if isinstance(rows, list) else [rows]:
            missed += ours / peer > target
            print(f"{label:<34} {fmt_time(ours):>9} {fmt_time(peer):>9}  "
                  f"{fmt_ratio(ours / peer):>5} {target:>6}  {who}")
    return 1 if missed else 0


if __name__ == "__main__":
    raise SystemExit(main())
