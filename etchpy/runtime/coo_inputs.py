"""Coordinate inputs read as they are: scipy coo and pydata COO for a coo tensor.

A tensor declared "coo" is stored as (compressed non-unique, singleton...,
singleton): pos0 = [0, n], one crd array per mode, vals. A scipy `coo_array` /
`coo_matrix` or a pydata `sparse.COO` *is* that layout when its entries are in
row-major order without repeats, whatever its own flags say (scipy's
has_canonical_format, pydata's sorted, which can be stale once its arrays are
written). So such an input is bound over its own arrays after one pass in C
(`check`: strictly increasing coordinate tuples, each coordinate inside its
mode), with no copy, no rebuild and no sort. Anything else (out of order,
repeats, out of range, other dtypes, non-contiguous arrays) takes the general
path, which sorts and combines (runtime.convert.from_coords) or raises an
InputError naming the input. The check runs on every call: an input's arrays
may have been written since the last one (proofs_notes/call_plans.md).

    arrays(value)            (coordinate arrays, values) of a coo input, else None
    check(coords, shape)     0 in order, 4 out of range, 5 unsorted or repeated;
                             None without a compiler or for arrays it does not take
    entry(dtype), entry_n(dtype)  the C checks of two modes and of any number
    as_is(value, tv, sr, fused)  its arrays when a kernel may read them as they are
    readable(coords)         1-d C-contiguous index arrays of one dtype and length
"""
from __future__ import annotations

import numpy as np

from .kernel_cache import kept
from . import build
from .checks import same
from .scipy_arrays import carried
from ..formats import Format

