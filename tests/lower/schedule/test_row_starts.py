"""Rows' starts carried (Tuning.carry_row_start, lower.schedule.row_starts;
proofs_notes/validation.md, "Every serial row loop carries its rows' start"):
a serial loop over consecutive rows starts each row's walk where the last one
ended, in the build without fused checks (an ep.Tensor's) and in the checked
build where a block's pass over pos checked the rows' segments first. The
switch off gives the program of before; results are the reference's either way
(empty rows, csr, csc, dcsr, csf, threads), and bad scipy inputs are refused."""
import re

import numpy as np
import pytest
import scipy.sparse as sp

import etchpy as ep
from etchpy import pipeline
from etchpy.errors import InputError
from etchpy.imp import (Assign, Bin, Const, Decl, GatherSum, If, Load, Names, ParallelFor, Select,
                        Var, While, incr, lt, seq)
from etchpy.lower.schedule import fused_checks, row_starts
from tuned import INTEL

SPMV = "y[i] = A[i, j] * x[j]"
ON, OFF = ep.Tuning(), ep.Tuning(carry_row_start=False)
CHECKED = INTEL.with_(carry_checked_start=True)   # the checked build's rows carry too (the C
#                                                   of an Intel host's facts, on every host)


def c_of(kern, checked: bool) -> str:
    src = pipeline.render_c(kern.compiled, "int32_t", checked=checked).c
    return src[src.rindex("int etchpy_kernel("):]


def carries(src: str, first: str) -> str:
    """The name of the start declared as `first` (a regular expression of it)
    in src, after which the walk starts at it and leaves its end in it."""
    at = re.search(r"int64_t (i_c_from\w*) = " + first + ";", src).group(1)
    assert f"j_q = {at};" in src and f"{at} = j_q;" in src
    return at


def test_the_unchecked_scalar_rows_carry_their_start():
    """The near scalar arm after `i_c = 0` reads pos[0] once; the far arm (an
    if's arm) reads its first start only where a row runs. (check_first_from 0: no
    long rows' arm splitting the function, lower/schedule/long_chains.py.)"""
    src = c_of(ep.compile(SPMV, formats={"A": "csr"}, tuning=ON.with_(check_first_from=0)),
               checked=False)
    carries(src[src.rindex("i_c = 0;"):], re.escape("A_pos1[i_c]"))
    carries(src, re.escape("((i_c < dim_i) ? A_pos1[i_c] : 0)"))
    assert "_from" not in c_of(ep.compile(SPMV, formats={"A": "csr"}, tuning=OFF), checked=False)


def test_the_checked_rows_carry_after_their_blocks_pass():
    """row_checks=0: the near scalar rows run a block of 1024 at a time after a
    pass over pos; with carry_checked_start the block's rows carry their start
    from its first row (off by default: the checked build is the C of before)."""
    t = CHECKED.with_(row_checks=0)
    src = c_of(ep.compile(SPMV, formats={"A": "csr"}, tuning=t), checked=True)
    near = src[src.rindex("ep_min((i_c + 1024), dim_i)"):]
    carries(near, r"\(\(i_c < i_c_block\w*\) \? A_pos1\[i_c\] : 0\)")
    for off in (t.with_(carry_row_start=False), t.with_(carry_checked_start=False)):
        assert "i_c_from" not in c_of(ep.compile(SPMV, formats={"A": "csr"}, tuning=off),
                                      checked=True)


def _cases():
    i, j, k, r = ep.indices("i j k r")
    A, B = ep.tensor("A", 2, format="csr"), ep.tensor("B", 2, format="csr")
    x, T = ep.tensor("x", 1), ep.tensor("T", 3, format="csf")
    C, D = ep.tensor("C", 2), ep.tensor("D", 2)
    yield "spmv", dict(expr=ep.sum(j, A[i, j] * x[j]))
    for fmt in ("csc", "dcsr", "csf"):
        yield f"spmv {fmt}", dict(expr=ep.sum(j, ep.tensor("A", 2, format=fmt)[i, j] * x[j]))
    yield "spmv threads", dict(expr=ep.sum(j, A[i, j] * x[j]), threads=2)
    yield "spgemm rows", dict(expr=ep.sum(j, A[i, j] * B[j, k]), output="csr")
    yield "add", dict(expr=A[i, j] + B[i, j], output="csr")
    yield "mttkrp", dict(expr=ep.sum((j, k), T[i, j, k] * C[j, r] * D[k, r]))
    yield "dot rows", dict(expr=ep.sum(j, A[i, j] * B[i, j]))


