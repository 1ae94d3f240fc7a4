"""Sorting an unsorted csr input's segments: etchpy's two compiled sorts against
scipy's two ways, thread-CPU medians of calls alternated in one process:

    python -m bench.segment_sorts [--seconds S] [--lists]

Matrices: scipy's own products B = A·A (its indices left unsorted, rows nearly in
reverse runs) and A·(P A Pᵀ) for a random permutation P (rows in random order) of
scikit-fem's matrices to 1e5 entries (bench.audit39's ladder), and random rows of 4,
16 and 64 shuffled within each row (3.2e5 entries). Columns: the per-segment
insertion sort (`sort_segments(pos, crd)`), the two counting sorts
(`sort_segments(pos, crd, size)`), scipy's `sort_indices` on positions, and
scipy's conversion to csc and back; each checked against scipy's first. Which one
etchpy takes: `segment_sort._counting_pays` (the `etchpy` column).

--lists: coordinate lists instead. Each matrix of the ladder to 1e6 entries as a
coo_array with its entries shuffled: `entries.sort_order` (the compiled counting
path) against the packed sort it replaced (`entries.stable_argsort` of the key),
and whole calls of `C[i, j] = A[i, j] + B[i, j]` into csr (A the shuffled coo, B
the matrix's rows reversed, sorted csr) against scipy's `S + B`."""
from __future__ import annotations

from bench import _env  # noqa: F401  (environment first)

import argparse

import numpy as np
import scipy.sparse as sp

from bench.audit39 import _patterns, matrices
from bench.timing import alternate_clocks
import etchpy as ep
from etchpy.runtime.checks import sort_segments
from etchpy.runtime.entries import prefix_key, sort_order, stable_argsort
from etchpy.runtime.segment_sort import _counting_pays


def scipy_sort(B, transposes: bool):
    """(ordered indices, permutation) by scipy, as etchpy did before session 81."""
    at = np.arange(B.nnz)
    if transposes:
        c = sp.csr_array((at, B.indices, B.indptr), shape=B.shape, copy=False).tocsc().tocsr()
    else:
        c = sp.csr_array((at, B.indices.copy(), B.indptr.copy()), shape=B.shape, copy=False)
        c.sort_indices()
    return c.indices, c.data


def cases():
    """(name, unsorted scipy csr) pairs, as the module docstring lists."""
    for name, A in matrices(10**5):
        yield f"{name} A·A", A @ A
        yield f"{name} A·PAPᵀ", _patterns(A)[0]
    rng = np.random.default_rng(0)
    for k in (4, 16, 64):
        n = 320000 // k
        M = sp.random_array((n, n), density=k / n, format="csr", rng=rng)
        idx = M.indices.copy()
        for r in range(n):
            idx[M.indptr[r]:M.indptr[r + 1]] = rng.permutation(idx[M.indptr[r]:M.indptr[r + 1]])
        yield f"random rows of {k}", sp.csr_array((M.data, idx, M.indptr), shape=M.shape)


def lists(seconds: float):
    """The --lists table (module docstring)."""
    kern = ep.compile("C[i, j] = A[i, j] + B[i, j]", formats={"A": "csr", "B": "csr"},
                      output="csr")
    print(f"{'matrix':12s} {'entries':>9s}   sort_order   packed sort   ratio   "
          f"A + B call   scipy S + B   ratio")
    for name, A in matrices(10**6):
        rng = np.random.default_rng(0)
        c = A.tocoo()
        p = rng.permutation(c.nnz)
        S = sp.coo_array((c.data[p], (c.row[p], c.col[p])), shape=A.shape)
        B = sp.csr_array(A[::-1])
        B.sort_indices()
        storage = np.stack([S.row, S.col]).astype(np.int64)
        key = prefix_key(storage)[0]
        assert (sort_order(storage) == stable_argsort(key)).all()
        assert abs(sp.csr_array(kern(A=S, B=B)) - (A + B)).max() <= 1e-9 * abs(A).max()
        t = [m for m, _ in alternate_clocks([
            lambda: sort_order(storage), lambda: stable_argsort(prefix_key(storage)[0]),
            lambda: kern(A=S, B=B), lambda: S + B], seconds, 500)]
        print(f"{name:12s} {A.nnz:9,d}   {t[0] * 1e6:8.0f} µs   {t[1] * 1e6:8.0f} µs   "
              f"{t[0] / t[1]:5.2f}   {t[2] * 1e6:8.0f} µs   {t[3] * 1e6:8.0f} µs   "
              f"{t[2] / t[3]:5.2f}")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--seconds", type=float, default=0.4)
    ap.add_argument("--lists", action="store_true")
    args = ap.parse_args(argv)
    if args.lists:
        return lists(args.seconds)
    print(f"{'matrix':22s} {'entries':>9s} {'k':>6s}   per-segment   counting   "
          f"scipy sort   scipy csc→csr   etchpy/scipy")
    for name, B in cases():
        want = scipy_sort(B, False)
        for size in (None, B.shape[1]):
            got = sort_segments(B.indptr, B.indices, size)
            assert (got[0] == want[0]).all() and (got[1] == want[1]).all()
        t = [m for m, _ in alternate_clocks([
            lambda: sort_segments(B.indptr, B.indices),
            lambda: sort_segments(B.indptr, B.indices, B.shape[1]),
            lambda: scipy_sort(B, False), lambda: scipy_sort(B, True)], args.seconds, 500)]
        ours = t[1] if _counting_pays(*B.shape, B.nnz) else t[0]
        print(f"{name:22s} {B.nnz:9,d} {B.nnz / B.shape[0]:6.1f}   " + "   ".join(
            f"{x * 1e6:8.0f} µs" for x in t) + f"   {ours / min(t[2:]):6.2f}")


if __name__ == "__main__":
    main()
