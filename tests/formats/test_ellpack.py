"""The ELLPACK level kind (formats/ellpack.py): fixed-width rows, their used slots
counted (elen), no segment starts; its packing and checks, the C header's text,
real inputs in this layout (a k-nearest-neighbour graph as scipy's KDTree hands
it over, a scikit-fem Laplacian), and every backend on it (beside the central
property, which draws it among its formats)."""
import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings, strategies as st
from scipy.spatial import KDTree

import etchpy as ep
from etchpy.errors import InputError
from etchpy.testing import check_backends, sparse_arrays
from etchpy.testing.strategies import ANY_LEVEL
from tests.formats.test_structured_levels import backends_read

i, j = ep.indices("i j")
SR = ep.semirings.get("real")
FORMATS = [ep.Format.named("ellpack", 2), ep.Format.named("ellpack", 1),
           ep.Format(["dense", "ellpack"], (1, 0)), ep.Format(["ellpack", "dense"]),
           ep.Format(["compressed", "ellpack"]), ep.Format(["ellpack", "blocks"]),
           ep.Format(["ellpack", "ellpack"])]


def spmv(fmt="ellpack"):
    A, x = ep.tensor("A", 2, fmt), ep.tensor("x", 1)
    return ep.compile(ep.sum(j, A[i, j] * x[j]))


def test_registered_by_its_module_alone():
    assert "ellpack" in ANY_LEVEL and "ellpack" in ep.formats.NAMED_FORMATS
    assert str(ep.Format.named("ellpack", 3).levels[-1]) == "ellpack"


@settings(max_examples=30, deadline=None)
@given(st.sampled_from(FORMATS), st.data())
def test_pack_and_unpack_give_the_array_back(fmt, data):
    shape = (5, 6) if fmt.order == 2 else (7,)
    a = data.draw(sparse_arrays(shape, SR))
    t = ep.Tensor.from_dense(a, fmt)
    t.validate()
    assert np.array_equal(t.to_dense(), a)
    if str(fmt.levels[-1]) == "ellpack":      # its used slots, not its padding
        assert t.nnz == np.count_nonzero(a)
    coords, values = ep.Tensor.from_dense(a, "coo").to_coords()
    assert np.array_equal(ep.Tensor.from_coords(coords, values, a.shape, fmt).to_dense(), a)


def test_rows_pack_into_the_longest_rows_width():
    d = np.array([[1.0, 0, 2, 0], [0, 0, 0, 0], [0, 3, 4, 5]])
    level = ep.Tensor.from_dense(d, "ellpack").levels[1]
    assert list(level["ewidth"]) == [3] and list(level["elen"]) == [2, 0, 3]
    assert list(level["ecrd"][[0, 1, 6, 7, 8]]) == [0, 2, 1, 2, 3]
    assert np.allclose(spmv()(A=ep.Tensor.from_dense(d, "ellpack"), x=np.arange(4.0)),
                       d @ np.arange(4.0))


def knn(points, k):
    """The k nearest neighbours of each point (itself left out) as scipy's KDTree
    gives them, sorted by column: the ELLPACK arrays, weights 1 / distance."""
    dist, idx = KDTree(points).query(points, k + 1)
    dist, idx = dist[:, 1:], idx[:, 1:]
    order = np.argsort(idx, axis=1)
    idx, dist = np.take_along_axis(idx, order, 1), np.take_along_axis(dist, order, 1)
    n = len(points)
    levels = ({}, {"elen": np.full(n, k, dtype=np.int64), "ecrd": idx.ravel().astype(np.int64),
                   "ewidth": np.array([k], dtype=np.int64)})
    return levels, (1.0 / dist).ravel()


