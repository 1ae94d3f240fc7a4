"""Stacked rows (lower.schedule.stacked_rows, Tuning.stacked_rows, stacked_row_count): a
dense Σ over a leading axis into a vector adds stacked_row_count rows a pass; it
answers as numpy for every row count around the stack (0 to 9 rows, so every
remainder), for sums of products, column sums, a three-axis sum and a matrix times a
vector from the left, under real, integer and min-plus, with index names the C uses;
the switch off or a count below 2 keeps one row a pass, and rows shorter than
stacked_row_from run one a pass; loops that read what they
add into, whose stored cell moves with the row, whose width is a constant or whose
rows' bounds change are left alone; the rewritten loop run by the Imp interpreter
adds what the loop adds (proofs_notes/stacked_rows.md)."""
import numpy as np
import pytest

import etchpy as ep
from etchpy import imp
from etchpy.imp import Accum, Assign, Bin, Const, Decl, Load, Var, While, seq
from etchpy.imp.interp import Machine
from etchpy.lower.schedule import stacked_rows
from etchpy.tuning import DEFAULT

pytestmark = pytest.mark.usefixtures("shared_cache")
STACK = "rows of the Σ over"
ANY = DEFAULT.with_(stacked_row_from=0)     # rows of any length stacked
pos, row, n = ep.indices("pos row n")


def _dense(name, shape, rng, kind):
    if kind == "integer":
        return rng.integers(-5, 6, shape).astype(np.int64)
    return rng.random(shape)


@pytest.mark.parametrize("rows", range(10))
@pytest.mark.parametrize("semiring", ["real", "integer", "min_plus"])
def test_a_sum_of_products_over_the_rows_answers_as_numpy(rows, semiring):
    rng = np.random.default_rng(rows)
    a, b = (_dense(s, (rows, 13), rng, semiring) for s in "ab")
    A, B = ep.tensor("A", 2, format="dense"), ep.tensor("B", 2, format="dense")
    kern = ep.compile(ep.sum(pos, A[pos, row] * B[pos, row]), semiring=semiring, tuning=ANY)
    assert STACK in kern.c_source
    got = np.asarray(kern(A=a, B=b))
    want = (a + b).min(axis=0, initial=np.inf) if semiring == "min_plus" else (a * b).sum(axis=0)
    assert np.allclose(got, want)
    off = ep.compile(ep.sum(pos, A[pos, row] * B[pos, row]), semiring=semiring,
                     tuning=ANY.with_(stacked_rows=False))
    assert STACK not in off.c_source and np.allclose(np.asarray(off(A=a, B=b)), want)


@pytest.mark.parametrize("shape", [(5, 3, 4), (9, 2, 7), (1, 6, 6)])
def test_a_column_sum_a_three_axis_sum_and_x_times_a_matrix(shape):
    rng = np.random.default_rng(1)
    a, x = rng.random(shape[:2]), rng.random(shape[0])
    A, X = ep.tensor("A", 2, format="dense"), ep.tensor("x", 1, format="dense")
    assert np.allclose(ep.evaluate(ep.sum(n, A[n, row]), A=a, tuning=ANY), a.sum(0))
    tuning = ANY.with_(blas=False)
    xa = ep.compile(ep.sum(n, X[n] * A[n, row]), tuning=tuning)
    assert STACK in xa.c_source and np.allclose(xa(x=x, A=a), x @ a)
    t = rng.random(shape)
    T = ep.tensor("T", 3, format="dense")
    assert np.allclose(ep.evaluate(ep.sum((n, pos), T[n, pos, row]), T=t, tuning=ANY),
                       t.sum((0, 1)))


def test_the_count_decides_how_many_rows_a_pass():
    A, B = ep.tensor("A", 2, format="dense"), ep.tensor("B", 2, format="dense")
    e = ep.sum(pos, A[pos, row] * B[pos, row])
    rng = np.random.default_rng(2)
    a, b = rng.random((11, 5)), rng.random((11, 5))
    for k in (1, 2, 3, 8):
        kern = ep.compile(e, tuning=ANY.with_(stacked_row_count=k))
        assert (f"{k} {STACK}" in kern.c_source) == (k >= 2)
        assert np.allclose(kern(A=a, B=b), (a * b).sum(0))


@pytest.mark.parametrize("width", [127, 128, 300])
def test_rows_shorter_than_stacked_row_from_run_one_a_pass(width):
    """The stacked loop runs only where a row is stacked_row_from long (the default
    tuning's test, in the C); both ways answer as numpy."""
    A, B = ep.tensor("A", 2, format="dense"), ep.tensor("B", 2, format="dense")
    kern = ep.compile(ep.sum(pos, A[pos, row] * B[pos, row]))
    assert f"if ({DEFAULT.stacked_row_from} <= " in kern.c_source
    rng = np.random.default_rng(width)
    a, b = rng.random((7, width)), rng.random((7, width))
    assert np.allclose(kern(A=a, B=b), (a * b).sum(0))


def _loop(value, index=Var("j"), end=Var("m"), dim=Var("d")):
    """while (i < dim) { j := 0; while (j < end) { out[index] ⊕= value; j++ }; i++ }"""
    inner = While(Bin("<", Var("j"), end), seq(Accum("out", index, value), imp.incr("j")))
    return While(Bin("<", Var("i"), dim), seq(Assign("j", Const(0)), inner, imp.incr("i")))


ROW = Load("a", Bin("+", Var("j"), Bin("*", Var("i"), Var("m"))))


def test_the_shapes_it_takes():
    assert stacked_rows._shape(_loop(ROW)) is not None
    assert stacked_rows._shape(_loop(Bin("+", ROW, Load("out", Var("j"))))) is None  # reads out
    assert stacked_rows._shape(_loop(ROW, index=Var("i"))) is None   # the cell moves with i
    assert stacked_rows._shape(_loop(ROW, end=Const(16))) is None    # a constant width
    assert stacked_rows._shape(_loop(ROW, end=Var("i"))) is None     # the rows' bounds change
    assert stacked_rows._shape(_loop(Load("a", Var("j")))) is None   # no term reads the row
    with_decl = While(Bin("<", Var("i"), Var("d")), seq(
        Decl("i_", "index", Var("i")), Assign("j", Const(0)),
        While(Bin("<", Var("j"), Var("m")), seq(Accum("out", Var("j"), ROW), imp.incr("j"))),
        imp.incr("i")))
    assert stacked_rows._shape(with_decl) is None                    # an init reads the row


@pytest.mark.parametrize("k", [2, 3, 4])
def test_the_stacked_loop_runs_on_the_interpreter(k):
    """The stacked loop followed by the loop itself adds what the loop adds, for
    every row count from 0 to 3 stacks and a part."""
    loop = _loop(ROW)
    new = seq(stacked_rows._stacked(stacked_rows._shape(loop), k), loop)
    for d in range(3 * k + 2):
        outs = []
        for stmt in (loop, new):
            m = Machine(ep.semirings.integer, {"a": np.arange(100) * 3 - 7, "out": np.zeros(5, np.int64),
                                               "d": d, "m": 5, "i": 0, "j": 0})
            m.exec(stmt)
            outs.append((m.env["out"].copy(), m.env["i"]))
        assert np.array_equal(outs[0][0], outs[1][0]) and outs[0][1] == outs[1][1] == d
