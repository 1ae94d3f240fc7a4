"""Kernels holding a diagonal or an index comparison, called the user's way
(session 87): a scipy csr matrix, the next of 8 new vectors each call,
alternated call by call with scipy's form in one process, thread-CPU medians.

    python -m bench.implicit_calls [--rounds N] [--only TEXT]

`A[i,i]` (scipy `A.diagonal()`), `Σ_i A[i,i]·x[i]`, the trace `Σ_i A[i,i]`,
`Σ_j A[i,j]·[j<i]·x[j]` (Gauss-Seidel's strictly lower part against scipy's `L @ x`
with `L = tril(A, -1)` made once, before the timing) and `Σ_j A[i,j]·[j>i]·x[j]`
(against `triu(A, 1) @ x` made each call) and a range of a constant bound,
`Σ_j A[i,j]·[j<256]·x[j]` (against `A[:, :256] @ x[:256]`) and one of parameters,
`ep.between(j, "lo", "hi")` with lo=64, hi=256 (against `A[:, 64:256] @ x[64:256]`),
value predicates `Σ_j A[i,j]·[A[i,j]>t]·x[j]` and `Σ_j [A[i,j]>t]·x[j]` with t=0 (against
scipy's matrix of the same arrays and the masked values, `csr_array((A.data * (A.data > t),
A.indices, A.indptr)) @ x`, faster than `A.multiply(A > t) @ x`),
on scikit-fem's P1 Laplacian (1.4e3 and
8.3e4 entries), the 3-D 7-point Poisson stencil 25³ and a k-NN graph of
scikit-learn's digits (1e5). Their implicit tensors (δ, the comparisons) are bound
by the call plan from the call's shapes (runtime.shape_steps); a scipy input whose
kernel reads part of each row is checked by one compiled pass (runtime.checks).
Needs the bench extra.
"""
from __future__ import annotations

from bench import _env  # noqa: F401  (environment first)

import argparse
import time

import numpy as np
import scipy.sparse as sp

import etchpy as ep

i, j = ep.indices("i j")
A, x = ep.tensor("A", 2, format="csr"), ep.tensor("x", 1)
FORMS = {   # name: (expression, scipy's form of (A, L, x), the inputs it reads)
    "A[i,i]": (A[i, i], lambda M, L, v: M.diagonal(), "A"),
    "Σi A[i,i]·x[i]": (ep.sum(i, A[i, i] * x[i]), lambda M, L, v: M.diagonal() @ v, "Ax"),
    "Σi A[i,i]": (ep.sum(i, A[i, i]), lambda M, L, v: M.trace(), "A"),
    "Σj A[i,j]·[j<i]·x[j]": (ep.sum(j, A[i, j] * (j < i) * x[j]), lambda M, L, v: L @ v, "Ax"),
    "Σj A[i,j]·[j>i]·x[j]": (ep.sum(j, A[i, j] * (j > i) * x[j]),
                             lambda M, L, v: sp.triu(M, 1, format="csr") @ v, "Ax"),
    "Σj A[i,j]·[j<256]·x[j]": (ep.sum(j, A[i, j] * (j < 256) * x[j]),
                               lambda M, L, v: M[:, :256] @ v[:256], "Ax"),
    "Σj A[i,j]·[lo≤j<hi]·x[j]": (ep.sum(j, A[i, j] * ep.between(j, "lo", "hi") * x[j]),
                                 lambda M, L, v: M[:, 64:256] @ v[64:256], "Axp"),
    "Σj A[i,j]·[A[i,j]>t]·x[j]": (ep.sum(j, A[i, j] * (A[i, j] > "t") * x[j]),
                                  lambda M, L, v: _masked(M, M.data * (M.data > 0.0)) @ v, "Axt"),
    "Σj [A[i,j]>t]·x[j]": (ep.sum(j, (A[i, j] > "t") * x[j]),
                           lambda M, L, v: _masked(M, (M.data > 0.0).astype(float)) @ v, "Axt"),
}


def _masked(M, data):
    """scipy's fastest form of a thresholded matrix we know: its arrays, new values."""
    return sp.csr_array((data, M.indices, M.indptr), shape=M.shape)


def matrices():
    from bench.calls import stencil3_csr
    from bench.calls_kernels import fem_p1, knn_digits
    return {"P1 2-D 1.4e3": fem_p1(4), "P1 2-D 8.3e4": fem_p1(7),
            "3-D Poisson 1.1e5": stencil3_csr(25), "k-NN digits 1e5": knn_digits(1797, 56)}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=201)
    ap.add_argument("--only", default="", help="the forms whose name holds this text")
    args = ap.parse_args(argv)
    for label, M in matrices().items():
        M = sp.csr_array(M)
        L = sp.tril(M, -1, format="csr")
        rng = np.random.default_rng(0)
        pool = [rng.standard_normal(M.shape[1]) for _ in range(8)]
        for name, (e, peer, reads) in FORMS.items():
            if args.only not in name:
                continue
            kern = ep.compile(e)
            given = [{"A": M, "x": v} if "x" in reads else {"A": M} for v in pool]
            given = [{**g, "lo": 64, "hi": 256} if "p" in reads else g for g in given]
            given = [{**g, "t": 0.0} if "t" in reads else g for g in given]
            np.testing.assert_allclose(np.ravel(kern(**given[0])), np.ravel(peer(M, L, pool[0])),
                                       rtol=1e-9, atol=1e-9)
            times: dict = {"etchpy": [], "scipy": []}
            for r in range(args.rounds):
                g, v = given[r % 8], pool[r % 8]
                sides = [("etchpy", lambda: kern(**g)), ("scipy", lambda: peer(M, L, v))]
                for s, f in (sides if r % 2 else reversed(sides)):
                    t = time.thread_time()
                    f()
                    times[s].append(time.thread_time() - t)
            m = {s: np.median(t) * 1e6 for s, t in times.items()}
            print(f"{label:18s} {name:22s} etchpy {m['etchpy']:7.1f} µs  scipy "
                  f"{m['scipy']:7.1f} µs  ratio {m['etchpy'] / m['scipy']:.2f}", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
