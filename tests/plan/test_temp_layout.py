"""A dense temporary is laid out in the order its own loop nest writes it."""
import numpy as np
import scipy.sparse as sp

import etchpy as ep
from etchpy.plan import plan as planning

i, k, r, c = ep.indices("i k r c")
X, U, V = ep.tensor("X", 2, "csr"), ep.tensor("U", 2), ep.tensor("V", 2)
ALS = ep.sum(k, (ep.sum(r, U[i, r] * V[k, r]) - X[i, k]) * V[k, c])


def test_a_temporary_follows_its_loop_order():
    opt = ep.optimize(ALS, dims={"i": 4000, "k": 4000, "r": 8, "c": 8},
                      nnz={"X": 160000})
    plan = planning.make_plan(opt.expr, (i, c), keep_factored=True)
    temps = [s for s in plan.steps if s.target in plan.temps]
    assert temps
    for s in temps:
        assert s.out == tuple(v for v in s.order if v in s.out)


def test_the_als_update_is_right_with_its_temporaries():
    n = 60
    x = sp.random(n, n, density=0.1, format="csr", random_state=1)
    rng = np.random.default_rng(0)
    u, w = rng.random((n, 3)), rng.random((n, 3))
    got = ep.Kernel(ALS, optimizer_options={"dims": {"i": n, "k": n, "r": 3, "c": 3},
                                            "nnz": {"X": x.nnz}})(X=x, U=u, V=w)
    np.testing.assert_allclose(got, u @ (w.T @ w) - x @ w, rtol=1e-10)
