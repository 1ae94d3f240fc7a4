"""The build without checks chains a long near row's walk as the checked build does
(lower/schedule/long_chains.py; pipeline.Compiled.unchecked)."""
import numpy as np
import pytest
import scipy.sparse as sp

import etchpy as ep
from etchpy import imp

SPMV = "y[i] = A[i, j] * x[j]"
ON = ep.Tuning(check_first_from=20, walk_chain_count=2, walk_chains=True, check_first_near=False)
MEAN = imp.Bin("<=", imp.Bin("*", imp.Const(20), imp.Var("A_dim0")),
               imp.Load("A_pos1", imp.Var("A_dim0")))


def _split(prog):
    return [s for s in imp.statements(prog.body) if isinstance(s, imp.If) and s.split
            and s.cond == MEAN]


def test_the_unchecked_build_has_the_long_rows_arm_and_the_program_not():
    compiled = ep.compile(SPMV, formats={"A": "csr"}, tuning=ON).compiled
    arms = _split(compiled.build(False))
    assert arms and not _split(compiled.program)
    chained = [s for a in arms for s in imp.statements(a.then)
               if isinstance(s, imp.Decl) and s.name.startswith("acc_chain")]
    assert chained and not any(isinstance(s, imp.Decl) and s.name.startswith("acc_chain")
                               for a in arms for s in imp.statements(a.else_))
    picks = [s for s in imp.statements(compiled.build(False).body)
             if isinstance(s, imp.GatherPick) and s.near and s.share == 2]
    assert picks                                   # the lanes unpicked where rows are near
    for off in (ON.with_(walk_chains=False), ON.with_(check_first_from=0)):
        again = ep.compile(SPMV, formats={"A": "csr"}, tuning=off).compiled
        assert again.build(False) == again.program


def _rows(n, per, near, rng):
    if near:           # a mesh's: runs of consecutive columns in a few places
        cols = [np.unique(np.concatenate([np.arange(s, s + per // 4) % n
                                          for s in rng.integers(0, n, 4)])) for _ in range(n)]
    else:
        cols = [np.sort(rng.choice(n, per, replace=False)) for _ in range(n)]
    pos = np.concatenate([[0], np.cumsum([len(c) for c in cols])]).astype(np.int32)
    return sp.csr_array((rng.random(pos[-1]), np.concatenate(cols).astype(np.int32), pos),
                        shape=(n, n))


@pytest.mark.parametrize("per, near", [(32, True), (32, False), (5, True)])
def test_tensor_inputs_agree_with_scipy_either_arm(per, near):
    rng = np.random.default_rng(per)
    A = _rows(600, per, near, rng)
    x = rng.random(600)
    for tuning in (ON, ON.with_(walk_chains=False)):
        kern = ep.compile(SPMV, formats={"A": "csr"}, tuning=tuning)
        np.testing.assert_allclose(kern(A=ep.Tensor.from_scipy(A), x=x), A @ x, rtol=1e-12)
        np.testing.assert_allclose(kern(A=A, x=x), A @ x, rtol=1e-12)
