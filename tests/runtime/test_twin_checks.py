"""One scipy matrix passed as two operands is checked once (Tuning.check_twins_once,
proofs_notes/validation.md): in C = Σ_k A[i,k]·B[k,j], A is checked in full before
the call and B by the kernel's fused checks; when B reads A's index arrays (the same
object twice, or two csr objects over the same arrays) the build without fused
checks runs, chosen per call by the arrays' addresses in the general path, the
Python plan and the C binder alike. Other arrays are still checked (a bad B gives
InputError naming B even after a call on twins made the plan); a bad matrix
passed twice gives InputError; answers equal the dense reference."""
from types import SimpleNamespace

import cffi
import numpy as np
import pytest
import scipy.sparse as sp

import etchpy as ep
from etchpy.runtime import calling, twins

pytestmark = pytest.mark.usefixtures("shared_cache")

MUL = "C[i, j] = A[i, k] * B[k, j]"     # test_grown_binder's kernel (a build shared)
CSR = {"A": "csr", "B": "csr"}


def _matrix(n=40, seed=3):
    return sp.csr_array(sp.random_array((n, n), density=0.1, format="csr",
                                        random_state=seed) + sp.eye_array(n))


def _routes():
    """The kernel (its plans made by the C binder, else in Python: the text's choice
    is test_the_python_plan_chooses_by_the_arrays_addresses), its plans dropped
    first; the general path runs the first call of each kind, and every call a
    plan misses (a build it does not hold yet). (One tuning: two builds.)"""
    for route, tuning in (("binder", {}),):
        kern = ep.compile(MUL, output="csr", formats=CSR, tuning=tuning)
        for k in (kern, *kern._variants.values()):
            k._plans.clear()
            k._unplanned.clear()
            k._plan, k._plan_first, k._first = None, False, None
        yield route, kern


def _runner(kern):
    return next(iter(kern._variants.values()), kern)


def test_twins_run_the_trusted_build_and_answer_as_the_dense_reference():
    M = _matrix()
    other = sp.csr_array((M.data.copy(), M.indices, M.indptr), shape=M.shape)
    copy = M.copy()
    want = M.toarray() @ M.toarray()
    for route, kern in _routes():
        for B in (copy, M, other, copy, M, other):     # a plan made, then each case
            np.testing.assert_allclose(kern(A=M, B=B).toarray(), want, rtol=1e-12)
        assert calling.TRUSTED in repr(kern)
        assert _runner(kern)._plan is not None


def test_a_bad_operand_with_its_own_arrays_is_still_checked():
    M = _matrix()
    for _, kern in _routes():
        for _ in range(2):
            kern(A=M, B=M)                        # twins: the plan has both builds
            bad = M.copy()
            bad.indices[3] = M.shape[1] + 2       # out of range: only B's checks see it
            with pytest.raises(ep.InputError, match="tensor 'B'"):
                kern(A=M, B=bad)


def test_a_bad_matrix_passed_twice_is_refused():
    M = _matrix()
    for _, kern in _routes():
        kern(A=M, B=M)
        bad = M.copy()
        bad.indices[3] = M.shape[1] + 2
        with pytest.raises(ep.InputError, match="tensor 'A'"):
            kern(A=bad, B=bad)


def test_variant_counts_a_twin_as_checked_only_over_the_same_arrays():
    M = _matrix()
    a = calling.Bound(M.shape, {"pos1": M.indptr, "crd1": M.indices, "vals": M.data}, True)
    b = calling.Bound(M.shape, dict(a.roles), True, unchecked=True)
    c = calling.Bound(M.shape, {**a.roles, "crd1": M.indices.copy()}, True, unchecked=True)
    t = calling.Bound((41, 40), dict(a.roles), True, unchecked=True)
    on = {"A", "B"}
    assert calling.variant("i32", {"A": a, "B": b}, {"B"}, on) == "i32" + calling.TRUSTED
    assert calling.variant("i32", {"A": a, "B": b}, {"B"}, ()) == "i32"       # knob off
    assert calling.variant("i32", {"A": a, "B": b}, {"B"}, {"B"}) == "i32"    # A a window
    assert calling.variant("i32", {"A": a, "B": c}, {"B"}, on) == "i32"       # a copy
    assert calling.variant("i32", {"A": a, "B": t}, {"B"}, on) == "i32"       # shape


