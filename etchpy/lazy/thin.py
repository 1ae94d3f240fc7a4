"""A sparse input times a dense matrix of 1-16 columns by a C loop that
checks the input's index arrays as it walks them (`Tuning.lazy_thin_loop`).

    product(x, flip, d)  x @ d (x.T @ d when flip) for a csr or csc float64
        array x and a C-contiguous float64 numpy matrix d of 1-16 columns, as
        a new float64 array; None when the loop does not apply (scipy's loop
        runs it after etchpy.lazy.wrap.trusted); an InputError naming
        ep.lazy's operand when x's arrays do not describe it

The loop walks x's stored entries in order, as scipy's csr_matvecs and
csc_matvecs do, and adds each entry's value times a row of d into a row of
the result: a gather (the result's row i sums the rows of d its entries
name, kept in registers: csr X·W, csc Xᵀ·W) or a scatter (the row of d kept
in registers, added into the rows the entries name: csc X·W, csr Xᵀ·W). The
column count is a constant of each loop (one per count, in vectors of four
doubles), where scipy's loop is compiled for any count and any x86-64. The
sums are scipy's, in scipy's order, each product added as a fused
multiply-add where the host has one (proofs_notes/lazy_thin.md).

Its checks are those of etchpy.lazy.fits, made in the same walk: pointers
from 0 to the entries, each no less than the last, and every index below the
other extent. A pointer out of order is clamped into [last, entries] and an
index out of range read as 0 before any read through it, so no read or write
leaves the arrays; the flag is tested once after the walk, and a bad input's
result is dropped for wrap.trusted's error.
"""
from __future__ import annotations

import numpy as np

from ..runtime import build
from ..runtime.kernel_cache import kept
from .wrap import trusted

_C = r"""
#if defined(__clang__)
#pragma STDC FP_CONTRACT ON
#elif defined(__GNUC__)
#pragma GCC optimize ("fp-contract=fast")
#endif
#include <stdint.h>
#include <string.h>
#if !defined(__GNUC__) && !defined(__clang__)
#error "GNU C vector types needed (without them scipy's loop runs)"
#endif
typedef double v4d __attribute__((vector_size(32), aligned(8), may_alias));
#define NV(K) ((K) / 4)
#define LD(p) (*(const v4d *)(p))
#define ST(p, v) (*(v4d *)(p) = (v))
#define TAIL(K) ((K) - NV(K) * 4)
/* the walk's row pointers: e clamped into [s, nnz], a bad one flagged */
#define ROW_END                                                                 \
    int64_t e = pos[i + 1];                                                     \
    bad |= (e < s) | (e > nnz);                                                 \
    e = e < s ? s : (e > nnz ? nnz : e);
/* an entry's index, 0 when out of range (flagged) */
#define ENTRY                                                                   \
    uidx j = (uidx)crd[p];                                                      \
    int ok = j < (uidx)minor;                                                   \
    bad |= !ok;                                                                 \
    j = ok ? j : 0;                                                             \
    const double v = val[p];
#define GATHER(K)                                                               \
    for (int64_t i = 0; i < major; i++) {                                       \
        ROW_END                                                                 \
        v4d acc[NV(K) + 1]; double tail[4];                                     \
        for (int q = 0; q < NV(K); q++) acc[q] = (v4d){0, 0, 0, 0};             \
        for (int c = 0; c < TAIL(K); c++) tail[c] = 0.0;                        \
        for (int64_t p = s; p < e; p++) {                                       \
            ENTRY                                                               \
            const double *r = b + (int64_t)j * (K);                             \
            for (int q = 0; q < NV(K); q++) acc[q] += v * LD(r + 4 * q);        \
            for (int c = 0; c < TAIL(K); c++) tail[c] += v * r[NV(K) * 4 + c];  \
        }                                                                       \
        double *o = y + i * (K);                                                \
        for (int q = 0; q < NV(K); q++) ST(o + 4 * q, acc[q]);                  \
        for (int c = 0; c < TAIL(K); c++) o[NV(K) * 4 + c] = tail[c];           \
        s = e;                                                                  \
    }
#define SCATTER(K)                                                              \
    memset(y, 0, sizeof(double) * (size_t)minor * (size_t)(K));                 \
    for (int64_t i = 0; i < major; i++) {                                       \
        ROW_END                                                                 \
        v4d rv[NV(K) + 1]; double tail[4];                                      \
        const double *r = b + i * (K);                                          \
        for (int q = 0; q < NV(K); q++) rv[q] = LD(r + 4 * q);                  \
        for (int c = 0; c < TAIL(K); c++) tail[c] = r[NV(K) * 4 + c];           \
        for (int64_t p = s; p < e; p++) {                                       \
            ENTRY                                                               \
            double *o = y + (int64_t)j * (K);                                   \
            for (int q = 0; q < NV(K); q++) ST(o + 4 * q, LD(o + 4 * q) + v * rv[q]); \
            for (int c = 0; c < TAIL(K); c++) o[NV(K) * 4 + c] += v * tail[c];  \
        }                                                                       \
        s = e;                                                                  \
    }
#define CASES(BODY)                                                             \
    switch (k) {                                                                \
    case 1: { BODY(1) break; }   case 2: { BODY(2) break; }                     \
    case 3: { BODY(3) break; }   case 4: { BODY(4) break; }                     \
    case 5: { BODY(5) break; }   case 6: { BODY(6) break; }                     \
    case 7: { BODY(7) break; }   case 8: { BODY(8) break; }                     \
    case 9: { BODY(9) break; }   case 10: { BODY(10) break; }                   \
    case 11: { BODY(11) break; } case 12: { BODY(12) break; }                   \
    case 13: { BODY(13) break; } case 14: { BODY(14) break; }                   \
    case 15: { BODY(15) break; } case 16: { BODY(16) break; }                   \
    default: return -1; }
/* 1: y holds the product; 0: x's arrays do not describe it (y is garbage);
 * -1: k is not 1..16 (nothing written) */
#define EP_THIN(NAME, BODY, T, U)                                               \
int etchpy_thin_##NAME##_##T(const T *restrict pos, int64_t major,              \
    const T *restrict crd, const double *restrict val, int64_t nnz,             \
    int64_t minor, int64_t k, const double *restrict b, double *restrict y)     \
{                                                                               \
    typedef U uidx;                                                             \
    if (pos[0] != 0 || pos[major] != nnz || minor < 1) return 0;                \
    int bad = 0;                                                                \
    int64_t s = 0;                                                              \
    CASES(BODY)                                                                 \
    return !bad;                                                                \
}
EP_THIN(gather, GATHER, int32_t, uint32_t)
EP_THIN(scatter, SCATTER, int32_t, uint32_t)
EP_THIN(gather, GATHER, int64_t, uint64_t)
EP_THIN(scatter, SCATTER, int64_t, uint64_t)
"""
_CDEF = "\n".join(
    f"int etchpy_thin_{w}_{t}(const {t} *, int64_t, const {t} *, const double *, int64_t, "
    f"int64_t, int64_t, const double *, double *);"
    for t in ("int32_t", "int64_t") for w in ("gather", "scatter"))
