"""etchpy.graph under every Tuning preset: the graph fields (pull_rounds,
distance_buckets, pull_alpha, pull_beta, rounds_above, bucket_count,
dense_rounds, scan_below) change only the path taken, never the answer. NOOPT
turns pulls and buckets off (plain push rounds); FORCE pulls whenever the
frontier has out-edges, pushes again at once, takes one bucket as wide as the
largest weight and scans the frontier's edges on every graph."""
import numpy as np
import pytest
import scipy.sparse as sp
import scipy.sparse.csgraph as cg

import etchpy as ep
from etchpy import graph, tuning
from etchpy.graph import sweep as sw

pytestmark = pytest.mark.usefixtures("shared_cache")

PRESETS = [tuning.NOOPT, tuning.FORCE, "force_hash",
           {"dense_rounds": 0, "rounds_above": 0, "pull_alpha": 0.5, "pull_beta": 1e9}]


def two_parts(n=70, seed=3):
    """A directed graph with self loops, zero weights, isolated vertices and a
    dense part (pulls fire) next to a sparse chain (rounds stay sparse)."""
    rng = np.random.default_rng(seed)
    dense = np.where(rng.random((n, n)) < 0.02, rng.uniform(0.5, 9, (n, n)), 0.0)
    dense[:20, :20] = np.where(rng.random((20, 20)) < 0.4, rng.uniform(0.5, 9, (20, 20)), 0)
    dense[np.arange(20, n // 2), np.arange(21, n // 2 + 1)] = 1.0     # a chain
    dense[n - 10:, :] = 0.0                      # the last vertices have no out-edges
    A = sp.csr_array(dense)
    A.data[::5] = 0.0                            # stored zeros: zero-weight edges
    return A


@pytest.mark.parametrize("preset", PRESETS, ids=["noopt", "force", "force_hash", "knobs"])
def test_every_preset_gives_the_default_answers_in_c(preset):
    A = two_parts()
    G, S = graph.Graph(A), graph.Graph(A + A.T)
    for s in (0, 20):
        ref = cg.dijkstra(A, indices=s)
        assert np.array_equal(graph.bellman_ford(G, s, tuning=preset), ref)
        lv = cg.shortest_path(S.csr, unweighted=True, indices=s)
        want = np.where(np.isinf(lv), -1, lv).astype(np.int64)
        assert np.array_equal(graph.bfs_levels(S, s, tuning=preset, driver="c"), want)
    assert np.array_equal(graph.connected_components(G, tuning=preset),
                          graph.connected_components(G))


@pytest.mark.parametrize("preset", ["noopt", "force"])
def test_the_python_driver_and_pagerank_under_the_presets(preset):
    A = two_parts(40, 5)
    G, S = graph.Graph(A), graph.Graph(A + A.T)
    assert np.array_equal(graph.bellman_ford(G, 0, tuning=preset, driver="python"),
                          cg.dijkstra(A, indices=0))
    assert np.array_equal(graph.bfs_levels(S, 0, tuning=preset, driver="python"),
                          graph.bfs_levels(S, 0))
    assert np.array_equal(graph.connected_components(G, tuning=preset, driver="python"),
                          graph.connected_components(G))
    assert np.allclose(graph.pagerank(G, tuning=preset), graph.pagerank(G),
                       rtol=0, atol=1e-14)


def test_the_knobs_reach_the_c():
    A = two_parts()
    G = graph.Graph(A)
    assert sw.bucket_width(G, 1)[0] == A.data.max()           # one bucket: the widest
    assert sw.bucket_width(G, 64)[0] == pytest.approx(max(A.data.max() / 64,
                                                          A.data[A.data > 0].min()))
    d = np.full(G.n, np.inf)
    d[0] = 0.0
    taken = sw.settle(G, ep.semirings.min_plus, d, np.array([0]),
                      tuning=tuning.Tuning(rounds_above=0))
    assert taken >= np.isfinite(d).sum()                     # buckets only: all taken
    with pytest.raises(ValueError, match="unknown tuning preset"):
        graph.bellman_ford(G, 0, tuning="fastest")
