"""PageRank by power iteration: with driver="python", one compiled kernel per step,

    x'[i] = c + Σ_j A[j, i] · w[j],   w[j] = s[j]·x[j], s[j] = alpha / outdeg(j) (0 if dangling),
    c = (1 - alpha)/n + alpha/n · Σ_{dangling j} x[j],

with A read in csc (each x'[i] pulls its in-edges, written once); an unweighted
graph is read as its pattern (ep.tensor(..., iso=True)), whose values the kernel
never loads. outdeg(j) is the sum of the weights of row j. This is the iteration of networkx and
graphblas-algorithms (uniform start, uniform teleport, dangling mass spread
uniformly, converged when Σ|x' - x| < n·tol), so the results agree.
By default (driver="auto") every step runs in one C call: the same compiled
pull inside an imp.Fixpoint (step, buffer swap, convergence test), with
Σ|x' - x| made at the store of each x'[i] (lower.fixpoint.at_each_cell) and
w = s·x and the dangling sum in loops of the same step.
"""
from __future__ import annotations

import numpy as np

from ..runtime.kernel_cache import kept
from ..errors import InputError
from ..runtime.tensor import Tensor
from ..semiring import semirings
from ..c.render import render as c_render
from ..runtime import build
from ..runtime.scratch import SCRATCH
from ..version import __version__
from ..tuning import FIXPOINT, Tuning, of as tuning_of
from . import adjacency as adj, direct, rank_scipy
from .rank_program import _iteration, _pull_kernel
from .fixpoint import ConvergenceError, fixpoint, within
from .sweep import C_ARRAYS, choose, pointer


def _operand(G):
    """(A in csc as the kernel reads it, whether it is a pattern): an unweighted
    graph (every weight 1) is bound as its pattern, whose values the kernel does
    not read; both made once per Graph."""
    if G.cached("unweighted", lambda m: bool(np.all(m.data == 1.0))):
        return G.cached("csc pattern", lambda m: _pattern(m, G.name)), True
    return G.tensor("csc", semirings.real), False


def _pattern(M, name) -> Tensor:
    """The csr array M in csc as a pattern (Tensor.pattern), with int32 index
    arrays when they fit (the kernel's int32 variant: half the index bytes)."""
    C = M.tocsc()
    C.sort_indices()
    idx = np.int32 if max(C.shape[0], C.nnz) < 2**31 - 1 else np.int64
    levels = [{}, {"pos": C.indptr.astype(idx), "crd": C.indices.astype(idx)}]
    return Tensor(C.shape, "csc", levels, np.ones(C.nnz), name=name).pattern()


def pagerank(A, alpha: float = 0.85, *, tol: float = 1e-6, max_iter: int = 100,
             driver: str = "auto", tuning=None):
    """The PageRank of every vertex of the graph with edges j -> i of weight A[j, i].

    Parameters: A, a square scipy.sparse matrix, 2-d array, 2-d ep.Tensor or
    ep.graph.Graph of nonnegative weights; alpha, the damping factor in
    [0, 1); tol (> 0), converged when Σ|x' - x| < n·tol; max_iter, the
    most power iterations; driver, "auto" (every step in one C call: the compiled pull through a
    Graph's cached csc in an imp.Fixpoint, or, for a scipy matrix,
    the same loop around the pull through a csc one's own arrays or the
    compiled push along a csr one's, after its checked out-degrees:
    graph.rank_scipy; Python when no compiler builds it), "c", or "python"
    (one compiled kernel per step);
    tuning, an etchpy.tuning.Tuning, preset name or dict the pull is compiled
    under (default: "default" per step, "fixpoint" in one C call). Every
    driver and setting gives the same ranks, to rounding.
    Returns: a float64 array of n ranks summing to 1 (zeros for a graph
    without edges, as graphblas-algorithms).
    Raises: InputError naming A (non-square, non-finite or negative weights),
    alpha, tol, max_iter or driver; ConvergenceError after max_iter iterations.

        >>> pagerank(scipy.sparse.csr_array([[0, 1.0], [1.0, 0]])).round(3)
        array([0.5, 0.5])
    """
    _check_arguments(alpha, tol, max_iter)
    t = FIXPOINT if tuning is None else tuning_of(tuning)
    if driver != "python" and direct.is_direct(A) and t.fused_checks:   # as they are, checked in C
        return choose(driver, lambda: rank_scipy.rank(A, alpha, tol, max_iter, "A", t),
                      lambda: pagerank(A, alpha, tol=tol, max_iter=max_iter, driver="python",
                                       tuning=tuning))
    G = adj.as_graph(A)
    if G.cached("negative", lambda m: bool(np.any(m.data < 0))):
        raise InputError(f"{G.name} has a negative weight; PageRank needs nonnegative weights")
    if G.n == 0 or G.csr.nnz == 0:
        return np.zeros(G.n)
    in_c = FIXPOINT if tuning is None else tuning_of(tuning)
    return choose(driver, lambda: _rank_in_c(G, float(alpha), float(tol), int(max_iter), in_c),
                  lambda: _rank_in_python(G, float(alpha), float(tol), int(max_iter),
                                          tuning_of(tuning)))


