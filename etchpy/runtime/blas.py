"""Binds BLAS into a loaded kernel library whose C calls gemm (c.gemm).

The gemm and gemv come from scipy's BLAS: `scipy.linalg.cython_blas` exports
dgemm, sgemm, dgemv and sgemv as PyCapsules holding C function pointers (Fortran conventions:
every argument by pointer, column-major). Their addresses are handed to the
library's `etchpy_blas_bind` once, when it is loaded; a library that is never
bound (no scipy) runs its fused loops instead, with the same results.
"""
from __future__ import annotations

import ctypes
import threading

from ..c.gemm import BIND_SYMBOL

_bound: set[str] = set()
_lock = threading.Lock()
_pointers: list = []


def gemm_pointers() -> tuple[int, int, int, int] | None:
    """(dgemm, sgemm, dgemv, sgemv) addresses from scipy's BLAS, or None
    without scipy."""
    if not _pointers:
        try:
            from scipy.linalg import cython_blas
        except ImportError:
            _pointers.append(None)
            return None
        api = ctypes.pythonapi
        api.PyCapsule_GetName.restype = ctypes.c_char_p
        api.PyCapsule_GetName.argtypes = [ctypes.py_object]
        api.PyCapsule_GetPointer.restype = ctypes.c_void_p
        api.PyCapsule_GetPointer.argtypes = [ctypes.py_object, ctypes.c_char_p]
        caps = cython_blas.__pyx_capi__
        _pointers.append(tuple(api.PyCapsule_GetPointer(caps[f], api.PyCapsule_GetName(caps[f]))
                               for f in ("dgemm", "sgemm", "dgemv", "sgemv")))
    return _pointers[0]


def bind(library, c_source: str) -> bool:
    """Hand BLAS's gemm to `library` (a runtime.build.Library) when its C source
    calls it; once per shared object. True when the library now calls BLAS."""
    if BIND_SYMBOL not in c_source:
        return False
    key = str(library.path)
    with _lock:
        if key in _bound:
            return True
        pointers = gemm_pointers()
        if pointers is None:
            return False
        # the same path is the same loaded object (dlopen counts references)
        handle = ctypes.CDLL(key)
        fn = getattr(handle, BIND_SYMBOL)
        fn.argtypes = [ctypes.c_void_p] * 4
        fn.restype = None
        fn(*pointers)
        _bound.add(key)
    return True
