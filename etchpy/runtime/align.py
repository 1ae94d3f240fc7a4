"""Columns of different structures aligned for a row predicate (runtime.predicates).

A value predicate over columns that do not share one structure (`A[i, j] <
B[i, j]` of two relations built apart) holds at the entries every column
stores. `aligned` finds them: the column with the fewest entries is listed
and each of its coordinates looked up in the others, whose coordinates are
sorted once per Tensor and kept on it (a Tensor's index arrays never change:
runtime.tensor). The result, a structure (the entries found, in the first
column's format) and for each column the positions of those entries among
its own values, is kept on the first column's Tensor for that tuple of
Tensors (`reuse`), so a later call on the same Tensors only gathers their
current values at those positions: values written in place are read as they
are, and another Tensor (another structure) is aligned afresh. A kernel that
reads its columns through positions (CompareVar.through: expr.through) gets
`through`'s instead: the same alignment's positions, kept, and no gather.
proofs_notes/predicates.md ("Aligned columns").
"""
from __future__ import annotations

import collections
import math
import weakref

import numpy as np

from ..errors import InputError
from ..semiring import Semiring
from ..settings import LIMITS
from .convert import storage_coords
from .tensor import Tensor


def aligned(tv, ts: list, sr: Semiring, reuse: bool = True, fresh: bool = False):
    """(structure, [values of ts[1:] at its entries]) for the row predicate `tv`
    over Tensors `ts` (see the module docstring); the structure's values are
    ts[0]'s there (ts[0] itself when every one of its entries is found).
    `fresh`: some of ts were made for this call (a scipy input's), so the
    alignment is also kept by their index arrays (`_by_arrays`)."""
    src = ts[0]
    levels, where, _ = _kept(tv, ts, reuse, fresh)
    vals = [t.vals if w is None else t.vals[w] if len(t.vals) else
            np.zeros(len(w), t.vals.dtype) for t, w in zip(ts, where)]
    if levels is None:
        return src, vals[1:]
    return Tensor._of((src.shape, src.format, levels, vals[0], src.fill), tv.name), vals[1:]


def through(tv, ts: list, sr: Semiring, reuse: bool = True):
    """(structure, [positions of each of ts]) for a kernel that reads each column
    of the row predicate `tv` through its positions (CompareVar.through): the
    structure of `aligned` (its values zeros, never read), and per Tensor the
    positions of the structure's entries among its values, integers of
    tv.through_view held in an array of the semiring's dtype (of that width),
    each in bounds of that Tensor's values (its own coordinates' positions).
    Nothing is gathered: the kernel reads the values as they are now; made once
    for the same Tensors when `reuse`. InputError when a Tensor holds more
    values than int32 positions reach under an int32 view."""
    src = ts[0]
    levels, where, made = _kept(tv, ts, reuse)
    key = ("through", np.dtype(sr.dtype))
    if key not in made:
        dt = np.dtype(tv.through_view)
        if any(len(t.vals) > np.iinfo(dt).max for t in ts):
            raise InputError(f"comparison {tv.name}: a column holds more than "
                             f"{np.iinfo(dt).max} values, past {dt} positions; compile "
                             f"with ep.Tuning(aligned_in_kernel=False)")
        n = len(src.vals) if levels is None else len(where[0])
        pos = [np.arange(n, dtype=dt) if w is None else
               np.ascontiguousarray(w, dtype=dt) for w in where]
        structure = src if levels is None else Tensor._of(
            (src.shape, src.format, levels, np.zeros(n, sr.dtype), src.fill), tv.name)
        made[key] = (structure, [p.view(sr.dtype) for p in pos])
    return made[key]


def _kept(tv, ts: list, reuse: bool, fresh: bool = False):
    """(the structure's levels, None for ts[0]'s own; per Tensor the positions of
    its entries among its values, None for all in order; a dict of what callers
    made from them), kept on ts[0] for that tuple of Tensors when `reuse`."""
    src = ts[0]          # (the others may be dense: every cell of theirs is an entry)
    if any(lv.roles == () for lv in src.format.levels[1:]) or src.format.is_dense:
        raise InputError(f"comparison {tv.name}: {tv.source} has dense levels, so its "
                         f"columns ({', '.join(c[0] for c in tv.columns)}) must share its "
                         f"structure; give them one (ep.relation(..., values=[...]))")
    memo = src.__dict__.setdefault("_etchpy_aligned", {}) if reuse else {}
    key = tuple(id(t) for t in ts)
    kept = memo.get(key)
    if kept is None or any(r() is not t for r, t in zip(kept[0], ts)):
        found = _by_arrays(ts) if reuse and fresh else None
        kept = (tuple(weakref.ref(t) for t in ts), *(found or _alignment(tv, ts, reuse)), {})
        if reuse:
            if fresh and found is None:
                _keep_by_arrays(ts, kept[1:3])
            for k in [k for k, v in memo.items() if any(r() is None for r in v[0])]:
                del memo[k]                            # another's Tensors are gone
            memo[key] = kept
    return kept[1:]


_BY_ARRAYS: collections.OrderedDict = collections.OrderedDict()   # see _by_arrays


