"""Tables loaded once (ep.table): one trie per table in its storage order
(primary key first) and at most one secondary order, shared by several
queries, against a pure-Python reference; values written between queries; a
string column coded once per distinct value (Keys.coded)."""
import collections
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings, strategies as st

import etchpy as ep
from etchpy.errors import InputError, OrderError
from etchpy.runtime.planned import converted_structure

FIXTURE = Path(__file__).resolve().parents[1] / "end_to_end" / "data" / "tpch_q5_sf0.01.npz"


def tpch():
    with np.load(FIXTURE) as z:
        cols = {k: z[k] for k in z.files}
    table = lambda t: {k.split(".")[1]: v for k, v in cols.items() if k.startswith(t + ".")}
    return cols, {t: table(t) for t in ("orders", "lineitem", "customer", "supplier",
                                         "nation", "region")}


def load(t):
    """The six tables of Q5, loaded once; the join keys share one Keys each."""
    t["lineitem"]["rev"] = t["lineitem"]["l_extendedprice"] * (1 - t["lineitem"]["l_discount"])
    shared = {"orderkey": ("orders.o_orderkey", "lineitem.l_orderkey"),
              "custkey": ("customer.c_custkey", "orders.o_custkey"),
              "suppkey": ("supplier.s_suppkey", "lineitem.l_suppkey"),
              "nationkey": ("nation.n_nationkey", "customer.c_nationkey",
                            "supplier.s_nationkey"),
              "regionkey": ("region.r_regionkey", "nation.n_regionkey")}
    coding = {}
    for name, cs in shared.items():
        keys = ep.Keys.of(*(t[c.split(".")[0]][c.split(".")[1]] for c in cs), name=name)
        coding.update({c.split(".")[1]: keys for c in cs})
    return {
        "O": ep.table(t["orders"], ["o_orderkey"], keys=["o_custkey", "o_orderdate"],
                      coding=coding, name="O"),
        "L": ep.table(t["lineitem"], ["l_orderkey", "l_linenumber"], keys=["l_suppkey"],
                      values=["rev"], coding=coding, name="L",
                      secondary=["l_suppkey", "l_orderkey", "l_linenumber"]),
        "C": ep.table(t["customer"], ["c_custkey"], keys=["c_nationkey"], coding=coding,
                      name="C"),
        "S": ep.table(t["supplier"], ["s_suppkey"], keys=["s_nationkey"], coding=coding,
                      name="S"),
        "N": ep.table(t["nation"], ["n_nationkey"], keys=["n_regionkey", "n_name"],
                      coding=coding, name="N"),
        "R": ep.table(t["region"], ["r_regionkey"], keys=["r_name"], coding=coding, name="R"),
    }


def q5(T, region, year):
    """TPC-H Q5 on the shared tables; the planner chooses the loop order."""
    o, c, d, ln, s, n, r, nm, rn = ep.indices("o c d ln s n r nm rn")
    lo, hi = T["O"].keys[2].codes_between(int(np.datetime64(f"{year}-01-01", "D").astype(int)),
                                          int(np.datetime64(f"{year + 1}-01-01", "D")
                                              .astype(int)))
    Rm = ep.tensor("Rm", 1, "csf")
    body = (T["O"].var()[o, c, d] * ep.between(d, "lo", "hi") * T["C"].var()[c, n]
            * T["L"].var("rev")[o, ln, s] * T["S"].var()[s, n] * T["N"].var()[n, r, nm]
            * T["R"].var()[r, rn] * Rm[rn])
    rev = ep.evaluate(ep.sum((o, c, d, ln, s, n, r, rn), body), lo=lo, hi=hi,
                      Rm=T["R"].keys[1].mask(lambda v: v == region, sparse=True),
                      **{k: T[k].tensor("rev" if k == "L" else None) for k in T})
    return ep.decode(rev, [T["N"].keys[2]], columns=["n_name"], order_by="value",
                     descending=True)


def revenue_by_supplier_nation(T):
    """Σ rev per supplier nation, reading lineitem in its secondary order (by supplier)."""
    s, o, ln, n = ep.indices("s o ln n")
    sec = ["l_suppkey", "l_orderkey", "l_linenumber"]
    kern = ep.compile(ep.sum((s, o, ln), T["L"].var("rev", order=sec)[o, ln, s]
                             * T["S"].var()[s, n]), order=["s", "n", "o", "ln"])
    return kern(L=T["L"].tensor("rev", order=sec), S=T["S"].tensor())


def reference_by_nation(t):
    nation_of = dict(zip(t["supplier"]["s_suppkey"].tolist(),
                         t["supplier"]["s_nationkey"].tolist()))
    out = collections.defaultdict(float)
    for sk, v in zip(t["lineitem"]["l_suppkey"].tolist(), t["lineitem"]["rev"].tolist()):
        out[nation_of[sk]] += v
    return np.array([out[k] for k in range(25)])