@pytest.mark.parametrize("n, k", [(200, 8), (1000, 15)])
def test_a_knn_graph_binds_as_the_tree_gives_it(n, k):
    """A k-nearest-neighbour graph (each row exactly k neighbours: ELLPACK with
    no padding) built from KDTree.query's arrays, no conversion: one step of
    graph diffusion and a two-hop count equal scipy's."""
    pts = np.random.default_rng(n).random((n, 3))
    levels, vals = knn(pts, k)
    W = ep.Tensor((n, n), "ellpack", levels, vals, name="W")
    m = sp.csr_array(W.to_dense())
    assert W.nnz == n * k == m.nnz
    x = np.random.default_rng(k).random(n)
    np.testing.assert_allclose(spmv()(A=W, x=x), m @ x)
    Wt = ep.tensor("W", 2, "ellpack")
    l_ = ep.indices("l")[0]
    two = ep.compile(ep.sum((j, l_), Wt[i, j] * Wt[j, l_]))
    np.testing.assert_allclose(two(W=W), (m @ m).sum(1))


def test_a_scikit_fem_laplacian_on_triangles():
    """Rows of 4 to 9 entries (a P1 Laplacian on a refined square): padded to the
    widest, equal scipy's SpMV on every backend."""
    skfem = pytest.importorskip("skfem")
    from skfem.models.poisson import laplace
    basis = skfem.Basis(skfem.MeshTri().refined(4), skfem.ElementTriP1())
    m = laplace.assemble(basis).tocsr()
    t = ep.Tensor.from_scipy(m, "ellpack")
    assert t.levels[1]["ewidth"][0] == np.diff(m.indptr).max() and t.nnz == m.nnz
    x = np.random.default_rng(0).random(m.shape[0])
    np.testing.assert_allclose(spmv()(A=t, x=x), m @ x)
    check_backends(ep.sum(j, ep.tensor("A", 2, "ellpack")[i, j] * ep.tensor("x", 1)[j]),
                   {"A": m.toarray(), "x": x}, backends=("streams", "c"))


def _ell(elen=(1, 2), ecrd=(0, 0, 1, 3), width=(2,), vals=4, shape=(2, 4)):
    return ep.Tensor(shape, "ellpack", ({}, {"elen": np.array(elen), "ecrd": np.array(ecrd),
                                             "ewidth": np.array(width)}),
                     np.ones(vals), name="A")


@pytest.mark.parametrize("make, words", [
    (lambda: _ell(width=(2, 2)), "ewidth must hold one width in [0, 4]"),
    (lambda: _ell(width=(5,)), "ewidth must hold one width in [0, 4]"),
    (lambda: _ell(elen=(1, 2, 0)), "elen has length 3 but needs one entry per parent"),
    (lambda: _ell(ecrd=(0, 0, 1)), "ecrd has length 3 but needs 2 parent positions"),
    (lambda: _ell(elen=(1, 3)), "elen[1] = 3 must lie in [0, 2]"),
    (lambda: _ell(ecrd=(0, 0, 3, 1)), "ecrd[2] = 3 is followed by ecrd[3] = 1"),
    (lambda: _ell(ecrd=(0, 4, 1, 3)), "ecrd has value 4 at index 1"),
    (lambda: _ell(vals=5), "vals"),
    (lambda: _ell(ecrd=np.array([0.0, 0, 1, 3])), "ecrd must hold integers"),
])
def test_bad_levels_are_refused_naming_the_array(make, words):
    with pytest.raises(InputError, match="tensor 'A'") as err:
        make()
    assert words in str(err.value)


def test_the_header_describes_the_level(tmp_path):
    A, x = ep.tensor("A", 2, "ellpack"), ep.tensor("x", 1)
    _, header = ep.export_c(ep.sum(j, A[i, j] * x[j]), "spmv", tmp_path)
    text = " ".join(header.read_text().split())
    assert "level 1 (ellpack, mode 1): A_ewidth1 has 1 entry, the width" in text


@pytest.mark.heavy
@settings(max_examples=16, deadline=None)
@given(st.sampled_from(ep.semirings.all()), st.sampled_from(FORMATS[:1] + FORMATS[2:]),
       st.data())
def test_every_backend_reads_it(sr, fmt, data):
    """SpMV, a product with a csr operand (a leapfrog into the rows) and a sum, on
    the interpreter, the streams and C; outputs in this format too."""
    backends_read(sr, fmt, data, ["dense", "ellpack", "csf"])
