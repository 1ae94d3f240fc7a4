"""Tensors in level formats: building, validating and listing their storage.

A `Tensor` holds a logical `shape`, a `Format`, one dict of index arrays per
storage level, the values `vals` (one per position of the last level) and the
implicit `fill` value (the semiring's zero). Storage level k holds logical mode
`format.mode_order[k]`.

    Dense level        {}                          children of p: p*n + i, i < n
    Compressed level   {"pos": ..., "crd": ...}    children of p: pos[p]..pos[p+1]-1
    Singleton level    {"crd": ...}                child of p: p, coordinate crd[p]

Level -1 has the single position 0; an order-0 tensor has no levels and one
value. Index arrays are int32 or int64: built here, they are int32 whenever every
coordinate and position fits (so kernels load half the index bytes), else int64;
scipy input keeps its own dtype so that it can be shared without a copy.

The per-level work (packing sorted coordinates, listing children, checking
arrays) lives in the level classes of `etchpy.formats`; this module composes
them and handles the numpy and scipy conversions.
"""
from __future__ import annotations

import operator

import numpy as np

from .checks import check_compressed
from ..errors import InputError
from ..formats import Compressed, Dense, Format, Singleton
from ..formats.compressed import (check_pointers, check_range, first_order_violation,
                                 index_array)
from ..semiring import semirings


