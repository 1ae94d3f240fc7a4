"""A scalar passed as a Python or numpy number (runtime.scalar_steps): the call plan
and the C binder take it as the general path binds it, answer bit for bit as a
kernel without plans does, read the new number of every call, and leave to the
general path what they do not cover (bool, ints beyond 2**53, NaN where the
semiring refuses it, other carriers)."""
import functools

import numpy as np
import pytest
import scipy.sparse as sp

import etchpy as ep
from etchpy.errors import InputError
from etchpy.runtime import binder

pytestmark = pytest.mark.usefixtures("shared_cache")

AXPY = "y[i] = c + A[i, j] * x[j]"
WAYS = {"binder": {}, "python plan": {"call_binder": False}}
NUMBERS = [0.5, -3.25, np.float64(2.5), 7, -(2**53), 2**53, float("inf")]


def _inputs(seed=0):
    A = sp.random_array((40, 30), density=0.3, format="csr", random_state=seed)
    return A, np.random.default_rng(seed).standard_normal(30)


@pytest.mark.parametrize("way", sorted(WAYS))
def test_every_number_answers_as_the_general_path_with_a_plan_taking_it(way):
    if way == "binder" and binder.module() is None:
        pytest.skip("no binder on this machine")
    kern = ep.compile(AXPY, formats={"A": "csr"}, tuning=WAYS[way])
    plain = ep.compile(AXPY, formats={"A": "csr"}, tuning={"call_plans": False})
    A, x = _inputs()
    for c in NUMBERS * 2:               # each kind twice in turn: plans kept per type
        got, want = kern(A=A, x=x, c=c), plain(A=A, x=x, c=c)
        np.testing.assert_array_equal(got, want)
        np.testing.assert_allclose(got, A @ x + float(c), rtol=1e-13)
        assert kern._plans[(*"Axc", sp.csr_array, np.ndarray, type(c))]
        assert (type(kern._plan) is functools.partial) == (way == "binder")   # in C


def _outcome(kern, **inputs):
    try:
        return kern(**inputs)
    except InputError as err:
        return str(err)


def test_what_plans_do_not_take_the_general_path_answers():
    kern, plain = (ep.compile(AXPY, formats={"A": "csr"}, tuning=t)
                   for t in (None, {"call_plans": False}))
    A, x = _inputs(1)
    for c in (1.0, 3, True, 2**53 + 1, -(2**60), 2**70, np.float32(1.5), np.int64(3), 0.25):
        got, want = _outcome(kern, A=A, x=x, c=c), _outcome(plain, A=A, x=x, c=c)
        assert type(got) is type(want)
        if isinstance(got, str):
            assert got == want and "c" in got       # too large an int: refused, named
        else:
            np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("way", sorted(WAYS))
def test_nan_where_the_semiring_refuses_it_is_the_general_paths_error(way):
    kern = ep.compile("y[i] = c + A[i, j] + x[j]", formats={"A": "csr"},
                      semiring=ep.semirings.min_plus, tuning=WAYS[way])
    A, x = _inputs(2)
    fine = kern(A=A, x=x, c=1.0)
    kern(A=A, x=x, c=2.0)                        # a plan for floats is made
    with pytest.raises(InputError, match="c"):
        kern(A=A, x=x, c=float("nan"))
    np.testing.assert_array_equal(kern(A=A, x=x, c=1.0), fine)


def test_a_scalar_of_an_integer_carrier_is_the_general_paths():
    kern = ep.compile("y[i] = c + A[i, j] * x[j]", formats={"A": "csr"},
                      semiring=ep.semirings.integer)
    A = sp.csr_array(np.array([[1, 0, 2], [0, 3, 0]], dtype=np.int64))
    x = np.array([1, 2, 3], dtype=np.int64)
    for c in (5, 6, 2**62):
        np.testing.assert_array_equal(kern(A=A, x=x, c=c), A @ x + c)
