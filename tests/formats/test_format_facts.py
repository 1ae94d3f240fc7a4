"""Facts a Format works out once (calls read them per input): whether every level
is dense, and whether it is the layout of a C-contiguous numpy array. They are
not pickled: a format read back works them out again, and equals the original."""
import pickle

import numpy as np
import pytest

import etchpy as ep

Format = ep.Format


@pytest.mark.parametrize("fmt, dense, row_major", [
    (Format.named("dense", 2), True, True),
    (Format.named("dense", 3), True, True),
    (Format.named("csr", 2), False, False),
    (Format.named("csc", 2), False, False),
    (Format.named("csf", 3), False, False),
    (Format(["dense", "dense"], mode_order=(1, 0)), True, False),
    (Format(["dense", "dense", "dense"], mode_order=(0, 2, 1)), True, False),
])
def test_dense_and_row_major_facts(fmt, dense, row_major):
    for _ in range(2):                       # worked out, then read back
        assert fmt.is_dense is dense
        assert fmt.is_row_major_dense is row_major
    back = pickle.loads(pickle.dumps(fmt))
    assert not any(k.startswith("_") for k in back.__dict__)
    assert back == fmt and hash(back) == hash(fmt)
    assert back.is_row_major_dense is row_major


def test_a_column_major_dense_input_is_read_by_its_format():
    """A numpy array bound to a dense format stored column-major is laid out by that
    format, not passed as it is (the row-major fast path must not take it)."""
    i, j = ep.indices("i j")
    A = ep.tensor("A", 2, format=Format(["dense", "dense"], mode_order=(1, 0)))
    x = ep.tensor("x", 1)
    M = np.arange(12.0).reshape(3, 4)
    v = np.arange(4.0)
    got = ep.compile(ep.sum(j, A[i, j] * x[j]))(A=M, x=v)
    np.testing.assert_allclose(got, M @ v)
