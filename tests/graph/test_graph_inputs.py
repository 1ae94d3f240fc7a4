"""etchpy.graph on every kind of input the algorithms accept, against
scipy.sparse.csgraph and a small pure-Python reference: directed graphs,
disconnected ones, self loops, duplicate entries (summed, as scipy sums them),
isolated vertices, integer, float, zero and negative weights (a negative
cycle reachable from the source raises NegativeCycleError naming the input),
empty graphs and single vertices; bad sources and arguments raise an
InputError naming them. The C paths only: no kernel is compiled per example."""
import numpy as np
import pytest
import scipy.sparse as sp
import scipy.sparse.csgraph as cg
from hypothesis import given, strategies as st

import etchpy as ep
from etchpy import graph

pytestmark = pytest.mark.usefixtures("shared_cache")

WEIGHTS = [-3, -1, 0, 0.5, 1, 2.5, 7]       # sums of these are exact in float64


def reference_bellman_ford(A, s):
    """Distances from s by n - 1 rounds over the stored entries of the canonical
    csr A; None when a round n would still improve (a reachable negative cycle)."""
    n = A.shape[0]
    rows = np.repeat(np.arange(n), np.diff(A.indptr))
    edges = list(zip(rows.tolist(), A.indices.tolist(), A.data.tolist()))
    d = [np.inf] * n
    d[s] = 0.0
    for _ in range(n):
        changed = False
        for j, i, w in edges:
            if d[j] + w < d[i]:
                d[i], changed = d[j] + w, True
        if not changed:
            return np.array(d)
    return None


def levels(A, s):
    lv = cg.shortest_path(A, unweighted=True, indices=s)
    return np.where(np.isinf(lv), -1, lv).astype(np.int64)


def same_partition(a, b):
    pairs = set(zip(a.tolist(), b.tolist()))
    return len(pairs) == len(set(a.tolist())) == len(set(b.tolist()))


@st.composite
def graphs(draw, weights=WEIGHTS):
    """(a coo matrix whose duplicate entries scipy sums, a source): directed,
    with self loops and isolated vertices."""
    n = draw(st.integers(1, 9))
    cells = draw(st.lists(st.tuples(st.integers(0, n - 1), st.integers(0, n - 1),
                                    st.sampled_from(weights)), max_size=3 * n))
    rows, cols, w = (list(x) for x in zip(*cells)) if cells else ([], [], [])
    dtype = draw(st.sampled_from([np.float64, np.int64])) if all(
        float(x).is_integer() for x in w) else np.float64
    A = sp.coo_array((np.array(w, dtype=dtype), (rows, cols)), shape=(n, n))
    return A, draw(st.integers(0, n - 1))


@given(graphs())
def test_bellman_ford_is_the_reference_or_a_negative_cycle(case):
    A, s = case
    ref = reference_bellman_ford(A.tocsr(), s)
    if ref is None:
        with pytest.raises(graph.NegativeCycleError, match="A has a negative cycle"):
            graph.bellman_ford(A, s)
    else:
        assert np.array_equal(graph.bellman_ford(A, s), ref)
        assert np.array_equal(graph.bellman_ford(graph.Graph(A), s, driver="c",
                                                 max_iter=A.shape[0] + 1), ref)


@given(graphs())
def test_levels_components_and_ranks_are_scipys(case):
    A, s = case
    C = A.tocsr()
    ones = sp.csr_array((np.ones(C.nnz), C.indices, C.indptr), shape=C.shape)
    assert np.array_equal(graph.bfs_levels(A, s), levels(ones, s))
    for directed in (True, False):        # undirected: each entry an undirected edge
        _, ref = cg.connected_components(C, directed=directed, connection="weak")
        got = graph.connected_components(A, directed=directed)
        assert same_partition(got, ref)
        assert (got[got] == got).all() and (got <= np.arange(len(got))).all()   # smallest
    P = abs(C)
    if P.nnz:
        x, y = graph.pagerank(P), graph.pagerank(P, driver="python")
        assert np.allclose(x, y, rtol=0, atol=1e-15)
        if P.sum() > 0:
            assert abs(x.sum() - 1) < 1e-12


