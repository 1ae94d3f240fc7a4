"""ep.compute and ep.explain: one program, shared nodes once, the square
expansion, sampled products on a sparse support, sparse results only where
numpy's answer is zero off the support, optimize=False, ep.equivalent."""
import numpy as np
import pytest
import scipy.sparse as sp

import etchpy as ep

pytestmark = pytest.mark.usefixtures("shared_cache")

RNG = np.random.default_rng(3)
N, R = 30, 3
X = sp.random_array((N, N), density=0.1, format="csr", random_state=2)
Xd = X.toarray()
U, V = RNG.random((N, R)), RNG.random((N, R))


def lz():
    return ep.lazy(X), ep.lazy(U), ep.lazy(V)


def test_squared_loss_is_expanded_and_exact():
    x, u, v = lz()
    loss = ((x - u @ v.T) ** 2).sum()
    text = loss.explain()
    assert "square expansion" in text and "(X1.T @ X1)" in text
    assert np.isclose(loss.compute(), ((Xd - U @ V.T) ** 2).sum(), rtol=1e-12)
    assert np.isclose(loss.compute(optimize=False), ((Xd - U @ V.T) ** 2).sum())


def test_sampled_product_returns_the_sparse_support():
    x, u, v = lz()
    got = (x * (u @ v.T)).compute()
    assert sp.issparse(got)
    assert np.array_equal(got.indptr, X.indptr) and np.array_equal(got.indices, X.indices)
    np.testing.assert_allclose(got.toarray(), Xd * (U @ V.T), rtol=1e-12)
    assert "stored entries" in (x * ep.log(u @ v.T)).explain()
    pnmf = (u @ v.T).sum() - (x * ep.log(u @ v.T)).sum()
    assert np.isclose(pnmf.compute(), (U @ V.T).sum() - (Xd * np.log(U @ V.T)).sum())


def test_shared_residual_computed_once():
    x, u, v = lz()
    r = x * (u @ v.T) - x
    text = ep.explain(r @ v, r.T @ u)
    assert "computed once" in text and "none" not in text.split("computed once:")[1][:12]
    g1, g2 = ep.compute(r @ v, r.T @ u)
    rd = Xd * (U @ V.T) - Xd
    np.testing.assert_allclose(g1, rd @ V, rtol=1e-12)
    np.testing.assert_allclose(g2, rd.T @ U, rtol=1e-12)


def test_division_by_an_array_with_a_zero_is_dense_like_numpy():
    d = RNG.random((N, N))
    d[0, :] = 0.0
    x = ep.lazy(X)
    with np.errstate(all="ignore"):
        want = Xd / d
    got = (x / d).compute()
    assert not sp.issparse(got)
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    np.testing.assert_allclose(got[1:], want[1:], rtol=1e-12)
    got2 = (x / (d + 1)).compute()          # no zero: X's support
    assert sp.issparse(got2)
    np.testing.assert_allclose(got2.toarray(), Xd / (d + 1), rtol=1e-12)


def test_logistic_gradient_and_several_outputs():
    x = ep.lazy(X)
    w, y = RNG.standard_normal(N), (RNG.random(N) > 0.5).astype(float)
    g = x.T @ (1 / (1 + ep.exp(-(x @ w))) - y)
    want = Xd.T @ (1 / (1 + np.exp(-(Xd @ w))) - y)
    np.testing.assert_allclose(g.compute(), want, rtol=1e-12)
    np.testing.assert_allclose(g.compute(optimize=False), want, rtol=1e-12)
    a, b, c = ep.compute(x.sum(), x @ w, 2 * x)
    assert np.isclose(a, Xd.sum()) and sp.issparse(c)


def test_explain_shows_steps_and_kernels():
    x, u, v = lz()
    text = ep.explain((x - u @ v.T) @ v)
    for part in ("as written", "rewrites", "after", "steps", "kernel ->"):
        assert part in text


def test_explain_of_an_index_expression_is_its_kernels():
    i, j = ep.indices("i j")
    e = ep.sum(j, ep.tensor("A", 2, "csr")[i, j] * ep.tensor("x", 1)[j])
    assert ep.explain(e, threads=1) == ep.compile(e, threads=1).explain()
    assert "loop order" in ep.explain("y[i] = A[i,j] * x[j]", formats={"A": "csr"})
    with pytest.raises(TypeError, match="bogus"):
        ep.explain(e, bogus=1)


def test_equivalent_accepts_lazy_arrays():
    x, u, v = lz()
    assert ep.equivalent((u @ v.T).T, v @ u.T)
    assert ep.equivalent((x + x).sum(axis=0), 2 * x.T.sum(axis=1))
    assert not ep.equivalent(u @ v.T, v @ u.T)
    assert not ep.equivalent(u, u.T @ u)


def test_a_shared_map_of_a_full_rank_product_is_computed_once():
    """exp(X @ W) read twice (softmax regression): X @ W (sparse n×n by n×3) is
    smaller than its factors, so it is materialised once and read by both users,
    not recomputed in one of them; U @ V.T (rank 3, n×n) is still recomputed."""
    from etchpy.lazy import sample
    from etchpy.lazy.steps import Evaluator
    x, u, v = lz()
    e = ep.exp(x @ u)
    grad = x.T @ (e / e.sum(axis=1, keepdims=True) - v)
    steps = grad.explain().split("steps:")[1]
    assert steps.count("=X0") == 1 and "Σ_i3 t0" not in steps   # X read by one kernel
    ed = np.exp(Xd @ U)
    for _ in range(2):                                           # recorded, then replayed
        np.testing.assert_allclose(grad.compute(), Xd.T @ (ed / ed.sum(1, keepdims=True) - V),
                                   rtol=1e-12)
    ev = Evaluator({})
    assert not sample.recomputed(e, ev) and sample.expensive(e, ev)
    assert sample.recomputed(ep.exp(u @ v.T), ev)
