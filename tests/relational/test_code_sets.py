"""A formula of tests of one index (`~` and `|` of ranges: a "codes" comparison,
runtime.predicates) is worked out over the index's codes once per formula, size,
bounds and semiring and kept (Tuning.aligned_once; off: every call), so a call
with the bounds of an earlier one reads no pass over the codes; every call's
answer against numpy, bounds changed between calls."""
import numpy as np
import pytest

import etchpy as ep
from etchpy.runtime import predicates


@pytest.mark.parametrize("once", [True, False])
def test_a_code_set_is_kept_per_bounds(once):
    i, j = ep.indices("i j")
    M = ep.tensor("M", 2)
    a = np.arange(1.0, 49.0).reshape(8, 6)
    c = np.arange(8)
    kern = ep.compile(ep.sum(j, M[i, j] * (~ep.between(i, "lo", "hi") | ep.between(i, 6, None))),
                      tuning={"aligned_once": once})
    predicates._codes_passing.cache_clear()
    for lo, hi in [(2, 5), (1, 7), (2, 5), (0, 0), (2, 5)]:
        want = a.sum(axis=1) * (~((c >= lo) & (c < hi)) | (c >= 6))
        np.testing.assert_array_equal(kern(M=a, lo=lo, hi=hi), want)
    info = predicates._codes_passing.cache_info()
    assert (info.currsize, info.hits) == ((3, 2) if once else (0, 0))
