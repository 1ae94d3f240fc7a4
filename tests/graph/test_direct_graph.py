"""BFS levels, components and PageRank on a scipy matrix passed as it is
(etchpy.graph.direct, c.direct_graph): the answers of csgraph and of the
Graph path on every scipy kind and index dtype, unsorted and repeated
entries; malformed arrays and arrays written in place between calls give an
InputError naming the array, never a crash or a stale answer."""
import numpy as np
import pytest
import scipy.sparse as sp
import scipy.sparse.csgraph as cg

import etchpy as ep
from etchpy import graph
from etchpy.graph import direct
from etchpy.runtime.kernel_cache import KERNELS
from etchpy.settings import LIMITS

pytestmark = pytest.mark.usefixtures("shared_cache")


def bfs_reference(A, s):
    lv = cg.shortest_path(A, unweighted=True, indices=s)
    return np.where(np.isinf(lv), -1, lv).astype(np.int64)


def same_partition(a, b):
    pairs = {(x, y) for x, y in zip(a, b)}
    return len(pairs) == len(set(a)) == len(set(b))


def kinds(A):
    """A (canonical csr) as every scipy kind the algorithms take, and as csr
    with int64 indices, with unsorted rows and with a repeated entry."""
    yield "csr_array", A
    yield "csr_matrix", sp.csr_matrix(A)
    yield "csc_array", A.tocsc()
    yield "coo_array", A.tocoo()
    yield "bool csr", A.astype(bool)
    wide = A.copy()
    wide.indptr, wide.indices = wide.indptr.astype(np.int64), wide.indices.astype(np.int64)
    yield "int64 indices", wide
    order = np.concatenate([np.arange(a, b)[::-1] for a, b in zip(A.indptr, A.indptr[1:])])
    yield "unsorted rows", sp.csr_array((A.data[order], A.indices[order], A.indptr),
                                        shape=A.shape)
    if A.nnz:
        k = int(np.argmax(np.diff(A.indptr) > 0))      # a row with an entry: repeat its first
        idx = np.insert(A.indices, A.indptr[k], A.indices[A.indptr[k]])
        val = np.insert(A.data, A.indptr[k], 0.5)
        ptr = A.indptr.copy()
        ptr[k + 1:] += 1
        yield "a repeated entry", sp.csr_array((val, idx, ptr), shape=A.shape)


def random_graph(n, density, seed):
    rng = np.random.default_rng(seed)
    dense = np.where(rng.random((n, n)) < density, rng.uniform(1, 10, (n, n)), 0.0)
    return sp.csr_array(dense)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_answers_are_csgraphs_on_every_scipy_kind(seed):
    A = random_graph(70, 0.03, seed)
    ranks = graph.pagerank(graph.Graph(A))
    for kind, M in kinds(A):
        canon = sp.csr_array(M, dtype=np.float64)
        canon.sum_duplicates()
        for s in (0, 5):
            assert np.array_equal(graph.bfs_levels(M, s), bfs_reference(canon, s)), kind
        _, ref = cg.connected_components(canon, directed=True, connection="weak")
        labels = graph.connected_components(M)
        assert same_partition(labels, ref), kind
        assert np.array_equal(labels, graph.connected_components(M, directed=False)), kind
        assert all(labels[v] == np.flatnonzero(labels == labels[v]).min() for v in range(70))
        want = ranks if kind in ("csr_array", "csr_matrix", "csc_array", "coo_array",
                                 "int64 indices", "unsorted rows") \
            else graph.pagerank(graph.Graph(canon))
        assert np.allclose(graph.pagerank(M), want, rtol=0, atol=1e-14), kind


def test_grid_and_paths_equal_csgraph():
    side = 40
    v = np.arange(side * side).reshape(side, side)
    r = np.concatenate([v[:, :-1].ravel(), v[:-1, :].ravel()])
    c = np.concatenate([v[:, 1:].ravel(), v[1:, :].ravel()])
    G = sp.csr_array((np.ones(2 * len(r)), (np.r_[r, c], np.r_[c, r])), shape=(side**2,) * 2)
    order, pred = cg.breadth_first_order(G, 17, return_predecessors=True)
    levels = graph.bfs_levels(G, 17)
    assert np.array_equal(np.sort(np.flatnonzero(levels >= 0)), np.sort(order))
    assert np.array_equal(levels, bfs_reference(G, 17))
    assert np.array_equal(graph.connected_components(G), np.zeros(side**2, dtype=np.int64))
    assert np.allclose(graph.pagerank(G), graph.pagerank(G, driver="python"), atol=1e-15)


