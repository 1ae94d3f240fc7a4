"""PageRank of a scipy matrix passed as it is, compiled from its expressions: a
csc matrix's arrays bound as A in csc for the compiled pull, a csr one's as A
in csr for the compiled push, a coo one's as A in coo for the same push
entry by entry (graph.rank_program._iteration: an imp.Fixpoint around the
step), without a copy when they are int32 or int64 index arrays of one
dtype and float64 values; other formats (and coo with `Tuning.rows_in_c`
off) converted by scipy's `tocsr()`.
The program first runs the compiled, checked kernel of the out-degrees
deg[j] = Σ_i A[j, i] over the same arrays (its fused checks test every
pointer and index: lower.schedule.fused_checks) and tests every value, and
iterates only when all pass, so a malformed matrix, or one written in place
since the last call, gives an InputError naming it, never a crash; nothing is
kept between calls but the compiled function.

    ranks = rank(A, alpha, tol, max_iter, "A", tuning)   # any square scipy matrix
"""
from __future__ import annotations

import numpy as np

from ..api import compile as ep_compile
from ..c.render import render as c_render
from ..errors import InputError
from ..expr.nodes import indices, sum as esum, tensor as etensor
from ..lower.schedule.fused_checks import ERROR_CODE
from ..runtime import build
from ..runtime.kernel_cache import kept
from ..runtime.scipy_arrays import checked_scipy
from ..runtime.scratch import SCRATCH
from ..semiring import semirings
from ..tuning import Tuning
from ..version import __version__
from . import direct
from . import rank_program as power
from .fixpoint import ConvergenceError
from .sweep import C_ARRAYS


@kept("graph.rank_degrees")
def _degrees_kernel(fmt: str, tuning: Tuning):
    """deg[j] = Σ_i A[j, i], A in `fmt` (csr or csc), serial."""
    i, j = indices("i j")
    return ep_compile(esum(i, etensor("A", 2, format=fmt)[j, i]), semiring=semirings.real,
                      tuning=tuning, threads=1)


@kept("graph.rank_push")
def _push_kernel(fmt: str, tuning: Tuning):
    """y[i] = Σ_j A[j, i]·w[j], A in `fmt` (csr: each row pushed; coo: each
    entry), serial."""
    i, j = indices("i j")
    A, w = etensor("A", 2, format=fmt), etensor("w", 1)
    return ep_compile(esum(j, A[j, i] * w[j]), semiring=semirings.real, tuning=tuning,
                      threads=1)


@kept("helper.pagerank_scipy")
def _library(fmt: str, idx_type: str, tuning: Tuning):
    """(the C function of PageRank over a `fmt` matrix's own arrays, ffi, the
    role of each parameter): rank_program._iteration around the pull (csc) or
    the push (csr, coo), after the checked out-degrees. CompileError without
    a compiler."""
    step = (power._pull_kernel(False, tuning, 1) if fmt == "csc"
            else _push_kernel(fmt, tuning))
    degrees = _degrees_kernel(fmt, tuning).compiled.checked
    if degrees is None:
        raise InputError(f"pagerank of a scipy matrix needs fused checks (Tuning.fused_checks "
                         f"is off); pass an ep.graph.Graph")
    prog, roles = power._iteration(step.compiled.program, fmt != "csc", degrees, SPAN[fmt])
    name = f"etchpy_pagerank_{fmt}_{idx_type[:-2]}"
    src = c_render(prog, semirings.real, name=name, idx_type=idx_type, version=__version__,
                   tuning=tuning)
    lib = build.load(src.c, src.cdef, name=name)
    return getattr(lib.lib, name), lib.ffi, roles[:-1]


def _lib(fmt: str, dtype, tuning: Tuning):
    """_library's answer for `fmt`, index arrays of `dtype` and `tuning` (the very
    object), remembered as graph.direct's (direct.remembered)."""
    return direct.remembered(_LAST, (fmt, dtype, id(tuning)),
                             lambda: _library.plain(fmt, C_ARRAYS[dtype][:-2], tuning), tuning)


_LAST: dict = {}
SPAN = {"csc": ("A_pos1", "A_dim1"), "csr": ("A_pos1", "A_dim0"), "coo": ("A_pos0", None)}
"""Each format's values as its kernels read them: A_vals[pos[0]] .. A_vals[pos[last] − 1]
(rank_program._iteration's span: the pointers of A's last compressed level, the
number of positions of its parent level)."""


