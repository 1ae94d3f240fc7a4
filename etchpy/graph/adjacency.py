"""Adjacency matrices read once: checked, converted to an ep.Tensor in the layout a
kernel walks, and sparse frontier vectors built cheaply on every iteration.

Every stored entry of a sparse adjacency matrix is an edge (an explicit zero is an
edge of weight 0); of a dense one, every nonzero entry. A[j, i] is the edge j -> i.
"""
from __future__ import annotations

import numpy as np

from ..errors import InputError
from ..runtime.tensor import Tensor


def as_csr(A, name: str = "A"):
    """A square scipy csr array of float64 values with sorted indices and no
    duplicates (duplicates summed), from a scipy.sparse matrix or array, or a
    2-d numpy array (its nonzeros are the edges). InputError naming `name` for
    anything else, a non-square matrix, or values that are not finite."""
    import scipy.sparse as sp
    if sp.issparse(A):
        M = sp.csr_array(A, dtype=np.float64)
    else:
        arr = np.asarray(A) if not isinstance(A, (str, bytes)) else None
        if arr is None or arr.ndim != 2 or arr.dtype.kind not in "biuf":
            raise InputError(f"{name} is an adjacency matrix: a scipy.sparse matrix or a "
                             f"2-d numeric array, not {type(A).__name__}")
        M = sp.csr_array(arr.astype(np.float64))
    if M.shape[0] != M.shape[1]:
        raise InputError(f"{name} is an adjacency matrix and must be square, not "
                         f"{M.shape[0]}x{M.shape[1]}")
    M.sum_duplicates()
    if not np.all(np.isfinite(M.data)):
        raise InputError(f"{name} has a stored value that is not finite (NaN or inf)")
    return M


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