_C = r"""
#include <stdint.h>
/* Return codes (*where: the entry): 0 in order and in range; 4 a coordinate
 * outside 0..size-1 of its mode; 5 all in range but not strictly increasing
 * (unsorted or repeated). etchpy_coo2's loop has no branch and accumulates in
 * T (min and max of the columns, a descent flag), so it vectorises; the rows'
 * range is read from the first and last row when no descent was seen.
 * etchpy_coon's pass has no branch either: where the shape has fewer than
 * 2^63 cells, each tuple's row-major key (c0·s1 + c1)·s2 + … against the one
 * before it, which increases strictly exactly when the tuples do, once every
 * coordinate is inside its mode (checked in the same pass); else a descent flag
 * over the tuples, then each mode's min and max. The order is a constant for
 * 1, 3 and 4 modes. Only an input rejected is walked again by ep_find, which
 * says where. */
#define EP_COO(T)                                                               \
static int ep_find_##T(const T *const *crd, int64_t order, int64_t n,          \
                       const int64_t *sizes, int64_t *where)                    \
{                                                                               \
    for (int64_t q = 0; q < n; q++)                                             \
        for (int64_t m = 0; m < order; m++)                                     \
            if ((uint64_t)(int64_t)crd[m][q] >= (uint64_t)sizes[m]) {           \
                *where = q; return 4;                                           \
            }                                                                   \
    for (int64_t q = 1; q < n; q++) {                                           \
        int64_t m = 0;                                                          \
        while (m < order && crd[m][q] == crd[m][q - 1]) m++;                    \
        if (m == order || crd[m][q] < crd[m][q - 1]) { *where = q; return 5; }  \
    }                                                                           \
    return 0;                                                                   \
}                                                                               \
int etchpy_coo2_##T(const T *row, const T *col, int64_t n, int64_t nrows,      \
                    int64_t ncols, int64_t *where)                              \
{                                                                               \
    if (n == 0) return 0;                                                       \
    T lo = col[0], hi = col[0], descent = 0;                                    \
    for (int64_t q = 1; q < n; q++) {                                           \
        const T c = col[q];                                                     \
        lo = c < lo ? c : lo;                                                   \
        hi = c > hi ? c : hi;                                                   \
        descent |= (row[q] < row[q - 1]) | ((row[q] == row[q - 1]) & (c <= col[q - 1])); \
    }                                                                           \
    if (!descent && lo >= 0 && hi < ncols && row[0] >= 0 && row[n - 1] < nrows) \
        return 0;                                                               \
    const T *crd[2] = {row, col};                                               \
    const int64_t sizes[2] = {nrows, ncols};                                    \
    return ep_find_##T(crd, 2, n, sizes, where);                                \
}                                                                               \
static inline __attribute__((always_inline)) int                              \
ep_keyed_##T(const T *const *crd, int64_t order, int64_t n, const int64_t *sizes) \
{                                                                               \
    uint64_t bad = 0;                                                           \
    for (int64_t m = 0; m < order; m++)                                         \
        bad |= (uint64_t)(int64_t)crd[m][0] >= (uint64_t)sizes[m];              \
    for (int64_t q = 1; q < n; q++) {                                           \
        uint64_t key = 0, before = 0;                                           \
        for (int64_t m = 0; m < order; m++) {                                   \
            const uint64_t c = (uint64_t)(int64_t)crd[m][q];                    \
            const uint64_t p = (uint64_t)(int64_t)crd[m][q - 1];                \
            bad |= c >= (uint64_t)sizes[m];                                     \
            key = key * (uint64_t)sizes[m] + c;                                 \
            before = before * (uint64_t)sizes[m] + p;                           \
        }                                                                       \
        bad |= key <= before;                                                   \
    }                                                                           \
    return bad == 0;                                                            \
}                                                                               \
static inline __attribute__((always_inline)) int                              \
ep_descends_##T(const T *const *crd, int64_t order, int64_t n)                 \
{                                                                               \
    int bad = 0;                                                                \
    for (int64_t q = 1; q < n; q++) {                                           \
        int gt = 0, eq = 1;                                                     \
        for (int64_t m = 0; m < order; m++) {                                   \
            const T c = crd[m][q], p = crd[m][q - 1];                           \
            gt |= eq & (c > p);                                                 \
            eq &= (c == p);                                                     \
        }                                                                       \
        bad |= !gt;                                                             \
    }                                                                           \
    return bad;                                                                 \
}                                                                               \
static int ep_in_range_##T(const T *const *crd, int64_t order, int64_t n,      \
                           const int64_t *sizes)                                \
{                                                                               \
    for (int64_t m = 0; m < order; m++) {                                       \
        T lo = crd[m][0], hi = crd[m][0];                                       \
        for (int64_t q = 1; q < n; q++) {                                       \
            const T c = crd[m][q];                                              \
            lo = c < lo ? c : lo;                                               \
            hi = c > hi ? c : hi;                                               \
        }                                                                       \
        if (lo < 0 || (int64_t)hi >= sizes[m]) return 0;                        \
    }                                                                           \
    return 1;                                                                   \
}                                                                               \
int etchpy_coon_##T(const T *const *crd, int64_t order, int64_t n,             \
                    const int64_t *sizes, int64_t *where)                       \
{                                                                               \
    if (n == 0) return 0;                                                       \
    uint64_t cells = 1;                                                         \
    int fits = 1;                                                               \
    for (int64_t m = 0; m < order; m++)                                         \
        fits &= sizes[m] > 0 && !__builtin_mul_overflow(cells, (uint64_t)sizes[m], &cells); \
    if (fits && cells < ((uint64_t)1 << 63)) {                                  \
        const int ok = order == 3 ? ep_keyed_##T(crd, 3, n, sizes)              \
                     : order == 4 ? ep_keyed_##T(crd, 4, n, sizes)              \
                     : order == 1 ? ep_keyed_##T(crd, 1, n, sizes)              \
                     : ep_keyed_##T(crd, order, n, sizes);                      \
        if (ok) return 0;                                                       \
    } else if (!ep_descends_##T(crd, order, n) && ep_in_range_##T(crd, order, n, sizes)) \
        return 0;                                                               \
    return ep_find_##T(crd, order, n, sizes, where);                            \
}
EP_COO(int32_t)
EP_COO(int64_t)
"""
_CDEF = "\n".join(
    f"int etchpy_coo2_{t}(const {t} *, const {t} *, int64_t, int64_t, int64_t, int64_t *);\n"
    f"int etchpy_coon_{t}(const {t} *const *, int64_t, int64_t, const int64_t *, int64_t *);"
    for t in ("int32_t", "int64_t"))
_IDX = {np.dtype(np.int32): "int32_t", np.dtype(np.int64): "int64_t"}
@kept("helper.coo_checks")
def _library():
    """The loaded check library (built on first need, kept in the one store of
    runtime.kernel_cache), or None without a compiler."""
    return build.load_helper(_C, _CDEF, "etchpy_coo_checks")


_entries: dict = {}
_entries_n: dict = {}


def _resolved(table: dict, dtype, make):
    """table[dtype], made once by make(library, C index type); None without a compiler."""
    got = table.get(dtype)
    if got is None:
        lib = _library()
        if lib is None:
            return None
        got = table[dtype] = make(lib, _IDX[dtype])
    return got


def entry(dtype):
    """(order-2 check, cffi array type, where cell) for index dtype `dtype`, resolved
    once; None without a compiler. The where cell is per thread of use: callers
    read it only after a nonzero code, and only for messages."""
    return _resolved(_entries, dtype, lambda lib, t: (
        getattr(lib.lib, f"etchpy_coo2_{t}"), lib.ffi.typeof(f"{t}[]"), lib.ffi.new("int64_t *")))


