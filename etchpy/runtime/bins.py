"""The tensor of a onehot (expr.bins), bound at call time over its source's arrays.

`view` binds `ep.onehot(b, A[idx], n)`: A's own tensor (its levels and values,
no copy) with one more level, formats.bins, which stores nothing: the kernel
reads each of A's values as the bin below it. `dense` is its dense value, for
the reference. proofs_notes/bins.md.
"""
from __future__ import annotations

import numpy as np

from ..errors import SemiringError
from ..expr.nodes import TensorVar
from ..formats import Format
from .inputs import as_tensor
from .tensor import Tensor


def count(tv) -> tuple:
    """(n,) for a onehot's tensor of n bins (the size of its last index), else ()."""
    return (tv.tests[0][1],) if getattr(tv, "kind", None) == "bins" else ()


def view(tv, inputs, sr) -> Tensor:
    """The onehot `tv` over its source in `inputs` (converted to the declared
    format if it is not in it, as any input)."""
    (col, fmt, _), = tv.columns
    src = as_tensor(inputs[col], TensorVar(col, tv.order - 1, fmt), sr)
    if np.dtype(sr.dtype).kind == "c" or src.dtype.kind == "c":
        raise SemiringError(f"ep.onehot over {col}: complex values have no order, so they "
                            f"name no bin; take the bins of a real input")
    return Tensor._of((src.shape + count(tv), tv.format, (*src.levels, {}), src.vals,
                       src.fill), tv.name)


def source(t: Tensor) -> Tensor:
    """The tensor a onehot's view was made over (its levels but the last)."""
    f = t.format
    fmt = Format(f.levels[:-1], f.mode_order[:-1])
    return Tensor._of((t.shape[:-1], fmt, t.levels[:-1], t.vals, t.fill), t.name)


def dense(t: Tensor, sr) -> np.ndarray:
    """One at (idx, v) for each stored entry of the source at idx whose value v is
    an integer in 0..n-1, zero elsewhere."""
    coords, v = source(t).to_coords()
    n = t.shape[-1]
    v = np.asarray(v)
    ok = (v >= 0) & (v < n)
    ok[ok] &= v[ok].astype(np.int64) == v[ok]
    out = np.full(t.shape, sr.zero, dtype=sr.dtype)
    out[(*coords[:, ok], v[ok].astype(np.int64))] = sr.one
    return out
