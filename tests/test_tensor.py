"""Tests of etchpy.runtime.tensor.Tensor and runtime.convert: building, validating, listing and converting."""
from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from etchpy.errors import FormatError, InputError
from etchpy.formats import Compressed, Format, Singleton
from etchpy.semiring import semirings
from etchpy.runtime.entries import stable_argsort as _stable_argsort
from etchpy.runtime.tensor import Tensor

CUSTOM_CD = Format(["compressed", "dense"], (1, 0))
FORMATS = {
    0: ["dense", "coo", "csf"],
    1: ["dense", "coo", "csf"],
    2: ["dense", "csr", "csc", "dcsr", "coo", "csf", CUSTOM_CD],
    3: ["dense", "coo", "csf", Format(["dense", "compressed", "compressed"], (2, 0, 1)),
        Format(["compressed-nonunique", "singleton", "dense"], (1, 2, 0))],
    4: ["dense", "coo", "csf"],
}
SHAPES = {0: (), 1: (7,), 2: (5, 6), 3: (3, 4, 5), 4: (2, 3, 2, 3)}
ORDER_FORMATS = [(order, fmt) for order, fmts in FORMATS.items() for fmt in fmts]


def sparse_array(shape, density=0.4, seed=0):
    rng = np.random.default_rng(seed)
    values = rng.integers(1, 9, size=shape).astype(float)
    return np.where(rng.random(shape) < density, values, 0.0)


def csr(dense, cls=sp.csr_array):
    return cls(np.asarray(dense, dtype=float))


# -- round trips ------------------------------------------------------------------
@pytest.mark.parametrize("order,fmt", ORDER_FORMATS, ids=str)
def test_dense_round_trip(order, fmt):
    a = sparse_array(SHAPES[order])
    t = Tensor.from_dense(a, fmt, name="A")
    t.validate()
    assert t.format == Format.parse(fmt, order)
    assert t.to_dense().shape == a.shape
    np.testing.assert_array_equal(t.to_dense(), a)


@pytest.mark.parametrize("order,fmt", ORDER_FORMATS, ids=str)
def test_coords_round_trip(order, fmt):
    a = sparse_array(SHAPES[order], seed=1)
    coords, values = Tensor.from_dense(a, fmt).to_coords()
    assert coords.dtype == np.int64 and coords.shape == (order, len(values))
    back = Tensor.from_coords(coords, values, a.shape, fmt)
    np.testing.assert_array_equal(back.to_dense(), a)


@pytest.mark.parametrize("order,fmt", ORDER_FORMATS, ids=str)
def test_convert_to_every_format(order, fmt):
    a = sparse_array(SHAPES[order], seed=2)
    t = Tensor.from_dense(a, fmt)
    for target in FORMATS[order]:
        u = t.convert(target)
        u.validate()
        assert u.format == Format.parse(target, order)
        np.testing.assert_array_equal(u.to_dense(), a)
    assert t.convert(t.format) is t


@pytest.mark.parametrize("fmt", FORMATS[2], ids=str)
def test_scipy_round_trip(fmt):
    a = sparse_array((5, 6), seed=3)
    for source in (sp.csr_array(a), sp.csc_matrix(a), sp.coo_array(a)):
        t = Tensor.from_scipy(source, fmt)
        t.validate()
        np.testing.assert_array_equal(t.to_dense(), a)
        back = t.to_scipy()
        expected = sp.csc_array if t.format == Format.named("csc", 2) else sp.csr_array
        assert isinstance(back, expected)
        np.testing.assert_array_equal(back.toarray(), a)


def test_scipy_default_formats():
    a = sparse_array((4, 5))
    assert Tensor.from_scipy(sp.csr_matrix(a)).format == Format.named("csr", 2)
    assert Tensor.from_scipy(sp.csc_array(a)).format == Format.named("csc", 2)
    assert Tensor.from_scipy(sp.coo_matrix(a)).format == Format.named("coo", 2)
    assert Tensor.from_scipy(sp.bsr_array(a)).format == Format.named("blocks", 2)   # issue 40
    tri = sp.diags_array([1.0, 2.0, 3.0], offsets=[-1, 0, 1], shape=(4, 5))
    assert Tensor.from_scipy(sp.dia_array(tri)).format == Format.named("uniform_band", 2)
    assert Tensor.from_scipy(sp.dia_array(a)).format == Format.named("banded", 2)  # wide
    for other in (sp.lil_array(a), sp.dok_array(a)):
        t = Tensor.from_scipy(other)
        assert t.format == Format.named("coo", 2)
        np.testing.assert_array_equal(t.to_dense(), a)


