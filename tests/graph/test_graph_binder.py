"""BFS levels made in C (etchpy.graph.binder): the same levels as the general path
and csgraph on every input the binder takes; anything it does not cover (other
classes, index kinds, sources, sizes) falls to the general path with the same
answer or error; arrays written in place between calls are read again (an
InputError naming the array, or the new answer), never a stale answer."""
import numpy as np
import pytest
import scipy.sparse as sp
import scipy.sparse.csgraph as cg

import etchpy as ep
from etchpy import graph
from etchpy.errors import InputError
from etchpy.graph import bfs, binder
from etchpy.runtime.kernel_cache import KERNELS
from etchpy.tuning import DEFAULT

pytestmark = pytest.mark.usefixtures("shared_cache")
OFF = DEFAULT.with_(graph_binder=False)


def reference(A, s):
    lv = cg.shortest_path(A, unweighted=True, indices=s)
    return np.where(np.isinf(lv), -1, lv).astype(np.int64)


def small(seed=0, n=60, density=0.06):
    rng = np.random.default_rng(seed)
    return sp.csr_array(np.where(rng.random((n, n)) < density, rng.uniform(1, 5, (n, n)), 0.0))


def csc_of(A, dtype):
    """A coo A as a csc array of index dtype `dtype`, its columns' rows unsorted."""
    by_col = np.lexsort((-A.row, A.col))
    ptr = np.r_[0, np.cumsum(np.bincount(A.col, minlength=A.shape[1]))]
    return sp.csc_array((A.data[by_col], A.row[by_col].astype(dtype), ptr.astype(dtype)),
                        shape=A.shape)


@pytest.fixture
def made():
    """The default Tuning's plan and the binder module (skips where there is none)."""
    got = binder.plan_for(DEFAULT)
    if got is None:
        pytest.skip("no graph binder here (no compiler or Python headers)")
    return got


@pytest.mark.parametrize("kind", [sp.csr_array, sp.csr_matrix])
def test_small_csr_matrices_and_graphs_are_called_in_c(made, kind):
    plan, c = made
    for seed in range(4):
        A = kind(small(seed))
        G = graph.Graph(A)
        for s in (0, 5, 59, np.int64(7), np.uint8(3)):
            want = reference(A, s)
            assert np.array_equal(c.bfs(plan, A, s), want)
            assert np.array_equal(c.bfs_graph(plan, bfs._graph_arrays(G), s), want)
            assert np.array_equal(graph.bfs_levels(A, s), want)
            assert np.array_equal(graph.bfs_levels(G, s), want)


def test_what_the_binder_does_not_cover_is_a_miss(made):
    plan, c = made
    A = small(1)
    bad = A.copy()
    bad.indices[2] = 99
    for M, s in ((A, True), (A, 2.0), (A, -1), (A, 60), (A, 2**70), (A.tocsc(), 0),
                 (A.tocoo(), 0), (A.astype(complex), 0), (A.toarray(), 0), (bad, 0),
                 (sp.csr_array(np.ones((3, 4))), 0)):
        assert c.bfs(plan, M, s) is binder.MISS


def test_the_answers_equal_the_general_paths_under_every_setting():
    for seed in range(3):
        A = small(seed, n=200, density=0.03)
        for t in (DEFAULT, DEFAULT.with_(bfs_narrow_levels=False),
                  DEFAULT.with_(bfs_narrow_levels=True),
                  DEFAULT.with_(bfs_check_first=False), DEFAULT.with_(pull_rounds=False)):
            for M in (A, graph.Graph(A)):
                assert np.array_equal(graph.bfs_levels(M, 3, tuning=t),
                                      graph.bfs_levels(M, 3, tuning=t.with_(graph_binder=False)))


def test_a_graph_that_pulls_gives_the_same_levels():
    A = small(7, n=400, density=0.2)           # dense enough that the frontier pulls
    A = sp.csr_array(A + A.T)
    G = graph.Graph(A)
    assert np.array_equal(graph.bfs_levels(G, 0), reference(A, 0))
    assert np.array_equal(graph.bfs_levels(G, 0, tuning=OFF), reference(A, 0))


