"""PageRank of a scipy matrix compiled from its expressions (etchpy.graph.rank_scipy:
the compiled pull or push in an imp.Fixpoint after the checked out-degrees):
the dense power iteration's ranks for csr, csc and coo of int32 and int64
indices, every order, repeat and switch; malformed arrays, bad weights and
arrays written in place between calls give an InputError naming the array,
never a crash; the caller's arrays untouched; the compiled program runs."""
import numpy as np
import pytest
import scipy.sparse as sp

import etchpy as ep
from etchpy import graph
from etchpy.graph import rank_scipy
from etchpy.graph.fixpoint import ConvergenceError
from tests.graph.test_rank_iteration import _power as dense_ranks   # the dense reference

pytestmark = pytest.mark.usefixtures("shared_cache")

OFF = ep.Tuning(rows_in_c=False)


def random_graph(n, density, seed, ones=False):
    rng = np.random.default_rng(seed)
    weights = np.ones((n, n)) if ones else rng.uniform(1, 10, (n, n))
    return sp.csr_array(np.where(rng.random((n, n)) < density, weights, 0.0))


def shuffled_coo(A, seed, repeat=False):
    """A's entries as a coo_array in a random order (one split into two halves
    stored twice when `repeat`: the same matrix once summed)."""
    C = A.tocoo()
    r, c, v = C.row, C.col, C.data
    if repeat:
        r, c, v = np.r_[r, r[:1]], np.r_[c, c[:1]], np.r_[v, v[:1]]
        v[0] = v[-1] = v[0] / 2
    p = np.random.default_rng(seed).permutation(len(r))
    return sp.coo_array((v[p], (r[p], c[p])), shape=A.shape)


def forms(A, seed):
    """(name, matrix of A's graph) for the csc and coo forms read as they are."""
    yield "csc", sp.csc_array(A)
    yield "csc_matrix", sp.csc_matrix(A)
    yield "coo in order", A.tocoo()
    yield "coo shuffled", shuffled_coo(A, seed)
    yield "coo with a repeat", shuffled_coo(A, seed, repeat=True)
    unsorted = sp.csc_array(A)
    order = np.concatenate([np.arange(a, b)[::-1]
                            for a, b in zip(unsorted.indptr, unsorted.indptr[1:])])
    yield "csc unsorted", sp.csc_array((unsorted.data[order], unsorted.indices[order],
                                        unsorted.indptr), shape=A.shape)
    wide = sp.csc_array(A)
    wide.indptr, wide.indices = wide.indptr.astype(np.int64), wide.indices.astype(np.int64)
    yield "csc int64", wide


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("ones", [False, True])
def test_ranks_are_the_csr_paths_for_every_form(seed, ones):
    A = random_graph(80, 0.04, seed, ones)
    want = graph.pagerank(A)
    for name, M in forms(A, seed):
        got = graph.pagerank(M)
        assert np.allclose(got, want, rtol=0, atol=1e-14), name
        assert np.allclose(graph.pagerank(M, tuning=OFF), want, rtol=0, atol=1e-14), name
        assert np.allclose(graph.pagerank(M, alpha=0.5, tol=1e-10),
                           graph.pagerank(A, alpha=0.5, tol=1e-10), rtol=0, atol=1e-14), name


def test_other_arrays_take_the_conversion():
    A = random_graph(30, 0.1, 3)
    M = sp.csc_array(A)
    M.indices = M.indices.astype(np.int64)       # pointers int32, indices int64
    assert np.allclose(graph.pagerank(M), graph.pagerank(A), atol=1e-14)
    assert np.allclose(graph.pagerank(A.astype(bool).tocsc()),
                       graph.pagerank(A.astype(bool)), atol=1e-14)


def test_no_entry_gives_zeros_and_too_few_steps_raise():
    assert np.array_equal(graph.pagerank(sp.csc_array((5, 5))), np.zeros(5))
    assert np.array_equal(graph.pagerank(sp.coo_array((5, 5))), np.zeros(5))
    A = random_graph(50, 0.05, 4)
    for M in (sp.csc_array(A), A.tocoo()):
        with pytest.raises(ConvergenceError):
            graph.pagerank(M, tol=1e-15, max_iter=2)
        for tol in (1e-2, 1e-3, 1e-4, 1e-5):          # steps of either parity: either buffer
            assert np.allclose(graph.pagerank(M, tol=tol), graph.pagerank(A, tol=tol),
                               atol=1e-14)


def malformed_csc():
    for where, ptr, idx in [("indices", [0, 1, 2, 2], [1, 3]),
                            ("indices", [0, 0, 0, 1], [-1]),
                            ("indptr", [0, 2, 1, 2], [1, 2]),
                            ("indptr", [0, 1, 2, 5], [1, 2])]:
        M = sp.csc_array((3, 3))
        M.indptr, M.indices = np.array(ptr, dtype=np.int32), np.array(idx, dtype=np.int32)
        M.data = np.ones(len(idx))
        yield where, M


def test_malformed_arrays_give_an_input_error_naming_them():
    for where, M in malformed_csc():
        with pytest.raises(ep.InputError, match=rf"A\.{where}"):
            graph.pagerank(M)
    for where, r, c in [("row", [0, 5], [1, 2]), ("col", [0, 1], [1, -2])]:
        M = sp.coo_array((np.ones(2), (np.array([0, 1]), np.array([1, 2]))), shape=(3, 3))
        M.row, M.col = np.array(r, dtype=np.int32), np.array(c, dtype=np.int32)
        with pytest.raises(ep.InputError, match=rf"A\.{where}\[1\]"):
            graph.pagerank(M)


