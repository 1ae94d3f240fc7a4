"""BFS on a Graph with its pulls priced by a sample's estimate and then by
what the last pull read (Tuning.pull_measured), or by pull_alpha and
pull_beta alone, or pushing only:
the levels of csgraph on a clustered graph (points joined to their near
neighbours, where a pull reads most unvisited in-edges) and on a random
expander (where it reads few), from several sources, unreachable vertices
included."""
import numpy as np
import pytest
import scipy.sparse as sp
import scipy.sparse.csgraph as cg

from etchpy import graph
from etchpy.tuning import DEFAULT

pytestmark = pytest.mark.usefixtures("shared_cache")

WAYS = [DEFAULT, DEFAULT.with_(pull_measured=False), DEFAULT.with_(pull_rounds=False),
        DEFAULT.with_(pull_alpha=64.0)]


def near_neighbours(n, k, seed):
    """Each of n random points in the unit square joined to its k nearest, both ways."""
    p = np.random.default_rng(seed).random((n, 2))
    d = ((p[:, None, :] - p[None, :, :]) ** 2).sum(-1)
    np.fill_diagonal(d, np.inf)
    near = np.argsort(d, axis=1)[:, :k]
    A = sp.csr_array((np.ones(n * k), (np.repeat(np.arange(n), k), near.ravel())), shape=(n, n))
    return sp.csr_array(A + A.T)


def expander(n, m, seed):
    rng = np.random.default_rng(seed)
    A = sp.csr_array((np.ones(m), (rng.integers(0, n, m), rng.integers(0, n, m))), shape=(n, n))
    return sp.csr_array(A + A.T)


def reference(A, s):
    lv = cg.shortest_path(A, unweighted=True, indices=s)
    return np.where(np.isinf(lv), -1, lv).astype(np.int64)


@pytest.mark.parametrize("make", [lambda: near_neighbours(600, 8, 1),
                                  lambda: expander(800, 6000, 2),
                                  lambda: sp.block_diag([near_neighbours(300, 6, 3),
                                                         expander(300, 2000, 4)]).tocsr()])
def test_every_pricing_of_pulls_gives_csgraphs_levels(make):
    A = make()
    G = graph.Graph(A)
    for s in (0, A.shape[0] // 2, A.shape[0] - 1):
        want = reference(A, s)
        for t in WAYS:
            assert np.array_equal(graph.bfs_levels(G, s, tuning=t), want)
