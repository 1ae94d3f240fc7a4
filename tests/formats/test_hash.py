"""The hash level kind (issue 40): packing, the table's invariants and checks naming
the array, the walk and probe laws (proofs_notes/hashed.md), the insert write path (and its
rehash), the C header's text, and every backend on it (beside the central
property, which draws it)."""
import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings, strategies as st

import etchpy as ep
from etchpy import imp, streams
from etchpy.errors import FormatError, InputError
from etchpy.formats import level as shapes
from etchpy.formats.hashtable import slot_hash
from etchpy.imp import Const
from etchpy.testing import check_backends, sparse_arrays

i, j, k = ep.indices("i j k")
SR = ep.semirings.get("real")
HASHES = [ep.Format.named("hash", 2), ep.Format(["dense", "hash"], (1, 0)),
          ep.Format(["compressed", "hash"]), ep.Format(["banded", "hash"], (1, 0))]


@settings(max_examples=30, deadline=None)
@given(st.sampled_from(HASHES), st.data())
def test_pack_and_unpack_give_the_array_back(fmt, data):
    a = data.draw(sparse_arrays((5, 6), SR))
    t = ep.Tensor.from_dense(a, fmt)
    t.validate()
    assert np.array_equal(t.to_dense(), a) and t.nnz == np.count_nonzero(a)
    coords, values = ep.Tensor.from_dense(a, "coo").to_coords()
    back = ep.Tensor.from_coords(coords, values, a.shape, fmt)
    assert np.array_equal(back.to_dense(), a) and back.nnz == t.nnz


def probe(level, p, c):
    """The slot of coordinate c in parent p's table, by linear probing, or -1."""
    base, cap = int(level["hpos"][p]), int(level["hpos"][p + 1] - level["hpos"][p])
    h = int(slot_hash([c], cap - 1)[0])
    while level["hcrd"][base + h] not in (-1, c):
        h = (h + 1) & (cap - 1)
    return base + h if level["hcrd"][base + h] == c else -1


@settings(max_examples=40, deadline=None)
@given(st.sampled_from(ep.semirings.all()), st.data())
def test_the_walk_law_and_every_probe(sr, data):
    """The walk lists exactly the stored coordinates in order, each at its slot
    holding its value; a probe of any coordinate from its hash finds the stored
    ones and meets an empty slot for the others (tables at most half full)."""
    a = data.draw(sparse_arrays((3, 9), sr))
    t = ep.Tensor.from_dense(a, "hash", semiring=sr)
    lv = t.levels[1]
    b = streams.array_names("T", t.format)
    m = imp.Machine(sr, {b.levels[1][r]: lv[r] for r in b.levels[1]})
    for p in range(3):
        got = t.format.levels[1].read(Const(p), Const(p + 1), Const(9), b.levels[1])
        assert isinstance(got, shapes.Hashed)
        slots = list(m.env[got.slots][m.eval(got.start):m.eval(got.end)])
        assert [lv["hcrd"][s] for s in slots] == list(np.flatnonzero(a[p] != sr.zero))
        assert [t.vals[s] for s in slots] == [x for x in a[p] if x != sr.zero]
        assert m.eval(got.cap) >= 2 * len(slots) and m.eval(got.table) == lv["hpos"][p]
        mask = imp.Bin("-", got.cap, imp.ONE)
        for c in range(9):
            s = probe(lv, p, c)
            assert (s >= 0) == (a[p, c] != sr.zero) and (s < 0 or t.vals[s] == a[p, c])
            stop = m.eval(imp.Probe(got.crd, got.table, mask, Const(c)))    # imp.Probe
            assert stop == s if s >= 0 else lv["hcrd"][stop] == -1


def _hash(hpos, hcrd, spos, hsrt, vals=None):
    level = {r: np.array(a, dtype=np.int64) for r, a in
             (("hpos", hpos), ("hcrd", hcrd), ("spos", spos), ("hsrt", hsrt))}
    return ep.Tensor((4,), "hash", (level,), np.ones(len(hcrd)) if vals is None else vals,
                     name="A")


def _home(c, cap):
    return int(slot_hash([c], cap - 1)[0])


@pytest.mark.parametrize("make, words", [
    (lambda: _hash([0, 3], [-1, -1, -1], [0, 0], []), "must be a power of two"),
    (lambda: _hash([0, 1], [-1], [0, 1], [0]), "must be a power of two larger"),
    (lambda: _hash([0, 4], [-1] * 4, [0, 1], [4]), "hsrt[0] = 4 is not a slot"),
    (lambda: _hash([0, 4], [5, -1, -1, -1], [0, 1], [0]), "hcrd[0] = 5 is neither"),
    (lambda: _hash([0, 4], [1, 2, -1, -1], [0, 1], [0]), "hcrd stores 2 coordinates"),
    (lambda: _hash([0, 4], [1, 2, -1, -1], [0, 2], [1, 0]), "must strictly increase"),
    (lambda: _hash([0, 4], [-1, 1, -1, -1], [0, 1], [0]), "each at a stored slot"),
    (lambda: _hash([0, 4], [-1] * 4, [0, 1], [0]), "each at a stored slot"),
    (lambda: _hash([0, 4], [3 if s == (_home(3, 4) + 2) % 4 else -1 for s in range(4)],
                   [0, 1], [(_home(3, 4) + 2) % 4]), "is not where a probe finds it"),
    (lambda: _hash([0, 2], [-1, -1], [0], []), "spos has length 1 but needs 2"),
])
def test_bad_levels_are_refused_naming_the_array(make, words):
    with pytest.raises(InputError, match="tensor 'A'") as err:
        make()
    assert words in str(err.value)


