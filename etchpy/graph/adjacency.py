"""Adjacency matrices read once: checked, converted to an ep.Tensor in the layout a
kernel walks, and sparse frontier vectors built cheaply on every iteration.

Every stored entry of a sparse adjacency matrix is an edge (an explicit zero is an
edge of weight 0); of a dense one, every nonzero entry. A[j, i] is the edge j -> i.
"""
from __future__ import annotations

import numpy as np

from ..errors import InputError
from ..runtime.scipy_arrays import checked_scipy
from ..runtime.tensor import Tensor
from ..tuning import DEFAULT


class Graph:
    """An adjacency matrix read once: checked and made canonical (see `as_csr`), with
    the ep.Tensors the algorithms read cached on it, so that calls after the first
    on the same Graph convert nothing (what graphblas-algorithms' Graph does for
    its properties). Treat it as immutable.

    Parameters: A, a square scipy.sparse matrix or 2-d numeric array (A[j, i]:
    the edge j -> i); name, what errors call it.
    Raises: InputError naming `name` for a bad matrix (see as_csr).

        >>> G = ep.graph.Graph(scipy_csr)
        >>> ep.graph.bfs_levels(G, 0); ep.graph.connected_components(G)
    """

    def __init__(self, A, name: str = "A"):
        self.name = name
        self.csr = as_csr(A, name)
        self.n = self.csr.shape[0]
        self._cache: dict = {}

    def tensor(self, layout: str, semiring, values=None) -> Tensor:
        """The graph as an ep.Tensor (see `tensor`), made on first need."""
        key = (layout, semiring.name, None if values is None else repr(values))
        t = self._cache.get(key)
        if t is None:
            t = self._cache[key] = tensor(self.csr, layout, semiring, values, self.name)
        return t

    def cached(self, key: str, make):
        """Any other derived value, made by make(csr) on first need."""
        if key not in self._cache:
            self._cache[key] = make(self.csr)
        return self._cache[key]


def as_graph(A, name: str = "A") -> Graph:
    """A itself when it is a Graph, else Graph(A, name)."""
    return A if isinstance(A, Graph) else Graph(A, name)


def as_csr(A, name: str = "A"):
    """A square scipy csr array of float64 values with sorted indices and no
    duplicates (duplicates summed), from a scipy.sparse matrix or array, a 2-d
    ep.Tensor (its stored entries), or a 2-d numpy array (its nonzeros are the
    edges). Duplicate entries are summed,
    as scipy's conversions sum them (so scipy.sparse.csgraph reads the same
    graph). InputError naming `name` for anything else (complex values too), a
    non-square matrix, or values that are not finite."""
    import scipy.sparse as sp
    if isinstance(A, Tensor):               # a 2-d ep.Tensor: read as its scipy matrix
        if len(A.shape) != 2:
            raise InputError(f"{name} is an adjacency matrix: a 2-d ep.Tensor, not "
                             f"{len(A.shape)}-d")
        A = A.to_scipy()
    if sp.issparse(A):
        if A.dtype.kind not in "biuf":
            raise InputError(f"{name} is an adjacency matrix of real weights, not of "
                             f"{A.dtype} values")
        if A.format != "csr":                # scipy's conversions trust the arrays
            A = checked_scipy(A, name)
        try:
            M = sp.csr_array(A, dtype=np.float64)
        except ValueError as err:            # scipy's own check of its arrays
            raise InputError(f"{name}.indptr / {name}.indices are malformed: {err}") from err
    else:
        arr = np.asarray(A) if not isinstance(A, (str, bytes)) else None
        if arr is None or arr.ndim != 2 or arr.dtype.kind not in "biuf":
            what = type(A).__name__ if arr is None else f"a {arr.ndim}-d {arr.dtype} array"
            raise InputError(f"{name} is an adjacency matrix: a scipy.sparse matrix or a "
                             f"2-d array of real numbers, not {what}")
        M = sp.csr_array(arr.astype(np.float64))
    if M.shape[0] != M.shape[1]:
        raise InputError(f"{name} is an adjacency matrix and must be square, not "
                         f"{M.shape[0]}x{M.shape[1]}")
    M = _check_arrays(M, name)
    if not M.has_canonical_format:     # sorted, without duplicates; never A's arrays
        M = M.copy()
        M.sum_duplicates()
    if not np.all(np.isfinite(M.data)):
        raise InputError(f"{name} has a stored value that is not finite (NaN or inf)")
    return M