@pytest.mark.parametrize("name,case", list(_cases()), ids=[n for n, _ in _cases()])
def test_the_switch_off_is_the_program_before(name, case):
    """Carried, then read from pos again (row_starts.undone, what fused_checks
    starts from): the program the switch off makes, so the checked build's
    rewrite sees what it saw before; by default (carry_checked_start off) the
    checked build is the one of before."""
    on = ep.Kernel(tuning=ON, **case).compiled
    off = ep.Kernel(tuning=OFF, **case).compiled
    assert row_starts.undone(on.program.body) == off.program.body
    assert fused_checks.fuse(on.program, OFF) == fused_checks.fuse(off.program, OFF)
    assert fused_checks.fuse(on.program, ON) == fused_checks.fuse(off.program, OFF)  # default


def matrix_with_empty_rows(n=60, seed=3):
    """A csr with rows of 0 to 9 entries, the first, the last and runs of rows
    empty, and an empty column."""
    rng = np.random.default_rng(seed)
    M = sp.random_array((n, n), density=0.08, rng=rng, format="lil")
    for row in (0, 1, 17, 18, 19, n - 1):
        M[row, :] = 0
    M[:, 5] = 0
    M = sp.csr_array(M)
    M.sort_indices()
    return M


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("fmt", ["csr", "csc", "dcsr", "csf"])
def test_answers_with_the_switch_on_and_off(fmt, threads):
    M = matrix_with_empty_rows()
    x = np.random.default_rng(4).random(M.shape[1])
    for t in (ON, OFF, CHECKED):
        kern = ep.compile(SPMV, formats={"A": fmt}, tuning=t, threads=threads)
        np.testing.assert_allclose(kern(A=ep.Tensor.from_scipy(M, fmt), x=x), M @ x)
        if fmt in ("csr", "csc"):
            scipy_in = M if fmt == "csr" else sp.csc_array(M)
            np.testing.assert_allclose(kern(A=scipy_in, x=x), M @ x)


def test_a_tensor_of_three_modes_with_empty_fibres():
    """mttkrp's loop over the (i, j) fibres of a csf carries their k segments."""
    rng = np.random.default_rng(7)
    dense = np.where(rng.random((6, 5, 8)) < 0.3, rng.random((6, 5, 8)), 0.0)
    dense[2] = 0
    dense[:, 3] = 0
    Cm, Dm = rng.random((5, 3)), rng.random((8, 3))
    want = np.einsum("ijk,jr,kr->ir", dense, Cm, Dm)
    i, j, k, r = ep.indices("i j k r")
    T, C, D = ep.tensor("T", 3, format="csf"), ep.tensor("C", 2), ep.tensor("D", 2)
    e = ep.sum((j, k), T[i, j, k] * C[j, r] * D[k, r])
    for t in (ON, OFF):
        kern = ep.compile(e, tuning=t)
        got = kern(T=ep.Tensor.from_dense(dense, "csf"), C=Cm, D=Dm)
        np.testing.assert_allclose(got, want)
    assert "_q_from = " in ep.compile(e, tuning=ON).c_source


@pytest.mark.parametrize("tuning,threads", [(CHECKED, 1), (CHECKED.with_(row_checks=0), 1),
                                            (CHECKED.with_(row_checks=0), 2)],
                         ids=["default", "blocks", "blocks threads"])
