"""BFS levels over the boolean semiring, direction-optimising (Beamer et al. 2012).

By default every level runs inside one C call (graph.sweep). With
driver="python" each level is one compiled kernel, whichever is cheaper in
edges read:

    push  t[i] = ∨_j f[j] ∧ A[j, i] ∧ u[i]    f: the frontier (sparse), A csr, u: not visited
    pull  t[i] = ∨_j U[i] ∧ A[j, i] ∧ f[j]    U: the unvisited (sparse), A csc, f: dense

A push reads the out-edges of the frontier, a pull the in-edges of the unvisited
vertices; the step counts both and runs the smaller. Either way the mask is a
product with the not-visited vector, and the result is the next frontier.
"""
from __future__ import annotations


import numpy as np

from ..errors import CompileError
from ..runtime.kernel_cache import kept
from ..expr.nodes import indices, sum as esum, tensor as etensor
from ..semiring import semirings
from ..api import compile as ep_compile
from ..tuning import DEFAULT, Tuning, of as tuning_of
from ..runtime.tensor import Tensor
from . import adjacency as adj, binder, direct
from .fixpoint import fixpoint
from .paths import no_frontier, push_kernel
from .sweep import choose, compact, csc_arrays


@kept("graph.bfs_pull")
def _pull_kernel(tuning: Tuning = DEFAULT):
    i, j = indices("i j")
    A, U, f = etensor("A", 2, format="csc"), etensor("U", 1, format="coo"), etensor("f", 1)
    return ep_compile(esum(j, U[i] * A[j, i] * f[j]), semiring=semirings.boolean,
                      tuning=tuning)


class _Levels:
    """The state of one BFS: levels, the not-visited mask (and a Tensor over its
    memory, bound once), the in-edges still unvisited, and the output buffer."""

    def __init__(self, G, s, tuning: Tuning):
        n, sr = G.n, semirings.boolean
        self.G, self.n, self.tuning = G, n, tuning
        self.push = G.tensor("csr", sr, values=True)
        self.idt = adj.index_dtype(self.push)
        self.out_deg = G.cached("out_degree", lambda m: np.diff(m.indptr))
        self.in_deg = G.cached("in_degree",
                               lambda m: np.bincount(m.indices, minlength=m.shape[0]))
        self.levels = np.full(n, -1, dtype=np.int64)
        self.levels[s] = 0
        self.unvisited = np.ones(n, dtype=np.bool_)
        self.unvisited[s] = False
        self.u = Tensor.from_dense(self.unvisited, "dense", semiring=sr, name="u")
        self.in_unvisited = int(self.in_deg.sum() - self.in_deg[s])
        self.buf = np.empty(n, dtype=np.bool_)
        self.ones = np.ones(n, dtype=np.bool_)

    def step(self, state):
        depth, front = state
        if self.tuning.pull_rounds and self.in_unvisited < int(self.out_deg[front].sum()):
            reached = np.flatnonzero(self._pull(front))
        else:
            f = adj.frontier(front, self.ones[:len(front)], self.n, False, self.idt)
            t = push_kernel(semirings.boolean, True, self.tuning)(A=self.push, f=f, u=self.u,
                                                                  out=self.buf)
            reached = adj.changed(self.G.csr, front, lambda at: t[at], self.tuning.scan_below)
        self.levels[reached] = depth + 1
        self.unvisited[reached] = False
        self.in_unvisited -= int(self.in_deg[reached].sum())
        return depth + 1, reached

    def _pull(self, front):
        f = np.zeros(self.n, dtype=np.bool_)
        f[front] = True
        todo = np.flatnonzero(self.unvisited)
        U = adj.frontier(todo, self.ones[:len(todo)], self.n, False, self.idt, name="U")
        pull = self.G.tensor("csc", semirings.boolean, values=True)
        return _pull_kernel(self.tuning)(A=pull, U=U, f=f, out=self.buf)


