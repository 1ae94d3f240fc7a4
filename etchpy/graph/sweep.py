"""Whole frontier fixpoints in one C call (c.frontier, codegen_templates/frontier.c.j2):

    rounds = sweep(G, semiring, d, start, at, max_iter=..., values=True, pull=False)
    taken = settle(G, semirings.min_plus, d, start)      # no negative weight
    seeds = seeded(G, semirings.boolean, d, label)       # components
    choose(driver, in_c, in_python)                      # driver="auto" | "c" | "python"

Round r pushes the vertices F that changed in round r - 1 (F = `start` in
round 1) through the out-edges of A = G's csr:
d[i] <- d[i] ⊕ (⊕_{j∈F} d[j] ⊗ A[j, i]); the vertices whose value changed are
the next F and get at[i] = r. It stops after the first round that changes
nothing. Per round it costs O(|F| + F's out-edges): the workspace is kept at
the semiring's zero between rounds and reset through its touched list (a
round whose F has at least n / tuning.dense_rounds out-edges folds them all
and then passes over the n entries once). With pull=True (only for a semiring whose one absorbs
⊕, the boolean one) a round in which F's out-edges outnumber the in-edges of
the vertices not yet at one (divided by tuning.pull_alpha) pulls through A in
csc instead, until |F| < n / tuning.pull_beta. Every threshold is a field of
the Tuning passed (`tuning=`, etchpy.tuning; docs/graphs.md lists them).
proofs_notes/frontier.md has the laws.
"""
from __future__ import annotations

import functools
import re

import numpy as np

from ..runtime.kernel_cache import kept
from ..c.frontier import frontier_source, pulls
from ..errors import CompileError, InputError, SemiringError
from ..runtime import build
from ..runtime.scratch import SCRATCH
from ..semiring import semirings
from ..tuning import DEFAULT, Tuning
from ..version import __version__
from .fixpoint import ConvergenceError


@kept("helper.frontier")
def frontier_library(semiring, idx_type: str, values: bool):
    """(the functions of c.frontier's source by suffix: "", "_buckets", "_seeded";
    ffi), built (or found in the cache) once per process; CompileError without
    a working C compiler."""
    name = "etchpy_frontier_" + re.sub(r"\W", "_", semiring.name)
    name += f"_{idx_type[:-2]}_{'v' if values else 'u'}"
    c_text, cdef = frontier_source(semiring, idx_type, values=values, name=name,
                                   version=__version__)
    lib = build.load(c_text, cdef, name=name)
    return {suffix: getattr(lib.lib, name + suffix) for suffix in ("", "_buckets", "_seeded")
            if name + suffix + "(" in cdef}, lib.ffi


@kept("helper.frontier_builtin")
def _builtin_library(name: str, idx_type: str, values: bool):
    return frontier_library(getattr(semirings, name), idx_type, values)


def library(semiring, idx_type: str, values: bool):
    """frontier_library(semiring, idx_type, values), a built-in semiring's (one of
    `semirings`) looked up by its name without the store's lock (a key of
    strings: a Semiring's own hash runs Python code)."""
    if getattr(semirings, semiring.name, None) is semiring:
        return _builtin_library.plain(semiring.name, idx_type, values)
    return frontier_library(semiring, idx_type, values)


