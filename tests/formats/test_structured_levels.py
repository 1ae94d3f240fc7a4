"""The banded and block-list level kinds (issue 40): packing, checks naming the
array, scipy's dia and bsr read into them, the C header's text, the measured
runs explain() shows, and every backend on them (beside the central property,
which draws them among its formats)."""
import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings, strategies as st

import etchpy as ep
from etchpy.errors import InputError
from etchpy.testing import check_backends, sparse_arrays

i, j, k = ep.indices("i j k")
SR = ep.semirings.get("real")
STRUCTURED = [ep.Format.named("banded", 2), ep.Format.named("blocks", 2),
              ep.Format(["banded", "blocks"]), ep.Format(["blocks", "banded"], (1, 0)),
              ep.Format(["dense", "banded"], (1, 0)), ep.Format(["blocks", "compressed"]),
              ep.Format.named("bsr", 2), ep.Format(["tiles", "blocks"], (1, 0))]


@settings(max_examples=30, deadline=None)
@given(st.sampled_from(STRUCTURED), st.data())
def test_pack_and_unpack_give_the_array_back(fmt, data):
    a = data.draw(sparse_arrays((5, 6), SR))
    t = ep.Tensor.from_dense(a, fmt)
    t.validate()
    assert np.array_equal(t.to_dense(), a)
    coords, values = ep.Tensor.from_dense(a, "coo").to_coords()
    assert np.array_equal(ep.Tensor.from_coords(coords, values, a.shape, fmt).to_dense(), a)


def test_a_band_stores_its_gaps_and_blocks_do_not():
    a = np.array([[1.0, 0.0, 0.0, 2.0]])
    band = ep.Tensor.from_dense(a, "banded")
    assert list(band.levels[1]["bfirst"]) == [0] and list(band.vals) == [1, 0, 0, 2]
    blocks = ep.Tensor.from_dense(a, "blocks")
    assert list(blocks.levels[1]["bfirst"]) == [0, 3] and list(blocks.vals) == [1, 2]
    assert list(blocks.levels[1]["bpos"]) == [0, 1, 2]


def _banded(first, bpos, vals, shape=(2, 4)):
    return ep.Tensor(shape, "banded", ({}, {"bfirst": np.array(first), "bpos": np.array(bpos)}),
                     np.array(vals, dtype=float), name="A")


def _blocks(bseg, first, bpos, shape=(1, 8)):
    level = {"bseg": np.array(bseg), "bfirst": np.array(first), "bpos": np.array(bpos)}
    return ep.Tensor(shape, "blocks", ({}, level), np.ones(bpos[-1]), name="B")


@pytest.mark.parametrize("make, words", [
    (lambda: _banded([0, 3], [0, 2, 4], np.ones(4)), "bfirst[1] = 3 with 2 coordinates"),
    (lambda: _banded([0], [0, 1, 2], np.ones(2)), "bfirst has length 1 but needs 2"),
    (lambda: _banded([0, 0], [0, 3, 2], np.ones(2)), "bpos must be nondecreasing"),
    (lambda: _banded([0, -1], [0, 1, 2], np.ones(2)), "bfirst[1] = -1"),
    (lambda: _blocks([0, 2], [0, 1], [0, 2, 3]), "block 1 starts at coordinate 1"),
    (lambda: _blocks([0, 2], [0, 4], [0, 2, 2]), "block 1 is empty"),
    (lambda: _blocks([0, 3], [0, 4], [0, 2, 3]), "bseg[-1] = 3"),
])
def test_bad_levels_are_refused_naming_the_array(make, words):
    with pytest.raises(InputError, match="tensor '[AB]' level 1") as err:
        make()
    assert words in str(err.value)


def test_scipy_dia_reads_as_row_bands():
    rng = np.random.default_rng(0)
    m = sp.dia_array((rng.random((3, 7)), [-2, 0, 1]), shape=(6, 7))
    t = ep.Tensor.from_scipy(m)                 # one band shape: diagonals -2 .. 1
    assert t.format == ep.Format.named("uniform_band", 2)
    assert list(t.levels[1]["ushape"]) == [-2, 4, 1, 6, 7]
    b = ep.Tensor.from_scipy(m, "banded")
    assert list(b.levels[1]["bfirst"]) == [0, 0, 0, 1, 2, 3]   # row i from i - 2
    for got in (t, b, ep.Tensor.from_scipy(m, "csr")):
        assert np.array_equal(got.to_dense(), m.toarray())


@pytest.mark.parametrize("shape, offsets", [((7, 4), [-5, 0, 3]), ((3, 3), [5]),
                                            ((4, 4), []), ((5, 2), [-4, 1])])
