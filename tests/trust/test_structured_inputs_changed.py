"""scipy bsr and dia inputs written in place between calls (issue 41): the next
call gives the right answer or an InputError naming the input, never a crash.
A bsr input read as format bsr is bound over scipy's own arrays (a tile level);
otherwise runtime.structured_inputs regroups the values and builds the index
arrays on every call. Either way the binding checks, on every call, what it
reads: bsr's indptr and indices, dia's offsets."""
import warnings

import numpy as np
import pytest
import scipy.sparse as sp

import etchpy as ep
from etchpy.errors import InputError

RNG = np.random.default_rng(7)
D = RNG.random((8, 8)) * (RNG.random((8, 8)) < 0.4)
D[0, :2] = 1.0                       # block row 0 holds a block


def _bsr(blocksize):
    return sp.bsr_array(D, blocksize=blocksize)


def _dia():
    return sp.dia_array(sp.diags([RNG.random(8), RNG.random(7)], [0, 1], shape=(8, 8)))


def _write(m, attr, at, value):
    getattr(m, attr)[at] = value


BSR = [("data", ..., 3.0), ("indices", 0, 99), ("indices", 0, -1), ("indptr", -1, 999),
       ("indptr", 1, 0), ("indices", slice(0, 2), [1, 0])]
DIA = [("data", ..., 2.0), ("offsets", 1, 10 ** 6), ("offsets", 1, 0), ("offsets", 1, 9),
       ("offsets", 1, -9), ("offsets", 0, -7)]


@pytest.mark.parametrize("fmt", ["blocks", "bsr"])
@pytest.mark.parametrize("blocksize", [(1, 2), (2, 2)])
@pytest.mark.parametrize("attr, at, value", BSR)
def test_a_bsr_input_written_in_place(fmt, blocksize, attr, at, value):
    _changed(_bsr(blocksize), fmt, attr, at, value)


@pytest.mark.parametrize("fmt", ["banded", "uniform_band"])
@pytest.mark.parametrize("attr, at, value", DIA)
def test_a_dia_input_written_in_place(fmt, attr, at, value):
    _changed(_dia(), fmt, attr, at, value)


def _changed(m, fmt, attr, at, value):
    kern = ep.compile("y[i] = A[i,j] * x[j]", formats={"A": fmt})
    x = RNG.random(m.shape[1])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ep.PerformanceWarning)
        assert np.allclose(kern(A=m, x=x), m.toarray() @ x)
        _write(m, attr, at, value)
        try:
            y = kern(A=m, x=x)
        except InputError as err:
            assert "'A'" in str(err)
            return
    assert np.allclose(y, _dense(m) @ x)


def _dense(m):
    """m's matrix as scipy reads its arrays (a dia's diagonals added up)."""
    if m.format == "dia":
        out = np.zeros(m.shape)
        for k, off in enumerate(m.offsets):
            for r in range(m.shape[0]):
                if 0 <= r + off < min(m.shape[1], m.data.shape[1]):
                    out[r, r + off] += m.data[k, r + off]
        return out
    return m.toarray()