class Tensor:
    """A tensor stored level by level; see the module docstring for the layout."""

    def __init__(self, shape, format, levels, vals, fill=0.0, *, validate=True,
                 name="tensor"):
        self.name = str(name)
        self.shape = _as_shape(shape, self.name)
        self.format = Format.parse(format, len(self.shape))
        self.levels = tuple(_as_level_dict(lv, self.name) for lv in levels)
        self.vals = np.asarray(vals)
        self.fill = _as_fill(fill, self.vals.dtype, self.name)
        if validate:
            self.validate()

    # -- basic properties ------------------------------------------------------
    @property
    def order(self) -> int:
        return len(self.shape)

    @property
    def nnz(self) -> int:
        """Number of stored values (for a dense last level, fill included)."""
        return len(self.vals)

    @property
    def dtype(self) -> np.dtype:
        return self.vals.dtype

    def __repr__(self):
        return (f"Tensor({self.name!r}, shape={self.shape}, format={self.format}, "
                f"nnz={self.nnz}, dtype={self.dtype})")

    # -- construction ----------------------------------------------------------
    @classmethod
    def from_coords(cls, coords, values, shape, format="coo", *, semiring=None,
                    name="tensor"):
        """Build from coordinates (order, nnz) and values (nnz,).

        Duplicate coordinates are combined with the semiring's add; stored values
        equal to the fill are kept.
        """
        sr = semiring or semirings.real
        shape = _as_shape(shape, name)
        fmt = Format.parse(format, len(shape))
        values = _as_values(values, sr, name)
        coords = _as_coords(coords, shape, len(values), name)
        storage = coords[list(fmt.mode_order)]
        storage, values = _sort_storage(storage, values)
        storage, values = _combine_duplicates(storage, values, sr.add.py)
        levels, vals = _pack(storage, values, shape, fmt, sr.zero)
        return cls(shape, fmt, levels, vals, sr.zero, validate=False, name=name)

    @classmethod
    def from_dense(cls, array, format=None, *, semiring=None, name="tensor"):
        """Build from a numpy array.

        All-dense formats share the array's memory when its layout allows: with
        `format=None` any axis permutation in which the array is contiguous is
        used as the mode order. Sparse formats store the entries != fill.
        """
        sr = semiring or semirings.real
        array = sr.cast(np.asarray(array), what=f"tensor {name!r} values")
        if format is None:
            return cls._from_dense_layout(array, _contiguous_axis_order(array), sr, name)
        fmt = Format.parse(format, array.ndim)
        if fmt.is_dense:
            return cls._from_dense_layout(array, fmt.mode_order, sr, name, fmt)
        coords, values = _stored_entries(array, sr.zero)
        return cls.from_coords(coords, values, array.shape, fmt, semiring=sr, name=name)

    @classmethod
    def _from_dense_layout(cls, array, mode_order, sr, name, fmt=None):
        """All-dense tensor; `mode_order` None means copy to C order."""
        if mode_order is None:
            array = np.ascontiguousarray(array)
            mode_order = tuple(range(array.ndim))
        if fmt is None:
            identity = tuple(mode_order) == tuple(range(array.ndim))
            fmt = Format([Dense()] * array.ndim, mode_order,
                         name="dense" if identity else None)
        storage = np.ascontiguousarray(array.transpose(fmt.mode_order))
        levels = tuple({} for _ in range(array.ndim))
        return cls(array.shape, fmt, levels, storage.reshape(-1), sr.zero,
                   validate=False, name=name)

    @classmethod
    def from_scipy(cls, m, format=None, *, semiring=None, name="tensor"):
        """Build from a scipy.sparse matrix or array (csr, csc, coo; others via coo).

        The default format follows the input (csr, csc, else coo). Canonical
        csr/csc input read in its own layout is shared without copying. The
        input is always validated and never modified.
        """
        import scipy.sparse as sp

        sr = semiring or semirings.real
        if not sp.issparse(m):
            raise InputError(f"tensor {name!r}: from_scipy needs a scipy.sparse matrix "
                             f"or array, got {type(m).__name__}")
        if m.format in ("csr", "csc") and m.ndim == 2:
            return cls._from_scipy_compressed(m, format or m.format, sr, name)
        if m.format != "coo":
            m = m.tocoo()
        return cls._from_scipy_coo(m, format or "coo", sr, name)

    @classmethod
    def _from_scipy_compressed(cls, m, format, sr, name):
        layout = m.format
        where = f"tensor {name!r} (scipy {layout} input)"
        major, minor = m.shape if layout == "csr" else m.shape[::-1]
        indptr = index_array(m.indptr, f"{where}: indptr")
        indices = index_array(m.indices, f"{where}: indices")
        data = np.asarray(m.data)
        if data.ndim != 1 or len(data) != len(indices):
            raise InputError(f"{where}: data has shape {data.shape} but indices has "
                             f"{len(indices)} entries; they must match")
        parents = "rows" if layout == "csr" else "columns"
        fast = check_compressed(indptr, indices, major, minor)
        if fast is None or fast[0] not in (0, 5):
            check_pointers(indptr, major, len(indices), where, pos_name="indptr",
                           crd_name="indices", parents=parents)
            check_range(indices, minor, f"{where}: indices")
            if fast is not None:   # the compiled check saw a problem the numpy one missed
                raise InputError(f"{where}: malformed indptr/indices (check code "
                                 f"{fast[0]} at {fast[1]})")
        values = sr.cast(data, what=f"{where} data")
        fmt = format if isinstance(format, Format) else Format.parse(format, 2)
        canonical = fast[0] == 0 if fast is not None and fast[0] in (0, 5) else \
            first_order_violation(indptr, indices, strict=True) < 0
        if canonical and fmt == Format.named(layout, 2):
            levels = ({}, {"pos": _index_dtype(indptr), "crd": _index_dtype(indices)})
            return cls(m.shape, fmt, levels, values, sr.zero, validate=False, name=name)
        major_ids = np.repeat(np.arange(major, dtype=np.int64), np.diff(indptr))
        pair = (major_ids, indices) if layout == "csr" else (indices, major_ids)
        coords = np.stack([np.asarray(c, dtype=np.int64) for c in pair])
        return cls.from_coords(coords, values, m.shape, fmt, semiring=sr, name=name)

    @classmethod
    def _from_scipy_coo(cls, m, format, sr, name):
        where = f"tensor {name!r} (scipy coo input)"
        coords = getattr(m, "coords", None)
        if coords is None:
            coords = (m.row, m.col)
        data = np.asarray(m.data)
        for mode, c in enumerate(coords):
            index_array(np.asarray(c), f"{where}: coordinates of mode {mode}")
            if len(c) != len(data):
                raise InputError(f"{where}: mode {mode} has {len(c)} coordinates but "
                                 f"data has {len(data)} entries")
        values = sr.cast(data, what=f"{where} data")
        if len(coords) == 0:
            coords = np.zeros((0, len(values)), dtype=np.int64)
        return cls.from_coords(coords, values, m.shape, format, semiring=sr, name=name)

    # -- listing and conversion ------------------------------------------------
    def to_coords(self):
        """(coords, values) of every stored position, in storage order.

        coords has shape (order, n), int64, rows in logical mode order.
        """
        storage, positions = self._storage_coords()
        coords = np.empty_like(storage)
        coords[list(self.format.mode_order)] = storage
        return coords, self.vals[positions]

    def to_dense(self):
        """A new ndarray of `shape` holding the fill where nothing is stored."""
        if self.format.is_dense:
            storage_shape = tuple(self.shape[m] for m in self.format.mode_order)
            inverse = np.argsort(self.format.mode_order)
            return np.array(self.vals.reshape(storage_shape).transpose(inverse))
        out = np.full(self.shape, self.fill, dtype=self.dtype)
        coords, values = self.to_coords()
        out[tuple(coords)] = values
        return out

    def convert(self, format):
        """This tensor in another format (itself when the format is the same).

        Stored entries are kept; under a dense last level, entries equal to the
        fill count as not stored.
        """
        fmt = Format.parse(format, self.order)
        if fmt == self.format:
            return self
        coords, values = self.to_coords()
        if self.format.levels and isinstance(self.format.levels[-1], Dense):
            stored = values != self.fill
            coords, values = coords[:, stored], values[stored]
        storage, values = _sort_storage(coords[list(fmt.mode_order)], values)
        levels, vals = _pack(storage, values, self.shape, fmt, self.fill)
        return Tensor(self.shape, fmt, levels, vals, self.fill, validate=False,
                      name=self.name)

    def to_scipy(self, *, keep_fill=False):
        """A scipy csr_array (csc_array when the format is csc); order 2 only.

        scipy reads missing entries as 0, so a tensor whose fill is not 0 (a
        min_plus result, say) is refused unless `keep_fill=True` says the caller
        knows that the missing entries mean `fill`.
        """
        import scipy.sparse as sp

        if self.order != 2:
            raise InputError(f"tensor {self.name!r}: to_scipy needs order 2, "
                             f"got order {self.order}")
        if self.fill != 0 and not keep_fill:
            raise InputError(f"tensor {self.name!r}: its fill value is {self.fill}, "
                             f"but scipy.sparse reads missing entries as 0")
        layout = "csc" if self.format == Format.named("csc", 2) else "csr"
        t = self.convert(layout)
        arrays = t.levels[1]
        build = sp.csc_array if layout == "csc" else sp.csr_array
        return build((t.vals, arrays["crd"], arrays["pos"]), shape=self.shape)

    # -- validation ------------------------------------------------------------
    def validate(self):
        """Check every structural invariant; raise InputError naming the problem.

        The per-level checks also make the stored coordinate tuples strictly
        increase in storage order: dense and compressed levels order each
        segment, every non-unique level is followed by a singleton level (see
        Format), and a singleton level orders each run of its parent.
        """
        where = f"tensor {self.name!r}"
        if len(self.levels) != self.order:
            raise InputError(f"{where}: format {self.format} has {self.order} levels "
                             f"but {len(self.levels)} level dicts were given")
        if self.vals.ndim != 1 or self.vals.dtype.kind not in "biuf":
            raise InputError(f"{where}: vals must be a 1-d numeric array, got shape "
                             f"{self.vals.shape} and dtype {self.vals.dtype}")
        # Runs (positions with equal coordinates at every level so far) are
        # tracked down to the last singleton level, which checks its order
        # within each run of its parent; `trail` keeps (owner, coord) per level
        # to name the coordinates of a bad entry.
        last_singleton = max((k for k, lv in enumerate(self.format.levels)
                              if isinstance(lv, Singleton)), default=-1)
        run_id = np.zeros(1, dtype=np.int64)
        run_starts = np.ones(1, dtype=bool)
        trail = []
        n_positions = 1
        for k, mode, level in self.format.storage_modes():
            level_where = f"{where} level {k} ({level}, mode {mode})"
            n_parents = n_positions
            if isinstance(level, Singleton):
                n_positions = level.check(
                    self.levels[k], n_parents, self.shape[mode], level_where,
                    parent_runs=run_starts, coords_above=lambda p: _coords_of(trail, p))
            else:
                n_positions = level.check(self.levels[k], n_parents, self.shape[mode],
                                          level_where)
            if k < last_singleton:
                run_id, run_starts = _runs(level, self.levels[k], n_parents,
                                           self.shape[mode], run_id, trail)
        if len(self.vals) != n_positions:
            raise InputError(f"{where}: vals has {len(self.vals)} entries but the last "
                             f"level has {n_positions} positions")

    def _storage_coords(self):
        """(coordinates in storage order (order, n), last-level positions)."""
        positions = np.zeros(1, dtype=np.int64)
        storage = np.zeros((0, 1), dtype=np.int64)
        for k, mode, level in self.format.storage_modes():
            owner, coord, positions = level.unpack(self.levels[k], positions,
                                                   self.shape[mode])
            storage = np.vstack([storage[:, owner], coord[None, :]])
        return storage, positions


