"""window_blocks' fill in lanes (Tuning.window_fill_lanes, c.walks.fill_hits,
ep_fill_hits in codegen_templates/kernel.c.j2; law in proofs_notes/windows.md,
"Hits compressed in lanes"): the buffers' fill as one call, which with AVX-512,
int32 coordinates and values of 4 or 8 bytes tests 16 entries at a time and
compresses the hits into the buffers, else runs the loop it replaces. Rows of
0 to 40 entries (chunks of 16 and a masked tail), windows that start before
0, end past the columns or lie past int32, float64, float32, int64,
complex64 (8 bytes, copied by their bits) and complex128 values (the last by
the loop), int32 and int64 indices, a scipy operand
(the checked build) written in place between calls and a Tensor; every answer
the dense reference's, and the same with the switch off."""
import numpy as np
import pytest
import scipy.sparse as sp

import etchpy as ep
from etchpy import pipeline
from etchpy.errors import InputError

pytestmark = pytest.mark.usefixtures("shared_cache")
i, j = ep.indices("i j")
LANES = {"prefetch_min_bytes": 256, "window_blocks": 64, "window_blocks_wide": 256}


def long_rows(seed: int, dtype, shape=(40, 300)) -> np.ndarray:
    """Rows of 0 to about 40 entries at random columns (far: spans over 1/8)."""
    rng = np.random.default_rng(seed)
    d = np.where(rng.random(shape) < rng.random((shape[0], 1)) * 0.14,
                 rng.integers(1, 9, shape), 0).astype(dtype)
    if np.dtype(dtype).kind == "c":
        d = d + 1j * np.where(d != 0, rng.integers(1, 5, shape), 0)
    d[7] = 0
    return d


def dense(m, lo, hi, step, lo2, hi2, v):
    rows, cols = np.arange(lo, hi, step), np.arange(lo2, hi2)
    inside = np.zeros((len(rows), len(cols)), dtype=m.dtype)        # the fill outside m
    r_in, c_in = (rows >= 0) & (rows < m.shape[0]), (cols >= 0) & (cols < m.shape[1])
    inside[np.ix_(r_in, c_in)] = m[np.ix_(rows[r_in], cols[c_in])]
    return inside @ v


BOUNDS = ((0, 40, 0, 300), (-4, 30, -6, 120), (3, 38, 20, 340), (2, 9, 50, 50),
          (1, 39, 10, 61), (0, 40, 150, 299), (5, 35, 2**31 + 5, 2**31 + 60))


@pytest.mark.parametrize("dtype, semiring", [(np.float64, "real"), (np.float32, "real32"),
                                             (np.int64, "integer"), (np.complex64, "complex64"),
                                             (np.complex128, "complex")])
def test_the_fill_in_lanes_is_the_restriction_and_the_shift(dtype, semiring):
    A, x = ep.tensor("A", 2, "csr"), ep.tensor("x", 1)
    d = long_rows(1, dtype)
    M = sp.csr_array(d)
    T = ep.Tensor.from_scipy(M, "csr")
    T64 = ep.Tensor.from_scipy(sp.csr_array((M.data, M.indices.astype(np.int64),
                                             M.indptr.astype(np.int64)), shape=M.shape), "csr")
    for step in (1, 2):
        rows = i["lo":"hi":step] if step > 1 else i["lo":"hi"]
        expr = ep.sum(j, A[rows, j["lo2":"hi2"]] * x[j])
        kerns = [ep.compile(expr, semiring=semiring, tuning={**LANES, "window_fill_lanes": f})
                 for f in (True, False)]
        for kern, there in zip(kerns, (True, False)):      # the trusted build (a Tensor's)
            c = pipeline.render_c(kern.compiled, "int32_t", checked=False).c
            assert ("ep_fill_hits" in c) == there
        for lo, hi, lo2, hi2 in BOUNDS:
            v = (np.arange(hi2 - lo2) % 7 + 1).astype(dtype)
            want = dense(d, lo, hi, step, lo2, hi2, v)
            for kern in kerns:
                for operand in (M, T, T64):
                    got = kern(A=operand, x=v, lo=lo, hi=hi, lo2=lo2, hi2=hi2)
                    np.testing.assert_allclose(got, want, rtol=1e-6)


def test_a_scipy_operand_written_in_place_is_read_again_and_checked():
    """The values and coordinates of a scipy operand changed between calls are
    what the next call reads; a coordinate out of range in a window's row is an
    InputError naming A, with the fill in lanes as without it."""
    A, x = ep.tensor("A", 2, "csr"), ep.tensor("x", 1)
    d = long_rows(2, np.float64)
    W = sp.csr_array(d)
    kern = ep.compile(ep.sum(j, A[i["lo":"hi"], j["lo2":"hi2"]] * x[j]), tuning=LANES)
    v = np.arange(200.0) + 1
    row = next(r for r in range(2, 30) if W.indptr[r + 1] - W.indptr[r] >= 20)
    for _ in range(3):
        W.data *= -1.5
        W.indices[W.indptr[row]] = max(W.indices[W.indptr[row]] - 1, 0)
        np.testing.assert_allclose(kern(A=W, x=v, lo=2, hi=30, lo2=5, hi2=205),
                                   dense(W.toarray(), 2, 30, 1, 5, 205, v))
    W.indices[W.indptr[row] + 17] = 999                                 # out of range
    with pytest.raises(InputError, match="A"):
        kern(A=W, x=v, lo=2, hi=30, lo2=5, hi2=205)
    W.indices[W.indptr[row] + 17] = -3                                  # negative
    with pytest.raises(InputError, match="A"):
        kern(A=W, x=v, lo=2, hi=30, lo2=-10, hi2=205)


def test_the_lanes_compress_in_a_register_not_into_memory():
    """The hits are compressed in a register and stored under a mask of their
    count: a compressing store straight to memory is microcoded on AMD Zen 4
    (random rows of 5 at a 10% window ran 0.57x scipy's slice-then-product with
    it, 2.4x without; docs/performance.md, "Window fill lanes on AMD Zen")."""
    A, x = ep.tensor("A", 2, "csr"), ep.tensor("x", 1)
    kern = ep.compile(ep.sum(j, A[i["lo":"hi"], j["lo2":"hi2"]] * x[j]), tuning=LANES)
    c = pipeline.render_c(kern.compiled, "int32_t", checked=False).c
    assert "ep_fill_hits" in c and "_mm512_maskz_compress_epi32" in c
    assert "compressstoreu" not in c
