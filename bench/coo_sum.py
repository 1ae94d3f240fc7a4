"""A scipy coo_array summed whole and by rows, in random order and in order,
for an A/B of two trees (one process per version, alternated):

    PYTHONPATH=<tree> python -m bench.coo_sum

4e6 entries of a 2e5 × 2e5 matrix; medians of 11 calls after a warm-up. Prints
the etchpy it imported and the inputs the sum's kernel checks in its loop.
"""
from __future__ import annotations

import statistics
import time

import numpy as np
import scipy.sparse as sp

import etchpy as ep


def main() -> None:
    rng = np.random.default_rng(0)
    n, nnz = 200_000, 4_000_000
    rows, cols = rng.integers(0, n, nnz), rng.integers(0, n, nnz)
    shuffled = sp.coo_array((rng.random(nnz), (rows, cols)), shape=(n, n))
    in_order = sp.coo_array(shuffled.tocsr().tocoo())
    total = ep.compile("s = A[i,j]", formats={"A": "coo"})
    by_row = ep.compile("y[i] = A[i,j]", formats={"A": "coo"})
    out = []
    for label, kern, a in (("sum unsorted", total, shuffled), ("sum in order", total, in_order),
                           ("rows unsorted", by_row, shuffled)):
        kern(A=a)
        times = []
        for _ in range(11):
            t = time.perf_counter()
            kern(A=a)
            times.append(time.perf_counter() - t)
        out.append(f"{label} {statistics.median(times) * 1e3:.2f} ms")
    checked = total.compiled.checked
    print(ep.__file__, "; ".join(out), "; checked in the loop:",
          sorted(checked.fused) if checked is not None else [])


if __name__ == "__main__":
    main()
