"""Tests of etchpy.runtime.tensor.Tensor: duplicates and order made canonical,
semiring values, and malformed scipy input and coordinates rejected by name."""
from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

from etchpy.errors import FormatError, InputError
from etchpy.semiring import semirings
from etchpy.runtime.tensor import Tensor


# -- canonicalisation ---------------------------------------------------------------
def messy_csr(cls=sp.csr_array):
    """Row 0 holds columns 2, 0, 2 (unsorted, duplicate); row 1 holds column 1."""
    indptr = np.array([0, 3, 4], dtype=np.int32)
    indices = np.array([2, 0, 2, 1], dtype=np.int32)
    data = np.array([1.0, 2.0, 3.0, 4.0])
    return cls((data, indices, indptr), shape=(2, 3))


def snapshot(m):
    return [a.copy() for a in (m.indptr, m.indices, m.data)]


@pytest.mark.parametrize("semiring,combined", [(semirings.real, 4.0),
                                               (semirings.min_plus, 1.0),
                                               (semirings.max_plus, 3.0)],
                         ids=["real", "min_plus", "max_plus"])
@pytest.mark.parametrize("cls", [sp.csr_array, sp.csr_matrix])
def test_scipy_duplicates_combined_without_mutation(semiring, combined, cls):
    m = messy_csr(cls)
    before = snapshot(m)
    t = Tensor.from_scipy(m, semiring=semiring)
    t.validate()
    np.testing.assert_array_equal(t.levels[1]["crd"], [0, 2, 1])
    np.testing.assert_array_equal(t.vals, [2.0, combined, 4.0])
    for old, new in zip(before, snapshot(m)):
        np.testing.assert_array_equal(old, new)
    assert not np.shares_memory(t.vals, m.data)


def test_scipy_csc_unsorted_and_coo_duplicates():
    csc = sp.csc_array((np.array([5.0, 6.0, 7.0]), np.array([1, 0, 1]),
                        np.array([0, 3, 3])), shape=(2, 2))
    before = snapshot(csc)
    t = Tensor.from_scipy(csc)
    np.testing.assert_array_equal(t.to_dense(), [[6.0, 0.0], [12.0, 0.0]])
    for old, new in zip(before, snapshot(csc)):
        np.testing.assert_array_equal(old, new)
    coo = sp.coo_array((np.array([1.0, 2.0, 3.0]), (np.array([1, 0, 1]),
                                                    np.array([1, 0, 1]))), shape=(2, 2))
    t = Tensor.from_scipy(coo, semiring=semirings.min_plus)
    np.testing.assert_array_equal(t.to_dense(), [[2.0, np.inf], [np.inf, 1.0]])
    assert coo.nnz == 3


@pytest.mark.parametrize("semiring", [semirings.real, semirings.integer, semirings.boolean,
                                      semirings.min_plus, semirings.max_times], ids=str)
def test_from_coords_combines_duplicates(semiring):
    coords = [[2, 0, 2, 2, 1], [1, 1, 1, 0, 1]]
    values = [1, 1, 1, 1, 0]
    t = Tensor.from_coords(coords, values, (3, 2), "csr", semiring=semiring)
    t.validate()
    assert t.dtype == semiring.dtype
    np.testing.assert_array_equal(t.levels[1]["crd"], [1, 1, 0, 1])
    expected_dup = semiring.add(semiring.dtype.type(1), semiring.dtype.type(1))
    np.testing.assert_array_equal(t.vals, semiring.cast(np.array([1, 0, 1, expected_dup])))


def test_from_coords_accepts_per_mode_sequences():
    rows = np.array([1, 0], dtype=np.int32)
    cols = np.array([0, 2], dtype=np.int64)
    t = Tensor.from_coords((rows, cols), [1.0, 2.0], (2, 3), "csr")
    np.testing.assert_array_equal(t.to_dense(), [[0, 0, 2], [1, 0, 0]])
    t = Tensor.from_coords([3, 1], [1.0, 2.0], (4,), "csf")     # order 1: flat coords
    np.testing.assert_array_equal(t.to_dense(), [0, 2, 0, 1])


# -- semiring values ----------------------------------------------------------------
def test_min_plus_keeps_explicit_zero_and_fills_infinity():
    t = Tensor.from_coords([[0, 2]], [0.0, 5.0], (4,), "csf", semiring=semirings.min_plus)
    assert t.nnz == 2 and t.fill == np.inf
    np.testing.assert_array_equal(t.to_dense(), [0.0, np.inf, 5.0, np.inf])
    t = Tensor.from_dense(np.array([[np.inf, 0.0], [3.0, np.inf]]), "csr",
                          semiring=semirings.min_plus)
    np.testing.assert_array_equal(t.vals, [0.0, 3.0])
    np.testing.assert_array_equal(t.to_dense(), [[np.inf, 0.0], [3.0, np.inf]])
    with pytest.raises(InputError, match="fill"):
        t.to_scipy()


def test_real_keeps_explicit_zero():
    t = Tensor.from_coords([[1], [1]], [0.0], (2, 2), "dcsr")
    assert t.nnz == 1 and t.convert("coo").nnz == 1


