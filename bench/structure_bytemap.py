"""Bytemap levels against the existing formats and workspaces (issue 40), one
thread, alternating call by call in one process, medians:

    python -m bench structure_bytemap [--rounds N] [--n N]

Workloads (n = 1e6 by default; vectors hold 1% of n, random, values in (0, 1]):

quad     Σ_ij x[i]·A[i,j]·x[j]: A csr, n × n with 8 entries per row at random
         columns, x in one format for both of its roles: walked over i (only
         its stored entries) and probed over j (8 probes per stored entry); x
         as bytemap, as csf (compressed: the planner's merge, gallop or
         marker) and as a dense numpy vector; scipy's x @ (A @ x) beside
probe    y[i] = Σ_j A[i,j]·x[j]: A csr, n/10 × n with 8 entries per row (x
         only probed, 8e5 probes into 1e4 entries); the same three formats
triple   Σ_j x[j]·y[j]·z[j], all three in one format: bytemap (walk one list,
         probe two), csf (leapfrog) and dense (walk n)
scatter  y[j] = Σ_i A[i,j]·x[i] (Aᵀx, a random-order sparse accumulation): A csr
         n/10 × n with 8 entries per row, x 10% of n/10; the output written as
         bytemap (by insertion), as csf (the row workspace, flushed sorted) and
         dense

Each line prints the medians and the ratio of the bytemap's time to the best
other etchpy format's (target ≤ 1/1.3 = 0.77: the bytemap 1.3× faster); the
exit status counts only the workloads where the bytemap should win (quad,
triple). Inputs are
packed once, outside the timing. The machine may be shared: these are medians
of alternating calls, not quiet numbers.
"""
from __future__ import annotations

from bench import _env  # noqa: F401  (environment first)

import argparse

import numpy as np
import scipy.sparse as sp

import etchpy as ep
from bench.timing import alternating_medians, fmt_ratio, fmt_time

TARGET = 1 / 1.3
i, j = ep.indices("i j")


def _vector(n, share, rng):
    x = np.zeros(n)
    x[rng.choice(n, max(1, int(n * share)), replace=False)] = rng.random(int(n * share)) + 0.01
    return x


def _matrix(rows, cols, per_row, rng):
    crd = np.sort(rng.integers(0, cols, (rows, per_row)), axis=1).ravel()
    return sp.csr_array((rng.random(rows * per_row) + 0.01, crd,
                         np.arange(0, rows * per_row + 1, per_row)), shape=(rows, cols))


def _formats(v):
    """The vector v in each format compared: name -> what the kernel takes."""
    return {"bytemap": ep.Tensor.from_dense(v, "bytemap"), "csf": ep.Tensor.from_dense(v, "csf"),
            "dense": v}


def probe(n, rounds, rng):
    A = _matrix(n // 10, n, 8, rng)
    A.sum_duplicates()
    x = _vector(n, 0.01, rng)
    Av = ep.tensor("A", 2, "csr")
    calls = {}
    for name, value in _formats(x).items():
        X = ep.tensor("x", 1, "dense" if name == "dense" else name)
        kern = ep.compile(ep.sum(j, Av[i, j] * X[j]))
        calls[name] = (lambda k=kern, v=value: k(A=A, x=v))
    return f"probe   A {A.shape[0]}×{n} nnz {A.nnz}, x nnz {np.count_nonzero(x)}", calls


def quad(n, rounds, rng):
    A = _matrix(n, n, 8, rng)
    A.sum_duplicates()
    x = _vector(n, 0.01, rng)
    Av = ep.tensor("A", 2, "csr")
    calls = {}
    for name, value in _formats(x).items():
        X = ep.tensor("x", 1, "dense" if name == "dense" else name)
        kern = ep.compile(ep.sum((i, j), X[i] * Av[i, j] * X[j]))
        calls[name] = (lambda k=kern, v=value: k(A=A, x=v))
    calls["scipy"] = lambda: x @ (A @ x)
    return f"quad    A {n}×{n} nnz {A.nnz}, x nnz {np.count_nonzero(x)}", calls


def triple(n, rounds, rng):
    vs = [_vector(n, 0.01, rng) for _ in range(3)]
    calls = {}
    for name in ("bytemap", "csf", "dense"):
        X, Y, Z = (ep.tensor(t, 1, name) for t in "xyz")
        kern = ep.compile(ep.sum(j, X[j] * Y[j] * Z[j]))
        args = [(v if name == "dense" else ep.Tensor.from_dense(v, name)) for v in vs]
        calls[name] = (lambda k=kern, a=args: k(x=a[0], y=a[1], z=a[2]))
    return f"triple  3 vectors of n {n}, nnz {np.count_nonzero(vs[0])} each", calls


def scatter(n, rounds, rng):
    A = _matrix(n // 10, n, 8, rng)
    A.sum_duplicates()
    x = _vector(n // 10, 0.1, rng)
    xt = ep.Tensor.from_dense(x, "csf")
    Av, X = ep.tensor("A", 2, "csr"), ep.tensor("x", 1, "csf")
    e = ep.sum(i, Av[i, j] * X[i])
    calls = {}
    for name in ("bytemap", "csf", "dense"):
        kern = ep.compile(e, output=name)
        calls[name] = (lambda k=kern: k(A=A, x=xt))
    return f"scatter Aᵀx, A {A.shape[0]}×{n} nnz {A.nnz}, x nnz {np.count_nonzero(x)}", calls


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench structure_bytemap", description=__doc__)
    ap.add_argument("--rounds", type=int, default=21)
    ap.add_argument("--n", type=int, default=1_000_000)
    args = ap.parse_args(argv)
    rng = np.random.default_rng(0)
    missed = 0
    print(f"bytemap against the other formats (one thread; medians of {args.rounds} "
          f"alternating rounds; bytemap / best other, target ≤ {TARGET:.2f}):")
    for case in (quad, probe, triple, scatter):
        label, calls = case(args.n, args.rounds, rng)
        names = list(calls)
        meds = dict(zip(names, alternating_medians([calls[k] for k in names], args.rounds)))
        best = min((k for k in names if k not in ("bytemap", "scipy")), key=meds.get)
        ratio = meds["bytemap"] / meds[best]
        missed += ratio > TARGET and case in (quad, triple)
        times = "  ".join(f"{k} {fmt_time(t)}" for k, t in meds.items())
        print(f"  {label}\n      {times}  bytemap/{best} {fmt_ratio(ratio)}")
    return 1 if missed else 0


if __name__ == "__main__":
    raise SystemExit(main())
