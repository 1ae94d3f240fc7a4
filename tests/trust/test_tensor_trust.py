"""A Tensor cannot be made inconsistent from Python (issue 26, item 3): what the
kernels trust about an input (its shape, lengths and bounds) holds at every call."""
import numpy as np
import pytest
import scipy.sparse as sp

import etchpy as ep
from etchpy import InputError, Tensor

i, j = ep.indices("i j")
A, x = ep.tensor("A", 2, format="csr"), ep.tensor("x", 1)
SPMV = ep.sum(j, A[i, j] * x[j])


def matrix(n=6, seed=0):
    return sp.random(n, n, density=0.5, format="csr", random_state=seed)


@pytest.fixture
def case():
    m = matrix()
    return m, Tensor.from_scipy(m, name="A"), np.arange(6.0)


@pytest.mark.parametrize("attr", ["shape", "levels", "vals", "format", "fill", "name"])
def test_attributes_cannot_be_rebound(case, attr):
    m, t, v = case
    kern = ep.compile(SPMV)
    kern(A=t, x=v)
    other = Tensor.from_scipy(matrix(3, seed=1))
    replacement = {"shape": (10**7, 6), "levels": other.levels, "vals": t.vals[:3].copy(),
                   "format": "dcsr", "fill": 1.0, "name": "B"}[attr]
    with pytest.raises(AttributeError, match="cannot be rebound"):
        setattr(t, attr, replacement)
    with pytest.raises(AttributeError):
        delattr(t, attr)
    np.testing.assert_allclose(kern(A=t, x=v), m @ v)


def test_levels_and_index_arrays_are_immutable(case):
    m, t, v = case
    kern = ep.compile(SPMV)
    with pytest.raises(TypeError):
        t.levels[1]["crd"] = np.zeros(3, dtype=np.int32)
    crd = t.levels[1]["crd"]
    with pytest.raises(ValueError):
        crd[0] = 10**9
    with pytest.raises(ValueError):
        crd.flags.writeable = True
    with pytest.raises(ValueError):
        crd.base.flags.writeable = True if hasattr(crd.base, "flags") else None
    with pytest.raises(ValueError):
        t.vals.resize(3, refcheck=False)
    want = 2 * (m @ v)
    t.vals[:] *= 2                        # values may be written in place
    np.testing.assert_allclose(kern(A=t, x=v), want)


@pytest.mark.parametrize("change", ["indices", "indptr-last", "indptr-first"])
def test_changing_the_scipy_input_after_building_the_tensor(change):
    """The Tensor owns copies of the index arrays: the scipy matrix's own can change."""
    m = matrix()
    want = m @ np.arange(6.0)
    t = Tensor.from_scipy(m, name="A")
    kern = ep.compile(SPMV)
    np.testing.assert_allclose(kern(A=t, x=np.arange(6.0)), want)
    if change == "indices":
        m.indices[0] = 10**9
    elif change == "indptr-last":
        m.indptr[-1] = 10**9
    else:
        m.indptr[0] = -5
    np.testing.assert_allclose(kern(A=t, x=np.arange(6.0)), want)
    np.testing.assert_allclose(ep.compile(SPMV, name="fresh")(A=t, x=np.arange(6.0)), want)


@pytest.mark.parametrize("what, how", [("vals", "shape"), ("crd", "dtype"), ("pos", "dtype"),
                                       ("crd", "shape"), ("vals", "dtype")])
def test_arrays_changed_in_place_are_refused_naming_the_tensor(case, what, how):
    m, t, v = case
    kern = ep.compile(SPMV)
    kern(A=t, x=v)
    a = t.vals if what == "vals" else t.levels[1][what]
    if how == "shape":
        a.shape = (1, a.size) if a.size % 2 else (2, a.size // 2)
    else:
        a.dtype = {np.dtype(np.int32): np.int16, np.dtype(np.int64): np.int32,
                   np.dtype(np.float64): np.float32}[a.dtype]
    for k in (kern, ep.compile(SPMV, name="fresh")):
        with pytest.raises(InputError, match="tensor 'A'.*changed in place"):
            k(A=t, x=v)


@pytest.mark.parametrize("skip", [{"validate": False}, {"unsafe_skip_order_check": True}])
def test_unchecked_construction_still_checks_bounds(skip):
    pos = np.array([0, 1, 2], dtype=np.int64)
    for crd, vals in [(np.array([0, 10**9]), np.ones(2)), (np.array([0, -1]), np.ones(2)),
                      (np.array([0, 1]), np.ones(1))]:
        with pytest.raises(InputError, match="tensor 'A'"):
            Tensor((2, 2), "csr", ({}, {"pos": pos, "crd": crd}), vals, name="A", **skip)
    with pytest.raises(InputError, match="tensor 'A'"):
        Tensor((2, 2), "csr", ({}, {"pos": np.array([0, 5, 2]), "crd": np.array([0, 1])}),
               np.ones(2), name="A", **skip)


@pytest.mark.parametrize("strided", ["indices and data", "indices"])
def test_strided_scipy_arrays_give_the_right_answer(strided):
    m = matrix(8, seed=3)
    wide_idx = np.zeros(2 * m.nnz, dtype=m.indices.dtype)
    wide_idx[::2] = m.indices
    wide_data = np.zeros(2 * m.nnz)
    wide_data[::2] = m.data
    data = wide_data[::2] if strided == "indices and data" else m.data.copy()
    s = sp.csr_array((data, wide_idx[::2], m.indptr.copy()), shape=m.shape)
    assert not s.indices.flags.c_contiguous
    v = np.arange(8.0)
    np.testing.assert_allclose(ep.evaluate(SPMV, A=s, x=v), m @ v)
    np.testing.assert_allclose(ep.compile(SPMV)(A=Tensor.from_scipy(s), x=v), m @ v)


def test_strided_arrays_given_to_the_constructor_are_copied():
    crd = np.array([0, 9, 1, 9], dtype=np.int64)[::2]
    vals = np.array([1.0, 0, 2.0, 0])[::2]
    t = Tensor((2, 2), "csr", ({}, {"pos": np.array([0, 1, 2]), "crd": crd}), vals, name="A")
    assert t.levels[1]["crd"].flags.c_contiguous and t.vals.flags.c_contiguous
    np.testing.assert_allclose(ep.compile(SPMV)(A=t, x=np.array([1.0, 10.0])), [1.0, 20.0])
