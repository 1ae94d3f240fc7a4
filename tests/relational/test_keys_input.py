"""Keys at the edges of their input: the mask of absent values, bounds of another
dtype than the keys, int64 and uint64 columns together, NaN/NaT keys. Each case
is a value that was once miscoded or refused with a raw numpy error."""
import numpy as np
import pytest
from hypothesis import given, strategies as st

import etchpy as ep
from etchpy.errors import InputError


def test_the_mask_of_a_looked_up_coding_is_boolean():
    """A dictionary of integers is coded through a lookup table; its `present`
    is a bool mask, and the error names the first absent value and the count."""
    k = ep.Keys(np.array([10, 20]))
    codes, present = k.code(np.array([10, 30, 20]), missing="mask")
    assert present.dtype == bool and present.tolist() == [True, False, True]
    assert codes.tolist() == [0, 0, 1]
    with pytest.raises(InputError, match=r"value 30 is not in the domain \(1 value has"):
        k.code(np.array([30, 10]))
    with pytest.raises(InputError, match=r"'x' is not in the domain \(2 values have"):
        ep.Keys(np.array(["a"])).code(np.array(["x", "y"]))


@given(st.lists(st.integers(-300, 300), min_size=1, max_size=20),
       st.one_of(st.integers(-400, 400), st.floats(-400, 400), st.just(2**70),
                 st.just(-2**70), st.just(np.inf), st.just(-np.inf)))
def test_codes_between_counts_the_keys_below_a_bound_of_any_number_type(vals, bound):
    """Range and dictionary codings give the exact count of their key values
    below the bound, whatever its type: it is never cast to the keys' dtype."""
    vals = np.unique(vals)
    for k in (ep.Keys(vals), ep.Keys(vals, span_limit=0.1), ep.Keys(vals, lookup_span=None)):
        want = sum(1 for v in k.values().tolist() if v < bound)
        assert k.codes_between(bound, None) == (want, len(k))
        assert k.codes_between(None, bound) == (0, want)


def test_codes_between_compares_bounds_of_another_dtype_exactly():
    """A float bound against integers, a finer datetime, an integer past the keys'
    dtype and a negative bound against unsigned keys are compared as values."""
    assert ep.Keys(np.array([10, 5000, 10**9])).codes_between(10.5, None) == (1, 3)
    days = ep.Keys(np.array(["1995-01-01", "1995-01-02"], dtype="datetime64[D]"))
    assert days.codes_between(np.datetime64("1995-01-01T12:00"), None) == (1, 2)
    assert days.codes_between("1995-01-01T12:00", "1995-01-02") == (1, 1)
    small = ep.Keys(np.array([-100, 3, 100], dtype=np.int8))
    assert small.codes_between(0, 1000) == (1, 3)
    assert small.codes_between(-1000, -50.5) == (0, 1)
    unsigned = ep.Keys(np.array([1, 5000, 10**9], dtype=np.uint32))
    assert unsigned.codes_between(-5, None) == (0, 3)
    floats = ep.Keys(np.array([1.5, 2.5], dtype=np.float32))
    assert floats.codes_between(2.5000001, 2**70) == (2, 2)
    assert floats.codes_between(1.4999999, None) == (0, 2)


def test_codes_between_refuses_a_bound_that_compares_with_nothing():
    ints = ep.Keys(np.array([10, 5000, 10**9]), name="k")
    with pytest.raises(InputError, match="'k'.*bound lo = 'a'"):
        ints.codes_between("a", None)
    with pytest.raises(InputError, match="'k'.*bound hi is NaN"):
        ints.codes_between(None, np.nan)
    with pytest.raises(InputError, match="bound lo = 3 .*datetime64"):
        ep.Keys(np.array(["1995-01-01"], dtype="datetime64[D]")).codes_between(3, None)
    with pytest.raises(InputError, match="bound hi is NaT"):
        ep.Keys(np.array(["1995-01-01"], dtype="datetime64[D]")).codes_between(
            None, np.datetime64("NaT"))
    with pytest.raises(InputError, match="bound lo = 1"):
        ep.Keys(np.array(["a", "b"])).codes_between(1, None)
