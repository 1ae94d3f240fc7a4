"""Issue 21, trap 5: a sparse result whose semiring zero is not 0 is an ep.Tensor
carrying its fill value, never a scipy array that would read missing entries as 0;
when the zero is 0 it stays a scipy array."""
import numpy as np
import pytest
import scipy.sparse as sp

import etchpy as ep

i, j, k = ep.indices("i j k")
A, B = ep.tensor("A", 2, format="csr"), ep.tensor("B", 2, format="csr")
W = sp.csr_array(np.array([[0.0, 3.0, 0.0], [1.0, 0.0, 0.0], [0.0, 0.0, 2.0]]))
PATHS = ep.sum(j, A[i, j] * B[j, k])


@pytest.mark.parametrize("backend", ["c", "streams", "reference"])
@pytest.mark.parametrize("semiring, fill", [("min_plus", np.inf), ("max_plus", -np.inf)])
@pytest.mark.parametrize("output", ["csr", "csc"])
def test_a_sparse_result_over_a_nonzero_zero_carries_its_fill(backend, semiring, fill, output):
    got = ep.evaluate(PATHS, semiring=semiring, output=output, backend=backend, A=W, B=W)
    assert isinstance(got, ep.Tensor) and got.fill == fill
    dense = ep.evaluate(PATHS, semiring=semiring, backend="reference", A=W, B=W)
    np.testing.assert_array_equal(got.to_dense(), dense)     # inf where there is no path
    assert np.isinf(got.to_dense()).any()
    with pytest.raises(ep.InputError, match="fill"):
        got.to_scipy()                      # scipy would say 0 where there is no path


@pytest.mark.parametrize("semiring", ["real", "boolean", "max_times"])
def test_a_sparse_result_over_a_zero_of_0_stays_scipy(semiring):
    m = sp.csr_array(W != 0) if semiring == "boolean" else W
    got = ep.evaluate(PATHS, semiring=semiring, output="csr", A=m, B=m)
    assert isinstance(got, sp.csr_array)
