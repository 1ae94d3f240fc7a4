"""The whole-fixpoint C driver (etchpy.graph.sweep over c.frontier's generated C):
Bellman-Ford (by buckets, or by rounds with negative weights or max_iter), BFS
levels (push and pull rounds) and components (one fixpoint per seed) equal
scipy's answers and the Python-driven
path's, on graphs with unreachable vertices, zero-weight edges, self loops,
long paths (many rounds through one workspace), n = 1 and no edges; another
idempotent semiring through `sweep`; bad input."""
import numpy as np
import pytest
import scipy.sparse as sp
import scipy.sparse.csgraph as cg
from hypothesis import given, settings, strategies as st

import etchpy as ep
from etchpy import graph
from etchpy.c import frontier
from etchpy.graph import adjacency, sweep as sw
from etchpy.semiring import semirings

pytestmark = pytest.mark.usefixtures("shared_cache")


def levels_reference(A, s):
    lv = cg.shortest_path(A, unweighted=True, indices=s)
    return np.where(np.isinf(lv), -1, lv).astype(np.int64)


def weighted(n, density, seed, *, zeros=0.2, low=1.0, high=10.0):
    """Random directed edges (self loops included) with weights in [low, high),
    a share `zeros` of them stored as explicit zero-weight edges."""
    rng = np.random.default_rng(seed)
    rows, cols = np.nonzero(rng.random((n, n)) < density)
    w = rng.uniform(low, high, len(rows))
    w[rng.random(len(rows)) < zeros] = 0.0
    return sp.csr_array((w, (rows, cols)), shape=(n, n))


def path(n):
    return sp.csr_array((np.ones(n - 1), (np.arange(n - 1), np.arange(1, n))), shape=(n, n))


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_bellman_ford_by_buckets_and_by_rounds_is_dijkstra(seed):
    A = weighted(60, 0.04, seed)
    assert A.nnz and (A.data == 0).any()
    for s in (0, 11):
        ref = cg.dijkstra(A, indices=s)
        assert np.isinf(ref).any()                       # some vertices unreachable
        assert np.array_equal(graph.bellman_ford(A, s), ref)
        assert np.array_equal(graph.bellman_ford(A, s, max_iter=61, driver="c"), ref)
        assert np.array_equal(graph.bellman_ford(A, s, driver="python"), ref)


def test_buckets_narrower_than_the_least_weight_requeue():
    # weights over six decades: a bucket is max/64, wider than the light edges,
    # so vertices are improved again inside the bucket being emptied
    A = weighted(80, 0.06, 9, zeros=0.1, low=1e-3, high=1e3)
    G = graph.Graph(A)
    delta, _ = sw.bucket_width(G)
    assert delta > A.data[A.data > 0].min()
    for s in (0, 5):
        assert np.array_equal(graph.bellman_ford(G, s), cg.dijkstra(A, indices=s))


def grid(side, seed):
    """A side x side grid, both ways, weights in [0, 10) with some zeros."""
    v = np.arange(side * side).reshape(side, side)
    rows = np.r_[v[:, :-1].ravel(), v[:, 1:].ravel(), v[:-1].ravel(), v[1:].ravel()]
    cols = np.r_[v[:, 1:].ravel(), v[:, :-1].ravel(), v[1:].ravel(), v[:-1].ravel()]
    w = np.random.default_rng(seed).uniform(0, 10, len(rows))
    w[::7] = 0.0
    return sp.csr_array((w, (rows, cols)), shape=(side * side,) * 2)


@pytest.mark.parametrize("rounds_above", [0, 1, ep.tuning.DEFAULT.rounds_above])
def test_buckets_alone_and_after_rounds_are_dijkstra(rounds_above):
    A = grid(30, 1)          # high diameter: the frontier soon stops doubling
    G = graph.Graph(A)
    for s in (0, 465):
        d = np.full(900, np.inf)
        d[s] = 0.0
        taken = sw.settle(G, semirings.min_plus, d, np.array([s]),
                          tuning=ep.tuning.Tuning(rounds_above=rounds_above))
        assert np.array_equal(d, cg.dijkstra(A, indices=s))
        assert taken >= 900 or rounds_above      # buckets only: every vertex taken
    assert np.array_equal(graph.bellman_ford(G, 0), cg.dijkstra(A, indices=0))


