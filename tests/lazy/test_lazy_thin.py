"""A sparse input times a dense matrix of 1-16 columns (Tuning.lazy_thin_loop,
etchpy.lazy.thin): a C loop that checks the input's index arrays in its walk
runs a scipy product step's X·W and Xᵀ·W, csr and csc, int32 and int64
indices, equal to scipy's to rounding, on replays; arrays written in place
give ep.lazy's InputError; switched off (or 17 columns), scipy's loop runs."""
import numpy as np
import pytest
import scipy.sparse as sp

import etchpy as ep
from etchpy.errors import InputError
from etchpy.lazy import thin

pytestmark = pytest.mark.usefixtures("shared_cache")

OFF = ep.Tuning(lazy_thin_loop=False)


def _matrix(fmt, index, shape=(50, 37), seed=1):
    x = sp.random_array(shape, density=0.15, format=fmt, random_state=seed)
    x.indices, x.indptr = x.indices.astype(index), x.indptr.astype(index)
    return x


@pytest.mark.parametrize("fmt", ["csr", "csc"])
@pytest.mark.parametrize("index", [np.int32, np.int64])
def test_every_column_count_equals_scipy(fmt, index):
    rng = np.random.default_rng(0)
    x = _matrix(fmt, index)
    for k in range(1, thin.COLUMNS + 2):
        for flip in (False, True):
            d = rng.standard_normal((x.shape[1 - flip], k))
            got = thin.product(x, flip, d)
            if k > thin.COLUMNS:
                assert got is None
                continue
            np.testing.assert_allclose(got, (x.T if flip else x) @ d, rtol=1e-13, atol=1e-14)


def test_unsorted_and_duplicate_entries_are_summed_as_stored():
    x = sp.csr_array((np.array([1.0, 2.0, 3.0, 4.0]), np.array([2, 0, 2, 1]),
                      np.array([0, 3, 3, 4])), shape=(3, 3))
    d = np.arange(12.0).reshape(3, 4)
    for flip in (False, True):
        np.testing.assert_allclose(thin.product(x, flip, d), (x.T if flip else x) @ d)


@pytest.mark.parametrize("fmt", ["csr", "csc"])
def test_a_program_runs_the_loop_unless_switched_off(fmt):
    rng = np.random.default_rng(1)
    x = _matrix(fmt, np.int32, (40, 30))
    w, v = rng.standard_normal((30, 10)), rng.standard_normal((40, 10))
    i32 = np.dtype(np.int32)
    for tuning, made in ((OFF, set()), (None, {(i32, True), (i32, False)})):
        thin._entries.clear()       # a loop's entry is looked up on its first use: which ran
        for _ in range(3):                  # recorded, replayed, values written in place
            a, b = ep.compute(ep.lazy(x) @ ep.lazy(w), ep.lazy(x).T @ ep.lazy(v), tuning=tuning)
            np.testing.assert_allclose(a, x @ w, rtol=1e-13, atol=1e-14)
            np.testing.assert_allclose(b, x.T @ v, rtol=1e-13, atol=1e-14)
            x.data *= -1.5
        assert set(thin._entries) == made


WRITES = {
    "past": lambda x: x.indices.__setitem__(3, x.shape[1] if x.format == "csr" else x.shape[0]),
    "far": lambda x: x.indices.__setitem__(-1, 2**31 - 1),
    "negative": lambda x: x.indices.__setitem__(0, -5),
    "falls": lambda x: x.indptr.__setitem__(5, x.indptr[-1] + 100),
    "first": lambda x: x.indptr.__setitem__(0, 1),
    "last": lambda x: x.indptr.__setitem__(-1, x.indptr[-1] - 1),
}


@pytest.mark.parametrize("how", sorted(WRITES))
@pytest.mark.parametrize("fmt", ["csr", "csc"])
@pytest.mark.parametrize("flip", [False, True])
def test_arrays_written_in_place_give_an_input_error(how, fmt, flip):
    """Between two computes of one program (a replay) and straight to the loop."""
    rng = np.random.default_rng(2)
    x = _matrix(fmt, np.int32, (40, 30))
    d = rng.standard_normal((x.shape[1 - flip], 10))
    prog = (lambda: ep.lazy(x).T @ ep.lazy(d)) if flip else (lambda: ep.lazy(x) @ ep.lazy(d))
    ep.compute(prog())
    WRITES[how](x)
    with pytest.raises(InputError, match="ep.lazy's operand"):
        thin.product(x, flip, d)
    with pytest.raises(InputError, match="ep.lazy's operand"):
        ep.compute(prog())


def test_other_operands_are_left_to_scipy():
    x = _matrix("csr", np.int32, (20, 10))
    d = np.ones((10, 3))
    assert thin.product(x, False, d.astype(np.float32)) is None
    assert thin.product(x, False, np.asfortranarray(np.ones((10, 3)))[:, :2]) is None
    assert thin.product(x, False, np.ones(10)) is None              # a vector: the kernel's
    assert thin.product(x.astype(np.float32), False, d) is None
    assert thin.product(sp.csr_array((20, 10)), False, d) is None   # no entries
    assert thin.product(x, False, np.ones((20, 3))) is None          # shapes disagree
