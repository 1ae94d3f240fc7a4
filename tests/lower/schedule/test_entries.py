"""Entries (lower.schedule.entries) and the checks fused into their walk
(lower.schedule.coo_checks): a coo tensor's non-unique level read one entry at a
time where the output ⊕-accumulates, the kernel then checking each coordinate's
range as it reads it and taking entries in any order, repeated or not."""
import numpy as np
import pytest
import scipy.sparse as sp

import etchpy as ep
from etchpy.lower.schedule import fused_checks

pytestmark = pytest.mark.usefixtures("shared_cache")

SPMV = "y[i] = A[i, j] * x[j]"


def _shuffled(n=12, m=9, seed=0, repeats=True):
    """A coo_array with its entries in random order and, with `repeats`, some
    (row, column) pairs stored twice."""
    rng = np.random.default_rng(seed)
    A = sp.random_array((n, m), density=0.3, format="coo", random_state=seed)
    row, col, val = A.coords[0], A.coords[1], A.data
    if repeats:
        k = rng.choice(A.nnz, size=A.nnz // 3, replace=False)
        row, col, val = np.r_[row, row[k]], np.r_[col, col[k]], np.r_[val, rng.random(len(k))]
    p = rng.permutation(len(val))
    return sp.coo_array((val[p], (row[p].astype(np.int32), col[p].astype(np.int32))),
                        shape=A.shape)


def test_spmv_is_a_scatter_with_its_checks_fused():
    kern = ep.compile(SPMV, formats={"A": "coo"})
    assert "each entry on its own" in kern.c_source
    assert "A_crd0[(i_q + 1)]" not in kern.c_source         # no search for a run's end
    assert kern._fused == {"A"}
    checked = kern.compiled.checked
    assert checked is not None and checked.fused == {"A"}


def test_the_switch_keeps_the_runs_and_the_order_check():
    kern = ep.compile(SPMV, formats={"A": "coo"}, tuning={"entries": False})
    assert "each entry on its own" not in kern.c_source
    assert not kern._fused
    C, x = _shuffled(), np.arange(9.0)
    np.testing.assert_allclose(kern(A=C, x=x), C.toarray() @ x)


def test_no_fused_checks_without_their_switch():
    kern = ep.compile(SPMV, formats={"A": "coo"}, tuning={"fused_checks": False})
    assert "each entry on its own" in kern.c_source and not kern._fused
    C, x = _shuffled(seed=3), np.arange(9.0)
    np.testing.assert_allclose(kern(A=C, x=x), C.toarray() @ x)


CASES = [
    ("spmv", SPMV, lambda D, x, z, X: D @ x),
    ("transposed", "y[j] = A[i, j] * z[i]", lambda D, x, z, X: D.T @ z),
    ("scaled rows", "y[i] = A[i, j] * x[j] * z[i]", lambda D, x, z, X: (D @ x) * z),
    ("spmm", "Y[i, k] = A[i, j] * X[j, k]", lambda D, x, z, X: D @ X),
    ("total", "s = A[i, j] * x[j]", lambda D, x, z, X: (D @ x).sum()),
]


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
@pytest.mark.parametrize("seed", [0, 1])
def test_entries_in_any_order_give_the_canonical_answer(case, seed):
    _, expr, want = case
    kern = ep.compile(expr, formats={"A": "coo"})
    C = _shuffled(seed=seed)
    D, rng = C.toarray(), np.random.default_rng(seed)
    x, z, X = rng.random(9), rng.random(12), rng.random((9, 4))
    given = {k: v for k, v in {"A": C, "x": x, "z": z, "X": X}.items() if k in expr}
    for _ in range(3):                    # the general call, then the plan
        np.testing.assert_allclose(kern(**given), want(D, x, z, X), rtol=1e-12)


def test_min_plus_repeats_take_the_least():
    kern = ep.compile(SPMV, formats={"A": "coo"}, semiring="min_plus")
    C = _shuffled(seed=2)
    d = np.arange(9.0)
    want = np.full(12, np.inf)
    for r, c, v in zip(*C.coords, C.data):
        want[r] = min(want[r], v + d[c])
    for _ in range(3):
        np.testing.assert_allclose(kern(A=C, x=d), want)


def test_order_three_and_a_product_with_csr():
    i, j, k = ep.indices("i j k")
    T, v = ep.tensor("T", 3, format="coo"), ep.tensor("v", 1)
    kern = ep.compile(ep.sum((j, k), T[i, j, k] * v[k]))
    assert "each entry on its own" in kern.c_source
    dense = np.random.default_rng(0).random((4, 5, 6)) * (np.arange(120).reshape(4, 5, 6) % 3 == 0)
    t = ep.Tensor.from_dense(dense, format="coo")
    np.testing.assert_allclose(kern(T=t, v=np.arange(6.0)), dense @ np.arange(6.0) @ np.ones(5))
    both = ep.compile("y[i] = A[i, j] * B[i, j]", formats={"A": "coo", "B": "csr"})
    C = _shuffled(seed=4, repeats=False)
    B = sp.random_array((12, 9), density=0.5, format="csr", random_state=1)
    for _ in range(2):
        np.testing.assert_allclose(both(A=C, B=B), (C.toarray() * B.toarray()).sum(axis=1))


def test_out_of_range_is_refused_by_the_kernel():
    kern = ep.compile(SPMV, formats={"A": "coo"})
    for mode, bad in [(0, 12), (1, 9), (0, -1), (1, -5)]:
        C = _shuffled(seed=5)
        kern(A=C, x=np.ones(9))
        C.coords[mode][len(C.data) // 2] = bad     # written after scipy's own checks
        with pytest.raises(ep.InputError, match="A"):
            kern(A=C, x=np.ones(9))


def test_a_sparse_output_keeps_the_runs():
    kern = ep.compile("C[i, j] = A[i, j] * B[i, j]", formats={"A": "coo", "B": "csr"},
                      output="csr")
    assert "each entry on its own" not in kern.c_source
    C = _shuffled(seed=6)
    B = sp.random_array((12, 9), density=0.5, format="csr", random_state=2)
    got = kern(A=C, B=B)
    np.testing.assert_allclose(got.toarray(), C.toarray() * B.toarray())
    assert fused_checks.ERROR_CODE == 4