def test_scipy_one_dimensional_coo():
    v = np.array([0.0, 1.5, 0.0, 2.0])
    t = Tensor.from_scipy(sp.coo_array(v), "csf")
    np.testing.assert_array_equal(t.to_dense(), v)


def test_layouts_of_named_formats():
    a = np.array([[0.0, 1.0, 0.0], [2.0, 0.0, 3.0], [0.0, 0.0, 0.0]])
    t = Tensor.from_dense(a, "csr")
    np.testing.assert_array_equal(t.levels[1]["pos"], [0, 1, 3, 3])
    np.testing.assert_array_equal(t.levels[1]["crd"], [1, 0, 2])
    np.testing.assert_array_equal(t.vals, [1.0, 2.0, 3.0])
    t = Tensor.from_dense(a, "csc")
    np.testing.assert_array_equal(t.levels[1]["pos"], [0, 1, 2, 3])
    np.testing.assert_array_equal(t.levels[1]["crd"], [1, 0, 1])
    np.testing.assert_array_equal(t.vals, [2.0, 1.0, 3.0])
    t = Tensor.from_dense(a, "dcsr")
    np.testing.assert_array_equal(t.levels[0]["pos"], [0, 2])
    np.testing.assert_array_equal(t.levels[0]["crd"], [0, 1])
    t = Tensor.from_dense(a, "coo")
    np.testing.assert_array_equal(t.levels[0]["pos"], [0, 3])
    np.testing.assert_array_equal(t.levels[0]["crd"], [0, 1, 1])
    np.testing.assert_array_equal(t.levels[1]["crd"], [1, 0, 2])
    assert all(v.dtype == np.int32 for lv in t.levels for v in lv.values())   # narrowest fit


def test_custom_compressed_dense_column_major():
    a = np.array([[0.0, 1.0, 0.0], [0.0, 2.0, 0.0], [0.0, 0.0, 0.0]])
    t = Tensor.from_dense(a, CUSTOM_CD)
    np.testing.assert_array_equal(t.levels[0]["crd"], [1])     # only column 1 stored
    np.testing.assert_array_equal(t.vals, [1.0, 2.0, 0.0])      # that column, densely
    coords, values = t.to_coords()
    np.testing.assert_array_equal(coords, [[0, 1, 2], [1, 1, 1]])
    # Converting away from a dense last level drops the padding.
    assert t.convert("csr").nnz == 2
    np.testing.assert_array_equal(t.to_scipy().toarray(), a)


def test_to_coords_in_storage_order():
    a = np.array([[0.0, 1.0], [2.0, 3.0]])
    coords, values = Tensor.from_dense(a, "csc").to_coords()
    np.testing.assert_array_equal(coords, [[1, 0, 1], [0, 1, 1]])
    np.testing.assert_array_equal(values, [2.0, 1.0, 3.0])


def test_coo_nonunique_level_has_one_position_per_entry():
    coords = [[0, 0, 1], [1, 2, 0], [3, 1, 2]]
    t = Tensor.from_coords(coords, [1.0, 2.0, 3.0], (2, 3, 4), "coo")
    assert t.format.levels == (Compressed(False), Singleton(False), Singleton())
    np.testing.assert_array_equal(t.levels[0]["crd"], [0, 0, 1])
    np.testing.assert_array_equal(t.levels[1]["crd"], [1, 2, 0])
    np.testing.assert_array_equal(t.levels[2]["crd"], [3, 1, 2])


# -- edge cases -------------------------------------------------------------------
@pytest.mark.parametrize("shape", [(0,), (0, 3), (3, 0), (2, 0, 2), (1,), (1, 1), (1, 5, 1)],
                         ids=str)