def test_bad_weights_are_named():
    A = random_graph(20, 0.2, 3)
    for M in (A, sp.csc_array(A), A.tocoo()):     # csr, csc, coo
        for bad, what in [(-1.0, "negative weight"), (np.nan, "not finite"),
                          (np.inf, "not finite")]:
            N = M.copy()
            N.data[5] = bad
            with pytest.raises(ep.InputError, match=f"A has a .*{what}"):
                graph.pagerank(N)


def test_arrays_written_in_place_between_calls_are_read_again():
    A = random_graph(60, 0.05, 4)
    for M in (sp.csc_array(A), A.tocoo()):
        graph.pagerank(M)
        index = M.indices if M.format == "csc" else M.col
        keep = int(index[3])
        index[3] = 10**6
        with pytest.raises(ep.InputError, match=r"A\.(indices|col)\[3\]"):
            graph.pagerank(M)
        index[3] = (keep + 7) % 60                     # a valid edge, another graph
        canon = sp.csr_array(M)
        canon.sum_duplicates()
        assert np.allclose(graph.pagerank(M), graph.pagerank(canon), atol=1e-14)


def test_the_callers_arrays_are_not_changed():
    A = random_graph(50, 0.05, 5)
    for M in (sp.csc_array(A), shuffled_coo(A, 1)):
        before = [a.copy() for a in (M.data, *(
            (M.indptr, M.indices) if M.format == "csc" else (M.row, M.col)))]
        graph.pagerank(M)
        after = (M.data, *((M.indptr, M.indices) if M.format == "csc" else (M.row, M.col)))
        assert all(np.array_equal(a, b) for a, b in zip(before, after))


def each_form(A):
    """A as csr, csc and coo arrays and matrices, with int32 and int64 indices."""
    for make in (sp.csr_array, sp.csc_array, sp.coo_array, sp.csr_matrix, sp.coo_matrix):
        for idx in (np.int32, np.int64):
            M = make(A)
            for field in ("indptr", "indices", "row", "col"):
                if hasattr(M, field):
                    setattr(M, field, getattr(M, field).astype(idx))
            yield f"{type(M).__name__} {idx.__name__}", M


def test_every_form_and_index_width_gives_the_dense_ranks():
    A = random_graph(70, 0.05, 7)
    A = sp.csr_array(A.toarray() * (np.arange(70) % 9 != 0)[:, None])     # dangling rows
    want = dense_ranks(A, tol=1e-10)
    for name, M in each_form(A):
        assert np.allclose(graph.pagerank(M, tol=1e-10), want, rtol=0, atol=1e-13), name


def test_a_matrix_changed_in_place_between_calls_gives_its_new_ranks_or_an_error():
    A = random_graph(40, 0.1, 8)
    for name, M in each_form(A):
        graph.pagerank(M)
        M.data[2] *= 3.0                                     # another weight
        assert np.allclose(graph.pagerank(M), dense_ranks(M), rtol=0, atol=1e-12), name
        M.data[2] = -1.0
        with pytest.raises(ep.InputError, match="negative weight"):
            graph.pagerank(M)
        M.data[2] = 1.0
        index = M.indices if hasattr(M, "indices") else M.col
        index[1] = 40
        with pytest.raises(ep.InputError, match=r"A\.(indices|col)\[1\]"):
            graph.pagerank(M)


def test_a_scipy_matrix_runs_the_compiled_iteration():
    """Each form is run by rank_scipy's program, built by graph.rank._iteration
    around the compiled step (no hand-written rank is left in graph.direct)."""
    rank_scipy._LAST.clear()
    A = random_graph(30, 0.1, 9)
    for _, M in each_form(A):
        graph.pagerank(M)
    assert sorted({key[0] for key in rank_scipy._LAST}) == ["coo", "csc", "csr"]
    fns = graph.direct._lib(np.dtype(np.int32))[0]
    assert not any("rank" in kind for kind in fns)
    step = rank_scipy._push_kernel("csr", ep.tuning.FIXPOINT).compiled.program
    degrees = rank_scipy._degrees_kernel("csr", ep.tuning.FIXPOINT).compiled.checked
    prog, _ = graph.rank._iteration(step, True, degrees, rank_scipy.SPAN["csr"])
    assert prog.error is not None and any(
        type(s).__name__ == "Fixpoint" for s in ep.imp.statements(prog.body))


def test_with_fused_checks_off_a_scipy_matrix_still_gets_its_ranks():
    """The compiled scipy path needs the checked build; with Tuning.fused_checks
    off pagerank reads the matrix as a checked Graph instead, never refusing it."""
    A = random_graph(40, 0.1, 10)
    want = dense_ranks(A, tol=1e-10)
    off = ep.Tuning(fused_checks=False)
    for name, M in each_form(A):
        got = graph.pagerank(M, tol=1e-10, tuning=off)
        assert np.allclose(got, want, rtol=0, atol=1e-12), name
    M = sp.csr_array(A)
    M.indices[0] = 40
    with pytest.raises(ep.InputError):
        graph.pagerank(M, tuning=off)
