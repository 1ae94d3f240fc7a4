"""Conversions into and out of level storage: coordinates, dense arrays, scipy.sparse,
and from one format to another.

Every `from_*` function returns the `Parts` a `Tensor` is made of (shape, format,
level dicts, values, fill), already consistent, so the caller skips validation.
Building from coordinates sorts them in storage order, combines duplicates with the
semiring's add and packs each level through its `etchpy.formats` class; index arrays
come out int32 whenever every coordinate and position fits, else int64. Canonical scipy
csr/csc input read in its own layout shares its values (a Tensor copies index arrays).
The `to_*` functions read any object with `shape`, `format`, `levels`, `vals` and
`fill` (a Tensor).
"""
from __future__ import annotations

import operator
from typing import NamedTuple

import numpy as np

from .entries import combine, group_starts, sort_order, sort_storage
from .scipy_arrays import checked_scipy, compressed_arrays, coo_coords
from .segment_sort import sorted_segments
from .structured_inputs import dia_format, from_bsr, from_dia
from ..errors import InputError
from ..formats import Format
from ..formats.compressed import check_range

__all__ = ["Parts", "from_coords", "from_dense", "from_scipy", "to_coords", "to_dense",
           "convert", "to_scipy", "as_shape"]

INT32_LIMIT = 2**31 - 1
INT64_LIMIT = 2**63 - 1


class Parts(NamedTuple):
    """What a Tensor is made of (the arguments of its constructor)."""

    shape: tuple[int, ...]
    format: Format
    levels: tuple[dict, ...]
    vals: np.ndarray
    fill: object


# --------------------------------------------------------------------------- into storage

def from_coords(coords, values, shape, format, sr, name) -> Parts:
    """From coordinates (order, nnz) and values (nnz,); duplicates combine with sr.add."""
    return from_coords_columns(coords, [values], shape, format, sr, name)[0]


def from_coords_columns(coords, columns, shape, format, sr, name) -> list[Parts]:
    """One Parts per value array of `columns` (each (nnz,)), all over the same
    coordinates (order, nnz); the entries are sorted and grouped once."""
    shape = as_shape(shape, name)
    fmt = Format.parse(format, len(shape))
    columns = [_as_values(v, sr, name) for v in columns]
    coords = _as_coords(coords, shape, len(columns[0]) if columns else 0, name)
    for values in columns:
        if len(values) != coords.shape[1]:
            raise InputError(f"tensor {name!r}: {len(values)} values for "
                             f"{coords.shape[1]} coordinates")
    storage = coords[list(fmt.mode_order)]
    perm = sort_order(storage)
    if perm is not None:
        storage = storage.take(perm, axis=1)
    starts = group_starts(storage)
    if starts is not None:
        storage = storage.take(starts, axis=1)
    combined = [combine(v if perm is None else v[perm], starts, sr.add.py) for v in columns]
    if fmt.levels and getattr(fmt.levels[-1], "merge", None) is not None:
        packed = [_pack(storage, v, shape, fmt, sr.zero) for v in combined]
        return [Parts(shape, fmt, levels, vals, sr.zero) for levels, vals in packed]
    levels, parent_ids, n_parents = _pack_structure(storage, shape, fmt)
    levels = _narrowest(levels, shape)          # one structure for every column
    return [Parts(shape, fmt, levels, _placed(v, parent_ids, n_parents, sr.zero), sr.zero)
            for v in combined]


def from_dense(array, format, sr, name) -> Parts:
    """From a numpy array; all-dense formats share its memory when the layout allows
    (`format=None`: any axis order in which the array is contiguous)."""
    array = sr.cast(np.asarray(array), what=f"tensor {name!r} values")
    if format is None:
        return _dense_layout(array, _contiguous_axis_order(array), sr)
    fmt = Format.parse(format, array.ndim)
    if fmt.is_dense:
        return _dense_layout(array, fmt.mode_order, sr, fmt)
    rows = getattr(fmt.levels[-1], "pack_rows", None)
    if rows is not None and fmt.mode_order == tuple(range(array.ndim)) \
            and all(lv.located for lv in fmt.levels[:-1]):   # formats.level pack_rows
        parents = int(np.prod(array.shape[:-1]))
        arrays, vals = rows(np.ascontiguousarray(array).reshape(parents, array.shape[-1]),
                            sr.zero)
        levels = tuple({} for _ in fmt.levels[:-1]) + (arrays,)
        return Parts(array.shape, fmt, _narrowest(levels, array.shape), vals, sr.zero)
    coords, values = _stored_entries(array, sr.zero)
    return from_coords(coords, values, array.shape, fmt, sr, name)


