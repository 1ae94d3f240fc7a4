"""Tables to tries (etchpy.relational) against a pure-Python relational reference:
coding and decoding keys, duplicates combined with the semiring's add, any level
order and level kinds, joins and group-by through a kernel, masks and mappings."""
import collections

import numpy as np
import pytest
from hypothesis import given, strategies as st

import etchpy as ep
from etchpy.errors import InputError

KEY_POOLS = {
    "int": st.integers(-3, 40),
    "sparse": st.sampled_from([7, 10**6, -5, 10**9, 123456]),
    "str": st.sampled_from(["ab", "b", "green", "zz", ""]),
}


def column(kind, n):
    return st.lists(KEY_POOLS[kind], min_size=n, max_size=n)


@st.composite
def tables(draw):
    n = draw(st.integers(1, 25))
    kinds = draw(st.lists(st.sampled_from(sorted(KEY_POOLS)), min_size=1, max_size=3))
    names = [f"k{m}" for m in range(len(kinds))]
    cols = {nm: np.array(draw(column(kind, n))) for nm, kind in zip(names, kinds)}
    cols["v"] = np.array(draw(st.lists(st.integers(-5, 5), min_size=n, max_size=n)),
                         dtype=float)
    order = draw(st.permutations(names))
    levels = draw(st.lists(st.sampled_from(["dense", "compressed"]),
                           min_size=len(names), max_size=len(names)))
    return cols, names, list(order), levels


def reference(cols, names, add=lambda a, b: a + b, zero=0.0):
    """Key tuple -> its rows' values added; a tuple whose sum is the semiring's
    zero is absent (a relation is a function to the semiring, zero off it)."""
    out = {}
    for r in range(len(cols[names[0]])):
        key = tuple(cols[nm][r].item() for nm in names)
        v = cols["v"][r].item()
        out[key] = add(out[key], v) if key in out else v
    return {k: v for k, v in out.items() if v != zero}


def as_dict(res, names, value="value"):
    return {tuple(res[nm][r].item() for nm in names): res[value][r].item()
            for r in range(len(res[value]))}


@given(tables(), st.booleans())
def test_relation_stores_each_key_tuple_once_with_duplicates_added(t, default_levels):
    cols, names, order, levels = t
    rel = ep.relation(cols, names, values="v", order=order,
                      levels=None if default_levels else levels)
    got = ep.decode(rel.tensor, rel.keys)
    want = reference(cols, names)
    assert as_dict(got, names) == pytest.approx(want)
    assert rel.tensor.format.mode_order == tuple(names.index(k) for k in order)


@given(tables())
def test_min_plus_relation_keeps_the_smallest_duplicate(t):
    cols, names, order, _ = t
    rel = ep.relation(cols, names, values="v", order=order, semiring="min_plus")
    got = ep.decode(rel.tensor, rel.keys, fill=np.inf)
    assert as_dict(got, names) == reference(cols, names, add=min, zero=np.inf)


@given(st.lists(st.integers(-10**12, 10**12), min_size=1, max_size=30),
       st.floats(1.0, 8.0))
def test_keys_code_decode_round_trip_and_keep_order(vals, span_limit):
    vals = np.array(vals)
    k = ep.Keys(vals, span_limit=span_limit)
    codes = k.code(vals)
    assert (k.decode(codes) == vals).all()
    assert ((codes[:, None] < codes[None, :]) == (vals[:, None] < vals[None, :])).all()
    assert 0 <= codes.min() and codes.max() < len(k)


@given(st.lists(st.integers(-50, 200), min_size=1, max_size=30),
       st.lists(st.integers(-80, 260), max_size=30))
def test_a_dictionary_of_integers_codes_by_lookup_as_by_search(vals, probes):
    """Integers of a small span in a dictionary coding are coded through a lookup
    table (value - min -> code); the codes and the absent values are those of a
    binary search in the sorted distinct values, and those of the coding told
    never to look up (lookup_span=None)."""
    table = np.unique(vals)
    k = ep.Keys(table, span_limit=0.5)
    searched = ep.Keys(table, span_limit=0.5, lookup_span=None)
    if k.kind == "range":        # no gap: every value of the span has a code
        table = np.arange(table[0], table[-1] + 1)
    else:
        assert k._lookup() is not None and searched._lookup() is None
    probes = np.array(probes, dtype=np.int64)
    codes, present = k.code(probes, missing="mask")
    at = np.minimum(np.searchsorted(table, probes), len(table) - 1)
    want = table[at] == probes
    assert (present == want).all()
    assert (codes[want] == at[want]).all() and (codes[~want] == 0).all()
    again, there = searched.code(probes, missing="mask")
    assert (there == present).all() and (again == codes).all()


@given(st.lists(st.sampled_from(["a", "c", "e", "g"]), min_size=1, max_size=8),
       st.lists(st.sampled_from(["a", "b", "c", "d", "e", "f", "g", "h"]), max_size=12))
def test_a_searched_dictionary_masks_absent_values_with_code_zero(vals, probes):
    """Keys.code(missing="mask") gives absent values the code 0, as its contract
    says, on the binary-search path too (strings are never looked up)."""
    k = ep.Keys(np.array(vals))
    codes, present = k.code(np.array(probes, dtype="<U1"), missing="mask")
    assert (codes[~present] == 0).all()
    assert (k.decode(codes[present]) == np.array(probes, dtype="<U1")[present]).all()


