"""Lazy programs of one or two steps on a scipy matrix, called as a solver loop calls
them, against scipy (session 83).

    python -m bench.lazy_calls [--sizes 1e3 1e5] [--seconds S]

A matrix-vector product alone gives a lazy program nothing to fuse: its call costs
what the kernel costs plus what building, looking up and replaying the program
costs, where scipy's `A @ x` costs its loop and its dispatch. Each case is called
with the same scipy csr matrix (bench.user_forms' scikit-fem P1 Laplacian, about
1e3 or 1e5 stored entries; B, its numbering reversed, beside it in A@(B@x)) and a new
vector each call, by `ep.lazy.function` (the
program traced once) and by `ep.compute` over nodes built each call, alternated
call by call with scipy in one process (bench.timing.alternate_clocks, thread CPU
medians). A ratio is etchpy / scipy. Each case is checked against scipy once.
"""
from __future__ import annotations

from bench import _env  # noqa: F401  (environment first)

import argparse
import itertools

import numpy as np

import etchpy as ep

from bench.timing import alternate_clocks
from bench.user_forms import Data


def cases(A, B, y):
    """(name, etchpy's call, scipy's call), each taking the vector to use."""
    f1 = ep.lazy.function(lambda A, x: A @ x)
    f2 = ep.lazy.function(lambda A, x, y: A @ x + 2 * y)
    f3 = ep.lazy.function(lambda A, x: A.T @ (A @ x))
    f4 = ep.lazy.function(lambda A, B, x: A @ (B @ x))
    L = ep.lazy
    return [
        ("function A@x", lambda x: f1(A, x), lambda x: A @ x),
        ("function A@x + 2y", lambda x: f2(A, x, y), lambda x: A @ x + 2 * y),
        ("function Aᵀ(A@x)", lambda x: f3(A, x), lambda x: A.T @ (A @ x)),
        ("compute(lazy(A) @ x)", lambda x: ep.compute(L(A) @ x), lambda x: A @ x),
        ("compute(lazy(A) @ x + 2y)", lambda x: ep.compute(L(A) @ x + 2 * L(y)),
         lambda x: A @ x + 2 * y),
        ("compute(Aᵀ(A@x))", lambda x: ep.compute(L(A).T @ (L(A) @ x)),
         lambda x: A.T @ (A @ x)),
        ("function A@(B@x)", lambda x: f4(A, B, x), lambda x: A @ (B @ x)),
        ("compute(lazy(A) @ (lazy(B) @ x))", lambda x: ep.compute(L(A) @ (L(B) @ x)),
         lambda x: A @ (B @ x)),
    ]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", nargs="+", default=["1e3", "1e5"])
    ap.add_argument("--seconds", type=float, default=1.0)
    args = ap.parse_args(argv)
    for size in args.sizes:
        d = Data(size)
        A, y = d.A, d.xs[-1]
        print(f"size {size}: A {A.shape[0]}² nnz {A.nnz}")
        for name, ours, peer in cases(A, d.B, y):
            np.testing.assert_allclose(ours(d.xs[0]), peer(d.xs[0]), rtol=1e-10)
            mine, theirs = itertools.cycle(d.xs[:-1]), itertools.cycle(d.xs[:-1])
            (o, _), (p, _) = alternate_clocks([lambda: ours(next(mine)),
                                                lambda: peer(next(theirs))], args.seconds)
            print(f"  {name:33s} {o * 1e6:8.1f} µs  scipy {p * 1e6:8.1f} µs  {o / p:5.2f}×")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