@pytest.mark.parametrize("kind", ["zeros", "one", "full"])
def test_edge_shapes(shape, kind):
    a = np.zeros(shape)
    if kind == "one" and a.size:
        a.reshape(-1)[a.size // 2] = 4.0
    if kind == "full":
        a += 2.0
    for fmt in FORMATS[len(shape)]:
        t = Tensor.from_dense(a, fmt)
        t.validate()
        np.testing.assert_array_equal(t.to_dense(), a)
        if len(shape) == 2:
            np.testing.assert_array_equal(Tensor.from_scipy(sp.csr_array(a), fmt)
                                          .to_scipy().toarray(), a)


def test_empty_sparse_tensor_has_no_values():
    t = Tensor.from_coords(np.zeros((2, 0), dtype=np.int64), [], (3, 4), "csr")
    assert t.nnz == 0
    np.testing.assert_array_equal(t.levels[1]["pos"], [0, 0, 0, 0])
    np.testing.assert_array_equal(t.to_dense(), np.zeros((3, 4)))
    t = Tensor.from_coords([[], []], [], (3, 4), "dcsr")      # empty float lists are fine
    assert t.nnz == 0 and t.levels[0]["pos"].tolist() == [0, 0]


def test_order_zero():
    t = Tensor.from_dense(np.float64(2.5))
    assert t.levels == () and t.vals.tolist() == [2.5] and t.to_dense() == 2.5
    t = Tensor.from_coords(np.zeros((0, 3)), [1.0, 2.0, 3.0], (), "coo")
    assert t.vals.tolist() == [6.0]
    t = Tensor.from_coords(np.zeros((0, 0)), [], (), "coo")
    assert t.vals.tolist() == [0.0]


def test_repr_and_properties():
    t = Tensor.from_dense(np.eye(3), "csr", name="I")
    assert t.nnz == 3 and t.order == 2 and t.dtype == np.float64
    assert repr(t) == "Tensor('I', shape=(3, 3), format=csr, nnz=3, dtype=float64)"


# -- zero copy --------------------------------------------------------------------
@pytest.mark.parametrize("cls", [sp.csr_array, sp.csr_matrix, sp.csc_array, sp.csc_matrix])
def test_scipy_compressed_input_shares_its_values_not_its_index_arrays(cls):
    """The values are shared; the index arrays are the Tensor's own immutable copies,
    so changing the scipy input's afterwards cannot break the validated Tensor."""
    m = cls(sparse_array((6, 5), seed=4))
    t = Tensor.from_scipy(m)
    assert np.shares_memory(t.vals, m.data)
    assert not np.shares_memory(t.levels[1]["pos"], m.indptr)
    assert not np.shares_memory(t.levels[1]["crd"], m.indices)
    assert t.levels[1]["crd"].dtype == m.indices.dtype       # int32 kept
    m.indices[0] = 10**9
    assert t.levels[1]["crd"][0] < t.shape[1 if m.format == "csr" else 0]


def test_scipy_other_layout_is_copied():
    m = sp.csr_array(sparse_array((6, 5), seed=5))
    t = Tensor.from_scipy(m, "csc")
    assert not np.shares_memory(t.vals, m.data)
    np.testing.assert_array_equal(t.to_dense(), m.toarray())


def test_numpy_c_order_is_shared():
    a = sparse_array((3, 4, 5))
    t = Tensor.from_dense(a)
    assert t.format == Format.named("dense", 3) and t.format.mode_order == (0, 1, 2)
    assert np.shares_memory(t.vals, a)


def test_numpy_fortran_order_is_shared():
    a = np.asfortranarray(sparse_array((3, 4, 5)))
    t = Tensor.from_dense(a)
    assert t.format.is_dense and t.format.mode_order == (2, 1, 0)
    assert np.shares_memory(t.vals, a)
    np.testing.assert_array_equal(t.to_dense(), a)


def test_numpy_transposed_view_is_shared():
    base = np.arange(24.0).reshape(2, 3, 4)
    a = base.transpose(1, 2, 0)
    t = Tensor.from_dense(a)
    assert t.format.mode_order == (2, 0, 1)
    assert np.shares_memory(t.vals, base)
    np.testing.assert_array_equal(t.to_dense(), a)
    assert not np.shares_memory(t.to_dense(), base)       # to_dense returns a copy


def test_numpy_strided_view_is_copied():
    a = np.arange(20.0).reshape(4, 5)[:, ::2]
    t = Tensor.from_dense(a)
    assert t.format.mode_order == (0, 1) and not np.shares_memory(t.vals, a)
    np.testing.assert_array_equal(t.to_dense(), a)


def test_explicit_dense_format_keeps_requested_mode_order():
    a = np.asfortranarray(sparse_array((3, 4)))
    t = Tensor.from_dense(a, "dense")
    assert t.format.mode_order == (0, 1)
    np.testing.assert_array_equal(t.to_dense(), a)
    t = Tensor.from_dense(a, Format(["dense", "dense"], (1, 0)))
    assert np.shares_memory(t.vals, a)


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


# -- validate() -------------------------------------------------------------------------
def i64(*xs):
    return np.array(xs, dtype=np.int64)


CSR = Format.named("csr", 2)
COO = Format.named("coo", 2)
GOOD_CSR = ({}, {"pos": i64(0, 2, 3), "crd": i64(0, 2, 1)})


@pytest.mark.parametrize("fmt,levels,vals,message", [
    (CSR, ({}, {"pos": i64(0, 2), "crd": i64(0, 2)}), [1.0, 2.0], "pos has length 2"),
    (CSR, ({}, {"pos": i64(0, 2, 1), "crd": i64(0, 2)}), [1.0, 2.0], "nondecreasing"),
    (CSR, ({}, {"pos": i64(1, 2, 3), "crd": i64(0, 2, 1)}), [1.0] * 3, r"pos\[0\]"),
    (CSR, ({}, {"pos": i64(0, 2, 3), "crd": i64(0, 3, 1)}), [1.0] * 3, "out of range"),
    (CSR, ({}, {"pos": i64(0, 2, 3), "crd": i64(2, 0, 1)}), [1.0] * 3, "strictly increase"),
    (CSR, ({}, {"pos": i64(0, 2, 3), "crd": i64(1, 1, 1)}), [1.0] * 3, "strictly increase"),
    (CSR, GOOD_CSR, [1.0, 2.0], "vals has 2 entries"),
    (CSR, ({}, {"pos": i64(0, 2, 3), "crd": np.array([0, 2, 1], np.int16)}), [1.0] * 3,
     "int32 or int64"),
    (CSR, ({}, {"pos": i64(0, 2, 3)}), [1.0] * 3, "needs arrays"),
    (CSR, ({"crd": i64(0)}, GOOD_CSR[1]), [1.0] * 3, "dense level stores no arrays"),
    (CSR, (GOOD_CSR[1],), [1.0] * 3, "2 levels"),
    (COO, ({"pos": i64(0, 3), "crd": i64(0, 1, 0)}, {"crd": i64(0, 0, 1)}), [1.0] * 3,
     "not decrease"),
    (COO, ({"pos": i64(0, 3), "crd": i64(0, 1, 1)}, {"crd": i64(0, 2, 2)}), [1.0] * 3,
     r"duplicate coordinate \(1, 2\)"),
    (COO, ({"pos": i64(0, 3), "crd": i64(0, 1, 1)}, {"crd": i64(0, 2, 1)}), [1.0] * 3,
     r"unsorted within a run, \(1, 2\) is followed by \(1, 1\)"),
    (COO, ({"pos": i64(0, 3), "crd": i64(0, 1, 1)}, {"crd": i64(0, 2)}), [1.0] * 3,
     "one entry per parent"),
], ids=["short-pos", "pos-decreasing", "pos-start", "crd-range", "crd-unsorted",
        "crd-duplicate", "vals-length", "int16", "missing-crd", "dense-arrays",
        "level-count", "coo-decreasing", "coo-duplicate", "coo-unsorted",
        "singleton-length"])
def test_validate_rejects(fmt, levels, vals, message):
    with pytest.raises(InputError, match=message) as info:
        Tensor((2, 3), fmt, levels, np.array(vals), name="T")
    assert "'T'" in str(info.value)


# -- non-unique levels and their singleton children ---------------------------------------
@pytest.mark.parametrize("levels,message", [
    (["compressed-nonunique", "compressed"], "level 0 .* followed by a singleton"),
    (["compressed-nonunique", "dense"], "level 0 .* followed by a singleton"),
    (["compressed-nonunique"], "cannot be the last level"),
    (["dense", "compressed-nonunique"], "level 1 .* cannot be the last level"),
    (["compressed-nonunique", "singleton-nonunique"], "level 1 .* cannot be the last"),
    (["compressed-nonunique", "singleton-nonunique", "compressed"],
     "level 1 .* followed by a singleton"),
    (["compressed", "compressed-nonunique", "dense"], "level 1 .* followed by a singleton"),
    (["singleton"], "must sit under another level"),
    (["singleton", "compressed"], "must sit under another level"),
], ids=str)
def test_nonunique_level_must_be_followed_by_singleton(levels, message):
    with pytest.raises(FormatError, match=message):
        Format(levels)


def test_named_and_singleton_formats_still_construct():
    for order in range(1, 5):
        for name in ("coo", "csf", "dense"):
            assert Format.named(name, order).order == order
    for name in ("csr", "csc", "dcsr"):
        assert Format.named(name, 2).order == 2
    assert Format.named("coo", 1).levels == (Compressed(),)
    assert Format(["compressed-nonunique", "singleton"]).order == 2
    assert Format(["dense", "compressed-nonunique", "singleton-nonunique", "singleton",
                   "compressed"]).order == 5


NU_S = Format(["compressed-nonunique", "singleton"])
COO3 = Format.named("coo", 3)
NU_S_C = Format(["compressed-nonunique", "singleton", "compressed"])


@pytest.mark.parametrize("fmt,shape,levels,vals,message", [
    (NU_S, (1, 2), ({"pos": i64(0, 2), "crd": i64(0, 0)}, {"crd": i64(1, 1)}), [5.0, 7.0],
     r"level 1 \(singleton, mode 1\): duplicate coordinate \(0, 1\)"),
    (NU_S, (1, 2), ({"pos": i64(0, 2), "crd": i64(0, 0)}, {"crd": i64(1, 0)}), [5.0, 7.0],
     r"level 1 .*unsorted within a run, \(0, 1\) is followed by \(0, 0\)"),
    # coo of order 3: level 1 must not decrease within a level-0 run ...
    (COO3, (2, 3, 4), ({"pos": i64(0, 3), "crd": i64(1, 1, 1)}, {"crd": i64(0, 2, 1)},
                       {"crd": i64(0, 0, 0)}), [1.0] * 3,
     r"level 1 \(singleton-nonunique, mode 1\): coordinates unsorted within a run, "
     r"\(1, 2\) is followed by \(1, 1\).*must not decrease"),
    # ... and level 2 must strictly increase within a run of equal (level 0, level 1)
    (COO3, (2, 3, 4), ({"pos": i64(0, 3), "crd": i64(1, 1, 1)}, {"crd": i64(0, 2, 2)},
                       {"crd": i64(0, 3, 3)}), [1.0] * 3,
     r"level 2 \(singleton, mode 2\): duplicate coordinate \(1, 2, 3\)"),
    (COO3, (2, 3, 4), ({"pos": i64(0, 3), "crd": i64(1, 1, 1)}, {"crd": i64(0, 2, 2)},
                       {"crd": i64(0, 3, 1)}), [1.0] * 3,
     r"level 2 .*\(1, 2, 3\) is followed by \(1, 2, 1\).*strictly increase"),
    # A compressed level below the singleton hides the repeat from a listing of the
    # stored entries ((0, 1, 0) < (0, 1, 1)), but the singleton stream would still
    # emit coordinate 1 twice.
    (NU_S_C, (1, 2, 2), ({"pos": i64(0, 2), "crd": i64(0, 0)}, {"crd": i64(1, 1)},
                         {"pos": i64(0, 1, 2), "crd": i64(0, 1)}), [1.0, 2.0],
     r"level 1 .*duplicate coordinate \(0, 1\)"),
    (NU_S_C, (1, 2, 2), ({"pos": i64(0, 2), "crd": i64(0, 0)}, {"crd": i64(1, 0)},
                         {"pos": i64(0, 0, 1), "crd": i64(1)}), [1.0],
     r"level 1 .*unsorted within a run"),
], ids=["nu-s-duplicate", "nu-s-unsorted", "coo3-level1-unsorted", "coo3-level2-duplicate",
        "coo3-level2-unsorted", "nu-s-c-duplicate-hidden", "nu-s-c-unsorted-hidden"])
def test_singleton_order_within_parent_runs(fmt, shape, levels, vals, message):
    with pytest.raises(InputError, match=message) as info:
        Tensor(shape, fmt, levels, np.array(vals), name="T")
    assert "'T'" in str(info.value)


@pytest.mark.parametrize("fmt,shape,levels,vals,dense", [
    (NU_S, (1, 2), ({"pos": i64(0, 2), "crd": i64(0, 0)}, {"crd": i64(0, 1)}), [5.0, 7.0],
     [[5.0, 7.0]]),
    # runs end where the level-0 coordinate changes, so the singleton may restart
    (NU_S, (2, 2), ({"pos": i64(0, 2), "crd": i64(0, 1)}, {"crd": i64(1, 0)}), [5.0, 7.0],
     [[0.0, 5.0], [7.0, 0.0]]),
    # level 1 repeats within a level-0 run (non-unique), level 2 restarts per level-1 run
    (COO3, (2, 3, 4), ({"pos": i64(0, 4), "crd": i64(1, 1, 1, 1)}, {"crd": i64(0, 0, 2, 2)},
                       {"crd": i64(1, 3, 0, 2)}), [1.0, 2.0, 3.0, 4.0], None),
    (NU_S_C, (1, 3, 2), ({"pos": i64(0, 2), "crd": i64(0, 0)}, {"crd": i64(0, 2)},
                         {"pos": i64(0, 0, 2), "crd": i64(0, 1)}), [1.0, 2.0], None),
], ids=["nu-s", "nu-s-restart", "coo3", "nu-s-c"])
def test_singleton_runs_accepted(fmt, shape, levels, vals, dense):
    t = Tensor(shape, fmt, levels, np.array(vals), name="T")
    back = Tensor.from_coords(*t.to_coords(), shape, fmt)
    np.testing.assert_array_equal(back.to_dense(), t.to_dense())
    if dense is not None:
        np.testing.assert_array_equal(t.to_dense(), dense)


@pytest.mark.parametrize("order", [2, 3, 4])
def test_built_coo_tensors_validate(order):
    shape = SHAPES[order]
    rng = np.random.default_rng(order)
    coords = np.stack([rng.integers(0, n, size=40) for n in shape])
    coords = np.concatenate([coords, coords[:, :10]], axis=1)     # some duplicates
    t = Tensor.from_coords(coords, np.ones(50), shape, "coo")
    t.validate()
    expected = np.zeros(shape)
    np.add.at(expected, tuple(coords), 1.0)
    np.testing.assert_array_equal(t.to_dense(), expected)
    Tensor(shape, t.format, t.levels, t.vals).validate()
    if order == 2:
        m = sp.coo_array((np.ones(50), (coords[0], coords[1])), shape=shape)
        s = Tensor.from_scipy(m)
        assert s.format == Format.named("coo", 2)
        s.validate()
        np.testing.assert_array_equal(s.to_dense(), expected)
        Tensor.from_scipy(sp.csr_array(m), "coo").validate()


@settings(max_examples=200, deadline=None)
@given(st.integers(2, 3), st.data())
def test_hand_built_coo_valid_iff_sorted_and_unique(order, data):
    """For coo every position holds a stored entry, so validate() must accept
    exactly the level arrays whose entries strictly increase lexicographically."""
    n = data.draw(st.integers(0, 6))
    shape = (2,) * order
    storage = np.array([data.draw(st.lists(st.integers(0, 1), min_size=n, max_size=n))
                        for _ in range(order)], dtype=np.int64).reshape(order, n)
    levels = ({"pos": i64(0, n), "crd": storage[0]},) + tuple(
        {"crd": storage[k]} for k in range(1, order))
    keys = [tuple(col) for col in storage.T]
    ok = all(a < b for a, b in zip(keys, keys[1:]))
    if ok:
        t = Tensor(shape, "coo", levels, np.ones(n))
        np.testing.assert_array_equal(t.to_coords()[0], storage)
    else:
        with pytest.raises(InputError, match="within a"):
            Tensor(shape, "coo", levels, np.ones(n))


def test_validate_accepts_good_and_the_unsafe_path_still_checks_bounds():
    """Skipping the order check (validate=False, or its name that says unsafe) still
    checks every bound a kernel relies on; only the order is the caller's promise."""
    t = Tensor((2, 3), CSR, GOOD_CSR, np.array([1.0, 2.0, 3.0]))
    np.testing.assert_array_equal(t.to_dense(), [[1, 0, 2], [0, 3, 0]])
    far = ({}, {"pos": GOOD_CSR[1]["pos"], "crd": i64(0, 10**9, 1)})
    unsorted = ({}, {"pos": GOOD_CSR[1]["pos"], "crd": i64(2, 0, 1)})
    for skip in ({"validate": False}, {"unsafe_skip_order_check": True}):
        with pytest.raises(InputError, match="vals has 1 entries"):
            Tensor((2, 3), CSR, GOOD_CSR, np.array([1.0]), **skip)
        with pytest.raises(InputError, match="1000000000"):
            Tensor((2, 3), CSR, far, np.ones(3), **skip)
        assert Tensor((2, 3), CSR, unsorted, np.ones(3), **skip).nnz == 3
    with pytest.raises(InputError, match="strictly increase"):
        Tensor((2, 3), CSR, unsorted, np.ones(3))
    t32 = Tensor((2, 3), CSR, ({}, {k: v.astype(np.int32) for k, v in GOOD_CSR[1].items()}),
                 np.array([1.0, 2.0, 3.0]))
    np.testing.assert_array_equal(t32.to_dense(), t.to_dense())


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