def test_arrays_written_in_place_between_calls_are_read_again():
    A = small(3)
    first = graph.bfs_levels(A, 0)
    saved = A.indices[4]
    A.indices[4] = 1000                         # out of range: named, not read
    with pytest.raises(InputError, match=r"A\.indices\[4\]"):
        graph.bfs_levels(A, 0)
    A.indices[4] = saved
    assert np.array_equal(graph.bfs_levels(A, 0), first)
    A.indices[:] = (A.indices + 7) % 60         # other valid edges: the new levels
    assert np.array_equal(graph.bfs_levels(A, 0), reference(A, 0))
    A.indptr[10] = A.indptr[11] + 1             # a decreasing pointer
    with pytest.raises(InputError, match=r"A\.indptr"):
        graph.bfs_levels(A, 0)


@pytest.mark.parametrize("source, error", [(np.int64(2), None), (np.int32(2), None),
                                           (True, "source"), (2.0, "source"), (-1, "source"),
                                           (60, "source"), (2**70, "source")])
def test_sources_the_binder_misses_get_the_general_answer_or_error(source, error):
    A = small(5)
    if error:
        with pytest.raises(InputError, match=error):
            graph.bfs_levels(A, source)
    else:
        assert np.array_equal(graph.bfs_levels(A, source), reference(A, 2))


def test_other_index_kinds_and_classes_get_the_general_answer():
    A = small(6)
    want = reference(A, 1)
    wide = sp.csr_array((A.data, A.indices.astype(np.int64), A.indptr.astype(np.int64)),
                        shape=A.shape)
    strided = sp.csr_array((A.data, np.repeat(A.indices, 2)[::2], A.indptr), shape=A.shape)
    mixed = sp.csr_array((A.data, A.indices.astype(np.int64), A.indptr), shape=A.shape)

    class Mine(sp.csr_array):
        pass
    for M in (wide, wide, strided, mixed, Mine(A), A.astype(bool), A.astype(np.int8),
              A.tocsc(), A.tocoo(), A.toarray()):
        assert np.array_equal(graph.bfs_levels(M, 1), want)
    with pytest.raises(InputError, match="real"):
        graph.bfs_levels(A.astype(complex), 1)
    with pytest.raises(InputError, match="square"):
        graph.bfs_levels(sp.csr_array(np.ones((3, 4))), 1)


def test_a_larger_graph_gives_the_same_levels():
    side = 120                                  # 14,400 vertices
    A = sp.csr_array(sp.kronsum(sp.diags([1.0, 1.0], [-1, 1], (side, side)),
                                sp.diags([1.0, 1.0], [-1, 1], (side, side))))
    assert np.array_equal(graph.bfs_levels(A, 77), reference(A, 77))
    assert np.array_equal(graph.bfs_levels(graph.Graph(A), 77), reference(A, 77))


def test_the_plan_follows_the_kernel_store_and_the_switch():
    A = small(8)
    first = graph.bfs_levels(A, 0)
    made = binder.plan_for(DEFAULT)
    KERNELS.clear()
    assert np.array_equal(graph.bfs_levels(A, 0), first)
    again = binder.plan_for(DEFAULT)
    assert made is None or again is not made
    assert binder.plan_for(OFF) is None
    assert np.array_equal(graph.bfs_levels(A, 0, tuning=OFF), first)
    assert np.array_equal(graph.bfs_levels(A, 0, tuning=ep.Tuning(graph_binder=False)), first)


def test_an_empty_graph_and_one_vertex():
    assert np.array_equal(graph.bfs_levels(sp.csr_array((1, 1)), 0), [0])
    with pytest.raises(InputError, match="source"):
        graph.bfs_levels(sp.csr_array((0, 0)), 0)


