"""Index comparisons (`i < j`, ...) store nothing: the pairs come from the loop
coordinates (streams.from_expr index_compare), in either loop order."""
import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings, strategies as st

import etchpy as ep
from etchpy.testing import INDEX_NAMES

OPS = {"<": np.less, "<=": np.less_equal, ">": np.greater, ">=": np.greater_equal}


def _cmp(a, op, b):
    return {"<": a < b, "<=": a <= b, ">": a > b, ">=": a >= b}[op]


@settings(max_examples=40, deadline=None)
@given(names=st.lists(st.sampled_from(INDEX_NAMES), min_size=2, max_size=2, unique=True),
       op=st.sampled_from(sorted(OPS)), n=st.integers(0, 6), m=st.integers(0, 6),
       outer_first=st.booleans(), seed=st.integers(0, 2**16))
def test_every_op_shape_and_order_on_the_streams_backend(names, op, n, m, outer_first, seed):
    """A[a, b] * (a op b) equals numpy's masked A, for sizes n != m and with
    either index as the outer loop (the streams backend runs the same streams
    as the compiled code)."""
    a = np.random.default_rng(seed).integers(0, 3, (n, m)).astype(float)
    x, y = ep.indices(" ".join(names))
    A = ep.tensor("A", 2, "dense")
    order = (x, y) if outer_first else (y, x)
    want = a * OPS[op](np.arange(n)[:, None], np.arange(m)[None, :])
    for backend in ("streams", "reference"):
        got = ep.evaluate(A[x, y] * _cmp(x, op, y), A=a, backend=backend,
                          order=order if backend == "streams" else None)
        np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("op,order", [("<", "ji"), (">=", "ij"), ("<=", "ji")])
def test_compiled_in_either_order_with_sizes_that_differ(op, order):
    a = np.random.default_rng(1).integers(0, 3, (5, 7)).astype(float)
    i, j = ep.indices("i j")
    A = ep.tensor("A", 2, "dense")
    got = ep.evaluate(A[i, j] * _cmp(i, op, j), A=a, order=tuple(order))
    want = a * OPS[op](np.arange(5)[:, None], np.arange(7)[None, :])
    np.testing.assert_array_equal(got, want)


def test_a_huge_triangle_is_never_stored():
    """Σ A[i,j]·(i < j) over a 400k × 400k matrix: its triangle has 8·10^10 pairs
    (far beyond the test's memory), the kernel walks only A's entries."""
    n = 400_000
    rng = np.random.default_rng(5)
    r, c = rng.integers(0, n, 50_000), rng.integers(0, n, 50_000)
    A = sp.csr_array((np.ones(len(r)), (r, c)), shape=(n, n))
    A.sum_duplicates()
    i, j = ep.indices("i j")
    T = ep.tensor("A", 2, "csr")
    got = ep.evaluate(ep.sum((i, j), T[i, j] * (i < j)), A=A)
    assert got == sp.triu(A, 1).sum()


def test_triangles_counted_once_with_two_comparisons():
    """Σ A[i,j] A[j,k] A[i,k] (i < j)(j < k) counts each triangle once."""
    n = 300
    rng = np.random.default_rng(7)
    M = sp.random(n, n, density=0.05, random_state=rng, format="csr")
    M = sp.csr_array(((M + M.T) > 0).astype(float))
    M.setdiag(0)
    M.eliminate_zeros()
    i, j, k = ep.indices("i j k")
    T = ep.tensor("A", 2, "csr")
    got = ep.evaluate(ep.sum((i, j, k), T[i, j] * T[j, k] * T[i, k] * (i < j) * (j < k)),
                      A=M)
    assert got == (M @ M).multiply(M).sum() / 6
