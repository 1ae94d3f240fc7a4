"""One input read both through a window and as a onehot's source (or a value
comparison's): the window's binding must not drop the source the comparison
reads (runtime.identity.with_identities; found by the central property's
draws). A window and a onehot that only some nestings, or only the expression
as written and not the optimizer's rewrite, read in their storage orders: the
others are priced out, not raised (plan.nesting.best, pipeline's
_cheapest_rewrite; session 49's dev-profile draws). Every backend against the
dense reference."""
import numpy as np
import pytest

import etchpy as ep
from etchpy.testing import check_backends, max_min

i, j, k = ep.indices("i j k")
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


def test_a_window_and_a_onehot_that_one_nesting_walks():
    """onehot(k, A[j]) reads (j, k), the window of dcsr B (k, j): no order of the
    nest that keeps Σ_i C apart, nor of the optimizer's rewrite, walks both."""
    D, M = ep.tensor("D", 2, format="dcsr"), ep.tensor("M", 2)
    e = ep.onehot(k, A[j], 3) * (D[k[0:3], j] * ep.sum(i, M[i, j]) + A[i])
    inputs = {"A": np.array([True, True, False]),
              "D": np.array([[1, 1, 0], [0, 1, 1], [0, 0, 1], [1, 0, 0]], bool),
              "M": np.array([[1, 1, 0], [0, 1, 1], [0, 0, 1]], bool)}
    check_backends(e, inputs, semiring="boolean")
