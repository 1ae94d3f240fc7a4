"""Windows in the text front end: `A[i[lo:hi:s], j]` (expr.parse_windows).

A statement with windows parses to the same expression as the Python API's
`A[i[lo:hi:s], j]` for every spelling of a bound (an int, a negative int, a
parameter, a parameter plus or minus an integer, a bound left out), computes
what numpy's slicing of the zero-padded operand gives, and a malformed window
is a FrontendError with a caret under the offending token."""
import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings, strategies as st

import etchpy as ep
from etchpy.expr.lexer import FrontendError
from etchpy.expr.parse import parse

i, j = ep.indices("i j")

BOUNDS = st.one_of(st.none(), st.integers(-4, 12), st.sampled_from(["lo", "hi", "pos"]),
                   st.tuples(st.sampled_from(["lo", "n", "row"]), st.integers(-3, 3))
                   .filter(lambda t: t[1] != 0).map(lambda t: f"{t[0]}{t[1]:+d}"))


def text(b) -> str:
    return "" if b is None else str(b)


@settings(max_examples=60)
@given(BOUNDS, BOUNDS, st.one_of(st.none(), st.integers(1, 4)), BOUNDS, BOUNDS)
def test_a_window_parses_to_the_python_api_s_expression(lo, hi, s, lo2, hi2):
    step = "" if s is None else f":{s}"
    st_ = parse(f"y[i] = A[i[{text(lo)}:{text(hi)}{step}], j[{text(lo2)}:{text(hi2)}]] * x[j]")
    A, x = ep.tensor("A", 2), ep.tensor("x", 1)
    rows = i[lo:hi] if s is None else i[lo:hi:s]
    assert st_.expr == ep.sum(j, A[rows, j[lo2:hi2]] * x[j])


@pytest.mark.parametrize("statement, params, rows, cols", [
    ("y[i] = A[i[lo:hi], j[lo2:hi2]] * x[j]", dict(lo=100, hi=400, lo2=200, hi2=500),
     slice(100, 400), slice(200, 500)),
    ("y[i] = A[i[lo+1:hi-1], j[lo2:hi2]] * x[j]", dict(lo=100, hi=400, lo2=200, hi2=500),
     slice(101, 399), slice(200, 500)),
    ("y[i] = A[i[0:1000:3], j[lo2:]] * x[j]", dict(lo2=200), slice(0, 1000, 3),
     slice(200, 800)),
])
def test_windows_with_parameters_compute_numpy_s_slices(statement, params, rows, cols):
    M = sp.random(1000, 800, density=0.01, format="csr", random_state=3)
    kern = ep.compile(statement, formats={"A": "csr"})
    want = M[rows, cols]
    v = np.arange(float(want.shape[1]))
    got = kern(A=M, x=v, **params)
    np.testing.assert_allclose(got, want @ v)


def test_a_shifted_window_reads_zero_outside_its_operand():
    img = np.arange(1.0, 43.0).reshape(6, 7)
    got = ep.evaluate("y[i, j] = A[i[-1:5], j[1:]] * A[i[0:6], j[0:6]]", A=img)
    want = np.zeros((6, 6))
    want[1:] = img[0:5, 1:]
    np.testing.assert_array_equal(got, want * img[:, :6])


def test_erosion_written_as_text_equals_the_python_api_s():
    rng = np.random.default_rng(1)
    image = rng.random((20, 30)) < 0.85
    terms = " * ".join(f"img[i[{di - 1}:{di + 19}], j[{dj - 1}:{dj + 29}]]"
                       for di in range(3) for dj in range(3))
    got = ep.evaluate(f"out[i, j] = {terms}", img=image, semiring=ep.semirings.boolean)
    import scipy.ndimage as ndi
    want = ndi.binary_erosion(image, structure=np.ones((3, 3), bool), border_value=0)
    assert (got == want).all()


@pytest.mark.parametrize("statement, caret, words", [
    ("y[i] = A[i[0:3:0]]", "0", "step must be positive"),
    ("y[i[0:2]] = A[i]", "[", "left-hand side takes plain indices"),
    ("y[i] = A[i[3]]", "]", "expected ':'"),
    ("y[i] = A[i[a+b:3]]", "b", "an integer after a+"),
    ("y[i] = A[i[0:3:1:2]]", ":", "closing the window"),
    ("y[i] = A[i[-a:3]]", "a", "window bound"),
    ("y[i] = A[i[1.5:3]]", "1.5", "window bound"),
])
def test_a_malformed_window_is_shown_with_a_caret(statement, caret, words):
    with pytest.raises(FrontendError) as err:
        parse(statement)
    assert words in str(err.value)
    assert statement[err.value.pos:].startswith(caret)
