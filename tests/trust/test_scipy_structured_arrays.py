"""scipy dia and bsr inputs whose arrays were rebound or written after scipy built
them (runtime.structured_inputs.checked): a kernel of any declared format, and
ep.Tensor.from_scipy, give the right answer or an InputError naming the input;
never a generic error from inside scipy or etchpy, never a crash. scipy's own
conversions trust the arrays: a dia offset beyond int32 wrapped in its dia_tocsr,
which then wrote past its output (heap corruption seen under ASan)."""
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings, strategies as st

import etchpy as ep
from etchpy.errors import InputError

FORMATS = ["dense", "csr", "banded", "uniform_band", "blocks", "bsr"]
X = np.arange(1.0, 7.0)


def kernel(fmt):
    return ep.compile("y[i] = A[i,j] * x[j]", formats={"A": fmt}, name=f"sa_{fmt}")


def dia(data, offsets):
    m = sp.dia_array((np.ones((1, 6)), [0]), shape=(6, 6))
    m.data, m.offsets = np.asarray(data), np.asarray(offsets)
    return m


def bsr(**arrays):
    m = sp.bsr_array(np.kron(np.eye(3), np.ones((2, 2))), blocksize=(2, 2))
    for name, a in arrays.items():
        setattr(m, name, a)
    return m


def scipy_dense(m):
    """m's matrix as scipy's own arrays mean it (dia: its diagonals added up)."""
    if m.format == "dia":
        out = np.zeros(m.shape)
        for k, off in enumerate(np.asarray(m.offsets, dtype=np.int64)):
            for r in range(m.shape[0]):
                c = r + off
                if 0 <= c < min(m.shape[1], m.data.shape[1]):
                    out[r, c] += m.data[k, c]
        return out
    return m.toarray()


def answered_or_refused(m, fmt):
    """Every entry point on `m`: the right answer, or an InputError naming 'A'."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ep.PerformanceWarning)
        for call in (lambda: kernel(fmt)(A=m, x=X),
                     lambda: ep.Tensor.from_scipy(m, None if fmt == "dense" else fmt,
                                                  name="A").to_dense() @ X):
            try:
                got = call()
            except InputError as err:
                assert "'A'" in str(err), err
                continue
            np.testing.assert_allclose(got, scipy_dense(m) @ X)


# the minimal cases found by hand: each was an IndexError, a scipy ValueError or
# a ZeroDivisionError, or (the huge offset) heap corruption in scipy's dia_tocsr
DIA = {"offsets short": ([[1.0] * 6] * 2, [0]), "offsets long": ([[1.0] * 6], [0, 1]),
       "data 1-d": ([1.0] * 6, [0]), "offsets float": ([[1.0] * 6], [0.5]),
       "offsets 2-d": ([[1.0] * 6], [[0]]), "offsets repeated": ([[1.0] * 6] * 2, [0, 0]),
       "offset beyond int32": ([[1.0] * 6], [2**40]), "no diagonal": (np.ones((0, 6)), [])}
BSR = {"data 2-d": {"data": np.ones((3, 4))}, "block too big": {"data": np.ones((3, 4, 4))},
       "empty blocks": {"data": np.ones((3, 0, 2))}, "indptr short": {"indptr": np.array([0, 1])},
       "indices float": {"indices": np.array([0.0, 1.0, 2.0])},
       "indices long": {"indices": np.array([0, 1, 2, 0])},
       "index out of range": {"indices": np.array([0, 1, 3])},
       "indptr falling": {"indptr": np.array([0, 2, 1, 3])}}


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("case", sorted(DIA))
def test_a_malformed_dia_input(case, fmt):
    data, offsets = DIA[case]
    answered_or_refused(dia(np.asarray(data, dtype=float), offsets), fmt)


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("case", sorted(BSR))
def test_a_malformed_bsr_input(case, fmt):
    answered_or_refused(bsr(**BSR[case]), fmt)


def test_the_caller_s_dia_array_is_not_changed():
    m = dia([[1.0] * 6, [2.0] * 6], [0, 10])
    answered_or_refused(m, "csr")
    assert list(m.offsets) == [0, 10] and m.data.shape == (2, 6)


OFFSETS = st.integers(-8, 8) | st.sampled_from([2**31, -(2**31) - 1, 2**40, -(2**62)])


@settings(max_examples=25)
@given(fmt=st.sampled_from(FORMATS), offsets=st.lists(OFFSETS, max_size=4),
       rows=st.integers(0, 5), width=st.integers(0, 9))
def test_dia_arrays_of_any_offsets_and_widths(fmt, offsets, rows, width):
    """data of `rows` diagonals of `width` cells, offsets drawn apart from it."""
    data = np.arange(1.0, rows * width + 1).reshape(rows, width)
    answered_or_refused(dia(data, np.array(offsets, dtype=np.int64)), fmt)


@settings(max_examples=25)
@given(fmt=st.sampled_from(FORMATS), block=st.tuples(st.integers(0, 4), st.integers(0, 4)),
       nblocks=st.integers(0, 4), indices=st.lists(st.integers(-2, 4), max_size=5),
       indptr=st.lists(st.integers(-1, 5), max_size=5))
def test_bsr_arrays_of_any_blocks_and_pointers(fmt, block, nblocks, indices, indptr):
    m = bsr(data=np.ones((nblocks, *block)), indices=np.array(indices, dtype=np.int64),
            indptr=np.array(indptr, dtype=np.int64))
    answered_or_refused(m, fmt)
