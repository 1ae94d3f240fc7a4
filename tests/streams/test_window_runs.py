"""Windows over run lists (streams.window_runs) and products of many run streams
(streams.runs.meet_runs), proofs_notes/windows.md "A window of a run list" and
proofs_notes/runs.md law 6.

A window of a run list is the run list restricted and shifted: checked against
numpy slicing of the zero-filled operand on the stream interpreter (invariant
checks on) and in C, for dense and sparse run lists, row and column runs,
negative shifts, windows past the end, steps 1-3, the runs pass on and off;
stored runs of the zero passed as gaps; a Σ over a windowed run taken once per
piece; the erosion's nine windows meet as one product (one align over nine
operands, not meets nested in meets)."""
import numpy as np
import pytest
import scipy.ndimage as ndi
from hypothesis import given, settings, strategies as st

import etchpy as ep
from etchpy.testing import check_backends

from tests.end_to_end.test_windows import erosion, numpy_window, window

pytestmark = pytest.mark.usefixtures("shared_cache")
i, j = ep.indices("i j")
RUNS = ("rle", "sparse_rle", ep.Format(["dense", "runs"], (1, 0)),
        ep.Format(["dense", "sparse_runs"], (1, 0)))


def runs_image(seed: int, shape=(7, 13)) -> np.ndarray:
    """Rows of runs of 1 to 5 cells, values 0 (often: gaps and zero runs), 1, 2."""
    rng = np.random.default_rng(seed)
    out = np.zeros(shape)
    for row in out:
        c = 0
        while c < len(row):
            k = int(rng.integers(1, 6))
            row[c:c + k] = rng.choice([0.0, 0.0, 1.0, 2.0])
            c += k
    return out


@settings(max_examples=10)
@given(st.sampled_from(RUNS), st.integers(-4, 14), st.integers(0, 16), st.integers(1, 3),
       st.integers(-2, 8), st.integers(0, 9), st.integers(1, 2), st.booleans(),
       st.integers(0, 3))
def test_a_window_of_a_run_list_is_the_runs_restricted_and_shifted(
        fmt, lo2, n2, s2, lo, n, s, runs, seed):
    dense = runs_image(seed)
    hi, hi2 = lo + n * s, lo2 + n2 * s2
    A = ep.tensor("A", 2, fmt)
    e = A[window(i, lo, hi, s), window(j, lo2, hi2, s2)]
    want = numpy_window(dense, [(lo, hi, s), (lo2, hi2, s2)])
    got = check_backends(e, {"A": dense}, tuning={"runs": runs})
    np.testing.assert_array_equal(got, want)
    row_sums = check_backends(ep.sum(j, e), {"A": dense}, tuning={"runs": runs})
    np.testing.assert_array_equal(row_sums, want.sum(axis=1))


@pytest.mark.parametrize("fmt, sr", list(zip(RUNS, ["real", "min_plus", "boolean", "integer"])))
def test_products_of_windowed_runs_equal_the_reference(fmt, sr):
    """Three shifted windows of one run list times a dense operand, summed and
    not, and written as runs (runs.md law 4); built-in semirings of each kind,
    C and streams (invariants checked)."""
    dense = runs_image(5, (6, 17))
    if sr == "boolean":
        dense = dense != 0
    A, B = ep.tensor("A", 2, fmt), ep.tensor("B", 2)
    prod = A[i, j[-1:16]] * A[i[1:7], j] * A[i, j[2:19]]
    other = np.ones_like(dense) if sr == "boolean" else dense + 1
    check_backends(ep.sum(j, prod * B[i, j]), {"A": dense, "B": other}, semiring=sr)
    for e in (prod, ep.sum((i, j), prod)):
        check_backends(e, {"A": dense}, semiring=sr)
    check_backends(prod, {"A": dense}, semiring=sr, output="rle", backends=("c",))


@pytest.mark.parametrize("fmt", ["rle", "sparse_rle"])
def test_erosion_of_a_run_list_is_scipys(fmt):
    rng = np.random.default_rng(3)
    im = np.repeat(rng.random((8, 4)) < 0.7, 4, axis=1)      # runs of 4 and more
    e = erosion(ep.tensor("img", 2, fmt), *im.shape)
    want = ndi.binary_erosion(im, structure=np.ones((3, 3)), border_value=0)
    got = check_backends(e, {"img": im}, semiring="boolean")
    np.testing.assert_array_equal(got, want)
    check_backends(e, {"img": im}, semiring="boolean", tuning={"runs": False},
                   backends=("streams",))


def test_nine_windowed_run_lists_meet_once():
    """The erosion over run lists (shifts not grouped: test_shift_runs.py) is
    one meet of nine operands (one align loop, no meet nested in a meet: the C
    stays small), its windows read whole runs
    (no stride or per-cell search), and a stored run of the zero is a gap."""
    kern = ep.compile(erosion(ep.tensor("img", 2, "rle"), 64, 64),
                      semiring=ep.semirings.boolean, tuning={"shift_runs": False})
    src = kern.c_source
    assert src.count("runs with runs (9)") == 1 and "runs with runs (2)" not in src
    assert "through a window from lo" not in src
    assert len(src.splitlines()) < 2000
    off = ep.compile(erosion(ep.tensor("img", 2, "rle"), 64, 64),
                     semiring=ep.semirings.boolean, tuning={"runs": False})
    assert "_vals[" in src.split("while (((")[1] and "runs with runs" not in off.c_source


def test_a_sum_over_a_windowed_run_is_taken_once_per_piece():
    """Σ_j over a window of a run list multiplies the run's value by the
    piece's length (the run_sums pass), runs on; cell by cell, runs off."""
    A = ep.tensor("A", 2, "rle")
    e = ep.sum(j, A[i, j[3:40]])
    on = ep.compile(e).c_source
    off = ep.compile(e, tuning={"runs": False}).c_source
    assert "repeat" in on or "* (" in on
    dense = np.repeat(np.arange(12.0).reshape(3, 4), 11, axis=1)
    np.testing.assert_array_equal(ep.compile(e)(A=dense), dense[:, 3:40].sum(axis=1))
    assert on != off
