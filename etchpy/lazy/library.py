"""A sparse input times a dense operand by scipy's own loop: the sparsetools
routine scipy's `@` ends in (csr_matvec, csc_matvec and their multi-vector
forms), called directly, without `@`'s dispatch (its checks of scalars,
shapes and dtypes cost more than the loop at a few thousand entries). A
transposed operand needs no transpose: Xᵀ of a csr X is the csc matrix over
the same arrays. What the routine reads is what `@` would give it; anything
else (other dtypes, a strided operand, no such routine in this scipy) is left
to `@` (product returns None). Both trust x's arrays: the caller (the product
step of etchpy.lazy.regions) checks them first (etchpy.lazy.wrap.trusted)."""
from __future__ import annotations

import numpy as np

_F64 = np.dtype(np.float64)
# scipy's sparsetools module (or None), imported on first use: `import etchpy`
# loads no scipy (tests/project/test_startup.py)
_TOOLS: list = []


def _sparsetools():
    if not _TOOLS:
        try:        # scipy's private module, present since scipy 0.14
            from scipy.sparse import _sparsetools as tools
        except ImportError:     # pragma: no cover - a scipy without it: `@` runs
            tools = None
        _TOOLS.append(tools)
    return _TOOLS[0]


def product(x, flip: bool, d):
    """x @ d (x.T @ d when flip) for a csr or csc array x whose arrays were
    checked and a float64 numpy array d (1-d, or 2-d C-contiguous) matching it,
    as a new float64 array; None when the direct call does not apply."""
    tools = _TOOLS[0] if _TOOLS else _sparsetools()
    if (tools is None or type(d) is not np.ndarray or d.dtype != _F64
            or x.data.dtype != _F64 or x.indices.dtype != x.indptr.dtype
            or not d.flags.c_contiguous or not 1 <= d.ndim <= 2):
        return None
    m, n = x.shape[::-1] if flip else x.shape
    if d.shape[0] != n:
        return None
    csr = (x.format == "csr") != flip
    if d.ndim == 1:
        y = np.zeros(m)
        fn = tools.csr_matvec if csr else tools.csc_matvec
        fn(m, n, x.indptr, x.indices, x.data, d, y)
        return y
    y = np.zeros((m, d.shape[1]))
    fn = tools.csr_matvecs if csr else tools.csc_matvecs
    fn(m, n, d.shape[1], x.indptr, x.indices, x.data, d.ravel(), y.ravel())
    return y