def test_bad_scipy_inputs_are_still_refused(tuning, threads):
    """The checked build's rows carry only after their block's pass over pos:
    an indptr past nnz, decreasing or negative, and a coordinate outside the
    columns give an InputError naming A; empty rows are answered."""
    one = sp.diags_array([-1.0, 2.0, -1.0], offsets=[-1, 0, 1], shape=(30, 30))
    A = sp.csr_array(sp.kronsum(one, one, format="csr"))
    A.sort_indices()
    n, nnz, x = A.shape[0], A.nnz, np.random.default_rng(5).random(A.shape[0])
    kern = ep.compile(SPMV, formats={"A": "csr"}, tuning=tuning, threads=threads)

    def spoiled(where, at, value):
        B = A.copy()
        getattr(B, where)[at] = value
        return B
    for where, at, value in [("indptr", 7, nnz + 3), ("indptr", 400, A.indptr[398]),
                             ("indptr", n - 1, A.indptr[n - 2] - 1), ("indptr", 200, -5),
                             ("indices", 0, n), ("indices", 3 * nnz // 4, -1)]:
        with pytest.raises(InputError, match="A"):
            kern(A=spoiled(where, at, value), x=x)
    for at in (1, 300, n - 1):
        B = spoiled("indptr", at, A.indptr[at - 1])
        np.testing.assert_allclose(kern(A=B, x=x), B @ x, rtol=1e-12)


def _row(*extra, step=None):
    """while (c < n) { q := P[c]; e := P[c+1]; while (q < e) {s += V[q]; q++}; c++ }"""
    c = Var("c")
    walk = While(lt(Var("q"), Var("e")),
                 seq(Assign("s", Bin("+", Var("s"), Load("V", Var("q")))), incr("q")))
    body = seq(Assign("q", Load("P", c)), Assign("e", Load("P", Bin("+", c, Const(1)))),
               *extra, walk, step or incr("c"))
    return While(lt(c, Var("n")), body)


def test_which_loops_carry():
    """After `c := 0` the start is pos[c]; elsewhere pos[c] only where a row
    runs. A loop stepping c by two, a walk under an if, a ParallelFor's
    iterations and an array that is no segment start carry nothing."""
    start = Assign("c", Const(0))
    got = row_starts.carry(seq(start, _row()), frozenset({"P"}), Names())
    assert got.stmts[1] == Decl("c_from", "index", Load("P", Var("c")))
    assert Assign("q", Var("c_from")) in got.stmts[2].body.stmts
    alone = row_starts.carry(If(Var("t"), _row()), frozenset({"P"}), Names())
    assert alone.then.stmts[0] == Decl("c_from", "index", Select(lt(Var("c"), Var("n")),
                                                                Load("P", Var("c")), Const(0)))
    for prog in (seq(start, alone.then), alone):
        assert row_starts.undone(prog) in (seq(start, _row()), If(Var("t"), _row()))
    two = _row(step=Assign("c", Bin("+", Var("c"), Const(2))))
    under_if = While(lt(Var("c"), Var("n")), seq(
        Assign("q", Load("P", Var("c"))), Assign("e", Load("P", Bin("+", Var("c"), Const(1)))),
        If(Var("t"), _row().body.stmts[2]), incr("c")))
    parallel = ParallelFor("c", Const(0), Var("n"), seq(*_row().body.stmts[:-1]), 2)
    for loop in (two, under_if, parallel):
        assert row_starts.carry(seq(start, loop), frozenset({"P"}), Names()) == seq(start, loop)
    assert row_starts.carry(seq(start, _row()), frozenset({"R"}), Names()) == seq(start, _row())


def test_arms_that_each_end_the_walk_carry():
    """A gathered sum whose fallback is the walk (its lanes leave q := e) and an
    if whose two arms each run one walk carry; an arm without the walk, or one
    that moves e too, or a guard that cuts the segment (a checked walk's
    `e := q`) does not."""
    c, walk = Var("c"), _row().body.stmts[2]
    head = [Assign("q", Load("P", c)), Assign("e", Load("P", Bin("+", c, Const(1))))]
    gather = GatherSum("s", "q", "e", "V", "K", "x", walk, "pick")

    def carried(*parts):
        return row_starts.carried(seq(*head, *parts, incr("c")), "P", c, arms=True)
    assert carried(gather) == ("q", 0, 2)
    assert carried(If(lt(Var("q"), Var("e")), walk, gather)) == ("q", 0, 2)
    assert carried(If(Var("t"), walk, Assign("s", Const(0)))) is None
    assert carried(If(Var("t"), walk, seq(walk, Assign("e", Var("q"))))) is None
    assert carried(If(Var("t"), Assign("e", Var("q"))), walk) is None
    assert row_starts.carried(seq(*head, gather, incr("c")), "P", c) is None    # arms off
