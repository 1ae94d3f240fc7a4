"""PageRank by power iteration: one compiled kernel per step,

    x'[i] = c + Σ_j A[j, i] · w[j],   w[j] = s[j]·x[j], s[j] = alpha / outdeg(j) (0 if dangling),
    c = (1 - alpha)/n + alpha/n · Σ_{dangling j} x[j],

with A read in csc (each x'[i] pulls its in-edges, written once); an unweighted
graph is read as its pattern (ep.tensor(..., iso=True)), whose values the kernel
never loads. outdeg(j) is the sum of the weights of row j. This is the iteration of networkx and
graphblas-algorithms (uniform start, uniform teleport, dangling mass spread
uniformly, converged when Σ|x' - x| < n·tol), so the results agree.
"""
from __future__ import annotations

import functools

import numpy as np

from ..errors import InputError
from ..runtime.tensor import Tensor
from ..expr.nodes import indices, sum as esum, tensor as etensor
from ..semiring import semirings
from ..api import compile as ep_compile
from ..tuning import DEFAULT, Tuning, of as tuning_of
from . import adjacency as adj
from .fixpoint import fixpoint, within


@functools.cache
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
             tuning=None):
    """The PageRank of every vertex of the graph with edges j -> i of weight A[j, i].

    Parameters: A, a square scipy.sparse matrix, 2-d array or ep.graph.Graph of
    nonnegative
    weights; alpha, the damping factor in [0, 1); tol, converged when
    Σ|x' - x| < n·tol; max_iter, the most power iterations; tuning, an
    etchpy.tuning.Tuning, preset name or dict that the step's kernel is
    compiled under (every setting gives the same ranks, to rounding).
    Returns: a float64 array of n ranks summing to 1 (zeros for an empty graph).
    Raises: InputError naming A (non-square, negative weights) or alpha;
    ConvergenceError after max_iter iterations.

        >>> pagerank(scipy.sparse.csr_array([[0, 1.0], [1.0, 0]])).round(3)
        array([0.5, 0.5])
    """
    G = adj.as_graph(A)
    M, n = G.csr, G.n
    if not 0 <= alpha < 1:
        raise InputError(f"alpha is a damping factor in [0, 1), not {alpha!r}")
    if G.cached("negative", lambda m: bool(np.any(m.data < 0))):
        raise InputError("A has a negative weight; PageRank needs nonnegative weights")
    if n == 0 or M.nnz == 0:
        return np.zeros(n)
    inv, dmask = G.cached("pagerank scale", _scale)
    s = np.multiply(inv, alpha)
    T, iso = _operand(G)
    kern = _pull_kernel(iso, tuning_of(tuning))
    bufs, turn, w = [np.empty(n), np.empty(n)], [0], np.empty(n)

    def step(x):
        c = np.float64((1 - alpha) / n + alpha / n * float(x @ dmask))
        out = bufs[turn[0]]
        turn[0] ^= 1
        np.multiply(s, x, out=w)           # one gather per edge in the kernel, not two
        return kern(A=T, w=w, c=c, out=out)

    return fixpoint(step, np.full(n, 1.0 / n), converged=within(tol), max_iter=max_iter,
                    name="pagerank").value


def _scale(M):
    """(1/outdeg, 0 where dangling; 1.0 where dangling, else 0), outdeg the sum of
    each row's weights."""
    deg = np.asarray(M.sum(axis=1)).ravel()
    dangling = deg == 0
    return np.where(dangling, 0.0, 1.0 / np.where(dangling, 1.0, deg)), dangling.astype(float)
