"""Single-source shortest paths: Bellman-Ford over min_plus, a fixpoint of one
compiled kernel (BFS levels, in bfs.py, push the same way).

It pushes a sparse frontier (the vertices whose value changed in the last step)
through the rows of A:  t[i] = ⊕_j f[j] ⊗ A[j, i],  loop order (j, i), so an
iteration touches the edges leaving the frontier (plus one pass over the dense
output and the comparison with the current values).
"""
from __future__ import annotations

import functools

import numpy as np

from ..errors import InputError
from ..expr.nodes import indices, sum as esum, tensor as etensor
from ..semiring import semirings
from ..api import compile as ep_compile
from . import adjacency as adj
from .fixpoint import ConvergenceError, fixpoint


class NegativeCycleError(InputError):
    """A negative cycle is reachable from the source: shortest paths are unbounded
    (an InputError: the message names the input)."""


@functools.cache
def push_kernel(semiring, masked=False):
    """t[i] = ⊕_j f[j] ⊗ A[j, i] (⊗ u[i] when masked), A csr, f a sparse vector."""
    i, j = indices("i j")
    A, f = etensor("A", 2, format="csr"), etensor("f", 1, format="coo")
    body = f[j] * A[j, i]
    if masked:
        body = body * etensor("u", 1)[i]
    return ep_compile(esum(j, body), semiring=semiring)


def bellman_ford(A, source: int, *, max_iter: int | None = None):
    """Distances from `source` along the edges of A (A[j, i]: the weight of j -> i).

    Parameters: A, a square scipy.sparse matrix, 2-d array or ep.graph.Graph of
    finite weights
    (negative weights allowed); source, a vertex number; max_iter, the most
    relaxation rounds (default: the number of vertices, enough for any graph
    without a negative cycle).
    Returns: a float64 array of n distances; inf where unreachable.
    Raises: InputError naming A for a non-square or non-finite matrix, naming
    source for a bad vertex; NegativeCycleError (an InputError) naming A when
    a negative cycle is reachable from source.

        >>> bellman_ford(scipy.sparse.csr_array([[0, 2.0], [0, 0]]), 0)
        array([0., 2.])
    """
    G = adj.as_graph(A)
    n = G.n
    s = adj.check_vertex(source, n)
    sr = semirings.min_plus
    T = G.tensor("csr", sr)
    kern, idt = push_kernel(sr), adj.index_dtype(T)
    d = np.full(n, np.inf)
    d[s] = 0.0
    buf = np.empty(n)

    def step(state):
        dist, front = state
        t = kern(A=T, f=adj.frontier(front, dist[front], n, np.inf, idt), out=buf)
        better = adj.changed(G.csr, front, lambda at: t[at] < dist[at])
        dist[better] = t[better]
        return dist, better

    limit = n + 1 if max_iter is None else max_iter
    try:
        return fixpoint(step, (d, np.array([s])), converged=no_frontier, max_iter=limit,
                        name="bellman_ford").value[0]
    except ConvergenceError:
        if max_iter is not None:
            raise
        raise NegativeCycleError(f"A has a negative cycle reachable from source={s}: "
                                 "shortest distances are unbounded") from None


def no_frontier(old, new) -> bool:
    """Converged: the last step changed no vertex (the state is (…, frontier))."""
    return len(new[1]) == 0
