"""PageRank of a csc or coo matrix with its entries checked by blocks
(Tuning.graph_block_checks, rank_as_is's C): the same ranks, bit for bit, as
the entry-by-entry checks, on matrices of many blocks (2048 entries each);
a bad entry anywhere (a block's first or last, the matrix's last, after a coo's
rows first decrease) gives the same InputError either way; a coo whose rows
decrease (in its first, a middle or its last block) takes the two passes and the same ranks."""
import numpy as np
import pytest
import scipy.sparse as sp

import etchpy as ep
from etchpy import graph
from etchpy.graph import rank_as_is

pytestmark = pytest.mark.usefixtures("shared_cache")

BLOCKS = ep.Tuning()
ENTRIES = ep.Tuning(graph_block_checks=False)
BLOCK = 2048


def big_graph(seed, ones=False):
    """About 12 blocks of entries, rows of every length, some dangling."""
    rng = np.random.default_rng(seed)
    n, m = 3000, 26000
    r, c = rng.integers(0, n - 40, m), rng.integers(0, n, m)
    v = np.ones(m) if ones else rng.uniform(1, 10, m)
    A = sp.csr_array((v, (r, c)), shape=(n, n))
    A.sum_duplicates()
    return A


def ranks(M, t, **kw):
    return rank_as_is.rank(M, 0.85, kw.pop("tol", 1e-10), 100, "A", t, **kw)


def split_row(A, near):
    """A's entries in row order but for one: the first entry of the first row
    of two or more entries starting at or after entry `near`, moved after the
    next row's entries (that row then has two runs: the rows decrease once)."""
    C = A.tocoo()
    r, c, v = C.row, C.col, C.data
    starts = np.flatnonzero(np.r_[True, r[1:] != r[:-1]])
    ends = np.r_[starts[1:], len(r)]
    q = np.flatnonzero((starts >= near) & (ends - starts >= 2))[0]
    at, later = starts[q], ends[q + 1]
    order = np.r_[np.arange(at), np.arange(at + 1, later), at, np.arange(later, len(r))]
    return sp.coo_array((v[order], (r[order], c[order])), shape=A.shape)


def late_descent(A):
    return split_row(A, 9 * BLOCK + 100)


@pytest.mark.parametrize("seed", [0, 1])
@pytest.mark.parametrize("ones", [False, True])
def test_blocks_give_the_ranks_of_the_entry_checks_bit_for_bit(seed, ones):
    A = big_graph(seed, ones)
    assert A.nnz > 10 * BLOCK
    rng = np.random.default_rng(seed)
    shuffled = A.tocoo()
    p = rng.permutation(shuffled.nnz)
    shuffled = sp.coo_array((shuffled.data[p], (shuffled.row[p], shuffled.col[p])),
                            shape=A.shape)
    descents = [split_row(A, near) for near in (50, 9 * BLOCK + 100, A.nnz - 100)]
    assert all(np.sum(np.diff(M.row.astype(int)) < 0) == 1 for M in descents)
    for M in (sp.csc_array(A), A.tocoo(), shuffled, *descents):
        for tol in (1e-3, 1e-10):
            got = ranks(M, BLOCKS, tol=tol)
            assert np.array_equal(got, ranks(M, ENTRIES, tol=tol))
            assert np.array_equal(got, ranks(M, BLOCKS, tol=tol, by_runs=False))
            assert np.allclose(got, graph.pagerank(A, tol=tol), rtol=0, atol=1e-14)


def bad_copies(A):
    """(what, matrix) with one bad entry, in csc and in coo (in row order,
    shuffled, and with a late descent before the bad entry)."""
    C = sp.csc_array(A)
    nnz = C.nnz
    at = [0, BLOCK - 1, BLOCK, 5 * BLOCK + 7, nnz - 1]
    for k in at:
        for what, value in [("indices", -1), ("indices", A.shape[0]), ("data", np.nan),
                            ("data", -2.0), ("data", np.inf)]:
            M = C.copy()
            getattr(M, what)[k] = value
            yield f"csc {what}[{k}]", M
    for name, O in [("in order", A.tocoo()), ("late descent", late_descent(A))]:
        for k in at + [10 * BLOCK + 3]:
            for what, value in [("row", A.shape[0]), ("row", -5), ("col", 10**6),
                                ("data", -1.0), ("data", np.nan)]:
                M = sp.coo_array((O.data.copy(), (O.row.copy(), O.col.copy())), shape=A.shape)
                getattr(M, what)[k] = value
                yield f"coo {name} {what}[{k}]", M
    M = A.tocoo()                                    # two bad entries: the first is named
    M.col[3 * BLOCK + 1] = -1
    M.data[3 * BLOCK] = np.nan
    yield "coo two bad", M


def error_of(M, t):
    with pytest.raises(ep.InputError) as got:
        ranks(M, t)
    return str(got.value)


def test_a_bad_entry_anywhere_is_named_the_same_either_way():
    A = big_graph(3)
    for what, M in bad_copies(A):
        blocked = error_of(M, BLOCKS)
        assert blocked == error_of(M, ENTRIES), what
        assert blocked.startswith(("A.", "A has")), blocked


def test_bad_pointers_are_named_the_same_either_way():
    A = big_graph(4)
    for k, value in [(0, -1), (1500, 10**7), (2999, 5), (3000, 10**9), (700, 0)]:
        M = sp.csc_array(A)
        M.indptr = M.indptr.copy()
        M.indptr[k] = value
        assert error_of(M, BLOCKS) == error_of(M, ENTRIES), k
        assert "A.indptr" in error_of(M, BLOCKS)
