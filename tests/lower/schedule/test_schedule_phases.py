"""Phases: a union's loop runs in one phase per set of operands left, with the
validity tests folded away."""
import re

import numpy as np
import pytest
import scipy.sparse as sp

import etchpy as ep
from etchpy.testing import assert_same
from tuned import as_scipy, csr_on_interpreter, random_csr

i, j, r = ep.indices("i j r")
A_csr = ep.tensor("A", 2, format="csr")

pytestmark = pytest.mark.usefixtures("shared_cache")


@pytest.mark.parametrize("semiring", ["real", "min_plus"])
def test_union_of_segments_steps_fronts_in_phases(semiring):
    """csr A+B: the union steps exactly the operands at its front (q += flag), and
    its loop runs in three phases (both rows left, only A's, only B's) with the
    validity tests folded away. C, the Imp interpreter and scipy agree, including
    rows where one side is empty or ends first."""
    sr = ep.semirings.get(semiring)
    B = ep.tensor("B", 2, format="csr")
    e = A_csr[i, j] + B[i, j]
    kern = ep.compile(e, output="csr", semiring=semiring)
    src = kern.c_source
    assert "then gallop" in src and "j_fa = ((A_crd1[j_q] < B_crd1[j_q_2])" in src
    both = r"while \(\(j_q < j_end\) && \(j_q_2 < j_end_2\)\)"
    only_a = r"while \(\(j_q < j_end\) && !\(j_q_2 < j_end_2\)\)"
    only_b = r"while \(!\(j_q < j_end\) && \(j_q_2 < j_end_2\)\)"
    for loop in (both, only_a, only_b):
        assert len(re.findall(loop, src)) == 1, loop
    assert "j_q = (j_q + j_fa);" in src
    M, N = random_csr(300, 80, 3000, 11), random_csr(300, 80, 1500, 12)
    M = sp.csr_array(M.multiply(np.arange(300)[:, None] % 3 != 0))      # rows A lacks
    N = sp.csr_array(N.multiply(np.arange(300)[:, None] % 5 != 0))      # rows B lacks
    for m in (M, N):
        m.data = np.random.default_rng(1).integers(1, 9, m.nnz).astype(sr.dtype)
    want = ep.evaluate(e, semiring=semiring, backend="reference", A=M, B=N)
    for got in (as_scipy(kern(A=M, B=N)), csr_on_interpreter(e, sr, A=M, B=N)):
        dense = np.full(got.shape, sr.zero, dtype=sr.dtype)
        coo = got.tocoo()
        dense[coo.row, coo.col] = coo.data
        assert_same(dense, want, sr, what=str(e))
        for r in range(got.shape[0]):
            row = got.indices[got.indptr[r]:got.indptr[r + 1]]
            assert np.all(np.diff(row) > 0)
    if semiring == "real":
        np.testing.assert_allclose(kern(A=M, B=N).toarray(), (M + N).toarray())