def test_scipy_dia_wider_than_a_row_or_empty(shape, offsets):
    """A band wider than a row reads as banded (a uniform band's width is at
    most the dimension); diagonals holding no cell are left out."""
    rng = np.random.default_rng(2)
    m = sp.dia_array((rng.random((len(offsets), 7)), offsets), shape=shape)
    span = max(offsets) - min(offsets) + 1 if offsets else 0
    t = ep.Tensor.from_scipy(m)
    assert t.format == ep.Format.named("banded" if span > shape[1] else "uniform_band", 2)
    A, x = ep.tensor("A", 2, "uniform_band"), ep.tensor("x", 1)
    v = rng.random(shape[1])
    assert np.array_equal(t.to_dense(), m.toarray())
    for got in (t, m):          # m: converted on the call (a uniform band, or via coo)
        assert np.allclose(ep.evaluate(ep.sum(j, A[i, j] * x[j]), A=got, x=v), m.toarray() @ v)


@pytest.mark.parametrize("blocksize", [(1, 3), (2, 2), (3, 1)])
def test_scipy_bsr_reads_as_rows_of_blocks(blocksize):
    d = sp.random_array((6, 6), density=0.5, rng=np.random.default_rng(1)).toarray()
    b = sp.bsr_array(d, blocksize=blocksize)
    t = ep.Tensor.from_scipy(b)
    assert t.format == ep.Format.named("blocks", 2)
    assert np.array_equal(t.to_dense(), d)
    assert np.shares_memory(t.vals, b.data) == (blocksize[0] == 1)   # the layouts agree
    A, x = ep.tensor("A", 2, "blocks"), ep.tensor("x", 1)
    assert np.allclose(ep.evaluate(ep.sum(j, A[i, j] * x[j]), A=b, x=np.ones(6)), d.sum(1))


def test_the_header_describes_each_level(tmp_path):
    A, x = ep.tensor("A", 2, ep.Format(["banded", "blocks"])), ep.tensor("x", 1)
    _, header = ep.export_c(ep.sum(j, A[i, j] * x[j]), "spmv", tmp_path)
    text = " ".join(header.read_text().split())
    assert "level 0 (banded, mode 0): A_bfirst0 has 1 entries" in text
    assert "level 1 (blocks, mode 1): A_bseg1 has A_bpos0[1] + 1 entries" in text


def test_explain_shows_the_runs_it_priced():
    a = np.kron(np.eye(3), np.ones((2, 2)))
    for fmt, runs in (("banded", 6), ("blocks", 6)):
        A, x = ep.tensor("A", 2, fmt), ep.tensor("x", 1)
        kern = ep.compile(ep.sum(j, A[i, j] * x[j]))
        kern(A=ep.Tensor.from_dense(a, fmt), x=np.ones(6))
        assert f"A level 1: {runs:g} runs read whole" in kern.explain()
        assert "jump" in kern.explain()


@pytest.mark.heavy
@settings(max_examples=16, deadline=None)
@given(st.sampled_from(ep.semirings.all()), st.sampled_from(STRUCTURED), st.data())
def test_every_backend_reads_them(sr, fmt, data):
    """SpMV, a product with a csr operand (a leapfrog into the runs) and a sum,
    on the interpreter, the streams and C; outputs in these formats too."""
    backends_read(sr, fmt, data, ["dense", "banded", "blocks", "csf"])


def backends_read(sr, fmt, data, vector_formats):
    """SpMV (x in one of vector_formats), a product with a csr operand and a sum
    of A in `fmt`, on the interpreter, the streams and C; the product written
    in `fmt` too."""
    a = data.draw(sparse_arrays((5, 6), sr), label="A")
    b = data.draw(sparse_arrays((5, 6), sr), label="B")
    x = data.draw(sparse_arrays((6,), sr), label="x")
    A, B = ep.tensor("A", 2, fmt), ep.tensor("B", 2, "csr")
    X = ep.tensor("x", 1, data.draw(st.sampled_from(vector_formats)))
    inputs = {"A": a, "B": b, "x": x}
    for e in (ep.sum(j, A[i, j] * X[j]), A[i, j] * B[i, j], A[i, j] + B[i, j]):
        names = {acc.tensor.name for acc in ep.expr.walk.accesses(e)}
        given_ = {n: v for n, v in inputs.items() if n in names}
        check_backends(e, given_, semiring=sr, backends=("streams", "c", "imp"))
    check_backends(A[i, j] * B[i, j], {"A": a, "B": b}, semiring=sr, backends=("c",),
                   output=fmt)
