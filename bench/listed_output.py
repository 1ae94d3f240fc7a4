"""The listed output target (lower/targets/listed.py) against the records it
replaced: the same expression into coo, once as the table chooses it (listed:
written in order into coo's arrays) and once with the listed row left out while
the kernel is compiled (coords: records the runtime sorts and combines). Thread-CPU
medians of calls alternated in one process; each answer checked first:

    python -m bench.listed_output [--reps N]

A csr matrix copied into coo (the output path alone), the sum of two csr
matrices, and the inner-product SpGEMM A·Bᵀ (loops i, j, k) into coo."""
from __future__ import annotations

import argparse
import os
import tempfile

import numpy as np
import scipy.sparse as sp

os.environ.setdefault("ETCHPY_CACHE_DIR", tempfile.mkdtemp(prefix="etchpy-listed-"))
import etchpy as ep  # noqa: E402
from etchpy.lower.target import OUTPUTS  # noqa: E402
from bench.timing import paired_medians  # noqa: E402


def _records_kernel(expr, **kw):
    """`expr` compiled with the listed row out of the table (so coords writes it);
    a Tuning field no coo output reads tells the kernel cache it is another."""
    rank = next(r for r, row in OUTPUTS.items() if row.mode == "listed")
    row = OUTPUTS.pop(rank)
    try:
        kern = ep.Kernel(expr, tuning=ep.Tuning(hash_output_initial=64), **kw)
        kern.program                 # lowered now (a kernel may lower on first need)
        return kern
    finally:
        OUTPUTS[rank] = row


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--reps", type=int, default=21)
    args = ap.parse_args(argv)
    i, j, k = ep.indices("i j k")
    A, B = ep.tensor("A", 2, format="csr"), ep.tensor("B", 2, format="csr")
    def rnd(n, m, d, seed):          # (sp.random is slow at low density and large n)
        rng, nnz = np.random.default_rng(seed), int(n * m * d)
        return sp.csr_array((rng.random(nnz), (rng.integers(0, n, nnz),
                                               rng.integers(0, m, nnz))), shape=(n, m))
    cases = [("copy csr 20000^2, 5e5 nnz", A[i, j], {"A": rnd(20000, 20000, 1.25e-3, 1)}, None),
             ("A + B csr 20000^2, 2 x 5e5", A[i, j] + B[i, j],
              {"A": rnd(20000, 20000, 1.25e-3, 1), "B": rnd(20000, 20000, 1.25e-3, 2)}, None),
             ("A Bt inner 2000^2 x 500", ep.sum(k, A[i, k] * B[j, k]),
              {"A": rnd(2000, 500, 0.01, 3), "B": rnd(2000, 500, 0.01, 4)}, (i, j, k))]
    for name, e, given, order in cases:
        listed = ep.Kernel(e, output="coo", order=order)
        records = _records_kernel(e, output="coo", order=order)
        assert (listed.program.output.mode, records.program.output.mode) == ("listed", "coords")
        x, y = listed(**given), records(**given)
        for a, b in zip(x.levels, y.levels):
            assert all(np.array_equal(a[r], b[r]) for r in a)
        assert np.array_equal(x.vals, y.vals)
        a, b = paired_medians(lambda: listed(**given), lambda: records(**given), args.reps)
        print(f"{name:28s} nnz {x.nnz:8d}  listed {a * 1e3:8.3f} ms  records {b * 1e3:8.3f} ms"
              f"  records/listed {b / a:5.2f}")


if __name__ == "__main__":
    main()