def test_nan_is_stored_under_real():
    a = np.array([0.0, np.nan, 1.0])
    t = Tensor.from_dense(a, "csf")
    assert t.nnz == 2 and np.isnan(t.vals[0])


def test_nan_rejected_by_boolean():
    with pytest.raises(InputError, match="NaN"):
        Tensor.from_dense(np.array([np.nan, 1.0]), "csf", semiring=semirings.boolean)
    with pytest.raises(InputError, match="NaN"):
        Tensor.from_scipy(sp.csr_array(np.array([[np.nan, 1.0]])),
                          semiring=semirings.boolean)
    with pytest.raises(InputError, match="NaN"):
        Tensor.from_coords([[0]], [np.nan], (1,), semiring=semirings.boolean)


def test_boolean_from_zero_one_floats():
    t = Tensor.from_dense(np.array([[0.0, 1.0], [1.0, 0.0]]), "csr",
                          semiring=semirings.boolean)
    assert t.dtype == np.bool_ and t.fill == np.False_ and t.nnz == 2
    assert t.to_scipy().dtype == np.bool_


# -- malformed scipy input ----------------------------------------------------------
def broken_csr(**changes):
    m = sp.csr_array(np.array([[1.0, 0.0, 2.0], [0.0, 3.0, 0.0]]))
    for attr, value in changes.items():
        setattr(m, attr, np.asarray(value))
    return m


@pytest.mark.parametrize("changes,message", [
    ({"indices": [0, 3, 1]}, "out of range"),
    ({"indices": [0, -1, 1]}, "negative"),
    ({"indptr": [0, 2]}, "indptr has length 2"),
    ({"indptr": [0, 1, 2]}, "indptr.*smaller than"),
    ({"indptr": [0, 3, 2]}, "nondecreasing"),
    ({"indptr": [0, 2, 4]}, "larger than"),
    ({"indptr": [1, 2, 3]}, r"indptr\[0\] must be 0"),
    ({"indices": [0.0, 2.0, 1.0]}, "integers"),
    ({"indptr": [0.0, 2.0, 3.0]}, "integers"),
    ({"data": [1.0, 2.0]}, "data"),
], ids=["out-of-range", "negative", "short-indptr", "indptr-end-small", "non-monotone",
        "indptr-end-large", "indptr-start", "float-indices", "float-indptr", "short-data"])
def test_malformed_csr_rejected(changes, message):
    m = broken_csr(**changes)
    with pytest.raises(InputError, match=message) as info:
        Tensor.from_scipy(m, name="A")
    assert "'A'" in str(info.value)


def test_indptr_end_smaller_than_indices_is_named():
    m = broken_csr(indptr=[0, 1, 2])
    with pytest.raises(InputError, match=r"indptr\[-1\] = 2 is smaller than the 3 entries"):
        Tensor.from_scipy(m, name="A")


def test_malformed_csc_and_coo_rejected():
    m = sp.csc_array(np.eye(3))
    m.indices = np.array([0, 1, 5], dtype=np.int32)
    with pytest.raises(InputError, match="'B'.*indices.*out of range"):
        Tensor.from_scipy(m, name="B")
    m = sp.coo_array(np.eye(3))
    m.coords = (m.coords[0], np.array([0, -2, 2], dtype=np.int32))
    with pytest.raises(InputError, match="'C'.*negative"):
        Tensor.from_scipy(m, name="C")


def test_scipy_claims_of_canonical_format_are_not_trusted():
    m = broken_csr()
    m.has_canonical_format = True
    m.indices = np.array([2, 0, 1], dtype=np.int32)      # row 0 now unsorted
    t = Tensor.from_scipy(m)
    np.testing.assert_array_equal(t.levels[1]["crd"], [0, 2, 1])
    np.testing.assert_array_equal(t.vals, [2.0, 1.0, 3.0])


def test_not_scipy_rejected():
    with pytest.raises(InputError, match="scipy"):
        Tensor.from_scipy(np.eye(2))


# -- malformed coordinates ------------------------------------------------------------
@pytest.mark.parametrize("coords,message", [
    ([[0, 3], [0, 0]], "out of range"),
    ([[0, -1], [0, 0]], "negative"),
    ([[0.0, 1.0], [0.0, 0.0]], "integers"),
    ([[0, 1]], "shape"),
    ([[0, 1, 2], [0, 0, 0]], "shape"),
], ids=["out-of-range", "negative", "float", "wrong-order", "wrong-nnz"])
def test_malformed_coords_rejected(coords, message):
    with pytest.raises(InputError, match=message):
        Tensor.from_coords(coords, [1.0, 2.0], (3, 3), "csr", name="A")


def test_bad_shape_and_format():
    with pytest.raises(InputError, match="negative size"):
        Tensor.from_coords([[0]], [1.0], (-1,))
    with pytest.raises(FormatError):
        Tensor.from_dense(np.zeros((2, 2, 2)), "csr")
    with pytest.raises(InputError, match="order 2"):
        Tensor.from_dense(np.zeros(3), "csf").to_scipy()
