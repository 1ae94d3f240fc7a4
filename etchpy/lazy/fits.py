"""Whether a scipy csr or csc array's index arrays describe it, in one C pass
that reads each pointer and index once (etchpy.lazy.wrap.trusted's fast test).

    fits(indptr, indices, major, minor)  True when indptr runs from 0,
        nondecreasing, to len(indices) and every index lies in 0..minor-1;
        False when not; None without a compiler or for arrays that are not
        1-d C-contiguous int32/int64 of one dtype (the caller checks them by
        runtime.scipy_arrays, which also words the error)

Unlike runtime.checks it does not test that a segment's indices increase:
the steps that call it (scipy's products, conversions and indexing) sum
unsorted and duplicate entries. With no branch per index (the pass keeps one
running flag), the compiler vectorises it.
"""
from __future__ import annotations

import numpy as np

from ..runtime import build
from ..runtime.kernel_cache import kept

_C = r"""
#include <stdint.h>
#define EP_FITS(T, U)                                                              \
int etchpy_fits_##T(const T *restrict pos, int64_t major, const T *restrict crd,   \
                    int64_t nnz, int64_t minor)                                    \
{                                                                                  \
    if (pos[0] != 0 || pos[major] != nnz) return 0;                                \
    int bad = 0;                                                                   \
    for (int64_t p = 0; p < major; p++) bad |= pos[p + 1] < pos[p];                \
    const uint64_t half = (uint64_t)((U)-1 / 2) + 1;   /* the negative ones, cast */\
    const U cap = (U)((uint64_t)minor < half ? (uint64_t)minor : half);            \
    U over = 0;                                                                    \
    for (int64_t q = 0; q < nnz; q++) over |= (U)((U)crd[q] >= cap);               \
    return !bad && !over;                                                          \
}
EP_FITS(int32_t, uint32_t)
EP_FITS(int64_t, uint64_t)
"""
_CDEF = "\n".join(f"int etchpy_fits_{t}(const {t} *, int64_t, const {t} *, int64_t, int64_t);"
                  for t in ("int32_t", "int64_t"))
_IDX = {np.dtype(np.int32): "int32_t", np.dtype(np.int64): "int64_t"}
_entries: dict = {}


@kept("helper.lazy_fits")
def _library():
    """The loaded pass (built on first need), or None without a compiler."""
    return build.load_helper(_C, _CDEF, "etchpy_lazy_fits")


def _entry(dtype):
    got = _entries.get(dtype)
    if got is None and dtype in _IDX:
        lib = _library()
        if lib is None:
            return None
        got = _entries[dtype] = (getattr(lib.lib, f"etchpy_fits_{_IDX[dtype]}"),
                                 lib.ffi.typeof(f"{_IDX[dtype]}[]"), lib.ffi.from_buffer)
    return got


def fits(indptr, indices, major: int, minor: int):
    """See the module docstring."""
    got = _entry(indptr.dtype)
    if (got is None or indices.dtype != indptr.dtype or indptr.ndim != 1 or indices.ndim != 1
            or len(indptr) != major + 1
            or not (indptr.flags.c_contiguous and indices.flags.c_contiguous)):
        return None
    fn, array_type, buf = got
    held = indices if len(indices) else np.zeros(1, dtype=indices.dtype)
    return bool(fn(buf(array_type, indptr), major, buf(array_type, held), len(indices), minor))
