"""Short pieces (Tuning.short_pieces, lower/schedule/pieces.py `short_sum`): a
band or block of exactly that many states is summed straight-line, in the
plain loop's order, so the result is bit for bit the loop's (proofs_notes/levels.md,
"Short pieces straight-line"); any other length takes the lane stages and the
loop as before."""
import numpy as np
import pytest
import scipy.sparse as sp

import etchpy as ep
from etchpy.testing import check_backends

pytestmark = pytest.mark.usefixtures("shared_cache")
i, j = ep.indices("i j")
x = ep.tensor("x", 1)


def banded(n, offsets, rng):
    """An n×n matrix with the given diagonals, random values."""
    return sp.diags([rng.random(n - abs(d)) for d in offsets], offsets, shape=(n, n)).tocsr()


@pytest.mark.parametrize("fmt", ["uniform_band", "banded", "blocks"])
@pytest.mark.parametrize("offsets", [(-1, 0, 1), (0, 1), (-2, -1, 0, 1, 2)])
def test_straight_line_is_the_loop(fmt, offsets):
    rng = np.random.default_rng(len(offsets))
    m = banded(40, offsets, rng)
    t = ep.Tensor.from_scipy(m, fmt)
    v = rng.random(40)
    A = ep.tensor("A", 2, fmt)
    e = ep.sum(j, A[i, j] * x[j])
    on = ep.compile(e)
    off = ep.compile(e, tuning=ep.Tuning(short_pieces=0))
    assert "== (j_c + 3)" in on.c_source and "== (j_c + 3)" not in off.c_source
    got = on(A=t, x=v)
    assert np.array_equal(got, off(A=t, x=v))          # the loop's order: the same bits
    np.testing.assert_allclose(got, m @ v, rtol=1e-12)


@pytest.mark.parametrize("sr, short", [("real", 3), ("min_plus", 3), ("complex", 3),
                                       ("boolean", 2), ("integer", 1)])
def test_every_backend_and_semiring(sr, short):
    s = ep.semirings.get(sr)
    rng = np.random.default_rng(short)
    a = np.full((9, 9), s.zero, dtype=s.dtype)
    for d in (-1, 0, 1):
        r = np.arange(max(0, -d), min(9, 9 - d))
        a[r, r + d] = (rng.integers(1, 5, len(r)) + (1j if s.dtype.kind == "c" else 0)).astype(s.dtype)
    v = rng.integers(1, 5, 9).astype(s.dtype)
    A = ep.tensor("A", 2, "uniform_band")
    check_backends(ep.sum(j, A[i, j] * x[j]), {"A": a, "x": v}, semiring=sr,
                   backends=("streams", "c", "imp"), tuning=ep.Tuning(short_pieces=short))
