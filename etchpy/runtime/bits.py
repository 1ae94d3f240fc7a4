"""Whether two arrays hold the same bytes, by the C library's memcmp (a table's
kept copies and value-keyed orders, and the values of a planned read of a
stored order, are checked against their values by it)."""
from __future__ import annotations

import ctypes
import ctypes.util
import functools

import numpy as np


def same_bits(a: np.ndarray, b: np.ndarray) -> bool:
    """Whether two arrays of one dtype hold the same bytes (NaN equals NaN; a
    comparison of the bits is several times faster than equal_nan): the C
    library's memcmp where there is one (one pass, no temporary: about half the
    time of numpy's elementwise comparison), else numpy's."""
    if a.shape != b.shape or a.dtype != b.dtype:
        return False
    a, b = np.ascontiguousarray(a), np.ascontiguousarray(b)
    memcmp = _memcmp()
    if memcmp is not None:
        return a.nbytes == 0 or memcmp(a.ctypes.data, b.ctypes.data, a.nbytes) == 0
    kind = f"u{a.itemsize}" if a.itemsize in (1, 2, 4, 8) else "u1"
    return np.array_equal(a.view(kind), b.view(kind))


@functools.cache
def _memcmp():
    """The C library's memcmp through ctypes, or None where it cannot be found."""
    try:
        lib = ctypes.CDLL(ctypes.util.find_library("c") or ctypes.util.find_library("msvcrt"))
        fn = lib.memcmp
    except (OSError, AttributeError, TypeError):
        return None
    fn.restype, fn.argtypes = ctypes.c_int, [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_size_t]
    return fn
