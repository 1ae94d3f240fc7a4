"""Kept workspaces: a sparse output over a large dimension, few entries touched.

    python -m bench.workspace [--rounds N]

y[k] = Σ_j x[j]·B[j, k] with x a sparse vector (100 of 1000 rows) and B a
1000 × n csr matrix with 8 entries per row, output compressed over k: the loop
order (j, k) writes k out of order, through a dense workspace over n. Each n
is timed with Tuning.kept_workspaces on and off (alternating call by call,
medians), one thread: with it on, the workspace's arrays are kept zero between
calls and a call costs O(touched); off, each call maps and faults in O(n) of
zeroed workspace.
"""
from __future__ import annotations

from bench import _env  # noqa: F401  (environment first)

import argparse
import time

import numpy as np
import scipy.sparse as sp

import etchpy as ep


def case(n: int, rows: int = 1000, per_row: int = 8):
    rng = np.random.default_rng(n)
    B = sp.csr_array((np.ones(rows * per_row), (np.repeat(np.arange(rows), per_row),
                                                rng.integers(0, n, rows * per_row))),
                     shape=(rows, n))
    x = ep.Tensor.from_coords([np.arange(0, rows, 10)], np.ones(rows // 10), (rows,), "csf")
    j, k = ep.indices("j k")
    expr = ep.sum(j, ep.tensor("x", 1, "csf")[j] * ep.tensor("B", 2, "csr")[j, k])
    return expr, {"x": x, "B": B}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench.workspace", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rounds", type=int, default=200)
    args = ap.parse_args(argv)
    print(f"{'n':>9} {'touched':>8} {'kept us':>9} {'fresh us':>9} {'fresh/kept':>11}")
    for n in (1 << 17, 1 << 20, 1 << 22):
        expr, inputs = case(n)
        kern = {kept: ep.compile(expr, output=ep.Format(["compressed"]), order=["j", "k"],
                                 tuning={"kept_workspaces": kept}) for kept in (True, False)}
        nnz = kern[True](**inputs).nnz
        assert kern[False](**inputs).nnz == nnz
        times = {kept: [] for kept in kern}
        for _ in range(args.rounds):
            for kept, f in kern.items():
                t = time.perf_counter()
                f(**inputs)
                times[kept].append(time.perf_counter() - t)
        us = {kept: 1e6 * float(np.median(v)) for kept, v in times.items()}
        print(f"{n:>9} {nnz:>8} {us[True]:>9.1f} {us[False]:>9.1f} "
              f"{us[False] / us[True]:>10.1f}x")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
