"""A serial kernel's SIMD lanes over a scipy input clamp their coordinates and
test the maximum once, after the program (Tuning.check_lanes_once,
ep_gather_clamped; proofs_notes/validation.md, "Lanes clamped, their maximum
tested once"): a coordinate outside [0, dim) anywhere, in a full chunk or a
masked tail, still makes the call an InputError; good inputs give scipy's
result. Rows of 7 to 20 entries, so that the lanes run where the host has them."""
import numpy as np
import pytest
import scipy.sparse as sp

import etchpy as ep
from etchpy.errors import InputError
from etchpy import pipeline

SPMV = "y[i] = A[i, j] * x[j]"


def rows(n, k, idx, dtype, seed=3):
    """n rows of k sorted distinct columns among n, as a csr array."""
    rng = np.random.default_rng(seed)
    cols = np.sort(np.stack([rng.choice(n, k, replace=False) for _ in range(n)]), axis=1)
    return sp.csr_array((rng.random(n * k).astype(dtype), cols.ravel().astype(idx),
                         (np.arange(n + 1) * k).astype(idx)), shape=(n, n))


def c_text(tuning=None):
    kern = ep.compile(SPMV, formats={"A": "csr"}, tuning=tuning)
    return pipeline.render_c(kern.compiled, "int32_t").c


def test_the_switch_chooses_the_clamped_lanes():
    assert "ep_gather_clamped(acc" in c_text()
    # the lanes outside [0, dim) are masked out of the gather (no clamp, session 53)
    assert "EP_GATHER_XM(EP_GATHER_IN8(c, lim), c, x)" in c_text()
    assert "EP_GATHER_CLAMP" not in c_text()
    assert "ep_gather_max_out(" in c_text()
    assert "ep_gather_clamped(" not in c_text(ep.Tuning(check_lanes_once=False))
    assert "ep_gather_clamped(" not in c_text(ep.Tuning(check_count_once=False))
    assert "ep_gather_clamped(" not in c_text(ep.Tuning(check_block=0))     # dim not tested
    kern = ep.compile(SPMV, formats={"A": "csr"}, threads=2)
    assert "ep_gather_clamped(acc" not in pipeline.render_c(kern.compiled, "int32_t").c


@pytest.mark.parametrize("idx", [np.int32, np.int64])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("k", [7, 16, 20])
@pytest.mark.parametrize("on", [True, False])
def test_bad_coordinates_in_lanes_are_refused(idx, dtype, k, on):
    A = rows(64, k, idx, dtype)
    x = np.random.default_rng(4).random(64).astype(dtype)
    kern = ep.compile(SPMV, formats={"A": "csr"}, tuning=ep.Tuning(check_lanes_once=on))
    np.testing.assert_allclose(kern(A=A, x=x), A @ x, rtol=1e-5)
    for at, bad in ((5 * k + 2, 64), (17 * k + k - 1, -1), (40 * k, 2**31 - 1), (63 * k + 6, 70)):
        B = A.copy()
        B.indices[at] = bad
        with pytest.raises(InputError, match="A"):
            kern(A=B, x=x)
    np.testing.assert_allclose(kern(A=A, x=x), A @ x, rtol=1e-5)    # good again after