def test_coo_and_csc_matrices_are_read_through_their_pattern_made_in_c():
    rng = np.random.default_rng(9)
    for seed in range(3):
        A = small(seed, n=80, density=0.05).tocoo()
        want = reference(A, 2)
        order = rng.permutation(A.nnz)           # out of order, and a repeated entry
        shuffled = sp.coo_array((A.data[order], (A.row[order], A.col[order])), shape=A.shape)
        repeated = sp.coo_array((np.r_[A.data, 1.0], (np.r_[A.row, A.row[0]],
                                                      np.r_[A.col, A.col[0]])), shape=A.shape)
        wide = sp.coo_array((A.data, (A.row.astype(np.int64), A.col.astype(np.int64))),
                            shape=A.shape)
        for M in (A, shuffled, repeated, wide, sp.coo_matrix(A), A.tocsc(), sp.csc_matrix(A),
                  csc_of(A, np.int64)):
            assert np.array_equal(graph.bfs_levels(M, 2), want)
            assert np.array_equal(graph.bfs_levels(M, 2, tuning=DEFAULT.with_(rows_in_c=False)),
                                  want)
    assert np.array_equal(graph.bfs_levels(sp.coo_array((5, 5)), 4), [-1, -1, -1, -1, 0])


@pytest.mark.parametrize("what", ["row", "col"])
def test_a_coo_index_out_of_range_is_named(what):
    A = small(2).tocoo()
    first = graph.bfs_levels(A, 0)
    a = getattr(A, what)
    saved = a[3]
    for bad in (60, -1):
        a[3] = bad                              # written in place between calls
        with pytest.raises(InputError, match=rf"A\.{what}\[3\]"):
            graph.bfs_levels(A, 0)
    a[3] = saved
    assert np.array_equal(graph.bfs_levels(A, 0), first)


def test_a_csc_matrix_written_in_place_between_calls_is_named():
    A = small(2).tocsc()
    first = graph.bfs_levels(A, 0)
    saved = A.indices[3]
    A.indices[3] = 60
    with pytest.raises(InputError, match=r"A\.indices\[3\]"):
        graph.bfs_levels(A, 0)
    A.indices[3] = saved
    assert np.array_equal(graph.bfs_levels(A, 0), first)
    A.indptr[5] = A.indptr[6] + 1
    with pytest.raises(InputError, match=r"A\.indptr"):
        graph.bfs_levels(A, 0)


def test_bellman_ford_on_coo_and_csc_rows_made_in_c():
    rng = np.random.default_rng(4)
    for seed in range(3):
        A = small(seed, n=70, density=0.08).tocoo()
        want = cg.dijkstra(A.tocsr(), indices=1)
        order = rng.permutation(A.nnz)
        shuffled = sp.coo_array((A.data[order], (A.row[order], A.col[order])), shape=A.shape)
        for M in (A, shuffled, A.tocsc(), csc_of(A, np.int64), A.astype(np.float32)):
            for t in (DEFAULT, DEFAULT.with_(rows_in_c=False)):
                assert np.allclose(graph.bellman_ford(M, 1, tuning=t), want, rtol=1e-6)
    A = small(1, n=70, density=0.08).tocoo()          # a repeated entry: weights summed
    rep = sp.coo_array((np.r_[A.data, 2.5], (np.r_[A.row, A.row[0]], np.r_[A.col, A.col[0]])),
                       shape=A.shape)
    assert np.allclose(graph.bellman_ford(rep, 0), cg.dijkstra(rep.tocsr(), indices=0))
    neg = A.copy()
    neg.data[0] = -0.5                                 # a negative weight: the Graph path
    assert np.allclose(graph.bellman_ford(neg, 0),
                       graph.bellman_ford(neg, 0, tuning=DEFAULT.with_(rows_in_c=False)))


def test_bellman_ford_names_a_coo_value_that_is_not_finite():
    A = small(3, n=70, density=0.08).tocoo()
    A.data[5] = np.nan
    with pytest.raises(InputError, match="entry 5"):
        graph.bellman_ford(A, 0)
    A.data[5] = 1.0
    A.col[2] = 70
    with pytest.raises(InputError, match=r"A\.col\[2\]"):
        graph.bellman_ford(A, 0)
