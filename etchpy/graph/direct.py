"""BFS levels, components and Bellman-Ford on a scipy.sparse matrix
passed as it is (PageRank: graph.rank_scipy, compiled): its csr arrays go to C
(c.direct_graph) without a copy, a
conversion or a check in Python; the C checks every row pointer and index as
it reads them (and every weight Bellman-Ford reads), so a
malformed matrix, or one whose arrays were written in place since the last
call, gives an InputError, never a crash. Nothing derived from A is kept
between calls; the workspaces (BFS's queue and int32 levels, the buckets'
round numbers) are kept scratch arrays
(runtime.scratch; new ones below LIMITS.scratch_least bytes), whose old
contents are never read, so a call faults in fresh pages for its output alone. A Graph's BFS runs here too (`levels`,
`check`).

    if is_direct(A): levels = bfs(A, source, "A")     # source checked here
    labels = components(A, "A")
    d = distances(A, source, tuning)                    # None: take the Graph path

BFS and components read the pattern only (every stored entry is an edge; its
value is not read). A csr matrix is read as it is, a csc one as it is for
components (its arrays are the csr arrays of Aᵀ, which has the same weak
components); BFS and Bellman-Ford read a coo or csc matrix through its rows
made in C (coo_rows, csc_rows: `Tuning.rows_in_c`); otherwise other formats go
through scipy's `tocsr()`. Unsorted or repeated entries need no canonical order here: a
repeated edge is followed once (BFS, components).
"""
from __future__ import annotations

import re
import sys

import numpy as np

from ..c.direct_graph import CODES, direct_source
from ..errors import InputError
from ..host_facts import narrow_levels
from ..semiring import semirings
from ..runtime import build
from ..runtime.build import environment
from ..runtime.kernel_cache import KERNELS, kept
from ..runtime.scratch import SCRATCH
from ..runtime.scipy_arrays import checked_scipy
from ..tuning import DEFAULT, Tuning
from ..version import __version__
from .adjacency import check_vertex
from .sweep import C_ARRAYS, bucket_plan, library

INDEX_TYPES = (np.dtype(np.int32), np.dtype(np.int64))


@kept("helper.direct_graph")
def _library(idx_type: str):
    """({"bfs", "components", "weights", "check", "coo_rows", "csc_rows"}: C functions, ffi,
    {numpy dtype: its cffi array type}) for index arrays of C type idx_type,
    built (or found in the cache) once per process."""
    name = "etchpy_direct_graph_" + re.sub(r"\W", "_", idx_type)
    c_text, cdef = direct_source(idx_type, name=name, version=__version__)
    lib = build.load(c_text, cdef, name=name)
    kinds = ("bfs", "components", "weights", "check", "coo_rows", "csc_rows")
    types = {np.dtype(d): lib.ffi.typeof(t) for d, t in C_ARRAYS.items()}
    return {k: getattr(lib.lib, f"{name}_{k}") for k in kinds}, lib.ffi, types


# an index array's dtype -> the C type _library is built for
_IDX_TYPES = {np.dtype(d): C_ARRAYS[np.dtype(d)][:-2] for d in INDEX_TYPES}


def is_direct(A) -> bool:
    """Whether A is read by this module: a scipy.sparse matrix or array (none
    can exist before scipy.sparse is imported, so it is not imported here)."""
    sp = sys.modules.get("scipy.sparse")
    return sp is not None and sp.issparse(A)


def arrays(A, name: str, either_way: bool = False):
    """(M, indptr, indices): M, the scipy.sparse matrix A in csr (A itself when
    it is; a csc A too when either_way: its arrays are those of Aᵀ in csr), and
    its index arrays, contiguous of one index dtype: M's own wherever they are.
    Raises InputError naming `name` for non-real values or a non-square shape,
    or arrays whose shapes cannot be a csr matrix's."""
    if A.dtype.kind not in "biuf":
        raise InputError(f"{name} is an adjacency matrix of real weights, not of "
                         f"{A.dtype} values")
    shape = A.shape
    if len(shape) != 2 or shape[0] != shape[1]:
        raise InputError(f"{name} is an adjacency matrix and must be square, not "
                         f"{'x'.join(map(str, shape))}")
    if A.format != "csr" and not (either_way and A.format == "csc"):
        A = checked_scipy(A, name).tocsr()      # scipy's conversion trusts the arrays
    n, pos, crd = shape[0], A.indptr, A.indices
    for what, a in (("indptr", pos), ("indices", crd)):
        if not isinstance(a, np.ndarray) or a.ndim != 1 or a.dtype.kind not in "iu":
            raise InputError(f"{name}.{what} is a 1-d array of integers")
    if len(pos) != n + 1:
        raise InputError(f"{name}.indptr has {len(pos)} entries; a matrix of {n} rows "
                         f"has {n + 1}")
    idt = pos.dtype if pos.dtype == crd.dtype and pos.dtype in INDEX_TYPES else np.int64
    return A, np.ascontiguousarray(pos, dtype=idt), np.ascontiguousarray(crd, dtype=idt)


