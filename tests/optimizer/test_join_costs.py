"""The optimizer's cost of a product of several sparse operands: streams
intersect them, so a join of relations stays fused rather than being factored
through a dense temporary over a large index (a TPC-H Q5-like query)."""
import numpy as np
import scipy.sparse as sp

import etchpy as ep
from etchpy.optimizer.optimize import optimize

o, c, s, n = ep.indices("o c s n")
O, C, L, S = (ep.tensor(t, 2, format="csr") for t in "OCLS")
R = ep.tensor("R", 1)
Q5 = ep.sum((o, c, s), O[o, c] * C[c, n] * L[o, s] * S[s, n] * R[n])
DIMS = {"o": 600_000, "c": 15_000, "s": 1_000, "n": 25}
NNZ = {"O": 86_000, "C": 15_000, "L": 2_400_000, "S": 1_000}


def test_a_join_of_relations_is_not_factored_through_a_dense_temporary():
    opt = optimize(Q5, dims=DIMS, nnz=NNZ)
    assert "Σ_c C[c,n]·O[o,c]" not in str(opt.expr)     # no dense (n, o) temporary
    kern = ep.compile(Q5, optimizer_options={"dims": DIMS, "nnz": NNZ})
    assert len(kern.plan.steps) == 1                     # one fused loop nest


def test_the_fused_join_agrees_with_scipy():
    rng = np.random.default_rng(1)
    no, nc, ns, nn = 3000, 200, 50, 5
    O_ = sp.csr_array((np.ones(400), (rng.choice(no, 400, replace=False),
                                      rng.integers(0, nc, 400))), shape=(no, nc))
    C_ = sp.csr_array((np.ones(nc), (np.arange(nc), rng.integers(0, nn, nc))), shape=(nc, nn))
    L_ = sp.random(no, ns, density=0.05, format="csr", random_state=2)
    S_ = sp.csr_array((np.ones(ns), (np.arange(ns), rng.integers(0, nn, ns))), shape=(ns, nn))
    R_ = (rng.random(nn) < 0.5).astype(float)
    want = np.asarray(((O_ @ C_).multiply(L_ @ S_)).sum(axis=0)).ravel() * R_
    got = ep.compile(Q5)(O=O_, C=C_, L=L_, S=S_, R=R_)
    np.testing.assert_allclose(got, want)
