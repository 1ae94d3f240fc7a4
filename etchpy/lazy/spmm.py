"""A sparse input times a dense matrix of many columns by an etchpy kernel,
not scipy's loop (`Tuning.lazy_spmm_columns`, `lazy_spmm_work`).

scipy's multi-vector loop (csr_matvecs, csc_matvecs) is compiled for any
x86-64; the kernel of `Σ_k A[i,k]·B[k,j]` (or `Σ_i A[i,k]·B[i,j]` for Xᵀ·B)
is compiled for the host, its inner loop over B's row vectorised. Both walk
the sparse input's entries in stored order and add each entry's row of B
into the same row of the result: the same sums in the same order, each
product added as a fused multiply-add where the host has one
(proofs_notes/lazy_spmm.md). A scipy product step of etchpy.lazy.regions
calls `product` first; None leaves it to etchpy.lazy.thin's loop (1-16
columns) or scipy's.

A vector operand (1-d) goes to the kernel of `Σ_k A[i,k]·b[k]` (`Σ_i A[i,k]·b[i]`
for Xᵀ·b) whatever its size (unless lazy_spmm_columns is 0): the kernel checks
the sparse input's arrays in its loop (c/fused_checks.py), where scipy's loop
needs a pass of etchpy.lazy.fits first, so arrays written in place since
ep.lazy wrapped them give an InputError, not a read out of bounds; its loop
is the faster one on gathers (docs/performance.md, session 54).
"""
from __future__ import annotations

import numpy as np

from ..api import compile as compile_kernel
from ..expr.nodes import Access, Index, Sum, TensorVar

_F64 = np.dtype(np.float64)
_I, _K, _J = Index("i"), Index("k"), Index("j")
# (format of the sparse input, flip), and (..., 1) for a vector operand -> its
# kernel, compiled on first use
_KERNELS: dict = {}


def _kernel(fmt: str, flip: bool, ndim: int = 2):
    key = (fmt, flip) if ndim == 2 else (fmt, flip, ndim)
    kern = _KERNELS.get(key)
    if kern is None:
        a = TensorVar("A", 2, fmt)
        b = TensorVar("B", ndim, "dense")
        j = (_J,) if ndim == 2 else ()
        if flip:        # (Xᵀ·B)[k,j] = Σ_i X[i,k]·B[i,j]
            e, out = Sum(_I, Access(a, (_I, _K)) * Access(b, (_I, *j))), (_K, *j)
        else:
            e, out = Sum(_K, Access(a, (_I, _K)) * Access(b, (_K, *j))), (_I, *j)
        kern = _KERNELS[key] = compile_kernel(e, out_indices=out)
    return kern


def vector_kernel(x, flip: bool, d, columns: int):
    """The kernel `product` runs x @ d by (x.T @ d when flip), taking x as A and
    d as B, when d is a vector it covers; else None.

    >>> import numpy as np, scipy.sparse as sp
    >>> vector_kernel(sp.eye_array(2, format="csr"), False, np.ones(2), 1) is not None
    True
    """
    if (not columns or type(d) is not np.ndarray or d.ndim != 1 or d.dtype != _F64
            or x.dtype != _F64 or x.format not in ("csr", "csc")
            or d.shape[0] != x.shape[1 - flip]):
        return None
    return _kernel(x.format, flip, 1)


def product(x, flip: bool, d, columns: int, work: int):
    """x @ d (x.T @ d when flip) for a csr or csc array x of float64 and a
    float64 numpy array d, 1-d, or 2-d of at least `columns` columns where x's
    entries times d's columns are at least `work`, by the kernel, as a new
    float64 array; None otherwise, and always with columns 0 (scipy's loop
    runs it, after a check of x's arrays)."""
    if type(d) is np.ndarray and d.ndim == 1:
        kern = vector_kernel(x, flip, d, columns)
        return None if kern is None else kern(A=x, B=d)
    if (not columns or type(d) is not np.ndarray or d.dtype != _F64 or x.dtype != _F64
            or x.format not in ("csr", "csc") or d.shape[0] != x.shape[1 - flip]):
        return None
    if (d.ndim != 2 or d.shape[1] < columns
            or x.nnz * d.shape[1] < work):
        return None
    return _kernel(x.format, flip)(A=x, B=d)
