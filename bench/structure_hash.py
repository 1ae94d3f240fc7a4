"""Hash levels against the existing formats and workspaces (issue 40), one thread,
alternating call by call in one process, medians:

    python -m bench structure_hash [--rounds N] [--n N]

Workloads (n = 1e7 by default: vectors and outputs far wider than what they store):

probe    y[i] = Σ_j A[i,j]·x[j]: A csr 1e5 × n with 8 entries per row at random
         columns (8e5 probes), x with 1e4 entries, only probed: x as hash (a
         table of 2^15 slots), bytemap (n cells and their presence map), csf
         (merged or galloped per row) and a dense numpy vector

scatter  y[j] = Σ_i A[i,j]·x[i] (Aᵀx, a random-order sparse accumulation): A csr
         1e4 × n with 16 entries per row at random columns, x 10% of 1e4; the
         output written as hash (by insertion into one table), as csf (the row
         workspace: a dense kept row up to Tuning.hash_workspace_dim = 2^22,
         above it the hash level's table), as bytemap (by insertion into n
         cells) and dense; run at n and at n / 4 (below 2^22: the dense row
         workspace)
picked   C[i,j] = Σ_k x[k]·A[k,i]·B[k,j] (rank-one updates picked by a sparse
         x): A csr 1e6 × 1000 with 4 entries per row, B csr 1e6 × n with 8 per
         row, x with 100 or 1000 entries (3,200 or 32,000 products, rows of C in
         random order); the output as hash (inserted in the loops' order k, i, j)
         and as csr, dcsr and coo (the planner does not convert A, 4e6 entries,
         for so few products: coordinate records sorted afterwards); scipy's
         (A.T @ diag(x)) @ B timed once beside (seconds, and its large
         temporaries would disturb the rounds)

The picked workloads run first: the scatter's bytemap and dense outputs allocate
every cell (1e7 and more), which disturbs what runs after them in one process.
Each line prints the medians and the ratio of the hash output's time to the best
other etchpy format's (target ≤ 1/1.3 = 0.77). Inputs are packed once, outside
the timing. The machine may be shared: these are medians of alternating calls,
not quiet numbers.
"""
from __future__ import annotations

from bench import _env  # noqa: F401  (environment first)

import argparse

import numpy as np
import scipy.sparse as sp

import etchpy as ep
from bench.timing import alternating_medians, fmt_ratio, fmt_time, timed

TARGET = 1 / 1.3
i, j, k = ep.indices("i j k")


def _matrix(rows, cols, per_row, rng):
    crd = np.sort(rng.integers(0, cols, (rows, per_row)), axis=1).ravel()
    m = sp.csr_array((rng.random(rows * per_row) + 0.01, crd,
                      np.arange(0, rows * per_row + 1, per_row)), shape=(rows, cols))
    m.sum_duplicates()
    return m


def scatter(n, rng):
    A = _matrix(10_000, n, 16, rng)
    x = np.zeros(10_000)
    x[rng.choice(10_000, 1000, replace=False)] = rng.random(1000) + 0.01
    xt = ep.Tensor.from_dense(x, "csf")
    Av, X = ep.tensor("A", 2, "csr"), ep.tensor("x", 1, "csf")
    e = ep.sum(i, Av[i, j] * X[i])
    calls = {}
    for name in ("hash", "csf", "bytemap", "dense"):
        kern = ep.compile(e, output=name)
        calls[name] = (lambda kk=kern: kk(A=A, x=xt))
    return f"scatter Aᵀx, A {A.shape[0]}×{n} nnz {A.nnz}, x nnz 1000", calls


def probe(n, rng):
    A = _matrix(100_000, n, 8, rng)
    x = np.zeros(n)
    x[rng.choice(n, 10_000, replace=False)] = rng.random(10_000) + 0.01
    Av = ep.tensor("A", 2, "csr")
    calls = {}
    for name in ("hash", "bytemap", "csf", "dense"):
        X = ep.tensor("x", 1, name)
        kern = ep.compile(ep.sum(j, Av[i, j] * X[j]))
        value = x if name == "dense" else ep.Tensor.from_dense(x, name)
        calls[name] = (lambda kk=kern, v=value: kk(A=A, x=v))
    return f"probe   y = A·x, A 100000×{n} nnz {A.nnz}, x nnz 10000 (only probed)", calls


def picked(n, rng, nx):
    K = 1_000_000
    A, B = _matrix(K, 1000, 4, rng), _matrix(K, n, 8, rng)
    x = np.zeros(K)
    x[rng.choice(K, nx, replace=False)] = rng.random(nx) + 0.01
    xt, xs = ep.Tensor.from_dense(x, "csf"), sp.diags_array(x, format="csr")
    Av, Bv, X = ep.tensor("A", 2, "csr"), ep.tensor("B", 2, "csr"), ep.tensor("x", 1, "csf")
    e = ep.sum(k, X[k] * Av[k, i] * Bv[k, j])
    calls = {}
    for name in ("hash", "csr", "dcsr", "coo"):
        kern = ep.compile(e, output=name)
        calls[name] = (lambda kk=kern: kk(A=A, B=B, x=xt))
    calls["scipy once"] = lambda: (A.T @ xs) @ B
    return (f"picked  Σ_k x[k]·A[k,i]·B[k,j], A {K}×1000 nnz {A.nnz}, B {K}×{n} nnz "
            f"{B.nnz}, x nnz {nx}"), calls


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench structure_hash", description=__doc__)
    ap.add_argument("--rounds", type=int, default=11)
    ap.add_argument("--n", type=int, default=10_000_000)
    args = ap.parse_args(argv)
    rng = np.random.default_rng(0)
    missed = 0
    print(f"hash against the other formats (one thread; medians of {args.rounds} "
          f"alternating rounds; hash / best other, target ≤ {TARGET:.2f}):")
    cases = ((probe, args.n), (lambda n, r: picked(n, r, 100), args.n),
             (lambda n, r: picked(n, r, 1000), args.n), (scatter, args.n), (scatter, args.n // 4))
    for case, n in cases:
        label, calls = case(n, rng)
        once = {c: timed(calls.pop(c))[0] for c in list(calls) if c.endswith("once")}
        names = list(calls)
        for call in calls.values():
            call()                                # compile and warm up, untimed
        meds = dict(zip(names, alternating_medians([calls[c] for c in names], args.rounds)))
        best = min((c for c in names if c != "hash"), key=meds.get)
        ratio = meds["hash"] / meds[best]
        missed += ratio > TARGET
        times = "  ".join(f"{c} {fmt_time(t)}" for c, t in {**meds, **once}.items())
        print(f"  {label}\n      {times}  hash/{best} {fmt_ratio(ratio)}")
    return 1 if missed else 0


if __name__ == "__main__":
    raise SystemExit(main())
