"""Short pieces walked flat (Tuning.short_mean, lower/schedule/pieces.py
`short_mean`): where a level read as pieces has a mean piece shorter than
short_mean states (its positions < short_mean · its pieces), a block list's row
is walked as the stream's own loop (no loop per block, no lanes) and a band's
row as its plain loop; the test is made once, before the loops (size_switch).
The flat walk adds in the loop's order, so it gives the bits of `pieces=False`
(blocks) or `sum_lanes=1` (bands); longer pieces keep the lanes
(proofs_notes/levels.md, "Short pieces walked flat")."""
import numpy as np
import pytest
import scipy.sparse as sp

import etchpy as ep
from etchpy.testing import check_backends

pytestmark = pytest.mark.usefixtures("shared_cache")
i, j = ep.indices("i j")
x = ep.tensor("x", 1)
TEST = "(8 * A_bseg1[A_dim0])"


def stencil(k, d, rng):
    """A 9-point stencil on a k×k grid with d×d blocks: rows of three runs of 3d."""
    nodes = np.arange(k * k)
    r, c = nodes // k, nodes % k
    rows, cols = [], []
    for dr in (-1, 0, 1):
        for dc in (-1, 0, 1):
            ok = (r + dr >= 0) & (r + dr < k) & (c + dc >= 0) & (c + dc < k)
            rows.append(nodes[ok])
            cols.append(nodes[ok] + dr * k + dc)
    p = sp.csr_array((np.ones(sum(map(len, rows))), (np.concatenate(rows), np.concatenate(cols))),
                     shape=(k * k,) * 2)
    p.sort_indices()
    data = rng.random((p.nnz, d, d)) - 0.5
    return sp.bsr_array((data, p.indices, p.indptr), shape=(k * k * d,) * 2).tocsr()


def spmv(fmt, **tuning):
    return ep.compile(ep.sum(j, ep.tensor("A", 2, fmt)[i, j] * x[j]), tuning=ep.Tuning(**tuning))


@pytest.mark.parametrize("d", [1, 2, 3])
def test_short_blocks_walk_flat(d):
    """d = 1, 2 (blocks of 3, 6 entries): the flat walk, the bits of pieces=False;
    d = 3 (blocks of 9): the lanes, the bits of short_mean=0. Either way the one
    test comes before the row loop."""
    rng = np.random.default_rng(d)
    m = stencil(7, d, rng)
    t = ep.Tensor.from_scipy(m, "blocks")
    v = rng.random(m.shape[0]) - 0.5
    on, off = spmv("blocks"), spmv("blocks", short_mean=0)
    src = on.c_source
    assert TEST in src and TEST not in off.c_source
    assert src.index(TEST) < src.index("while (i_c < dim_i)")       # made once
    got = on(A=t, x=v)
    np.testing.assert_allclose(got, m @ v, rtol=1e-12, atol=1e-12)
    same = spmv("blocks", pieces=False) if d < 3 else off
    assert np.array_equal(got, same(A=t, x=v))


def test_short_bands_take_the_plain_loop():
    """A banded level of rows of 5 (mean < 8): the plain loop's bits (sum_lanes=1),
    rows of exactly 3 still straight-line; a band of 9 keeps its lanes."""
    rng = np.random.default_rng(5)
    for offsets, plain in (((-2, -1, 0, 1, 2), True), (tuple(range(-4, 5)), False)):
        m = sp.diags([rng.random(300 - abs(o)) - 0.5 for o in offsets], offsets,
                     shape=(300, 300)).tocsr()
        t = ep.Tensor.from_scipy(m, "banded")
        v = rng.random(300) - 0.5
        got = spmv("banded")(A=t, x=v)
        np.testing.assert_allclose(got, m @ v, rtol=1e-12, atol=1e-12)
        ref = spmv("banded", sum_lanes=1) if plain else spmv("banded", short_mean=0)
        assert np.array_equal(got, ref(A=t, x=v))


def test_blocks_past_the_test_read_in_bounds():
    """No rows, one row of no blocks, and rows of empty segments: the count read
    before the loops is bpos[bseg[rows]], in bounds."""
    k = spmv("blocks")
    for dense in (np.zeros((0, 4)), np.zeros((1, 4)), np.zeros((3, 4))):
        t = ep.Tensor.from_dense(dense, "blocks")
        assert np.array_equal(k(A=t, x=np.ones(4)), np.zeros(len(dense)))


@pytest.mark.parametrize("sr", ["min_plus", "boolean", "complex"])
def test_every_backend_and_semiring(sr):
    s = ep.semirings.get(sr)
    rng = np.random.default_rng(3)
    a = np.full((12, 12), s.zero, dtype=s.dtype)
    for r in range(12):
        for c0 in (max(0, r - 4), min(r + 3, 10)):        # two runs of 2 a row
            a[r, c0:c0 + 2] = (rng.integers(1, 5, 2)
                               + (1j if s.dtype.kind == "c" else 0)).astype(s.dtype)
    v = rng.integers(1, 5, 12).astype(s.dtype)
    A = ep.tensor("A", 2, "blocks")
    check_backends(ep.sum(j, A[i, j] * x[j]), {"A": a, "x": v}, semiring=sr,
                   backends=("streams", "c", "imp"))
