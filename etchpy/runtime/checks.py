"""Compiled structural checks of compressed levels (pos/crd), one pass in C.

`check_compressed(pos, crd, n_parents, size)` returns (code, where) with the
codes of codegen_templates/checks.c.j2: 0 ok, 1-4 malformed (the caller
rejects), 5 unsorted or duplicate coordinates within a segment (the caller
canonicalises). It is used on every scipy csr/csc input, so validation costs
one pass over the index arrays. Without a C compiler it returns None and the
callers fall back to their numpy checks.
"""
from __future__ import annotations

import numpy as np

from . import build, cache, fingerprint
from .kernel_cache import kept
from ..version import __version__

@kept("helper.checks")
def _library():
    """The checks' library (its texts from the disk cache when made before), or
    None without a working compiler."""
    request = fingerprint.compiler_fingerprint()        # the source depends on nothing else
    saved = cache.read_manifest("etchpy_checks", request)
    if saved is not None:
        src, cdef = saved["texts"]
    else:
        from ..c.render import checks_source    # c/: not loaded by `import etchpy`
        src, cdef = checks_source(__version__)
        cache.write_manifest("etchpy_checks", request, {"texts": (src, cdef)})
    return build.load_helper(src, cdef, "etchpy_checks")


def check_compressed(pos: np.ndarray, crd: np.ndarray, n_parents: int, size: int):
    """(code, where) for one compressed level, or None when no compiler is available
    or the arrays are not C-contiguous 1-d int32/int64 arrays of one dtype, or pos
    does not hold n_parents + 1 entries (then the caller takes its general path,
    which copies them, or words the error)."""
    check = checker(pos.dtype) if pos.dtype in (np.int32, np.int64) else None
    return None if check is None else check(pos, crd, n_parents, size)


_checkers: dict = {}     # (id(library), dtype) -> (its check, the library: its id stays)


def checker(dtype):
    """check_compressed for index arrays of int32 or int64 `dtype`, its library and entry
    resolved now (a call plan holds it as it holds its kernel's function, not looking
    them up each call), or None without a compiler. The same answers as check_compressed.

        >>> checker(np.int32)(pos, crd, n_parents, size)     # (code, where) or None
    """
    lib = _library()
    if lib is None:
        return None
    dtype = np.dtype(dtype)
    got = _checkers.get((id(lib), dtype))
    if got is None:
        got = _checkers[(id(lib), dtype)] = (_check_of(lib, dtype), lib)
    return got[0]


def _check_of(lib, dtype):
    fn, array_type, where_type = _entry(lib, dtype)
    new, buffer, one = lib.ffi.new, lib.ffi.from_buffer, np.zeros(1, dtype=dtype)

    def check(pos, crd, n_parents: int, size: int):
        if not (pos.dtype == crd.dtype == dtype and pos.ndim == crd.ndim == 1
                and pos.flags.c_contiguous and crd.flags.c_contiguous
                and len(pos) == n_parents + 1):
            return None
        where = new(where_type)
        code = fn(buffer(array_type, pos), n_parents, buffer(array_type, crd if len(crd) else one),
                  len(crd), size, where)
        return code, where[0]
    return check


def _takes(pos: np.ndarray, crd: np.ndarray) -> bool:
    """Whether pos and crd are C-contiguous 1-d int32/int64 arrays of one dtype, as
    the compiled checks and sorts read them."""
    return (pos.dtype == crd.dtype and pos.dtype in (np.int32, np.int64)
            and pos.ndim == 1 and crd.ndim == 1
            and pos.flags.c_contiguous and crd.flags.c_contiguous)


def check_once(seen, pos, crd, vals, n_parents: int, size: int):
    """(check_compressed's answer, whether `vals` were scanned for NaN) for a scipy
    input checked in full, skipped over the arrays (and values) of one checked in
    full before it in this call: `seen`, the call's record of those (a dict; None:
    Tuning.check_twins_once off), to which arrays that pass are added
    (proofs_notes/validation.md, "One full check of shared arrays")."""
    for ip, ix, dv, n, m in () if seen is None else seen.get("compressed", ()):
        if n == n_parents and m == size and same(ip, pos) and same(ix, crd):
            return (0, 0), same(dv, vals)
    res = check_compressed(pos, crd, n_parents, size)
    if seen is not None and res is not None and res[0] == 0:
        seen.setdefault("compressed", []).append((pos, crd, vals, n_parents, size))
    return res, False


