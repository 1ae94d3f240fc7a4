"""The tile level kind (formats.tiles, format bsr): scipy's bsr arrays bound as
they lie, in any blocksize and block order; packing, checks naming the array,
the C header's text, and every backend reading tiles of several shapes (the
central property draws the kind too, as 1×1 tiles)."""
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings, strategies as st

import etchpy as ep
from etchpy.errors import InputError
from etchpy.testing import check_backends

i, j, k = ep.indices("i j k")
BSR = ep.Format.named("bsr", 2)


@st.composite
def bsr_inputs(draw):
    """A scipy bsr array of a drawn blocksize, its blocks sometimes out of order
    within their block rows, and the dense matrix it holds."""
    R, C = draw(st.integers(1, 3)), draw(st.integers(1, 3))
    rows, cols = R * draw(st.integers(1, 4)), C * draw(st.integers(1, 4))
    seed = draw(st.integers(0, 2**16))
    rng = np.random.default_rng(seed)
    d = rng.integers(-3, 4, (rows, cols)).astype(float)
    d *= np.kron(rng.random((rows // R, cols // C)) < 0.5, np.ones((R, C)))
    m = sp.bsr_array(d, blocksize=(R, C))
    if draw(st.booleans()):                  # each block row's blocks reversed
        for g in range(len(m.indptr) - 1):
            a, b = m.indptr[g], m.indptr[g + 1]
            m.indices[a:b] = m.indices[a:b][::-1].copy()
            m.data[a:b] = m.data[a:b][::-1].copy()
    return m, m.toarray()


@settings(max_examples=15, deadline=None)
@given(bsr_inputs(), st.integers(0, 2**16))
def test_a_bsr_input_is_read_in_place_by_every_form(got, seed):
    """SpMV, its transpose, a product with a dense matrix, a sum and a product
    with a csr operand (a skip into the tiles), the scipy array passed each call."""
    m, d = got
    rng = np.random.default_rng(seed)
    x, xt = rng.random(d.shape[1]), rng.random(d.shape[0])
    b = rng.random(d.shape) * (rng.random(d.shape) < 0.4)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ep.PerformanceWarning)     # nothing converted
        assert np.allclose(ep.einsum("ij,j->i", m, x), d @ x)
        assert np.allclose(ep.einsum("ij,i->j", m, xt), d.T @ xt)
        assert np.allclose(ep.einsum("ij,jk->ik", m, np.ones((d.shape[1], 2))),
                           d @ np.ones((d.shape[1], 2)))
        A, B = ep.tensor("A", 2, "bsr"), ep.tensor("B", 2, "csr")
        assert np.allclose(ep.evaluate(ep.sum(i, ep.sum(j, A[i, j])), A=m), d.sum())
        got = ep.evaluate(A[i, j] * B[i, j], A=m, B=sp.csr_array(b))
        assert np.allclose(got, d * b)


@settings(max_examples=12, deadline=None)
@given(bsr_inputs(), st.sampled_from(["real", "min_plus", "boolean"]))
def test_every_backend_reads_tiles(got, sr):
    """The interpreter, the streams and C agree with the dense reference on
    tiles of any shape (an ep.Tensor over the bsr array's tiles)."""
    m, d = got
    sr = ep.semirings.get(sr)
    if sr.name == "boolean":
        m = m.copy()
        m.data = m.data != 0
    A = ep.Tensor.from_scipy(m, "bsr", semiring=sr)
    assert list(A.levels[1]["tshape"]) == list(m.blocksize)
    x = np.arange(d.shape[1], dtype=float) % 3
    if sr.name == "boolean":
        x = x > 0
    for e, inputs in ((ep.sum(j, ep.tensor("A", 2, "bsr")[i, j] * ep.tensor("x", 1)[j]),
                       {"A": A, "x": x.astype(sr.dtype)}),
                      (ep.sum(i, ep.tensor("A", 2, "bsr")[i, j]), {"A": A})):
        check_backends(e, inputs, semiring=sr, backends=("streams", "c", "imp"))


def test_canonical_blocks_share_scipy_s_arrays():
    d = np.kron(np.eye(3), np.arange(1.0, 7.0).reshape(2, 3))
    m = sp.bsr_array(d, blocksize=(2, 3))
    t = ep.Tensor.from_scipy(m, "bsr")
    assert np.shares_memory(t.vals, m.data)        # the values as scipy lays them out
    assert list(t.levels[1]["tcol"]) == [0, 1, 2] and list(t.levels[1]["tshape"]) == [2, 3]
    assert np.array_equal(t.to_dense(), d)


def test_repeated_blocks_are_added():
    data = np.arange(1.0, 13.0).reshape(3, 2, 2)
    m = sp.bsr_matrix((data, np.array([1, 1, 0]), np.array([0, 2, 3])), shape=(4, 4))
    x = np.arange(1.0, 5.0)
    kern = ep.compile("y[i] = A[i,j] * x[j]", formats={"A": "bsr"})
    assert np.allclose(kern(A=m, x=x), m.toarray() @ x)


def _tiles(tptr, tcol, tshape, shape=(4, 4)):
    level = {"tptr": np.array(tptr), "tcol": np.array(tcol), "tshape": np.array(tshape)}
    n = len(tcol) * int(np.prod(tshape)) if len(tshape) == 2 else 0
    return ep.Tensor(shape, "bsr", ({}, level), np.ones(n), name="A")


@pytest.mark.parametrize("make, words", [
    (lambda: _tiles([0, 2, 2], [1, 0], [2, 2]), "tcol[1] = 0 does not follow"),
    (lambda: _tiles([0, 1, 2], [0, 2], [2, 2]), "tcol has value 2"),
    (lambda: _tiles([0, 1], [0], [2, 2]), "tptr has length 2 but needs 3"),
    (lambda: _tiles([0, 1, 1], [0], [3, 2]), "tiles of 3×2 do not divide"),
    (lambda: _tiles([0, 1, 1], [0], [2, 0]), "tshape must hold two sizes"),
    (lambda: _tiles([0, 1, 1], [0], [2]), "tshape must hold two sizes"),
])
def test_bad_tiles_are_refused_naming_the_array(make, words):
    with pytest.raises(InputError, match="tensor 'A' level 1") as err:
        make()
    assert words in str(err.value)


def test_pack_makes_one_tile_an_entry_and_lists_them_back():
    a = np.array([[0.0, 2.0, 0.0], [1.0, 0.0, 3.0]])
    t = ep.Tensor.from_dense(a, "bsr")
    assert list(t.levels[1]["tshape"]) == [1, 1] and list(t.vals) == [2.0, 1.0, 3.0]
    assert np.array_equal(t.to_dense(), a)
    for fmt in (ep.Format(["tiles", "tiles"]), ep.Format(["tiles", "dense"], (1, 0))):
        assert np.array_equal(ep.Tensor.from_dense(a, fmt).to_dense(), a)


def test_the_header_describes_the_level(tmp_path):
    A, x = ep.tensor("A", 2, "bsr"), ep.tensor("x", 1)
    _, header = ep.export_c(ep.sum(j, A[i, j] * x[j]), "bsrmv", tmp_path)
    text = " ".join(header.read_text().split())
    assert "level 1 (tiles, mode 1): A_tshape1 has 2 entries, R and C" in text
