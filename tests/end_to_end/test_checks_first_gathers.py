"""Near rows whose walks gather two or more arrays at a coordinate, a value test of
the walk's values counted as one, checked before each block
(Tuning.check_first_gathers; lower.schedule.checks_first.gathers):
`Σ_j A[i,j]·(x[j] + y[j])` and `Σ_j [A[i,j] <= t]·x[j]` with a scipy csr A read A's
coordinates unclamped after its block's pass, where one gather (an SpMV's) keeps
the clamp; both builds
answer as scipy does and refuse a bad coordinate (negative, the dimension, far
past it) in any block, a row pointer going back, with an InputError naming A;
unsorted and repeated coordinates sum as scipy's; the knob at 0 restores the
clamp (proofs_notes/validation.md, "Coordinates checked before a block")."""
import numpy as np
import pytest
import scipy.sparse as sp

import etchpy as ep
from checked_rows import rows_of
from etchpy import imp
from etchpy.errors import InputError

pytestmark = pytest.mark.usefixtures("shared_cache")
# names the generated code uses among them
row, pos = ep.indices("row pos")
A, x, y = ep.tensor("A", 2, "csr"), ep.tensor("x", 1), ep.tensor("y", 1)
TWO = ep.sum(pos, A[row, pos] * (x[pos] + y[pos]))
BASE = {"check_first_block": 4, "check_first_from": 0}   # near rows clamped by their mean: never


def _names(prog, part):
    return [n.name for n in imp.statements(prog.body) if isinstance(n, imp.Decl)
            and part in n.name]


@pytest.mark.parametrize("most", [2, 0])
def test_two_gathers_are_checked_first_and_answer_or_refuse(most):
    kern = ep.compile(TWO, tuning={**BASE, "check_first_gathers": most})
    checked = kern.compiled.checked
    assert bool(_names(checked, "_fmax")) == bool(most)
    assert bool(_names(checked, "_at")) != bool(most)
    for length in (3, 9):
        M = rows_of(length, cols=60)
        u, v = np.arange(60) % 7 + 1.0, np.arange(60) % 3 - 1.0
        np.testing.assert_allclose(kern(A=M, x=u, y=v), M @ (u + v))
        for r in (0, 21, 39):
            for bad in (-5, 60, 10**6):
                R = M.copy()
                R.indices[R.indptr[r] + length // 2] = bad
                with pytest.raises(InputError, match="A"):
                    kern(A=R, x=u, y=v)
        P = M.copy()
        P.indptr[20] = P.indptr[22]
        with pytest.raises(InputError, match="A"):
            kern(A=P, x=u, y=v)
        U = M.copy()
        U.indices[U.indptr[5]:U.indptr[6]] = U.indices[U.indptr[5]:U.indptr[6]][::-1].copy()
        U.indices[U.indptr[9] + 1] = U.indices[U.indptr[9]]
        np.testing.assert_allclose(kern(A=U, x=u, y=v), U.toarray() @ (u + v))


def test_one_gather_keeps_its_clamp():
    kern = ep.compile(ep.sum(pos, A[row, pos] * x[pos]),
                      tuning={**BASE, "gather_sums": False, "check_first_gathers": 2})
    assert _names(kern.compiled.checked, "_at")


@pytest.mark.parametrize("most", [2, 0])
def test_a_tested_walk_is_checked_first_and_answers_or_refuses(most):
    """[A <= t]·x: one gather and a test of the walk's values; its plan binds A for
    the kernel's own checks (runtime.value_steps), so every call goes through them."""
    e = ep.sum(pos, (A[row, pos] <= "t") * x[pos])
    kern = ep.compile(e, tuning={**BASE, "check_first_gathers": most})
    assert bool(_names(kern.compiled.checked, "_fmax")) == bool(most)
    M, u = rows_of(5, cols=60), np.arange(60) % 7 + 1.0
    want = sp.csr_array(((M.data <= 0.9).astype(float), M.indices, M.indptr),
                        shape=M.shape) @ u
    for _ in range(3):                                  # the general path, then the plan
        np.testing.assert_allclose(kern(A=M, x=u, t=0.9), want)
    for r in (0, 21, 39):
        R = M.copy()
        R.indices[R.indptr[r] + 2] = 60
        with pytest.raises(InputError, match="A"):
            kern(A=R, x=u, t=0.9)