def sweep(G, semiring, d: np.ndarray, start: np.ndarray, at: np.ndarray, *,
          max_iter: int, values: bool = True, pull: bool = False,
          name: str = "fixpoint", tuning: Tuning = DEFAULT) -> int:
    """Run the fixpoint on G (an adjacency.Graph) in place: d (n values of the
    semiring's dtype, the state) and at (n int64: -1, or 0 at the `start`
    vertices; round numbers are written where values change). Pull rounds
    only with pull=True and tuning.pull_rounds; tuning.pull_alpha, pull_beta
    and dense_rounds set when a round pulls or is dense.
    Returns the number of rounds (the last changed nothing).
    Raises ConvergenceError naming `name` when max_iter rounds all changed
    something; SemiringError for a semiring that is not idempotent;
    CompileError without a C compiler; InputError naming the array for a d,
    at or start of the wrong shape, dtype or range."""
    n = G.n
    _check(at, n, np.dtype(np.int64), "at")
    pos, crd, start, val = _inputs(G, semiring, d, start, values)
    fns, ffi = library(semiring, C_ARRAYS[pos.dtype][:-2], values)
    fn, ptr = fns[""], functools.partial(pointer, ffi)
    cpos = ccrd = cval = None
    if pull and tuning.pull_rounds and pulls(semiring) and n:
        cpos, ccrd, cval = G.cached(f"csc:{semiring.dtype}:{values}",
                                    lambda m: csc_arrays(m, pos.dtype, semiring.dtype, values))
    rounds = fn(n, ptr(pos), ptr(crd), ptr(val), ptr(cpos), ptr(ccrd), ptr(cval), ptr(d),
                ptr(at), ptr(start), len(start), int(max_iter), float(tuning.pull_alpha),
                float(tuning.pull_beta), int(tuning.dense_rounds))
    if rounds == -2:
        raise MemoryError(f"{name}: the workspaces of {n} vertices could not be allocated")
    if rounds < 0:
        raise ConvergenceError(f"{name} did not converge in max_iter={max_iter} steps")
    return int(rounds)


def settle(G, semiring, d: np.ndarray, start: np.ndarray, *, name: str = "fixpoint",
           tuning: Tuning = DEFAULT) -> int:
    """The fixpoint of `sweep` (without round numbers) by buckets of values
    (Dial; delta-stepping on one thread): each vertex is taken about once
    rather than once per round that improves it. Valid only for a
    `c.frontier.bucketed` semiring (min_plus) and a graph without negative
    weights: the caller checks that (`bucket_width` is None otherwise). It
    runs rounds first while the frontier's out-edges at least double per round
    or number at least m / tuning.rounds_above, m the stored entries (0: buckets
    only); buckets are
    `bucket_width(G, tuning.bucket_count)`.
    Returns the number of vertices taken from buckets; raises as `sweep`."""
    pos, crd, start, val = _inputs(G, semiring, d, start, True)
    fns, ffi = library(semiring, C_ARRAYS[pos.dtype][:-2], True)
    delta, nb = bucket_width(G, tuning.bucket_count)
    fn, ptr = fns["_buckets"], functools.partial(pointer, ffi)
    at = SCRATCH.take(G.n, np.int64)                  # round numbers: not returned
    try:
        at.fill(-1)
        taken = fn(G.n, ptr(pos), ptr(crd), ptr(val), ptr(d), ptr(at), ptr(start),
                   len(start), delta, nb, int(tuning.rounds_above), int(tuning.dense_rounds))
    finally:
        SCRATCH.give(at)
    if taken == -2:
        raise MemoryError(f"{name}: the buckets of {G.n} vertices could not be allocated")
    return int(taken)


def seeded(G, semiring, d: np.ndarray, label: np.ndarray, *, name: str = "fixpoint") -> int:
    """One fixpoint of `sweep` per seed: for v = 0, 1, ... whose d[v] is not one,
    set d[v] = one and reach the fixpoint from {v} (in stack order: a vertex
    reached is at one and final at once), writing label[i] = v at every vertex
    reached. Only for a `c.frontier.pulls`
    semiring (boolean; its values are not read). On a graph stored both ways,
    with d all zero, label[i] is the smallest vertex of i's component.
    Returns the number of seeds; raises as `sweep`."""
    n = G.n
    _check(label, n, np.dtype(np.int64), "label")
    pos, crd, _, _ = _inputs(G, semiring, d, np.zeros(0), False)
    fns, ffi = library(semiring, C_ARRAYS[pos.dtype][:-2], False)
    if "_seeded" not in fns:
        raise SemiringError(f"semiring {semiring.name}: one does not absorb its ⊕, so a "
                            "vertex at one is not final; seeded fixpoints need that")
    ptr = functools.partial(pointer, ffi)
    seeds = fns["_seeded"](n, ptr(pos), ptr(crd), ffi.NULL, ptr(d), ptr(label))
    if seeds == -2:
        raise MemoryError(f"{name}: the workspaces of {n} vertices could not be allocated")
    return int(seeds)


