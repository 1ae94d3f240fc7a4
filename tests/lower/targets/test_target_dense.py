"""The dense target: cells written once skip the zero fill."""
import numpy as np
import pytest

import etchpy as ep
from tuned import csr_from

i, j = ep.indices("i j")
A_csr = ep.tensor("A", 2, format="csr")
x_vec = ep.tensor("x", 1)
SPMV = ep.sum(j, A_csr[i, j] * x_vec[j])

pytestmark = pytest.mark.usefixtures("shared_cache")


def test_dense_output_cells_written_once_skip_the_zero_fill():
    """SpMV visits every row once and sums into one accumulator: y[i] = acc, no
    fill pass. Rows of a dcsr matrix are sparse, so y keeps its fill and ⊕=."""
    spmv = ep.compile(SPMV)
    assert "out_k" not in spmv.c_source and "out[i_] = acc;" in spmv.c_source
    A_dcsr = ep.tensor("A", 2, format="dcsr")
    x = ep.tensor("x", 1)
    sparse_rows = ep.compile(ep.sum(j, A_dcsr[i, j] * x[j]), semiring="min_plus")
    assert "out_k" in sparse_rows.c_source
    m = csr_from([0, 2, 2, 3], [0, 1, 1], [1.0, 2.0, 5.0], (3, 2))
    got = sparse_rows(A=m, x=np.array([1.0, 1.0]))
    np.testing.assert_array_equal(got, [2.0, np.inf, 6.0])      # row 1: the fill
    np.testing.assert_allclose(spmv(A=m, x=np.array([1.0, 1.0])), [3.0, 0.0, 5.0])
