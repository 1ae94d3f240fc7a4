"""Band rows (lower/schedule/band_rows.py): a uniform band's unclipped rows, for a
width in Tuning.band_widths, run with that width as a constant, each a
straight-line piece in the plain loop's order; the clipped rows (the first and
last few) run as the plain loop (proofs_notes/band.md, "Fixed width")."""
import numpy as np
import pytest

import etchpy as ep
from etchpy import imp
from etchpy.testing import check_backends
from etchpy.tuning import DEFAULT, FORCE
from tuned import run_lowered

pytestmark = pytest.mark.usefixtures("shared_cache")
i, j = ep.indices("i j")
x = ep.tensor("x", 1)
A = ep.tensor("A", 2, "uniform_band")
SPMV = ep.sum(j, A[i, j] * x[j])
PLAIN = dict(sum_lanes=1, fp_contract=False)     # the plain loop, no fused multiply-add


def shaped(rows, size, offset, width, step, seed):
    """A uniform band Tensor (rows × size) with this shape, random values in every
    slot (those outside the matrix are never read)."""
    vals = np.random.default_rng(seed).random(rows * width)
    shape = np.array([offset, width, step, rows, size], dtype=np.int64)
    return ep.Tensor((rows, size), "uniform_band", ({}, {"ushape": shape}), vals)


def fixed(prog) -> bool:
    return any(isinstance(u, imp.Comment) and "straight-line" in u.text
               for u in imp.statements(prog.body))


SHAPES = [  # rows, size, offset, width, step: centred, one-sided, past either end, flat,
    (40, 40, -1, 3, 1), (40, 40, -2, 5, 1), (37, 37, -4, 9, 1), (30, 30, 0, 3, 1),
    (30, 30, -3, 3, 1), (30, 30, 5, 7, 1), (30, 30, -32, 3, 1), (30, 30, 29, 3, 1),
    (12, 12, 2, 3, 0), (12, 12, -1, 3, 0), (12, 12, 11, 3, 0), (10, 30, -2, 5, 3),
    (10, 21, 0, 7, 2), (2, 3, -1, 3, 1), (1, 1, 0, 1, 1), (0, 5, 0, 3, 1), (9, 4, -1, 3, 0),
    (25, 25, -3, 7, 1), (25, 25, -6, 11, 1)]


@pytest.mark.parametrize("rows, size, offset, width, step", SHAPES)
def test_the_plain_loops_bits_on_the_kernel(rows, size, offset, width, step):
    """Every shape gives the dense product and, without fused multiply-adds, the
    plain loop's bits (its order of adds) where the width is listed (3, 5, 7, 9);
    11, not listed, runs as before (its sum in lanes)."""
    t = shaped(rows, size, offset, width, step, rows + width)
    v = np.random.default_rng(size).random(size)
    want = t.to_dense() @ v
    on = ep.compile(SPMV, tuning=ep.Tuning(fp_contract=False))
    listed = width in DEFAULT.band_widths         # else: as before, in lanes
    before = ep.compile(SPMV, tuning=ep.Tuning(band_rows=False, fp_contract=False,
                                               sum_lanes=1 if listed else DEFAULT.sum_lanes))
    got = on(A=t, x=v)
    assert np.array_equal(got, before(A=t, x=v))
    np.testing.assert_allclose(got, want, rtol=1e-12)
    assert "straight-line" in on.c_source and "straight-line" not in before.c_source


@pytest.mark.parametrize("base", [DEFAULT, FORCE])
@pytest.mark.parametrize("shape", SHAPES[::3])
def test_the_interpreter_runs_every_row_once(base, shape):
    """On the Imp interpreter (which refuses a read outside an array): each row
    once, with its band, whatever the row range's ends."""
    rows, size = shape[:2]
    t = shaped(*shape, seed=7)
    v = np.arange(1.0, size + 1.0)
    got, prog = run_lowered(SPMV, ep.semirings.get("real"), None, {"A": t, "x": v}, 1,
                            base.with_(**PLAIN))
    assert fixed(prog)                      # (the width is the call's: any shape)
    np.testing.assert_allclose(got.reshape(rows), t.to_dense() @ v, rtol=1e-12)
    _, prog = run_lowered(SPMV, ep.semirings.get("real"), None, {"A": t, "x": v}, 1,
                          base.with_(band_rows=False))
    assert not fixed(prog)


@pytest.mark.parametrize("sr", ["min_plus", "integer", "complex", "boolean", "max_times"])
def test_every_backend_and_semiring(sr):
    s = ep.semirings.get(sr)
    rng = np.random.default_rng(len(sr))
    a = np.full((11, 11), s.zero, dtype=s.dtype)
    for d in (-2, -1, 0, 1, 2):
        r = np.arange(max(0, -d), min(11, 11 - d))
        a[r, r + d] = (rng.integers(1, 5, len(r)) + (1j if s.dtype.kind == "c" else 0)).astype(s.dtype)
    v = rng.integers(1, 5, 11).astype(s.dtype)
    check_backends(SPMV, {"A": a, "x": v}, semiring=sr, backends=("streams", "c", "imp"))


def test_banded_and_blocks_are_untouched():
    """Only a band of one width per call has fixed rows: the banded and block-list
    levels' kernels are the same with the pass off (but for the header's tuning line)."""
    for fmt in ("banded", "blocks", "csr"):
        B = ep.tensor("A", 2, fmt)
        e = ep.sum(j, B[i, j] * x[j])
        on, off = ep.compile(e).c_source, ep.compile(e, tuning=ep.Tuning(band_rows=False)).c_source
        body_on, body_off = (c.split(" * loop order:", 1)[1] for c in (on, off))  # past the banner's
        assert body_on == body_off and "band_rows=False" in off                  # tuning (it rewraps)
