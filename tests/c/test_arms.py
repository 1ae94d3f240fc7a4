"""A kernel compiled once per value of its split condition (etchpy/c/arms.py,
imp.If.split): each If marked split on a condition of the parameters alone is
folded to the arm a value picks, every other read of the condition to the
constant, and the C holds the two programs as functions of their own, the
exported one picking by the condition. The checked SpMV's long-rows test is
such a condition: short and long rows give scipy's answer and refuse bad
coordinates through either function, the exported C compiles warning-free,
and a kernel with nothing split is written as one function."""
import shutil
import subprocess
from types import SimpleNamespace

import numpy as np
import pytest
import scipy.sparse as sp

import etchpy as ep
from etchpy import imp
from etchpy.c import arms
from etchpy.errors import InputError
from tuned import INTEL_FACTS

pytestmark = pytest.mark.usefixtures("shared_cache")
TEXT = "y[i] = A[i, j] * x[j]"
LONG = ep.Tuning(**{**INTEL_FACTS, "check_first_from": 20, "walk_chain_count": 2})


def _program(body, *names):
    """What split_cond reads of a program: its parameters and its body."""
    return SimpleNamespace(params=tuple(imp.Param(n, "dim", "index", "") for n in names), body=body)


def test_folded_takes_the_arm_and_the_constant():
    cond = imp.Bin("<=", imp.Var("n"), imp.Var("m"))
    then, other = imp.Assign("a", imp.Const(1)), imp.Assign("a", imp.Const(2))
    body = imp.seq(imp.Decl("p", "index", imp.Select(cond, imp.Const(0), imp.Var("m"))),
                   imp.If(cond, then, other, split=True), imp.If(cond, other))
    yes, no = arms.folded(body, cond, True), arms.folded(body, cond, False)
    assert imp.Block(then) in yes.stmts and imp.Block(other) in no.stmts
    assert not any(isinstance(u, imp.If) and u.split for u in imp.statements(yes))
    assert imp.Select(imp.Const(True, "bool"), imp.Const(0), imp.Var("m")) in imp.subterms(yes)
    assert imp.If(imp.Const(False, "bool"), other) in no.stmts     # (not split: C folds it)
    for v in (True, False):                    # the interpreter: each arm as the If does
        for n, m in ((1, 2), (3, 2)):
            m1 = imp.Machine(ep.semirings.get("real"), {"n": n, "m": m, "a": 0})
            m2 = imp.Machine(ep.semirings.get("real"), {"n": n, "m": m, "a": 0})
            if (n <= m) == v:
                m1.exec(body), m2.exec(arms.folded(body, cond, v))
                assert m1.env["a"] == m2.env["a"] and m1.env["p"] == m2.env["p"]


def test_only_a_condition_of_the_parameters_splits():
    cond = imp.Bin("<=", imp.Var("n"), imp.Var("m"))
    body = imp.If(cond, imp.Assign("a", imp.Const(1)), split=True)
    assert arms.split_cond(_program(body, "n", "m")) == cond
    assert arms.split_cond(_program(body, "n")) is None        # m: no parameter
    threads = imp.seq(body, imp.ParallelFor("r", imp.Const(0), imp.Var("n"), imp.SKIP, 2))
    assert arms.split_cond(_program(threads, "n", "m")) is None


def _checked_c(tuning, idx="int32_t") -> str:
    kern = ep.compile(TEXT, formats={"A": "csr"}, tuning=tuning)
    return kern.source(idx).c


def test_the_checked_spmv_is_two_functions_and_a_pick():
    src = _checked_c(LONG)
    zero = src[src.index("static EP_ARM int etchpy_kernel_arm0("):]
    zero, one = zero[:zero.index("\n}\n")], src[src.index("static EP_ARM int etchpy_kernel_arm1("):]
    assert src.index("etchpy_kernel_arm0(") < src.index("etchpy_kernel_arm1(")    # the false one first
    assert "_chain" in one and "_chain" not in zero
    pick = src[src.index("int etchpy_kernel("):]
    assert "return (((20 * A_dim0) <= A_pos1[A_dim0])) ? etchpy_kernel_arm1(" in pick
    assert "_arm" not in _checked_c(LONG.with_(check_first_from=0))


@pytest.mark.skipif(shutil.which("gcc") is None, reason="needs gcc")
def test_the_split_c_compiles_without_warnings(tmp_path):
    for idx in ("int32_t", "int64_t"):
        path = tmp_path / f"k_{idx}.c"
        path.write_text(_checked_c(LONG, idx))
        subprocess.run(["gcc", "-std=c99", "-Wall", "-Wextra", "-Werror", "-c", str(path),
                        "-o", str(tmp_path / "k.o")], check=True, capture_output=True, text=True)


def _rows(lengths, cols=50, seed=2):
    rng = np.random.default_rng(seed)
    crd = np.concatenate([np.sort(rng.choice(cols, k, replace=False)) for k in lengths])
    pos = np.r_[0, np.cumsum(lengths)]
    return sp.csr_array((rng.random(pos[-1]) + 0.5, crd.astype(np.int32), pos), (len(lengths), cols))


@pytest.mark.parametrize("lengths", [[4] * 30, [25] * 30, [0, 40, 3, 30, 25, 22] * 5])
def test_either_function_answers_or_refuses(lengths):
    kern = ep.compile(TEXT, formats={"A": "csr"}, tuning=LONG)
    A, x = _rows(lengths), np.arange(50) % 7 + 1.0
    np.testing.assert_allclose(kern(A=A, x=x), A @ x)
    row = int(np.argmax(np.diff(A.indptr)))
    for bad in (-1, 50):
        B = A.copy()
        B.indices[B.indptr[row] + 1] = bad
        with pytest.raises(InputError, match="A"):
            kern(A=B, x=x)
    B = A.copy()
    B.indptr[row + 1] = B.indptr[row] - 1                 # a row pointer going back
    with pytest.raises(InputError, match="A"):
        kern(A=B, x=x)


def test_two_long_levels_split_on_the_first_and_keep_the_second_if():
    """A chain of two csr SpMVs (two levels with a long-rows test each): the
    kernel splits on one test; the other's If, in both functions, still makes its
    near pick (declared before the functions) and answers as scipy."""
    i, j, k = ep.indices("i j k")
    A, B, x = ep.tensor("A", 2, "csr"), ep.tensor("B", 2, "csr"), ep.tensor("x", 1)
    kern = ep.compile(ep.sum(j, A[i, j] * ep.sum(k, B[j, k] * x[k])), tuning=LONG)
    M, N = _rows([25, 3, 40, 0, 22] * 10), _rows([4, 30, 21] * 16 + [5, 6], cols=50, seed=4)
    v = np.arange(50) % 5 + 1.0
    np.testing.assert_allclose(kern(A=M, B=N, x=v), M @ (N @ v))
    assert "ep_near_pick" in kern.source("int32_t").c