def same(x: np.ndarray, y: np.ndarray) -> bool:
    """Whether x and y are the very same memory (address, dtype, shape, strides)."""
    return x is y or (x.__array_interface__["data"][0] == y.__array_interface__["data"][0]
                      and x.dtype == y.dtype and x.shape == y.shape
                      and x.strides == y.strides)


def sort_segments(pos: np.ndarray, crd: np.ndarray, size=None):
    """(crd with each segment's coordinates in increasing order, the int64
    permutation: the position in crd each came from) for a level check_compressed
    found sound but out of order (code 5: the C trusts pos and crd); False where a
    segment repeats a coordinate; None where no compiler is available, the arrays
    are not as check_compressed takes them, or scratch memory is short.

        >>> sort_segments(np.array([0, 3]), np.array([2, 0, 1]))
        (array([0, 1, 2]), array([1, 2, 0]))
    """
    lib = _library()
    if lib is None or not _takes(pos, crd):
        return None
    out, perm = np.empty_like(crd), np.empty(len(crd), dtype=np.int64)
    if not len(crd):
        return out, perm
    ffi = lib.ffi
    array_type = _entry(lib, pos.dtype)[1]
    args = (ffi.from_buffer(array_type, pos), len(pos) - 1, ffi.from_buffer(array_type, crd))
    if size is None:
        fn = getattr(lib.lib, f"etchpy_sort_segments_{array_type.item.cname}")
    else:
        fn = getattr(lib.lib, f"etchpy_count_sort_{array_type.item.cname}")
        args += (size,)
    code = fn(*args, ffi.from_buffer(array_type, out), ffi.from_buffer("int64_t[]", perm))
    return (out, perm) if code == 0 else False if code == 1 else None


def sort_entries(a: np.ndarray, b: np.ndarray, m: int):
    """The stable permutation that orders entries by (a, b), for int64 arrays a
    of values in 0..m-1 (trusted: the caller's bound) and b; None where no
    compiler is available or memory is short (the caller sorts another way).

        >>> sort_entries(np.array([1, 0, 1]), np.array([5, 9, 2]), 2)
        array([1, 2, 0])
    """
    lib = _library()
    if lib is None:
        return None
    a, b = (np.ascontiguousarray(v, dtype=np.int64) for v in (a, b))
    perm = np.empty(len(a), dtype=np.int64)
    if not len(a):
        return perm
    ffi = lib.ffi
    code = lib.lib.etchpy_sort_entries(ffi.from_buffer("int64_t[]", a),
                                       ffi.from_buffer("int64_t[]", b), len(a), m,
                                       ffi.from_buffer("int64_t[]", perm))
    return perm if code == 0 else None


_entries: dict = {}


def _entry(lib, dtype):
    """(function, cffi array type, cffi int64_t* type) for one index dtype, resolved once."""
    got = _entries.get((id(lib), dtype))
    if got is None:
        ctype = "int32_t" if dtype == np.int32 else "int64_t"
        got = (getattr(lib.lib, f"etchpy_check_{ctype}"), lib.ffi.typeof(f"{ctype}[]"),
               lib.ffi.typeof("int64_t *"))
        _entries[(id(lib), dtype)] = got
    return got


_TRANSPOSED = {"csr": "csc", "csc": "csr"}


def transposed(value, tv, sr):
    """A scipy csr (csc) input of a csc (csr) tensor, canonical and of the carrier
    dtype, as scipy's own compiled transposition of it (its other layout, canonical:
    an O(entries + dims) counting pass, no sort); None for anything else. The
    structure is checked first (one compiled pass; values as many as indices):
    scipy's code trusts it."""
    layout = getattr(value, "format", None)
    if (layout in _TRANSPOSED and tv.format.name == _TRANSPOSED[layout]
            and type(value).__module__.startswith("scipy.sparse") and hasattr(value, "indptr")
            and value.ndim == 2 and value.data.dtype == sr.dtype
            and value.data.shape == value.indices.shape):
        major, minor = value.shape if layout == "csr" else value.shape[::-1]
        res = check_compressed(value.indptr, value.indices, major, minor)
        if res is not None and res[0] == 0:     # canonical: safe for scipy's own code
            return value.tocsc() if layout == "csr" else value.tocsr()
    return None
