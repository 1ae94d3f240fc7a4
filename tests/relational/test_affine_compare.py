"""Affine operands of comparisons (expr.affine): `B[o, n] + 1 < A[o, n]`,
`A[o, n] > 0.5 * B[o, n] + "t"`, `"k" * B[o, n] - 1 >= A[o, n]`, `A[o, n] + "d" < n`,
`A[o, n] < 0.5 * Bl[o] + "t"`, `A[o, n] + "d" < "t"`, against a pure-Python
relational reference over the entries each level kind stores, on the C, streams
and reference backends, one kernel for every parameter value and for values
written in place between calls; integer columns (offsets rounded exactly),
dates as days, NaN, and the refusals."""
import collections

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import etchpy as ep
from etchpy.errors import ExpressionTypeError, InputError, SemiringError

o, n = ep.indices("o n")
N = 5
OPS = {"<": lambda a, b: a < b, "<=": lambda a, b: a <= b, ">": lambda a, b: a > b,
       ">=": lambda a, b: a >= b, "==": lambda a, b: a == b, "!=": lambda a, b: a != b}
BUILD = {"<": lambda a, b: a < b, "<=": lambda a, b: a <= b, ">": lambda a, b: a > b,
         ">=": lambda a, b: a >= b, "==": ep.eq, "!=": ep.ne}
# name -> (the inputs it reads, the two sides built, the two sides of the reference
# at a cell): a, b the cell's values, bl the located vector's at its o, c its code
# at n, p the parameters; the numbers are dyadic, so that float arithmetic is
# exact (fused into an FMA or not) and the reference's
FORMS = {
    "offset": ("A B", lambda A, B, Bl: (B + 1, A), lambda a, b, bl, c, p: (b + 1, a)),
    "minus_par": ("A B d", lambda A, B, Bl: (A, B - "d"),
                  lambda a, b, bl, c, p: (a, b - p["d"])),
    "affine_par": ("A B t", lambda A, B, Bl: (A, 0.5 * B + "t"),
                   lambda a, b, bl, c, p: (a, 0.5 * b + p["t"])),
    "par_scale": ("A B k", lambda A, B, Bl: ("k" * B - 1, A),
                  lambda a, b, bl, c, p: (p["k"] * b - 1, a)),
    "both_sides": ("A B d t", lambda A, B, Bl: (2 * A + "d", -B + "t"),
                   lambda a, b, bl, c, p: (2 * a + p["d"], -b + p["t"])),
    "index": ("A d", lambda A, B, Bl: (A + "d", n), lambda a, b, bl, c, p: (a + p["d"], c)),
    "index_left": ("A", lambda A, B, Bl: (n, 2 * A - 1), lambda a, b, bl, c, p: (c, 2 * a - 1)),
    "located": ("A Bl t", lambda A, B, Bl: (A, Bl * 0.5 + "t"),
                lambda a, b, bl, c, p: (a, 0.5 * bl + p["t"])),
    "bound": ("A d t", lambda A, B, Bl: (A + "d", "t"),
              lambda a, b, bl, c, p: (a + p["d"], p["t"])),
}
INTEGER_FORMS = ("offset", "minus_par", "par_scale", "both_sides", "index", "index_left",
                 "bound")
KINDS = (("dense", "compressed"), ("compressed", "compressed"), ("dense", "dense"),
         ("compressed", "singleton"), ("dense", "hash"), ("compressed", "bytemap"),
         ("dense", "banded"))
BACKENDS = ("c", "streams", "reference")


def stored(rows, kinds):
    """The cells a relation of `rows` ((o, n) -> (a, b)) stores under level kinds
    `kinds`, with their values: its rows; under a dense last level every n of
    each stored o (of every o under a dense first level), and under a banded one
    every n between a row's least and greatest, those of no row holding 0."""
    os = range(N) if kinds[0] == "dense" else sorted({k[0] for k in rows})
    out = {}
    for ko in os:
        ns = sorted(k[1] for k in rows if k[0] == ko)
        cells = range(N) if kinds[1] == "dense" else \
            range(ns[0], ns[-1] + 1) if kinds[1] == "banded" and ns else ns
        for kn in cells:
            out[ko, kn] = rows.get((ko, kn), (0, 0))
    return out


