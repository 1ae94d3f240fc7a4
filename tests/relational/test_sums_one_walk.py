"""Sums of products over one structure walked once (expr.sums, expr.shared,
runtime.shared; proofs_notes/shared.md, "Terms"): several sums of a relation's
value columns written as a sum of products (different numbers, per-group dense
factors, value comparisons, sums nested in products) are one value predicate
whose terms are read at each stored entry, against a pure-Python relational
reference (rows as dicts) on every level kind that can store them, with
per-group factors that miss groups (zeros) and a sparse factor of another
relation that misses groups (taken out of the sum: a·x + b·x = (a + b)·x;
products with different such factors grouped by them, a walk per group);
`ep.Tuning(one_walk=False)` and `one_walk_terms=0` give the same answers."""
import collections
import operator

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import etchpy as ep
from etchpy.expr import shared, sums
from etchpy.expr.compare import CompareVar
from etchpy.expr.walk import accesses

o, n, k = ep.indices("o n k")
WALK = ep.Tuning(one_walk_from=0)     # Tensors walked once at any size (tiny ones here)
OPS = {"<": operator.lt, "<=": operator.le, ">": operator.gt, ">=": operator.ge}
KINDS = (["dense", "compressed"], ["compressed", "compressed"], ["compressed", "dense"],
         ["dense", "dense"])
row = st.tuples(st.integers(0, 4), st.integers(0, 3), *[st.integers(-2, 4)] * 3)
UNITS = {f"E{j}": np.eye(4)[j] for j in range(4)}
TWO = {f"E{j}": UNITS[f"E{j}"] for j in range(2)}
E = [ep.tensor(f"E{j}", 1)[k] for j in range(4)]
W, X = ep.tensor("W", 1)[o], ep.tensor("X", 1, "csf")[o]


def load(rows, kinds):
    cols = {c: np.array([r[m] for r in rows], dtype=float) for m, c in enumerate("onabc")}
    cols["o"], cols["n"] = cols["o"].astype(int), cols["n"].astype(int)
    keys = ep.Keys(np.arange(5), name="k")
    return ep.relation(cols, ["o", "n"], values=["a", "b", "c"], levels=kinds,
                       coding={"o": keys, "n": keys}, name="L")


def stored(rows, kinds) -> dict:
    """(o, n) -> (a, b, c) at every stored entry (a dense last level stores the
    cells no row gave: zero in every column)."""
    out = {(r[0], r[1]): r[2:] for r in rows}
    if kinds[1] == "dense":
        for x in (range(5) if kinds[0] == "dense" else {r[0] for r in rows}):
            for y in range(5):
                out.setdefault((x, y), (0, 0, 0))
    return out


def columns(rel):
    return {c.upper(): rel[c].tensor for c in "abc"}


def sums_of(rel, op):
    """Σ_n a·E0 + b·W·E1 + [c op t]·(a·E2 + 2·b·E3): four sums by o, written as
    a sum of products (the last a sum nested in a product)."""
    A, B, C = (rel[c].var(c.upper())[o, n] for c in "abc")
    return ep.sum(n, A * E[0] + B * W * E[1] + OPS[op](C, "t") * (A * E[2] + 2 * B * E[3]))


def reference(entries, op, t, w) -> np.ndarray:
    got = collections.defaultdict(float)
    for (x, _), (a, b, c) in entries.items():
        got[x, 0] += a
        got[x, 1] += b * w[x]
        if OPS[op](c, t):
            got[x, 2] += a
            got[x, 3] += 2 * b
    out = np.zeros((5, 4))
    for at, v in got.items():
        out[at] = v
    return out


def walked(kern) -> list:
    """The accesses of the kernel the last call ran (its own when none was fused)."""
    return list(accesses((kern._walked or kern).request.expr))


KERNELS: dict = {}


def kernel(rel, kinds, op, tuning=None):
    """The kernel of sums_of, made once per level kinds, operator and tuning."""
    key = (tuple(kinds), op, tuning)
    if key not in KERNELS:
        KERNELS[key] = ep.compile(sums_of(rel, op), tuning=tuning)
    return KERNELS[key]


