"""The bytemap level kind (issue 40): packing, checks naming the array, the
lookup law (proofs_notes/lookup.md), the C header's text, what explain()
prices, and every backend on it (beside the central property, which draws it)."""
import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings, strategies as st

import etchpy as ep
from etchpy import imp, streams
from etchpy.errors import FormatError, InputError
from etchpy.formats import level as shapes
from etchpy.imp import Const
from etchpy.testing import check_backends, sparse_arrays

i, j, k = ep.indices("i j k")
SR = ep.semirings.get("real")
BYTEMAPS = [ep.Format.named("bytemap", 2), ep.Format(["dense", "bytemap"], (1, 0)),
            ep.Format(["compressed", "bytemap"]), ep.Format(["banded", "bytemap"], (1, 0))]


@settings(max_examples=30, deadline=None)
@given(st.sampled_from(BYTEMAPS), st.data())
def test_pack_and_unpack_give_the_array_back(fmt, data):
    a = data.draw(sparse_arrays((5, 6), SR))
    t = ep.Tensor.from_dense(a, fmt)
    t.validate()
    assert np.array_equal(t.to_dense(), a)
    coords, values = ep.Tensor.from_dense(a, "coo").to_coords()
    back = ep.Tensor.from_coords(coords, values, a.shape, fmt)
    assert np.array_equal(back.to_dense(), a) and back.nnz == t.nnz


def test_cells_are_located_marked_and_the_stored_ones_listed():
    t = ep.Tensor.from_dense(np.array([[0.0, 3.0, 0.0, 5.0], [0.0, 0.0, 0.0, 0.0]]), "bytemap")
    assert list(t.levels[1]["mpos"]) == [0, 2, 2] and list(t.levels[1]["mcrd"]) == [1, 3]
    assert list(t.levels[1]["mmap"]) == [0, 1, 0, 1, 0, 0, 0, 0]
    assert list(t.vals) == [0, 3, 0, 5, 0, 0, 0, 0]


@settings(max_examples=40, deadline=None)
@given(st.sampled_from(ep.semirings.all()), st.data())
def test_the_lookup_law(sr, data):
    """A probe of any coordinate c reads the presence at first + c, and where it
    is 1 the value there, which is c's; the walk lists exactly the stored
    coordinates, in order, each present."""
    a = data.draw(sparse_arrays((3, 7), sr))
    t = ep.Tensor.from_dense(a, "bytemap", semiring=sr)
    b = streams.array_names("T", t.format)
    m = imp.Machine(sr, {**{b.levels[1][r]: t.levels[1][r] for r in b.levels[1]}})
    stored = t.to_coords()[0]
    for p in range(3):
        got = t.format.levels[1].read(Const(p), Const(p + 1), Const(7), b.levels[1])
        assert isinstance(got, shapes.Lookup)
        first = m.eval(got.first)
        present = np.asarray(m.env[got.present][first:first + 7]) == 1
        probed = np.where(present, t.vals[first:first + 7], sr.zero)
        assert np.array_equal(probed, a[p])                               # every probe
        walked = list(m.env[got.crd][m.eval(got.start):m.eval(got.end)])
        assert walked == list(stored[1][stored[0] == p])                  # the walk
        assert walked == list(np.flatnonzero(present))


def _bytemap(mpos, mcrd, mmap, shape=(2, 4)):
    level = {"mpos": np.array(mpos), "mcrd": np.array(mcrd), "mmap": np.array(mmap)}
    return ep.Tensor(shape, "bytemap", ({}, level), np.ones(8), name="A")


@pytest.mark.parametrize("make, words", [
    (lambda: _bytemap([0, 2, 2], [3, 1], [0, 1, 0, 1] + [0] * 4), "mcrd[0] = 3 is followed"),
    (lambda: _bytemap([0, 1], [1], [0, 1, 0, 0] + [0] * 4), "mpos has length 2 but needs 3"),
    (lambda: _bytemap([0, 1, 1], [4], [0] * 8), "mcrd has value 4"),
    (lambda: _bytemap([0, 1, 1], [1], [0, 1, 0, 0, 0, 0, 1, 0]), "mmap[6] = 1 but"),
    (lambda: _bytemap([0, 1, 1], [1], [0, 0, 0, 0, 0, 0, 0, 0]), "mmap[1] = 0 but"),
    (lambda: _bytemap([0, 1, 1], [1], [0, 1, 0]), "mmap has length 3 but needs 8"),
])
def test_bad_levels_are_refused_naming_the_array(make, words):
    with pytest.raises(InputError, match="tensor 'A'") as err:
        make()
    assert words in str(err.value)


def test_a_bytemap_level_is_a_last_level():
    with pytest.raises(FormatError, match="bytemap level must be the last level"):
        ep.Format(["bytemap", "dense"])


def test_the_header_describes_the_level(tmp_path):
    A, x = ep.tensor("A", 2, "csr"), ep.tensor("x", 1, "bytemap")
    _, header = ep.export_c(ep.sum(j, A[i, j] * x[j]), "spmv", tmp_path)
    text = " ".join(w for w in header.read_text().split() if w != "*")
    assert "level 0 (bytemap, mode 0): x_mpos0 has 1 + 1 entries" in text
    assert "x_mmap0 has one entry per position, 1 where the coordinate is stored" in text


def test_explain_prices_the_stored_entries_and_shows_the_probe():
    A, x = ep.tensor("A", 2, "csr"), ep.tensor("x", 1, "bytemap")
    kern = ep.compile(ep.sum(j, A[i, j] * x[j]))
    xd = np.zeros(100)
    xd[::10] = 1.0
    got = kern(A=sp.random_array((20, 100), density=0.2, rng=np.random.default_rng(0),
                                 format="csr"), x=ep.Tensor.from_dense(xd, "bytemap"))
    assert got.shape == (20,)
    text = kern.explain()
    assert "nnz(x)=10" in text and "probe by position" in text


@pytest.mark.heavy
@settings(max_examples=16, deadline=None)
@given(st.sampled_from(ep.semirings.all()), st.sampled_from(BYTEMAPS), st.data())
def test_every_backend_reads_and_writes_it(sr, fmt, data):
    """SpMV probing a bytemap vector, products and sums with a csr operand (walk
    one, probe the other), on the interpreter, the streams and C; outputs in
    these formats too."""
    a = data.draw(sparse_arrays((5, 6), sr), label="A")
    b = data.draw(sparse_arrays((5, 6), sr), label="B")
    x = data.draw(sparse_arrays((6,), sr), label="x")
    A, B = ep.tensor("A", 2, fmt), ep.tensor("B", 2, "csr")
    X = ep.tensor("x", 1, data.draw(st.sampled_from(["dense", "bytemap", "csf"])))
    inputs = {"A": a, "B": b, "x": x}
    for e in (ep.sum(j, A[i, j] * X[j]), ep.sum(j, B[i, j] * X[j]), A[i, j] * B[i, j],
              A[i, j] + B[i, j]):
        names = {acc.tensor.name for acc in ep.expr.walk.accesses(e)}
        given_ = {n: v for n, v in inputs.items() if n in names}
        check_backends(e, given_, semiring=sr, backends=("streams", "c", "imp"))
    check_backends(A[i, j] * B[i, j], {"A": a, "B": b}, semiring=sr, backends=("c",),
                   output=fmt)
