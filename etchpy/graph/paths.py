"""Single-source shortest paths: Bellman-Ford over min_plus, a fixpoint of one
compiled kernel (BFS levels, in bfs.py, push the same way).

It pushes a sparse frontier (the vertices whose value changed in the last step)
through the rows of A:  t[i] = ⊕_j f[j] ⊗ A[j, i],  loop order (j, i). By
default the whole iteration is one C call (graph.sweep): with no negative
weight, rounds while the frontier's out-edges double or number n/64 or more,
then buckets of distances (each vertex taken about once, as in Dijkstra);
with a negative weight or max_iter, rounds throughout, in O(frontier + its
out-edges) each. driver="python" runs one compiled kernel per round from
Python (plus one pass over its dense output per round).
"""
from __future__ import annotations


import numpy as np

from ..runtime.kernel_cache import kept
from ..errors import InputError
from ..expr.nodes import indices, sum as esum, tensor as etensor
from ..semiring import semirings
from ..api import compile as ep_compile
from ..tuning import DEFAULT, Tuning, of as tuning_of
from . import adjacency as adj, direct
from .fixpoint import ConvergenceError, fixpoint
from .sweep import bucket_width, choose, settle, sweep


class NegativeCycleError(InputError):
    """A negative cycle is reachable from the source: shortest paths are unbounded
    (an InputError: the message names the input)."""


@kept("graph.push")
def push_kernel(semiring, masked=False, tuning: Tuning = DEFAULT):
    """t[i] = ⊕_j f[j] ⊗ A[j, i] (⊗ u[i] when masked), A csr, f a sparse vector."""
    i, j = indices("i j")
    A, f = etensor("A", 2, format="csr"), etensor("f", 1, format="coo")
    body = f[j] * A[j, i]
    if masked:
        body = body * etensor("u", 1)[i]
    return ep_compile(esum(j, body), semiring=semiring, tuning=tuning)


def bellman_ford(A, source: int, *, max_iter: int | None = None, driver: str = "auto",
                 tuning=None):
    """Distances from `source` along the edges of A (A[j, i]: the weight of j -> i).

    Parameters: A, a square scipy.sparse matrix, 2-d array or ep.graph.Graph of
    finite weights (negative weights allowed; duplicate entries summed, as
    scipy does); source, a vertex number; max_iter, the most
    relaxation rounds (default: the number of vertices, enough for any graph
    without a negative cycle); driver, "auto" (every round in one C call, see
    graph.sweep; buckets straight from a scipy matrix's arrays when its rows
    are canonical and no weight is negative, graph.direct; Python when no
    compiler builds it), "c" or "python" (one
    compiled kernel per round, driven from Python). Both compute the same rounds.
    tuning: an etchpy.tuning.Tuning, preset name or dict (its graph fields:
    distance_buckets, rounds_above, bucket_count, dense_rounds, scan_below;
    the Python driver's kernels compile under it); every setting gives the
    same distances.
    Returns: a float64 array of n distances; inf where unreachable.
    Raises: InputError naming A for a non-square, complex or non-finite
    matrix, naming source for a bad vertex, max_iter when it is not a
    positive integer, driver for an unknown one; NegativeCycleError (an
    InputError) naming A (its Graph's name) when a negative cycle is reachable
    from source, or distances fall below the float64 range; ConvergenceError
    after max_iter rounds when given.

        >>> bellman_ford(scipy.sparse.csr_array([[0, 2.0], [0, 0]]), 0)
        array([0., 2.])
    """
    t = tuning_of(tuning)
    d = _on_its_arrays(A, source, max_iter, driver, t)
    if d is not None:
        return d
    G = adj.as_graph(A)
    s = adj.check_vertex(source, G.n)
    _check_max_iter(max_iter)
    limit = G.n + 1 if max_iter is None else int(max_iter)
    try:
        d, settled = choose(driver, lambda: _rounds_in_c(G, s, max_iter, t),
                            lambda: (_rounds_in_python(G, s, limit, t), False))
    except ConvergenceError:
        if max_iter is not None:
            raise
        raise NegativeCycleError(f"{G.name} has a negative cycle reachable from source={s}: "
                                 "shortest distances are unbounded") from None
    if not settled and np.isneginf(d).any():   # a cycle so negative that distances reached -inf
        raise NegativeCycleError(f"{G.name}: distances from source={s} fall below the "
                                 "float64 range (a negative cycle, or weights too large)")
    return d


def _on_its_arrays(A, source, max_iter, driver: str, t: Tuning):
    """Distances by buckets straight from a scipy matrix's own arrays, checked in
    C (graph.direct.distances), or None: A is not a scipy matrix, max_iter is
    given, buckets are off or do not apply as A is (the Graph path then)."""
    if driver == "python" or max_iter is not None or not t.distance_buckets \
            or not direct.is_direct(A):
        return None
    return choose(driver, lambda: direct.distances(A, source, t), lambda: None)


def _check_max_iter(max_iter) -> None:
    if max_iter is not None and (isinstance(max_iter, (bool, np.bool_)) or not
                                 isinstance(max_iter, (int, np.integer)) or max_iter < 1):
        raise InputError(f"max_iter is a positive integer or None, not {max_iter!r}")


def _rounds_in_c(G, s: int, max_iter: int | None, t: Tuning):
    """(distances, settled) in one C call: settled by buckets of distances when
    no weight is negative and no round limit is asked for (each vertex is taken
    about once; no distance is then below 0), else by rounds (graph.sweep)."""
    d = np.full(G.n, np.inf)
    d[s] = 0.0
    if max_iter is None and t.distance_buckets and bucket_width(G, t.bucket_count) is not None:
        settle(G, semirings.min_plus, d, np.array([s]), name="bellman_ford", tuning=t)
        return d, True
    at = np.full(G.n, -1, dtype=np.int64)
    at[s] = 0
    limit = G.n + 1 if max_iter is None else max_iter
    sweep(G, semirings.min_plus, d, np.array([s]), at, max_iter=limit, name="bellman_ford",
          tuning=t)
    return d, False


def _rounds_in_python(G, s: int, limit: int, tuning: Tuning) -> np.ndarray:
    n = G.n
    sr = semirings.min_plus
    T = G.tensor("csr", sr)
    kern, idt = push_kernel(sr, tuning=tuning), adj.index_dtype(T)
    d = np.full(n, np.inf)
    d[s] = 0.0
    buf = np.empty(n)

    def step(state):
        dist, front = state
        t = kern(A=T, f=adj.frontier(front, dist[front], n, np.inf, idt), out=buf)
        better = adj.changed(G.csr, front, lambda at: t[at] < dist[at], tuning.scan_below)
        dist[better] = t[better]
        return dist, better

    return fixpoint(step, (d, np.array([s])), converged=no_frontier, max_iter=limit,
                    name="bellman_ford").value[0]


def no_frontier(old, new) -> bool:
    """Converged: the last step changed no vertex (the state is (…, frontier))."""
    return len(new[1]) == 0
