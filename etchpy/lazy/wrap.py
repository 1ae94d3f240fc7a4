"""What ep.lazy accepts: the value a leaf holds (a numpy array, or a scipy csr or
csc array sharing the wrapped object's arrays) and its dtype check."""
from __future__ import annotations

import numbers

import numpy as np

from ..errors import InputError
from ..runtime.tensor import Tensor


def _dense_of_tensor(t: Tensor):
    import scipy.sparse as sps
    dense = t.to_dense()
    return sps.csr_array(dense) if len(t.shape) == 2 and t.format.name != "dense" else dense


def leaf_value(x):
    """The value a leaf holds: a numpy array or a scipy csr/csc array (2-d)."""
    import scipy.sparse as sps
    if isinstance(x, Tensor):
        x = _dense_of_tensor(x)
    if sps.issparse(x):
        if x.ndim != 2:
            raise InputError(f"ep.lazy takes 1-d or 2-d arrays, got a sparse array of "
                             f"shape {x.shape}")
        if isinstance(x, sps.sparray) and x.format in ("csr", "csc"):
            return x
        y = sps.csc_array(x) if x.format == "csc" else sps.csr_array(x)
        if y.format == x.format:    # shares x's arrays: keep x's cached sortedness (O(nnz))
            y.has_sorted_indices = x.has_sorted_indices
        return y
    if isinstance(x, (np.ndarray, np.generic, numbers.Number)):
        arr = np.asarray(x)
        if arr.ndim > 2:
            raise InputError(f"ep.lazy takes arrays of at most 2 dimensions, got shape "
                             f"{arr.shape}")
        return arr
    raise InputError(f"ep.lazy takes a numpy array, a scipy.sparse array or matrix or an "
                     f"ep.Tensor, got {type(x).__name__}")


def check_dtype(dtype, what):
    if dtype.kind not in "iuf":
        raise InputError(f"{what}: lazy arrays hold integers or floats, not {dtype}; "
                         f"cast it with .astype(np.float64)")
    return dtype
