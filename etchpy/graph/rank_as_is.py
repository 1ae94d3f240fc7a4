"""PageRank of a scipy csc or coo matrix read as it is (graph.direct's rank_as_is
in C): pulled through a csc matrix's columns, pushed along a coo matrix's
entries in their order, with nothing converted (no `tocsr()`, which a call
would otherwise pay each time). The C checks every
pointer, index and weight in a first pass, as graph.direct's rank does for a
csr matrix, so a malformed matrix or one written in place since the last call
gives an InputError, never a crash; nothing is kept between calls.
`Tuning.rows_in_c` switches it (off: scipy's conversion, then graph.direct.rank);
`Tuning.graph_block_checks`: the entries checked by blocks ahead of the loops
that read them untested, and a coo's rows found to decrease in those checks.

    ranks = rank(A, alpha, tol, max_iter, "A", tuning)   # any scipy matrix
"""
from __future__ import annotations

import numpy as np

from ..runtime.scratch import SCRATCH
from ..tuning import DEFAULT, Tuning
from . import direct
from .fixpoint import ConvergenceError


def rank(A, alpha: float, tol: float, max_iter: int, name: str = "A",
         tuning: Tuning = DEFAULT, by_runs: bool = True) -> np.ndarray:
    """PageRank of the scipy matrix A (graph.pagerank, arguments checked by the
    caller): a csc or coo A as it is (`arrays_of`) when tuning.rows_in_c, else
    graph.direct.rank (which reads a csr A as it is and converts the rest);
    by_runs: a coo A whose rows do not decrease takes its first step in one
    pass over each row's run of entries, as a csr A does (else two passes).
    Raises InputError naming `name` for a malformed matrix or a negative or
    non-finite weight, ConvergenceError after max_iter steps."""
    got = arrays_of(A) if A.format in ("csc", "coo") and tuning.rows_in_c else None
    if got is None:
        return direct.rank(A, alpha, tol, max_iter, name)
    cpos, src, dst, val = got
    n, idt = A.shape[0], src.dtype
    fns, ffi, types = direct._lib(idt)
    idx, buf, null, where = types[idt], ffi.from_buffer, ffi.NULL, ffi.new("int64_t[1]")
    out = np.empty(n)
    with SCRATCH.arrays((n, np.float64), (n, np.float64), (n, np.float64)) as (z, inv, w):
        steps = fns["rank_as_is"](
            n, len(src), null if cpos is None else buf(idx, cpos), buf(idx, src),
            null if dst is None else buf(idx, dst), buf("double[]", val), float(alpha),
            float(tol), int(max_iter), buf("double[]", out), buf("double[]", z),
            buf("double[]", inv), buf("double[]", w), bool(by_runs),
            bool(tuning.graph_block_checks), where)
    if steps == direct.CODES["no entries"]:
        return np.zeros(n)
    if steps == direct.CODES["data"]:
        raise direct._malformed("data", int(where[0]), A, name, n, len(src))
    if steps < -1:
        raise direct._pattern_error(steps, int(where[0]), cpos is None, name, n, len(src))
    if steps < 0:
        raise ConvergenceError(f"pagerank did not converge in max_iter={max_iter} steps")
    return out


def arrays_of(A):
    """(column pointers or None, sources, destinations or None, float64 values) of
    the square csc (pointers, row indices) or coo (rows, columns) matrix A:
    its own index arrays, contiguous, 1-d, of one index dtype and consistent
    lengths, values as many as indices; else None (the caller converts)."""
    shape, coo = A.shape, A.format == "coo"
    a, b = (getattr(A, "row", None), getattr(A, "col", None)) if coo else (A.indptr, A.indices)
    data = getattr(A, "data", None)
    if A.dtype.kind not in "biuf" or len(shape) != 2 or shape[0] != shape[1] \
            or not all(isinstance(x, np.ndarray) and x.ndim == 1 and x.flags.c_contiguous
                       for x in (a, b, data)) \
            or a.dtype != b.dtype or a.dtype not in direct.INDEX_TYPES \
            or len(a) != (len(b) if coo else shape[0] + 1) or len(data) != len(b):
        return None
    val = np.ascontiguousarray(data, dtype=np.float64)
    return (None, a, b, val) if coo else (a, b, None, val)

