"""A value column's narrow form (runtime.narrow): chosen from its values, and each
comparison with a bound converted to the form's integer threshold decides every
stored value as the float64 column's comparison does (proofs_notes/narrow.md)."""
import operator

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from etchpy.errors import InputError
from etchpy.runtime.narrow import Narrow, narrowed

OPS = {"<": operator.lt, "<=": operator.le, ">": operator.gt, ">=": operator.ge}


def test_the_rule_picks_the_narrowest_exact_form():
    assert narrowed(np.arange(1, 51, dtype=np.int64)) == Narrow(np.dtype(np.int8), 1)
    assert narrowed(np.array([8035.0, 10440.0])) == Narrow(np.dtype(np.int16), 1)
    assert narrowed(np.arange(11) / 100.0) == Narrow(np.dtype(np.int8), 100)
    assert narrowed(np.array([901.5, 104949.5])) == Narrow(np.dtype(np.int32), 100)
    assert narrowed(np.array([-128, 5])) == Narrow(np.dtype(np.int16), 1)   # (ends left free)
    assert narrowed(np.array([0.125])) is None            # three digits
    assert narrowed(np.array([1.0, np.nan])) is None
    assert narrowed(np.array([2.0 ** 40])) is None
    assert narrowed(np.array([], dtype=np.float64)) is None
    assert narrowed(np.array([True, False])) is None
    assert narrowed(np.array(["a"])) is None


@settings(max_examples=300, deadline=None)
@given(st.sampled_from([1, 100]), st.sampled_from([np.int8, np.int16, np.int32]),
       st.lists(st.integers(-2**31 + 1, 2**31 - 2), min_size=1, max_size=40),
       st.sampled_from(sorted(OPS)),
       st.one_of(st.floats(allow_nan=False), st.integers(-2**70, 2**70),
                 st.integers(-300, 300).map(lambda k: k / 100),
                 st.integers(-300, 300).map(lambda k: k / 100 + 1e-9)))
def test_a_bound_decides_every_stored_value_as_the_float_column(scale, dtype, ks, op, b):
    info = np.iinfo(dtype)
    ks = np.clip(np.array(ks, dtype=np.int64), info.min + 1, info.max - 1)
    form = Narrow(np.dtype(dtype), scale)
    column = ks / scale if scale != 1 else ks.astype(np.float64)
    stored = form.stored(column)
    assert np.array_equal(stored, ks)
    t = form.slot(op, b)
    assert info.min <= t <= info.max
    want = [OPS[op](float(c), b) for c in column]      # Python: exact float/int compare
    got = OPS[op](stored, np.array(t, dtype=dtype))     # in the dtype, as a kernel would
    assert got.tolist() == want


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(-10**6, 10**6), min_size=1, max_size=30),
       st.sampled_from([1, 100]))
def test_a_column_narrowed_is_stored_exactly(ks, scale):
    column = np.array(ks, dtype=np.int64) / scale
    form = narrowed(column)
    assert form is not None and form.scale <= scale
    stored = form.stored(column)
    assert np.array_equal(stored / form.scale, column)


def test_nan_and_non_numbers_as_bounds_are_refused():
    form = Narrow(np.dtype(np.int8), 100)
    for bad in (float("nan"), "0.05", None, True):
        with pytest.raises(InputError):
            form.slot("<", bad)