def test_negative_weights_take_rounds_and_cycles_are_reported():
    A = sp.csr_array(np.array([[0, 4.0, 1.0, 0], [0, 0, 0, 0], [0, -2.0, 0, 0],
                               [0, 0, 0, 0]]))
    assert sw.bucket_width(graph.Graph(A)) is None
    assert graph.bellman_ford(A, 0, driver="c").tolist() == [0.0, -1.0, 1.0, np.inf]
    cyc = sp.csr_array(np.array([[0, 1.0, 0], [0, 0, -3.0], [0, 1.0, 0]]))
    with pytest.raises(graph.NegativeCycleError, match="A has a negative cycle"):
        graph.bellman_ford(cyc, 0, driver="c")


@pytest.mark.parametrize("driver", ["c", "python"])
def test_max_iter_is_a_limit_on_rounds(driver):
    A = path(5)
    assert graph.bellman_ford(A, 0, max_iter=5, driver=driver).tolist() == [0, 1, 2, 3, 4]
    with pytest.raises(graph.ConvergenceError, match="max_iter=3"):
        graph.bellman_ford(A, 0, max_iter=3, driver=driver)


def test_one_vertex_and_no_edges():
    for A in (sp.csr_array((1, 1)), sp.csr_array(np.array([[0.0]])), np.zeros((3, 3))):
        n = A.shape[0]
        want = np.r_[0.0, np.full(n - 1, np.inf)]
        assert np.array_equal(graph.bellman_ford(A, 0), want)
        assert graph.bfs_levels(A, 0).tolist() == [0] + [-1] * (n - 1)
    loop = sp.csr_array(([0.0], ([0], [0])), shape=(1, 1))       # a zero-weight self loop
    assert graph.bellman_ford(loop, 0).tolist() == [0.0]
    with pytest.raises(ep.InputError, match="source=0"):
        graph.bfs_levels(sp.csr_array((0, 0)), 0)


@pytest.mark.parametrize("density", [0.02, 0.3])
@pytest.mark.parametrize("symmetric", [False, True])
def test_bfs_levels_push_and_pull_rounds(density, symmetric):
    A = weighted(90, density, 4, zeros=0.3)
    if symmetric:
        A = (A + A.T).tocsr()
    for s in (0, 7):
        ref = levels_reference(A, s)
        assert np.array_equal(graph.bfs_levels(A, s, driver="c"), ref)
        assert np.array_equal(graph.bfs_levels(A, s, driver="python"), ref)


def test_a_long_path_reuses_the_workspace_for_every_round():
    A = path(300)
    G = graph.Graph(A + A.T)
    assert graph.bellman_ford(A, 0, max_iter=301).tolist() == list(range(300))
    assert graph.bfs_levels(G, 150).tolist() == [abs(v - 150) for v in range(300)]


def same_partition(a, b):
    pairs = set(zip(a.tolist(), b.tolist()))
    return len(pairs) == len(set(a.tolist())) == len(set(b.tolist()))


@pytest.mark.parametrize("density", [0.005, 0.03])
def test_components_by_seeds_are_scipys_and_fastsvs(density):
    A = weighted(150, density, 6)            # isolated vertices, chains, a few big parts
    _, ref = cg.connected_components(A, directed=True, connection="weak")
    got = graph.connected_components(A, driver="c")
    assert same_partition(got, ref)
    assert np.array_equal(got, graph.connected_components(A, driver="python"))
    assert (got <= np.arange(150)).all() and (got[got] == got).all()   # smallest vertex
    S = adjacency.both_ways(A)                # zero-weight edges kept, both ways
    assert S.nnz >= A.nnz and (S.data > 0).all()
    assert np.array_equal(graph.connected_components(S, directed=False), got)


def test_seeded_needs_a_semiring_whose_one_absorbs():
    G = graph.Graph(path(3))                            # 0 -> 1 -> 2: one seed reaches all
    label = np.empty(3, dtype=np.int64)
    assert sw.seeded(G, semirings.boolean, np.zeros(3, dtype=np.bool_), label) == 1
    assert label.tolist() == [0, 0, 0]
    back = graph.Graph(path(3).T)                       # 2 -> 1 -> 0: each vertex a seed
    assert sw.seeded(back, semirings.boolean, np.zeros(3, dtype=np.bool_), label) == 3
    assert label.tolist() == [0, 1, 2]
    with pytest.raises(ep.SemiringError, match="absorb"):
        sw.seeded(G, semirings.min_plus, np.zeros(3), label)
    with pytest.raises(ep.InputError, match="label is"):
        sw.seeded(G, semirings.boolean, np.zeros(3, dtype=np.bool_), label[:2])


