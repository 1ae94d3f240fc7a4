"""The rows a window of a scipy csr/csc operand reads, checked in one C call.

A kernel reading a csr (csc) operand through a window whose rows (columns) are
windowed walks only the segments of the rows it reads: rows r0..r1-1, the
window's rows clipped to the operand. Those rows are what must be well formed
(proofs_notes/windows.md): `check(indptr, indices, r0, r1, minor)` tests, over
the operand's own arrays with no slice and no copy, that
0 <= indptr[r0] <= ... <= indptr[r1] <= nnz (= len(indices)) and that each of
those rows' coordinates lie in 0..minor-1 and strictly increase. The O(1)
facts (indptr's length, first and last entries) are the caller's.

    rows(shape, n, major_mode, major)  (r0, r1) of a window's extended shape
    entry(dtype)                       (C function, cffi array type) or None
    check(indptr, indices, r0, r1, minor)  0 ok, 2 pointers, 4 range, 5 order;
                                       None without a compiler
"""
from __future__ import annotations

import numpy as np

from . import build
from .kernel_cache import kept

_C = r"""
#include <stdint.h>
/* 0: rows r0..r1-1 well formed; 2: pointers decrease or leave 0..nnz;
 * 4: a coordinate outside 0..size-1; 5: coordinates not strictly increasing. */
#define EP_ROWS(T)                                                              \
int etchpy_rows_##T(const T *pos, int64_t r0, int64_t r1, const T *crd,         \
                    int64_t nnz, int64_t size)                                  \
{                                                                               \
    if (r1 <= r0) return 0;                                                     \
    if (pos[r0] < 0 || pos[r0] > nnz) return 2;                                 \
    int bad = 0;                                                                \
    for (int64_t r = r0; r < r1; r++) {                                         \
        const int64_t lo = pos[r], hi = pos[r + 1];                             \
        if (hi < lo || hi > nnz) return 2;                                      \
        if (hi == lo) continue;                                                 \
        bad |= (uint64_t)(int64_t)crd[lo] >= (uint64_t)size;                    \
        for (int64_t q = lo + 1; q < hi; q++)                                   \
            bad |= ((uint64_t)(int64_t)crd[q] >= (uint64_t)size)                \
                   | ((crd[q] <= crd[q - 1]) << 1);                             \
    }                                                                           \
    return bad & 1 ? 4 : bad ? 5 : 0;                                           \
}
EP_ROWS(int32_t)
EP_ROWS(int64_t)
"""
_CDEF = "\n".join(f"int etchpy_rows_{t}(const {t} *, int64_t, int64_t, const {t} *, "
                  f"int64_t, int64_t);" for t in ("int32_t", "int64_t"))
_IDX = {np.dtype(np.int32): "int32_t", np.dtype(np.int64): "int64_t"}


@kept("helper.window_rows")
def _library():
    """The loaded check (built on first need, kept in runtime.kernel_cache's one
    store), or None without a compiler."""
    return build.load_helper(_C, _CDEF, "etchpy_window_rows")


_entries: dict = {}


def entry(dtype):
    """(the check for index dtype `dtype`, its cffi array type), resolved once;
    None without a compiler or for another dtype."""
    got = _entries.get(dtype)
    if got is None and dtype in _IDX:
        lib = _library()
        if lib is None:
            return None
        ctype = _IDX[dtype]
        got = _entries[dtype] = (getattr(lib.lib, f"etchpy_rows_{ctype}"),
                                 lib.ffi.typeof(f"{ctype}[]"))
    return got


def rows(shape: tuple, n: int, major_mode: int, major: int) -> tuple:
    """(r0, r1): the operand's rows (major coordinates) a window with extended
    shape `shape` over an operand of order n reads, clipped to 0..major."""
    ln, lo, step = (shape[k * n + major_mode] for k in (0, 2, 3))
    r0 = min(max(lo, 0), major)
    return r0, (max(r0, min(lo + (ln - 1) * step + 1, major)) if ln else r0)


def check(indptr, indices, r0: int, r1: int, minor: int):
    """The code of rows r0..r1-1 of a csr-like (indptr, indices) with `minor`
    columns (see the module docstring); None without a compiler or for arrays
    that are not 1-d C-contiguous int32/int64 of one dtype."""
    got = entry(indptr.dtype)
    if (got is None or indices.dtype != indptr.dtype or indptr.ndim != 1 or indices.ndim != 1
            or not (indptr.flags.c_contiguous and indices.flags.c_contiguous)):
        return None
    fn, array_type = got
    ffi = _library().ffi
    held = indices if len(indices) else np.zeros(1, dtype=indices.dtype)
    return fn(ffi.from_buffer(array_type, indptr), r0, r1, ffi.from_buffer(array_type, held),
              len(indices), minor)