def remembered(memo: dict, key, make, keep=None):
    """make()'s answer kept in `memo` under `key` while KERNELS holds the same
    entries (its generation), the build environment is the same (what a kept
    maker's key holds, without its cost) and the object `keep` is the one given
    then (a key holding an id); at most 16 answers, then `memo` starts again."""
    env, got, generation = environment(), memo.get(key), KERNELS.generation
    if got is not None and got[0] == generation and got[1] == env and got[2] is keep:
        return got[3]
    if len(memo) >= 16:
        memo.clear()
    made = make()
    memo[key] = (generation, env, keep, made)
    return made


def _lib(dtype):
    """_library's answer for index arrays of `dtype` (remembered)."""
    return remembered(_LAST, dtype, lambda: _library.plain(_IDX_TYPES[dtype]))


# index dtype -> (KERNELS.generation, build environment, None, _library's answer)
_LAST: dict = {}


def _call(kind: str, M, name: str, pos, crd, *args):
    """Call the C function `kind` on (n, nnz, pos, crd, *args, where), arrays
    and None passed as pointers; raise InputError naming the bad array of M
    (`name`) for the C's error codes."""
    fns, ffi, types = _lib(pos.dtype)
    where, buf, null = ffi.new("int64_t[1]"), ffi.from_buffer, ffi.NULL
    idx = types[pos.dtype]
    code = fns[kind](len(pos) - 1, len(crd), buf(idx, pos), buf(idx, crd),
                     *[buf(types[a.dtype], a) if isinstance(a, np.ndarray)
                       else null if a is None else a for a in args], where)
    return _checked(code, kind, where, M, name, pos, crd)


def _checked(code: int, kind: str, where, M, name: str, pos, crd) -> int:
    """code, the C function `kind`'s answer, unless it is an error code (below
    -1): then MemoryError, or InputError naming the bad array of M (`name`)."""
    if code < -1:
        if code == -2:
            raise MemoryError(f"{kind} on {name}: the workspaces could not be allocated")
        if code in _MALFORMED:
            raise _malformed(_MALFORMED[code], int(where[0]), M, name, len(pos) - 1,
                             len(crd))
    return code


_MALFORMED = {code: what for what, code in CODES.items()}


def _malformed(what: str, at: int, M, name: str, n: int, nnz: int) -> InputError:
    if what == "indptr":
        return InputError(f"{name}.indptr is not a row pointer array of {nnz} entries at "
                          f"row {at}: pointers must be nondecreasing within [0, {nnz}]")
    if what == "indices":
        return InputError(f"{name}.indices[{at}] is not a vertex of a graph of {n} "
                          "vertices")
    return InputError(f"{name} has a stored value that is not finite (NaN or inf) at "
                      f"entry {at}")


def bfs(A, source, name: str = "A", tuning: Tuning = DEFAULT) -> np.ndarray:
    """BFS levels from the vertex `source` along A's stored entries A[j, i] as
    edges j -> i; -1 where unreachable (graph.bfs_levels), every level pushed.
    InputError naming `name` or source for a bad matrix or vertex."""
    if A.format in ("coo", "csc") and tuning.rows_in_c:
        got = _pattern_bfs(A, source, name, tuning)
        if got is not None:
            return got
    M, pos, crd = arrays(A, name)
    s = check_vertex(source, M.shape[0])
    return levels(M, pos, crd, None, s, tuning, name)


def _pattern_bfs(A, source, name: str, tuning: Tuning):
    """bfs of a coo or csc matrix through its rows made in C (`rows`), or None when
    `rows` does not take it (the general path then converts or rejects it)."""
    made = rows(A, name, False)
    if made is None:
        return None
    pos, crd, _, taken = made
    try:
        s = check_vertex(source, len(pos) - 1)
        return levels(A, pos, crd, None, s, tuning, name, checked=True, warm=False)
    finally:
        for a in taken:
            SCRATCH.give(a)


