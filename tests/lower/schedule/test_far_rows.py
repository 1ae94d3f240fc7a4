"""Far rows' values left to the hardware (lower.schedule.far_rows, Tuning.run_far_bytes):
a gathered walk's row-start prefetch of its values runs only when the call's far pick
(C's ep_far_pick) finds the rows near or x under run_far_bytes; its crd's prefetch stays.
proofs_notes/gather_sums.md "Far rows' values": the pick and the test change no result."""
import numpy as np
import pytest
import scipy.sparse as sp

import etchpy as ep
from etchpy import imp
from etchpy.errors import InputError
from tuned import on_interpreter

SPMV = "y[i] = A[i,j] * x[j]"
SMALL = ep.Tuning(run_min_entries=0, run_far_bytes=8)   # rows prefetched, x of any size far


def random_rows(rows=300, cols=2000, k=7, seed=5):
    rng = np.random.default_rng(seed)
    c = np.sort(np.stack([rng.choice(cols, k, replace=False) for _ in range(rows)]), axis=1)
    return sp.csr_array((rng.random(rows * k), c.ravel(), np.arange(0, rows * k + 1, k)),
                        shape=(rows, cols))


def test_the_values_prefetch_is_under_the_pick_and_switches_off():
    def text(tuning):
        return ep.compile(SPMV, formats={"A": "csr"}, tuning=tuning).c_source
    on = text(None)
    assert "A_far_rows = ep_far_pick(A_pos1, A_crd1, A_dim0, A_dim1, 8, 4096);" in on
    assert "if (!A_far_rows) {\n" in on and "EP_PREFETCH_AHEAD(&A_crd1[j_q], 256);" in on
    assert on.count("EP_PREFETCH_AHEAD(&A_vals[j_q], 256);") == on.count("if (!A_far_rows)")
    assert "far_rows" not in text(ep.Tuning(run_far_bytes=0))


def test_kernels_agree_with_scipy_and_refuse_a_bad_coordinate():
    kern = ep.compile(SPMV, formats={"A": "csr"}, tuning=SMALL)
    x = np.linspace(-1, 2, 2000)
    for A in (random_rows(), sp.csr_array(sp.eye_array(2000) * 3.0), sp.csr_array((40, 2000))):
        np.testing.assert_allclose(kern(A=A, x=x), A @ x, rtol=1e-12)
        np.testing.assert_allclose(kern(A=ep.Tensor.from_scipy(A, "csr"), x=x), A @ x,
                                   rtol=1e-12)
    A = random_rows()
    A.indices[A.indptr[100] + 2] = 2000
    with pytest.raises(InputError, match="A"):
        kern(A=A, x=x)


def test_the_interpreter_runs_the_guarded_walk():
    i, j = ep.indices("i j")
    A, x = ep.tensor("A", 2, format="csr"), ep.tensor("x", 1)
    M = random_rows(rows=40, cols=300)
    v = np.linspace(-1, 1, 300)
    final, prog, _ = on_interpreter(ep.sum(j, A[i, j] * x[j]), ep.semirings.real, None,
                                    {"A": ep.Tensor.from_scipy(M, "csr"), "x": v}, tuning=SMALL)
    assert any(isinstance(s, imp.GatherPick) and s.var.endswith("far_rows")
               for s in imp.statements(prog.body))
    np.testing.assert_allclose(final["out"], M @ v, rtol=1e-12)
