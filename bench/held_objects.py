"""What a process pays for the kernels it keeps: objects held and a full collection (session 67).

    python -m bench.held_objects [--kernels N]

Compiles N distinct kernels (SpMV, row sums, SpGEMM into csr, a dense product,
each scaled by its own literal so that none is another's) in a fresh kernel cache
(a temporary ETCHPY_CACHE_DIR: each is compiled here, not restored), calls each
once on small scipy/numpy inputs, and reports the garbage collector's tracked
objects held per kernel (gc.get_objects() before and after, all of them kept in
the process's kernel store) and the median time of a full collection
(gc.collect(), 5 runs) with them held, against the same with none compiled.
Objects a first compile imports (templates, lazily loaded modules) are counted
before: one kernel of each kind is compiled first and not counted.
"""
from __future__ import annotations

from bench import _env  # noqa: F401  (environment first)

import argparse
import gc
import os
import statistics
import tempfile
import time

import numpy as np
import scipy.sparse as sp


def _collect_ms(runs: int = 5) -> float:
    times = []
    for _ in range(runs):
        t = time.perf_counter()
        gc.collect()
        times.append((time.perf_counter() - t) * 1e3)
    return statistics.median(times)


def _kinds(ep):
    i, j, k = ep.indices("i j k")
    A, B = ep.tensor("A", 2, format="csr"), ep.tensor("B", 2, format="csr")
    x, D, E = ep.tensor("x", 1), ep.tensor("D", 2), ep.tensor("E", 2)
    M = sp.random_array((200, 200), density=0.05, format="csr", random_state=0)
    d = np.random.default_rng(0).random((30, 30))
    return [(lambda c: ep.sum(j, A[i, j] * x[j]) * c, {}, dict(A=M, x=np.ones(200))),
            (lambda c: ep.sum(j, A[i, j]) * c, {}, dict(A=M)),
            (lambda c: ep.sum(j, A[i, j] * B[j, k]) * c, {"output": "csr"}, dict(A=M, B=M)),
            (lambda c: ep.sum(j, D[i, j] * E[j, k]) * c, {}, dict(D=d, E=d))]


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kernels", type=int, default=400)
    args = parser.parse_args(argv)
    os.environ["ETCHPY_CACHE_DIR"] = tempfile.mkdtemp(prefix="etchpy-held-")
    import etchpy as ep
    kinds = _kinds(ep)
    for make, options, inputs in kinds:         # imports and first-use tables
        ep.compile(make(1.0), **options)(**inputs)
    gc.collect()
    before, empty_ms = len(gc.get_objects()), _collect_ms()
    t = time.perf_counter()
    for n in range(args.kernels):
        make, options, inputs = kinds[n % len(kinds)]
        ep.compile(make(2.0 + n), **options)(**inputs)
    made = time.perf_counter() - t
    gc.collect()
    held = len(gc.get_objects()) - before
    print(f"{args.kernels} kernels compiled and called in {made:.1f} s; "
          f"{held / args.kernels:.0f} objects held per kernel ({held} in all)")
    print(f"a full collection: {_collect_ms():.1f} ms with them held, "
          f"{empty_ms:.1f} ms before ({before} objects)")


if __name__ == "__main__":
    main()