def test_uint64_keys_past_int64_are_coded():
    """A dictionary of uint64 keys at or above 2**63 (no lookup table: searched),
    and uint64 probes past int64 against a table that is looked up."""
    big = np.array([2**63 + 1, 2**63 + 5, 2**63 + 9], dtype=np.uint64)
    k = ep.Keys(big, span_limit=0.5)
    assert k.code(big[::-1]).tolist() == [2, 1, 0]
    small = ep.Keys(np.array([3, 7, 11, 40], dtype=np.uint64), span_limit=0.5)
    codes, present = small.code(np.array([7, 2**64 - 1 - 4, 40], dtype=np.uint64),
                                missing="mask")
    assert present.tolist() == [True, False, True] and codes.tolist() == [1, 0, 3]


def test_join_and_group_by_through_a_kernel_equals_the_reference():
    rng = np.random.default_rng(5)
    orders = {"o": rng.choice(10**6, 40, replace=False), "c": rng.integers(0, 12, 40)}
    orders["price"] = rng.random(40)
    customers = {"c": np.arange(12), "nation": rng.choice(["FR", "DE", "JP"], 12)}
    ck = ep.Keys.of(orders["c"], customers["c"], name="c")
    O = ep.relation(orders, ["o", "c"], values="price", coding={"c": ck}, name="O")
    C = ep.relation(customers, ["c", "nation"], coding={"c": ck}, name="C")
    o, c, n = ep.indices("o c n")
    revenue = ep.evaluate(ep.sum((o, c), O.var()[o, c] * C.var()[c, n]),
                          O=O.tensor, C=C.tensor)
    got = ep.decode(revenue, [C.keys[1]], columns=["nation"], order_by="value",
                    descending=True, limit=2)
    want = collections.Counter()
    for oc, p in zip(orders["c"], orders["price"]):
        want[customers["nation"][oc]] += p
    top = sorted(want.items(), key=lambda kv: -kv[1])[:2]
    assert list(got["nation"]) == [k for k, _ in top]
    assert got["value"] == pytest.approx([v for _, v in top])


def test_masks_and_mappings_are_filters_and_computed_keys():
    dates = np.array(["1994-01-03", "1994-12-30", "1995-06-01", "1996-02-29"],
                     dtype="datetime64[D]")
    names = np.array(["forest green", "navy", "green tea", "red"])
    t = {"d": dates, "name": names, "v": np.array([1.0, 2.0, 4.0, 8.0])}
    dk = ep.Keys(dates, name="d")
    R = ep.relation(t, ["d", "name"], values="v", coding={"d": dk})
    year, years = dk.mapping(lambda d: d.astype("datetime64[Y]"), name="year")
    # int32 index arrays, as a table's: a kernel reading both copies neither per call
    assert year.levels[1]["pos"].dtype == year.levels[1]["crd"].dtype == np.int32
    green = R.keys[1].mask(lambda v: np.char.find(v, "green") >= 0)
    d, s, y = ep.indices("d s y")
    expr = ep.sum((d, s), R.var("R")[d, s] * ep.tensor("G", 1)[s] * ep.tensor("Y", 2, "csr")[d, y])
    got = ep.decode(ep.evaluate(expr, R=R.tensor, G=green, Y=year), [years])
    assert [str(v) for v in got["year"]] == ["1994", "1995"]
    assert list(got["value"]) == [1.0, 4.0]


def test_bad_tables_name_the_relation_and_column():
    with pytest.raises(InputError, match="'T'.*no column 'x'"):
        ep.relation({"a": np.arange(3)}, ["x"], name="T")
    with pytest.raises(InputError, match="'T'.*value column"):
        ep.relation({"a": np.arange(3), "v": np.ones(2)}, ["a"], values="v", name="T")
    with pytest.raises(InputError, match="order"):
        ep.relation({"a": np.arange(3), "b": np.arange(3)}, ["a", "b"], order=["a"], name="T")
    with pytest.raises(InputError, match="keys 'c'.*not in the domain"):
        ep.Keys(np.array([1, 2]), name="c").code(np.array([3]))
    with pytest.raises(InputError, match="object arrays"):
        ep.Keys(np.array([1, "a"], dtype=object))


def test_several_value_columns_share_one_structure():
    t = {"k": np.array([2, 1, 2]), "a": np.array([1.0, 2.0, 3.0]), "b": np.array([5.0, 6.0, 7.0])}
    rels = ep.relation(t, ["k"], values=["a", "b"])
    assert rels["a"].tensor.to_dense().tolist() == [2.0, 4.0]
    assert rels["b"].tensor.to_dense().tolist() == [6.0, 12.0]
    counts = ep.relation(t, ["k"])
    assert counts.tensor.to_dense().tolist() == [1.0, 2.0]


@pytest.mark.parametrize("last", ["runs", "sparse_runs"])
def test_value_columns_over_a_run_level_share_one_structure_or_are_refused(last):
    """A run level merges equal neighbouring values, so each column would pack its
    own runs: columns whose runs agree share them; columns that change at
    different keys are an InputError naming the relation and the columns, not
    one column's values laid over another's runs."""
    t = {"o": np.array([0, 0, 0, 1]), "n": np.array([0, 1, 2, 0]),
         "a": np.array([1.0, 1.0, 2.0, 3.0]), "b": np.array([5.0, 5.0, 6.0, 7.0]),
         "c": np.array([4.0, 8.0, 8.0, 7.0])}
    rel = ep.relation(t, ["o", "n"], values=["a", "b"], levels=["dense", last], name="R")
    a, b = (rel[v].tensor.levels[1] for v in "ab")
    assert all(a[r] is b[r] for r in a)                # the same index arrays
    np.testing.assert_array_equal(rel["b"].tensor.to_dense(), [[5, 5, 6], [7, 0, 0]])
    with pytest.raises(InputError, match="relation 'R'.*'a' and 'c'"):
        ep.relation(t, ["o", "n"], values=["a", "c"], levels=["dense", last], name="R")
