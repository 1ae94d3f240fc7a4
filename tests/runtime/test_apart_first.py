"""A call plan first for ep.Tensor inputs apart (runtime.shared.apart_first,
Tuning.apart_first): a kernel that only inputs over one structure can change (A+B,
A∘B) calls its plan before working out a shared walk when the call's Tensors have
no last level array in common, checked by the probe each Tensor keeps
(shared._probe). Whatever runs, the answer is right: values written in place are
read, a Tensor whose arrays were reshaped in place is refused (InputError naming
it), Tensors over one structure still run the fused walk, and the switch off
gives the same answers (proofs_notes/shared.md, "Inputs apart, the plan first")."""
from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

import etchpy as ep
from etchpy.runtime import shared
from tuned import Counted as _Counted, relation_columns

OPS = {"A+B": ("C[i, j] = A[i, j] + B[i, j]", np.add),
       "A∘B": ("C[i, j] = A[i, j] * B[i, j]", np.multiply)}
CSR = {"A": "csr", "B": "csr"}


def _pair(seed):
    return [sp.random_array((5, 6), density=0.4, format="csr", dtype=np.float64,
                            random_state=seed + k) for k in (0, 1)]


def _dense(res):
    return res.to_dense() if isinstance(res, ep.Tensor) else res.toarray()


@pytest.mark.parametrize("op", sorted(OPS))
def test_tensors_apart_run_the_plan_first_and_read_values_written_in_place(op):
    text, ufunc = OPS[op]
    kern = ep.compile(text, output="csr", formats=CSR)
    A, B = (ep.Tensor.from_scipy(M, "csr", name=n) for M, n in zip(_pair(3), "AB"))
    np.testing.assert_allclose(_dense(kern(A=A, B=B)), ufunc(A.to_dense(), B.to_dense()))
    assert kern._walk[2] and kern._first not in (None, kern._plan)   # guarded plan first
    counted = _Counted(kern)
    for step in range(3):
        B.vals[:] = np.arange(len(B.vals)) + 10.0 * step     # written in place
        np.testing.assert_allclose(_dense(kern(A=A, B=B)), ufunc(A.to_dense(), B.to_dense()))
    assert counted.n == 0                   # the plan ran, no walk worked out
    assert shared._probe(A) is A.levels[-1]["crd"] is A.__dict__["_etchpy_probe"]
    B.vals.shape = (len(B.vals), 1)          # reshaped in place: refused, named
    with pytest.raises(ep.InputError, match="'B'.*changed in place"):
        kern(A=A, B=B)


@pytest.mark.parametrize("op", sorted(OPS))
def test_tensors_over_one_structure_still_run_the_fused_walk(op):
    """Columns of one relation share every level array: the guard sends them on to
    _one_walk, which runs the fused kernel; new Tensors apart after them run the plan
    again (the probe of each is worked out on first sight)."""
    text, ufunc = OPS[op]
    kern = ep.compile(text, output="csr", formats=CSR, tuning=ep.Tuning(one_walk_from=0))
    A, B = (ep.Tensor.from_scipy(M, "csr") for M in _pair(7))
    kern(A=A, B=B)
    a, b = relation_columns()
    counted = _Counted(kern)
    for _ in range(2):
        np.testing.assert_allclose(_dense(kern(A=a, B=b)), ufunc(a.to_dense(), b.to_dense()))
    assert counted.n == 2 and kern._walked is not None        # the fused kernel ran
    assert kern._walked is not kern
    b.vals[:] *= 3.0                          # written in place: read by the fused walk
    np.testing.assert_allclose(_dense(kern(A=a, B=b)), ufunc(a.to_dense(), b.to_dense()))
    assert counted.n == 3
    C, D = (ep.Tensor.from_scipy(M, "csr") for M in _pair(11))     # new, apart: their
    for _ in range(3):                        # probes worked out on first sight
        np.testing.assert_allclose(_dense(kern(A=C, B=D)), ufunc(C.to_dense(), D.to_dense()))
    assert counted.n == 3                     # the plan first again
    assert _dense(kern(A=C, B=C)).tolist() == ufunc(C.to_dense(), C.to_dense()).tolist()


def test_other_kinds_and_the_switch_off_give_the_same_answers():
    """A scipy input beside a Tensor, a dense-only Tensor (no level array: never
    apart), and the kernel with Tuning.apart_first off (no guard: _one_walk first on
    every Tensor call) all answer as the reference."""
    text, ufunc = OPS["A∘B"]
    on = ep.compile(text, output="csr", formats=CSR)
    off = ep.compile(text, output="csr", formats=CSR, tuning=ep.Tuning(apart_first=False))
    M, N = _pair(21)
    A, B = ep.Tensor.from_scipy(M, "csr"), ep.Tensor.from_scipy(N, "csr")
    want = ufunc(M.toarray(), N.toarray())
    for kern in (on, off):
        for inputs in ({"A": A, "B": B}, {"A": A, "B": N}, {"A": M, "B": B}, {"A": A, "B": B}):
            np.testing.assert_allclose(_dense(kern(**inputs)), want)
    assert off._first is None and on._first is not None
    dense = ep.compile("C[i, j] = A[i, j] * B[i, j]")
    X, Y = (ep.Tensor.from_dense(M.toarray(), "dense") for M in (M, N))
    for _ in range(3):
        np.testing.assert_allclose(dense(A=X, B=Y), want)
    assert shared._probe(X) is False and not shared._apart((("A", "B"),), {"A": X, "B": Y})


def test_tensors_of_two_size_classes_in_turn_run_their_plans():
    """Tensors apart of two size classes called in turn: each class keeps a plan of
    the key, and the guard of one tries the other (Kernel._by_plan) before any walk
    is worked out; the guard is made once per plan. (ep.compile may return a kernel
    an earlier test called: its plans and guards are there too.)"""
    text, ufunc = OPS["A+B"]
    kern = ep.compile(text, output="csr", formats=CSR)
    small = [ep.Tensor.from_scipy(M, "csr") for M in _pair(31)]
    big = [ep.Tensor.from_scipy(sp.random_array((40, 50), density=0.3, format="csr",
                                                random_state=s), "csr") for s in (1, 2)]
    for _ in range(2):
        for X, Y in (small, big):
            kern(A=X, B=Y)
    counted = _Counted(kern)
    guards = dict(kern._apart_guards)
    for _ in range(3):
        for X, Y in (small, big):
            np.testing.assert_allclose(_dense(kern(A=X, B=Y)), ufunc(X.to_dense(), Y.to_dense()))
    assert counted.n == 0 and kern._apart_guards == guards     # (no guard made again)