def _runs(level, arrays, n_parents, size, parent_run_id, trail):
    """Runs of a (validated) level's positions: consecutive positions with equal
    coordinates at this level and every level above. Returns (run id, run start
    flag) per position and appends (owner, coord) to `trail`."""
    owner, coord, _ = level.unpack(arrays, np.arange(n_parents, dtype=np.int64), size)
    above = parent_run_id[owner]
    starts = np.ones(len(coord), dtype=bool)
    starts[1:] = (above[1:] != above[:-1]) | (coord[1:] != coord[:-1])
    trail.append((owner, coord))
    return np.cumsum(starts, dtype=np.int64) - 1, starts


def _coords_of(trail, p):
    """Storage coordinates of position p of the last level in `trail`."""
    coords = []
    for owner, coord in reversed(trail):
        coords.append(int(coord[p]))
        p = owner[p]
    return tuple(reversed(coords))


# -- helpers: input normalisation ----------------------------------------------
def _as_shape(shape, name):
    try:
        dims = tuple(operator.index(n) for n in shape)
    except TypeError:
        raise InputError(f"tensor {name!r}: shape must be a tuple of ints, "
                         f"got {shape!r}") from None
    if any(n < 0 for n in dims):
        raise InputError(f"tensor {name!r}: shape {dims} has a negative size")
    return dims


