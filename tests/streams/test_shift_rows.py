"""Rows of pieces kept across the output's rows (streams.shift_rows,
proofs_notes/shifts.md, "Rows of pieces kept across output rows"): stencils
of one run-length image whose rows' shift products are computed once into a
ring of slots tagged with the row they hold, against the dense reference: in
C on two threads with parameter bounds (one kernel for every shape: images
with one row, empty rows, all and nothing set), on the stream interpreter
(its invariants checked on the slots read back), and the C's shape (a ring
where rows share a class; none switched off, for a cross's single windows or
a row)."""
import re

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import etchpy as ep
from etchpy.testing import check_backends

pytestmark = pytest.mark.usefixtures("shared_cache")
i, j = ep.indices("i j")
BOX = [(a, b) for a in (-1, 0, 1) for b in (-1, 0, 1)]
ELEMENTS = {"box 3x3": BOX, "box 5x3": [(a, b) for a in range(-2, 3) for b in (-1, 0, 1)],
            "cross": [(-1, 0), (0, -1), (0, 0), (0, 1), (1, 0)],
            "row 1x3": [(0, -1), (0, 0), (0, 1)]}


def _bound(axis: str, d: int) -> str:
    return f"{axis}hi_{'n' if d < 0 else ''}{abs(d)}"


def stencil(img, offsets, h=None, w=None):
    """Π over (di, dj) of img[i[di:di+h], j[dj:dj+w]]; h, w None: the ends are
    parameters (`bounds`)."""
    e = None
    for di, dj in offsets:
        a = img[i[di:_bound("i", di) if h is None else di + h],
                j[dj:_bound("j", dj) if w is None else dj + w]]
        e = a if e is None else e * a
    return e


def bounds(offsets, h, w) -> dict:
    return {**{_bound("i", a): a + h for a, _ in offsets},
            **{_bound("j", b): b + w for _, b in offsets}}


def reference(im, offsets):
    """The product of the shifted images, outside is false (numpy)."""
    h, w = im.shape
    p = np.pad(im, 2)
    out = np.ones_like(im)
    for a, b in offsets:
        out &= p[2 + a:2 + a + h, 2 + b:2 + b + w]
    return out


def images():
    rng = np.random.default_rng(3)
    yield np.zeros((5, 8), bool)
    yield np.ones((6, 7), bool)
    yield rng.random((1, 12)) < 0.9                  # one row
    im = np.repeat(rng.random((9, 5)) < 0.8, 3, axis=1)
    im[[0, 4, 5]] = False                              # empty rows, at the border too
    yield im
    for k in range(8):
        h, w = rng.integers(1, 12), rng.integers(1, 25)
        yield np.repeat(rng.random((h, w)) < 0.85, rng.integers(1, 5), axis=1)[:, :w]


def test_kept_rows_in_c_on_two_threads_equal_the_reference():
    """One kernel (bounds given per call): each thread its own ring."""
    kern = ep.compile(stencil(ep.tensor("img", 2, "rle"), BOX),
                      semiring=ep.semirings.boolean, threads=2)
    assert "ringtag" in kern.c_source
    for im in images():
        t = ep.Tensor.from_dense(im, "rle", semiring="boolean")
        got = np.asarray(kern(img=t, **bounds(BOX, *im.shape)))
        np.testing.assert_array_equal(got, reference(im, BOX), err_msg=str(im.shape))


@settings(max_examples=12)
@given(st.sampled_from(("rle", "sparse_rle")), st.sampled_from(sorted(ELEMENTS)),
       st.integers(0, 99), st.integers(1, 6), st.integers(1, 9))
def test_kept_rows_on_the_stream_interpreter(fmt, element, seed, h, w):
    """Slots written and read back are the shift streams (invariants checked)."""
    rng = np.random.default_rng(seed)
    im = np.repeat(rng.random((h, w)) < 0.8, rng.integers(1, 3), axis=1)[:, :w]
    im[rng.random(h) < 0.2] = False
    e = stencil(ep.tensor("img", 2, fmt), ELEMENTS[element], h, w)
    check_backends(e, {"img": im}, semiring="boolean", backends=("streams",))


def test_the_c_keeps_rows_where_rows_share_a_ring():
    """A 3×3 box: one ring of three rows (its tags), each slot filled by the
    row's shift stream; switched off, none; a cross (its rows ±1 one window
    each) and a row read each row once: none."""
    img = ep.tensor("img", 2, "sparse_rle")
    sr = ep.semirings.boolean

    def src(el, **kw):
        return ep.compile(stencil(img, ELEMENTS[el], 32, 32), semiring=sr, **kw).c_source
    def tests(c):       # an output row's slots checked against their tags
        return len(re.findall(r"ringtag_\d+\[j_slot_\d+\] != ", c))
    on = src("box 3x3")
    assert tests(on) == 3 and "int64_t j_pa_" in on       # the plain pass fills them
    assert tests(src("box 5x3")) == 5
    assert "ringtag" not in src("box 3x3", tuning={"shift_rows": False})
    assert "ringtag" not in src("cross") and "ringtag" not in src("row 1x3")
    two = src("box 3x3", threads=2)
    assert "ringtag" in two and "omp parallel num_threads" in two