def malformed():
    """(the array the message names, a 3x3 csr matrix whose arrays were set to
    (indptr, indices) after it was made: scipy checks neither then)."""
    for where, ptr, idx in [("indices", [0, 1, 2, 2], [1, 3]),          # reached by BFS
                            ("indices", [0, 1, 2, 3], [1, 0, -1]),      # never reached
                            ("indices", [0, 0, 0, 1], [7]),
                            ("indptr", [0, 2, 1, 2], [1, 2]),           # decreasing
                            ("indptr", [0, 1, 2, 5], [1, 2])]:          # beyond the entries
        M = sp.csr_array((3, 3))
        M.indptr, M.indices = np.array(ptr, dtype=np.int32), np.array(idx, dtype=np.int32)
        M.data = np.ones(len(idx))
        yield where, M


@pytest.mark.parametrize("call", [lambda A: graph.bfs_levels(A, 0),
                                  graph.connected_components, graph.pagerank,
                                  lambda A: graph.bellman_ford(A, 0)])
def test_malformed_arrays_give_an_input_error_naming_them(call):
    for where, M in malformed():
        with pytest.raises(ep.InputError, match=rf"A\.{where}"):
            call(M)
    short = sp.csr_array((3, 3))
    short.indptr = short.indptr[:3]
    with pytest.raises(ep.InputError, match=r"A\.indptr has 3 entries"):
        call(short)


def test_bfs_names_a_bad_pointer_before_a_bad_index():
    """BFS checks the indices in a flat pass before the pointers' (the fill's):
    with both wrong, the pointers are still the ones named."""
    M = sp.csr_array((3, 3))
    M.indptr, M.indices = np.array([0, 2, 1, 3], np.int32), np.array([9, 0, 1], np.int32)
    M.data = np.ones(3)
    for tuning in (None, {"bfs_check_first": False}):
        with pytest.raises(ep.InputError, match=r"A\.indptr"):
            graph.bfs_levels(M, 0, tuning=tuning)


def test_arrays_written_in_place_between_calls_are_read_again():
    A = random_graph(60, 0.05, 4)
    first = (graph.bfs_levels(A, 0), graph.connected_components(A), graph.pagerank(A))
    A.indices[3] = 10**6                                 # out of range now
    for call in (lambda: graph.bfs_levels(A, 0), lambda: graph.connected_components(A),
                 lambda: graph.pagerank(A), lambda: graph.bellman_ford(A, 0)):
        with pytest.raises(ep.InputError, match=r"A\.indices\[3\]"):
            call()
    A.indices[3] = (A.indices[3 - 1] + 7) % 60           # a valid edge, a different graph
    canon = sp.csr_array(A)
    canon.sum_duplicates()
    assert np.array_equal(graph.bfs_levels(A, 0), bfs_reference(canon, 0))
    assert np.allclose(graph.pagerank(A), graph.pagerank(graph.Graph(canon)), atol=1e-14)
    assert np.array_equal(graph.bellman_ford(A, 0), cg.dijkstra(canon, indices=0))
    assert first[0].shape == (60,)


def test_the_callers_arrays_are_used_not_copied_or_changed():
    A = random_graph(50, 0.05, 5)
    before = (A.indptr.copy(), A.indices.copy(), A.data.copy())
    graph.bfs_levels(A, 0), graph.connected_components(A), graph.pagerank(A)
    assert all(np.array_equal(a, b) for a, b in zip(before, (A.indptr, A.indices, A.data)))


def test_index_arrays_of_another_kind_are_refused():
    M = sp.csr_array(np.eye(3))
    M.indices = M.indices.astype(np.float64)
    with pytest.raises(ep.InputError, match=r"A\.indices is a 1-d array of integers"):
        graph.bfs_levels(M, 0)


def test_bellman_ford_takes_buckets_on_the_arrays_or_the_canonical_path():
    """Canonical nonnegative weights: buckets on A's own arrays; unsorted rows, a
    repeated entry (summed, as scipy's canonical form) or a negative weight: the
    Graph path; the distances are dijkstra's (or the negative-weight answer)."""
    A = random_graph(70, 0.04, 6)
    for kind, M in kinds(A):
        canon = sp.csr_array(M, dtype=np.float64)
        canon.sum_duplicates()
        for s in (0, 9):
            assert np.array_equal(graph.bellman_ford(M, s), cg.dijkstra(canon, indices=s)), kind
    N = A.copy()
    N.data[N.indices == 3] = -0.5                      # into vertex 3 only: no cycle
    assert np.allclose(graph.bellman_ford(N, 0), cg.bellman_ford(N, indices=0))


