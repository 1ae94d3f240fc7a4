"""Values a loop does not change, computed before it (lower/schedule/invariants.py,
Tuning hoist_invariants). A row's factor of a scatter (`exp(t[i]) − y[i]`, t the
kernel's temporary) is evaluated once a row, not once an entry, in both builds;
kernels answer as the reference with the pass on and off, for every semiring, index
names the generated code uses, empty rows and empty matrices; only terms evaluated
whenever the loop's first pass runs, reading nothing the loop changes, move."""
from dataclasses import replace

import numpy as np
import pytest
import scipy.sparse as sp

import etchpy as ep
from etchpy import imp
from etchpy.imp import (Accum, Assign, Bin, Const, If, Load, Ring, Select, Seq, Store, Var,
                        While)
from etchpy.lower.schedule import invariants

row, pos, n = ep.indices("row pos n")
X, w, y = ep.tensor("X", 2, format="csr"), ep.tensor("w", 1), ep.tensor("y", 1)
OFF = ep.Tuning(hoist_invariants=False)
REAL = ep.semirings.get("real")


def gradient(mapped=True):
    """Σ_row X[row,n]·(f(Σ_pos X[row,pos]·w[pos]) − y[row]), f = exp or nothing."""
    inner = ep.sum(pos, X[row, pos] * w[pos])
    return ep.sum(row, X[row, n] * ((ep.exp(inner) if mapped else inner) - y[row]))


def _maps_in_writing_loops(prog, out: str) -> int:
    """How many `exp` terms lie inside a loop whose own top statements write `out`."""
    count = 0
    for s in imp.statements(prog.body):
        if isinstance(s, While):
            top = s.body.stmts if isinstance(s.body, Seq) else (s.body,)
            if any(isinstance(t, (Store, Accum)) and t.array == out for t in top):
                count += sum(isinstance(x, Ring) and x.op == "exp"
                             for x in imp.subterms(s.body))
    return count


@pytest.mark.parametrize("checked", [False, True])
def test_a_rows_mapped_factor_is_computed_once_a_row(checked):
    def program(tuning):
        made = ep.compile(gradient(), tuning=tuning).compiled
        return (made.checked if checked else made.program), made.program.output.arrays["vals"]
    on, out = program(None)
    off, _ = program(OFF)
    assert _maps_in_writing_loops(off, out) > 0       # the entry loop evaluated exp
    assert _maps_in_writing_loops(on, out) == 0
    assert any(isinstance(s, imp.Decl) and isinstance(s.init, Ring)
               for s in imp.statements(on.body))


def _csr(rows, cols, density, seed):
    return sp.random_array((rows, cols), density=density, format="csr", random_state=seed)


@pytest.mark.parametrize("mapped", [True, False])
@pytest.mark.parametrize("shape", [(40, 30), (7, 5), (0, 4), (5, 0), (1, 1)])
@pytest.mark.parametrize("tuning", [None, OFF, "noopt", "force"])
def test_the_gradient_answers_as_numpy(mapped, shape, tuning):
    A = _csr(*shape, 0.2, 3)
    A = sp.csr_array(A.toarray() * (np.arange(shape[0]) % 3 != 1)[:, None])  # empty rows
    rng = np.random.default_rng(0)
    wv, yv = rng.standard_normal(shape[1]) / 4, rng.random(shape[0])
    t = A @ wv
    want = A.T @ ((np.exp(t) if mapped else t) - yv)
    got = ep.compile(gradient(mapped), tuning=tuning)(X=A, w=wv, y=yv)
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("name", [s.name for s in ep.semirings.all()])
def test_every_semiring_answers_as_the_reference(name):
    """Σ_row X[row,n]·(Σ_pos X[row,pos]·w[pos] ⊕ y[row]): the factor read from the
    kernel's temporary is hoisted; C and the dense reference agree."""
    sr = ep.semirings.get(name)
    e = ep.sum(row, X[row, n] * (ep.sum(pos, X[row, pos] * w[pos]) + y[row]))
    A = _csr(9, 6, 0.4, 5)
    A.data = np.arange(A.nnz) % 3 + 1.0            # small integers: every semiring's dtype
    rng = np.random.default_rng(1)
    inputs = dict(X=A, w=rng.integers(0, 3, 6).astype(np.float64),
                  y=rng.integers(0, 3, 9).astype(np.float64))
    if sr.name == "boolean":
        inputs = dict(X=A.astype(bool), w=inputs["w"] > 0, y=inputs["y"] > 0)
    prog = ep.compile(e, semiring=sr).compiled.program
    assert any(isinstance(s, imp.Decl) and s.name.startswith("row_value")
               for s in imp.statements(prog.body))
    want = ep.evaluate(e, semiring=sr, backend="reference", **inputs)
    for tuning in (None, OFF):
        got = ep.evaluate(e, semiring=sr, tuning=tuning, **inputs)
        np.testing.assert_allclose(np.asarray(got, dtype=complex), np.asarray(want, dtype=complex))