def reference(cells, bl, form, op, p):
    """o -> the count of cells whose two sides (FORMS[form]) pass `op`."""
    out = collections.Counter()
    for (ko, kn), (a, b) in cells.items():
        x, y = FORMS[form][2](a, b, bl[ko], kn, p)
        out[ko] += bool(OPS[op](x, y))
    return [out[k] for k in range(N)]


def _rows(draw_rows, kinds):
    rows = dict(draw_rows)
    if kinds[1] == "singleton":               # one row per o
        rows = {k: v for k, v in rows.items() if k[1] == min(
            q[1] for q in rows if q[0] == k[0])}
    return rows


def _relation(rows, kinds, sr, dtype):
    keys = sorted(rows)
    cols = {"o": np.array([k[0] for k in keys]), "n": np.array([k[1] for k in keys]),
            "a": np.array([rows[k][0] for k in keys], dtype=dtype),
            "b": np.array([rows[k][1] for k in keys], dtype=dtype)}
    coding = ep.Keys(np.arange(N), name="k")
    return ep.relation(cols, ["o", "n"], values=["a", "b"], levels=list(kinds),
                       coding={"o": coding, "n": coding}, semiring=sr, name="L")


half = st.sampled_from([-2.0, -1.5, -0.5, 0.0, 0.5, 1.0, 2.5, 3.0])
cell = st.tuples(st.tuples(st.integers(0, N - 1), st.integers(0, N - 1)),
                 st.tuples(half, half))
params = st.fixed_dictionaries({"d": half, "t": half, "k": st.sampled_from([-1.0, 0.5, 2.0])})


@settings(max_examples=25, deadline=None)
@given(rows=st.lists(cell, min_size=1, max_size=12), kinds=st.sampled_from(KINDS),
       form=st.sampled_from(sorted(FORMS)), op=st.sampled_from(sorted(OPS)),
       ps=st.lists(params, min_size=2, max_size=2), bl=st.lists(half, min_size=N, max_size=N))
def test_affine_operands_match_the_relational_reference(rows, kinds, form, op, ps, bl):
    """One kernel per backend for two parameter sets, then for values written in
    place (every stored value v becomes 1.5 - v)."""
    rows = _rows(rows, kinds)
    L = _relation(rows, kinds, "real", float)
    A, B, Bl = L["a"].var("A")[o, n], L["b"].var("B")[o, n], ep.tensor("Bl", 1)[o]
    expr = ep.sum(n, BUILD[op](*FORMS[form][1](A, B, Bl)))
    cells, uses = stored(rows, kinds), FORMS[form][0].split()
    kernel = ep.compile(expr)
    for p in ps:
        want = reference(cells, bl, form, op, p)
        ins = {k: v for k, v in {"A": L["a"].tensor, "B": L["b"].tensor, "Bl": np.array(bl),
                                 **p}.items() if k in uses}
        for backend in BACKENDS:
            got = kernel(**ins) if backend == "c" else ep.evaluate(expr, backend=backend, **ins)
            assert np.asarray(got).tolist() == want, (backend, p)
    for t in (L["a"].tensor, L["b"].tensor):
        t.vals[:] = 1.5 - t.vals
    written = {k: (1.5 - a, 1.5 - b) for k, (a, b) in cells.items()}
    assert np.asarray(kernel(**ins)).tolist() == reference(written, bl, form, op, p)


@settings(max_examples=15, deadline=None)
@given(rows=st.lists(st.tuples(st.tuples(st.integers(0, N - 1), st.integers(0, N - 1)),
                               st.tuples(st.integers(-6, 6), st.integers(-6, 6))),
                     min_size=1, max_size=12),
       kinds=st.sampled_from(KINDS), form=st.sampled_from(INTEGER_FORMS),
       op=st.sampled_from(sorted(OPS)),
       d=st.sampled_from([-3, -2.5, -0.5, 0, 1, 1.5, 2]), t=st.sampled_from([-2, 0.5, 3]),
       k=st.sampled_from([-1, 2, 3]))
