"""The boolean semiring reads any nonzero byte as true, as C does (issue 26): in
every backend, for every way a boolean input arrives, and the results hold 0 or 1."""
import numpy as np
import pytest
import scipy.sparse as sp

import etchpy as ep

i, j = ep.indices("i j")
A, x, z = ep.tensor("A", 2, format="csr"), ep.tensor("x", 1), ep.tensor("z", 1)
BACKENDS = ("reference", "streams", "c")


def twos(n):
    """A bool array of n entries whose bytes are 2 (true, but not 1)."""
    return np.full(n, 2, dtype=np.uint8).view(bool)


@pytest.mark.parametrize("backend", BACKENDS)
def test_products_sums_and_reductions_of_twos(backend):
    y = twos(3)
    for e, want in [(ep.sum(j, x[j] * z[j]), True), (x[j] * z[j], [True, True, True]),
                    (x[j] + z[j], [True, True, True])]:
        got = ep.evaluate(e, semiring="boolean", backend=backend, x=y, z=np.ones(3, bool))
        assert np.array_equal(np.asarray(got).view(np.uint8), np.asarray(want, np.uint8)), e


@pytest.mark.parametrize("backend", BACKENDS)
def test_sparse_and_tensor_inputs_holding_twos(backend):
    data = twos(3)
    m = sp.csr_array((data, np.array([0, 1, 2]), np.array([0, 1, 2, 3])), shape=(3, 3))
    t = ep.Tensor.from_scipy(m, "csr", semiring=ep.semirings.boolean)
    assert set(t.vals.view(np.uint8)) == {1}
    for value in (m, t):
        got = ep.evaluate(ep.sum(j, A[i, j] * x[j]), semiring="boolean", backend=backend,
                          A=value, x=np.ones(3, bool))
        assert got.view(np.uint8).tolist() == [1, 1, 1]