def bfs_levels(A, source: int, *, driver: str = "auto", tuning=None):
    """The BFS level (number of edges on a shortest path) of every vertex from
    `source`, following the edges j -> i of the stored entries A[j, i] (weights
    ignored; pass a symmetric A for an undirected graph). A scipy matrix is
    read as it is (graph.direct: its csr arrays checked in C, its values not
    read, every level pushed); a Graph reuses its cached arrays and can pull.
    Either call is made in C with no Python around the BFS (graph.binder,
    Tuning.graph_binder; below 32 MiB of workspaces); the levels are the same.

    Each level pushes the frontier through A's out-edges or pulls the unvisited
    vertices' in-edges; both are masked by the vertices not visited yet.
    Parameters: A, a square scipy.sparse matrix, 2-d array or ep.graph.Graph;
    source, a vertex number; driver, "auto" (every level in one C call, see
    graph.sweep: it pulls when the frontier's out-edges exceed the
    unvisited vertices' in-edges / Tuning.pull_alpha (4), and pushes again
    below n / Tuning.pull_beta (24) frontier vertices; Python when no compiler builds it), "c", or "python" (one
    compiled kernel per level, the cheaper direction in edges read);
    tuning, an etchpy.tuning.Tuning, preset name or dict (its graph fields:
    pull_rounds, pull_alpha, pull_beta, dense_rounds, scan_below, and
    bfs_check_first: a scipy matrix's indices all checked before the walk,
    which then reads them untested; bfs_narrow_levels: the walk's levels
    int32 (-1: the host's, etchpy.host_facts); the Python driver's kernels compile under it); every setting gives
    the same levels.
    Returns: an int64 array of n levels; -1 where unreachable.
    Raises: InputError naming A or source for bad input, naming driver for an
    unknown one.

        >>> bfs_levels(scipy.sparse.csr_array([[0, 1], [0, 0]]), 0)
        array([0, 1])
    """
    t = DEFAULT if tuning is None else tuning_of(tuning)
    made = binder.plan_for(t) if driver == "auto" else None   # in C (graph.binder), or a miss
    if made is not None:
        plan, c = made
        got = c.bfs_graph(plan, _graph_arrays(A), source) if isinstance(A, adj.Graph) \
            else c.bfs(plan, A, source)
        if got is not binder.MISS:
            return got
        binder.wide_miss(made, A)
    if driver != "python" and direct.is_direct(A):     # its arrays as they are, checked in C
        if driver == "auto":                            # choose's, without its closures
            try:
                return direct.bfs(A, source, tuning=t)
            except CompileError:
                return bfs_levels(A, source, driver="python", tuning=t)
        return choose(driver, lambda: direct.bfs(A, source, tuning=t),
                      lambda: bfs_levels(A, source, driver="python", tuning=t))
    G = adj.as_graph(A)
    s = adj.check_vertex(source, G.n)
    return choose(driver, lambda: _levels_in_c(G, s, t), lambda: _levels_in_python(G, s, t))


def _levels_in_c(G, s: int, t: Tuning) -> np.ndarray:
    """Every level in one C call (graph.direct's BFS) over G's int32 csr, pulling
    through its csc (both cached on G: private copies, checked once) as t's
    pull fields say."""
    pos, crd, cpos, ccrd, most = _graph_arrays(G)
    return direct.levels(G.csr, pos, crd, (cpos, ccrd, most), s, t, G.name, checked=True)


def _graph_arrays(G) -> tuple:
    """(pos, crd, cpos, ccrd, the longest row's length): G's compact csr, checked,
    and its csc, made once per Graph (kept in its cache under "bfs arrays")."""
    got = G._cache.get("bfs arrays")
    if got is None:
        pos, crd = G.cached("csr:compact", compact)
        G.cached("csr:compact checked", lambda m: direct.check(m, pos, crd, G.name))
        csc = G.cached("csc:bool:False", lambda m: csc_arrays(m, pos.dtype, np.bool_, False))
        most = int(np.diff(G.csr.indptr).max(initial=0))
        got = G._cache["bfs arrays"] = (pos, crd, csc[0], csc[1], most)
    return got


def _levels_in_python(G, s: int, t: Tuning) -> np.ndarray:
    run = _Levels(G, s, t)
    fixpoint(run.step, (0, np.array([s])), converged=no_frontier, max_iter=G.n + 1,
             name="bfs_levels")
    return run.levels
