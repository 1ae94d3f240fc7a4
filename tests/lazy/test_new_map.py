"""A map added to etchpy/maps.py works through the lazy arrays with no change to
etchpy/lazy: numpy's ufunc of its numpy_name builds it, and every kind of step
runs it (fused into a kernel as C, a numpy region, numpy on a materialised
operand, sampled on a sparse pattern), its zero-keeping read from maps.py."""
import numpy as np
import pytest
import scipy.sparse as sp

import etchpy as ep
from etchpy import maps
from etchpy.lazy.array import map_node

pytestmark = pytest.mark.usefixtures("shared_cache")

CBRT = maps.MapFn("lazy_test_cbrt", "cbrt({x})", None,
                  lambda x, a, out=None: np.cbrt(x, out=out), numpy_name="cbrt",
                  keeps_finite=True, writes_out=True)
# a map without numpy's fast paths: no numpy name, no out=, not known finite
SHIFT = maps.MapFn("lazy_test_shift", "(({x}) + 0.5)", "(({x}) + 0)",
                   lambda x, a: np.add(x, 0.5))


@pytest.fixture(autouse=True)
def registered():
    for m in (CBRT, SHIFT):
        maps.register(m)
    yield
    for m in (CBRT, SHIFT):
        maps.unregister(m.name)


RNG = np.random.default_rng(5)
X = sp.random_array((8, 6), density=0.4, format="csr", random_state=2)
U, V, w = RNG.random((8, 3)) - 0.5, RNG.random((6, 3)) - 0.5, RNG.random(6) - 0.5


def programs(F, cbrt, shift):
    """(name, lazy or numpy results) of programs holding the new maps."""
    x, u, v, ww = F(X), F(U), F(V), F(w)
    return [("fused in a kernel", (cbrt(x @ ww).sum(),)),
            ("numpy region", (cbrt(u) * 2 + shift(u),)),
            ("sampled on a pattern", ((x * cbrt(u @ v.T)).sum(),)),
            ("on stored values", (cbrt(x), shift(x @ ww)))]


def dense(r):
    return r.toarray() if hasattr(r, "toarray") else np.asarray(r)


@pytest.mark.parametrize("optimize", [True, False])
def test_a_new_map_runs_in_every_kind_of_step(optimize):
    ours = programs(ep.lazy, np.cbrt, lambda a: map_node(SHIFT.name, a))
    want = programs(lambda a: a.toarray() if hasattr(a, "toarray") else a, np.cbrt,
                    lambda a: a + 0.5)
    for (name, got), (_, expect) in zip(ours, want):
        results = ep.compute(*got, optimize=optimize)
        results = results if isinstance(results, tuple) else (results,)
        for r, e in zip(results, expect):
            np.testing.assert_allclose(dense(r), dense(e), rtol=1e-12, atol=1e-12,
                                       err_msg=name)


def test_zero_keeping_is_read_from_maps():
    """cbrt(0) = 0 (maps.keeps_zero): the result keeps X's sparse support;
    shift(0) = 0.5: it does not."""
    kept, dense_out = ep.compute(np.cbrt(ep.lazy(X)), map_node(SHIFT.name, ep.lazy(X)))
    assert sp.issparse(kept) and kept.nnz == X.nnz
    assert not sp.issparse(dense_out)
    assert "lazy_test_cbrt" in ep.explain(np.cbrt(ep.lazy(X) @ ep.lazy(w)))
