"""An input whose dtype holds no numbers (object, strings, datetimes) is refused
with an InputError naming it, with no semiring given, on the first call and on
later calls (through the kernel's call plan), not with the dtype alone or
numpy's promotion error (runtime.inputs.infer_semiring)."""
import numpy as np
import pytest

import etchpy as ep
from etchpy.errors import InputError

BAD = {"object": np.array([1.0, 2.0], dtype=object), "str": np.array(["a", "b"]),
       "datetime": np.array(["2020-01-01", "2020-01-02"], dtype="datetime64[D]")}


@pytest.mark.parametrize("kind", sorted(BAD))
def test_a_non_numeric_input_is_refused_by_name(kind):
    kern = ep.compile("y[i] = x[i] * w[i] * 2", name="dtype_named")
    w = np.ones(2)
    assert np.allclose(kern(x=np.arange(2.0), w=w), [0.0, 2.0])   # a plan for float64
    for call in (lambda: kern(x=BAD[kind], w=w), lambda: kern(x=BAD[kind], w=w),
                 lambda: ep.evaluate("y[i] = x[i] * w[i] * 2", x=BAD[kind], w=w)):
        with pytest.raises(InputError, match=r"tensor 'x' has dtype"):
            call()