@pytest.mark.parametrize("kinds", KINDS, ids=lambda x: "/".join(x))
@settings(max_examples=6, deadline=None)
@given(rows=st.lists(row, min_size=1, max_size=12, unique_by=lambda r: r[:2]),
       op=st.sampled_from(sorted(OPS)), t=st.integers(-2, 4),
       w=st.lists(st.sampled_from([0.0, 1.0, 2.5]), min_size=5, max_size=5))
def test_a_sum_of_products_over_one_relation_is_one_walk(kinds, rows, op, t, w):
    """(A relation of dense levels only is located, never walked: no one walk.)"""
    rel = load(rows, kinds)
    kern = kernel(rel, kinds, op)
    got = kern(**columns(rel), W=np.array(w), t=t, **UNITS)
    np.testing.assert_allclose(got, reference(stored(rows, kinds), op, t, w))
    accs = walked(kern)
    if "compressed" in kinds:
        assert len(accs) == 1 and isinstance(accs[0].tensor, CompareVar)
        assert len(accs[0].tensor.terms) == 4
    for tuning in (ep.Tuning(one_walk=False), ep.Tuning(one_walk_terms=0)):
        off = kernel(rel, kinds, op, tuning)
        np.testing.assert_allclose(off(**columns(rel), W=np.array(w), t=t, **UNITS), got)


@settings(max_examples=10, deadline=None)
@given(rows=st.lists(row, min_size=1, max_size=12, unique_by=lambda r: r[:2]),
       kinds=st.sampled_from(KINDS), t=st.integers(-2, 4),
       present=st.sets(st.integers(0, 4), max_size=5))
def test_a_factor_every_product_holds_is_taken_out(rows, kinds, t, present):
    """X·a·E0 + X·[c < t]·b·E1, X a sparse relation over o that misses groups:
    X times one walk of the relation; a group X misses counts nowhere."""
    rel = load(rows, kinds)
    A, B, C = (rel[c].var(c.upper())[o, n] for c in "abc")
    expr = ep.sum(n, X * A * E[0] + X * (C < "t") * B * E[1])
    have = np.array(sorted(present), dtype=np.int64)
    xs = ep.Tensor.from_coords(have[None, :], have + 1.0, (5,), "csf")
    if ("common", *kinds) not in KERNELS:
        KERNELS["common", *kinds] = ep.compile(expr)
    kern = KERNELS["common", *kinds]
    got = kern(**columns(rel), X=xs, t=t, **TWO)
    want = np.zeros((5, 4))
    for (x, _), (a, b, c) in stored(rows, kinds).items():
        if x in present:
            want[x, 0] += (x + 1) * a
            want[x, 1] += (x + 1) * b * (c < t)
    np.testing.assert_allclose(got, want)
    over = [a for a in walked(kern) if isinstance(a.tensor, CompareVar)]
    assert "compressed" not in kinds or len(walked(kern)) == 2 and len(over) == 1 and len(
        over[0].tensor.terms) == 2


@settings(max_examples=10, deadline=None)
@given(rows=st.lists(row, min_size=1, max_size=12, unique_by=lambda r: r[:2]),
       kinds=st.sampled_from(KINDS[:3]), xs=st.sets(st.integers(0, 4), max_size=5),
       ys=st.sets(st.integers(0, 4), max_size=5))
def test_products_grouped_by_their_factors_of_other_relations(rows, kinds, xs, ys):
    """X·a·E0 + X·b·E1 + Y·c·E2 + Y·[c < b]·a·E3: two walks of the relation (one
    per sparse factor of another relation, each missing groups), merged."""
    rel = load(rows, kinds)
    A, B, C = (rel[c].var(c.upper())[o, n] for c in "abc")
    Y = ep.tensor("Y", 1, "csf")[o]
    expr = ep.sum(n, X * A * E[0] + X * B * E[1] + Y * C * E[2] + Y * (C < B) * A * E[3])
    if ("grouped", *kinds) not in KERNELS:
        KERNELS["grouped", *kinds] = ep.compile(expr)
    kern = KERNELS["grouped", *kinds]

    def sparse(codes):
        have = np.array(sorted(codes), dtype=np.int64)
        return ep.Tensor.from_coords(have[None, :], have + 1.0, (5,), "csf")
    got = kern(**columns(rel), X=sparse(xs), Y=sparse(ys), **UNITS)
    want = np.zeros((5, 4))
    for (x, _), (a, b, c) in stored(rows, kinds).items():
        if x in xs:
            want[x, :2] += (x + 1) * np.array([a, b])
        if x in ys:
            want[x, 2:] += (x + 1) * np.array([c, a * (c < b)])
    np.testing.assert_allclose(got, want)
    over = [a for a in walked(kern) if isinstance(a.tensor, CompareVar)]
    assert len(walked(kern)) == 4 and [len(a.tensor.terms) for a in over] == [2, 2]