def test_several_queries_on_one_load_and_a_write_between_them():
    cols, t = tpch()
    T = load(t)
    asia = q5(T, "ASIA", 1994)
    assert list(asia["n_name"]) == list(cols["answer.n_name"])      # DuckDB's answer
    assert np.allclose(asia["value"], cols["answer.revenue"], rtol=1e-9)
    np.testing.assert_allclose(revenue_by_supplier_nation(T), reference_by_nation(t))
    rev = T["L"].tensor("rev").vals           # written in place, in storage order
    rev *= 2.0
    t["lineitem"]["rev"] = t["lineitem"]["rev"] * 2.0
    np.testing.assert_allclose(revenue_by_supplier_nation(T), reference_by_nation(t))
    again = q5(T, "ASIA", 1994)
    assert np.allclose(again["value"], 2 * cols["answer.revenue"], rtol=1e-9)


def small_columns(draw, values=("v",)) -> dict:
    """Columns of a small table: keys a, b (ints), s (strings) and float `values`."""
    n = draw(st.integers(1, 20))
    ints = st.lists(st.integers(0, 6), min_size=n, max_size=n)
    cols = {"a": np.array(draw(ints)), "b": np.array(draw(ints)),
            "s": np.array(draw(st.lists(st.sampled_from(["x", "yy", "z"]), min_size=n,
                                        max_size=n)))}
    for v in values:
        cols[v] = np.array(draw(st.lists(st.integers(-4, 4), min_size=n, max_size=n)), float)
    return cols


@st.composite
def small_tables(draw):
    cols = small_columns(draw)
    secondary = draw(st.permutations(["a", "b", "s"]))
    return cols, list(secondary)


@settings(max_examples=25, deadline=None)
@given(small_tables())
def test_every_stored_order_holds_the_rows_and_follows_writes(case):
    cols, secondary = case
    T = ep.table(cols, ["a"], keys=["b", "s"], values=["v"], secondary=secondary, name="T")
    want = collections.defaultdict(float)
    for row in zip(cols["a"].tolist(), cols["b"].tolist(), cols["s"].tolist(),
                   cols["v"].tolist()):
        want[tuple(T.keys[m].code(np.array([row[m]]))[0] for m in range(3))] += row[3]
    dense = np.zeros(T.relation("v").shape)
    for k, v in want.items():
        dense[k] = v
    for order in (None, secondary):
        np.testing.assert_array_equal(T.tensor("v", order=order).to_dense(), dense)
    T.tensor("v").vals[:] += 1.0                 # a write: the secondary follows
    stored = T.tensor("v").to_dense() - dense
    np.testing.assert_array_equal(T.tensor("v", order=secondary).to_dense() - dense, stored)


def test_the_secondary_order_is_the_planned_conversion_made_at_load():
    cols = {"o": np.array([1, 1, 2, 3]), "p": np.array([5, 6, 5, 7]),
            "v": np.array([1.0, 2.0, 4.0, 8.0])}
    T = ep.table(cols, ["o"], keys=["p"], values=["v"], secondary=["p", "o"], name="L")
    fmt = T.var("v", order=["p", "o"]).format
    made = converted_structure(T.tensor("v"), fmt)
    assert converted_structure(T.tensor("v"), fmt) is made        # kept, not made again
    o, p = ep.indices("o p")
    M = ep.tensor("M", 2, "csr")                 # M[p, o]: no order walks both as stored
    kern = ep.compile(ep.sum((o, p), T.var("v")[o, p] * M[p, o]),
                      optimizer_options={"nnz": {"L": 4, "M": 10**6}})   # convert L
    (conv,) = kern.plan.conversions
    assert conv.source == "L" and conv.format == fmt and "tmp_L" in kern.explain()
    m = sp.csr_array(np.ones((3, 3)))
    assert kern(L=T.tensor("v"), M=m) == 15.0
    assert converted_structure(T.tensor("v"), fmt) is made        # the one made at load
    T.tensor("v").vals[0] = 100.0
    assert kern(L=T.tensor("v"), M=m) == 114.0