def entry_n(dtype):
    """(n-mode check, cffi array type, the type of an array of coordinate pointers,
    the library's ffi) for index dtype `dtype`, resolved once; None without a
    compiler. The check is called as fn(pointers, order, n, sizes, where)."""
    return _resolved(_entries_n, dtype, lambda lib, t: (
        getattr(lib.lib, f"etchpy_coon_{t}"), lib.ffi.typeof(f"{t}[]"),
        lib.ffi.typeof(f"{t} *[]"), lib.ffi))


def arrays(value):
    """(tuple of coordinate arrays, one per mode; values) of a scipy coo or pydata
    COO input, else None."""
    if getattr(value, "format", None) != "coo":
        return None
    root = type(value).__module__.partition(".")[0]
    if root == "scipy":
        coords = getattr(value, "coords", None)
        return (coords if coords is not None else (value.row, value.col)), value.data
    if root == "sparse" and hasattr(value, "fill_value"):
        c = value.coords
        return tuple(c[m] for m in range(c.shape[0])), value.data
    return None


def check(coords, shape):
    """0 when `coords` (one 1-d array per mode, all of one length) are strictly
    increasing tuples inside `shape`, 4 when one is out of range, 5 when they are
    in range but unsorted or repeated; None when no compiler is available or the
    arrays are not C-contiguous 1-d int32/int64 arrays of one dtype."""
    if not readable(coords):
        return None
    dtype, n = coords[0].dtype, len(coords[0])
    got = entry(dtype)
    if got is None:
        return None
    fn, array_type, where = got
    lib = _library()
    if len(coords) == 2:
        if n == 0:
            return 0
        return fn(lib.ffi.from_buffer(array_type, coords[0]),
                  lib.ffi.from_buffer(array_type, coords[1]), n, shape[0], shape[1], where)
    if n == 0:
        return 0
    ffi, ctype = lib.ffi, _IDX[dtype]
    held = [ffi.from_buffer(array_type, c) for c in coords]
    ptrs = ffi.new(f"{ctype} *[]", held)
    sizes = ffi.new("int64_t[]", [int(s) for s in shape])
    return getattr(lib.lib, f"etchpy_coon_{ctype}")(ptrs, len(coords), n, sizes,
                                                    ffi.new("int64_t *"))


def as_is(value, tv, sr, fused=False, seen=None):
    """(coordinate arrays, values) of coo input `value` when tensor `tv` (over
    semiring `sr`) can read them as they are: `tv` declared coo of the input's
    order, the values 1-d C-contiguous (of another dtype: cast as scipy_arrays.carried
    casts them, the binding then not the input's own), a pydata fill
    of 0 or the semiring's zero, the coordinates checked in order (`check` = 0),
    or with `fused` (the kernel checks each coordinate as it reads it,
    lower.schedule.coo_checks; any order will do) only 1-d C-contiguous int32 or
    int64 arrays of one dtype and length (`readable`). Else None (the general
    path converts, sorts or words the error). `seen`: the call's record of arrays
    checked in full (checks.check_once): coordinates checked before in this call
    (the same memory, shape) are not checked again."""
    got = arrays(value)
    if got is None or tv.format != Format.named("coo", tv.order):
        return None
    coords, data = got[0], carried(got[1], sr)      # values of another dtype: cast
    shape = tuple(value.shape)
    if (len(coords) != tv.order or len(shape) != tv.order or not tv.order or data is None
            or data.ndim != 1 or not data.flags.c_contiguous or len(data) != len(coords[0])):
        return None
    fill = getattr(value, "fill_value", 0)
    if not (fill == 0 or fill == sr.zero):
        return None
    if fused:
        return (coords, data) if readable(coords) else None
    if any(sh == shape and len(cs) == len(coords) and all(map(same, cs, coords))
           for cs, sh in (() if seen is None else seen.get("coo", ()))):
        return coords, data
    if check(coords, shape) != 0:
        return None
    if seen is not None:
        seen.setdefault("coo", []).append((coords, shape))
    return coords, data


def readable(coords) -> bool:
    """Whether `coords` (one array per mode) are 1-d C-contiguous int32 or int64
    arrays of one dtype and one length: what a kernel may read as crd arrays."""
    dtype = coords[0].dtype if coords else None
    return dtype in _IDX and all(
        c.dtype == dtype and c.ndim == 1 and c.flags.c_contiguous and len(c) == len(coords[0])
        for c in coords)


def roles(coords, data, vals) -> dict:
    """The arrays a kernel reads for a coo input over `coords` and values `vals`
    (`data`, or its truth values): pos0 = [0, n], crd0.., vals."""
    out = {"pos0": np.array([0, len(data)], dtype=coords[0].dtype)}
    for m, c in enumerate(coords):
        out[f"crd{m}"] = c
    out["vals"] = vals
    return out
