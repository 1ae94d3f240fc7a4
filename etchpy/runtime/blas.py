"""Binds BLAS into a loaded kernel library whose C calls gemm (c.gemm).

The gemm and gemv are Fortran conventions (every argument by pointer,
column-major; int extents, or int64_t ones for an ILP64 library): dgemm, sgemm,
dgemv and sgemv. Their addresses and whether the extents are 64-bit are handed to
the library's `etchpy_blas_bind` once, when it is loaded; a library that is never
bound (no BLAS found) runs its fused loops instead, with the same results up to
rounding. The addresses come from the first of these that works, so that a
first call need not import scipy.linalg (50-250 ms) nor load a second BLAS:

1. the OpenBLAS a numpy wheel bundles (`numpy.libs/libscipy_openblas*.so`), which
   `import numpy` has loaded already: its symbols scipy_dgemm_64_, ... (ILP64) or
   scipy_dgemm_, ...; a lookup, nothing loaded. The BLAS numpy's own `a @ v` calls:
   the same gemv and gemm kernels, and one thread pool in the process, not two
   (Tuning.blas_numpy_first; off, `scipy.linalg.cython_blas`'s capsules come first
   when something imported it already).
2. `scipy.linalg.cython_blas`, when something imported it already: its PyCapsules.
3. the OpenBLAS a scipy wheel bundles (`scipy.libs/libscipy_openblas*.so`, found
   without importing scipy): its symbols scipy_dgemm_, ... (the functions
   cython_blas wraps); loading it takes a millisecond or two.
4. `scipy/linalg/cython_blas*.so` loaded on its own, without running
   scipy.linalg's `__init__` (it imports the scipy package; the module object is
   the one a later `import scipy.linalg` gets).
5. `from scipy.linalg import cython_blas`.
"""
from __future__ import annotations

import ctypes
import importlib.machinery
import importlib.util
import os
import sys
import threading
from pathlib import Path

from ..c.gemm import BIND_SYMBOL

_bound: set[str] = set()
_lock = threading.Lock()
_pointers: dict = {}      # numpy_first -> the addresses (or None)
_source: dict = {}        # numpy_first -> where they came from
NAMES = ("dgemm", "sgemm", "dgemv", "sgemv")


def gemm_pointers(numpy_first: bool = True) -> tuple[int, int, int, int, int] | None:
    """(dgemm, sgemm, dgemv, sgemv) addresses and 1 when they take 64-bit extents
    (else 0), or None without a BLAS (see the module docstring for where they come
    from; numpy_first False: an imported scipy.linalg.cython_blas before numpy's
    OpenBLAS)."""
    if numpy_first not in _pointers:
        found = [("capsules", lambda: _from_capsules(
                     sys.modules.get("scipy.linalg.cython_blas"))),
                 ("numpy", lambda: bundled_library("numpy")),
                 ("bundled", lambda: bundled_library("scipy")),
                 ("capsules", lambda: _from_capsules(load_cython_blas()))]
        if numpy_first:
            found[:2] = found[1::-1]
        pointers = None
        for where, find in found:
            pointers = find()
            if pointers is not None:
                _source[numpy_first] = where
                break
        _pointers[numpy_first] = pointers
    return _pointers[numpy_first]


def source(numpy_first: bool = True) -> str | None:
    """Where the bound addresses came from: "capsules", "numpy" (numpy's OpenBLAS),
    "bundled" (scipy's) or None (not yet, or no BLAS found)."""
    return _source.get(numpy_first)


def _from_capsules(module) -> tuple | None:
    if module is None:
        return None
    api = ctypes.pythonapi
    api.PyCapsule_GetName.restype = ctypes.c_char_p
    api.PyCapsule_GetName.argtypes = [ctypes.py_object]
    api.PyCapsule_GetPointer.restype = ctypes.c_void_p
    api.PyCapsule_GetPointer.argtypes = [ctypes.py_object, ctypes.c_char_p]
    caps = module.__pyx_capi__
    return (*(api.PyCapsule_GetPointer(caps[f], api.PyCapsule_GetName(caps[f]))
              for f in NAMES), 0)


def _package_folder(package: str = "scipy") -> Path | None:
    """The package folder of `package` (scipy or numpy), found without importing it."""
    try:
        spec = importlib.util.find_spec(package)
    except (ImportError, ValueError):
        return None
    return None if spec is None or not spec.origin else Path(spec.origin).parent


def bundled_library(package: str) -> tuple | None:
    """As `gemm_pointers`, the addresses of scipy_dgemm_, ... (scipy_dgemm_64_, ...
    in an ILP64 build, named `libscipy_openblas64_`) in the one OpenBLAS a numpy or
    scipy wheel bundles, or None; numpy's only once numpy is imported (then it is
    loaded already).

        >>> bundled_library("numpy")[-1]      # 1: ILP64, 64-bit extents
    """
    if package == "numpy" and "numpy" not in sys.modules:
        return None
    folder = _package_folder(package)
    if folder is None:
        return None
    libs = folder.parent / f"{package}.libs"
    try:        # os.listdir: pathlib's glob compiles a pattern (about 0.3 ms)
        found = sorted(libs / n for n in os.listdir(libs)
                       if n.startswith("libscipy_openblas") and ".so" in n)
    except OSError:
        return None
    if len(found) != 1:
        return None
    wide = "openblas64_" in found[0].name
    try:
        lib = ctypes.CDLL(str(found[0]))
        pointers = tuple(ctypes.cast(getattr(lib, f"scipy_{f}_64_" if wide else f"scipy_{f}_"),
                                     ctypes.c_void_p).value for f in NAMES)
    except (OSError, AttributeError):
        return None
    return (*pointers, int(wide))


def load_cython_blas():
    """scipy.linalg.cython_blas (step 3, else 4 of the module docstring), or None."""
    folder = _package_folder()
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


def bind(library, c_source: str, numpy_first: bool = True) -> bool:
    """Hand BLAS's gemm to `library` (a runtime.build.Library) when its C source
    calls it; once per shared object (a kernel of Tuning.blas_numpy_first False has
    C text of its own: its banner names the field). True when the library now calls
    BLAS."""
    if BIND_SYMBOL not in c_source:
        return False
    key = str(library.path)
    with _lock:
        if key in _bound:
            return True
        pointers = gemm_pointers(numpy_first)
        if pointers is None:
            return False
        # the same path is the same loaded object (dlopen counts references)
        handle = ctypes.CDLL(key)
        fn = getattr(handle, BIND_SYMBOL)
        fn.argtypes = [ctypes.c_void_p] * 4 + [ctypes.c_int]
        fn.restype = None
        fn(*pointers)
        _bound.add(key)
    return True