_IDX = {np.dtype(np.int32): "int32_t", np.dtype(np.int64): "int64_t"}
_F64 = np.dtype(np.float64)
COLUMNS = 16                    # the most columns a loop is made for
# (index dtype, gather) -> (C function, the index and value array types, from_buffer)
_entries: dict = {}


@kept("helper.lazy_thin")
def _library():
    """The loaded loops (built on first need), or None without a compiler."""
    return build.load_helper(_C, _CDEF, "etchpy_lazy_thin")


def _entry(dtype, gather: bool):
    got = _entries.get((dtype, gather))
    if got is None and dtype in _IDX:
        lib = _library()
        if lib is None:
            return None
        name = f"etchpy_thin_{'gather' if gather else 'scatter'}_{_IDX[dtype]}"
        got = _entries[dtype, gather] = (getattr(lib.lib, name), lib.ffi.typeof(f"{_IDX[dtype]}[]"),
                                         lib.ffi.typeof("double[]"), lib.ffi.from_buffer)
    return got


def product(x, flip: bool, d):
    """See the module docstring."""
    if (type(d) is not np.ndarray or d.dtype != _F64 or d.ndim != 2
            or not 1 <= d.shape[1] <= COLUMNS or not d.flags.c_contiguous
            or x.format not in ("csr", "csc") or x.dtype != _F64):
        return None
    indptr, indices, data = x.indptr, x.indices, x.data
    gather = (x.format == "csr") != flip
    major, minor = x.shape if x.format == "csr" else x.shape[::-1]
    rows, inner = (major, minor) if gather else (minor, major)
    got = _entry(indptr.dtype, gather)
    if (got is None or d.shape[0] != inner or not (major and minor and len(indices))
            or indices.dtype != indptr.dtype or indptr.ndim != 1 or indices.ndim != 1
            or data.ndim != 1 or len(indptr) != major + 1 or len(data) != len(indices)
            or not (indptr.flags.c_contiguous and indices.flags.c_contiguous
                    and data.flags.c_contiguous)):
        return None
    fn, index_type, double, buf = got
    k = d.shape[1]
    y = np.empty((rows, k))
    done = fn(buf(index_type, indptr), major, buf(index_type, indices), buf(double, data),
              len(indices), minor, k, buf(double, d), buf(double, y))
    if done == 1:
        return y
    trusted(x)          # x's arrays do not describe it: its InputError
    return None         # (not reached: the two checks agree)