def bucket_width(G, buckets: int = DEFAULT.bucket_count):
    """(delta, buckets in the ring) for `settle` on G, or None when G has a
    negative weight or its distances could leave int64 bucket numbers (see
    `bucket_plan`)."""
    def width(m):
        w = m.data
        if len(w) and w.min() < 0:
            return None
        pos_w = w[w > 0]
        return bucket_plan(float(pos_w.min()) if len(pos_w) else np.inf,
                           float(w.max()) if len(w) else 0.0, m.shape[0], buckets)
    return G.cached(f"bucket_width:{buckets}", width)


def bucket_plan(least: float, top: float, n: int, buckets: int):
    """(delta, buckets in the ring) for weights >= 0 whose least positive one is
    `least` (inf: none) and largest `top`, on n vertices; None when distances
    could leave int64 bucket numbers. delta is the least positive weight (then
    only zero-weight edges re-queue a vertex), but at least top / `buckets`
    (>= 1, Tuning.bucket_count)."""
    top = max(top, 0.0)
    delta = max(least if least < np.inf else 1.0, top / max(buckets, 1))
    if top / delta * max(n, 1) >= 2.0**62:
        return None
    return delta, int(top / delta) + 3


def _inputs(G, semiring, d, start, values):
    """(pos, crd, start, values or None) for the C call: G's csr with int32 index
    arrays when they fit (half the bytes read per edge), cached on G."""
    n = G.n
    _check(d, n, semiring.dtype, "d")
    pos, crd = G.cached("csr:compact", compact)
    start = np.ascontiguousarray(start, dtype=pos.dtype)
    if start.ndim != 1 or not (0 <= int(start[0]) < n if len(start) == 1 else   # (one: no
                               not len(start) or 0 <= start.min() <= start.max() < n):  # reductions)
        raise InputError(f"start is a list of vertex numbers in [0, {n})")
    val = G.cached(f"data:{semiring.dtype}", lambda m: m.data.astype(semiring.dtype)) \
        if values else None
    return pos, crd, start, val


def compact(m):
    """(indptr, indices) of the csr array m, int32 when they fit."""
    idt = np.int32 if max(m.shape[0], m.nnz) < 2**31 else np.int64
    return m.indptr.astype(idt), m.indices.astype(idt)


def _check(a, n, dtype, what):
    if not isinstance(a, np.ndarray) or a.shape != (n,) or a.dtype != dtype \
            or not a.flags.c_contiguous or not a.flags.writeable:
        raise InputError(f"{what} is a writable contiguous {dtype} array of {n} entries")


C_ARRAYS = {np.dtype(np.int32): "int32_t[]", np.dtype(np.int64): "int64_t[]",
             np.dtype(np.float64): "double[]", np.dtype(np.float32): "float[]",
             np.dtype(np.bool_): "uint8_t[]"}


def pointer(ffi, a):
    """A cffi pointer to the numpy array a (C type by C_ARRAYS), NULL for None."""
    if a is None:
        return ffi.NULL
    return ffi.from_buffer(C_ARRAYS[a.dtype], a)


def csc_arrays(m, idt, dtype, values):
    """(indptr, indices, values or None) of the csr array m in csc, indices of idt."""
    t = m.tocsc()
    return (t.indptr.astype(idt, copy=False), t.indices.astype(idt, copy=False),
            t.data.astype(dtype) if values else None)


DRIVERS = ("auto", "c", "python")


def choose(driver: str, in_c, in_python):
    """Run in_c() or in_python() as `driver` says: "c", "python", or "auto" (in C,
    and in Python when no C compiler can build the fixpoint). InputError naming
    driver for any other value."""
    if driver not in DRIVERS:
        raise InputError(f"driver is one of {', '.join(map(repr, DRIVERS))}, not {driver!r}")
    if driver == "python":
        return in_python()
    try:
        return in_c()
    except CompileError:
        if driver == "c":
            raise
        return in_python()
