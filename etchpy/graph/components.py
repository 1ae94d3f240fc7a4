"""Connected components: by default one C call that runs a BFS from each vertex
not yet labelled, in increasing order (graph.sweep.seeded: O(n + m)); with
driver="python", FastSV (Zhang, Azad, Hu 2020; LAGraph's
LAGr_ConnectedComponents): parents f, grandparents gf = f[f], and per step

    mngf[i] = min(gf[i], min_j A[i, j] ⊗ gf[j])      (one compiled kernel)
    f[f[i]] = min(f[f[i]], mngf[i])                  (stochastic hooking)
    f = min(f, mngf, gf)                             (aggressive hooking, shortcut)

until the grandparents stop changing; then every vertex's parent is the
smallest vertex of its component. The kernel runs over an integer min_plus
semiring with A's stored values 0, so ⊗ passes gf[j] through.
"""
from __future__ import annotations


import numpy as np

from ..runtime.kernel_cache import kept
from ..expr.nodes import indices, sum as esum, tensor as etensor
from ..semiring import Semiring, semirings
from ..api import compile as ep_compile
from ..tuning import DEFAULT, Tuning, of as tuning_of
from . import adjacency as adj, direct
from .fixpoint import fixpoint
from .sweep import choose, seeded

# min over int64 with + as the product: labels below 2**62 never overflow
MIN_PLUS_INT = Semiring("min_plus_int64", np.int64, np.iinfo(np.int64).max, 0,
                        ("({a} < {b} ? {a} : {b})", np.minimum), ("{a} + {b}", np.add),
                        idempotent=True)


@kept("graph.min_neighbour")
def _min_neighbour_kernel(tuning: Tuning = DEFAULT):
    i, j = indices("i j")
    A, g = etensor("A", 2, format="csr"), etensor("g", 1)
    return ep_compile(g[i] + esum(j, A[i, j] * g[j]), semiring=MIN_PLUS_INT, tuning=tuning)


def connected_components(A, *, directed: bool = True, driver: str = "auto", tuning=None):
    """The connected components of the graph of A, as a label per vertex.

    Parameters: A, a square scipy.sparse matrix, 2-d array or ep.graph.Graph
    (its stored entries
    are the edges; weights ignored); directed, whether A's edges are directed:
    then the components are the weakly connected ones (A + Aᵀ is used); with
    directed=False each stored entry is an undirected edge, as in
    scipy.sparse.csgraph: a symmetric A is used as it is (checked once per
    Graph), any other as A + Aᵀ, so both give the same labels;
    driver, "auto" (one C call: for a scipy matrix, union-find over its own
    arrays, checked in C, values not read (graph.direct); else a BFS from each
    vertex not yet labelled, in increasing order, graph.sweep.seeded; Python
    when no compiler builds it),
    "c", or "python" (FastSV, one compiled kernel per step); tuning, an
    etchpy.tuning.Tuning, preset name or dict that FastSV's kernel is
    compiled under (every setting gives the same labels).
    Returns: an int64 array: label[v] is the smallest vertex of v's component
    (so two vertices share a label exactly when they are connected).
    Raises: InputError naming A for a non-square or non-finite matrix, naming
    driver for an unknown one.

        >>> connected_components(scipy.sparse.csr_array([[0, 1, 0], [0, 0, 0], [0, 0, 0]]))
        array([0, 0, 2])
    """
    t = tuning_of(tuning)
    if driver != "python" and direct.is_direct(A):     # its arrays as they are, checked in C
        return choose(driver, lambda: direct.components(A),
                      lambda: connected_components(A, driver="python", tuning=t))
    G = adj.as_graph(A)
    if directed or not G.cached("symmetric", adj.is_symmetric):
        G = G.cached("both_ways", lambda m: adj.Graph(adj.both_ways(m), G.name))
    return choose(driver, lambda: _seeded_in_c(G), lambda: _fastsv(G, t))


def _seeded_in_c(G) -> np.ndarray:
    label = np.empty(G.n, dtype=np.int64)
    seeded(G, semirings.boolean, np.zeros(G.n, dtype=np.bool_), label,
           name="connected_components")
    return label


def _fastsv(G, tuning: Tuning) -> np.ndarray:
    n = G.n
    T = G.tensor("csr", MIN_PLUS_INT, values=0)
    kern = _min_neighbour_kernel(tuning)
    f = np.arange(n, dtype=np.int64)
    buf = np.empty(n, dtype=np.int64)

    def step(gf):
        mngf = kern(A=T, g=gf, out=buf)
        np.minimum.at(f, f, mngf)                   # stochastic hooking
        np.minimum(f, mngf, out=f)                  # aggressive hooking
        np.minimum(f, gf, out=f)                    # shortcutting
        return f[f]

    fixpoint(step, f.copy(), max_iter=n + 2, name="connected_components")
    return f
