"""Chains, trees and Tucker contractions written nested and flat (issue: never
worse than written).

    python -m bench plans [--rounds N] [--quick]

Each case is one contraction written three ways and run four ways, in one
process, one thread, call by call in turn after a warm-up call that plans each
kernel for its inputs: etchpy on the nested form as a user writes it ("do this
first"), etchpy on the flat form (one Σ over every contracted index), the
nested form run step by step (each step its own etchpy kernel), and the best
numpy/scipy sequence of calls. Reported: medians and the ratios nested/flat
(target ≤ 1.2), nested/steps (≤ 1.2) and nested/peer (≤ 1.5), and whether all
answers agree. `--quick` shrinks the sizes.
"""
from __future__ import annotations

from bench import _env  # noqa: F401  (environment first)

import argparse

import numpy as np

import etchpy as ep
from bench.plans import random_csr
from bench.timing import alternating_medians, fmt_ratio, fmt_time

S = ep.sum


def _chain3(n):
    i, j, k, l = ep.indices("i j k l")
    P, Q, R, x = ep.tensor("P", 2), ep.tensor("Q", 2), ep.tensor("R", 2), ep.tensor("x", 1)
    rng = np.random.default_rng(0)
    ins = {"P": rng.random((n, n)), "Q": rng.random((n, n)), "R": rng.random((n, n)),
           "x": rng.random(n)}
    nested = S(j, P[i, j] * S(k, Q[j, k] * S(l, R[k, l] * x[l])))
    flat = S((j, k, l), P[i, j] * Q[j, k] * R[k, l] * x[l])
    mv = ep.compile(S(j, P[i, j] * x[j]))
    steps = lambda d: mv(P=d["P"], x=mv(P=d["Q"], x=mv(P=d["R"], x=d["x"])))
    peer = lambda d: d["P"] @ (d["Q"] @ (d["R"] @ d["x"]))
    return f"P(Q(Rx)) dense {n}²", nested, flat, ins, steps, peer


def _chain2(n, sparse):
    i, j, k = ep.indices("i j k")
    fmt = "csr" if sparse else "dense"
    A, B, x = ep.tensor("A", 2, fmt), ep.tensor("B", 2, fmt), ep.tensor("x", 1)
    rng = np.random.default_rng(1)
    if sparse:
        ins = {"A": random_csr(n, 10, 2), "B": random_csr(n, 10, 3), "x": rng.random(n)}
    else:
        ins = {"A": rng.random((n, n)), "B": rng.random((n, n)), "x": rng.random(n)}
    nested = S(j, A[i, j] * S(k, B[j, k] * x[k]))
    flat = S((j, k), A[i, j] * B[j, k] * x[k])
    mv = ep.compile(S(j, A[i, j] * x[j]))
    steps = lambda d: mv(A=d["A"], x=mv(A=d["B"], x=d["x"]))
    peer = lambda d: d["A"] @ (d["B"] @ d["x"])
    return f"A(Bx) {fmt} {n}²", nested, flat, ins, steps, peer


def _tree(n):
    """(A·x) ⊙ (B·y): two matrix-vector products multiplied entry by entry."""
    i, j, k = ep.indices("i j k")
    A, B = ep.tensor("A", 2, "csr"), ep.tensor("B", 2, "csr")
    x, y = ep.tensor("x", 1), ep.tensor("y", 1)
    rng = np.random.default_rng(4)
    ins = {"A": random_csr(n, 10, 5), "B": random_csr(n, 10, 6), "x": rng.random(n),
           "y": rng.random(n)}
    nested = S(j, A[i, j] * x[j]) * S(k, B[i, k] * y[k])
    flat = S((j, k), A[i, j] * x[j] * B[i, k] * y[k])
    mv = ep.compile(S(j, A[i, j] * x[j]))
    steps = lambda d: mv(A=d["A"], x=d["x"]) * mv(A=d["B"], x=d["y"])
    peer = lambda d: (d["A"] @ d["x"]) * (d["B"] @ d["y"])
    return f"(Ax)⊙(By) csr {n}²", nested, flat, ins, steps, peer


