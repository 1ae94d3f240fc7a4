"""Threads only for work that pays (lower.schedule.thread_work): a split loop
runs on its threads only where its estimated work reaches
tuning.thread_min_work, and the same blocks otherwise, so results agree."""
import numpy as np
import pytest
import scipy.sparse as sp

import etchpy as ep
from etchpy import imp
from etchpy.lower.schedule import thread_work

SPMV = "y[i] = A[i, j] * x[j]"


def _matrix(n, per_row=5, seed=0):
    return sp.random_array((n, n), density=per_row / n, format="csr", random_state=seed)


def test_a_split_loop_branches_on_its_work_and_not_when_off():
    on = ep.compile(SPMV, formats={"A": "csr"}, threads=2, tuning=ep.Tuning(thread_min_work=777))
    off = ep.compile(SPMV, formats={"A": "csr"}, threads=2, tuning=ep.Tuning(thread_min_work=0))
    on(A=_matrix(50), x=np.ones(50))
    off(A=_matrix(50), x=np.ones(50))
    assert ">= 777)) {" in on.c_source and "A_pos1[A_dim0]" in on.c_source
    assert "} else {" in on.c_source
    assert " >= " not in "".join(ln for ln in off.c_source.splitlines() if "omp" in ln)
    assert ">= 777" not in off.c_source


@pytest.mark.parametrize("n", [40, 4000])
def test_both_sides_of_the_threshold_give_the_threaded_answer(n):
    """A full reduction's partials are the same blocks either way: the sums are
    equal to the last bit, below and above the threshold."""
    A, x = _matrix(n, seed=n), np.random.default_rng(n).random(n)
    expr = "s[] = A[i, j] * x[j]"
    serial = ep.compile(expr, formats={"A": "csr"}, threads=2,
                        tuning=ep.Tuning(thread_min_work=1 << 40))
    split = ep.compile(expr, formats={"A": "csr"}, threads=2, tuning=ep.Tuning(thread_min_work=0))
    a, b = serial(A=A, x=x), split(A=A, x=x)
    assert np.asarray(a) == np.asarray(b)
    assert np.isclose(float(np.asarray(a)), (A @ x).sum())


def test_bad_input_is_caught_on_the_serial_side():
    A = _matrix(30)
    A.indices[3] = 10_000                       # out of range
    kern = ep.compile(SPMV, formats={"A": "csr"}, threads=2)
    with pytest.raises(ep.InputError, match="A"):
        kern(A=A, x=np.ones(30))


def test_the_estimate_multiplies_nested_loops_and_reads_only_parameters():
    """A dense nest's estimate is the product of its loops' bounds (capped)."""
    i, j = imp.Var("i"), imp.Var("j")
    step = imp.Assign("j", imp.Bin("+", j, imp.Const(1)))
    inner = imp.While(imp.Bin("<", j, imp.Var("dim_j")), step)
    body = imp.Seq((imp.Decl("j", "index", imp.Const(0)), inner))
    loop = imp.ParallelFor("i", imp.Const(0), imp.Var("dim_i"), body, 2)
    work = thread_work._work(loop.body, {"dim_i", "dim_j"}, thread_work.inner(loop), 3)
    env = {"dim_j": 7}
    assert imp.show(work).count("dim_j") == 1
    assert _eval(work, env) == 7
    triangular = imp.While(imp.Bin("<", j, i), step)
    loop2 = imp.ParallelFor("i", imp.Const(0), imp.Var("dim_i"), triangular, 2)
    assert thread_work._work(loop2.body, set(), thread_work.inner(loop2), 3) == imp.Const(1)


def _eval(e, env):
    match e:
        case imp.Const(v):
            return v
        case imp.Var(n):
            return env[n]
        case imp.Bin(op, a, b):
            a, b = _eval(a, env), _eval(b, env)
            ops = {"+": lambda: a + b, "*": lambda: a * b, "min": lambda: min(a, b),
                   "max": lambda: max(a, b), "/": lambda: a // b}
            return ops[op]()
    raise AssertionError(e)


def test_a_unions_steps_count_its_walked_segments():
    """A union's phase loops (streams.merged.Stepped) count the mean segments of
    the operands they walk, so a large A + B still splits."""
    kern = ep.compile("C[i, j] = A[i, j] + B[i, j]", formats={"A": "csr", "B": "csr"},
                      output="csr", threads=2, tuning=ep.Tuning(thread_min_work=777))
    A = _matrix(60, seed=1)
    assert abs(kern(A=A, B=_matrix(60, seed=2)) - (A + _matrix(60, seed=2))).max() < 1e-12
    tests = [ln for ln in kern.c_source.splitlines() if ">= 777" in ln]
    assert any("A_pos1[A_dim0]" in ln and "B_pos1[B_dim0]" in ln for ln in tests)


def test_the_inputs_stored_values_are_a_floor_of_the_estimate():
    """A compressed level under another is a loop the estimate cannot count; the
    values the inputs store are a floor (a csf MTTKRP's nonzeros split it)."""
    i, j, k, r = ep.indices("i j k r")
    B, C, D = ep.tensor("B", 3, "csf"), ep.tensor("C", 2), ep.tensor("D", 2)
    kern = ep.compile(ep.sum((j, k), B[i, j, k] * C[j, r] * D[k, r]), threads=2,
                      tuning=ep.Tuning(thread_min_work=777))
    rng = np.random.default_rng(3)
    dense = rng.random((6, 5, 4)) * (rng.random((6, 5, 4)) < 0.3)
    Bt, Cv, Dv = ep.Tensor.from_dense(dense, "csf"), rng.random((5, 3)), rng.random((4, 3))
    np.testing.assert_allclose(kern(B=Bt, C=Cv, D=Dv), np.einsum("ijk,jr,kr->ir", dense, Cv, Dv))
    test, = [ln for ln in kern.c_source.splitlines() if ">= 777" in ln][:1]
    assert "B_pos2[B_pos1[B_pos0[1]]]" in test and "C_dim0 * C_dim1" in test


def test_check_backends_takes_threads_none_and_splits_with_threads():
    """etchpy.testing.check_backends: threads=None is the default (one thread);
    threads=2 splits even a small loop (thread_min_work 0), so the threaded C runs."""
    from etchpy.testing import check_backends
    i, j = ep.indices("i j")
    A, x = ep.tensor("A", 2), ep.tensor("x", 1)
    inputs = {"A": np.arange(12.0).reshape(3, 4), "x": np.ones(4)}
    for threads in (None, 2):
        want = check_backends(ep.sum(j, A[i, j] * x[j]), inputs, backends=("c",), threads=threads)
        np.testing.assert_allclose(want, inputs["A"].sum(axis=1))