def _program_with(body):
    """A real kernel's program with `body` in place of its own (its parameters kept:
    `t` is not one of them, `x` is an input when the kernel reads it)."""
    prog = ep.compile(gradient()).compiled.program
    return replace(prog, body=body)


def _loop(*top):
    return While(Bin("<", Var("q"), Var("end")), Seq((*top, Assign("q", Bin("+", Var("q"),
                                                                           Const(1))))))


FACTOR = Ring("exp", Load("t", Var("i")), Const(0.0, "value"))


def test_the_factor_moves_under_the_loops_test():
    body = _loop(Store("o", Var("q"), Ring("mul", Load("v", Var("q")), FACTOR)))
    got = invariants.run(_program_with(body), REAL, ep.Tuning()).body
    assert isinstance(got, If) and got.cond == body.cond
    decl, loop = got.then.stmts
    assert decl.init == FACTOR and isinstance(loop, While)
    assert FACTOR not in list(imp.subterms(loop)) and Var(decl.name) in list(imp.subterms(loop))


@pytest.mark.parametrize("body", [
    # read in a select's branch: evaluated only where the test holds
    _loop(Store("o", Var("q"), Select(Bin("<", Var("q"), Const(3)), FACTOR,
                                      Const(0.0, "value")))),
    # after a statement that may leave the pass (an If)
    _loop(If(Bin("<", Var("q"), Const(3)), imp.Break()), Store("o", Var("q"), FACTOR)),
    # reads a scalar the loop assigns, an array it writes
    _loop(Store("o", Var("q"), Ring("exp", Load("t", Var("q")), Const(0.0, "value")))),
    _loop(Store("t", Var("q"), Const(1.0, "value")), Store("o", Var("q"), FACTOR)),
    # an index read from an array (a coordinate the fused checks clamp where it is read)
    _loop(Store("o", Var("q"), Ring("exp", Load("t", Load("crd", Var("i"))),
                                     Const(0.0, "value")))),
    # nothing worth a variable: a load of an input parameter only
    _loop(Store("o", Var("q"), Ring("mul", Load("X_vals", Var("i")), Load("w_vals", Var("i"))))),
])
def test_terms_that_must_or_need_not_move_stay(body):
    assert invariants.run(_program_with(body), REAL, ep.Tuning()).body == body


@pytest.mark.parametrize("where", ["indices", "indptr"])
def test_a_bad_scipy_input_is_still_refused(where):
    """The build with fused checks runs the hoisted factor's loops: a coordinate out
    of range, or rows out of order, is an InputError naming X, never a crash."""
    A = _csr(30, 20, 0.3, 7)
    k = ep.compile(gradient())
    wv, yv = np.ones(20) / 8, np.ones(30)
    np.testing.assert_allclose(k(X=A, w=wv, y=yv), A.T @ (np.exp(A @ wv) - yv))
    if where == "indices":
        A.indices[A.nnz // 2] = 20
    else:
        A.indptr[10] = A.indptr[12] + 1
    with pytest.raises(ep.InputError, match="X"):
        k(X=A, w=wv, y=yv)


@pytest.mark.parametrize("name", ["real32", "complex"])
def test_a_map_stays_where_its_c_value_is_not_the_carriers(name):
    """Under a float32 carrier exp is a double until stored, under a complex one
    cabs is real: a term with a map stays (the result's bits as with the pass off);
    its map-free part (the temporary's read) still moves."""
    sr = ep.semirings.get(name)
    inner = ep.sum(pos, X[row, pos] * w[pos])
    e = ep.sum(row, X[row, n] * (ep.exp(inner) - y[row]))
    prog = ep.compile(e, semiring=sr).compiled.program
    hoisted = [s.init for s in imp.statements(prog.body)
               if isinstance(s, imp.Decl) and s.name.startswith("row_value")]
    assert not any(isinstance(x, Ring) and x.op == "exp" for h in hoisted
                   for x in imp.subterms(h))
    A = _csr(12, 9, 0.3, 2)
    A.data = np.arange(A.nnz) % 3 * 0.25
    given = dict(X=A, w=np.arange(9) % 2 * 0.5, y=np.arange(12) % 3 * 0.5)
    on = ep.evaluate(e, semiring=sr, **given)
    np.testing.assert_array_equal(on, ep.evaluate(e, semiring=sr, tuning=OFF, **given))
