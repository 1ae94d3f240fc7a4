"""Blocks of a partitioned tensor: cutting a value along one mode, a block's
statistics, and putting block results back together.

Everything here is plain numpy/scipy/Tensor work that runs on the client and on
the Dask workers alike (no dask import).

    cut(value, modes, lo, hi)          the slice lo:hi of `value` along each of `modes`
    stats(value)                       BlockStats: shape, nnz, bytes, int32 indices?
    glue(results, offsets, axis, ...)  block results as one result (concatenation or ⊕)
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..runtime import inputs as io_
from ..runtime.tensor import Tensor
from ..semiring import semirings


@dataclass(frozen=True)
class BlockStats:
    """What the client knows of one block without holding it: its shape, stored
    entries (every entry for a dense block), bytes, and whether all its index
    arrays are int32 (None when it has none)."""

    shape: tuple
    nnz: int
    nbytes: int
    idx32: bool | None


def stats(value) -> BlockStats:
    """The BlockStats of a numpy array, scipy sparse matrix/array or ep.Tensor."""
    value = unpack(value)
    if isinstance(value, Tensor):
        arrays = [a for level in value.levels for a in level.values()]
        idx = {a.dtype == np.int32 for a in arrays}
        return BlockStats(tuple(value.shape), int(value.nnz),
                          int(value.vals.nbytes + sum(a.nbytes for a in arrays)),
                          (idx == {True}) if idx else None)
    if _is_scipy(value):
        m = value if value.format in ("csr", "csc", "coo") else value.tocsr()
        arrays = [m.data] + ([m.indices, m.indptr] if m.format != "coo" else list(m.coords))
        return BlockStats(tuple(m.shape), int(m.nnz), int(sum(a.nbytes for a in arrays)),
                          all(a.dtype == np.int32 for a in arrays[1:]))
    a = np.asarray(value)
    return BlockStats(tuple(a.shape), int(a.size), int(a.nbytes), None)


def _is_scipy(value) -> bool:
    return type(value).__module__.startswith("scipy.sparse")


def cut(value, modes, lo: int, hi: int):
    """`value` restricted to lo:hi along each mode in `modes` (a numpy array, a
    scipy sparse matrix/array or an ep.Tensor; the same kind comes back, in the
    same layout, canonical)."""
    if not modes:
        return value
    if isinstance(value, Tensor):
        return _cut_tensor(value, modes, lo, hi)
    if _is_scipy(value):
        m = value if value.format in ("csr", "csc") else value.tocsr()
        for mode in modes:
            m = m[lo:hi] if mode == 0 else m[:, lo:hi]
        if not m.has_sorted_indices:
            m = m.sorted_indices()
        return m
    a = np.asarray(value)
    index = [slice(None)] * a.ndim
    for mode in modes:
        index[mode] = slice(lo, hi)
    return np.ascontiguousarray(a[tuple(index)])


def _cut_tensor(t: Tensor, modes, lo, hi) -> Tensor:
    coords, vals = t.to_coords()
    keep = np.ones(len(vals), dtype=bool)
    shape = list(t.shape)
    for mode in modes:
        keep &= (coords[mode] >= lo) & (coords[mode] < hi)
        shape[mode] = hi - lo
    coords = coords[:, keep]
    for mode in modes:
        coords[mode] -= lo
    made = Tensor.from_coords(coords, vals[keep], tuple(shape), t.format,
                              semiring=semirings.for_dtype(t.dtype), name=t.name)
    return Tensor(made.shape, made.format, made.levels, made.vals, fill=t.fill,
                  validate=False)


@dataclass(frozen=True)
class Packed:
    """An ep.Tensor as plain parts, for the trip between processes (a Tensor
    guards its arrays' layout, which pickling does not keep for every array). The
    Tensor made from it is kept with it (`unpack`), so a block a worker holds is
    rebuilt once, not on every call."""

    shape: tuple
    format: object
    levels: tuple
    vals: np.ndarray
    fill: object
    name: str

    def __getstate__(self):
        return {k: v for k, v in self.__dict__.items() if k != "_tensor"}


def pack(value):
    """`value` ready to travel: a Tensor as Packed, anything else as it is."""
    if isinstance(value, Tensor):
        return Packed(tuple(value.shape), value.format,
                      tuple(dict(level) for level in value.levels), value.vals, value.fill,
                      value.name)
    return value


def unpack(value):
    """The value `pack` made travel (a Packed back as a Tensor)."""
    if isinstance(value, Packed):
        made = value.__dict__.get("_tensor")    # a block held by a worker: made once
        if made is None:
            made = Tensor(value.shape, value.format, value.levels, value.vals,
                          fill=value.fill, validate=False, name=value.name)
            object.__setattr__(value, "_tensor", made)
        return made
    return value


def coords_of(result):
    """(coords (order, n) int64, values) of a sparse result (scipy or Tensor)."""
    if isinstance(result, Tensor):
        return result.to_coords()
    coo = result.tocoo()
    return np.vstack([coo.row, coo.col]).astype(np.int64), coo.data


def glue(results, offsets, axis, shape, fmt, sr):
    """Block results as one: with `axis` an output axis, block b's result shifted
    by offsets[b] along it (concatenation); with `axis` None, the results combined
    position by position with the semiring `sr`'s add. Dense results are numpy
    arrays or scalars; sparse ones (output Format `fmt`) scipy arrays or Tensors,
    and the same kind comes back as an ordinary call returns."""
    results = [unpack(r) for r in results]
    if fmt is None:
        if axis is not None:
            return np.concatenate([np.asarray(r) for r in results], axis=axis)
        total = results[0]
        for r in results[1:]:
            total = sr.add.py(total, r)
        return np.asarray(total, dtype=sr.dtype)[()] if np.ndim(total) == 0 else total
    parts, vals = [], []
    for r, off in zip(results, offsets):
        c, v = coords_of(r)
        if axis is not None and off:
            c = c.copy()
            c[axis] += off
        parts.append(c)
        vals.append(v)
    t = Tensor.from_coords(np.concatenate(parts, axis=1), np.concatenate(vals), tuple(shape),
                           fmt, semiring=sr, name="output")
    return t.to_scipy() if io_.returns_scipy(fmt, sr) else t


def add_pair(a, b, fmt, sr, shape):
    """The semiring add of two block results (a step of the tree reduction), packed."""
    return pack(glue([a, b], [0, 0], None, shape, fmt, sr))
