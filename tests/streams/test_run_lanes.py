"""A full Σ over a zip of two dense run lists walked in lockstep lanes
(lower/schedule/run_lanes.py, Tuning.run_lanes; proofs_notes/runs.md, law 10):
the lanes' sum equals the plain loop's and numpy's on shapes with fewer rows
than lanes, empty rows and columns, rows ending together; the pass fires only
where the row is a zip of two run lists summed whole, and stays off at < 2."""
from __future__ import annotations

import numpy as np
import pytest

import etchpy as ep

i, j = ep.indices("i j")
I, M = ep.tensor("I", 2, format="rle"), ep.tensor("M", 2, format="rle")
LANES = "lanes in lockstep"


def _runs(rng, shape, levels, longest=8):
    """An image of runs: random values held for random lengths along each row."""
    a = np.zeros(shape)
    for r in range(shape[0]):
        c = 0
        while c < shape[1]:
            n = int(rng.integers(1, longest + 1))
            a[r, c:c + n] = rng.integers(0, levels)
            c += n
    return a


SHAPES = [(0, 5), (3, 0), (1, 1), (1, 7), (2, 9), (3, 4), (5, 33), (17, 40), (64, 3)]


@pytest.mark.parametrize("lanes", [0, 3])
def test_lanes_sum_the_products_and_sums_of_two_run_lists(lanes):
    tuning = {"run_lanes": lanes}
    prod = ep.compile(ep.sum((i, j), I[i, j] * M[i, j]), tuning=tuning)
    blend = ep.compile(ep.sum((i, j), I[i, j] + M[i, j]), tuning=tuning)
    for shape in SHAPES:
        rng = np.random.default_rng(sum(shape) * 7 + lanes)
        a, b = _runs(rng, shape, 4), _runs(rng, shape, 2)
        ta, tb = ep.Tensor.from_dense(a, "rle"), ep.Tensor.from_dense(b, "rle")
        assert prod(I=ta, M=tb) == np.vdot(a, b), shape        # small integers: exact
        assert blend(I=ta, M=tb) == a.sum() + b.sum(), shape
        if a.size:            # (an empty one is planned apart)
            assert (LANES in prod.c_source) == (lanes >= 2)


def test_lanes_in_min_plus_and_max_times():
    rng = np.random.default_rng(3)
    a, b = _runs(rng, (9, 21), 5), _runs(rng, (9, 21), 5)
    ta, tb = ep.Tensor.from_dense(a, "rle"), ep.Tensor.from_dense(b, "rle")
    for sr, ref in (("min_plus", (a + b).min()), ("max_times", (a * b).max())):
        k = ep.compile(ep.sum((i, j), I[i, j] * M[i, j]), semiring=sr)
        off = ep.compile(ep.sum((i, j), I[i, j] * M[i, j]), semiring=sr,
                         tuning={"run_lanes": 0})
        assert LANES in k.c_source
        assert k(I=ta, M=tb) == off(I=ta, M=tb) == ref


def test_lanes_take_only_a_full_sum_of_values_the_row_does_not_change():
    rng = np.random.default_rng(5)
    a, b = _runs(rng, (6, 11), 3), _runs(rng, (6, 11), 3)
    v = rng.integers(1, 5, 6).astype(float)
    ta, tb = ep.Tensor.from_dense(a, "rle"), ep.Tensor.from_dense(b, "rle")
    x = ep.tensor("x", 1)
    rows = ep.compile(ep.sum(j, I[i, j] * M[i, j]))                 # an output a row
    weighted = ep.compile(ep.sum((i, j), I[i, j] * M[i, j] * x[i]))  # the row's value
    assert LANES not in rows.c_source
    np.testing.assert_array_equal(rows(I=ta, M=tb), (a * b).sum(axis=1))
    assert weighted(I=ta, M=tb, x=v) == np.sum(a * b * v[:, None])
    for k in (rows, weighted, ep.compile(ep.sum((i, j), I[i, j] * M[i, j]), tuning="noopt")):
        assert LANES not in k.c_source


def test_lanes_add_in_floating_point_within_rounding():
    rng = np.random.default_rng(11)
    a = _runs(rng, (40, 300), 7) * 0.1
    b = _runs(rng, (40, 300), 3) * 0.3
    ta, tb = ep.Tensor.from_dense(a, "rle"), ep.Tensor.from_dense(b, "rle")
    k = ep.compile(ep.sum((i, j), I[i, j] * M[i, j]))
    assert k(I=ta, M=tb) == pytest.approx(np.vdot(a, b), rel=1e-12)


@pytest.mark.parametrize("below", [0, 48, 10**6])
def test_long_runs_take_the_plain_loop_and_both_paths_agree(below):
    """run_lanes_below: lanes only where the list of fewer runs has a mean run
    below it (tested once a call); 0 takes the lanes with no test."""
    k = ep.compile(ep.sum((i, j), I[i, j] * M[i, j]), tuning={"run_lanes_below": below})
    assert LANES in k.c_source
    assert ("* 48)" in k.c_source) == (below == 48)
    rng = np.random.default_rng(below % 97)
    for longest in (4, 200):                 # mean runs about 2.5 and 100
        a, b = _runs(rng, (7, 600), 5, longest), _runs(rng, (7, 600), 2, longest)
        ta, tb = ep.Tensor.from_dense(a, "rle"), ep.Tensor.from_dense(b, "rle")
        assert k(I=ta, M=tb) == np.vdot(a, b)
