"""AND, OR and NOT of comparisons (`&`, `|`, `~`: expr.logic) and value
comparisons (against bounds, other columns and the coordinates) tested in the
kernel's loop (expr.compare's row predicates), against a pure-Python
relational reference (dicts of rows): random formulas over three value
columns of one relation, on every level kind that can store them, on the
reference and streams backends, and compiled (one formula per level kind,
values written in place between calls); OR of overlapping clauses counted
once; NOT of an index comparison and of a range (the other codes); OR across
two relations."""
import collections
import operator

import numpy as np
import pytest
from hypothesis import assume, given, settings, strategies as st

import etchpy as ep
from etchpy.errors import ExpressionTypeError

o, n = ep.indices("o n")
OPS = {"<": operator.lt, "<=": operator.le, ">": operator.gt, ">=": operator.ge}
COLUMNS = ("a", "b", "c")
KINDS = (["dense", "compressed"], ["compressed", "compressed"], ["dense", "dense"])
# every other kind that can store the lines under their order, each row an
# entry (a singleton level needs a non-unique one above: ep.table's,
# tests/relational/test_singletons.py; run levels merge equal neighbours, so value
# columns changing at different keys are refused: test_relational.py; the bands
# store them too, compiled under `slow`: 10-20 s to compile)
MORE_KINDS = (["dense", "hash"], ["compressed", "bytemap"], ["dense", "blocks"],
              ["compressed", "ellpack"])
BANDS = (["dense", "banded"], ["compressed", "uniform_band"])


def leaf():
    col = st.sampled_from(range(len(COLUMNS)))
    return st.one_of(
        st.tuples(st.just("cc"), col, st.sampled_from(sorted(OPS)), col).filter(
            lambda t: t[1] != t[3]),
        st.tuples(st.just("cp"), col, st.sampled_from(sorted(OPS)), st.just("t")),
        st.tuples(st.just("cn"), col, st.sampled_from(sorted(OPS)), st.integers(-1, 4)),
        st.tuples(st.just("ci"), col, st.sampled_from(sorted(OPS)), st.sampled_from([0, 1])))


formulas = st.recursive(leaf(), lambda inner: st.one_of(
    st.tuples(st.just("and"), inner, inner), st.tuples(st.just("or"), inner, inner),
    st.tuples(st.just("not"), inner)), max_leaves=4)


def predicate(f, V):
    """The etchpy predicate of formula f over the column variables V."""
    match f:
        case ("cc", x, op, y):
            return OPS[op](V[x][o, n], V[y][o, n])
        case ("cp", x, op, p) | ("cn", x, op, p):
            return OPS[op](V[x][o, n], p)
        case ("ci", x, op, p):                  # a value against a coordinate (code)
            return OPS[op](V[x][o, n], (o, n)[p])
        case ("and", g, h):
            return predicate(g, V) & predicate(h, V)
        case ("or", g, h):
            return predicate(g, V) | predicate(h, V)
    return ~predicate(f[1], V)


def holds(f, row, t, at=(0, 0)) -> bool:
    """The reference: f at one row (its column values, its key `at`) with
    parameter t."""
    match f:
        case ("ci", x, op, p):
            return OPS[op](row[x], at[p])
        case ("cc", x, op, y):
            return OPS[op](row[x], row[y])
        case ("cp", x, op, _):
            return OPS[op](row[x], t)
        case ("cn", x, op, k):
            return OPS[op](row[x], k)
        case ("and", g, h):
            return holds(g, row, t, at) and holds(h, row, t, at)
        case ("or", g, h):
            return holds(g, row, t, at) or holds(h, row, t, at)
    return not holds(f[1], row, t, at)


def _at_codes(f) -> bool:
    """Does formula f compare a value with a coordinate?"""
    return f[0] == "ci" or f[0] in ("and", "or", "not") and any(_at_codes(g) for g in f[1:])


def _uses(f, what) -> bool:
    """Does formula f read column `what` (an int) or the parameter t ("t")?"""
    match f:
        case ("cc", x, _, y):
            return what in (x, y)
        case ("cp", x, _, _):
            return what in (x, "t")
        case ("cn", x, _, _) | ("ci", x, _, _):
            return what == x
    return any(_uses(g, what) for g in f[1:])


