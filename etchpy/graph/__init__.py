"""Graph algorithms as fixpoints of compiled etchpy kernels.

    fixpoint(step, state, converged=equal, max_iter=1000) -> Fixpoint(value, iterations)
    KernelStep(kernel, "x", A=tensor)       a step from a compiled kernel
    bellman_ford(A, source)                 min_plus, a pushed frontier (then buckets)
    bfs_levels(A, source)                   boolean, push or pull rounds
    pagerank(A, alpha=0.85, tol=1e-6)       real, pulled through csc
    connected_components(A)                 boolean, one fixpoint per seed vertex

Each takes a scipy.sparse matrix, a 2-d array or a Graph (which caches the
converted tensors across calls). A[j, i] is the edge j -> i; docs/graphs.md has the guide.
Each runs the whole fixpoint in one generated C call (graph.sweep; for
PageRank an imp.Fixpoint around its compiled step); driver="python" calls one
compiled kernel per step instead, and
tuning= (an etchpy.tuning.Tuning) sets the thresholds.
"""
from .adjacency import Graph
from .fixpoint import ConvergenceError, Fixpoint, KernelStep, equal, fixpoint, within
from .paths import NegativeCycleError, bellman_ford
from .bfs import bfs_levels
from .rank import pagerank
from .components import connected_components

__all__ = ["Graph", "ConvergenceError", "Fixpoint", "KernelStep", "equal", "fixpoint", "within",
           "NegativeCycleError", "bellman_ford", "bfs_levels", "pagerank",
           "connected_components"]