def test_a_plan_made_on_twins_alone_leaves_other_arrays_to_the_general_path():
    M, copy = _matrix(), _matrix()
    want = M.toarray() @ copy.toarray()
    for route, kern in _routes():
        kern(A=M, B=M)
        runner = _runner(kern)
        runner._entries.clear()              # as in a fresh process: no build resolved
        runner._plans.clear()
        runner._plan = runner._first = None
        kern(A=M, B=M)                       # the plan knows the trusted build alone
        assert [key.endswith(calling.TRUSTED) for key in runner._entries] == [True]
        for _ in range(2):                   # a MISS, then a plan with both builds
            np.testing.assert_allclose(kern(A=M, B=copy).toarray(), want, rtol=1e-12)
            np.testing.assert_allclose(kern(A=M, B=M).toarray(), M.toarray() @ M.toarray(),
                                       rtol=1e-12)
        assert len(runner._entries) == 2


def test_each_build_frees_the_arrays_it_made():
    """A plan holds each build beside the library it comes from (binder.plan_for's
    keeps: the default build, its library, the trusted build, its library), and a
    grown output is freed by the library of the build that ran: a mapped block
    goes back to that library's spares. A plan made on a twins call (the trusted
    build ran) once held the checked build beside the trusted library, whose free
    then took the checked build's arrays: every later call of the checked build
    mapped fresh pages (SpGEMM 1.5-2x slower after one call on one matrix twice)."""
    M, copy = _matrix(), _matrix()
    for route, kern in _routes():
        for B in (M, copy, M, copy, M):        # plans made on twins and on others
            np.testing.assert_allclose(kern(A=M, B=B).toarray(), M.toarray() @ B.toarray(),
                                       rtol=1e-12)
        runner, seen = _runner(kern), set()
        for plan in (p for plans in runner._plans.values() for p in plans):
            if hasattr(plan, "keeps"):      # the C binder's
                keeps = plan.keeps
                pairs = zip(keeps[::2], keeps[1::2])
            else:                           # a Python plan: its builds and their readers
                space = plan.__globals__
                pairs = [(space["function"], space["read"].lib),
                         (space["trusted"], space["read_t"].lib)]
            for fn, lib in pairs:
                if fn is None or not isinstance(fn, cffi.FFI.CData):
                    continue                # no trusted build in this plan
                own = getattr(lib.lib, runner.name)
                assert int(lib.ffi.cast("uintptr_t", fn)) == int(
                    lib.ffi.cast("uintptr_t", own)), "a build beside another's library"
                seen.add(int(lib.ffi.cast("uintptr_t", fn)))
        assert len(seen) == 2       # both builds, each beside its own library


def test_the_python_plan_chooses_by_the_arrays_addresses():
    ffi = cffi.FFI()
    steps = (("A", SimpleNamespace(at=(0, 1, 2))), ("B", SimpleNamespace(at=(3, 4, 5))))
    space = {"function": "checked"}
    text = twins.call_text(("trusted", ((0, 1, 0),)), steps, space)
    ip, ix = np.arange(5, dtype=np.int32), np.arange(4, dtype=np.int32)

    def pick(b_ip, b_ix, b_shape=(4, 4)):
        args = [ffi.from_buffer("int32_t[]", a) for a in (ip, ix, ix, b_ip, b_ix, ix)]
        return eval(text, {**space, "args": args, "s0": (4, 4), "s1": b_shape})  # noqa: S307

    assert pick(ip, ix) == "trusted"                    # new cdata, same addresses
    assert pick(ip[:], ix[:]) == "trusted"              # views of the same buffers
    assert pick(ip.copy(), ix) == "checked"
    assert pick(ip, ix.copy()) == "checked"
    assert pick(ip, ix, (4, 5)) == "checked"