def test_integer_columns_compare_exactly(rows, kinds, form, op, d, t, k):
    """Under the integer semiring, a fractional offset or bound is rounded as the
    test needs (v < w + 2.5 iff v < w + 3): the same answers as exact arithmetic."""
    rows = _rows(rows, kinds)
    L = _relation(rows, kinds, ep.semirings.integer, np.int64)
    A, B, Bl = L["a"].var("A")[o, n], L["b"].var("B")[o, n], ep.tensor("Bl", 1)[o]
    expr = ep.sum(n, BUILD[op](*FORMS[form][1](A, B, Bl)))
    p = {"d": d, "t": t, "k": k}
    want = reference(stored(rows, kinds), [0] * N, form, op, p)
    ins = {k: v for k, v in {"A": L["a"].tensor, "B": L["b"].tensor, **p}.items()
           if k in FORMS[form][0].split()}
    for backend in BACKENDS:
        got = ep.evaluate(expr, backend=backend, semiring=ep.semirings.integer, **ins)
        assert np.asarray(got).tolist() == want, backend


def test_received_more_than_thirty_days_after_commit():
    """TPC-H's `l_receiptdate > l_commitdate + 30` and `o_orderdate < date +
    interval`, dates as days, one kernel for every interval."""
    commit = np.array(["1995-01-01", "1995-01-01", "1995-03-01", "1995-02-10"],
                      dtype="datetime64[D]")
    receipt = commit + np.array([30, 31, 45, 2])
    days = {"commit": commit.astype(np.int64), "receipt": receipt.astype(np.int64)}
    for sr, dtype in (("real", float), (ep.semirings.integer, np.int64)):
        L = ep.relation({"o": np.array([1, 1, 2, 3]), "n": np.array([1, 2, 1, 1]),
                         **{k: v.astype(dtype) for k, v in days.items()}}, ["o", "n"],
                        values=["commit", "receipt"], semiring=sr, name="L")
        C, R = L["commit"].var("C")[o, n], L["receipt"].var("R")[o, n]
        late = ep.compile(ep.sum(n, R > C + "days"), semiring=sr)
        cols = {"C": L["commit"].tensor, "R": L["receipt"].tensor}
        assert np.asarray(late(**cols, days=30)).tolist() == [1, 1, 0]
        assert np.asarray(late(**cols, days=1)).tolist() == [2, 1, 1]
        assert np.asarray(late(**cols, days=30.5)).tolist() == [1, 1, 0]
        start = int(np.datetime64("1995-01-01").astype(np.int64))
        early = ep.compile(ep.sum(n, C - "interval" < "start"), semiring=sr)
        assert np.asarray(early(C=cols["C"], start=start, interval=40)).tolist() == [2, 0, 0]
        assert np.asarray(early(C=cols["C"], start=start, interval=60)).tolist() == [2, 1, 1]


def test_nan_compares_with_nothing_and_parameters_are_checked():
    L = ep.relation({"o": np.array([0, 0, 1]), "n": np.array([0, 1, 0]),
                     "a": np.array([1.0, np.nan, 2.0]), "b": np.array([np.nan, 0.0, 1.0])},
                    ["o", "n"], values=["a", "b"], name="L")
    A, B = L["a"].var("A")[o, n], L["b"].var("B")[o, n]
    ins = {"A": L["a"].tensor, "B": L["b"].tensor}
    for build in BUILD.values():
        got = ep.evaluate(ep.sum(n, build(B + 1, A)), **ins)
        assert got[0] == 0.0                      # a NaN on either side: no test passes
    with pytest.raises(InputError, match="NaN"):
        ep.evaluate(ep.sum(n, A < B + "t"), **ins, t=np.nan)
    with pytest.raises(InputError, match="missing parameter t"):
        ep.evaluate(ep.sum(n, A < B + "t"), **ins)
    with pytest.raises(InputError, match="integer"):        # a scale of integer values
        N2 = ep.relation({"o": np.array([0]), "n": np.array([0]), "a": np.array([1])},
                         ["o", "n"], values="a", semiring=ep.semirings.integer, name="N2")
        ep.evaluate(ep.sum(n, "k" * N2.var()[o, n] < 3), semiring=ep.semirings.integer,
                    N2=N2.tensor, k=0.5)


