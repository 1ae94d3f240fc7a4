"""Random small lazy programs (sparse and dense operands, broadcasting, maps,
several outputs at once): ep.compute equals numpy on dense copies, with the
optimizer and without."""
import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings, strategies as st

import etchpy as ep

pytestmark = pytest.mark.usefixtures("shared_cache")

M, N, K = 4, 3, 2


def operands(seed: int):
    """(lazy, dense) pairs of the shapes a program mixes: sparse and dense
    matrices, vectors, a column, thin factors."""
    rng = np.random.default_rng(seed)
    s = sp.random_array((M, N), density=0.5, format="csr", random_state=seed)
    arrays = [s, rng.random((M, N)) - 0.5, rng.random(N), rng.random((M, 1)),
              rng.random((M, K)), rng.random((N, K)),
              sp.random_array((M, N), density=0.5, format="csc", random_state=seed + 1)]
    return [(ep.lazy(a), a.toarray() if hasattr(a, "toarray") else a) for a in arrays]


MAPS = [("exp", lambda a: ep.exp(a * 0.5), lambda d: np.exp(d * 0.5)),
        ("relu", lambda a: ep.maximum(a, 0), lambda d: np.maximum(d, 0)),
        ("abs", ep.abs, np.abs),
        ("sqrt|.|", lambda a: ep.sqrt(ep.abs(a)), lambda d: np.sqrt(np.abs(d))),
        ("log(1+|.|)", lambda a: ep.log(1 + ep.abs(a)), lambda d: np.log(1 + np.abs(d)))]


def step(draw, pool):
    """One new (lazy, dense) pair made from the pool by a drawn operation."""
    kind = draw(st.sampled_from(["add", "sub", "mul", "scale", "div", "matmul", "T",
                                 "sum", "map", "pow"]))
    (a, da), (b, db) = draw(st.sampled_from(pool)), draw(st.sampled_from(pool))
    try:
        np.broadcast_shapes(da.shape, db.shape)
        fits = True
    except ValueError:
        fits = False
    if kind in ("add", "sub", "mul") and fits:
        return {"add": (a + b, da + db), "sub": (a - b, da - db),
                "mul": (a * b, da * db)}[kind]
    if kind == "div" and fits:
        return a / (1 + ep.abs(b)), da / (1 + np.abs(db))
    if kind == "matmul" and da.ndim == 2 and db.ndim == 2 and da.shape[1] == db.shape[1]:
        return a @ b.T, da @ db.T
    if kind == "T" and da.ndim == 2:
        return a.T, da.T
    if kind == "sum" and da.ndim >= 1:
        axis = draw(st.sampled_from([None] + list(range(da.ndim))))
        keep = draw(st.booleans())
        return a.sum(axis=axis, keepdims=keep), da.sum(axis=axis, keepdims=keep)
    if kind == "map":
        _, f, g = draw(st.sampled_from(MAPS))
        return f(a), g(da)
    if kind == "pow":
        n = draw(st.integers(0, 3))
        return a ** n, da ** n
    c = draw(st.sampled_from([2, -1, 0.5]))
    return (c * a, c * da) if draw(st.booleans()) else (a * c, da * c)


@st.composite
def programs(draw):
    pool = operands(draw(st.integers(0, 3)))
    made = []
    for _ in range(draw(st.integers(1, 4))):
        pair = step(draw, pool)
        pool = pool + [pair]
        made.append(pair)
    outs = draw(st.lists(st.sampled_from(made), min_size=1, max_size=3))
    return outs


def dense(v):
    return v.toarray() if hasattr(v, "toarray") else np.asarray(v)


@settings(max_examples=30, deadline=None)
@given(programs(), st.booleans())
def test_compute_equals_numpy_on_dense_copies(outs, optimize):
    results = ep.compute(*(a for a, _ in outs), optimize=optimize)
    results = results if len(outs) > 1 else (results,)
    for got, (a, want) in zip(results, outs):
        assert dense(got).shape == np.shape(want), (a, got)
        np.testing.assert_allclose(dense(got), want, rtol=1e-9, atol=1e-12, err_msg=repr(a))
        if sp.issparse(got):       # sparse only where numpy's answer is zero off it
            assert got.shape == np.shape(want)
