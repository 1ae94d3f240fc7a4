"""A group-by on value columns walks the relation once (expr.shared, runtime.shared;
proofs_notes/shared.md, "Bins of a structure's columns"): the onehots of two
code columns (`ep.onehot(f, F[o, n], 3)`, expr.bins) multiplied with a measure
and a value comparison of the same relation are one value predicate whose bins
are read off the columns at each entry, against a pure-Python relational
reference (rows as dicts), on every level kind that can store them; values
that name no bin (negative, too large, fractional) count nowhere; values
written in place between calls are read as they are; with
`ep.Tuning(one_walk=False)` the kernel as written gives the same answer."""
import collections

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import etchpy as ep
from etchpy.expr.compare import CompareVar

o, n, f, g = ep.indices("o n f g")
KINDS = (["dense", "compressed"], ["compressed", "compressed"], ["compressed", "dense"],
         ["dense", "dense"])
row = st.tuples(st.integers(0, 4), st.integers(0, 3), st.sampled_from([-1, 0, 1, 2, 2.5, 3]),
                st.integers(-1, 2), st.integers(-2, 4), st.integers(0, 9))


def load(rows, kinds):
    cols = {k: np.array([r[m] for r in rows], dtype=float) for m, k in enumerate("onfgqd")}
    cols["o"], cols["n"] = cols["o"].astype(int), cols["n"].astype(int)
    keys = ep.Keys(np.arange(5), name="k")
    return ep.relation(cols, ["o", "n"], values=["f", "g", "q", "d"], levels=kinds,
                       coding={"o": keys, "n": keys}, name="L")


def stored(rows, kinds, shape) -> dict:
    """(o, n) -> (f, g, q, d) at every stored entry (a dense last level stores
    the cells no row gave: zero in every column)."""
    out = {(r[0], r[1]): r[2:] for r in rows}
    if kinds[1] == "dense":
        firsts = range(shape[0]) if kinds[0] == "dense" else {r[0] for r in rows}
        for x in firsts:
            for y in range(shape[1]):
                out.setdefault((x, y), (0, 0, 0, 0))
    return out


def reference(entries, most) -> np.ndarray:
    """Σ q by (f, g) over the entries with d <= most and f, g bins of 0..2, 0..1."""
    got = collections.Counter()
    for fv, gv, q, d in entries.values():
        if d <= most and fv in (0, 1, 2) and gv in (0, 1):
            got[int(fv), int(gv)] += q
    out = np.zeros((3, 2))
    for k, v in got.items():
        out[k] = v
    return out


def group_by(rel, tuning=None):
    at = (o, n)
    body = (ep.onehot(f, rel["f"].var("F")[at], 3) * ep.onehot(g, rel["g"].var("G")[at], 2)
            * rel["q"].var("Q")[at] * (rel["d"].var("D")[at] <= "most"))
    return ep.compile(ep.sum(at, body), order=["o", "n", "f", "g"], optimize=False,
                      tuning=tuning)


def inputs(rel):
    return {c.upper(): rel[c].tensor for c in "fgqd"}


@pytest.mark.parametrize("kinds", KINDS, ids=lambda k: "/".join(k))
@settings(max_examples=8, deadline=None)
@given(rows=st.lists(row, min_size=1, max_size=12, unique_by=lambda r: r[:2]),
       most=st.integers(-2, 4))
def test_a_group_by_on_value_columns_is_the_relational_answer(kinds, rows, most):
    rel = load(rows, kinds)
    kern = group_by(rel)
    got = kern(**inputs(rel), most=most)
    want = reference(stored(rows, kinds, rel["q"].shape), most)
    np.testing.assert_allclose(got, want)


