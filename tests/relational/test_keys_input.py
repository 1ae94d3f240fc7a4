"""Keys at the edges of their input: the mask of absent values, bounds of another
dtype than the keys, int64 and uint64 columns together, NaN/NaT keys. Each case
is a value that was once miscoded or refused with a raw numpy error."""
import numpy as np
import pytest

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
