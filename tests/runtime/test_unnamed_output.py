"""An output format given by its levels, not its name, is read back by its mode
order: (dense, compressed) over modes (1, 0) is a csc array."""
import numpy as np
import pytest
import scipy.sparse as sp

import etchpy as ep
from etchpy.formats import Format

i, l = ep.indices("i l")
A, B = ep.tensor("A", 2, "csr"), ep.tensor("B", 2, "csr")


@pytest.mark.parametrize("modes, kind", [((1, 0), sp.csc_array), ((0, 1), sp.csr_array)])
def test_an_unnamed_compressed_output_is_read_back_by_its_mode_order(modes, kind):
    fmt = Format(("dense", "compressed"), modes)
    M = sp.random(30, 20, density=0.2, format="csr", random_state=1)
    N = sp.random(20, 30, density=0.2, format="csr", random_state=2)
    got = ep.compile(A[i, l] * B[l, i], output=fmt)(A=M, B=N)
    assert isinstance(got, kind)
    np.testing.assert_array_equal(got.toarray(), M.multiply(N.T).toarray())
