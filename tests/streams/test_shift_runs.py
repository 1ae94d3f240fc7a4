"""Shifts of one run list met once (streams.shift_runs, proofs_notes/shifts.md):
products of windows of a run-length image at shifts that fill an interval
(structuring elements: boxes, a row, a column, a cross, shifts with
holes and repeats) against the dense reference, in C and on the stream
interpreter (invariants checked), with Tuning.shift_runs on and off; runs
that meet with one value but are not merged (packing would merge them) form
one stretch; a semiring whose ⊗ is not idempotent keeps the general meet."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import etchpy as ep
from etchpy.testing import check_backends

from tests.end_to_end.test_windows import erosion

pytestmark = pytest.mark.usefixtures("shared_cache")
i, j = ep.indices("i j")
FORMATS = ("rle", "sparse_rle", ep.Format(["dense", "runs"], (1, 0)))
ELEMENTS = {
    "box 3x3": [(a, b) for a in (-1, 0, 1) for b in (-1, 0, 1)],
    "row 1x3": [(0, -1), (0, 0), (0, 1)],
    "column 3x1": [(-1, 0), (0, 0), (1, 0)],
    "box 3x5": [(a, b) for a in (-1, 0, 1) for b in range(-2, 3)],
    "cross": [(-1, 0), (0, -1), (0, 0), (0, 1), (1, 0)],
    "hole": [(0, -1), (0, 1)],
    "repeats": [(0, 1), (0, 0), (0, 1), (1, 2), (1, 1)],
}


def stencil(img, offsets, h, w):
    """Π over (di, dj) of img[i[di:di+h], j[dj:dj+w]]."""
    e = None
    for di, dj in offsets:
        a = img[i[di:di + h], j[dj:dj + w]]
        e = a if e is None else e * a
    return e


@settings(max_examples=25)
@given(st.sampled_from(FORMATS), st.sampled_from(sorted(ELEMENTS)), st.integers(0, 99),
       st.integers(1, 7), st.integers(1, 19), st.booleans())
def test_shifts_of_one_run_list_equal_the_reference(fmt, element, seed, h, w, shifts):
    """On the stream interpreter, its invariants checked (C: below)."""
    rng = np.random.default_rng(seed)
    im = np.repeat(rng.random((h, w)) < 0.75, rng.integers(1, 4), axis=1)[:, :w]
    e = stencil(ep.tensor("img", 2, fmt), ELEMENTS[element], h, im.shape[1])
    check_backends(e, {"img": im}, semiring="boolean", tuning={"shift_runs": shifts},
                   backends=("streams",))


@pytest.mark.parametrize("fmt, element", [("rle", "cross"), ("sparse_rle", "repeats")])
def test_shifts_of_one_run_list_in_c(fmt, element):
    rng = np.random.default_rng(7)
    im = np.repeat(rng.random((9, 8)) < 0.8, 3, axis=1)
    e = stencil(ep.tensor("img", 2, fmt), ELEMENTS[element], *im.shape)
    check_backends(e, {"img": im}, semiring="boolean", backends=("c",))


def test_the_erosion_meets_three_shifted_rows():
    """The 3×3 erosion's nine windows are three shift streams (one per row of
    the element) met once; switched off, one meet of nine; in a semiring whose
    ⊗ is not idempotent (real), the nine meet as before. (Rows kept across
    output rows switched off: test_shift_rows.py.)"""
    img = ep.tensor("img", 2, "sparse_rle")
    on = ep.compile(erosion(img, 64, 64), semiring=ep.semirings.boolean,
                    tuning={"shift_rows": False}).c_source
    assert on.count("int64_t j_sq_") == 3 and on.count("runs with runs (3)") == 1
    off = ep.compile(erosion(img, 64, 64), semiring=ep.semirings.boolean,
                     tuning={"shift_runs": False}).c_source
    assert "_sq_" not in off and off.count("runs with runs (9)") == 1
    real = ep.compile(erosion(img, 64, 64)).c_source
    assert "_sq_" not in real and real.count("runs with runs (9)") == 1
    hole = ep.compile(stencil(img, ELEMENTS["hole"], 8, 8), semiring=ep.semirings.boolean)
    assert "_sq_" not in hole.c_source


@pytest.mark.parametrize("fmt, levels", [
    (ep.Format(["dense", "runs"]), {"rseg": [0, 4], "rend": [2, 5, 9, 12]}),
    (ep.Format(["dense", "sparse_runs"]),
     {"rseg": [0, 4], "rbeg": [0, 2, 5, 9], "rend": [2, 5, 9, 12]})])
def test_runs_that_meet_with_one_value_are_one_stretch(fmt, levels):
    """Runs [0,2) [2,5) [5,9) [9,12) of 1, 1, 0/1, 1 not merged by packing:
    the shifts read across their ends as across one run."""
    vals = np.array([1, 1, 1, 1] if "sparse" in str(fmt) else [1, 1, 0, 1], dtype=bool)
    t = ep.Tensor((1, 12), fmt, ({}, {k: np.array(v) for k, v in levels.items()}), vals,
                  name="img")
    dense = t.to_dense()
    e = stencil(ep.tensor("img", 2, fmt), ELEMENTS["row 1x3"], 1, 12)
    want = dense & np.roll(dense, 1) & np.roll(dense, -1)
    want[:, [0, -1]] = False
    for backend in ("c", "streams"):
        got = ep.evaluate(e, semiring="boolean", backend=backend, img=t)
        np.testing.assert_array_equal(got, want)


MAX_MIN = ep.Semiring("max_min", np.float64, -np.inf, np.inf,
                      ("({a} > {b} ? {a} : {b})", np.maximum),
                      ("({a} < {b} ? {a} : {b})", np.minimum), idempotent=True)


@pytest.mark.parametrize("fmt, backends", [("rle", ("c", "streams")),
                                           ("sparse_rle", ("streams",))])
def test_a_grey_erosion_in_max_min_meets_the_shifts_once(fmt, backends):
    """⊗ = min (its C a choice of an operand: idempotent): the minimum over a
    3×3 box and a cross of a grey run-length image (values differ inside a
    stretch; outside is the zero, −inf) is the reference's, shifts grouped."""
    rng = np.random.default_rng(1)
    im = np.repeat(rng.integers(0, 4, (7, 6)).astype(float), 3, axis=1)
    t = ep.Tensor.from_dense(im, fmt, semiring=MAX_MIN)
    for el in ("box 3x3", "cross"):
        e = stencil(ep.tensor("img", 2, fmt), ELEMENTS[el], *im.shape)
        check_backends(e, {"img": t}, semiring=MAX_MIN, backends=backends)
    src = ep.compile(stencil(ep.tensor("img", 2, fmt), ELEMENTS["box 3x3"], 64, 64),
                     semiring=MAX_MIN).c_source
    assert src.count("int64_t j_sq_") == 3 and "ringtag" in src     # rows kept (shift_rows)
