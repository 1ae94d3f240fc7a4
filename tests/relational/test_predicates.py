"""Comparisons as 0/1 factors (etchpy.expr.compare), computed keys and group-by
over sparse keys, against a pure-Python relational reference (dicts of rows), on
the three backends, under real and min_plus, with and without optimisations.
The bounds are parameters, so one kernel serves every example."""
import collections
import warnings

import numpy as np
import pytest
from hypothesis import example, given, settings, strategies as st

import etchpy as ep
from etchpy.errors import ExpressionTypeError, InputError

o, c, y = ep.indices("o c y")
SEMIRINGS = {"real": (lambda a, b: a + b, 0.0), "min_plus": (min, np.inf)}


def grouped(rows, add):
    """(o, c) -> the rows' values added: the relation as a function."""
    out = {}
    for ko, kc, v in rows:
        out[(ko, kc)] = add(out[(ko, kc)], v) if (ko, kc) in out else v
    return out


def reference(rows, lo, hi, t, add, zero):
    """Σ_c R[o, c] where lo <= o < hi, R[o, c] >= t and c < o: o -> value."""
    out = collections.defaultdict(lambda: zero)
    for (ko, kc), v in grouped(rows, add).items():
        if lo <= ko < hi and v >= t and kc < ko:
            out[ko] = add(out[ko], v)
    return {k: v for k, v in out.items() if v != zero}


QUERY = ep.sum(c, ep.tensor("R", 2, "csr")[o, c] * ep.between(o, "lo", "hi")
               * (ep.tensor("R", 2, "csr")[o, c] >= "t") * (c < o))
SPARSE = ep.Format(["compressed"])


@settings(max_examples=12)
@example(rows=[(3, 1, 2), (5, 2, 4), (5, 4, 1), (8, 9, 5)], lo=1, hi=8, t=2, sr="real",
         first="compressed")
@given(rows=st.lists(st.tuples(st.integers(0, 9), st.integers(0, 9), st.integers(-3, 6)),
                     min_size=1, max_size=20),
       lo=st.integers(-2, 11), hi=st.integers(-2, 11), t=st.integers(-3, 6),
       sr=st.sampled_from(sorted(SEMIRINGS)), first=st.sampled_from(["dense", "compressed"]))
def test_predicates_match_the_relational_reference(rows, lo, hi, t, sr, first):
    """A dense first level walks the range and locates (iterate_locate); a
    compressed one is clipped to it (clip), or leapfrogs with it under noopt."""
    add, zero = SEMIRINGS[sr]
    table = {"o": np.array([r[0] for r in rows]), "c": np.array([r[1] for r in rows]),
             "v": np.array([r[2] for r in rows], dtype=float)}
    keys = ep.Keys(np.arange(10), name="k")
    R = ep.relation(table, ["o", "c"], values="v", coding={"o": keys, "c": keys},
                    semiring=sr, levels=[first, "compressed"], name="R")
    want = reference(rows, lo, hi, t, add, zero)
    runs = [("reference", "default"), ("streams", "default"), ("c", "default")]
    if sr == "real" and first == "compressed":   # one more kernel: noopt leapfrogs
        runs.append(("c", "noopt"))
    for backend, tuning in runs:
        got = ep.evaluate(QUERY, R=R.tensor, lo=lo, hi=hi, t=t, semiring=sr, output=SPARSE,
                          backend=backend, tuning=tuning)
        result = ep.decode(got, [keys], columns=["o"], fill=zero)
        assert dict(zip(result["o"].tolist(), result["value"].tolist())) == want, backend


