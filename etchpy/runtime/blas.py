"""Binds BLAS into a loaded kernel library whose C calls gemm (c.gemm).

The gemm and gemv are scipy's BLAS, Fortran conventions (every argument by
pointer, column-major, int extents): dgemm, sgemm, dgemv and sgemv. Their
addresses are handed to the library's `etchpy_blas_bind` once, when it is
loaded; a library that is never bound (no scipy) runs its fused loops instead,
with the same results up to rounding. The addresses come from the first of
these that works, so that a first call need not import scipy.linalg (50-250 ms):

1. `scipy.linalg.cython_blas`, when something imported it already: its PyCapsules.
2. the OpenBLAS a scipy wheel bundles (`scipy.libs/libscipy_openblas*.so`, found
   without importing scipy): its symbols scipy_dgemm_, ... (the functions
   cython_blas wraps); about a millisecond.
3. `scipy/linalg/cython_blas*.so` loaded on its own, without running
   scipy.linalg's `__init__` (it imports the scipy package; the module object is
   the one a later `import scipy.linalg` gets).
4. `from scipy.linalg import cython_blas`.
"""
from __future__ import annotations

import ctypes
import importlib.machinery
import importlib.util
import sys
import threading
from pathlib import Path

from ..c.gemm import BIND_SYMBOL

_bound: set[str] = set()
_lock = threading.Lock()
_pointers: list = []
_source: list = []        # where _pointers came from
NAMES = ("dgemm", "sgemm", "dgemv", "sgemv")


def gemm_pointers() -> tuple[int, int, int, int] | None:
    """(dgemm, sgemm, dgemv, sgemv) addresses from scipy's BLAS, or None
    without scipy (see the module docstring for where they come from)."""
    if not _pointers:
        _pointers.append(_from_capsules(sys.modules.get("scipy.linalg.cython_blas"))
                         or _from_bundled_library() or _from_capsules(load_cython_blas()))
    return _pointers[0]


def source() -> str | None:
    """Where the bound addresses came from: "capsules", "bundled" or None (not yet, or
    no scipy)."""
    return _source[0] if _source else None



def _from_capsules(module) -> tuple | None:
    if module is None:
        return None
    api = ctypes.pythonapi
    api.PyCapsule_GetName.restype = ctypes.c_char_p
    api.PyCapsule_GetName.argtypes = [ctypes.py_object]
    api.PyCapsule_GetPointer.restype = ctypes.c_void_p
    api.PyCapsule_GetPointer.argtypes = [ctypes.py_object, ctypes.c_char_p]
    caps = module.__pyx_capi__
    _source[:] = ["capsules"]
    return tuple(api.PyCapsule_GetPointer(caps[f], api.PyCapsule_GetName(caps[f]))
                 for f in NAMES)


def _scipy_folder() -> Path | None:
    """scipy's package folder, found without importing scipy."""
    try:
        spec = importlib.util.find_spec("scipy")
    except (ImportError, ValueError):
        return None
    return None if spec is None or not spec.origin else Path(spec.origin).parent


def _from_bundled_library() -> tuple | None:
    """The addresses of scipy_dgemm_, ... in the one OpenBLAS of a scipy wheel."""
    folder = _scipy_folder()
    if folder is None:
        return None
    found = sorted((folder.parent / "scipy.libs").glob("libscipy_openblas*.so*"))
    if len(found) != 1:
        return None
    try:
        lib = ctypes.CDLL(str(found[0]))
        pointers = tuple(ctypes.cast(getattr(lib, f"scipy_{f}_"), ctypes.c_void_p).value
                         for f in NAMES)
    except (OSError, AttributeError):
        return None
    _source[:] = ["bundled"]
    return pointers


def load_cython_blas():
    """scipy.linalg.cython_blas (step 3, else 4 of the module docstring), or None."""
    folder = _scipy_folder()
    name = "scipy.linalg.cython_blas"
    for suffix in importlib.machinery.EXTENSION_SUFFIXES if folder else ():
        path = folder / "linalg" / f"cython_blas{suffix}"
        if not path.is_file():
            continue
        try:
            loader = importlib.machinery.ExtensionFileLoader(name, str(path))
            module = importlib.util.module_from_spec(
                importlib.util.spec_from_loader(name, loader, origin=str(path)))
            loader.exec_module(module)
        except Exception:       # noqa: BLE001 - any failure: the ordinary import below
            break
        # it registered itself; an `import scipy.linalg.cython_blas` must still run
        # scipy.linalg's __init__ first, which then finds this module object again
        if sys.modules.get(name) is module and "scipy.linalg" not in sys.modules:
            del sys.modules[name]
        return module
    try:
        from scipy.linalg import cython_blas
    except ImportError:
        return None
    return cython_blas


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
