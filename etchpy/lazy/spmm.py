"""A sparse input times a dense matrix of many columns by an etchpy kernel,
not scipy's loop (`Tuning.lazy_spmm_columns`, `lazy_spmm_work`).

scipy's multi-vector loop (csr_matvecs, csc_matvecs) is compiled for any
x86-64; the kernel of `Σ_k A[i,k]·B[k,j]` (or `Σ_i A[i,k]·B[i,j]` for Xᵀ·B)
is compiled for the host, its inner loop over B's row vectorised. Both walk
the sparse input's entries in stored order and add each entry's row of B
into the same row of the result: the same sums in the same order, each
product added as a fused multiply-add where the host has one
(proofs_notes/lazy_spmm.md). A scipy product step of etchpy.lazy.regions
calls `product` first; None leaves it to scipy.
"""
from __future__ import annotations

import numpy as np

from ..api import compile as compile_kernel
from ..expr.nodes import Access, Index, Sum, TensorVar

_F64 = np.dtype(np.float64)
_I, _K, _J = Index("i"), Index("k"), Index("j")
# (format of the sparse input, flip) -> its kernel, compiled on first use
_KERNELS: dict = {}


def _kernel(fmt: str, flip: bool):
    kern = _KERNELS.get((fmt, flip))
    if kern is None:
        a = TensorVar("A", 2, fmt)
        b = TensorVar("B", 2, "dense")
        if flip:        # (Xᵀ·B)[k,j] = Σ_i X[i,k]·B[i,j]
            e, out = Sum(_I, Access(a, (_I, _K)) * Access(b, (_I, _J))), (_K, _J)
        else:
            e, out = Sum(_K, Access(a, (_I, _K)) * Access(b, (_K, _J))), (_I, _J)
        kern = _KERNELS[(fmt, flip)] = compile_kernel(e, out_indices=out)
    return kern


def product(x, flip: bool, d, columns: int, work: int):
    """x @ d (x.T @ d when flip) for a csr or csc array x of float64 and a 2-d
    float64 numpy array d of at least `columns` columns (0: never) where x's
    entries times d's columns are at least `work`, by the kernel, as a new
    float64 array; None otherwise (scipy's loop runs it)."""
    if (not columns or type(d) is not np.ndarray or d.ndim != 2 or d.shape[1] < columns
            or d.dtype != _F64 or x.dtype != _F64 or x.format not in ("csr", "csc")
            or x.nnz * d.shape[1] < work):
        return None
    if d.shape[0] != x.shape[1 - flip]:
        return None
    return _kernel(x.format, flip)(A=x, B=d)
