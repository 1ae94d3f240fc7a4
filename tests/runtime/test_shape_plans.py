"""Implicit tensors made from shapes on the call plans (runtime.shape_steps): a
diagonal's δ, an index comparison and a range of constant bounds are bound by a
plan from the call's shapes, so a kernel reading them keeps a plan like any
other; each call, whatever its sizes, equals the reference, and a call the plan does not cover
(δ's modes of unequal sizes, another size class) goes to the general path,
which words the error."""
import numpy as np
import pytest
import scipy.sparse as sp

import etchpy as ep
from etchpy.errors import InputError
from etchpy.runtime import binder
from etchpy.runtime.call_plans import MISS
from etchpy.runtime.shape_steps import ShapeStep, shape_made

pytestmark = pytest.mark.usefixtures("shared_cache")
# names the generated code uses among them
i, j, row, pos = ep.indices("i j row pos")


def reference(e, **inputs):
    return ep.evaluate(e, backend="reference", **inputs)


def _steps(kern, in_c=False):
    """Whether the plan `kern` tries first binds a shape-made tensor: made by the C
    binder where it runs (`in_c`: its plan reads the call's inputs by name), else
    as a ShapeStep of the Python plan (its closure's namespace)."""
    plan = kern._plan
    if in_c and binder.module() is not None:
        return plan.func is binder.module().call and plan.windows
    space = plan.__globals__
    return any(k.startswith("step") and type(v) is ShapeStep for k, v in space.items())


def matrices(rng, n, fmt):
    M = sp.random_array((n, n), density=0.3, format="csr", random_state=rng)
    M = M + sp.eye_array(n, format="csr") * rng.random()     # a diagonal, mostly stored
    return {"csr": M.tocsr(), "csc": M.tocsc(), "dense": M.toarray(),
            "tensor": ep.Tensor.from_scipy(M.tocsr(), "csr")}[fmt]


@pytest.mark.parametrize("in_c", [True, False])
@pytest.mark.parametrize("fmt", ["csr", "csc", "dense", "tensor"])
def test_diagonal_kernels_run_by_a_plan_and_equal_the_reference(fmt, in_c):
    A, x = ep.tensor("A", 2, "csr" if fmt == "tensor" else fmt), ep.tensor("x", 1)
    exprs = [A[row, row], ep.sum(row, A[row, row] * x[row]), ep.sum(row, A[row, row])]
    rng = np.random.default_rng(1)
    for e in exprs:
        kern = ep.compile(e, tuning={"call_binder": in_c})
        for n in (9, 12, 15, 9, 40, 33):        # new matrices, two size classes
            inputs = {"A": matrices(rng, n, fmt), "x": rng.random(n)}
            inputs = {k: v for k, v in inputs.items() if k in kern._users}
            want = reference(e, **inputs)
            np.testing.assert_allclose(kern(**inputs), want, rtol=1e-12)
            planned = kern._by_plan(inputs)
            assert planned is not MISS, f"{e}: the plan missed a call of its kind"
            np.testing.assert_allclose(planned, want, rtol=1e-12)
        assert _steps(kern, in_c), f"{e}: its δ was not bound by the plan"


@pytest.mark.parametrize("in_c", [True, False])
def test_a_plan_misses_a_rectangular_matrix_and_the_general_path_names_it(in_c):
    A = ep.tensor("A", 2, "csr")
    kern = ep.compile(A[i, i], tuning={"call_binder": in_c})
    M = sp.random_array((8, 8), density=0.5, format="csr", random_state=3)
    kern(A=M)
    kern(A=M)
    assert kern._plans and _steps(kern, in_c)
    R = sp.random_array((8, 9), density=0.5, format="csr", random_state=3)
    assert kern._plan({"A": R}) is MISS
    with pytest.raises(InputError, match="A repeats an index"):
        kern(A=R)
    np.testing.assert_allclose(kern(A=M), M.diagonal())


@pytest.mark.parametrize("in_c", [True, False])
@pytest.mark.parametrize("op", ["<", "<=", ">", ">="])
def test_index_comparison_kernels_run_by_a_plan_and_equal_the_reference(op, in_c):
    """`Σ_pos A[row,pos]·[pos op row + d]·x[pos]`: a triangle's product (Gauss-Seidel's
    split), new x and new scipy matrices of several sizes each call."""
    A, x = ep.tensor("A", 2, "csr"), ep.tensor("x", 1)
    rng = np.random.default_rng(2)
    for d in (0, -1, 2):
        test = {"<": pos < row + d, "<=": pos <= row + d, ">": pos > row + d,
                ">=": pos >= row + d}[op] if d else {"<": pos < row, "<=": pos <= row,
                                                     ">": pos > row, ">=": pos >= row}[op]
        e = ep.sum(pos, A[row, pos] * test * x[pos])
        kern = ep.compile(e, tuning={"call_binder": in_c})
        for n, m in ((10, 10), (12, 14), (20, 17), (10, 10)):
            M = sp.random_array((n, m), density=0.4, format="csr", random_state=rng)
            inputs = {"A": M, "x": rng.random(m)}
            want = reference(e, **inputs)
            np.testing.assert_allclose(kern(**inputs), want, rtol=1e-12)
            planned = kern._by_plan(inputs)
            assert planned is not MISS
            np.testing.assert_allclose(planned, want, rtol=1e-12)
        assert _steps(kern, in_c)


