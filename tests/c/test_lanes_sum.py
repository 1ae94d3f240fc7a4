"""ep_lanes_sum_pd (kernel.c.j2), the sum of eight double lanes that ends every
gathered row in SIMD lanes (EP_LANES_SUM), called directly: the same bits as
gcc's _mm512_reduce_add_pd, which it replaced (halves, quarters, then the pair:
the same additions in the same order), on values whose sums round differently
by order, signed zeros, infinities and NaN."""
import numpy as np
import pytest

import etchpy as ep
from tests.c.spmv_source import spmv_source, with_wrapper

WRAPPER = """
#ifdef EP_LANES_SUM
int lanes_for_test(const double *v, int64_t n, double *ours, double *gccs)
{
    for (int64_t k = 0; k + 8 <= n; k += 8) {
        const __m512d s = _mm512_loadu_pd(v + k);
        ours[k / 8] = ep_lanes_sum_pd(s);
        gccs[k / 8] = _mm512_reduce_add_pd(s);
    }
    return 1;
}
#else
int lanes_for_test(const double *v, int64_t n, double *ours, double *gccs)
{ (void)v; (void)n; (void)ours; (void)gccs; return 0; }
#endif
"""
CDEF = "int lanes_for_test(const double *v, int64_t n, double *ours, double *gccs);"


@pytest.fixture(scope="module")
def lanes():
    src = spmv_source()
    assert "ep_lanes_sum_pd" in src or "EP_LANES_SUM" not in src
    lib = with_wrapper(WRAPPER, CDEF, "lanes_sum_test", src)

    def call(v):
        v = np.ascontiguousarray(v, dtype=np.float64)
        ours, gccs = np.empty(len(v) // 8), np.empty(len(v) // 8)
        ptr = lambda a: lib.ffi.cast("double *", a.ctypes.data)     # noqa: E731
        if not lib.lib.lanes_for_test(ptr(v), len(v), ptr(ours), ptr(gccs)):
            pytest.skip("no AVX-512 lanes in this C")
        return ours, gccs
    return call


def test_the_same_bits_as_gccs_reduction(lanes):
    rng = np.random.default_rng(62)
    wide = rng.standard_normal(8 * 4000) * 10.0 ** rng.integers(-20, 20, 8 * 4000)
    near = 1.0 + rng.integers(-4, 4, 8 * 4000) * 2.0**-52       # sums that round by order
    special = np.array([[0.0] + [-0.0] * 7, [-0.0] * 8, [np.inf, 1.0, -np.inf] + [0.0] * 5,
                        [1e308, 1e308, -1e308] + [0.0] * 5, [np.nan] + [1.0] * 7]).ravel()
    for v in (wide, near, -near, special):
        ours, gccs = lanes(v)
        assert np.array_equal(ours.view(np.uint64), gccs.view(np.uint64)) or (
            np.array_equal(np.isnan(ours), np.isnan(gccs))
            and np.array_equal(ours[~np.isnan(ours)].view(np.uint64),
                               gccs[~np.isnan(gccs)].view(np.uint64)))
    ours, _ = lanes(near)
    assert len(np.unique(ours)) > 1                      # the test sums really differ


def test_an_spmv_in_lanes_is_the_rows_sums(lanes):
    """A kernel whose rows take the lanes where the host has them (rows of 16 of
    one length; `lanes` skips elsewhere): scipy's A @ x within 1e-13, checked
    (a scipy input) and unchecked (an ep.Tensor of the same arrays)."""
    import scipy.sparse as sp
    rng = np.random.default_rng(7)
    n, per = 300, 16
    cols = np.sort(np.stack([rng.choice(n, per, replace=False) for _ in range(n)]), axis=1)
    A = sp.csr_array((rng.standard_normal(n * per), cols.ravel().astype(np.int32),
                      np.arange(0, n * per + 1, per, dtype=np.int32)), shape=(n, n))
    x = rng.standard_normal(n)
    kern = ep.compile("y[i] = A[i, j] * x[j]", formats={"A": "csr"})
    checked = kern(A=A, x=x)
    np.testing.assert_allclose(checked, A @ x, rtol=1e-13, atol=1e-13)
    np.testing.assert_allclose(kern(A=ep.Tensor.from_scipy(A), x=x), A @ x, rtol=1e-13, atol=1e-13)