def test_negative_cycles_are_reported_wherever_they_are_reachable():
    # a cycle reachable only through a long path, and one not reachable at all
    n = 12
    A = sp.lil_array((n, n))
    for v in range(8):
        A[v, v + 1] = 1.0
    A[8, 9], A[9, 8] = 2.0, -3.0
    A[10, 11], A[11, 10] = 1.0, -5.0
    A = A.tocsr()
    with pytest.raises(graph.NegativeCycleError, match=r"A has a negative cycle .*source=0"):
        graph.bellman_ford(A, 0)
    with pytest.raises(graph.NegativeCycleError, match="roads"):
        graph.bellman_ford(graph.Graph(A, name="roads"), 3, driver="python")
    B = A.copy()
    B[8, 9] = B[9, 8] = 0.0                     # zero-weight edges both ways: no cycle
    assert graph.bellman_ford(B, 0).tolist() == [*range(9), 8.0, np.inf, np.inf]
    with pytest.raises(graph.NegativeCycleError, match="source=10"):
        graph.bellman_ford(B, 10)               # 10 <-> 11 is unreachable from 0 only
    huge = sp.csr_array(np.diag(np.full(7, -1e308), 1) + np.diag([-1e308], -7))
    with pytest.raises(graph.NegativeCycleError):          # distances would reach -inf
        graph.bellman_ford(huge, 0)


def test_empty_and_single_vertex_graphs():
    for E in (sp.csr_array((0, 0)), np.zeros((0, 0))):
        with pytest.raises(ep.InputError, match="source=0 is not a vertex of a graph of 0"):
            graph.bellman_ford(E, 0)
        with pytest.raises(ep.InputError, match="source=0"):
            graph.bfs_levels(E, 0)
        assert graph.pagerank(E).shape == graph.connected_components(E).shape == (0,)
    for one in (sp.csr_array((1, 1)), sp.csr_array(np.array([[2.0]])), np.ones((1, 1))):
        assert graph.bellman_ford(one, 0).tolist() == [0.0]
        assert graph.bfs_levels(one, 0).tolist() == [0]
        assert graph.connected_components(one).tolist() == [0]
        assert graph.pagerank(one).tolist() in ([0.0], [1.0])


def test_the_callers_matrix_is_never_modified():
    R = sp.csr_array((np.array([3.0, 1.0, 2.0]), np.array([1, 0, 1]), np.array([0, 3, 3, 3])),
                     shape=(3, 3))                      # unsorted, with a duplicate
    before = (R.data.copy(), R.indices.copy())
    assert graph.bellman_ford(R, 0).tolist() == [0.0, 5.0, np.inf]
    assert np.array_equal(R.data, before[0]) and np.array_equal(R.indices, before[1])


def test_bad_sources_and_arguments_name_them():
    A = sp.eye_array(3, format="csr")
    for bad in (-1, 3, 10**20):
        with pytest.raises(ep.InputError, match=f"source={bad} is not a vertex"):
            graph.bellman_ford(A, bad)
    for bad in (None, "1", 1.0, True, np.array([1])):
        with pytest.raises(ep.InputError, match="source is a vertex number"):
            graph.bfs_levels(A, bad)
    for bad in (0, -2, 1.5, True):
        with pytest.raises(ep.InputError, match="max_iter is a positive integer"):
            graph.bellman_ford(A, 0, max_iter=bad)
        with pytest.raises(ep.InputError, match="max_iter is a positive integer"):
            graph.pagerank(A, max_iter=bad)
    for bad in (0, -1e-3, float("nan"), float("inf"), "small"):
        with pytest.raises(ep.InputError, match="tol is a positive tolerance"):
            graph.pagerank(A, tol=bad)
    for bad in (1, -0.1, float("nan"), "x", None):
        with pytest.raises(ep.InputError, match="alpha is a damping factor"):
            graph.pagerank(A, alpha=bad)
    with pytest.raises(ep.InputError, match="A is an adjacency matrix of real weights"):
        graph.bellman_ford(sp.csr_array(np.array([[0, 1j], [0, 0]])), 0)
    with pytest.raises(ep.InputError, match="not a 2-d complex128 array"):
        graph.connected_components(np.array([[0, 1j], [0, 0]]))
    with pytest.raises(ep.InputError, match="driver"):
        graph.pagerank(A, driver="gpu")


@pytest.mark.parametrize("weighted", [False, True])
def test_pagerank_drivers_agree_and_limit_their_steps(weighted):
    rng = np.random.default_rng(4)
    A = sp.random_array((200, 200), density=0.03, random_state=rng, format="csr")
    A.data[:] = rng.uniform(0.5, 3, A.nnz) if weighted else 1.0
    for tol in (1e-6, 1e-10):
        x, y = graph.pagerank(A, tol=tol), graph.pagerank(A, tol=tol, driver="python")
        assert np.allclose(x, y, rtol=0, atol=1e-15) and abs(x.sum() - 1) < 1e-12
    with pytest.raises(graph.ConvergenceError, match="pagerank did not converge in max_iter=2"):
        graph.pagerank(A, tol=1e-12, max_iter=2, driver="c")
