"""Tests of etchpy.runtime.tensor.Tensor and runtime.convert: building, round trips,
edge shapes, and which inputs are shared and which copied."""
from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

from etchpy.formats import Compressed, Format, Singleton
from etchpy.runtime.tensor import Tensor
from tensor_cases import CUSTOM_CD, FORMATS, ORDER_FORMATS, SHAPES, sparse_array


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