def test_it_is_one_walk_with_its_bins_read_at_each_entry():
    rows = [(0, 0, 0, 1, 2, 3), (0, 1, 2, 0, 5, 1), (1, 0, 1, 1, 7, 9), (3, 2, 2, 1, 1, 2)]
    rel = load(rows, ["dense", "compressed"])
    kern = group_by(rel)
    got = kern(**inputs(rel), most=5)
    np.testing.assert_allclose(got, reference(stored(rows, ["dense", "compressed"], None), 5))
    walked = kern._walked.request.expr
    accs = [a for a in _accesses(walked)]
    assert len(accs) == 1 and isinstance(accs[0].tensor, CompareVar)
    assert accs[0].tensor.bins == ((0, 3), (1, 2)) and accs[0].indices[-2:] == (f, g)
    off = group_by(rel, ep.Tuning(one_walk=False))
    np.testing.assert_array_equal(off(**inputs(rel), most=5), got)
    rel["f"].tensor.vals[:] = 2.0                       # written in place: all in bin 2
    again = kern(**inputs(rel), most=5)
    np.testing.assert_allclose(again.sum(axis=0), got.sum(axis=0))
    assert again[:2].sum() == 0


def _accesses(e):
    from etchpy.expr.walk import accesses
    return accesses(e)


@pytest.mark.parametrize("kinds", KINDS[:3], ids=lambda k: "/".join(k))
def test_several_sums_by_group_are_one_walk(kinds):
    """Σ G·(Q·E0[k] + D·E1[k] + E2[k]): three sums by group (a measure, another,
    a count) over one more index k, each term a column times a dense vector at
    k, is one value predicate whose terms are read at each entry."""
    rows = [(0, 0, 0, 1, 2, 3), (0, 1, 2, 0, 5, 1), (1, 0, 1, 1, 7, 9), (3, 2, 2, 1, 1, 2),
            (4, 3, 1, 0, -1, 0), (2, 2, 2.5, 1, 4, 4)]
    rel = load(rows, kinds)
    at, k = (o, n), ep.Index("k")
    E = [ep.tensor(f"E{j}", 1) for j in range(3)]
    G = (ep.onehot(f, rel["f"].var("F")[at], 3) * ep.onehot(g, rel["g"].var("G")[at], 2)
         * (rel["d"].var("D")[at] <= "most"))
    sums = rel["q"].var("Q")[at] * E[0][k] + rel["d"].var("D")[at] * E[1][k] + E[2][k]
    expr = ep.sum(at, G * sums)
    units = {f"E{j}": np.eye(3)[j] for j in range(3)}
    kern = ep.compile(expr, order=["o", "n", "f", "g", "k"], optimize=False)
    got = kern(**inputs(rel), **units, most=5)
    entries = stored(rows, kinds, rel["q"].shape)
    for j, column in enumerate((2, 3, None)):
        want = reference({x: (*v[:2], 1 if column is None else v[column], v[3])
                          for x, v in entries.items()}, 5)
        np.testing.assert_allclose(got[:, :, j], want)
    accs = list(_accesses(kern._walked.request.expr))
    assert len(accs) == 1 and len(accs[0].tensor.terms) == 3
    off = ep.compile(expr, order=["o", "n", "f", "g", "k"], optimize=False,
                     tuning=ep.Tuning(one_walk=False))
    np.testing.assert_allclose(off(**inputs(rel), **units, most=5), got)


def test_terms_are_not_read_below_a_level_that_must_be_last():
    """(A[k] + A[k])·A[k]·B[i], B rle: a run takes no level below it, so the sum
    at k is not a term of B's walk (a dev-profile draw of the central problems
    raised a FormatError building that walk's format)."""
    k, i = ep.indices("k i")
    A, B = ep.tensor("A", 1), ep.tensor("B", 1, "rle")
    a, b = np.array([1.0, 0.5]), np.array([1.0, 0.0, 3.0])
    want = np.outer((a + a) * a, b)
    for out in (None, "csr"):
        got = ep.compile((A[k] + A[k]) * A[k] * B[i], output=out)(
            A=a, B=ep.Tensor.from_dense(b, "rle"))
        np.testing.assert_allclose(got if out is None else got.toarray(), want)