def _arrays(ts: list) -> list:
    return [a for t in ts for lv in t.levels for a in lv.values()]


def _coarse(ts: list) -> tuple:
    return tuple((t.shape, t.format, tuple((a.dtype.str, a.shape) for a in _arrays([t])))
                 for t in ts)


def _by_arrays(ts: list):
    """(levels, positions) of an alignment made for Tensors of the same shapes,
    formats and index arrays (compared with the copies kept: equal contents,
    one pass, no sort), made for an earlier call whose inputs were bound as new
    Tensors (a scipy matrix's arrays are copied into each); else None. At most
    LIMITS.aligned_arrays are kept, the least recently used dropped."""
    hit = _BY_ARRAYS.get(key := _coarse(ts))
    if hit is None:
        return None
    copies, alignment = hit
    if all(np.array_equal(c, a) for c, a in zip(copies, _arrays(ts))):
        _BY_ARRAYS[key] = _BY_ARRAYS.pop(key, hit)     # the most recent (another
        return alignment                               # thread may have dropped it)
    return None


def _keep_by_arrays(ts: list, alignment) -> None:
    """Keep `alignment` for _by_arrays, with a copy of ts' index arrays (in
    place of an earlier one of the same shapes, formats and array sizes)."""
    if LIMITS.aligned_arrays <= 0:
        return
    key = _coarse(ts)
    _BY_ARRAYS.pop(key, None)
    _BY_ARRAYS[key] = ([a.copy() for a in _arrays(ts)], alignment)
    while len(_BY_ARRAYS) > LIMITS.aligned_arrays:
        _BY_ARRAYS.popitem(last=False)


def same_structure(a: Tensor, b: Tensor) -> bool:
    """Do a and b store the same entries in the same positions? By identity of
    their index arrays (immutable: runtime.tensor), else compared once and
    remembered on a while b's arrays live."""
    if a.format != b.format or len(a.vals) != len(b.vals):
        return False
    pairs = [(x[r], y[r]) for x, y in zip(a.levels, b.levels) for r in x]
    if all(p is q for p, q in pairs):
        return True
    memo = a.__dict__.setdefault("_etchpy_same", {})
    if memo.get(id(b)) is b.levels:
        return True
    same = all(np.array_equal(p, q) for p, q in pairs)
    if same:
        memo[id(b)] = b.levels
    return same


def _alignment(tv, ts: list, reuse: bool):
    """(the structure's levels, None for ts[0]'s own; per Tensor the positions of
    the entries found among its values, None for all of them in order)."""
    src = ts[0]
    lead = min(range(len(ts)), key=lambda k: len(ts[k].vals))
    coords, positions = _coords(ts[lead])
    keys = _linear(coords, src.shape)
    found = np.ones(len(keys), dtype=bool)
    pos = []
    for k, t in enumerate(ts):
        if k == lead:
            pos.append(positions)
            continue
        hit, at = _lookup(t, keys, src.shape, reuse)
        found &= hit
        pos.append(at)
    pos = [p[found] for p in pos]
    if lead == 0 and found.all() and np.array_equal(positions, np.arange(len(src.vals))):
        return None, [None] + pos[1:]
    order = np.arange(1, int(found.sum()) + 1, dtype=np.float64)  # exact below 2**53
    made = Tensor.from_coords(coords[:, found], order, src.shape, src.format, name=tv.name)
    perm = np.maximum(made.vals.astype(np.int64) - 1, 0)  # its entries in order; an
    return made.levels, [p[perm] if len(p) else np.zeros(len(perm), np.int64)   # empty
                         for p in pos]                      # slot's (never read): any


def _lookup(t: Tensor, keys: np.ndarray, shape, reuse: bool):
    """(found, position among t's values) of each linear key of `keys` in t."""
    kept = t.__dict__.get("_etchpy_sorted") if reuse else None
    if kept is None or kept[0] != tuple(shape):
        coords, positions = _coords(t)
        kb = _linear(coords, shape)
        order = np.argsort(kb, kind="stable")
        kept = (tuple(shape), kb[order], positions[order])
        if reuse:
            t.__dict__["_etchpy_sorted"] = kept
    _, sorted_keys, order = kept
    if not len(sorted_keys):
        return np.zeros(len(keys), dtype=bool), np.zeros(len(keys), dtype=np.int64)
    at = np.minimum(np.searchsorted(sorted_keys, keys), len(sorted_keys) - 1)
    return sorted_keys[at] == keys, order[at]


def _coords(t: Tensor):
    """(t's stored coordinates (order, n) in logical mode order, the position of
    each among t's values)."""
    storage, positions = storage_coords(t)
    coords = np.empty_like(storage)
    coords[list(t.format.mode_order)] = storage
    return coords, np.asarray(positions, dtype=np.int64)


def _linear(coords: np.ndarray, shape) -> np.ndarray:
    """Coordinates as sortable keys: row-major positions, or records compared
    lexicographically when the positions would pass int64's range."""
    if math.prod(int(n) for n in shape) < 2**63:
        return np.ravel_multi_index(tuple(coords), tuple(int(n) for n in shape)).astype(np.int64)
    return np.rec.fromarrays(list(coords.astype(np.int64)))