def rows(A, name: str, values: bool):
    """(pos, crd, values or None, the scratch arrays to give back): the csr rows of
    the square coo or csc matrix A, made by the C's coo_rows or csc_rows into
    scratch arrays (every index and pointer checked, a stable counting sort on
    the rows, no sort within them, no sum of repeats; float64 values when
    `values`), or None when A's arrays are not two contiguous index arrays of
    one dtype and the right lengths (and values of as many entries): the
    general path then converts (or rejects) it. InputError naming A's array
    for an index out of range or bad pointers."""
    shape, coo = A.shape, A.format == "coo"
    a, b = (getattr(A, "row", None), getattr(A, "col", None)) if coo else (A.indptr, A.indices)
    if A.dtype.kind not in "biuf" or len(shape) != 2 or shape[0] != shape[1] \
            or not all(isinstance(x, np.ndarray) and x.ndim == 1 and x.flags.c_contiguous
                       for x in (a, b)) \
            or a.dtype != b.dtype or a.dtype not in INDEX_TYPES \
            or len(a) != (len(b) if coo else shape[0] + 1) \
            or (a.dtype == np.int32 and len(b) >= 2**31 - 1) \
            or (values and len(A.data) != len(b)):
        return None
    n, nnz, idt = shape[0], len(b), a.dtype
    fns, ffi, types = _lib(idt)
    idx, buf, null, where = types[idt], ffi.from_buffer, ffi.NULL, ffi.new("int64_t[1]")
    val = np.ascontiguousarray(A.data, dtype=np.float64) if values else None
    taken = [SCRATCH.take(n + 1, idt), SCRATCH.take(max(nnz, 1), idt)]
    if values:
        taken.append(SCRATCH.take(max(nnz, 1), np.float64))
    pos, crd = taken[0], taken[1]
    code = fns["coo_rows" if coo else "csc_rows"](
        n, nnz, buf(idx, a), buf(idx, b), buf("double[]", val) if values else null,
        buf(idx, pos), buf(idx, crd), buf("double[]", taken[2]) if values else null, where)
    if code:
        for t in taken:
            SCRATCH.give(t)
        raise _pattern_error(code, int(where[0]), coo, name, n, nnz)
    used = int(pos[n])
    return pos, crd[:used], taken[2][:used] if values else None, taken


def _pattern_error(code: int, at: int, coo: bool, name: str, n: int, nnz: int):
    if coo:
        what = "row" if code == CODES["indptr"] else "col"
        return InputError(f"{name}.{what}[{at}] is not a vertex of a graph of {n} vertices")
    if code == CODES["indptr"]:
        return InputError(f"{name}.indptr is not a column pointer array of {nnz} entries at "
                          f"column {at}: pointers must be nondecreasing within [0, {nnz}]")
    return InputError(f"{name}.indices[{at}] is not a vertex of a graph of {n} vertices")


def levels(M, pos, crd, csc, s: int, tuning: Tuning = DEFAULT, name: str = "A",
           checked: bool = False, warm: bool = True):
    """BFS levels from s over the csr arrays (pos, crd) of M (its data named in
    errors); csc, (pos, crd, the longest row's length) of M in csc (a Graph's,
    checked when made) to pull levels through as tuning.pull_alpha and
    pull_beta say, or None (push only);
    checked: pos and crd are private arrays that passed `check` (the rows not
    reached are then not checked again; all are read in a flat pass first,
    which brings them into cache, when `warm` and they take at most
    tuning.bfs_warm_bytes); the walk's levels are int32 in a scratch array
    (_workspaces), widened into the int64 result after it, when
    tuning.bfs_narrow_levels (-1: the host's, host_facts.narrow_levels)."""
    n = len(pos) - 1
    level = np.empty(n, dtype=np.int64)
    t = tuning
    cpos, ccrd, most = csc if csc is not None and t.pull_rounds else (None, None, 0)
    warm = warm and checked and t.bfs_check_first and crd.nbytes <= t.bfs_warm_bytes
    fns, ffi, types = _lib(pos.dtype)
    buf, null, idx, where = ffi.from_buffer, ffi.NULL, types[pos.dtype], ffi.new("int64_t[1]")
    queue, narrow, taken = _workspaces(n, pos.dtype, narrow_levels(t) and n < 2**31, ffi,
                                       types)
    try:                        # bools and ints as cffi's int64_t and double take them
        code = fns["bfs"](n, len(crd), buf(idx, pos), buf(idx, crd),
                          null if cpos is None else buf(types[cpos.dtype], cpos),
                          null if ccrd is None else buf(types[ccrd.dtype], ccrd), s, t.pull_alpha,
                          t.pull_beta, most, checked, t.bfs_check_first, warm,
                          t.pull_measured, buf(types[level.dtype], level), narrow, queue, where)
    finally:
        for a in taken:
            SCRATCH.give(a)
    _checked(code, "bfs", where, M, name, pos, crd)
    return level