def _as_level_dict(level, name):
    if not isinstance(level, dict):
        raise InputError(f"tensor {name!r}: each level is a dict of arrays, "
                         f"got {type(level).__name__}")
    return {key: np.asarray(a) for key, a in level.items()}


def _as_fill(fill, dtype, name):
    try:
        return dtype.type(fill)
    except (TypeError, ValueError, OverflowError):
        raise InputError(f"tensor {name!r}: fill {fill!r} is not a value of "
                         f"dtype {dtype}") from None


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
def _lexicographic_steps(storage):
    """Sign of the lexicographic step between consecutive columns (-1, 0 or 1)."""
    n = storage.shape[1]
    if storage.shape[0] == 0 or n < 2:
        return np.zeros(max(n - 1, 0), dtype=np.int64)
    step = np.sign(np.diff(storage, axis=1))
    first = (step != 0).argmax(axis=0)
    return step[first, np.arange(n - 1)]


def _sort_storage(storage, values):
    """Sort entries lexicographically by storage coordinates (stable)."""
    if storage.shape[0] == 0 or storage.shape[1] < 2:
        return storage, values
    key = _linear_key(storage)
    if key is None:
        if np.all(_lexicographic_steps(storage) >= 0):
            return storage, values
        perm = np.lexsort(storage[::-1])
    else:
        if np.all(key[1:] >= key[:-1]):
            return storage, values
        perm = _stable_argsort(key)
    # take, not storage[:, perm]: numpy's mixed slice/array indexing is ~6x slower
    return storage.take(perm, axis=1), values[perm]