def test_sweep_over_another_idempotent_semiring():
    # max_times: the most reliable path, a fixpoint of d = d ⊕ Aᵀ ⊗ d by rounds
    A = weighted(40, 0.08, 2, zeros=0.0, low=0.1, high=1.0)
    G = graph.Graph(A)
    d = np.zeros(40)
    d[3] = 1.0
    at = np.full(40, -1, dtype=np.int64)
    at[3] = 0
    rounds = sw.sweep(G, semirings.max_times, d, np.array([3]), at, max_iter=41)
    ref = np.zeros(40)
    ref[3] = 1.0
    W = A.toarray()
    for _ in range(41):
        ref = np.maximum(ref, (ref[:, None] * W).max(axis=0))
    assert np.array_equal(d, ref)
    assert rounds == at.max() + 1 and (at[d > 0] >= 0).all()


def test_generated_c_follows_the_semiring():
    c_bool, _ = frontier.frontier_source(semirings.boolean, "int32_t", values=False, name="b")
    c_min, cdef = frontier.frontier_source(semirings.min_plus, "int64_t", values=True,
                                           name="m")
    assert "pull_round" in c_bool and "_buckets" not in c_bool
    assert "pull_round" not in c_min and "m_buckets" in cdef
    assert not frontier.bucketed(semirings.max_times)
    with pytest.raises(ep.SemiringError, match="idempotent"):
        frontier.frontier_source(semirings.real, "int32_t", values=True, name="r")


def test_bad_arguments_name_the_input():
    A = path(4)
    with pytest.raises(ep.InputError, match="driver"):
        graph.bellman_ford(A, 0, driver="fast")
    with pytest.raises(ep.InputError, match="driver"):
        graph.bfs_levels(A, 0, driver=None)
    G = graph.Graph(A)
    at = np.full(4, -1, dtype=np.int64)
    with pytest.raises(ep.InputError, match="d is"):
        sw.sweep(G, semirings.min_plus, np.zeros(4, np.float32), [0], at, max_iter=5)
    with pytest.raises(ep.InputError, match="at is"):
        sw.sweep(G, semirings.min_plus, np.zeros(4), [0], at[:3], max_iter=5)
    for start in ([4], [-1], [0, 4], [-1, 2]):         # one vertex, or several
        with pytest.raises(ep.InputError, match="start"):
            sw.sweep(G, semirings.min_plus, np.zeros(4), start, at, max_iter=5)
    with pytest.raises(ep.SemiringError):
        sw.sweep(G, semirings.real, np.zeros(4), [0], at, max_iter=5)
    with pytest.raises(ep.InputError, match="square"):
        graph.bellman_ford(sp.csr_array(np.ones((2, 3))), 0, driver="c")


@st.composite
def small_graphs(draw):
    n = draw(st.integers(1, 12))
    cells = draw(st.lists(st.tuples(st.integers(0, n - 1), st.integers(0, n - 1),
                                    st.sampled_from([0.0, 1.0, 2.5, 7.0])),
                          max_size=3 * n, unique_by=lambda c: c[:2]))
    rows, cols, w = (list(x) for x in zip(*cells)) if cells else ([], [], [])
    A = sp.csr_array((np.array(w, dtype=float), (rows, cols)), shape=(n, n))
    return A, draw(st.integers(0, n - 1))


@settings(max_examples=15)
@given(small_graphs())
def test_drivers_equal_scipy(case):
    A, s = case
    ref = cg.dijkstra(A, indices=s)
    assert np.array_equal(graph.bellman_ford(A, s), ref)
    assert np.array_equal(graph.bellman_ford(A, s, max_iter=A.shape[0] + 1), ref)
    assert np.array_equal(graph.bfs_levels(A, s), levels_reference(A, s))
    _, ref = cg.connected_components(A, directed=True, connection="weak")
    assert same_partition(graph.connected_components(A), ref)


@pytest.mark.parametrize("rounds_above", [1, 64])
def test_buckets_after_rounds_keep_a_wide_frontier(rounds_above):
    """The rounds before the buckets can leave a frontier whose distances span
    more buckets than max weight / delta + 2: the ring holds them all (a
    vertex of the 40x40 grid was once dropped as stale)."""
    side = 40
    v = np.arange(side * side).reshape(side, side)
    r = np.concatenate([v[:, :-1].ravel(), v[:-1, :].ravel()])
    c = np.concatenate([v[:, 1:].ravel(), v[1:, :].ravel()])
    w = np.random.default_rng(40).uniform(1.0, 10.0, len(r))
    A = sp.csr_array((np.r_[w, w], (np.r_[r, c], np.r_[c, r])), shape=(side**2,) * 2)
    for s in (0, 800, 1234):
        want = cg.dijkstra(A, indices=s)
        for M in (A, graph.Graph(A)):
            got = graph.bellman_ford(M, s, tuning={"rounds_above": rounds_above})
            assert np.allclose(got, want, rtol=1e-12)