def stored_rows(rows, kinds, shape):
    """(o, n) -> column values at every stored entry: the table's rows, plus the
    cells a dense level stores with no row (value 0 in every column)."""
    out = {(r[0], r[1]): r[2:] for r in rows}
    if kinds[1] == "dense":
        firsts = range(shape[0]) if kinds[0] == "dense" else {r[0] for r in rows}
        for a in firsts:
            for b in range(shape[1]):
                out.setdefault((a, b), (0, 0, 0))
    return out


def stored_cells(rows, tensor):
    """stored_rows for any level kind: (o, n) -> column values at every entry
    the relation's tensor stores (its coordinates, read off the structure), the
    table's row there or zeros (a cell stored with no row: dense, bands, blocks)."""
    table = {(r[0], r[1]): r[2:] for r in rows}
    coords, _ = tensor.to_coords()
    return {(a, b): table.get((a, b), (0, 0, 0)) for a, b in coords.T.tolist()}


def reference(entries, f, t):
    got = collections.Counter()
    for (a, b), vals in entries.items():
        if holds(f, vals, t, (a, b)):
            got[a] += 1
    return dict(got)


row = st.tuples(st.integers(0, 4), st.integers(0, 3), *[st.integers(-1, 4)] * 3)


def load(rows, kinds):
    cols = {k: np.array([r[m] for r in rows]) for m, k in enumerate(("o", "n") + COLUMNS)}
    keys = ep.Keys(np.arange(5), name="k")
    rel = ep.relation(cols, ["o", "n"], values=list(COLUMNS), levels=kinds,
                      coding={"o": keys, "n": keys}, name="L")
    return rel, keys


def counts(result, keys) -> dict:
    out = ep.decode(result, [keys], columns=["o"])
    return dict(zip(out["o"].tolist(), out["value"].tolist()))


@settings(max_examples=25, deadline=None)
@given(rows=st.lists(row, min_size=1, max_size=12, unique_by=lambda r: r[:2]),
       f=formulas, t=st.integers(-1, 4), kinds=st.sampled_from(KINDS + MORE_KINDS))
def test_formulas_of_value_comparisons_match_the_relational_reference(rows, f, t, kinds):
    rel, keys = load(rows, kinds)
    V = [rel[c].var(c.upper()) for c in COLUMNS]
    expr = ep.sum(n, predicate(f, V))
    want = reference(stored_cells(rows, rel["a"].tensor), f, t)
    if kinds in KINDS:              # the cells worked out by hand, for the kinds above
        assert stored_cells(rows, rel["a"].tensor) == stored_rows(rows, kinds,
                                                                  rel["a"].shape)
    inputs = {c.upper(): rel[c].tensor for c in COLUMNS if _uses(f, COLUMNS.index(c))}
    if _uses(f, "t"):
        inputs["t"] = t
    # a block list stores runs of coordinates: a test of the coordinate there is
    # refused by the streams (test_a_coordinate_test_on_a_block_list_is_refused)
    streams = () if kinds[1] == "blocks" and _at_codes(f) else ("streams",)
    for backend in ("reference",) + streams:
        got = ep.evaluate(expr, backend=backend, **inputs)
        assert counts(got, keys) == want, backend


@pytest.mark.parametrize("kinds", KINDS + MORE_KINDS + tuple(
    pytest.param(k, marks=pytest.mark.slow) for k in BANDS), ids="-".join)
def test_compiled_formula_reads_values_written_in_place(kinds):
    """One kernel, values written into the columns between calls: each call
    tests the values as they are then (nothing is precomputed from them)."""
    rows = [(0, 0, 1, 2, 0), (0, 1, 3, 1, 2), (2, 1, 0, 0, 4), (3, 3, 2, 2, 1)]
    rel, keys = load(rows, kinds)
    A, B, C = (rel[c].var(c.upper()) for c in COLUMNS)
    f = ("or", ("and", ("cc", 0, "<", 1), ("not", ("cp", 2, ">=", "t"))), ("cn", 2, ">", 3))
    kern = ep.compile(ep.sum(n, (A[o, n] < B[o, n]) & ~(C[o, n] >= "t") | (C[o, n] > 3)))
    inputs = {c.upper(): rel[c].tensor for c in COLUMNS}
    for step in range(3):
        entries = stored_cells(rows, rel["a"].tensor)
        assert counts(kern(t=1, **inputs), keys) == reference(entries, f, 1), step
        # the same rows, new values, written in place (each map keeps 0 at 0: the
        # cells of no row, a hash's empty slots): at every position of the arrays
        maps = (lambda x: -x, lambda y: 2 * y - 3 * (y != 0), lambda z: z * (-1) ** step)
        rows = [(a, b, *(g(v) for g, v in zip(maps, r))) for a, b, *r in rows]
        for g, c in zip(maps, COLUMNS):
            vals = rel[c].tensor.vals
            vals[:] = g(vals)


