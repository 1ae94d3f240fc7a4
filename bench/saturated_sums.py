"""Saturated sums (Tuning.saturated_sums): boolean row sums over dense rows, the pass
on against off, thread-CPU medians of calls alternated in one process:

    python -m bench.saturated_sums [--reps N] [--block B]

Row `any` of a 2000 x 4096 boolean matrix at three densities of true, and a pull
step (is some in-neighbour in the frontier?) of a dense adjacency over two
frontier sizes; each answer checked against numpy first."""
from __future__ import annotations

import argparse

import numpy as np

import etchpy as ep

from bench.timing import paired_medians


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--reps", type=int, default=31)
    ap.add_argument("--block", type=int, default=ep.Tuning().saturated_block)
    args = ap.parse_args(argv)
    i, j = ep.indices("i j")
    M, x = ep.tensor("M", 2), ep.tensor("x", 1)
    on, off = ep.Tuning(saturated_block=args.block), ep.Tuning(saturated_sums=False)
    rng = np.random.default_rng(0)
    cases = [("rows any, 1% true", 0.01, None), ("rows any, 0.01% true", 1e-4, None),
             ("rows any, all false", 0.0, None), ("pull, adj 5%, frontier 10%", 0.05, 0.1),
             ("pull, adj 5%, frontier 0.1%", 0.05, 0.001)]
    for name, dens, frontier in cases:
        m = rng.random((2000, 4096)) < dens
        e = ep.sum(j, M[i, j]) if frontier is None else ep.sum(j, M[i, j] * x[j])
        given = {"M": m} if frontier is None else {"M": m, "x": rng.random(4096) < frontier}
        want = (m if frontier is None else m & given["x"]).any(1)
        kon, koff = (ep.compile(e, semiring="boolean", tuning=t) for t in (on, off))
        assert np.array_equal(kon(**given), want) and np.array_equal(koff(**given), want)
        a, b = paired_medians(lambda: kon(**given), lambda: koff(**given), args.reps)
        print(f"{name:28s} on {a * 1e3:8.3f} ms  off {b * 1e3:8.3f} ms  off/on {b / a:6.2f}")


if __name__ == "__main__":
    main()