def test_a_sum_alone_with_no_other_index_and_numbers():
    """Σ_{o,n} 3·a + b·[c <= 2] + b·c: no index added, a number in a term."""
    rows = [(0, 0, 1, 2, 3), (0, 1, -2, 1, 0), (2, 3, 4, 4, 2), (4, 1, 1, -1, 4)]
    rel = load(rows, ["dense", "compressed"])
    A, B, C = (rel[c].var(c.upper())[o, n] for c in "abc")
    kern = ep.compile(ep.sum((o, n), 3 * A + B * (C <= 2) + B * C))
    got = kern(**columns(rel))
    assert got == sum(3 * a + b * (c <= 2) + b * c for _, _, a, b, c in rows)
    assert len(walked(kern)) == 1
    rel["b"].tensor.vals[:] = 1.0                       # written in place
    assert kern(**columns(rel)) == sum(3 * a + (c <= 2) + c for _, _, a, _, c in rows)


def test_a_product_of_sums_is_multiplied_out():
    """Σ_n a·(b + E0)·(c + E1): four products, one walk; the same in integers."""
    rows = [(0, 0, 1, 2, 3), (0, 1, -2, 1, 0), (2, 3, 4, 4, 2), (4, 1, 1, -1, 4)]
    rel = load(rows, ["compressed", "compressed"])
    A, B, C = (rel[c].var(c.upper())[o, n] for c in "abc")
    kern = ep.compile(ep.sum(n, A * (B + E[0]) * (C + E[1])), tuning=WALK)
    got = kern(**columns(rel), **TWO)
    want = np.zeros((5, 4))
    for x, _, a, b, c in rows:
        want[x] += a * (b + np.eye(4)[0]) * (c + np.eye(4)[1])
    np.testing.assert_allclose(got, want)
    assert len(walked(kern)) == 1


def test_a_sparse_output_stores_no_entry_where_no_term_holds():
    """[c < b]·a + [c >= 3]·a into a sparse output: the entries where neither
    test holds are not stored, as the written union stores none there."""
    rows = [(0, 0, 1, 2, 3), (0, 1, 2, 1, 0), (2, 3, 4, 4, 2), (4, 1, 1, 3, 1), (3, 3, 5, 1, 2)]
    rel = load(rows, ["compressed", "compressed"])
    A, B, C = (rel[c].var(c.upper())[o, n] for c in "abc")
    expr, fmt = (C < B) * A + (C >= 3) * A, ep.Format(["compressed", "compressed"])
    got = ep.compile(expr, output=fmt)(**columns(rel))
    want = ep.compile(expr, output=fmt, tuning=ep.Tuning(one_walk=False))(**columns(rel))
    np.testing.assert_array_equal(got.to_dense(), want.to_dense())
    assert got.nnz == want.nnz == 4                    # not (3, 3): neither holds