def _matrix_chain(n):
    i, j, k, l = ep.indices("i j k l")
    A, B, C = ep.tensor("A", 2), ep.tensor("B", 2), ep.tensor("C", 2)
    rng = np.random.default_rng(7)
    ins = {"A": rng.random((n, n // 8)), "B": rng.random((n // 8, n)), "C": rng.random((n, 4))}
    nested = S(j, A[i, j] * S(k, B[j, k] * C[k, l]))
    flat = S((j, k), A[i, j] * B[j, k] * C[k, l])
    mm = ep.compile(S(j, A[i, j] * B[j, k]))
    steps = lambda d: mm(A=d["A"], B=mm(A=d["B"], B=d["C"]))
    peer = lambda d: d["A"] @ (d["B"] @ d["C"])
    return f"A(BC) dense {n}×{n // 8}×{n}×4", nested, flat, ins, steps, peer


def _tucker(n, r, nnz, first="k"):
    """Σ_{i,j,k} X[i,j,k]·U[i,a]·V[j,b]·W[k,c], X sparse (csf); nested: the index
    `first` summed innermost, then the others in storage order."""
    i, j, k, a, b, c = ep.indices("i j k a b c")
    X = ep.tensor("X", 3, "csf")
    U, V, W = ep.tensor("U", 2), ep.tensor("V", 2), ep.tensor("W", 2)
    rng = np.random.default_rng(8)
    coords = np.unique(rng.integers(0, n, size=(nnz, 3)), axis=0)
    Xt = ep.Tensor.from_coords(coords.T, rng.random(len(coords)), (n, n, n), "csf")
    ins = {"X": Xt, "U": rng.random((n, r)), "V": rng.random((n, r)), "W": rng.random((n, r))}
    factor = {"i": (i, a, U, "U"), "j": (j, b, V, "V"), "k": (k, c, W, "W")}
    sums = [first] + [v for v in "ijk" if v != first][::-1]      # innermost first
    x, rk, F, name = factor[sums[0]]
    nested = S(x, X[i, j, k] * F[x, rk])
    free = [factor[v][0] for v in "ijk" if v != sums[0]] + [rk]
    kernels = [(ep.compile(nested, out_indices=tuple(free)), name, "X")]
    T = ep.tensor("T", 3)
    for v in sums[1:]:
        x, rk, F, name = factor[v]
        nested = S(x, F[x, rk] * nested)
        step = S(x, F[x, rk] * T[tuple(free)])
        free = [f for f in free if f is not x] + [rk]
        kernels.append((ep.compile(step, out_indices=tuple(free)), name, "T"))
    order = tuple(free)

    def steps(d):
        got = d["X"]
        for kern, name, arg in kernels:
            got = kern(**{name: d[name], arg: got})
        return got
    flat = S((i, j, k), X[i, j, k] * U[i, a] * V[j, b] * W[k, c])
    Xd = Xt.to_dense()
    spec = "ijk,ia,jb,kc->" + "".join(v.name for v in order)
    peer = lambda d: np.einsum(spec, Xd, d["U"], d["V"], d["W"], optimize=True)
    return (f"Tucker csf {n}³ r={r} {first}-first", nested, flat, ins, steps, peer, order)


def cases(quick: bool):
    q = 4 if quick else 1
    return [_chain3(200 // q), _chain2(1500 // q, False), _chain2(20000 // q, True),
            _tree(20000 // q), _matrix_chain(800 // q),
            *(_tucker(120 // q, 16, 200_000 // q ** 3, first) for first in "kji")]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench plans", description=__doc__)
    ap.add_argument("--rounds", type=int, default=11)
    ap.add_argument("--quick", action="store_true", help="smaller sizes")
    args = ap.parse_args(argv)
    missed = 0
    print(f"{'case':<30} {'nested':>9} {'flat':>9} {'steps':>9} {'peer':>9}  "
          f"{'n/flat':>6} {'n/steps':>7} {'n/peer':>6}  same")
    for case in cases(args.quick):
        name, nested, flat, ins, steps, peer, *out = case
        out_ix = out[0] if out else None
        kn, kf = ep.compile(nested, out_indices=out_ix), ep.compile(flat, out_indices=out_ix)
        calls = [lambda: kn(**ins), lambda: kf(**ins), lambda: steps(ins), lambda: peer(ins)]
        answers = [np.asarray(f()) for f in calls]
        same = all(np.allclose(a, answers[-1]) for a in answers)
        med = alternating_medians(calls, args.rounds)
        ratios = [med[0] / med[1], med[0] / med[2], med[0] / med[3]]
        missed += (ratios[0] > 1.2) + (ratios[1] > 1.2) + (ratios[2] > 1.5) + (not same)
        print(f"{name:<30} " + " ".join(f"{fmt_time(m):>9}" for m in med) + "  "
              + f"{fmt_ratio(ratios[0]):>6} {fmt_ratio(ratios[1]):>7} "
                f"{fmt_ratio(ratios[2]):>6}  {'yes' if same else 'NO'}")
    return 1 if missed else 0


if __name__ == "__main__":
    raise SystemExit(main())
