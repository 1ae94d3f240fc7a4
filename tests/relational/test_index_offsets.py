"""Index offsets in comparisons (`i < j + 1`, `i + 2 <= j`, `ep.eq(i, j - 3)`:
expr.offsets): the offset folds into the inner index's range, clamped to
[0, dim), so that the reference, the streams interpreter and the C agree with
numpy's mask for offsets past either end; bad offsets are refused by name."""
import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings, strategies as st

import etchpy as ep
from etchpy.errors import ExpressionTypeError
from etchpy.testing import INDEX_NAMES

OPS = {"<": np.less, "<=": np.less_equal, ">": np.greater, ">=": np.greater_equal,
       "==": np.equal}


def _cmp(a, op, b):
    if op == "==":
        return ep.eq(a, b)
    return {"<": a < b, "<=": a <= b, ">": a > b, ">=": a >= b}[op]


def _mask(op, n, m, d):
    """numpy's x op y + d over 0..n-1 × 0..m-1."""
    return OPS[op](np.arange(n)[:, None], np.arange(m)[None, :] + d)


@settings(max_examples=40, deadline=None)
@given(names=st.lists(st.sampled_from(INDEX_NAMES), min_size=2, max_size=2, unique=True),
       op=st.sampled_from(sorted(OPS)), n=st.integers(0, 6), m=st.integers(0, 6),
       d=st.integers(-8, 8).filter(lambda d: d), left=st.booleans(),
       outer_first=st.booleans(), seed=st.integers(0, 2**16))
def test_every_op_offset_and_order_on_the_streams_backend(names, op, n, m, d, left,
                                                          outer_first, seed):
    """A[x, y] * (x op y + d), the offset written on either side (x - d op y),
    equals numpy's masked A, with offsets past both ends and either loop order."""
    a = np.random.default_rng(seed).integers(0, 3, (n, m)).astype(float)
    x, y = ep.indices(" ".join(names))
    A = ep.tensor("A", 2, "dense")
    c = _cmp(x - d, op, y) if left else _cmp(x, op, y + d)
    order = (x, y) if outer_first else (y, x)
    want = a * _mask(op, n, m, d)
    for backend in ("streams", "reference"):
        got = ep.evaluate(A[x, y] * c, A=a, backend=backend,
                          order=order if backend == "streams" else None)
        np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("op,d,order,fmt", [("<", 2, "ji", "csc"), (">=", -3, "ij", "csr"),
                                            ("==", 1, "ij", "dense"), ("<=", -9, "ji", "dense")])
def test_compiled_in_either_order(op, d, order, fmt):
    a = np.random.default_rng(1).integers(0, 3, (5, 7)).astype(float)
    i, j = ep.indices("i j")
    A = ep.tensor("A", 2, fmt)
    got = ep.evaluate(A[i, j] * _cmp(i, op, j + d), A=ep.Tensor.from_dense(a, fmt),
                      order=tuple(order))
    np.testing.assert_array_equal(got, a * _mask(op, 5, 7, d))


@pytest.mark.parametrize("tuning", ["default", "noopt"])
def test_a_band_of_a_huge_matrix_is_never_stored(tuning):
    """Σ A[i,j]·(i <= j + 3)·(i + 3 >= j) over a 400k × 400k csr: the band is a
    skip per row (clip_ranges) or a leapfrog (noopt), never a stored mask."""
    n = 400_000
    rng = np.random.default_rng(5)
    r = rng.integers(0, n, 60_000)
    c = np.clip(r + rng.integers(-6, 7, len(r)), 0, n - 1)
    A = sp.csr_array((np.ones(len(r)), (r, c)), shape=(n, n))
    A.sum_duplicates()
    i, j = ep.indices("i j")
    T = ep.tensor("A", 2, "csr")
    got = ep.evaluate(ep.sum((i, j), T[i, j] * (i <= j + 3) * (i + 3 >= j)), A=A,
                      tuning=tuning)
    want = (sp.triu(A, -3) - sp.triu(A, 4)).sum()
    assert got == want


def test_an_offset_against_a_bound_folds_into_the_bound():
    i, j = ep.indices("i j")
    assert (i + 2 < 5).tensor.name == (i < 3).tensor.name
    assert ep.eq(i + 1, 4).tensor.name == ep.eq(i, 3).tensor.name


def test_both_sides_offset_and_a_value_against_an_offset_index():
    """i + 2 <= j + 5 is i <= j + 3; A[i, j] < j + 1 tests each value against its
    coordinate plus one."""
    i, j = ep.indices("i j")
    assert (i + 2 <= j + 5).tensor.name == (i <= j + 3).tensor.name
    a = np.arange(12.0).reshape(3, 4) % 5
    A = ep.tensor("A", 2, "dense")
    got = ep.evaluate(A[i, j] * (A[i, j] < j + 1), A=a, backend="streams")
    np.testing.assert_array_equal(got, a * (a < np.arange(4)[None, :] + 1))


@pytest.mark.parametrize("op", ["<", "==", ">="])
def test_not_of_an_offset_comparison_is_its_complement(op):
    i, j = ep.indices("i j")
    a = np.random.default_rng(2).integers(1, 3, (6, 5)).astype(float)
    A = ep.tensor("A", 2, "dense")
    got = ep.evaluate(A[i, j] * ~_cmp(i, op, j - 2), A=a, backend="streams")
    np.testing.assert_array_equal(got, a * ~_mask(op, 6, 5, -2))


@pytest.mark.parametrize("make,words", [
    (lambda i, j: i < j + 0.5, ["j + 0.5", "a float"]),
    (lambda i, j: i < j + "k", ["'k'", "a parameter's name"]),
    (lambda i, j: 2 * i < j, ["2 * i", "never scaled"]),
    (lambda i, j: (i + 1) * 2 < j, ["(i + 1) * 2", "never scaled"]),
    (lambda i, j: i + ep.tensor("A", 1)[i] < j, ["i + A[i]", "no value"]),
    (lambda i, j: i + j < 3, ["i + j", "not added"]),
    (lambda i, j: 3 - i < j, ["3 - i", "negates"]),
    (lambda i, j: i < j + 2 ** 63, ["2**62"]),
    (lambda i, j: i < i + 1, ["compares an index with itself"]),
    (lambda i, j: ep.eq(i, j), ["ep.eq(i, j)", "diagonal"]),
    (lambda i, j: ep.tensor("A", 2)[i + 1, j], ["i + 1"]),
])
def test_bad_offsets_are_refused_by_name(make, words):
    i, j = ep.indices("i j")
    with pytest.raises(ExpressionTypeError) as err:
        make(i, j)
    for w in words:
        assert w in str(err.value)
