"""Dense products through BLAS against numpy, one thread, same process.

    python -m bench.blas [--rounds N] [--no-blas]

Each case alternates etchpy's call with its peer's, call by call, and reports
the ratio of medians (etchpy / peer), against its target where it has one
(issue 20: dense matmul 600² and MTTKRP 100³ r=32 at most 1.2×). The `ep.einsum`
rows include the front end's per-call cost (one lookup of the prepared call);
an einsum that is one matrix product runs numpy's matmul (runtime.einsum_calls),
so the `kernel` rows, compiled kernels that call BLAS from their C, are the ones
that measure etchpy's GEMM steps. BLAS thread counts are
pinned to one by bench._env before numpy loads, for both sides. `--no-blas`
compiles etchpy's side with `Tuning(blas=False)`: the fused loops of before.
"""
from __future__ import annotations

from bench import _env  # noqa: F401  (environment first)

import argparse

import numpy as np

import etchpy as ep
from bench.timing import fmt_ratio, fmt_time, timed


def cases(rng, tuning=None):
    """(name, etchpy call, peer call, target ratio or None) of each case."""
    a, b = rng.random((600, 600)), rng.random((600, 600))
    x, u, v = rng.random((100, 100, 100)), rng.random((100, 32)), rng.random((100, 32))
    a32, b32 = a.astype(np.float32), b.astype(np.float32)
    p, q = rng.random((16, 64, 96)), rng.random((16, 96, 80))
    m, w = rng.random((2000, 2000)), rng.random(2000)
    i, j, k, t = ep.indices("i j k t")
    P, Q, A, y = ep.tensor("P", 3), ep.tensor("Q", 3), ep.tensor("A", 2), ep.tensor("x", 1)
    batched = ep.compile(ep.sum(j, P[t, i, j] * Q[t, j, k]), tuning=tuning)
    gemv = ep.compile(ep.sum(j, A[i, j] * y[j]), tuning=tuning)
    B = ep.tensor("B", 2)
    gemm = ep.compile(ep.sum(j, A[i, j] * B[j, k]), tuning=tuning)
    es = lambda spec, *ops: (lambda: ep.einsum(spec, *ops, tuning=tuning))
    return [
        ("matmul 600² float64", es("ij,jk->ik", a, b), lambda: a @ b, 1.2),
        ("  kernel", lambda: gemm(A=a, B=b), lambda: a @ b, 1.2),
        ("matmul 600² float32", es("ij,jk->ik", a32, b32), lambda: a32 @ b32, 1.2),
        ("A·Bᵀ 600²", es("ij,kj->ik", a, b), lambda: a @ b.T, None),
        ("batched 16×64×96×80", es("bij,bjk->bik", p, q), lambda: p @ q, None),
        ("  kernel", lambda: batched(P=p, Q=q), lambda: p @ q, None),
        ("gemv 2000²", es("ij,j->i", m, w), lambda: m @ w, None),
        ("  kernel", lambda: gemv(A=m, x=w), lambda: m @ w, None),
        ("MTTKRP 100³ r=32", es("ijk,jr,kr->ir", x, u, v),
         lambda: np.einsum("ijk,jr,kr->ir", x, u, v, optimize=True), 1.2),
    ]


def measure(ours, peer, rounds: int) -> tuple[float, float]:
    """Medians (seconds) of `rounds` alternating calls of each, after a warm-up."""
    want, got = peer(), ours()
    np.testing.assert_allclose(got, want, rtol=1e-4)
    t_ours, t_peer = [], []
    for _ in range(rounds):
        t_ours.append(timed(ours)[0])
        t_peer.append(timed(peer)[0])
    return float(np.median(t_ours)), float(np.median(t_peer))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench.blas", description=__doc__)
    ap.add_argument("--rounds", type=int, default=30)
    ap.add_argument("--no-blas", action="store_true", help="etchpy with Tuning(blas=False)")
    args = ap.parse_args(argv)
    tuning = ep.Tuning(blas=False) if args.no_blas else None
    missed = 0
    print(f"{'case':<24} {'etchpy':>10} {'peer':>10} {'ratio':>6}  target")
    for name, ours, peer, target in cases(np.random.default_rng(0), tuning):
        t_ours, t_peer = measure(ours, peer, args.rounds)
        ratio = t_ours / t_peer
        verdict = "" if target is None else (
            f"≤ {target} {'ok' if ratio <= target else 'MISSED'}")
        missed += target is not None and ratio > target
        print(f"{name:<24} {fmt_time(t_ours):>10} {fmt_time(t_peer):>10} "
              f"{fmt_ratio(ratio):>6}  {verdict}")
    return 1 if missed else 0


if __name__ == "__main__":
    raise SystemExit(main())
