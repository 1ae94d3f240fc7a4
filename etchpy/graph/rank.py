"""PageRank by power iteration: with driver="python", one compiled kernel per step,

    x'[i] = c + Σ_j A[j, i] · w[j],   w[j] = s[j]·x[j], s[j] = alpha / outdeg(j) (0 if dangling),
    c = (1 - alpha)/n + alpha/n · Σ_{dangling j} x[j],

with A read in csc (each x'[i] pulls its in-edges, written once); an unweighted
graph is read as its pattern (ep.tensor(..., iso=True)), whose values the kernel
never loads. outdeg(j) is the sum of the weights of row j. This is the iteration of networkx and
graphblas-algorithms (uniform start, uniform teleport, dangling mass spread
uniformly, converged when Σ|x' - x| < n·tol), so the results agree.
By default (driver="auto") every step runs in one C call (c.rank): the same
pull, with w = s·x, the dangling sum and Σ|x' - x| fused into its passes over
the vertices.
"""
from __future__ import annotations

import functools

import numpy as np

from ..runtime.kernel_cache import kept
from ..errors import InputError
from ..runtime.tensor import Tensor
from ..expr.nodes import indices, sum as esum, tensor as etensor
from ..semiring import semirings
from ..api import compile as ep_compile
from ..c.rank import rank_source
from ..runtime import build
from ..runtime.scratch import SCRATCH
from ..version import __version__
from ..tuning import DEFAULT, Tuning, of as tuning_of
from . import adjacency as adj, direct
from .fixpoint import ConvergenceError, fixpoint, within
from .sweep import C_ARRAYS, choose, pointer


@kept("graph.rank_pull")
def _pull_kernel(iso: bool = False, tuning: Tuning = DEFAULT):
    """The step's kernel; `iso`: A is a pattern (every weight 1), its values unread."""
    i, j = indices("i j")
    A, w = etensor("A", 2, format="csc", iso=iso), etensor("w", 1)
    return ep_compile(etensor("c", 0)[()] + esum(j, A[j, i] * w[j]),
                      semiring=semirings.real, tuning=tuning)


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

    Parameters: A, a square scipy.sparse matrix, 2-d array or ep.graph.Graph of
    nonnegative weights; alpha, the damping factor in [0, 1); tol (> 0),
    converged when Σ|x' - x| < n·tol; max_iter, the most power iterations;
    driver, "auto" (every step in one C call: c.rank pulling through a Graph's
    cached csc, or, for a scipy matrix, graph.direct pushing along its own
    arrays, checked in C; Python when no compiler builds it), "c", or "python"
    (one compiled kernel per step, compiled under `tuning`, an
    etchpy.tuning.Tuning, preset name or dict). Every driver and setting
    gives the same ranks, to rounding.
    Returns: a float64 array of n ranks summing to 1 (zeros for a graph
    without edges, as graphblas-algorithms).
    Raises: InputError naming A (non-square, non-finite or negative weights),
    alpha, tol, max_iter or driver; ConvergenceError after max_iter iterations.

        >>> pagerank(scipy.sparse.csr_array([[0, 1.0], [1.0, 0]])).round(3)
        array([0.5, 0.5])
    """
    _check_arguments(alpha, tol, max_iter)
    if driver != "python" and direct.is_direct(A):     # its arrays as they are, checked in C
        return choose(driver, lambda: direct.rank(A, alpha, tol, max_iter),
                      lambda: pagerank(A, alpha, tol=tol, max_iter=max_iter, driver="python",
                                       tuning=tuning))
    G = adj.as_graph(A)
    if G.cached("negative", lambda m: bool(np.any(m.data < 0))):
        raise InputError(f"{G.name} has a negative weight; PageRank needs nonnegative weights")
    if G.n == 0 or G.csr.nnz == 0:
        return np.zeros(G.n)
    t = tuning_of(tuning)
    return choose(driver, lambda: _rank_in_c(G, float(alpha), float(tol), int(max_iter)),
                  lambda: _rank_in_python(G, float(alpha), float(tol), int(max_iter), t))


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


def _rank_in_c(G, alpha: float, tol: float, max_iter: int):
    """Every step in one C call (c.rank); the same iteration as _rank_in_python."""
    n = G.n
    inv, _ = G.cached("pagerank scale", _scale)
    cpos, ccrd, cval, dangling = G.cached("pagerank csc", _compact_csc)
    fn, ffi = _library(C_ARRAYS[cpos.dtype][:-2], cval is not None)
    x = np.full(n, 1.0 / n)                 # the ranks: the one array whose pages are new
    ptr = functools.partial(pointer, ffi)
    with SCRATCH.arrays((n, np.float64), (n, np.float64)) as (y, w):    # written before read
        steps = fn(n, ptr(cpos), ptr(ccrd), ptr(cval), ptr(inv), ptr(dangling),
                   len(dangling), alpha, tol, max_iter, ptr(x), ptr(y), ptr(w))
    if steps < 0:
        raise ConvergenceError(f"pagerank did not converge in max_iter={max_iter} steps")
    return x


@kept("helper.pagerank")
def _library(idx_type: str, values: bool):
    """(the C function of c.rank for these index arrays and values, ffi), built
    (or found in the cache) once per process; CompileError without a compiler."""
    name = f"etchpy_pagerank_{idx_type[:-2]}_{'v' if values else 'u'}"
    c_text, cdef = rank_source(idx_type, values=values, name=name, version=__version__)
    lib = build.load(c_text, cdef, name=name)
    return getattr(lib.lib, name), lib.ffi


def _compact_csc(M):
    """(pos, crd, values or None when every weight is 1, the dangling vertices) of M
    in csc, with int32 index arrays when they fit."""
    C = M.tocsc()
    C.sort_indices()
    idx = np.int32 if max(C.shape[0], C.nnz) < 2**31 - 1 else np.int64
    val = None if np.all(C.data == 1.0) else np.ascontiguousarray(C.data, dtype=np.float64)
    dangling = np.flatnonzero(np.asarray(M.sum(axis=1)).ravel() == 0)
    return C.indptr.astype(idx), C.indices.astype(idx), val, dangling.astype(idx)


def _scale(M):
    """(1/outdeg, 0 where dangling; 1.0 where dangling, else 0), outdeg the sum of
    each row's weights."""
    deg = np.asarray(M.sum(axis=1)).ravel()
    dangling = deg == 0
    return np.where(dangling, 0.0, 1.0 / np.where(dangling, 1.0, deg)), dangling.astype(float)