def _workspaces(n: int, idx_dtype, narrow: bool, ffi, types):
    """(queue, its int32 levels or NULL, arrays to give back to SCRATCH): cffi
    pointers to BFS's workspaces of n entries, the queue of idx_dtype and,
    when narrow, the walk's levels. Both in one new int32 array when that
    takes fewer than SCRATCH.least bytes (one allocation and one buffer),
    else kept scratch arrays (their pages warm)."""
    m = n or 1
    if narrow and idx_dtype == np.int32 and 8 * m < SCRATCH.least:
        block = ffi.from_buffer(types[idx_dtype], np.empty(2 * m, dtype=np.int32))
        return block, block + m, ()         # block keeps the array alive for the call
    queue = SCRATCH.take(m, idx_dtype)
    if not narrow:
        return ffi.from_buffer(types[idx_dtype], queue), ffi.NULL, (queue,)
    levels = SCRATCH.take(m, np.int32)
    return (ffi.from_buffer(types[idx_dtype], queue),
            ffi.from_buffer(types[levels.dtype], levels), (queue, levels))


def check(M, pos, crd, name: str = "A") -> bool:
    """True when every row pointer and index of the csr arrays (pos, crd) of M is
    valid; InputError naming `name`'s bad array otherwise."""
    _call("check", M, name, pos, crd)
    return True


def components(A, name: str = "A") -> np.ndarray:
    """The weakly connected components of A's pattern: label[v] = the smallest
    vertex of v's component (graph.connected_components, either `directed`)."""
    M, pos, crd = arrays(A, name, either_way=True)
    label = np.empty(M.shape[0], dtype=np.int64)
    _call("components", M, name, pos, crd, label)
    return label


def distances(A, source, tuning: Tuning = DEFAULT, name: str = "A"):
    """Bellman-Ford's distances from `source` (graph.bellman_ford without
    max_iter) by buckets (graph.sweep.settle) straight from A's arrays (a coo
    or csc matrix's rows made in C, `rows`), or None
    when buckets do not apply as they are: a negative weight, rows not sorted
    or with a repeated index (the canonical form sums repeats), bucket numbers
    that could overflow; the caller then takes the Graph path. InputError
    naming `name` or source for a malformed matrix, a NaN or infinite weight,
    a bad vertex."""
    made = rows(A, name, True) if A.format in ("coo", "csc") and tuning.rows_in_c else None
    if made is None:
        return _distances(A, source, tuning, name)
    try:
        pos, crd, val, _ = made
        return _distances(_Rows(val), source, tuning, name, (pos, crd, val), A)
    finally:
        for a in made[3]:
            SCRATCH.give(a)


class _Rows:
    """What the weights' errors read of a matrix (its values) for rows made in C."""

    def __init__(self, data):
        self.data = data


def _distances(M, source, tuning: Tuning, name: str, arrays_of=None, given=None):
    """distances over M's csr arrays, or arrays_of = (pos, crd, values) made from
    `given` (the caller's coo or csc matrix, whose values an error names)."""
    if arrays_of is None:
        M, pos, crd = arrays(M, name)
        val = np.ascontiguousarray(M.data, dtype=np.float64)
    else:
        pos, crd, val = arrays_of
    n = len(pos) - 1
    s = check_vertex(source, n)
    if len(val) < len(crd):
        crd = crd[:len(val)]
    stats = np.empty(3)
    try:
        canonical = _call("weights", M, name, pos, crd, val, stats)
    except InputError:
        if given is None:
            raise
        at = int(np.flatnonzero(~np.isfinite(np.asarray(given.data, dtype=np.float64)))[0])
        raise InputError(f"{name} has a stored value that is not finite (NaN or inf) at "
                         f"entry {at}") from None
    least, top, negative = stats.tolist()           # floats: bucket_plan's arithmetic in Python's
    plan = bucket_plan(least, top, n, tuning.bucket_count)
    if not canonical or negative or plan is None:
        return None
    fns, ffi = library(semirings.min_plus, _IDX_TYPES[pos.dtype], True)
    d = np.full(n, np.inf)
    d[s] = 0.0
    at = SCRATCH.take(n, np.int64)                    # round numbers: not returned
    try:
        at.fill(-1)
        buf, idx = ffi.from_buffer, C_ARRAYS[pos.dtype]
        code = fns["_buckets"](n, buf(idx, pos), buf(idx, crd), buf("double[]", val),
                               buf("double[]", d), buf("int64_t[]", at), ffi.new(idx, [s]), 1,
                               plan[0], plan[1], tuning.rounds_above, tuning.dense_rounds)
    finally:
        SCRATCH.give(at)
    if code == -2:
        raise MemoryError(f"bellman_ford: the buckets of {n} vertices could not be allocated")
    return d

