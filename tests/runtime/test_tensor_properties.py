"""Property tests of etchpy.runtime.tensor.Tensor: round trips through every
format, the packed stable sort, several value columns built at once."""
from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from etchpy.errors import InputError
from etchpy.formats import Format
from etchpy.semiring import semirings
from etchpy.runtime.entries import stable_argsort as _stable_argsort
from etchpy.runtime.tensor import Tensor
from tensor_cases import FORMATS


# -- property -----------------------------------------------------------------------
@st.composite
def level_formats(draw, order):
    """Any valid Format of `order` levels, with a random mode order."""
    kinds = []
    for k in range(order):
        if k > 0 and kinds[-1].endswith("nonunique"):
            choices = ["singleton", "singleton-nonunique"]
        else:
            choices = ["dense", "compressed", "compressed-nonunique"]
        if k == order - 1:      # a non-unique level needs a singleton below it
            choices = [c for c in choices if not c.endswith("nonunique")]
        kinds.append(draw(st.sampled_from(choices)))
    mode_order = draw(st.permutations(range(order)))
    return Format(kinds, mode_order)


@st.composite
def sparse_cases(draw):
    order = draw(st.integers(0, 4))
    shape = tuple(draw(st.lists(st.integers(0, 4), min_size=order, max_size=order)))
    size = int(np.prod(shape, dtype=np.int64))
    flat = draw(st.lists(st.integers(-3, 3).map(lambda v: v if abs(v) < 3 else 0),
                         min_size=size, max_size=size))
    array = np.array(flat, dtype=np.int64).reshape(shape)
    named = st.sampled_from(FORMATS[order] if order in (0, 1, 3, 4) else FORMATS[2])
    fmt = draw(st.one_of(named, level_formats(order)))
    other = draw(st.one_of(named, level_formats(order)))
    seed = draw(st.integers(0, 2**32 - 1))
    return array, fmt, other, seed


@settings(max_examples=150, deadline=None)
@given(sparse_cases())
def test_property_round_trips(case):
    array, fmt, other, seed = case
    ring = semirings.integer
    t = Tensor.from_dense(array, fmt, semiring=ring)
    t.validate()
    np.testing.assert_array_equal(t.to_dense(), array)
    u = t.convert(other)
    u.validate()
    np.testing.assert_array_equal(u.to_dense(), array)

    # Shuffle the stored entries and split some into two summands.
    coords, values = t.to_coords()
    rng = np.random.default_rng(seed)
    split = rng.random(len(values)) < 0.3
    parts = rng.integers(-5, 5, size=len(values))
    coords = np.concatenate([coords, coords[:, split]], axis=1)
    values = np.concatenate([values - np.where(split, parts, 0), parts[split]])
    perm = rng.permutation(len(values))
    w = Tensor.from_coords(coords[:, perm], values[perm], array.shape, other, semiring=ring)
    w.validate()
    np.testing.assert_array_equal(w.to_dense(), array)

    if array.ndim == 2:
        m = sp.csr_array(array)
        np.testing.assert_array_equal(Tensor.from_scipy(m, fmt, semiring=ring).to_dense(),
                                      array)
        np.testing.assert_array_equal(t.to_scipy().toarray(), array)


def test_index_arrays_int32_only_when_everything_fits():
    small = Tensor.from_coords([[0, 5]], [1.0, 2.0], (10,), "csf")
    assert small.levels[0]["crd"].dtype == np.int32
    big = 2**31 + 10
    wide = Tensor.from_coords([[0, big - 1]], [1.0, 2.0], (big,), "csf")
    assert all(v.dtype == np.int64 for v in wide.levels[0].values())
    np.testing.assert_array_equal(wide.levels[0]["crd"], [0, big - 1])


@given(st.lists(st.integers(0, 50), max_size=200), st.sampled_from([0, 2**40, 2**61]))
def test_packed_stable_argsort_is_numpys_stable_argsort(keys, offset):
    """from_coords sorts through key and position packed into one int64 (np.sort),
    or numpy's stable argsort when they do not fit (offset 2**61): the same
    permutation, ties in position order."""
    key = np.asarray(keys, dtype=np.int64) + offset
    if len(key) == 0:
        return
    np.testing.assert_array_equal(_stable_argsort(key), np.argsort(key, kind="stable"))


@given(st.lists(st.tuples(st.integers(0, 3), st.integers(0, 4), st.integers(-9, 9),
                          st.integers(-9, 9)), max_size=30),
       st.sampled_from(["csr", "csc", "coo", "dense", "dcsr"]),
       st.sampled_from(["real", "min_plus", "max_times"]))
def test_several_value_columns_build_as_one_column_each(entries, fmt, semiring):
    """from_coords_columns (one sort and one grouping for every value column) gives
    the tensors from_coords builds one column at a time, duplicates combined."""
    coords = np.array([[e[0] for e in entries], [e[1] for e in entries]],
                      dtype=np.int64).reshape(2, len(entries))
    cols = [np.array([e[k] for e in entries], dtype=float) for k in (2, 3)]
    built = Tensor.from_coords_columns(coords, cols, (4, 5), fmt, semiring=semiring)
    for col, t in zip(cols, built):
        one = Tensor.from_coords(coords, col, (4, 5), fmt, semiring=semiring)
        np.testing.assert_array_equal(t.to_dense(), one.to_dense())
        assert t.nnz == one.nnz


def test_several_value_columns_must_each_match_the_coordinates():
    with pytest.raises(InputError, match="'T'.*1 values for 2 coordinates"):
        Tensor.from_coords_columns([[1, 0]], [[5.0, 7.0], [1.0]], (2,), name="T")
