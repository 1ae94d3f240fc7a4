"""Far ragged rows and the lanes (lower/schedule/far_rows.py, session 59): where the
far rows' pick (ep_far_pick, x of run_far_bytes or more) holds, ragged rows take
the lanes from a mean of Tuning.gather_ragged_far, and from one of
Tuning.gather_mild_far when their lengths' standard deviation is at most the mean
/ Tuning.gather_mild_spread (ep_gather_spread); Intel's rule (half of gather_from)
is below both, so its C is unchanged; each can be switched off (0)."""
import numpy as np
import pytest
import scipy.sparse as sp

import etchpy as ep
from etchpy import pipeline
from etchpy.runtime import build
from tuned import INTEL_FACTS

SPMV = "y[i] = A[i, j] * x[j]"
ZEN = dict(gather_from=24, gather_ragged_from=36, gather_from_far=0)
INTEL = dict(gather_from=6, gather_ragged_from=0, gather_from_far=5)
OFF = dict(gather_ragged_far=0, gather_mild_far=0)


def pick_line(**tuning) -> str:
    """The lanes pick's line of the C, the other host facts an Intel host's."""
    kern = ep.compile(SPMV, formats={"A": "csr"}, tuning=ep.Tuning(**{**INTEL_FACTS, **tuning}))
    line, = (s.strip() for s in kern.c_source.splitlines() if " A_gather = " in s)
    return line


def test_far_ragged_rows_pick_in_the_c():
    assert pick_line(**ZEN) == ("const int64_t A_gather = ep_gather_pick(A_pos1, A_dim0, 24, "
                                "A_far_rows ? ep_gather_spread(A_pos1, A_dim0, 28, 18, 4) : 36);")
    assert pick_line(**ZEN, **OFF) == "const int64_t A_gather = ep_gather_pick(A_pos1, A_dim0, 24, 36);"
    assert pick_line(**ZEN, gather_mild_far=0).endswith("A_far_rows ? 28 : 36);")
    assert pick_line(**ZEN, gather_ragged_far=0, gather_mild_spread=3).endswith(
        "24, A_far_rows ? ep_gather_spread(A_pos1, A_dim0, 36, 18, 3) : 36);")
    # Intel's ragged rule (2 * mean >= 6) is below both: the C is the one before
    assert pick_line(**INTEL) == pick_line(**INTEL, **OFF)
    assert "ep_gather_spread" not in ep.compile(SPMV, formats={"A": "csr"},
                                              tuning=ep.Tuning(**INTEL)).c_source
    # a mild threshold at or above the far ragged one adds nothing
    assert pick_line(**ZEN, gather_mild_far=28).endswith("A_far_rows ? 28 : 36);")


WRAPPER = """
int64_t spread_for_test(const ep_idx_t *pos, int64_t n, int64_t wide, int64_t mild, int64_t share)
{ return ep_gather_spread(pos, n, wide, mild, share); }
"""
CDEF = ("int64_t spread_for_test(const int32_t *pos, int64_t n, int64_t wide, int64_t mild, "
        "int64_t share);")


@pytest.fixture(scope="module")
def spread():
    kern = ep.compile(SPMV, formats={"A": "csr"}, tuning=ep.Tuning(**ZEN))
    lib = build.load(pipeline.render_c(kern.compiled, "int32_t").c + WRAPPER, CDEF,
                     name="gather_spread_test")

    def call(lengths, share=4):
        pos = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int32)
        return lib.lib.spread_for_test(lib.ffi.cast("int32_t *", pos.ctypes.data),
                                       len(lengths), 28, 18, share)
    if call(np.tile([17, 23], 200)) == 28:
        pytest.skip("no AVX-512 gathers in this C (ep_gather_spread gives `wide`)")
    return call


def test_mild_rows_take_the_mild_threshold(spread):
    assert spread(np.tile([17, 23], 200)) == 18          # sd 3 <= mean 20 / 4
    assert spread(np.tile([10, 30], 200)) == 28          # sd 10 > 20 / 4: widely spread
    assert spread(np.tile([10, 30], 200), share=2) == 18  # sd 10 <= 20 / 2
    assert spread(np.full(400, 20)) == 18                # one length (ep_gather_pick ignores it)
    assert spread(np.array([], dtype=np.int64)) == 28    # no rows sampled: `wide`


def _far_mild(n=6000, seed=7):
    """Rows of 17 to 23 random columns over an x of n values (far rows, mildly ragged)."""
    rng = np.random.default_rng(seed)
    lens = rng.integers(17, 24, n)
    crd = np.concatenate([np.sort(rng.choice(n, k, replace=False)) for k in lens])
    pos = np.concatenate([[0], np.cumsum(lens)])
    return sp.csr_array((rng.random(len(crd)), crd.astype(np.int32), pos.astype(np.int32)),
                        shape=(n, n))


@pytest.mark.parametrize("tuning", [ZEN, {**ZEN, **OFF}])
def test_far_mild_rows_sum_right_and_refuse_bad_coordinates(tuning):
    A = _far_mild()
    x = np.random.default_rng(1).random(A.shape[1])
    kern = ep.compile(SPMV, formats={"A": "csr"}, tuning=ep.Tuning(**tuning))
    want = A @ x
    for given in (A, ep.Tensor.from_scipy(A, "csr")):
        np.testing.assert_allclose(kern(A=given, x=x), want, rtol=1e-12)
    bad = A.copy()
    bad.indices[len(bad.indices) // 2] = A.shape[1] + 3        # past x: caught, no crash
    with pytest.raises(ep.InputError, match="A"):
        kern(A=bad, x=x)
