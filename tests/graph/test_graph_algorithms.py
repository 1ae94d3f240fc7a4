"""etchpy.graph's algorithms against scipy.sparse.csgraph and a dense numpy
PageRank (examples, and a Hypothesis property over small random graphs):
disconnected graphs, unreachable vertices, self loops, dangling
vertices, directed and undirected graphs, and bad inputs."""
import numpy as np
import pytest
import scipy.sparse as sp
import scipy.sparse.csgraph as cg
from hypothesis import given, strategies as st

import etchpy as ep
from etchpy import graph
from etchpy.graph import adjacency

pytestmark = pytest.mark.usefixtures("shared_cache")


def random_graph(n, density, seed, *, symmetric=False, loops=False):
    rng = np.random.default_rng(seed)
    dense = np.where(rng.random((n, n)) < density, rng.uniform(1, 10, (n, n)), 0.0)
    if not loops:
        np.fill_diagonal(dense, 0.0)
    if symmetric:
        dense = np.triu(dense) + np.triu(dense, 1).T
    return sp.csr_array(dense)


def bfs_reference(A, s):
    lv = cg.shortest_path(A, unweighted=True, indices=s)
    return np.where(np.isinf(lv), -1, lv).astype(np.int64)


def pagerank_reference(A, alpha=0.85, tol=1e-6):
    """networkx's power iteration, dense."""
    W = A.toarray()
    n = len(W)
    deg = W.sum(axis=1)
    P = np.divide(W, deg[:, None], out=np.zeros_like(W), where=deg[:, None] > 0)
    x = np.full(n, 1.0 / n)
    for _ in range(100):
        new = alpha * (x @ P + x[deg == 0].sum() / n) + (1 - alpha) / n
        if np.abs(new - x).sum() < n * tol:
            return new
        x = new
    raise AssertionError("reference did not converge")


def same_partition(a, b):
    pairs = {(x, y) for x, y in zip(a, b)}
    return len(pairs) == len(set(a)) == len(set(b))


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("symmetric", [False, True])
def test_bellman_ford_is_dijkstra(seed, symmetric):
    A = random_graph(40, 0.06, seed, symmetric=symmetric, loops=True)
    for s in (0, 7):
        assert np.array_equal(graph.bellman_ford(A, s), cg.dijkstra(A, indices=s))


def test_bellman_ford_negative_weights_and_unreachable():
    A = sp.csr_array(np.array([[0, 4.0, 1.0, 0], [0, 0, 0, 0], [0, -2.0, 0, 0],
                               [0, 0, 0, 0]]))
    assert graph.bellman_ford(A, 0).tolist() == [0.0, -1.0, 1.0, np.inf]


def test_bellman_ford_negative_cycle_names_the_input():
    A = sp.csr_array(np.array([[0, 1.0, 0], [0, 0, -3.0], [0, 1.0, 0]]))
    with pytest.raises(graph.NegativeCycleError, match="A has a negative cycle"):
        graph.bellman_ford(A, 0)
    with pytest.raises(ep.InputError, match="negative cycle"):
        graph.bellman_ford(sp.csr_array(np.array([[-1.0]])), 0)


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("symmetric", [False, True])
def test_bfs_levels_are_unweighted_distances(seed, symmetric):
    A = random_graph(50, 0.04, seed, symmetric=symmetric, loops=True)
    for s in (0, 9):
        assert np.array_equal(graph.bfs_levels(A, s), bfs_reference(A, s))


@pytest.mark.parametrize("driver", ["c", "python"])
@pytest.mark.parametrize("density", [0.1, 0.3])
@pytest.mark.parametrize("symmetric", [False, True])
def test_bfs_levels_on_dense_graphs_pull_as_well(density, symmetric, driver):
    # dense enough that the later levels pull the unvisited vertices' in-edges
    A = random_graph(120, density, 5, symmetric=symmetric)
    for s in (0, 3):
        assert np.array_equal(graph.bfs_levels(A, s, driver=driver), bfs_reference(A, s))


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_changed_among_the_frontier_edges_is_the_full_scan(seed):
    A = random_graph(300, 0.01, seed)
    rng = np.random.default_rng(seed)
    front = np.sort(rng.choice(300, 2, replace=False))
    hit = rng.random(300) < 0.5
    heads = np.zeros(300, dtype=bool)
    heads[A[front].indices] = True
    mask = hit & heads                   # a predicate true only at the frontier's heads
    got = adjacency.changed(A, front, lambda at: mask[at], scan_below=0)
    assert np.array_equal(got, np.flatnonzero(mask))


