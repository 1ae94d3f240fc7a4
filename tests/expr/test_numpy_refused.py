"""Trap 2: numpy functions, ufuncs and Python's sum() on an index expression raise a
TypeError that points to ep.sum, instead of returning the expression unchanged (np.sum)
or saying "'Mul' object is not iterable" (sum). numpy scalars still mix in as literals."""
import builtins

import numpy as np
import pytest

import etchpy as ep

i, j = ep.indices("i j")
A, x = ep.tensor("A", 2), ep.tensor("x", 1)
E = A[i, j] * x[j]


@pytest.mark.parametrize("call", [
    lambda: np.sum(E), lambda: np.sum(E, axis=1), lambda: np.exp(E), lambda: np.dot(E, E),
    lambda: np.add.reduce(E), lambda: np.ones(2) * E, lambda: np.asarray([1.0]) + E,
    lambda: builtins.sum(E), lambda: list(E), lambda: np.maximum(E, 1.0),
    lambda: np.float64(2) ** E,
], ids=["np.sum", "np.sum-axis", "np.exp", "np.dot", "reduce", "array*", "array+", "sum",
        "list", "maximum", "pow"])
def test_numpy_and_iteration_are_refused_pointing_to_ep_sum(call):
    with pytest.raises(TypeError, match=r"ep\.sum\(index, expr\)") as err:
        call()
    assert "free indices here: i, j" in str(err.value)
    assert "not iterable" not in str(err.value)


def test_numpy_sum_result_shape_trap_is_gone():
    # the user's case: np.sum silently gave back the (n, n) expression
    with pytest.raises(TypeError, match="axis has no meaning"):
        np.sum(E)
    M, v = np.arange(6.0).reshape(2, 3), np.ones(3)
    np.testing.assert_allclose(ep.evaluate(ep.sum(j, E), A=M, x=v), M @ v)


def test_a_numpy_bool_on_the_left_is_a_literal_too():
    assert isinstance(np.True_ * E, ep.Expr)


@pytest.mark.parametrize("scalar", [np.float64(2), np.float32(2), np.int64(2), 2.0, 2])
def test_numpy_scalars_mix_in_on_either_side(scalar):
    M, v = np.arange(6.0).reshape(2, 3), np.ones(3)
    want = 2 * (M @ v)
    for e in (scalar * E, E * scalar):
        assert isinstance(e, ep.Expr)
        np.testing.assert_allclose(ep.evaluate(ep.sum(j, e), A=M, x=v), want)
    for e, w in ((scalar + E, 2 + M * v), (E + scalar, M * v + 2), (scalar - E, 2 - M * v),
                 (E - scalar, M * v - 2)):
        assert isinstance(e, ep.Expr)
        np.testing.assert_allclose(ep.evaluate(e, A=M, x=v, backend="reference"), w)