def _dense_layout(array, mode_order, sr, fmt=None) -> Parts:
    """All-dense storage; `mode_order` None means copy to C order."""
    if mode_order is None:
        array = np.ascontiguousarray(array)
        mode_order = tuple(range(array.ndim))
    if fmt is None:
        fmt = Format.dense(array.ndim, mode_order)
    storage = np.ascontiguousarray(array.transpose(fmt.mode_order))
    levels = tuple({} for _ in range(array.ndim))
    return Parts(array.shape, fmt, levels, storage.reshape(-1), sr.zero)


def from_scipy(m, format, sr, name) -> Parts:
    """From a scipy.sparse matrix or array (csr, csc, coo; dia as uniform_band (or
    banded, structured_inputs.dia_format) and bsr as
    blocks by default, runtime.structured_inputs; others via coo), validated. A dia,
    bsr, lil or dok matrix asked for as csr or csc under a semiring whose zero is 0
    is made so by scipy's own conversion (an O(entries) pass in C; its explicit
    zeros, which scipy may drop, read as the zero they are), then checked as csr."""
    import scipy.sparse as sp   # lazily: scipy.sparse is heavy to import

    if not sp.issparse(m):
        raise InputError(f"tensor {name!r}: from_scipy needs a scipy.sparse matrix "
                         f"or array, got {type(m).__name__}")
    if m.format in ("csr", "csc") and m.ndim == 2:
        return _from_scipy_compressed(m, format or m.format, sr, name)
    layout = _compressed(format)
    if layout and m.format in ("dia", "bsr", "lil", "dok") and sr.zero == 0:
        if m.format in ("dia", "bsr"):      # (scipy's conversion trusts their arrays)
            m = checked_scipy(m, f"tensor {name!r} (scipy {m.format} input)")
        return _from_scipy_compressed(m.tocsr() if layout == "csr" else m.tocsc(), layout,
                                      sr, name)
    if m.format in ("dia", "bsr"):             # runtime.structured_inputs
        m = checked_scipy(m, f"tensor {name!r} (scipy {m.format} input)")
        fmt = Format.parse(format or (dia_format(m) if m.format == "dia" else "blocks"), 2)
        got = (from_dia if m.format == "dia" else from_bsr)(m, fmt, sr, name)
        if got is not None:
            return Parts(m.shape, fmt, _narrowest(got[0], m.shape, len(got[1])), got[1],
                         sr.zero)
        format = fmt
    if m.format != "coo":
        m = m.tocoo()
    return _from_scipy_coo(m, format or "coo", sr, name)


def _compressed(format) -> str | None:
    """"csr" or "csc" when `format` (a name or Format) is that 2-d format, else None."""
    for name in ("csr", "csc"):
        if format == name or format == Format.named(name, 2):   # (any order: no parse)
            return name
    return None


def _from_scipy_compressed(m, format, sr, name) -> Parts:
    layout = m.format
    where = f"tensor {name!r} (scipy {layout} input)"
    major = m.shape[0] if layout == "csr" else m.shape[1]
    indptr, indices, data, canonical = compressed_arrays(m, where)
    values = sr.cast(data, what=f"{where} data")
    fmt = format if isinstance(format, Format) else Format.parse(format, 2)
    if not canonical and fmt == Format.named(layout, 2):
        canonical, (indptr, indices, values) = sorted_segments(m.shape, layout, indptr,
                                                               indices, values)
    if canonical and fmt == Format.named(layout, 2):
        levels = ({}, {"pos": _index_dtype(indptr), "crd": _index_dtype(indices)})
        return Parts(m.shape, fmt, levels, values, sr.zero)
    major_ids = np.repeat(np.arange(major, dtype=np.int64), np.diff(indptr))
    pair = (major_ids, indices) if layout == "csr" else (indices, major_ids)
    coords = np.stack([np.asarray(c, dtype=np.int64) for c in pair])
    return from_coords(coords, values, m.shape, fmt, sr, name)