def test_affine_operands_outside_a_comparison_are_refused():
    A, B = ep.tensor("A", 2, "csr"), ep.tensor("B", 1)
    with pytest.raises(ExpressionTypeError, match="operand only"):
        ep.sum(n, A[o, n] + "t")
    with pytest.raises(ExpressionTypeError, match="two parameters"):
        "a" * ("b" * A[o, n]) < 1
    with pytest.raises(ExpressionTypeError, match="cannot compare"):
        A[o, n] + B[o] < 3                        # two accesses added: no operand
    with pytest.raises(ExpressionTypeError, match="of inputs"):
        A[o, n] + 1 < 2 * (A[o, n] < 2)           # a comparison is no value to compare
    B2 = ep.relation({"o": np.array([0]), "n": np.array([0]), "v": np.array([True]),
                      "w": np.array([False])}, ["o", "n"], values=["v", "w"],
                     semiring=ep.semirings.boolean, name="B2")
    V, W = B2["v"].var("V")[o, n], B2["w"].var("W")[o, n]
    with pytest.raises(SemiringError, match="offsets"):
        ep.evaluate(ep.sum(n, V + 1 < W), semiring=ep.semirings.boolean, V=B2["v"].tensor,
                    W=B2["w"].tensor)


def test_an_offset_column_on_its_value_keyed_order_is_a_range_of_codes():
    """`Day + 1 >= lo`, `Day - s < hi` on an order keyed by the day are ranges of
    the day's codes (expr.keyed: a search and a stop, bounds lo - 1 and hi + s
    worked out at call time), with the rows' answers."""
    from etchpy.expr import keyed
    from etchpy.expr.compare import CompareVar
    from etchpy.expr.walk import accesses
    rng = np.random.default_rng(4)
    m = 40
    cols = {"order": np.sort(rng.integers(0, 5, m)), "line": np.arange(m),
            "part": rng.integers(0, 4, m), "rev": rng.integers(1, 9, m).astype(float),
            "day": rng.integers(0, 8, m).astype(float)}
    by_day = ("day", "order", "line", "part")
    T = ep.table(cols, ["order", "line"], keys=["part"], values=["rev", "day"], name="L")
    T.add_order(by_day)
    d, ln, p = ep.indices("d ln p")
    Rev, Day = (T.var(c, order=by_day, name=c[0].upper())[d, o, ln, p] for c in ("rev", "day"))
    expr = ep.sum((d, ln, p), Rev * ((Day + 1 >= "lo") & (Day - "s" < "hi")))
    ranges = [a.tensor for a in accesses(keyed.ranges(expr))
              if isinstance(a.tensor, CompareVar) and a.tensor.kind == "range"]
    assert len(ranges) == 1 and ranges[0].keyed and set(ranges[0].params) == {"lo", "hi", "s"}
    kern = ep.compile(expr)
    order = ep.Keys(cols["order"]).code(cols["order"])
    for lo, hi, s in ((2, 5, 1), (0, 9, 0), (4.5, 6, 2.5), (9, 1, 0)):
        keep = (cols["day"] + 1 >= lo) & (cols["day"] - s < hi)
        want = np.bincount(order[keep], cols["rev"][keep], minlength=5)
        got = kern(R=T.tensor("rev", order=by_day), D=T.tensor("day", order=by_day),
                   lo=lo, hi=hi, s=s)
        assert got[:5].tolist() == want.tolist(), (lo, hi, s)
