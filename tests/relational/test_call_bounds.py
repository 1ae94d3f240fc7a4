"""Comparison bounds given at call time (runtime.predicates) against the same
bounds written into the expression and against a count: ±inf and integers
past int64 are open bounds, NaN is an InputError naming the parameter."""
import math

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import etchpy as ep
from etchpy.errors import InputError

(i,) = ep.indices("i")
X = ep.tensor("X", 1)
BOUNDS = st.one_of(st.integers(-3, 8), st.floats(-3, 8), st.sampled_from(
    [math.inf, -math.inf, 2**70, -2**70, 2**63, np.int64(2), np.float32(2.5), np.uint64(2**64 - 1)]))
KERNEL = ep.compile(ep.sum(i, X[i] * ep.between(i, "lo", "hi")))


@settings(max_examples=40)
@given(lo=BOUNDS, hi=BOUNDS, n=st.integers(0, 6))
def test_a_call_time_bound_equals_the_bound_written_in_the_expression(lo, hi, n):
    want = float(sum(1 for c in range(n) if lo <= c < hi))
    assert KERNEL(X=np.ones(n), lo=lo, hi=hi) == want
    assert ep.evaluate(ep.sum(i, X[i] * ep.between(i, "lo", "hi")), X=np.ones(n), lo=lo,
                       hi=hi, backend="reference") == want
    if all(math.isfinite(b) for b in (lo, hi)):     # a written bound is finite
        assert ep.evaluate(ep.sum(i, X[i] * ep.between(i, lo, hi)), X=np.ones(n),
                           backend="reference") == want


def test_open_and_nan_bounds_at_call_time():
    """The tester's cases, and the same bounds on a value comparison."""
    assert KERNEL(X=np.ones(3), lo=0, hi=np.inf) == 3.0
    assert KERNEL(X=np.ones(3), lo=-np.inf, hi=2**70) == 3.0
    assert KERNEL(X=np.ones(3), lo=2**70, hi=np.inf) == 0.0
    assert ep.evaluate(ep.sum(i, X[i] * ep.between(i, 0, 2**70)), X=np.ones(3)) == 3.0
    with pytest.raises(InputError, match="parameter hi .* NaN"):
        KERNEL(X=np.ones(3), lo=0, hi=np.nan)
    with pytest.raises(InputError, match="parameter lo .* one number"):
        KERNEL(X=np.ones(3), lo=True, hi=2)
    big = ep.sum(i, X[i] * (X[i] >= "t"))
    x = np.array([1.0, 5.0, 2.0**80])
    assert ep.evaluate(big, X=x, t=2**70) == 2.0**80
    assert ep.evaluate(big, X=x, t=-np.inf) == x.sum()
    with pytest.raises(InputError, match="parameter t .* NaN"):
        ep.evaluate(big, X=x, t=float("nan"))
