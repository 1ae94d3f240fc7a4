"""Plans chosen from the real inputs, against the obvious scipy/numpy call.

    python -m bench.plans [--rounds N] [--quick]

One thread, one process. Each case alternates etchpy's call with its peer's,
call by call, after a warm-up call that plans the kernel for the inputs' size
class, and reports the ratio of medians (etchpy / peer) against the issue's
target. Each case also checks the answers agree (and, for sparse outputs, the
stored pattern). `--quick` divides the sizes by 10.
"""
from __future__ import annotations

from bench import _env  # noqa: F401  (environment first)

import argparse

import numpy as np
import scipy.sparse as sp

import etchpy as ep
from bench.timing import alternating_medians, fmt_ratio, fmt_time


def random_csr(n, per_row, seed):
    """An n×n canonical csr matrix with `per_row` random columns a row (repeats
    merged, so a few rows hold fewer)."""
    rng = np.random.default_rng(seed)
    rows = np.repeat(np.arange(n), per_row)
    m = sp.csr_matrix((rng.random(n * per_row), (rows, rng.integers(0, n, n * per_row))),
                      shape=(n, n))
    m.sum_duplicates()
    return m


def _sorted(m):
    m.sort_indices()
    return m


def cases(scale: int):
    """(name, etchpy call, peer call, target ratio, same-answer check) per case."""
    i, j, k, r, c = ep.indices("i j k r c")
    A, B = ep.tensor("A", 2, "csr"), ep.tensor("B", 2, "csr")
    n1, n2 = 5000 // scale, 20000 // scale
    a1, b1 = random_csr(n1, 5, 1), random_csr(n1, 5, 2)
    a2, b2 = random_csr(n2, 10, 3), random_csr(n2, 10, 4)
    abt = ep.compile(ep.sum(j, A[i, j] * B[k, j]), output="csr")
    apbt = ep.compile(A[i, j] + B[j, i], output="csr")
    trace = ep.compile(ep.sum((i, j), A[i, j] * B[j, i]))
    x = ep.tensor("x", 1)
    spmv = ep.compile(ep.sum(j, A[i, j] * x[j]))
    n3 = 500_000 // scale
    m3, v3 = random_csr(n3, 10, 5), np.random.default_rng(6).random(n3)
    X, U, V = ep.tensor("X", 2, "csr"), ep.tensor("U", 2), ep.tensor("V", 2)
    als_e = ep.sum(k, (ep.sum(r, U[i, r] * V[k, r]) - X[i, k]) * V[k, c])
    als = ep.compile(als_e)
    als_plain = ep.compile(als_e, optimize=False)
    n4 = 4000 // scale
    x4, rng = random_csr(n4, 40, 7), np.random.default_rng(8)
    u4, w4 = rng.random((n4, 8)), rng.random((n4, 8))
    pattern = lambda a, b: (np.array_equal(a.indptr, b.indptr)
                            and np.array_equal(a.indices, b.indices))
    close = lambda a, b: np.allclose(np.asarray(a), np.asarray(b))
    return [
        ("A·Bᵀ csr→csr", lambda: abt(A=a1, B=b1), lambda: _sorted(a1 @ b1.T), 1.5, pattern),
        ("A + Bᵀ csr→csr", lambda: apbt(A=a2, B=b2), lambda: (a2 + b2.T).tocsr(), 1.5,
         lambda a, b: abs(a - b).max() < 1e-12),
        ("trace(A·B)", lambda: trace(A=a1, B=b1), lambda: a1.multiply(b1.T).sum(), 1.5, close),
        ("SpMV scipy input", lambda: spmv(A=m3, x=v3), lambda: m3 @ v3, 1.0, close),
        ("ALS update", lambda: als(X=x4, U=u4, V=w4),
         lambda: u4 @ (w4.T @ w4) - x4 @ w4, 1.5, close),
        ("  optimize=False / default", lambda: als_plain(X=x4, U=u4, V=w4),
         lambda: als(X=x4, U=u4, V=w4), None, close),
    ]


def measure(ours, peer, rounds: int, same) -> tuple[float, float, bool]:
    """Medians (seconds) of `rounds` alternating calls of each, after a warm-up,
    and whether the answers agree."""
    ok = bool(same(ours(), peer()))
    t_ours, t_peer = alternating_medians([ours, peer], rounds)
    return t_ours, t_peer, ok


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench.plans", description=__doc__)
    ap.add_argument("--rounds", type=int, default=15)
    ap.add_argument("--quick", action="store_true", help="sizes divided by 10")
    args = ap.parse_args(argv)
    missed = 0
    print(f"{'case':<28} {'etchpy':>10} {'peer':>10} {'ratio':>6}  target  same")
    for name, ours, peer, target, same in cases(10 if args.quick else 1):
        t_ours, t_peer, ok = measure(ours, peer, 3 if name.startswith(" ") else args.rounds,
                                     same)
        ratio = t_ours / t_peer
        verdict = "" if target is None else (
            f"≤ {target} {'ok' if ratio <= target else 'MISSED'}")
        missed += (target is not None and ratio > target) or not ok
        print(f"{name:<28} {fmt_time(t_ours):>10} {fmt_time(t_peer):>10} "
              f"{fmt_ratio(ratio):>6}  {verdict}  {'yes' if ok else 'NO'}")
    return 1 if missed else 0


if __name__ == "__main__":
    raise SystemExit(main())