def rank(A, alpha: float, tol: float, max_iter: int, name: str = "A",
         tuning: Tuning | None = None) -> np.ndarray:
    """PageRank of the square scipy matrix A (graph.pagerank, arguments checked
    by the caller); zeros when it stores no entry. Raises InputError naming
    `name` for a matrix that is not square or real, malformed arrays, or a
    negative or non-finite weight; ConvergenceError after max_iter steps."""
    t = tuning
    if A.dtype.kind not in "biuf":
        raise InputError(f"{name} is an adjacency matrix of real weights, not of "
                         f"{A.dtype} values")
    if len(A.shape) != 2 or A.shape[0] != A.shape[1]:
        raise InputError(f"{name} is an adjacency matrix and must be square, not "
                         f"{'x'.join(map(str, A.shape))}")
    if A.format not in ("csr", "csc", "coo") or A.format == "coo" and not t.rows_in_c:
        A = checked_scipy(A, name).tocsr()      # scipy's conversion trusts the arrays
    coo = A.format == "coo"
    what = ("row", "col") if coo else ("indptr", "indices")
    pos, crd = (getattr(A, w) for w in what)
    if not all(isinstance(a, np.ndarray) and a.ndim == 1 and a.dtype.kind in "iu"
               for a in (pos, crd)):
        raise InputError(f"{name}.{what[0]} and {name}.{what[1]} are 1-d arrays of integers")
    idt = pos.dtype if pos.dtype == crd.dtype and pos.dtype in direct.INDEX_TYPES \
        else np.dtype(np.int64)
    pos, crd = np.ascontiguousarray(pos, dtype=idt), np.ascontiguousarray(crd, dtype=idt)
    val = np.ascontiguousarray(A.data, dtype=np.float64)
    if coo and not len(pos) == len(crd) == len(val):
        raise InputError(f"{name}.row, {name}.col and {name}.data differ in length")
    return _ranks(A, A.format, pos, crd, val, alpha, tol, max_iter, name, t)


def _ranks(A, fmt, pos, crd, val, alpha, tol, max_iter, name, tuning):
    n, coo = A.shape[0], fmt == "coo"
    if coo:                                 # rows, cols: the entries [0, nnz) of level 0
        pos, crd, row = np.array([0, len(crd)], dtype=pos.dtype), crd, pos
    if len(pos) != n + 1 and not coo:
        raise InputError(f"{name}.indptr has {len(pos)} entries; a matrix of {n} rows "
                         f"has {n + 1}")
    nnz = min(len(crd), len(val))
    if n and not coo and not 0 <= pos[0] <= pos[n] <= nnz:
        raise _pointers(fmt, name, nnz, 0 if not 0 <= pos[0] <= nnz else n)
    if n == 0 or pos[-1] == pos[0]:
        return np.zeros(n)
    fn, ffi, roles = _lib(fmt, pos.dtype, tuning)
    x, buf, idx = np.full(n, 1.0 / n), ffi.from_buffer, C_ARRAYS[pos.dtype]
    steps = ffi.new("int64_t[1]")
    consts = ffi.new("double[4]", [alpha, (1.0 - alpha) / n, alpha / n, n * tol])
    with SCRATCH.arrays((3 * n, np.float64)) as (block,):     # y, w, inv: written first
        b = buf("double[]", block)
        given = {"out": b, "w_vals": b + n, "inv": b + 2 * n, "x": buf("double[]", x),
                 "consts": consts, "steps": steps, f"A_pos{int(not coo)}": buf(idx, pos),
                 "A_crd1": buf(idx, crd), "A_vals": buf("double[]", val)}
        if coo:
            given["A_crd0"] = buf(idx, row)
        code = fn(*[n if r == "dim" else given[r] for r in roles], max_iter)
    if code == ERROR_CODE:
        raise _diagnosed(A, fmt, pos, (row, crd) if coo else (crd,), val, name)
    if code:
        raise MemoryError(f"pagerank: the C iteration failed (code {code})")
    if steps[0] < 0:
        raise ConvergenceError(f"pagerank did not converge in max_iter={max_iter} steps")
    return x


def _pointers(fmt: str, name: str, nnz: int, at: int) -> InputError:
    what = "column" if fmt == "csc" else "row"
    return InputError(f"{name}.indptr is not a {what} pointer array of {nnz} entries at "
                      f"{what} {at}: pointers must be nondecreasing within [0, {nnz}]")


def _diagnosed(A, fmt, pos, crds, val, name) -> InputError:
    """The InputError naming what the program's checks found wrong in A (its
    arrays pos, crds (a coo's rows and columns, else the indices), val as
    bound): the first bad pointer, index, then value."""
    n, nnz = A.shape[0], min(len(crds[-1]), len(val))
    p = pos.astype(np.int64)
    wrong = (p[:-1] > p[1:]) | (p[:-1] < 0) | (p[1:] > nnz)
    if wrong.any():
        return _pointers(fmt, name, nnz, int(np.flatnonzero(wrong)[0]))
    used = slice(int(p[0]), int(p[-1]))
    for what, crd in zip(("row", "col") if fmt == "coo" else ("indices",), crds):
        bad = np.flatnonzero((crd[used] < 0) | (crd[used] >= n))
        if len(bad):
            return InputError(f"{name}.{what}[{bad[0] + used.start}] is not a vertex of a "
                              f"graph of {n} vertices")
    data = np.asarray(A.data, dtype=np.float64)     # the caller's order (a coo's entries)
    found = np.flatnonzero(~((data >= 0) & np.isfinite(data)))
    if not len(found):
        return InputError(f"{name}'s arrays changed during the call")
    at = int(found[0])
    if np.isfinite(data[at]):
        return InputError(f"{name} has a negative weight ({data[at]} at entry {at}); "
                          "PageRank needs nonnegative weights")
    return InputError(f"{name} has a stored value that is not finite (NaN or inf) at "
                      f"entry {at}")