def test_the_secondary_order_of_every_column_is_one_structure_walked_once():
    """The columns' copies in the secondary order share their index arrays, so a
    product of two of them is walked once (runtime.shared), and follows writes."""
    cols = {"o": np.array([1, 1, 2, 3]), "p": np.array([5, 6, 5, 7]),
            "v": np.array([1.0, 2.0, 4.0, 8.0]), "w": np.array([3.0, 0.5, 1.0, 2.0])}
    T = ep.table(cols, ["o"], keys=["p"], values=["v", "w"], secondary=["p", "o"], name="L")
    V, W = (T.tensor(c, order=["p", "o"]) for c in "vw")
    assert all(x[k] is y[k] for x, y in zip(V.levels, W.levels) for k in x)
    o, p = ep.indices("o p")
    kern = ep.compile(ep.sum(o, T.var("v", order=["p", "o"], name="V")[o, p]
                             * T.var("w", order=["p", "o"], name="W")[o, p]),
                      tuning=ep.Tuning(one_walk_from=0))     # (walked once at any size)
    assert np.allclose(kern(V=V, W=W), [3.0 + 4.0, 1.0, 16.0])      # p = 5, 6, 7
    assert any(k is not None for k in kern._walk_kernels.values())  # walked once
    T.tensor("w").vals[0] = 10.0                 # a write: the copies follow
    V, W = (T.tensor(c, order=["p", "o"]) for c in "vw")
    assert all(x[k] is y[k] for x, y in zip(V.levels, W.levels) for k in x)
    assert np.allclose(kern(V=V, W=W), [10.0 + 4.0, 1.0, 16.0])


def test_an_order_the_table_does_not_store_is_named():
    T = ep.table({"o": np.array([1, 2]), "p": np.array([3, 4]), "q": np.array([0, 1])},
                 ["o"], keys=["p", "q"], secondary=["p", "o", "q"], name="L")
    with pytest.raises(InputError, match=r"stored in the orders .*'p', 'o', 'q'.*not \('q'"):
        T.var(order=["q", "o", "p"])
    o, p, q = ep.indices("o p q")
    with pytest.raises(OrderError, match=r"would read L in the order \(p, o, q\)"):
        ep.compile(ep.sum((o, p, q), T.var()[o, p, q]), order=["p", "o", "q"])
    print(T.explain())
    assert "secondary order ('p', 'o', 'q')" in T.explain()


@pytest.mark.parametrize("kw, match", [
    ({"primary": []}, "one key column or more"),
    ({"primary": ["o"], "keys": ["o"]}, "each once"),
    ({"primary": ["o"], "secondary": ["p"]}, "must list the key columns"),
    ({"primary": ["x"]}, "no column 'x'"),
    ({"primary": ["o"], "values": ["w", "w"]}, "value columns once"),
])
def test_bad_tables_are_refused_naming_the_table(kw, match):
    cols = {"o": np.array([1, 2]), "p": np.array([3, 4]), "w": np.array([1.0, 2.0])}
    with pytest.raises(InputError, match=f"table 'T'.*{match}|{match}"):
        ep.table(cols, name="T", **kw)
    with pytest.raises(InputError, match="no value column 'z'"):
        ep.table(cols, ["o"], name="T").var("z")


@settings(max_examples=40, deadline=None)
@given(st.lists(st.sampled_from(["AIR", "MAIL", "SHIP", "", "a b"]), min_size=0,
                max_size=12000), st.integers(0, 3))
def test_keys_coded_once_per_distinct_value_equal_keys_then_code(values, extra):
    col = np.array(values + ["Q" * k for k in range(extra)], dtype="<U6")
    keys, codes = ep.Keys.coded(col, name="mode")
    again = ep.Keys(col, name="mode")
    np.testing.assert_array_equal(keys.values(), again.values())
    np.testing.assert_array_equal(codes, again.code(col))
    dates = col.view(np.uint32)[::6].astype("datetime64[D]") if len(col) else col[:0]
    k2, c2 = ep.Keys.coded(dates)
    np.testing.assert_array_equal(c2, ep.Keys(dates).code(dates))


@pytest.mark.parametrize("span", [1, 2, 3, 4, 5])
def test_a_first_level_is_dense_by_default_up_to_its_span(span):
    """A key spanning `span` codes a row: dense first up to 2 for one key (a
    dense last level stores a cell for every code), up to 4 above other levels
    (table.dense_span); the rows and a comparison's answer are the same."""
    rows = 6
    o = np.arange(rows) * span
    cols = {"o": o, "n": np.arange(rows) % 2, "v": np.arange(rows) - 2.0}
    coding = {"o": ep.Keys(np.arange(rows * span), name="o")}
    two = ep.table(cols, ["o"], keys=["n"], values=["v"], coding=coding, name="T")
    one = ep.relation(cols, ["o"], values="v", coding=coding, name="U")
    assert (str(two.tensor("v").format.levels[0]) == "dense") == (span <= 4)
    assert (str(one.tensor.format.levels[0]) == "dense") == (span <= 2)
    i, j = ep.indices("i j")
    got = ep.compile(ep.sum((i, j), two.var("v")[i, j] * (two.var("v")[i, j] < 1)))(
        T=two.tensor("v"))
    assert got == sum(v for v in cols["v"] if v < 1)
