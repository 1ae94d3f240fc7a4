"""A dense output whose loops store each cell of a box once (windows: a
stencil's interior) has only the cells outside the box filled
(proofs_notes/windows.md, "The output's gaps"), and windows of one numpy
operand are bound once per call (runtime.window_steps.share_operands)."""
from __future__ import annotations

import numpy as np
import pytest
import scipy.ndimage as ndi
from hypothesis import given, settings, strategies as st

import etchpy as ep
from tests.end_to_end.test_windows import erosion

pytestmark = pytest.mark.usefixtures("shared_cache")
i, j = ep.indices("i j")
NO_GAPS = ep.Tuning(fill_gaps=False)


def padded_product(a, lo, hi, lo2, hi2):
    """a[i[lo:hi], j[lo2:hi2]] · a[i[lo+1:hi+1], j[lo2:hi2]], a zero-filled."""
    p = np.zeros((a.shape[0] + 60, a.shape[1] + 60))
    p[30:30 + a.shape[0], 30:30 + a.shape[1]] = a
    hi, hi2 = max(hi, lo), max(hi2, lo2)
    return (p[30 + lo:30 + hi, 30 + lo2:30 + hi2]
            * p[31 + lo:31 + hi, 30 + lo2:30 + hi2])


@settings(max_examples=30, deadline=None)
@given(st.integers(-12, 14), st.integers(0, 14), st.integers(-12, 16), st.integers(0, 14))
def test_only_the_cells_outside_the_box_are_filled(lo, n, lo2, n2):
    """Windows partly or wholly outside the operand (an empty box too), bounds as
    parameters: each call's fresh output equals numpy's zero-filled slices, with
    the gaps filled and with the whole output filled first, call after call."""
    a = np.random.default_rng(abs(lo * 31 + lo2)).random((9, 11)) + 1.0
    x = ep.tensor("x", 2)
    e = x[i["lo":"hi"], j["lo2":"hi2"]] * x[i["lo+1":"hi+1"], j["lo2":"hi2"]]
    bounds = dict(lo=lo, hi=lo + n, lo2=lo2, hi2=lo2 + n2)
    want = padded_product(a, lo, lo + n, lo2, lo2 + n2)
    for kern in (ep.compile(e), ep.compile(e, tuning=NO_GAPS)):
        for _ in range(3):       # the general path, then the call plan
            np.testing.assert_array_equal(kern(x=a, **bounds), want)


def test_a_stencils_output_is_not_asked_zeroed_and_its_fill_is_the_gaps():
    img = ep.tensor("img", 2)
    gaps = ep.compile(erosion(img, 40, 50), semiring=ep.semirings.boolean)
    whole = ep.compile(erosion(img, 40, 50), semiring=ep.semirings.boolean, tuning=NO_GAPS)
    assert "out_zeroed" not in gaps.c_source and "_box_lo" in gaps.c_source
    assert "out_zeroed" in whole.c_source and "_box_lo" not in whole.c_source
    im = np.random.default_rng(3).random((40, 50)) < 0.8
    want = ndi.binary_erosion(im, structure=np.ones((3, 3)), border_value=0)
    for kern in (gaps, whole):
        for _ in range(3):
            np.testing.assert_array_equal(kern(img=im), want)


def test_a_loop_order_across_the_outputs_axes_fills_the_same_gaps():
    """The box is by index name: an output over (j, i) of windows over i and j."""
    x = ep.tensor("x", 2)
    e = x[i[-2:6], j[1:9]] * x[i[-1:7], j[1:9]]
    a = np.random.default_rng(5).random((7, 8)) + 1.0
    kern = ep.compile(e, out_indices=(j, i))
    want = padded_product(a, -2, 6, 1, 9).T
    for _ in range(3):
        np.testing.assert_array_equal(kern(x=a), want)


def test_windows_of_one_bool_operand_are_checked_once_and_a_bad_byte_misses():
    """A bool operand's bytes other than 0 and 1 (a view of other bytes) make the
    plan miss: the general path reads each nonzero byte as true."""
    img = ep.tensor("img", 2)
    kern = ep.compile(erosion(img, 30, 20), semiring=ep.semirings.boolean)
    raw = (np.random.default_rng(4).random((30, 20)) < 0.9).astype(np.uint8)
    im = raw.view(bool)
    want = ndi.binary_erosion(raw != 0, structure=np.ones((3, 3)), border_value=0)
    for _ in range(3):
        np.testing.assert_array_equal(kern(img=im), want)
    raw[raw == 1] = 2                         # the same truths, bytes of 2
    for _ in range(2):
        np.testing.assert_array_equal(kern(img=im), want)