@settings(max_examples=4, deadline=None)
@given(rows=st.lists(row, min_size=1, max_size=12, unique_by=lambda r: r[:2]),
       f=formulas, t=st.integers(-1, 4), kinds=st.sampled_from(KINDS + MORE_KINDS))
def test_compiled_formulas_match_the_relational_reference_after_writes(rows, f, t, kinds):
    """Random formulas compiled (a kernel each: few examples), called, the values
    written in place (negated), called again: the reference of the rows then."""
    assume(kinds[1] != "blocks" or not _at_codes(f))     # (refused: below)
    rel, keys = load(rows, kinds)
    kern = ep.compile(ep.sum(n, predicate(f, [rel[c].var(c.upper()) for c in COLUMNS])))
    inputs = {c.upper(): rel[c].tensor for c in COLUMNS if _uses(f, COLUMNS.index(c))}
    params = {"t": t} if _uses(f, "t") else {}
    for step in range(2):
        assert counts(kern(**inputs, **params), keys) == reference(
            stored_cells(rows, rel["a"].tensor), f, t), step
        rows = [(a, b, -x, -y, -z) for a, b, x, y, z in rows]
        for c, tensor in inputs.items():            # in place: the same arrays
            tensor.vals[:] = -tensor.vals


def test_a_coordinate_test_on_a_block_list_is_refused():
    """A block list stores runs of coordinates (one position, many codes): a
    value compared with the coordinate there is refused, naming the test."""
    rel, _ = load([(0, 0, 1, 2, 0), (0, 1, 3, 1, 2)], ["dense", "blocks"])
    A = rel["a"].var("A")
    with pytest.raises(ep.CompileError, match="stores runs of coordinates"):
        ep.evaluate(ep.sum(n, A[o, n] > n), A=rel["a"].tensor)


def test_an_or_of_overlapping_clauses_counts_a_row_once():
    rows = [(0, 0, 1, 5, 0), (0, 1, 3, 1, 0), (1, 0, 0, 9, 0)]
    rel, keys = load(rows, ["compressed", "compressed"])
    A, B = rel["a"].var("A"), rel["b"].var("B")
    both = (A[o, n] < B[o, n]) | (B[o, n] > 4)      # rows 1 and 3 pass both clauses
    for backend in ("c", "reference"):
        got = ep.evaluate(ep.sum(n, both), A=rel["a"].tensor, B=rel["b"].tensor,
                          backend=backend)
        assert counts(got, keys) == {0: 1.0, 1: 1.0}


def test_or_across_two_relations_counts_a_row_once():
    """(X[o] > 1) | (A[o, n] < 2): one clause on orders, one on lines; the terms
    of a + (~a)·b are disjoint, so a line passing both counts once."""
    rows = [(0, 0, 1, 0, 0), (0, 1, 5, 0, 0), (1, 0, 0, 0, 0), (2, 2, 3, 0, 0)]
    rel, keys = load(rows, ["compressed", "compressed"])
    X = ep.relation({"o": np.array([0, 1, 2]), "x": np.array([2.0, 0.0, 1.0])}, ["o"],
                    values="x", coding={"o": keys}, levels=["compressed"], name="X")
    lines = ep.relation({"o": np.array([r[0] for r in rows]),
                         "n": np.array([r[1] for r in rows])}, ["o", "n"],
                        coding={"o": keys, "n": keys}, levels=["compressed"] * 2, name="N")
    A, Xv = rel["a"].var("A"), X.var("X")
    expr = ep.sum(n, lines.var("N")[o, n] * ((Xv[o] > 1) | (A[o, n] < 2)))
    want = {0: 2.0, 1: 1.0}                         # order 0: both lines; 1: a = 0 < 2
    for backend in ("c", "reference"):
        got = ep.evaluate(expr, A=rel["a"].tensor, X=X.tensor, N=lines.tensor,
                          backend=backend)
        assert counts(got, keys) == want, backend


