"""A sparse input times a dense operand by scipy's own loop: the sparsetools
routine scipy's `@` ends in (csr_matvec, csc_matvec and their multi-vector
forms), called directly, without `@`'s dispatch (its checks of scalars,
shapes and dtypes cost more than the loop at a few thousand entries). A
transposed operand needs no transpose: Xᵀ of a csr X is the csc matrix over
the same arrays. What the routine reads is what `@` would give it; anything
else (other dtypes, a strided operand, no such routine in this scipy) is left
to `@` (product returns None)."""
from __future__ import annotations

import numpy as np

try:            # scipy's private module, present since scipy 0.14
    from scipy.sparse import _sparsetools as _SPARSETOOLS
except ImportError:     # pragma: no cover - a scipy without it: `@` runs
    _SPARSETOOLS = None

_F64 = np.dtype(np.float64)


def product(x, flip: bool, d):
    """x @ d (x.T @ d when flip) for a csr or csc array x and a float64 numpy
    array d (1-d, or 2-d C-contiguous) matching it, as a new float64 array; None
    when the direct call does not apply."""
    if (_SPARSETOOLS is None or type(d) is not np.ndarray or d.dtype != _F64
            or x.data.dtype != _F64 or x.indices.dtype != x.indptr.dtype
            or not d.flags.c_contiguous or not 1 <= d.ndim <= 2):
        return None
    m, n = x.shape[::-1] if flip else x.shape
    if d.shape[0] != n:
        return None
    csr = (x.format == "csr") != flip
    if d.ndim == 1:
        y = np.zeros(m)
        fn = _SPARSETOOLS.csr_matvec if csr else _SPARSETOOLS.csc_matvec
        fn(m, n, x.indptr, x.indices, x.data, d, y)
        return y
    y = np.zeros((m, d.shape[1]))
    fn = _SPARSETOOLS.csr_matvecs if csr else _SPARSETOOLS.csc_matvecs
    fn(m, n, d.shape[1], x.indptr, x.indices, x.data, d.ravel(), y.ravel())
    return y