def _check_arrays(M, name: str):
    """M, with int64 index arrays if they were integers of another type; an
    InputError naming `name` unless they are 1-d integer arrays, M's row
    pointers start at 0, never decrease and end within its indices, and every
    index is a vertex (the C behind a Graph reads its arrays unchecked, and
    scipy's own code takes only int32 and int64)."""
    n, ptr, idx = M.shape[0], M.indptr, M.indices
    for what, a in (("indptr", ptr), ("indices", idx)):
        if a.ndim != 1 or a.dtype.kind not in "iu":
            raise InputError(f"{name}.{what} is a 1-d array of integers, not a "
                             f"{a.ndim}-d {a.dtype} array")
    if {ptr.dtype, idx.dtype} - {np.dtype(np.int32), np.dtype(np.int64)}:
        ptr, idx = _as_int64(ptr, name, "indptr"), _as_int64(idx, name, "indices")
        M = type(M)((M.data, idx, ptr), shape=M.shape, copy=False)
    if len(ptr) != n + 1 or ptr[0] != 0 or ptr[-1] > len(idx) or np.any(ptr[1:] < ptr[:-1]):
        raise InputError(f"{name}.indptr is not a row pointer array of {len(idx)} entries")
    used = idx[:ptr[-1]]
    if len(used) and (used.min() < 0 or used.max() >= n):
        raise InputError(f"{name}.indices has an entry that is not a vertex of a graph of "
                         f"{n} vertices")
    return M


def _as_int64(a, name: str, what: str):
    """`a` (integers) as int64; an InputError when a value does not fit."""
    if a.dtype.kind == "u" and len(a) and a.max() > np.iinfo(np.int64).max:
        raise InputError(f"{name}.{what} has an entry beyond int64: {a.max()}")
    return a.astype(np.int64)


def both_ways(M):
    """The pattern of M + Mᵀ as a csr array of ones: every stored entry of M,
    an explicit zero included, is an edge both ways (adding the values could
    cancel or drop zeros)."""
    import scipy.sparse as sp
    P = sp.csr_array((np.ones(M.nnz), M.indices, M.indptr), shape=M.shape)
    return P + P.T


def is_symmetric(M) -> bool:
    """Whether the pattern of the csr array M (sorted, no duplicates) equals its
    transpose's: every edge j -> i has its i -> j."""
    T = M.T.tocsr()
    T.sort_indices()
    return bool(np.array_equal(M.indptr, T.indptr) and np.array_equal(M.indices, T.indices))


def check_vertex(v, n: int, name: str = "source") -> int:
    """`v` as a vertex number in [0, n); InputError naming `name` otherwise."""
    if isinstance(v, (bool, np.bool_)) or not isinstance(v, (int, np.integer)):
        raise InputError(f"{name} is a vertex number, not {v!r}")
    if not 0 <= v < n:
        raise InputError(f"{name}={v} is not a vertex of a graph of {n} vertices")
    return int(v)


def tensor(M, layout: str, semiring, values=None, name: str = "A") -> Tensor:
    """The csr array M as an ep.Tensor in `layout` ("csr" or "csc") whose fill is
    the zero of `semiring` (a Semiring); `values`, when given, replaces M's
    values (a scalar broadcast to every stored entry)."""
    import scipy.sparse as sp
    if values is not None:
        vals = np.broadcast_to(np.asarray(values, dtype=semiring.dtype), M.data.shape)
        M = sp.csr_array((np.ascontiguousarray(vals), M.indices, M.indptr), shape=M.shape)
    elif M.dtype != semiring.dtype:
        M = M.astype(semiring.dtype)
    if layout == "csc":
        M = M.tocsc()
        M.sort_indices()
    return Tensor.from_scipy(M, layout, semiring=semiring, name=name)


def index_dtype(T: Tensor) -> np.dtype:
    """The dtype of the index arrays of a csr/csc Tensor (a frontier uses the same)."""
    return T.levels[1]["crd"].dtype


def frontier(idx: np.ndarray, vals, n: int, fill, idx_dtype, name: str = "f") -> Tensor:
    """A sparse vector of length n (format coo: one compressed level) storing `vals`
    at the sorted distinct positions `idx`; made without the order check (the
    caller's positions come from np.flatnonzero, so they are sorted)."""
    idx = idx.astype(idx_dtype, copy=False)
    pos = np.array([0, len(idx)], dtype=idx_dtype)
    return Tensor((n,), "coo", [{"pos": pos, "crd": idx}], vals, fill=fill,
                  unsafe_skip_order_check=True, name=name)


def changed(csr, front: np.ndarray, hit, scan_below: int = DEFAULT.scan_below) -> np.ndarray:
    """The sorted distinct vertices i with hit(i) true, where hit is a vectorised
    predicate true only at out-neighbours of `front` (a step's candidates): when
    the graph is large (scan_below vertices or more, Tuning.scan_below: below,
    a scan costs less than the numpy calls that gather the frontier's out-edges)
    and the frontier's out-edges
    are few (under n/16) only they are examined, in O(m + h log h) for m edges
    and h hits, rather than every vertex."""
    n = csr.shape[0]
    if n < scan_below:
        return np.flatnonzero(hit(slice(None)))
    starts = csr.indptr[front]
    counts = csr.indptr[front + 1] - starts
    total = int(counts.sum())
    if total * 16 >= n:
        return np.flatnonzero(hit(slice(None)))
    offsets = np.repeat(starts - np.cumsum(counts) + counts, counts) + np.arange(total)
    cand = csr.indices[offsets]
    found = np.sort(cand[hit(cand)])          # np.unique hashes: slower on small arrays
    return found[np.concatenate(([True], found[1:] != found[:-1]))] if len(found) else found
