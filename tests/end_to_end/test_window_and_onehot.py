"""One input read both through a window and as a onehot's source (or a value
comparison's): the window's binding must not drop the source the comparison
reads (runtime.identity.with_identities; found by the central property's
draws). Every backend against the dense reference."""
import numpy as np
import pytest

import etchpy as ep
from etchpy.testing import check_backends, max_min

i, j = ep.indices("i j")
A = ep.tensor("A", 1, format="bytemap")
B = ep.tensor("B", 0)
C = ep.tensor("C", 1, format="sparse_rle")
WINDOW_AND_BINS = ep.sum(i, A[i[0:3]]) * B[()] * C[i] * (ep.onehot(i, A[j], 3) * (j < i))


@pytest.mark.parametrize("sr", [ep.semirings.real, max_min], ids=lambda s: s.name)
@pytest.mark.parametrize("a", [[3.0, 2.0], [1.0, 0.0], [2.0, 2.0]])
def test_a_source_read_through_a_window_and_as_bins(sr, a):
    inputs = {"A": np.array(a), "B": np.array(2.0), "C": np.array([5.0, 1.0, 0.0])}
    check_backends(WINDOW_AND_BINS, inputs, semiring=sr)


def test_a_source_read_through_a_window_and_compared():
    x = ep.tensor("x", 1)
    e = ep.sum((i, j), x[i[1:4]] * (x[j] > "t") * x[j])
    check_backends(e, {"x": np.array([1.0, 5.0, 2.0, 7.0, 3.0]), "t": 2.5})