def _check_arguments(alpha, tol, max_iter):
    real = (int, float, np.integer, np.floating)
    if isinstance(alpha, (bool, np.bool_)) or not isinstance(alpha, real) \
            or not 0 <= alpha < 1:
        raise InputError(f"alpha is a damping factor in [0, 1), not {alpha!r}")
    if isinstance(tol, (bool, np.bool_)) or not isinstance(tol, real) \
            or not 0 < tol < np.inf:
        raise InputError(f"tol is a positive tolerance, not {tol!r}")
    if isinstance(max_iter, (bool, np.bool_)) or not isinstance(max_iter, (int, np.integer)) \
            or max_iter < 1:
        raise InputError(f"max_iter is a positive integer, not {max_iter!r}")


def _rank_in_python(G, alpha: float, tol: float, max_iter: int, tuning: Tuning):
    n = G.n
    inv, dmask = G.cached("pagerank scale", _scale)
    s = np.multiply(inv, alpha)
    T, iso = _operand(G)
    kern = _pull_kernel(iso, tuning)
    bufs, turn, w = [np.empty(n), np.empty(n)], [0], np.empty(n)

    def step(x):
        c = np.float64((1 - alpha) / n + alpha / n * float(x @ dmask))
        out = bufs[turn[0]]
        turn[0] ^= 1
        np.multiply(s, x, out=w)           # one gather per edge in the kernel, not two
        return kern(A=T, w=w, c=c, out=out)

    return fixpoint(step, np.full(n, 1.0 / n), converged=within(tol), max_iter=max_iter,
                    name="pagerank").value


def _rank_in_c(G, alpha: float, tol: float, max_iter: int, tuning: Tuning):
    """Every step in one C call (_library); the same iteration as _rank_in_python."""
    n = G.n
    made = G.cached("pagerank call", lambda _: [None, None])     # [tuning, its call]
    if made[0] is not tuning:                   # (a Tuning hashes slowly: kept by identity)
        made[:] = tuning, _call_of(G, tuning)
    fn, ffi, slots = made[1]
    x, steps = np.full(n, 1.0 / n), np.zeros(1, dtype=np.int64)
    consts = np.array([alpha, (1.0 - alpha) / n, alpha / n, n * tol])
    with SCRATCH.arrays((n, np.float64), (n, np.float64)) as (y, w):   # written before read
        given = {"out": y, "w_vals": w, "x": x, "consts": consts, "steps": steps}
        code = fn(*[pointer(ffi, given[a]) if isinstance(a, str) else a for a in slots],
                  max_iter)
    if code:
        raise MemoryError(f"pagerank: the C iteration failed (code {code})")
    if steps[0] < 0:
        raise ConvergenceError(f"pagerank did not converge in max_iter={max_iter} steps")
    return x


def _call_of(G, tuning: Tuning):
    """(the C function of G's iteration, ffi, its arguments but max_iter, the
    last: C values for the graph's own arrays and sizes, the role (a str) of
    each array a call passes)."""
    T, iso = _operand(G)
    pos, crd = T.levels[1]["pos"], T.levels[1]["crd"]
    fn, ffi, roles = _library(C_ARRAYS[pos.dtype][:-2], iso, tuning)
    inv, _ = G.cached("pagerank scale", _scale)
    fixed = {"A_pos1": pos, "A_crd1": crd, "A_vals": T.vals, "inv": inv}
    sizes = {"dim": G.n}
    slots = [sizes[role] if role in sizes else pointer(ffi, fixed[role]) if role in fixed
             else role for role in roles[:-1]]
    return fn, ffi, slots


@kept("helper.pagerank")
def _library(idx_type: str, iso: bool, tuning: Tuning):
    """(the C function of _iteration for these index arrays, ffi, the role of each
    parameter), built (or found in the cache) once per process; CompileError
    without a compiler."""
    prog, roles = _iteration(_pull_kernel(iso, tuning, 1).compiled.program)
    name = f"etchpy_pagerank_{idx_type[:-2]}_{'u' if iso else 'v'}"
    src = c_render(prog, semirings.real, name=name, idx_type=idx_type, version=__version__,
                   tuning=tuning)
    lib = build.load(src.c, src.cdef, name=name)
    return getattr(lib.lib, name), lib.ffi, roles


def _scale(M):
    """(1/outdeg, 0 where dangling; 1.0 where dangling, else 0), outdeg the sum of
    each row's weights."""
    deg = np.asarray(M.sum(axis=1)).ravel()
    dangling = deg == 0
    return np.where(dangling, 0.0, 1.0 / np.where(dangling, 1.0, deg)), dangling.astype(float)