def _linear_key(storage):
    """Row-major linear index of each column (same order as lexicographic), or
    None when it could overflow int64."""
    dims = [int(d) + 1 for d in storage.max(axis=1)]
    if int(np.prod(dims, dtype=object)) >= 2**62:
        return None
    return np.ravel_multi_index(tuple(storage), dims)


def _stable_argsort(key):
    """np.argsort(key, kind="stable") for a nonnegative int64 key. When key and
    position fit in one int64 together, they are packed and sorted with np.sort
    (ties fall in position order), which is several times faster than numpy's
    stable argsort of int64 (a timsort): 17 against 146 ms for 1e6 keys."""
    n = len(key)
    shift = max(n - 1, 1).bit_length()
    if int(key.max()).bit_length() + shift > 62:
        return np.argsort(key, kind="stable")
    packed = (key << shift) | np.arange(n, dtype=np.int64)
    packed.sort()
    return packed & ((1 << shift) - 1)


def _combine_duplicates(storage, values, add):
    """Merge runs of equal (sorted) coordinates with `add`."""
    n = storage.shape[1]
    if n == 0:
        return storage, values
    new = np.ones(n, dtype=bool)
    new[1:] = np.any(storage[:, 1:] != storage[:, :-1], axis=0)
    starts = np.flatnonzero(new)
    if len(starts) == n:
        return storage, values
    if isinstance(add, np.ufunc):
        combined = add.reduceat(values, starts).astype(values.dtype, copy=False)
    else:
        combined = _reduce_groups(values, starts, add)
    return storage.take(starts, axis=1), combined


def _reduce_groups(values, starts, add):
    """Per-group fold with a non-ufunc `add` (only the groups with duplicates)."""
    out = values[starts].copy()
    ends = np.append(starts[1:], len(values))
    for g in np.flatnonzero(ends - starts > 1):
        acc = values[starts[g]]
        for v in values[starts[g] + 1:ends[g]]:
            acc = add(acc, v)
        out[g] = acc
    return out


def _singleton_split(storage, levels, k):
    """For a non-unique level k: where the coordinates of the singleton levels
    directly below it change, so that each gets its own position (None if none)."""
    end = k + 1
    while end < len(levels) and isinstance(levels[end], Singleton):
        end += 1
    if end == k + 1:
        return None
    below = storage[k + 1:end]
    split = np.ones(storage.shape[1], dtype=bool)
    split[1:] = np.any(below[:, 1:] != below[:, :-1], axis=0)
    return split


def _pack(storage, values, shape, fmt, fill):
    """Level dicts and vals from sorted, unique storage coordinates."""
    parent_ids = np.zeros(storage.shape[1], dtype=np.int64)
    n_parents = 1
    levels = []
    for k, mode, level in fmt.storage_modes():
        split = None
        if isinstance(level, Compressed) and not level.unique:
            split = _singleton_split(storage, fmt.levels, k)
        arrays, parent_ids, n_parents = level.pack(parent_ids, n_parents, storage[k],
                                                   shape[mode], split)
        levels.append(arrays)
    vals = np.full(n_parents, fill, dtype=values.dtype)
    vals[parent_ids] = values
    return _narrowest(tuple(levels), shape), vals


INT32_LIMIT = 2**31 - 1


def _narrowest(levels, shape):
    """The index arrays as int32 when every value fits: a coordinate is below its
    dimension and a pos entry at most its level's length."""
    arrays = [a for lv in levels for a in lv.values()]
    bound = max([0, *shape] + [len(a) for a in arrays])
    if bound > INT32_LIMIT:
        return levels
    return tuple({k: a.astype(np.int32) for k, a in lv.items()} for lv in levels)