def test_not_of_index_comparisons_and_ranges_holds_at_the_other_codes():
    a = np.arange(1.0, 37.0).reshape(6, 6)
    i, j = ep.indices("i j")
    M = ep.tensor("M", 2)
    c = np.arange(6)
    cases = [(~(i < j), np.tril(a), {}),
             (~ep.between(i, 2, "hi"), a * ~((c >= 2) & (c < 4))[:, None], {"hi": 4}),
             (ep.between(i, None, 1) | ep.between(i, 4, None),
              a * ((c < 1) | (c >= 4))[:, None], {})]
    for pred, want, params in cases:
        for backend in ("reference", "c"):
            got = ep.evaluate(M[i, j] * pred, M=a, backend=backend, **params)
            np.testing.assert_array_equal(got, want)


def test_not_applies_to_comparisons_only():
    A = ep.tensor("A", 2, "csr")
    with pytest.raises(ExpressionTypeError, match="NOT applies to comparisons"):
        ~A[o, n]


clause = st.tuples(st.sampled_from(sorted(OPS)), st.integers(-1, 4),
                   st.sampled_from(sorted(OPS)), st.integers(-1, 4))


@settings(max_examples=20, deadline=None)
@given(rows=st.lists(row, min_size=1, max_size=12, unique_by=lambda r: r[:2]),
       x=st.lists(st.integers(-1, 4), min_size=5, max_size=5),
       clauses=st.lists(clause, min_size=1, max_size=3), shipped=st.integers(0, 5))
def test_an_or_of_clauses_over_a_relation_and_a_dense_table_counts_rows_once(
        rows, x, clauses, shipped):
    """Σ_n L[o, n]·(c1 | c2 | ...) where each clause tests the order's value X[o]
    (a dense table, read at the line's order) and the line's value A[o, n], and
    every clause repeats a test of the order code (o < shipped: kept a factor of
    its own): the clauses become one row test, the OR of their tests of the
    order's value a factor over o alone as well (implied by the row test: a skip
    of the order's lines), and a row passing several counts once."""
    rel, keys = load(rows, ["compressed", "compressed"])
    X = ep.relation({"o": np.arange(5), "x": np.array(x, dtype=float)}, ["o"], values="x",
                    coding={"o": keys}, levels=["dense"], name="X")
    A, Xv = rel["a"].var("A"), X.var("X")
    expr = None
    for ox, bx, oa, ba in clauses:
        c = (o < shipped) & OPS[ox](Xv[o], bx) & OPS[oa](A[o, n], ba)
        expr = c if expr is None else expr | c
    if len(clauses) > 1:       # one test per line, the repeated range kept apart,
        factors = list(ep.expr.walk.spine(expr, ep.expr.nodes.Mul))   # and the order's
        assert sorted((f.tensor.kind, f.indices) for f in factors) == [    # tests' OR
            ("range", (o,)), ("value", (o,)), ("value", (o, n))]
    want = collections.Counter()
    for (a, _), vals in stored_rows(rows, ["compressed"] * 2, rel["a"].shape).items():
        if a < shipped and any(OPS[ox](x[a], bx) and OPS[oa](vals[0], ba)
                               for ox, bx, oa, ba in clauses):
            want[a] += 1
    B = rel["b"].var("B")                 # the lines, as a factor: B's structure
    query = ep.sum(n, (B[o, n] >= -9) * expr)
    for backend in ("reference", "streams"):
        got = ep.evaluate(query, A=rel["a"].tensor, X=X.tensor, B=rel["b"].tensor,
                          backend=backend)
        assert counts(got, keys) == dict(want), backend


def test_the_or_of_clauses_compiles_to_one_test_per_line():
    """The compiled kernel on overlapping clauses (both hold at order 0's lines)."""
    rows = [(0, 0, 1, 0, 0), (0, 1, 2, 0, 0), (1, 0, 3, 0, 0), (3, 2, 0, 0, 0)]
    rel, keys = load(rows, ["dense", "compressed"])
    X = ep.relation({"o": np.arange(5), "x": np.array([5.0, 0.0, 1.0, 7.0, 2.0])}, ["o"],
                    values="x", coding={"o": keys}, levels=["dense"], name="X")
    A, Xv = rel["a"].var("A"), X.var("X")
    expr = ep.sum(n, ((Xv[o] > 4) & (A[o, n] < 3)) | ((Xv[o] >= "t") & (A[o, n] >= 1)))
    for backend in ("c", "reference"):
        got = ep.evaluate(expr, A=rel["a"].tensor, X=X.tensor, t=0, backend=backend)
        assert counts(got, keys) == {0: 2.0, 1: 1.0, 3: 1.0}, backend
