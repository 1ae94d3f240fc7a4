"""The append target: entries appended in order, a dense tail accumulated in place."""
import numpy as np
import pytest

import etchpy as ep

i, j, k = ep.indices("i j k")

pytestmark = pytest.mark.usefixtures("shared_cache")


def test_ttm_into_sparse_rows_with_dense_tail_appends():
    """(compressed, compressed, dense): the rank level accumulates in place."""
    T = ep.tensor("T", 3, format="csf")
    M = ep.tensor("M", 2)
    r_ = ep.indices("r")[0]
    fmt = ep.Format(["compressed", "compressed", "dense"])
    kern = ep.compile(ep.sum(k, T[i, j, k] * M[k, r_]), output=fmt)
    assert kern.program.output.mode == "append"
    rng = np.random.default_rng(2)
    coords = rng.integers(0, 30, size=(3, 400))
    Tt = ep.Tensor.from_coords(coords, rng.random(400), (30, 30, 30), "csf")
    Mv = rng.random((30, 5))
    got = kern(T=Tt, M=Mv)
    np.testing.assert_allclose(got.to_dense(), np.einsum("ijk,kr->ijr", Tt.to_dense(), Mv),
                               rtol=1e-12)