def _from_scipy_coo(m, format, sr, name) -> Parts:
    where = f"tensor {name!r} (scipy coo input)"
    coords = coo_coords(m, where)
    values = sr.cast(np.asarray(m.data), what=f"{where} data")
    if len(coords) == 0:
        coords = np.zeros((0, len(values)), dtype=np.int64)
    return from_coords(coords, values, m.shape, format, sr, name)


# --------------------------------------------------------------------------- out of storage

def storage_coords(t):
    """(coordinates in storage order (order, n), last-level positions) of `t`."""
    positions = np.zeros(1, dtype=np.int64)
    storage = np.zeros((0, 1), dtype=np.int64)
    for k, mode, level in t.format.storage_modes():
        owner, coord, positions = level.unpack(t.levels[k], positions, t.shape[mode])
        storage = np.vstack([storage[:, owner], coord[None, :]])
    return storage, positions


def to_coords(t):
    """(coords (order, n) int64 in logical mode order, values) in storage order."""
    storage, positions = storage_coords(t)
    coords = np.empty_like(storage)
    coords[list(t.format.mode_order)] = storage
    return coords, t.vals[positions]


def to_dense(t):
    """A new ndarray of `t.shape` holding the fill where nothing is stored."""
    if t.format.is_dense:
        storage_shape = tuple(t.shape[m] for m in t.format.mode_order)
        inverse = np.argsort(t.format.mode_order)
        return np.array(t.vals.reshape(storage_shape).transpose(inverse))
    out = np.full(t.shape, t.fill, dtype=t.vals.dtype)
    coords, values = to_coords(t)
    out[tuple(coords)] = values
    return out


def convert(t, fmt: Format) -> Parts:
    """`t`'s stored entries in format `fmt`; under a dense last level, entries equal to
    the fill count as not stored."""
    coords, values = to_coords(t)
    if t.format.levels and t.format.levels[-1].located:   # every coordinate stored
        stored = values != t.fill
        coords, values = coords[:, stored], values[stored]
    storage, values = sort_storage(coords[list(fmt.mode_order)], values)
    levels, vals = _pack(storage, values, t.shape, fmt, t.fill)
    return Parts(t.shape, fmt, levels, vals, t.fill)


def to_scipy(t):
    """A scipy csr_array (csc_array when `t`'s format is csc) of an order-2 `t`."""
    import scipy.sparse as sp   # lazily: scipy.sparse is heavy to import

    layout = "csc" if t.format == Format.named("csc", 2) else "csr"
    parts = convert(t, Format.named(layout, 2)) if t.format != Format.named(layout, 2) else t
    arrays = parts.levels[1]
    make = sp.csc_array if layout == "csc" else sp.csr_array
    copies = (np.array(parts.vals), np.array(arrays["crd"]), np.array(arrays["pos"]))
    return make(copies, shape=t.shape)   # a Tensor's arrays are immutable; scipy's are not


# --------------------------------------------------------------------------- input normalisation

def as_shape(shape, name):
    """`shape` as a tuple of non-negative ints, or InputError naming tensor `name`."""
    try:
        dims = tuple(operator.index(n) for n in shape)
    except TypeError:
        raise InputError(f"tensor {name!r}: shape must be a tuple of ints, "
                         f"got {shape!r}") from None
    if any(n < 0 for n in dims):
        raise InputError(f"tensor {name!r}: shape {dims} has a negative size")
    if any(n > INT64_LIMIT for n in dims):
        raise InputError(f"tensor {name!r}: shape {dims} has a size that does not fit int64")
    return dims


def _as_values(values, sr, name):
    values = sr.cast(values, what=f"tensor {name!r} values")
    if values.ndim != 1:
        raise InputError(f"tensor {name!r}: values must be 1-d, got shape {values.shape}")
    return values