def test_index_comparisons_on_every_backend():
    """i < j, i <= j, i > j, i >= j and constant bounds against numpy's triangles."""
    rng = np.random.default_rng(3)
    a = rng.integers(0, 3, (6, 6)).astype(float)
    i, j = ep.indices("i j")
    A = ep.tensor("A", 2)
    cases = {(i < j): np.triu(a, 1), (i <= j): np.triu(a), (i > j): np.tril(a, -1),
             (i >= j): np.tril(a), (i >= 2): a * (np.arange(6) >= 2)[:, None],
             (j <= 2.5): a * (np.arange(6) <= 2)[None, :]}
    compiled = {"cmp_i_lt_j", "cmp_i_ge_j", "cmp_j_le_2d5"}   # few kernels: CI time
    for pred, want in cases.items():
        for backend in ("reference", "streams", "c"):
            if backend == "c" and pred.tensor.name not in compiled:
                continue
            got = ep.evaluate(A[i, j] * pred, A=a, backend=backend)
            np.testing.assert_array_equal(got, want)
    for fmt in ("dense", "coo"):     # a value filter in place, and rebuilt
        V = ep.tensor("V", 2, fmt)
        got = ep.evaluate(ep.sum((i, j), V[i, j] * (V[i, j] > 1)), V=a, backend="c")
        assert got == a[a > 1].sum()


def test_computed_year_and_like_on_a_dictionary():
    """SELECT year(day), sum(amount) WHERE item LIKE '%green%' GROUP BY year."""
    days = np.array(["1994-01-03", "1994-12-30", "1995-06-01", "1997-02-02", "1994-05-05"],
                    dtype="datetime64[D]")
    items = np.array(["forest green", "navy", "green tea", "green", "navy"])
    amount = np.array([1.0, 2.0, 4.0, 8.0, 16.0])
    S = ep.relation({"day": days, "item": items, "amount": amount}, ["day", "item"],
                    values="amount", name="S")
    green = S.keys[1].mask(lambda v: np.char.find(v, "green") >= 0)
    year, years = S.keys[0].mapping(lambda d: d.astype("datetime64[Y]"), name="year")
    d, s = ep.indices("d s")
    G, Y = ep.tensor("G", 1), ep.tensor("Y", 2, format="csr")
    first, end = S.keys[0].codes_between(np.datetime64("1994-06-01"), None)
    expr = ep.sum((d, s), S.var()[d, s] * G[s] * Y[d, y] * ep.between(d, "lo", "hi"))
    want = collections.Counter()
    for day, item, v in zip(days, items, amount):
        if "green" in item and day >= np.datetime64("1994-06-01"):
            want[str(day.astype("datetime64[Y]"))] += v
    for backend in ("reference", "streams", "c"):
        got = ep.evaluate(expr, S=S.tensor, G=green, Y=year, lo=first, hi=end,
                          output=SPARSE, backend=backend)
        result = ep.decode(got, [years], columns=["year"])
        assert dict(zip(map(str, result["year"]), result["value"].tolist())) == want


def test_group_by_over_sparse_keys_stays_sparse():
    """A group-by over a dictionary-coded key of huge span returns sorted coordinates."""
    keys = np.array([10, 10**9, 5000, 10**9, 77])
    R = ep.relation({"k": keys, "c": np.arange(5), "v": np.arange(5.0)}, ["k", "c"],
                    values="v", name="R")
    got = ep.evaluate(ep.sum(c, R.var()[o, c] * (c >= 1)), R=R.tensor, output=SPARSE)
    assert isinstance(got, ep.Tensor) and got.shape == (4,)
    result = ep.decode(got, [R.keys[0]], columns=["k"])
    assert result["k"].tolist() == [77, 5000, 10**9]
    assert result["value"].tolist() == [4.0, 2.0, 4.0]


def test_comparison_errors_name_their_input():
    i, j = ep.indices("i j")
    x = ep.tensor("x", 1)
    with pytest.raises(ExpressionTypeError, match="between"):
        bool(1 <= i < 3)
    with pytest.raises(ExpressionTypeError, match="itself"):
        i < i
    with pytest.raises(ExpressionTypeError, match="bound"):
        x[i] >= "not a name"
    with pytest.raises(InputError, match="parameter hi"):
        ep.evaluate(x[i] * ep.between(i, 0, "hi"), x=np.ones(3), hi=[1, 2])
    with pytest.raises(InputError, match="hi"):
        ep.evaluate(x[i] * ep.between(i, 0, "hi"), x=np.ones(3))
    with pytest.raises(InputError, match="index j"):
        ep.evaluate(x[i] * (i < j), x=np.ones(3), backend="reference")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert ep.evaluate(ep.sum(i, x[i] * (i >= 1)), x=np.ones(3)) == 2.0
