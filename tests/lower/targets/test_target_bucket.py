"""The bucket target: a sparse output whose compressed index is not the outer
loop's is counted, then placed (one counting sort), on one thread or on blocks
of rows, with the repeats of an inner sum merged."""
import numpy as np
import pytest
import scipy.sparse as sp

import etchpy as ep
from etchpy.tuning import DEFAULT
from tuned import as_scipy, on_interpreter, random_csr, tuned_kernel

i, j, k = ep.indices("i j k")
A_csr = ep.tensor("A", 2, format="csr")

pytestmark = pytest.mark.usefixtures("shared_cache")


@pytest.mark.parametrize("semiring, threads, fmt", [
    ("real", 1, "csr"), ("min_plus", 1, "csr"), ("real", 2, "csr"), ("min_plus", 2, "csr"),
    ("real", 2, "dcsr"), ("real", 3, "csr")])
def test_transposed_sparse_output_is_one_counting_sort(semiring, threads, fmt):
    """csr (or dcsr) A written as csc: the loops run over A's rows, the output's
    compressed index, first. Counted per column, then placed at each column's
    cursor: the same arrays as scipy's tocsc (sorted rows, exact pointers), on C
    and on the Imp interpreter. On threads the rows are cut into one block per
    thread; each block counts, then places, its entries of each column, and the
    cursors put block 0's entries of a column before block 1's. The write pass
    prefetches the destinations of the entry d ahead for writing (here for any
    size, d = 3; the interpreter checks each index is inside its array)."""
    near = DEFAULT.with_(prefetch_min_bytes=8, prefetch_distance=3)
    sr = ep.semirings.get(semiring)
    M = random_csr(300, 200, 2000, 3)
    M = M.tolil()
    M[140:170] = 0                               # empty rows, some at a block's edge
    M[:, 50:60] = 0                              # and empty columns
    M = sp.csr_array(M.tocsr())
    M.eliminate_zeros()
    if semiring == "min_plus":
        M.data[::7] = 0.0                        # stored zeros are real edges
    A = ep.tensor("A", 2, format=fmt)
    kern = tuned_kernel(A[i, j], near, output="csc", semiring=semiring, threads=threads)
    assert kern.program.output.mode == "bucket"
    assert "bk_last" not in kern.c_source        # no sum inside: no repeats to merge
    assert ("count each block" in kern.c_source) == (threads > 1)
    assert ("EP_PREFETCH_W(&out_vals[bk_next[" in kern.c_source) == (threads == 1)
    assert ("EP_PREFETCH_W(&out_vals[bk_blk[" in kern.c_source) == (threads > 1)
    ref = sp.csc_array(M)
    ref.sort_indices()
    final, _, _ = on_interpreter(A[i, j], sr, ep.Format.named("csc", 2),
                                  {"A": ep.Tensor.from_scipy(M, fmt, semiring=sr)}, threads,
                                  near)
    nnz = int(final["out_count1"])
    on_imp = sp.csc_array((final["out_vals"][:nnz], final["out_crd1"][:nnz],
                           final["out_pos1"][:201]), shape=(300, 200))
    for got in (as_scipy(kern(A=M)), on_imp):
        np.testing.assert_array_equal(got.indptr, ref.indptr)
        np.testing.assert_array_equal(got.indices, ref.indices)
        np.testing.assert_array_equal(got.data, ref.data)


@pytest.mark.parametrize("semiring, threads", [
    ("real", 1), ("min_plus", 1), ("real", 2), ("min_plus", 2), ("real", 3)])
def test_bucket_output_merges_the_repeats_of_an_inner_sum(semiring, threads):
    """Σ_j A[i,j]·B[j,k] into csc with loops (i, j, k): (i, k) is written once per
    j, before i moves on. The count pass counts it once and the fill pass adds
    the repeats into one entry, so each column is sorted and duplicate-free. On
    threads each block of rows i keeps its own last i per column k, and a
    column gets block 0's entries first: the same arrays as one thread, on C
    and on the Imp interpreter."""
    sr = ep.semirings.get(semiring)
    A = random_csr(60, 40, 500, 4).tolil()
    A[20:35] = 0                                 # empty rows, across a block's edge
    A = sp.csr_array(A.tocsr())
    B = random_csr(40, 70, 500, 5)
    Bc = ep.tensor("B", 2, format="csr")
    e = ep.sum(j, A_csr[i, j] * Bc[j, k])
    kern = ep.compile(e, output="csc", semiring=semiring, threads=threads,
                      tuning={"conversions": False})      # the loops (i, j, k) as written
    assert kern.program.output.mode == "bucket" and "bk_last" in kern.c_source
    assert ("count each block" in kern.c_source) == (threads > 1)
    want = ep.evaluate(e, A=A, B=B, semiring=semiring, backend="reference")
    final, _, _ = on_interpreter(e, sr, ep.Format.named("csc", 2),
                                  {"A": A, "B": B}, threads)
    nnz = int(final["out_count1"])
    on_imp = sp.csc_array((final["out_vals"][:nnz], final["out_crd1"][:nnz],
                           final["out_pos1"][:71]), shape=(60, 70))
    serial = as_scipy(ep.compile(e, output="csc", semiring=semiring)(A=A, B=B))
    for got in (as_scipy(kern(A=A, B=B)), on_imp):
        assert got.nnz == np.count_nonzero(want != sr.zero)
        for c in range(70):
            assert np.all(np.diff(got.indices[got.indptr[c]:got.indptr[c + 1]]) > 0)
        np.testing.assert_allclose(got.toarray() if semiring == "real" else
                                   _fill(got, sr.zero), want, rtol=1e-12)
        np.testing.assert_array_equal(got.indptr, serial.indptr)
        np.testing.assert_array_equal(got.indices, serial.indices)
        np.testing.assert_array_equal(got.data, serial.data)


def _fill(m, fill):
    """A sparse result as a dense array whose implicit entries are `fill`."""
    out = np.full(m.shape, fill)
    coo = m.tocoo()
    out[coo.row, coo.col] = coo.data
    return out
