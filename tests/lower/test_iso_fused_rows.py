"""Iso-valued (pattern) inputs, `ep.tensor(..., iso=True)`, and fused rows
(`Tuning.fused_rows`): the pulled SpMV `c + Σ_j A[j,i]·w[j]` and a three-step
dense output, against the dense reference under every semiring; the C reads
no iso values and, with fused rows, neither fills nor re-reads its output;
an iso input holding another value is refused, naming it; an unweighted
graph's PageRank (the iso path) matches the dense power iteration."""
import numpy as np
import pytest
import scipy.sparse as sp

import etchpy as ep
from etchpy import graph, tuning
from etchpy.semiring import semirings

pytestmark = pytest.mark.usefixtures("shared_cache")

i, j = ep.indices("i j")
A, w, c = ep.tensor("A", 2, "csc", iso=True), ep.tensor("w", 1), ep.tensor("c", 0)
PULL = c[()] + ep.sum(j, A[j, i] * w[j])
SEMIRINGS = ["real", "integer", "boolean", "min_plus", "max_plus", "max_times"]


def operands(sr, seed=0):
    """A pattern with empty columns and an all-dense column, w and c in the carrier."""
    rng = np.random.default_rng(seed)
    mask = rng.random((9, 7)) < 0.3
    mask[:, 2], mask[:, 5] = False, True
    M = sp.csc_array((np.full(mask.sum(), sr.one, dtype=sr.dtype),
                      np.nonzero(mask.T)[1], np.r_[0, np.cumsum(mask.sum(axis=0))]),
                     shape=mask.shape)
    if sr.dtype == np.bool_:
        wv = rng.random(9) < 0.5
    else:
        wv = rng.integers(-3, 9, 9).astype(sr.dtype)
    return M, wv, np.asarray(wv[0], dtype=sr.dtype)


@pytest.mark.parametrize("name", SEMIRINGS)
def test_iso_pull_matches_the_reference(name):
    sr = semirings.get(name)
    M, wv, cv = operands(sr)
    want = ep.evaluate(PULL, semiring=sr, backend="reference", A=M, w=wv, c=cv)
    kern = ep.compile(PULL, semiring=sr)
    assert np.array_equal(kern(A=M, w=wv, c=cv), want)
    P = ep.Tensor.from_scipy(M, "csc", semiring=sr).pattern(sr.one)
    assert np.array_equal(kern(A=P, w=wv, c=cv), want)
    assert np.array_equal(kern(A=P, w=wv, c=cv), want)       # checked once, remembered
    assert np.array_equal(ep.evaluate(PULL, semiring=sr, backend="streams", A=M, w=wv,
                                      c=cv), want)
    body = kern.c_source[kern.c_source.index("etchpy_kernel("):]
    assert "A_vals[" not in body                    # the pattern's values are never read
    assert "out_zeroed" not in body and "out[i_] = cell" in body   # stored once, no fill


@pytest.mark.parametrize("preset", ["noopt", "force"])
def test_iso_pull_under_presets(preset):
    for name in ("real", "min_plus"):
        sr = semirings.get(name)
        M, wv, cv = operands(sr, 1)
        want = ep.evaluate(PULL, semiring=sr, backend="reference", A=M, w=wv, c=cv)
        kern = ep.compile(PULL, semiring=sr, tuning=preset)
        assert np.array_equal(kern(A=M, w=wv, c=cv), want)
        if preset == "noopt":                # plain loops: a fill, then each step adds
            assert "out_zeroed" in kern.c_source


def test_three_steps_share_one_nest_and_match_the_reference():
    B, x, y, z = (ep.tensor("B", 2, "csr"), ep.tensor("x", 1), ep.tensor("y", 1),
                  ep.tensor("z", 1))
    e = x[i] + ep.sum(j, B[i, j] * y[j]) + z[i]
    rng = np.random.default_rng(3)
    Bm = sp.random_array((8, 6), density=0.3, format="csr", random_state=rng)
    xv, yv, zv = rng.random(8), rng.random(6), rng.random(8)
    want = ep.evaluate(e, backend="reference", B=Bm, x=xv, y=yv, z=zv)
    fused = ep.compile(e)
    plain = ep.compile(e, tuning=tuning.DEFAULT.with_(fused_rows=False))
    assert len(fused.plan.steps) == 3
    assert np.allclose(fused(B=Bm, x=xv, y=yv, z=zv), want)
    assert np.allclose(plain(B=Bm, x=xv, y=yv, z=zv), want)
    assert "in lockstep" in fused.c_source and "out_zeroed" not in fused.c_source
    assert "in lockstep" not in plain.c_source


@pytest.mark.parametrize("sizes", [(4, 2), (2, 4), (3, 3)])
def test_steps_in_different_loop_orders_are_not_walked_in_lockstep(sizes):
    """Σ_k x[k] + D[i,j]: when the planner walks the two steps' free indices in
    different orders, their k-th cells differ, so they keep a nest each (fusing
    them by position read D transposed)."""
    k = ep.Index("k")
    x, D = ep.tensor("x", 1), ep.tensor("D", 2)
    Dv, xv = np.arange(float(np.prod(sizes))).reshape(sizes), np.ones(5)
    for e in (ep.sum(k, x[k]) + D[i, j], D[i, j] + ep.sum(k, x[k])):
        for order in (None, (i, j, k), (j, i, k)):
            kern = ep.compile(e, order=order)
            assert np.array_equal(kern(x=xv, D=Dv), Dv + 5), (e, order)
            orders = {tuple(ix for ix in s.order if ix != "k") for s in kern.plan.steps}
            assert ("in lockstep" in kern.c_source) == (len(orders) == 1), kern.plan


def test_an_iso_input_with_another_value_is_refused():
    sr = semirings.real
    M, wv, cv = operands(sr)
    bad = M.copy()
    bad.data[0] = 2.0
    kern = ep.compile(PULL)
    with pytest.raises(ep.InputError, match="input A is declared iso"):
        kern(A=bad, w=wv, c=cv)
    with pytest.raises(ep.InputError, match="input A is declared iso"):
        kern(A=ep.Tensor.from_scipy(bad, "csc"), w=wv, c=cv)
    with pytest.raises(ep.InputError, match="input A is declared iso"):
        ep.evaluate(PULL, backend="streams", A=bad, w=wv, c=cv)
    P = ep.Tensor.from_scipy(M, "csc").pattern()
    assert not P.vals.flags.writeable and P.levels[1]["crd"] is not None


def test_unweighted_pagerank_reads_the_pattern():
    rng = np.random.default_rng(5)
    dense = (rng.random((50, 50)) < 0.06).astype(float)
    dense[3] = 0.0                                       # a dangling vertex
    A = sp.csr_array(dense)
    x = graph.pagerank(A)
    W = A.toarray()
    deg = W.sum(axis=1)
    P = np.divide(W, deg[:, None], out=np.zeros_like(W), where=deg[:, None] > 0)
    r = np.full(50, 1 / 50)
    for _ in range(100):
        new = 0.85 * (r @ P) + (0.15 + 0.85 * r[deg == 0].sum()) / 50
        done, r = np.abs(new - r).sum() < 50 * 1e-6, new
        if done:
            break
    assert np.allclose(x, r, rtol=0, atol=1e-12)