def _as_coords(coords, shape, nnz, name):
    """Coordinates as a validated (order, nnz) int64 array."""
    where = f"tensor {name!r}"
    order = len(shape)
    try:
        coords = np.asarray(coords)
    except ValueError:
        raise InputError(f"{where}: the per-mode coordinate arrays have different "
                         f"lengths") from None
    if order == 0 and coords.size == 0:
        return np.zeros((0, nnz), dtype=np.int64)
    if order == 1 and coords.ndim == 1:
        coords = coords[None, :]
    if coords.ndim != 2 or coords.shape != (order, nnz):
        raise InputError(f"{where}: coordinates must have shape (order, nnz) = "
                         f"({order}, {nnz}), got {coords.shape}")
    if coords.size == 0:
        return coords.astype(np.int64)
    if coords.dtype.kind not in "iu":
        raise InputError(f"{where}: coordinates must be integers, got dtype "
                         f"{coords.dtype}")
    for mode, size in enumerate(shape):
        check_range(coords[mode], size, f"{where}: coordinates of mode {mode}")
    return coords.astype(np.int64)


def _index_dtype(a):
    """Keep int32/int64 index arrays as they are; widen anything else to int64."""
    return a if a.dtype in (np.dtype(np.int32), np.dtype(np.int64)) else a.astype(np.int64)


def _contiguous_axis_order(array):
    """An axis permutation in which `array` is C-contiguous, or None."""
    if array.flags.c_contiguous:
        return tuple(range(array.ndim))
    order = tuple(sorted(range(array.ndim), key=lambda ax: -array.strides[ax]))
    return order if array.transpose(order).flags.c_contiguous else None


def _stored_entries(array, fill):
    """Coordinates (order, n) and values of the entries != fill (NaN included)."""
    stored = (array != fill).reshape(-1)
    flat = np.flatnonzero(stored)
    if array.ndim == 0:
        coords = np.zeros((0, len(flat)), dtype=np.int64)
    else:
        coords = np.stack(np.unravel_index(flat, array.shape)).astype(np.int64)
    return coords, array.reshape(-1)[flat]


# -- helpers: sorting, combining, packing --------------------------------------
def _singleton_split(storage, levels, k):
    """For a non-unique level k: where the coordinates of the singleton levels
    directly below it change, so that each gets its own position (None if none)."""
    end = k + 1
    while end < len(levels) and levels[end].one_per_parent:
        end += 1
    if end == k + 1:
        return None
    below = storage[k + 1:end]
    split = np.ones(storage.shape[1], dtype=bool)
    split[1:] = np.any(below[:, 1:] != below[:, :-1], axis=0)
    return split


def _pack(storage, values, shape, fmt, fill):
    """Level dicts and vals from sorted, unique storage coordinates."""
    levels, parent_ids, n_parents = _pack_structure(storage, shape, fmt)
    vals = _placed(values, parent_ids, n_parents, fill)
    merge = getattr(fmt.levels[-1], "merge", None) if fmt.levels else None
    if merge is not None:                 # formats.level: equal neighbours become one
        levels[-1], vals = merge(levels[-1], vals)
    return _narrowest(tuple(levels), shape), vals


def _pack_structure(storage, shape, fmt):
    """(level dicts, each entry's position in the last level, the positions):
    the structure of sorted, unique storage coordinates, whatever the values."""
    parent_ids = np.zeros(storage.shape[1], dtype=np.int64)
    n_parents = 1
    levels = []
    for k, mode, level in fmt.storage_modes():
        split = None
        if not level.unique:
            split = _singleton_split(storage, fmt.levels, k)
        arrays, parent_ids, n_parents = level.pack(parent_ids, n_parents, storage[k],
                                                   shape[mode], split)
        levels.append(arrays)
    return levels, parent_ids, n_parents


def _placed(values, parent_ids, n_parents, fill):
    """The vals array: each entry's value at its position, `fill` elsewhere."""
    vals = np.full(n_parents, fill, dtype=values.dtype)
    vals[parent_ids] = values
    return vals


def _narrowest(levels, shape, values=0):
    """The index arrays as int32 (no copy of those that are) when every value
    fits: a coordinate is below its dimension, a pos entry at most its level's
    length, a position below the `values` stored (a tile level's positions are
    not the length of any of its arrays)."""
    arrays = [a for lv in levels for a in lv.values()]
    bound = max([0, values, *shape] + [len(a) for a in arrays])
    if bound > INT32_LIMIT:
        return levels
    return tuple({k: a.astype(np.int32, copy=False) for k, a in lv.items()} for lv in levels)
