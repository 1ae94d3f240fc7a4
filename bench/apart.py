"""Value comparisons of columns stored apart: read through positions in the
kernel's loop against gathered per call (Tuning.aligned_in_kernel on and off).

    python -m bench.apart [--sizes 10000,100000,1000000,4000000] [--seconds S]

Two csr Tensors A and B built apart (random cells of a (nnz/50) × 1000 grid,
B sharing 10%, 50% or 90% of A's cells, the rest its own), and two kernels
over them: the count per row of the cells both store where A < B, and the
sum of A where A < 0.5·B. Each pair of kernels (the knob on, off) is called
alternately on the same Tensors (bench.timing.alternate_clocks: thread CPU
medians), answers compared; the ratio is in-kernel / gathered.
"""
from __future__ import annotations

import argparse

import numpy as np

import etchpy as ep

from .timing import alternate_clocks

i, j = ep.indices("i j")
X, Y = ep.tensor("A", 2, "csr"), ep.tensor("B", 2, "csr")
EXPRS = {"count A<B": ep.sum(j, X[i, j] < Y[i, j]),
         "sum A where A<0.5B": ep.sum(j, (X[i, j] < 0.5 * Y[i, j]) * X[i, j])}


def pair(nnz: int, share: float, seed: int):
    """(A, B): csr Tensors of about nnz cells each, B holding `share` of A's."""
    n, m = max(nnz // 50, 10), 1000
    r = np.random.default_rng(seed)
    ka = np.unique(r.choice(n * m, nnz, replace=False))
    keep = ka[r.random(len(ka)) < share]
    kb = np.unique(np.concatenate([keep, r.choice(n * m, nnz - len(keep), replace=False)]))
    return [ep.Tensor.from_coords([k // m, k % m], r.random(len(k)), (n, m), "csr")
            for k in (ka, kb)]


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(prog="python -m bench.apart")
    ap.add_argument("--sizes", default="10000,100000,1000000,4000000")
    ap.add_argument("--seconds", type=float, default=2.0)
    args = ap.parse_args(argv)
    print(f"{'entries':>9} {'share':>5} {'kernel':<20} {'in kernel':>11} {'gathered':>11} ratio")
    for nnz in (int(s) for s in args.sizes.split(",")):
        for share in (0.1, 0.5, 0.9):
            A, B = pair(nnz, share, nnz)
            for name, e in EXPRS.items():
                on = ep.compile(e)
                off = ep.compile(e, tuning={"aligned_in_kernel": False})
                assert np.allclose(on(A=A, B=B), off(A=A, B=B)), name
                (a, _), (b, _) = alternate_clocks([lambda: on(A=A, B=B),
                                                   lambda: off(A=A, B=B)], args.seconds)
                print(f"{nnz:>9} {share:>5} {name:<20} {a * 1e3:>8.3f} ms {b * 1e3:>8.3f} ms "
                      f"{a / b:.2f}", flush=True)


if __name__ == "__main__":
    main()
