"""Short blocks walked flat (Tuning.short_mean, lower/schedule/pieces.py
`short_mean`): where a block list's mean block is shorter than short_mean
entries (its positions < short_mean · its blocks), its rows are walked as the
stream's own loop (no loop per block, no lanes); the test is made once, before
the loops (size_switch). The flat walk adds in the loop's order, so it gives
the bits of `pieces=False`; longer blocks, and bands, keep the lanes
(proofs_notes/levels.md, "Short blocks walked flat")."""
import re

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
    """A fresh kernel (not ep.compile's, shared by the process: after another test's
    call its c_source shows that call's size-class plan, tests/tuned.py hinted_c)."""
    tuning = {"short_mean": 8, **tuning}      # the mechanism, whatever the host's (Zen 8, else 3)
    return ep.Kernel(ep.sum(j, ep.tensor("A", 2, fmt)[i, j] * x[j]), tuning=ep.Tuning(**tuning))


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
    assert TEST in on.c_source and TEST not in off.c_source
    for mean in (16, 0):          # made once, before the rows; also where the
        src = spmv("blocks", run_mean_below=mean).c_source    # prefetch's is a size test
        rows = re.search(r"while \(i_c\w* < ", src)    # the first row loop (Intel's
        assert src.index(TEST) < rows.start()           # row streams name it i_c_t)
    got = on(A=t, x=v)
    np.testing.assert_allclose(got, m @ v, rtol=1e-12, atol=1e-12)
    same = spmv("blocks", pieces=False) if d < 3 else off
    assert np.array_equal(got, same(A=t, x=v))


def test_bands_keep_their_lanes():
    """A band is one piece a row: rows of 5 keep the lanes (no test in the C, the
    bits of short_mean=0): a band's plain loop measured slower on short rows."""
    rng = np.random.default_rng(5)
    offsets = (-2, -1, 0, 1, 2)
    m = sp.diags([rng.random(300 - abs(o)) - 0.5 for o in offsets], offsets,
                 shape=(300, 300)).tocsr()
    for fmt in ("banded", "uniform_band"):
        t = ep.Tensor.from_scipy(m, fmt)
        v = rng.random(300) - 0.5
        on = spmv(fmt)
        assert "8 * " not in on.c_source
        got = on(A=t, x=v)
        np.testing.assert_allclose(got, m @ v, rtol=1e-12, atol=1e-12)
        assert np.array_equal(got, spmv(fmt, short_mean=0)(A=t, x=v))


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


def test_the_hosts_short_mean():
    """Tuning.short_mean at -1 is the host's: 8 on AMD Zen, 3 elsewhere (blocks of 3
    and more keep their loops); a kernel under it writes that constant."""
    from etchpy import host_facts
    assert host_facts.short_mean(("AuthenticAMD", 25)) == 8
    assert host_facts.short_mean(("GenuineIntel", 6)) == 3
    src = ep.Kernel(ep.sum(j, ep.tensor("A", 2, "blocks")[i, j] * x[j])).c_source
    assert f"({host_facts.short_mean()} * A_bseg1[A_dim0])" in src