def test_the_weights_pass_tells_canonical_rows():
    from etchpy.graph import direct
    A = random_graph(40, 0.1, 7)
    for kind, M in kinds(A):
        if kind in ("csc_array", "coo_array", "bool csr"):
            continue
        M2, pos, crd = direct.arrays(M, "A")
        stats = np.empty(3)
        canonical = direct._call("weights", M2, "A", pos, crd, M2.data.astype(float), stats)
        assert canonical == (kind not in ("unsorted rows", "a repeated entry")), kind
        assert stats[0] == M2.data[M2.data > 0].min() and stats[1] == M2.data.max()


@pytest.mark.parametrize("where", ["indices", "indptr"])
def test_a_graph_of_malformed_arrays_is_refused_when_made(where):
    for name, M in malformed():
        if name == where:
            with pytest.raises(ep.InputError, match=rf"A\.{where}"):
                graph.Graph(M)


@pytest.mark.parametrize("max_iter", [1, 2, 3, 4])
def test_pagerank_ranks_end_in_a_new_array_whichever_buffer_the_last_step_wrote(max_iter):
    """The steps alternate between the new output and a kept scratch array (the
    ranks of an even step are copied out): every call returns its own array,
    equal to the Graph path's, and a later call does not write into it."""
    A = random_graph(60, 0.05, 8)
    ref = graph.pagerank(graph.Graph(A), tol=1e9, max_iter=max_iter)
    wrong = graph.pagerank(graph.Graph(A), tol=1e-12, max_iter=100)
    got = [graph.pagerank(A, tol=1e9, max_iter=max_iter) for _ in range(3)]
    for r in got:
        assert np.allclose(r, ref, atol=1e-15) and r.flags.owndata
    graph.pagerank(A, tol=1e-12, max_iter=100)
    assert np.allclose(got[0], ref, atol=1e-15) and not np.allclose(got[0], wrong)


def sparse_graph(n, per_row, seed):
    rng = np.random.default_rng(seed)
    rows, cols = np.repeat(np.arange(n), per_row), rng.integers(0, n, n * per_row)
    return sp.csr_array((rng.uniform(1, 10, n * per_row), (rows, cols)), shape=(n, n))


@pytest.mark.parametrize("sizes", [(90, 50), (40000, 20000)])
def test_kept_workspaces_carry_nothing_from_one_call_to_the_next(sizes):
    """Calls on graphs of other sizes, and calls that stopped at a malformed
    array half way, leave the workspaces (BFS's queue, PageRank's buffers,
    the buckets' round numbers) in any state: the next call's answers are
    still csgraph's and the Graph path's. Those of the small graphs are made
    new; those of the large ones, above LIMITS.scratch_least, kept."""
    if sizes[0] < 1000:
        big, small = random_graph(90, 0.04, 9), random_graph(50, 0.06, 10)
    else:
        big, small = sparse_graph(sizes[0], 3, 9), sparse_graph(sizes[1], 4, 10)
        assert sizes[1] * 4 >= LIMITS.scratch_least
    bad = small.copy()
    bad.indices = bad.indices.copy()
    bad.indices[len(bad.indices) // 2] = 10**6
    for M in (big, bad, small, bad, big, sp.csr_array((0, 0))):
        if M is bad:
            for call in (lambda: graph.bfs_levels(M, 0), lambda: graph.pagerank(M),
                         lambda: graph.bellman_ford(M, 0)):
                with pytest.raises(ep.InputError):
                    call()
            continue
        if M.shape[0] == 0:
            assert graph.pagerank(M).shape == (0,)
            continue
        for s in (0, 7):
            assert np.array_equal(graph.bfs_levels(M, s), bfs_reference(M, s))
            assert np.array_equal(graph.bellman_ford(M, s), cg.dijkstra(M, indices=s))
        assert np.allclose(graph.pagerank(M), graph.pagerank(graph.Graph(M)), atol=1e-14)


def test_the_remembered_library_follows_the_kernel_store():
    """direct's library, remembered between calls, is looked up again once
    KERNELS changed (cleared here): the calls still answer."""
    A = random_graph(40, 0.1, 11)
    first = graph.bfs_levels(A, 0)
    KERNELS.clear()
    assert np.array_equal(graph.bfs_levels(A, 0), first)
    assert direct._LAST[A.indptr.dtype][0] == KERNELS.generation
    assert np.array_equal(graph.bellman_ford(A, 0), cg.dijkstra(A, indices=0))