def test_the_last_calls_answer_is_kept_for_arrays_of_one_dtype():
    """The walked kernel kept for the same Tensors and numpy inputs of the same
    types and dtypes (runtime.shared `_walk_memo`); other dtypes work it out again
    (the semiring inferred from them), and new arrays are read as they are."""
    rows = [(0, 0, 1, 2, 3), (0, 1, 2, 1, 0), (2, 3, 4, 4, 2)]
    cols = {c: np.array([r[m] for r in rows]) for m, c in enumerate("onabc")}
    rel = ep.relation(cols, ["o", "n"], values=["a", "b"], levels=["dense", "compressed"],
                      coding={c: ep.Keys(np.arange(5), name="k") for c in "on"}, name="L")
    A, B = rel["a"].var("A")[o, n], rel["b"].var("B")[o, n]
    kern = ep.compile(ep.sum(n, A * E[0] + B * E[1]), tuning=WALK)
    ins = {"A": rel["a"].tensor, "B": rel["b"].tensor}
    first = kern(**ins, E0=np.eye(2, dtype=np.int64)[0], E1=np.eye(2, dtype=np.int64)[1])
    assert first.tolist() == [[3, 3], [0, 0], [4, 4]] + [[0, 0]] * 2
    again = kern(**ins, E0=np.array([2, 0]), E1=np.array([0, 1]))
    assert again.tolist() == [[6, 3], [0, 0], [8, 4]] + [[0, 0]] * 2
    real = kern(**ins, E0=np.eye(2)[0], E1=np.eye(2)[1])
    assert real.tolist() == first.tolist()
    memo = kern._walk_memo[1]
    assert [type(m) for m in memo[2:]] == [tuple, tuple] and memo[2][1] == np.float64
    assert kern._walked is not None


def test_min_plus_terms():
    """In min_plus a sum is a min and a product a +: min over n of min(a, b + c)."""
    rows = [(0, 0, 5, 2, 3), (0, 1, 9, 1, 0), (2, 3, 4, 4, 2)]
    rel = load(rows, ["compressed", "compressed"])
    A, B, C = (rel[c].var(c.upper())[o, n] for c in "abc")
    kern = ep.compile(ep.sum(n, A + B * C), semiring="min_plus", tuning=WALK)
    got = kern(**columns(rel))
    assert got[0] == 1 and got[2] == 4 and np.isinf(got[1])
    assert len(walked(kern)) == 1


def test_equal_copies_and_other_relations_run_as_written():
    """Columns over equal arrays that are not the same objects, or a product with
    a sparse factor of another relation that not every product holds, are not
    one walk (the kernel as written runs, and is right)."""
    rows = [(0, 0, 1, 2, 3), (1, 1, -2, 1, 0), (2, 3, 4, 4, 2)]
    rel = load(rows, ["compressed", "compressed"])
    A, B, C = (rel[c].var(c.upper())[o, n] for c in "abc")
    kern = ep.compile(ep.sum(n, A * E[0] + B * E[1]))
    copy = {}
    for c in "abc":
        coords, vals = rel[c].tensor.to_coords()
        copy[c.upper()] = ep.Tensor.from_coords(coords, vals.copy(), rel[c].tensor.shape,
                                                rel[c].tensor.format)
    got = kern(A=copy["A"], B=copy["B"], **TWO)
    assert kern._walked is None
    np.testing.assert_allclose(got, kern(A=rel["a"].tensor, B=rel["b"].tensor, **TWO))
    xs = ep.Tensor.from_coords(np.array([[0, 2]]), np.array([2.0, 3.0]), (5,), "csf")
    other = ep.compile(ep.sum(n, X * A * E[0] + B * E[1]))
    got = other(A=rel["a"].tensor, B=rel["b"].tensor, X=xs, **TWO)
    np.testing.assert_allclose(got[:, 0], [2.0, 0.0, 12.0, 0.0, 0.0])
    np.testing.assert_allclose(got[:, 1], [2.0, 1.0, 4.0, 0.0, 0.0])


def test_what_sums_take():
    """products multiplies sums out (at most `most`); terms refuses a product with
    no member when the sum is alone, and a onehot's index."""
    a, b, c = (ep.tensor(x, 2, "csr")[o, n] for x in "abc")
    assert len(sums.products((a + b) * (c + E[0]), 8)) == 4
    assert sums.products((a + b) * (c + E[0]), 3) is None
    key = ((o, n), ep.Format.parse("csr", 2))
    classes = {"a": 0, "b": 0, "c": 0}
    assert sums.terms(a * E[0] + E[1], key, 0, classes, set(), 8, alone=True) is None
    assert len(sums.terms(a * E[0] + E[1], key, 0, classes, set(), 8)) == 2
    assert sums.terms(a * E[0] + b * E[1], key, 0, classes, {k}, 8) is None
    assert shared.fused(a + b, classes, 0) == a + b                   # most 0: none
