"""The graphs of bench.graphs: R-MAT, Erdős–Rényi and a grid, seeds fixed, and the
skewed triangle instance of arXiv 1310.3314.

Each is a canonical scipy csr matrix (sorted, no duplicates, no self loops) of
float64 weights uniform in [1, 10); `symmetric` adds every edge's reverse
(duplicates merged), for BFS, components and the grid.
"""
from __future__ import annotations

import numpy as np
import scipy.sparse as sp


def _canonical(rows, cols, n, seed, symmetric):
    keep = rows != cols
    rows, cols = rows[keep], cols[keep]
    if symmetric:
        rows, cols = np.concatenate([rows, cols]), np.concatenate([cols, rows])
    m = sp.csr_array((np.ones(len(rows)), (rows, cols)), shape=(n, n))
    m.sum_duplicates()
    m.data = np.random.default_rng(seed).uniform(1.0, 10.0, m.nnz)
    if symmetric:      # the same weight both ways
        m = sp.csr_array(sp.triu(m, 1) + sp.triu(m, 1).T)
        m.sort_indices()
    return m


def rmat(scale: int, edge_factor: int = 16, seed: int = 1, *, symmetric=False,
         a=0.57, b=0.19, c=0.19):
    """An R-MAT graph of 2**scale vertices and edge_factor·2**scale sampled edges
    (Graph500 probabilities a, b, c; d = 1 - a - b - c), vertices permuted."""
    rng = np.random.default_rng(seed)
    n, m = 1 << scale, edge_factor << scale
    rows, cols = np.zeros(m, np.int64), np.zeros(m, np.int64)
    for bit in range(scale):
        r = rng.random(m)
        down = r >= a + b                      # the lower half: quadrants c, d
        right = ((r >= a) & (r < a + b)) | (r >= a + b + c)
        rows |= down.astype(np.int64) << bit
        cols |= right.astype(np.int64) << bit
    perm = rng.permutation(n)
    return _canonical(perm[rows], perm[cols], n, seed, symmetric)


def erdos_renyi(n: int, m: int, seed: int = 2, *, symmetric=False):
    """n vertices, m edges drawn uniformly (repeats and self loops dropped)."""
    rng = np.random.default_rng(seed)
    return _canonical(rng.integers(0, n, m), rng.integers(0, n, m), n, seed, symmetric)


def grid(side: int, seed: int = 3):
    """The side×side 4-neighbour grid, undirected (symmetric)."""
    v = np.arange(side * side).reshape(side, side)
    rows = np.concatenate([v[:, :-1].ravel(), v[:-1, :].ravel()])
    cols = np.concatenate([v[:, 1:].ravel(), v[1:, :].ravel()])
    return _canonical(rows, cols, side * side, seed, True)


def skewed(n: int):
    """R = S = T = {(0, i)} ∪ {(i, 0)} for i < n (0-based), values 1: the instance on
    which pairwise join plans take quadratic time (arXiv 1310.3314)."""
    i = np.arange(n)
    m = sp.csr_array((np.ones(2 * n), (np.concatenate([np.zeros(n, np.int64), i]),
                                       np.concatenate([i, np.zeros(n, np.int64)]))),
                     shape=(n, n))
    m.sum_duplicates()
    m.data[:] = 1.0
    return m
