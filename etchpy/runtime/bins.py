"""The tensor of a onehot (expr.bins), bound at call time over its source's arrays.

`view` binds `ep.onehot(b, A[idx], n)`: A's own tensor (its levels and values,
no copy) with one more level, formats.bins, which stores nothing: the kernel
reads each of A's values as the bin below it. `dense` is its dense value, for
the reference. proofs_notes/bins.md.
"""
from __future__ import annotations

import numpy as np

from ..errors import InputError, SemiringError
from ..expr.bins import levels_below
from ..expr.nodes import TensorVar
from ..formats import Format
from .inputs import as_tensor
from .tensor import Tensor


def count(tv, inputs) -> tuple:
    """(n,) for a onehot's tensor of n bins (the size of its last index); the
    sizes of a value predicate's bins (expr.shared: its last indices); else ().
    A count written as a parameter's name is read from `inputs` (the call's
    arguments); InputError where it is missing or not a positive integer."""
    kind = getattr(tv, "kind", None)
    if kind == "bins":
        return (_number(tv, tv.tests[0][1], inputs),)
    return tuple(_number(tv, n, inputs) for _, n in tv.bins) if kind == "value" else ()


def _number(tv, n, inputs) -> int:
    if not isinstance(n, str):
        return n
    if n not in inputs:
        raise InputError(f"missing parameter {n} (the number of bins of {tv.name})")
    v = inputs[n]
    a = np.asarray(v)
    if isinstance(v, (bool, np.bool_)) or a.shape != () or a.dtype.kind not in "iu" \
            or not 1 <= a.item() < 2**62:
        raise InputError(f"parameter {n} (the number of bins of {tv.name}) must be a "
                         f"positive integer, got {v!r}")
    return int(a.item())


def full_shape(tv, structure: tuple, ts: dict, inputs) -> tuple:
    """A value predicate's shape: its structure's, its bins' counts, then the
    sizes of its terms' indices, read off the located columns `ts` there."""
    out = list(structure + count(tv, inputs))
    out += [0] * (levels_below(tv) - len(tv.bins))
    first = len(structure) + len(tv.bins)
    for _, located, *_ in tv.terms:
        for k in located:
            for p, n in zip(tv.columns[k][2], ts[k].shape):
                if p >= first:
                    out[p] = max(out[p], n)
    return tuple(out)


def extended(tv, structure: Tensor, shape: tuple, cols: list, sr) -> Tensor:
    """The structure of a value predicate with bins or terms (expr.shared: a
    product with onehots, a sum, over it), its Bins and dense levels below,
    over its own arrays."""
    if tv.bins and (np.dtype(sr.dtype).kind == "c" or any(
            cols[k].dtype.kind == "c" for k, _ in tv.bins)):
        raise SemiringError(f"ep.onehot over {tv.source}: complex values have no order, so "
                            f"they name no bin; take the bins of a real input")
    levels = (*structure.levels, *({} for _ in range(levels_below(tv))))
    return Tensor._of((shape, tv.format, levels, structure.vals, structure.fill), tv.name)


def view(tv, inputs, sr) -> Tensor:
    """The onehot `tv` over its source in `inputs` (converted to the declared
    format if it is not in it, as any input)."""
    (col, fmt, _), = tv.columns
    src = as_tensor(inputs[col], TensorVar(col, tv.order - 1, fmt), sr)
    if np.dtype(sr.dtype).kind == "c" or src.dtype.kind == "c":
        raise SemiringError(f"ep.onehot over {col}: complex values have no order, so they "
                            f"name no bin; take the bins of a real input")
    return Tensor._of((src.shape + count(tv, inputs), tv.format, (*src.levels, {}), src.vals,
                       src.fill), tv.name)


def source(t: Tensor, n: int = 1) -> Tensor:
    """The tensor a onehot's view was made over (its levels but the last n)."""
    if not n:
        return t
    f = t.format
    fmt = Format(f.levels[:-n], f.mode_order[:-n])
    return Tensor._of((t.shape[:-n], fmt, t.levels[:-n], t.vals, t.fill), t.name)


def _binned(v: np.ndarray, n: int) -> tuple:
    """(v as int64 bins, where v is an integer in 0..n-1)."""
    v = np.asarray(v)
    ok = (v >= 0) & (v < n)
    ok[ok] &= v[ok].astype(np.int64) == v[ok]
    return np.where(ok, v, 0).astype(np.int64), ok


def placed(tv, column, coords: np.ndarray, keep: np.ndarray, shape: tuple) -> tuple:
    """(coords with a value predicate's bins below, keep where every bin is one):
    its structure's entries at `coords`, `column(k)` column k's values there;
    `shape` the predicate's (its bins' counts after its structure's sizes)."""
    rows = [coords]
    for (k, _), n in zip(tv.bins, shape[len(coords):]):
        b, ok = _binned(column(k), n)
        rows.append(b[None, :])
        keep = keep & ok
    return np.vstack(rows), keep


def dense(t: Tensor, sr) -> np.ndarray:
    """One at (idx, v) for each stored entry of the source at idx whose value v is
    an integer in 0..n-1, zero elsewhere."""
    coords, v = source(t).to_coords()
    b, ok = _binned(v, t.shape[-1])
    out = np.full(t.shape, sr.zero, dtype=sr.dtype)
    out[(*coords[:, ok], b[ok])] = sr.one
    return out
