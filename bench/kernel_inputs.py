"""The benchmark kernels' inputs (bench/kernels.py): a generator per kernel name
with a fixed seed, random and structured csr matrices, R-MAT and Erdős–Rényi
graphs, and 3-tensors in the forms the implementations take."""
from __future__ import annotations

import zlib

import numpy as np
import scipy.sparse as sp

import etchpy as ep


SEED = 20240917


def rng_for(name: str) -> np.random.Generator:
    """A generator seeded by SEED and the kernel name (independent of --only)."""
    return np.random.default_rng([SEED, zlib.crc32(name.encode())])


# ------------------------------------------------------------------ input data

def _csr(rows, cols, vals, shape):
    m = sp.csr_matrix((vals, (rows, cols)), shape=shape)   # coo -> csr, sums duplicates
    m.sum_duplicates()
    m.sort_indices()
    return m


def random_csr(rng, n, m, nnz):
    """n x m, about `nnz` uniformly random nonzeros in [0, 1) (duplicates summed)."""
    rows = rng.integers(0, n, nnz)
    cols = rng.integers(0, m, nnz)
    return _csr(rows, cols, rng.random(nnz), (n, m))


def per_row_csr(rng, n, m, k):
    """n x m with k random columns per row (duplicates summed, so ≤ k)."""
    rows = np.repeat(np.arange(n), k)
    cols = rng.integers(0, m, n * k)
    return _csr(rows, cols, rng.random(n * k), (n, m))


def overlapping_csr(rng, a, frac=0.5):
    """A matrix sharing `frac` of a's coordinates (new values) plus as many new random ones."""
    coo = a.tocoo()
    nnz = coo.nnz
    keep = rng.random(nnz) < frac
    extra = nnz - int(keep.sum())
    rows = np.concatenate([coo.row[keep], rng.integers(0, a.shape[0], extra)])
    cols = np.concatenate([coo.col[keep], rng.integers(0, a.shape[1], extra)])
    return _csr(rows, cols, rng.random(len(rows)), a.shape)


def stencil_csr(g):
    """The 2-D 5-point Laplacian on a g x g grid (4 on the diagonal, -1 to neighbours)."""
    n = g * g
    idx = np.arange(n).reshape(g, g)
    rows, cols, vals = [idx.ravel()], [idx.ravel()], [np.full(n, 4.0)]
    for src, dst in ((idx[1:, :], idx[:-1, :]), (idx[:-1, :], idx[1:, :]),
                     (idx[:, 1:], idx[:, :-1]), (idx[:, :-1], idx[:, 1:])):
        rows.append(src.ravel())
        cols.append(dst.ravel())
        vals.append(np.full(src.size, -1.0))
    return _csr(np.concatenate(rows), np.concatenate(cols), np.concatenate(vals), (n, n))


def er_degree_ordered_upper(rng, n, m):
    """Erdős–Rényi graph (m random pairs), degree-ordered upper triangle."""
    return degree_ordered_upper(n, rng.integers(0, n, m), rng.integers(0, n, m))


RMAT_PROBS = (0.57, 0.19, 0.19, 0.05)       # the Graph500 R-MAT parameters


def rmat_degree_ordered_upper(rng, scale, m, probs=RMAT_PROBS):
    """R-MAT power-law graph on 2**scale vertices from m edge draws: each draw picks
    one of four quadrants per bit with probabilities a, b, c, d; vertex ids are then
    permuted at random (so high degree is not tied to low ids), and the result is
    degree-ordered like the ER graph."""
    n = 1 << scale
    a, b, c, _ = probs
    src = np.zeros(m, dtype=np.int64)
    dst = np.zeros(m, dtype=np.int64)
    for _bit in range(scale):
        u = rng.random(m)
        row = u >= a + b                      # quadrants c, d: lower half
        col = ((u >= a) & (u < a + b)) | (u >= a + b + c)    # quadrants b, d
        src = (src << 1) | row
        dst = (dst << 1) | col
    perm = rng.permutation(n)
    return degree_ordered_upper(n, perm[src], perm[dst])


def degree_ordered_upper(n, a, b):
    """The simple graph on edges (a, b) (loops and duplicates dropped), vertices
    relabelled by ascending degree, each edge oriented low -> high label: the
    strictly upper triangular U (int64 ones) and its edge arrays."""
    keep = a != b
    lo, hi = np.minimum(a[keep], b[keep]), np.maximum(a[keep], b[keep])
    key = np.unique(lo * n + hi)
    lo, hi = key // n, key % n
    deg = np.bincount(lo, minlength=n) + np.bincount(hi, minlength=n)
    order = np.lexsort((np.arange(n), deg))
    rank = np.empty(n, dtype=np.int64)
    rank[order] = np.arange(n)
    ra, rb = rank[lo], rank[hi]
    u, w = np.minimum(ra, rb), np.maximum(ra, rb)
    U = _csr(u, w, np.ones(len(u), dtype=np.int64), (n, n))
    coo = U.tocoo()
    return U, coo.row.astype(np.int64), coo.col.astype(np.int64)


class Tensor3:
    """A random 3-tensor (unique coordinates in lexicographic order) in several forms."""

    def __init__(self, rng, dims, nnz, base=None, share=0.5):
        I, J, K = dims
        self.dims = dims
        keys = rng.integers(0, I * J * K, nnz, dtype=np.int64)
        if base is not None:     # share about `share` of base's coordinates
            keep = rng.random(len(base.keys)) < share
            keys = np.concatenate([base.keys[keep], keys[: nnz - int(keep.sum())]])
        self.keys = np.unique(keys)
        self.i = self.keys // (J * K)
        self.j = (self.keys // K) % J
        self.k = self.keys % K
        self.vals = rng.random(len(self.keys))
        self.nnz = len(self.keys)
        self._cache = {}

    def coords(self):
        return np.stack([self.i, self.j, self.k])

    def etchpy(self, name):
        key = ("ep", name)
        if key not in self._cache:
            self._cache[key] = ep.Tensor.from_coords(self.coords(), self.vals, self.dims,
                                                     "csf", name=name)
        return self._cache[key]

    def unfold3(self):
        """Mode-3 unfolding: csr of shape (I*J, K), row = i*J + j."""
        if "u3" not in self._cache:
            I, J, K = self.dims
            self._cache["u3"] = _csr(self.i * J + self.j, self.k, self.vals, (I * J, K))
        return self._cache["u3"]

    def fibers(self):
        """(fiber row ids i*J+j of the present fibers, csr of shape (#fibers, K))."""
        if "fib" not in self._cache:
            I, J, K = self.dims
            fid, inv = np.unique(self.i * J + self.j, return_inverse=True)
            self._cache["fib"] = (fid, _csr(inv, self.k, self.vals, (len(fid), K)))
        return self._cache["fib"]

    def mode1_pairs(self):
        """(j, k of the present (j,k) pairs, csr B₍₁₎ of shape (I, #pairs))."""
        if "m1" not in self._cache:
            I, J, K = self.dims
            pk, inv = np.unique(self.j * K + self.k, return_inverse=True)
            self._cache["m1"] = (pk // K, pk % K,
                                 _csr(self.i, inv, self.vals, (I, len(pk))))
        return self._cache["m1"]

    def pydata(self, sparse):
        if "pd" not in self._cache:
            self._cache["pd"] = sparse.COO(self.coords(), self.vals, shape=self.dims,
                                           has_duplicates=False, sorted=True)
        return self._cache["pd"]
