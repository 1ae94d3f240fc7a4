"""A sparse output's dense-tail blocks zeroed as their positions are appended
(Tuning.zero_on_append): vals comes unzeroed, from the library's kept blocks
when one fits, so a block that held an earlier call's values must never show
them. proofs_notes/zero_on_append.md."""
import gc

import numpy as np
import pytest
import scipy.sparse as sp

import etchpy as ep
from tuned import hinted_c, levels_on_interpreter, on_interpreter, random_csf

i, j, k, r = ep.indices("i j k r")
FIBRES = ep.Format(["compressed", "compressed", "dense"])
ON, OFF = ep.Tuning(map_bytes=4096), ep.Tuning(map_bytes=4096, zero_on_append=False)

pytestmark = pytest.mark.usefixtures("shared_cache")


def ttm(m_format=None):
    T = ep.tensor("T", 3, format="csf")
    M = ep.tensor("M", 2, format=m_format) if m_format else ep.tensor("M", 2)
    return ep.sum(k, T[i, j, k] * M[k, r])


def operand_m(rank, sparse, seed):
    """M of 40 × rank: dense, or a csr with some cells of each row missing (a
    fibre's block then gets values in part of its cells only)."""
    rng = np.random.default_rng(seed)
    m = rng.random((40, rank)) + 0.5
    if sparse:
        m[rng.random(m.shape) < 0.5] = 0
        return sp.csr_array(m)
    return m


@pytest.fixture
def collect():
    """gc.collect over the objects made since the test began: those before it are
    frozen (a full collection would walk the whole suite's heap each time)."""
    gc.freeze()
    yield gc.collect
    gc.unfreeze()


def dense(M):
    return M.toarray() if sp.issparse(M) else M


@pytest.mark.parametrize("tuning", [ON, OFF], ids=["on", "off"])
@pytest.mark.parametrize("rank", [5, 16])
@pytest.mark.parametrize("sparse_m", [False, True], ids=["dense_m", "csr_m"])
@pytest.mark.parametrize("threads", [(1, True), (2, True), (2, False)],
                         ids=["serial", "bounded_rows", "counted_rows"])
def test_a_reused_block_never_shows_an_earlier_calls_values(tuning, rank, sparse_m, threads,
                                                            collect):
    """A big call fills its blocks with values, and its output is freed (its blocks
    kept: map_bytes 4096); then calls with fewer or other (i, j) fibres, whose
    value blocks are taken from the kept ones, equal the dense reference."""
    n_threads, bounded = threads
    tuning = tuning.with_(bounded_rows=bounded)
    kern = ep.compile(ttm("csr" if sparse_m else None), output=FIBRES, tuning=tuning,
                      threads=n_threads)
    assert kern.program.output.mode == "append"
    big = random_csf((40, 40, 40), 6000, 1)
    M = operand_m(rank, sparse_m, 2)
    out = kern(T=big, M=M)
    np.testing.assert_allclose(out.to_dense(), np.einsum("ijk,kr->ijr", big.to_dense(), dense(M)))
    del out
    collect()
    for seed, nnz in ((3, 5000), (4, 3500), (5, 6000)):    # other fibres, other counts
        T = random_csf((40, 40, 40), nnz, seed)
        got = kern(T=T, M=M)
        want = np.einsum("ijk,kr->ijr", T.to_dense(), dense(M))
        np.testing.assert_allclose(got.to_dense(), want, rtol=1e-12)
        del got
        collect()


def test_only_the_knob_off_zeroes_the_whole_capacity():
    """On: vals from ep_malloc and grown unzeroed, each block zeroed in the loop;
    off: vals from ep_calloc, grown with a zero fill, no zeroing at appends."""
    on = hinted_c(ttm(), output=FIBRES)
    off = hinted_c(ttm(), ep.Tuning(zero_on_append=False), output=FIBRES)
    assert "out_vals = (ep_val_t *)ep_malloc(" in on and "out_z" in on
    assert "out_vals = (ep_val_t *)ep_calloc(" in off and "out_z" not in off


def last_fibre_empty(T, M):
    """T with its last (i, j) fibre made of one entry at k = 0, where M's row 0 is
    empty: the output's last position appended is taken back."""
    coords, vals = T.to_coords()
    n = T.shape[0] - 1
    keep = ~((coords[0] == n) & (coords[1] == n))
    coords = np.concatenate([coords[:, keep], [[n], [n], [0]]], axis=1)
    M = M.tolil()
    M[0] = 0
    return (ep.Tensor.from_coords(coords, np.append(vals[keep], 1.0), T.shape, "csf"),
            sp.csr_array(M.tocsr()))


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("sparse_m", [False, True], ids=["dense_m", "csr_m"])
def test_blocks_zeroed_on_the_interpreter(threads, sparse_m):
    """The interpreter fills an unzeroed allocation and its grown part with
    garbage, and checks every index: each block read is the one zeroed at its
    append, and a block taken back at a row's end is not zeroed past the output
    (counted rows on threads, the output's room exact under FORCE)."""
    T, M = random_csf((12, 12, 12), 300, 6), operand_m(3, sparse_m, 7)[:12]
    if sparse_m:
        T, M = last_fibre_empty(T, M)
    want = ep.Tensor.from_dense(np.einsum("ijk,kr->ijr", T.to_dense(), dense(M)), FIBRES)
    F = ep.tuning.FORCE                       # capacity 1: vals grown
    for tuning in (ep.tuning.DEFAULT, F, F.with_(bounded_rows=False)):
        final, _, shape = on_interpreter(ttm("csr" if sparse_m else None), ep.semirings.get("real"),
                                         FIBRES, dict(T=T, M=M), threads, tuning)
        for got, arr in zip(levels_on_interpreter(final, FIBRES, shape),
                            [a for lv in want.levels for a in lv.values()] + [want.vals]):
            np.testing.assert_allclose(got, arr)