def test_large_sparse_graph_takes_the_frontier_edge_path():
    n = ep.tuning.DEFAULT.scan_below
    rng = np.random.default_rng(7)
    A = sp.csr_array((rng.uniform(1, 10, 3 * n), (rng.integers(0, n, 3 * n),
                                                   rng.integers(0, n, 3 * n))), shape=(n, n))
    A.sum_duplicates()
    assert np.array_equal(graph.bellman_ford(A, 0, driver="python"), cg.dijkstra(A, indices=0))
    assert np.array_equal(graph.bfs_levels(A, 0, driver="python"), bfs_reference(A, 0))


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_pagerank_matches_the_power_iteration(seed):
    A = random_graph(60, 0.03, seed, loops=True)       # some vertices dangle
    assert (np.asarray(A.sum(axis=1)).ravel() == 0).any()
    x = graph.pagerank(A)
    assert np.allclose(x, pagerank_reference(A), rtol=0, atol=1e-12)
    assert abs(x.sum() - 1) < 1e-9


def test_pagerank_edge_cases():
    assert graph.pagerank(sp.csr_array((3, 3))).tolist() == [0.0, 0.0, 0.0]
    with pytest.raises(ep.InputError, match="alpha"):
        graph.pagerank(sp.eye_array(2, format="csr"), alpha=1.0)
    with pytest.raises(ep.InputError, match="A has a negative weight"):
        graph.pagerank(sp.csr_array(np.array([[0, -1.0], [1.0, 0]])))
    with pytest.raises(graph.ConvergenceError, match="pagerank"):
        graph.pagerank(random_graph(30, 0.2, 0), max_iter=1)


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("density", [0.02, 0.05])
def test_components_are_scipys(seed, density):
    A = random_graph(80, density, seed, loops=True)
    labels = graph.connected_components(A)
    _, ref = cg.connected_components(A, directed=True, connection="weak")
    assert same_partition(labels, ref)
    assert all(labels[v] == np.flatnonzero(labels == labels[v]).min() for v in range(80))
    sym = random_graph(80, density, seed, symmetric=True)
    _, ref = cg.connected_components(sym, directed=False)
    assert same_partition(graph.connected_components(sym, directed=False), ref)


def test_dense_input_and_isolated_vertices():
    A = np.zeros((4, 4))
    A[0, 1] = A[1, 0] = 1.0
    assert graph.connected_components(A).tolist() == [0, 0, 2, 3]
    assert graph.bfs_levels(A, 2).tolist() == [-1, -1, 0, -1]


@pytest.mark.parametrize("call", [
    lambda A: graph.bellman_ford(A, 0), lambda A: graph.bfs_levels(A, 0),
    graph.pagerank, graph.connected_components])
def test_bad_inputs_name_the_input(call):
    with pytest.raises(ep.InputError, match="A is an adjacency matrix and must be square"):
        call(sp.csr_array((2, 3)))
    with pytest.raises(ep.InputError, match="A is an adjacency matrix"):
        call("not a matrix")
    nan = sp.csr_array(np.array([[0, np.nan], [1.0, 0]]))
    with pytest.raises(ep.InputError, match="A has a stored value that is not finite"):
        call(nan.toarray())                     # a dense A's values are read to find edges
    with pytest.raises(ep.InputError, match="A has a stored value that is not finite"):
        call(graph.Graph(nan))


@pytest.mark.parametrize("call", [lambda A: graph.bellman_ford(A, 0), graph.pagerank])
def test_weighted_algorithms_reject_non_finite_scipy_weights(call):
    with pytest.raises(ep.InputError, match="A has a stored value that is not finite"):
        call(sp.csr_array(np.array([[0, np.nan], [1.0, 0]])))


def test_pattern_algorithms_read_no_scipy_value():
    """BFS and components read a scipy A's pattern only: a stored NaN is an edge."""
    A = sp.csr_array((np.array([np.nan, np.inf]), np.array([1, 2]), np.array([0, 1, 2, 2])),
                     shape=(3, 3))
    assert graph.bfs_levels(A, 0).tolist() == [0, 1, 2]
    assert graph.connected_components(A).tolist() == [0, 0, 0]


def test_bad_source_names_the_source():
    A = sp.eye_array(3, format="csr")
    with pytest.raises(ep.InputError, match="source=3 is not a vertex"):
        graph.bellman_ford(A, 3)
    with pytest.raises(ep.InputError, match="source is a vertex number"):
        graph.bfs_levels(A, 1.5)


@st.composite
def graphs(draw):
    n = draw(st.integers(1, 12))
    cells = draw(st.lists(st.tuples(st.integers(0, n - 1), st.integers(0, n - 1),
                                    st.integers(1, 9)), max_size=3 * n))
    dense = np.zeros((n, n))
    for r, c, w in cells:
        dense[r, c] = float(w)
    return sp.csr_array(dense), draw(st.integers(0, n - 1))


@given(graphs())
def test_every_algorithm_equals_its_reference(case):
    A, s = case
    assert np.array_equal(graph.bellman_ford(A, s), cg.dijkstra(A, indices=s))
    assert np.array_equal(graph.bfs_levels(A, s), bfs_reference(A, s))
    _, ref = cg.connected_components(A, directed=True, connection="weak")
    assert same_partition(graph.connected_components(A), ref)
    if A.nnz:
        assert np.allclose(graph.pagerank(A), pagerank_reference(A), rtol=0, atol=1e-12)
