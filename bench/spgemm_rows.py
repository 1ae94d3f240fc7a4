"""SpGEMM's ordered row write under several tunings, against scipy's `A @ B` (session 65).

    python -m bench.spgemm_rows [--seconds S] [--only WORD[,WORD]] [TUNING ...]

The product C[i,j] = Σ_k A[i,k]·B[k,j] into csr (the workspace target: each output
row accumulated in a dense row, its touched columns then written in order: walked
through their marks, or ranked into their places, or sorted) on scipy csr inputs,
every TUNING's kernel and scipy's `A @ B` (whose rows come out unsorted) alternated
one call at a time in one process (bench.timing.alternate_clocks, medians of thread
CPU time). Each TUNING is `field=value[,field=value]` of ep.Tuning (e.g.
`marks_walk_min=17`); the default Tuning is always the first. A ratio is etchpy /
scipy. Each product is checked against scipy's once before it is timed.

The products: row lengths out from 13 to 130 touched columns, clustered (a mesh's
A·A, a 3-D stencil's) or spread (a mesh times its reversed or permuted self, random
rows, k-NN graphs of scikit-learn's digits); needs scikit-fem and scikit-learn (the
bench extra).
"""
from __future__ import annotations

from bench import _env  # noqa: F401  (environment first)

import argparse

import numpy as np
import scipy.sparse as sp

import etchpy as ep

from bench.audit39 import fem
from bench.calls import stencil3_csr
from bench.calls_kernels import fem_p1, knn_digits
from bench.checks_ab import tuning_of
from bench.timing import alternate_clocks


def _sorted(A):
    B = sp.csr_array(A)
    B.sort_indices()
    return B


def products():
    """{name: (A, B)}, built on demand by name."""
    rng = np.random.default_rng(1)

    def perm(A):
        p = rng.permutation(A.shape[0])
        return _sorted(A[p][:, p])

    def rev(A):
        r = np.arange(A.shape[0])[::-1]
        return _sorted(A[r][:, r])

    def rnd(m, per):
        rows, cols = np.repeat(np.arange(m), per), rng.integers(0, m, m * per)
        B = sp.csr_array((rng.random(m * per), (rows, cols)), shape=(m, m))
        B.sum_duplicates()
        return B

    P1, P3, T1 = fem_p1(7), stencil3_csr(25), fem("tetP1", 3)
    yield "P1 2-D A·A", (P1, P1)
    yield "P1 2-D A·rev(A)", (P1, rev(P1))
    yield "P1 2-D permuted A·A", (perm(P1),) * 2
    yield "3-D 7-point A·A", (P3, P3)
    yield "tetP1 A·A", (T1, T1)
    yield "tetP1 A·rev(A)", (T1, rev(T1))
    yield "tetP2 A·A", (fem("tetP2", 2),) * 2
    yield "triP2 A·A", (fem("triP2", 5),) * 2
    yield "elast2 A·A", (fem("elast2", 5),) * 2
    for m, per in [(2000, 5), (2000, 6), (5000, 5), (20000, 5), (20000, 6), (20000, 7),
                   (20000, 8), (20000, 10), (100000, 4), (100000, 5), (100000, 6)]:
        yield f"random {m} rows of {per}", (rnd(m, per),) * 2
    yield "k-NN digits, 8", (knn_digits(1797, 8),) * 2
    yield "k-NN digits, 10", (knn_digits(1797, 10),) * 2


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seconds", type=float, default=2.0)
    ap.add_argument("--only", default="", help="products whose name holds one of these words")
    ap.add_argument("tunings", nargs="*")
    args = ap.parse_args(argv)
    words = [w for w in args.only.split(",") if w]
    specs = {"default": ep.Tuning(), **{s: tuning_of(s) for s in args.tunings}}
    i, j, k = ep.indices("i j k")
    expr = ep.sum(k, ep.tensor("A", 2, format="csr")[i, k] * ep.tensor("B", 2, format="csr")[k, j])
    print("etchpy / scipy A @ B; columns:", ", ".join(specs))
    for name, (A, B) in products():
        if words and not any(w in name for w in words):
            continue
        kerns = [ep.compile(expr, output="csr", tuning=t) for t in specs.values()]
        C = A @ B
        for kern in kerns:
            if abs(sp.csr_array(kern(A=A, B=B)) - C).max() > 1e-9 * abs(C).max():
                raise SystemExit(f"{name}: the product differs from scipy's")
        times = alternate_clocks([lambda kern=kern: kern(A=A, B=B) for kern in kerns]
                                 + [lambda: A @ B], seconds=args.seconds)
        peer = times[-1][0]
        print(f"{name:26s} {C.nnz / C.shape[0]:6.1f} out a row  "
              + " ".join(f"{t[0] / peer:.3f}" for t in times[:-1])
              + f"  (scipy {peer * 1e3:.3f} ms)", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