@pytest.mark.parametrize("in_c", [True, False])
def test_comparison_sizes_come_from_the_inputs_of_each_index(in_c):
    """[i < j] with i read off A's rows and j off x: a plan's dims follow each call."""
    A, x = ep.tensor("A", 1), ep.tensor("x", 1)
    e = ep.sum(j, A[i] * (i < j) * x[j])
    kern = ep.compile(e, tuning={"call_binder": in_c})
    rng = np.random.default_rng(4)
    for n, m in ((5, 7), (6, 6), (7, 5), (5, 7)):
        inputs = {"A": rng.random(n), "x": rng.random(m)}
        np.testing.assert_allclose(kern(**inputs), reference(e, **inputs), rtol=1e-12)
        np.testing.assert_allclose(kern._by_plan(inputs), reference(e, **inputs), rtol=1e-12)
    assert kern._plans and _steps(kern, in_c)


@pytest.mark.parametrize("fmt", ["csr", "csc", "dense"])
def test_ranges_of_constant_bounds_run_by_a_plan_and_equal_the_reference(fmt):
    """`[pos < 5]`, `[pos >= 3]`, `2 <= pos < 7`, a float bound, bounds past the size
    or empty, a product of two: the range is made from its index's size (each
    call's), so new matrices of other sizes keep the plan, in two semirings."""
    A, x = ep.tensor("A", 2, fmt), ep.tensor("x", 1)
    rng = np.random.default_rng(5)
    tests = [pos < 5, pos >= 3, ep.between(pos, 2, 7), pos < 2.5, pos < 10 ** 12,
             pos > 100, ep.between(pos, 4, 2), (pos < 3) * (pos >= 1)]
    for test in tests:
        e = ep.sum(pos, A[row, pos] * test * x[pos])
        for sr in ("real", "min_plus"):
            kern = ep.compile(e, semiring=sr)
            for n, m in ((8, 8), (9, 12), (20, 6), (8, 8)):
                M = sp.random_array((n, m), density=0.5, format="csr", random_state=rng)
                M = {"csr": M.tocsr(), "csc": M.tocsc(), "dense": M.toarray()}[fmt]
                inputs = {"A": M, "x": rng.random(m)}
                want = ep.evaluate(e, backend="reference", semiring=sr, **inputs)
                np.testing.assert_allclose(kern(**inputs), want, rtol=1e-12)
                planned = kern._by_plan(inputs)
                assert planned is not MISS, f"{e}: the plan missed a call of its kind"
                np.testing.assert_allclose(planned, want, rtol=1e-12)
            assert _steps(kern), f"{e}: its range was not a plan step"


def test_ranges_of_parameters_run_by_a_plan_and_bad_bounds_are_named():
    """`lo <= pos < hi` with lo, hi passed each call (Python and numpy ints and
    floats, open and empty): the plan keeps the last (size, bounds); a bound that
    is no number (bool, None, NaN, a string, an array) or missing is the general
    path's InputError, before and after a plan was made."""
    A, x = ep.tensor("A", 2, "csr"), ep.tensor("x", 1)
    e = ep.sum(pos, A[row, pos] * ep.between(pos, "lo", "hi") * x[pos])
    kern = ep.compile(e)
    rng = np.random.default_rng(6)
    for n, m, lo, hi in ((8, 8, 2, 5), (8, 8, 3, 7), (9, 12, 0, 100), (9, 12, np.int64(4), 2.5),
                         (8, 8, -5, np.float64(3.5)), (8, 8, 2, 5), (8, 8, 2, 2 ** 70)):
        M = sp.random_array((n, m), density=0.5, format="csr", random_state=rng)
        inputs = {"A": M.tocsr(), "x": rng.random(m), "lo": lo, "hi": hi}
        want = reference(e, **inputs)
        np.testing.assert_allclose(kern(**inputs), want, rtol=1e-12)
        planned = kern._by_plan(inputs)
        assert planned is not MISS, f"bounds {lo!r}, {hi!r}: the plan missed"
        np.testing.assert_allclose(planned, want, rtol=1e-12)
    assert _steps(kern)
    for lo in (True, None, np.nan, "a", np.array(2)):
        inputs = {"A": M.tocsr(), "x": rng.random(8), "lo": lo, "hi": 5}
        if type(lo) is np.ndarray:      # one number in an array: read as that number
            np.testing.assert_allclose(kern(**inputs), reference(e, **inputs), rtol=1e-12)
            continue
        with pytest.raises(InputError, match="parameter lo"):
            kern(**inputs)
    with pytest.raises(InputError, match="missing parameter|parameters hi"):
        kern(A=M.tocsr(), x=rng.random(8), lo=2)


def test_value_predicates_stay_off_the_shape_steps():
    A, x = ep.tensor("A", 2, "csr"), ep.tensor("x", 1)
    assert any(shape_made(tv) for tv in ep.compile(A[i, i]).tensors.values())
    assert any(shape_made(tv) for tv in ep.compile(A[i, j] * (j < "hi")).tensors.values())
    valued = ep.sum(j, A[i, j] * (A[i, j] > 0.5) * x[j])
    kern = ep.compile(valued)
    assert not any(shape_made(tv) for tv in kern.tensors.values())