def test_a_hash_level_is_a_last_level_and_nnz_counts_the_stored():
    with pytest.raises(FormatError, match="hash level must be the last level"):
        ep.Format(["hash", "dense"])
    t = ep.Tensor.from_dense(np.array([[0.0, 3.0, 0.0, 5.0], [0.0] * 4]), "hash")
    assert t.nnz == 2 and len(t.vals) == 4 + 1 and list(t.levels[1]["spos"]) == [0, 2, 2]
    assert ep.Tensor.from_dense(np.array([[0.0, 3.0], [0.0, 0.0]]), "bytemap").nnz == 1


def test_the_header_describes_the_level(tmp_path):
    A, x = ep.tensor("A", 2, "csr"), ep.tensor("x", 1, "hash")
    _, header = ep.export_c(ep.sum(j, A[i, j] * x[j]), "spmv", tmp_path)
    text = " ".join(w for w in header.read_text().split() if w != "*")
    assert "level 0 (hash, mode 0): x_hpos0 and x_spos0 have 1 + 1 entries" in text
    assert "-1 for an empty slot" in text and "ep_hash(k, m)" in text


def test_explain_prices_the_stored_entries_and_shows_the_probe():
    A, x = ep.tensor("A", 2, "csr"), ep.tensor("x", 1, "hash")
    kern = ep.compile(ep.sum(j, A[i, j] * x[j]))
    xd = np.zeros(100)
    xd[::10] = 1.0
    m = sp.random_array((20, 100), density=0.2, rng=np.random.default_rng(0), format="csr")
    assert np.allclose(kern(A=m, x=ep.Tensor.from_dense(xd, "hash")), m @ xd)
    text = kern.explain()
    assert "nnz(x)=10" in text and "locate into [linear, through the listing in order; " \
        "probe by hash]" in text


@pytest.mark.heavy
@settings(max_examples=16, deadline=None)
@given(st.sampled_from(ep.semirings.all()), st.sampled_from(HASHES), st.data())
def test_every_backend_reads_and_writes_it(sr, fmt, data):
    """SpMV probing a hash vector, products and sums with a csr operand (walk
    one, probe the other), on the interpreter, the streams and C; outputs in
    these formats too."""
    a = data.draw(sparse_arrays((5, 6), sr), label="A")
    b = data.draw(sparse_arrays((5, 6), sr), label="B")
    x = data.draw(sparse_arrays((6,), sr), label="x")
    A, B = ep.tensor("A", 2, fmt), ep.tensor("B", 2, "csr")
    X = ep.tensor("x", 1, data.draw(st.sampled_from(["dense", "hash", "csf"])))
    inputs = {"A": a, "B": b, "x": x}
    for e in (ep.sum(j, A[i, j] * X[j]), ep.sum(j, B[i, j] * X[j]), A[i, j] * B[i, j],
              A[i, j] + B[i, j]):
        names = {acc.tensor.name for acc in ep.expr.walk.accesses(e)}
        given_ = {n: v for n, v in inputs.items() if n in names}
        check_backends(e, given_, semiring=sr, backends=("streams", "c", "imp"))
    check_backends(A[i, j] * B[i, j], {"A": a, "B": b}, semiring=sr, backends=("c",),
                   output=fmt)


@pytest.mark.parametrize("tuning", ["default", "force"])
def test_an_output_inserted_in_any_order_grows_its_table(tuning):
    """C[i, j] = Σ_k A[k, i]·B[k, j] from csr operands: the output's rows arrive
    in any order, inserted into one table that rehashes past its first size
    (force: two slots), then sorted into each row's table."""
    rng = np.random.default_rng(3)
    a = rng.random((30, 20)) * (rng.random((30, 20)) < 0.2)
    b = rng.random((30, 50)) * (rng.random((30, 50)) < 0.2)
    A, B = ep.tensor("A", 2, "csr"), ep.tensor("B", 2, "csr")
    e = ep.sum(k, A[k, i] * B[k, j])
    check_backends(e, {"A": a, "B": b}, backends=("c", "imp"), output="hash", tuning=tuning)
    got = ep.evaluate(e, A=ep.Tensor.from_dense(a, "csr"), B=ep.Tensor.from_dense(b, "csr"),
                      output="hash", tuning=tuning)
    got.validate()
    assert got.nnz == np.count_nonzero(a.T @ b)


def test_the_hash_outputs_first_table_changes_no_bit():
    """Tuning.hash_output_initial sizes a hash output's first table (rounded up to a
    power of two; 0: hash_initial, the workspace's): the kernel's C starts there, and
    the output's arrays are the same bit for bit whatever the first size (the values
    accumulate in the loops' order; the table only places them)."""
    rng = np.random.default_rng(5)
    a = sp.random_array((400, 60), density=0.05, random_state=rng, format="csr")
    b = sp.random_array((400, 900), density=0.02, random_state=rng, format="csr")
    e = ep.sum(k, ep.tensor("A", 2, "csr")[k, i] * ep.tensor("B", 2, "csr")[k, j])
    got = {}
    for first, cap in ((0, 256), (3, 4), (2, 2), (8192, 8192), (5000, 8192)):
        kern = ep.compile(e, output="hash", tuning=ep.Tuning(hash_output_initial=first))
        t = kern(A=a, B=b)
        assert f"int64_t ins_cap = {cap};" in kern.c_source
        t.validate()
        got[first] = [t.vals.tobytes()] + [t.levels[1][r].tobytes() for r in
                                           ("hpos", "hcrd", "spos", "hsrt")]
    assert ep.Tuning().hash_output_initial == 8192 and t.nnz > 4096   # past the first table
    assert all(arrays == got[0] for arrays in got.values())
    assert np.allclose(t.to_dense(), (a.T @ b).toarray())
