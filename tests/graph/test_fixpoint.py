"""The fixpoint driver: convergence, the iteration count, the max_iter error, and
KernelStep's reuse of its two output buffers."""
import numpy as np
import pytest
import scipy.sparse as sp

import etchpy as ep
from etchpy.graph import ConvergenceError, KernelStep, fixpoint, within

pytestmark = pytest.mark.usefixtures("shared_cache")


def test_converges_to_the_first_repeated_state():
    result = fixpoint(lambda x: np.minimum(x, 3), np.arange(6))
    assert result.value.tolist() == [0, 1, 2, 3, 3, 3]
    assert result.iterations == 2          # the second step changes nothing


def test_the_first_state_is_not_modified():
    x0 = np.arange(4.0)
    fixpoint(lambda x: x * 0.0, x0)
    assert x0.tolist() == [0.0, 1.0, 2.0, 3.0]


def test_max_iter_names_the_iteration():
    with pytest.raises(ConvergenceError, match=r"count did not converge in max_iter=3"):
        fixpoint(lambda x: x + 1, 0, max_iter=3, name="count")
    with pytest.raises(ep.EtchpyError, match="max_iter"):
        fixpoint(lambda x: x, 0, max_iter=0)


def test_tolerance():
    result = fixpoint(lambda x: x / 2, np.ones(4), converged=within(1e-3))
    assert np.abs(result.value).sum() < 4e-3 * 2
    with pytest.raises(ep.EtchpyError, match="tolerance"):
        within(0)


def test_kernel_step_reaches_the_shortest_distances():
    i, j = ep.indices("i j")
    A, d = ep.tensor("A", 2, format="csc"), ep.tensor("d", 1)
    kern = ep.compile(d[i] + ep.sum(j, A[j, i] * d[j]), semiring="min_plus")
    M = sp.csr_array(np.array([[0, 1.0, 5.0], [0, 0, 1.0], [0, 0, 0]]))
    step = KernelStep(kern, "d", A=ep.Tensor.from_scipy(M.tocsc(), "csc",
                                                        semiring="min_plus"))
    x0 = np.array([0.0, np.inf, np.inf])
    result = fixpoint(step, x0)
    assert result.value.tolist() == [0.0, 1.0, 2.0]
    assert result.iterations == 3
    assert x0[1] == np.inf                  # the first state is the caller's, untouched
