"""Keys.mask, Keys.like and Keys.mapping give ep.Tensors (etchpy.relational.filters):
a filter stored as the codes that pass ("csf") when at most
Tuning.filter_sparse_below of the codes pass, else dense; `sparse=` forces
either; a kernel declared for either format reads both, without a
PerformanceWarning. Against a pure-Python reference (rows as tuples), with the
relation's values written in place between calls. proofs_notes/filters.md."""
import collections
import warnings

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import etchpy as ep
from etchpy.errors import InputError

d, s = ep.indices("d s")
WORDS = ["green", "navy", "red", "blue", "green tea", "sea green", "tan", "teal"]


def _reference(rows, passes):
    """Σ over rows whose item passes, by day: day -> value."""
    out = collections.Counter()
    for day, item, v in rows:
        if passes(item):
            out[day] += v
    return dict(out)


def _query(fmt):
    G = ep.tensor("G", 1, fmt)
    return ep.sum(s, ep.tensor("S", 2, "dcsr")[d, s] * G[s])


@settings(max_examples=8)
@given(rows=st.lists(st.tuples(st.integers(0, 5), st.sampled_from(WORDS),
                               st.integers(1, 9)), min_size=1, max_size=30),
       pattern=st.sampled_from(["%green%", "t%", "%a%", "navy", "%e%e%", "_ed"]),
       share=st.sampled_from([0.0, 0.125, 0.5, 1.0]))
def test_filters_equal_the_reference_whatever_their_storage(rows, pattern, share):
    days, items, vals = (np.array(c) for c in zip(*rows))
    R = ep.relation({"day": days, "item": items, "v": vals.astype(float)}, ["day", "item"],
                    values="v", name="R")
    keys = R.keys[1]
    passes = {"%green%": lambda w: "green" in w, "t%": lambda w: w.startswith("t"),
              "%a%": lambda w: "a" in w, "navy": lambda w: w == "navy",
              "%e%e%": lambda w: w.count("e") >= 2, "_ed": lambda w: w == "red"}[pattern]
    held = np.array([passes(w) for w in keys.values()])
    for f in (keys.like(pattern, sparse_below=share),
              keys.mask(lambda v: np.array([passes(w) for w in v], dtype=bool),
                        tuning={"filter_sparse_below": share})):
        assert f.to_dense().tolist() == held.astype(float).tolist()
        assert f.format.name == ("csf" if held.sum() <= share * len(held) else "dense")
    forced = [keys.like(pattern, sparse=True), keys.like(pattern, sparse=False)]
    assert [f.format.name for f in forced] == ["csf", "dense"]
    S = R.tensor.convert("dcsr")      # one structure, one kernel for every example
    with warnings.catch_warnings():
        warnings.simplefilter("error", ep.PerformanceWarning)    # either form, either declaration
        for fmt in ("dense", "csf"):
            kern = ep.compile(_query(fmt))
            for f in forced:
                got = kern(S=S, G=f)
                want = _reference(zip(days, items, vals), passes)
                day_codes = R.keys[0].code(np.array(sorted(want), dtype=days.dtype))
                assert {int(k): got[c] for k, c in zip(sorted(want), day_codes)} == want
                assert got.sum() == sum(want.values())
    # the relation's values written in place between calls: the same kernel, the filter again
    S.vals[:] *= 2
    got = ep.compile(_query("csf"))(S=S, G=keys.like(pattern))
    assert got.sum() == 2 * sum(_reference(zip(days, items, vals), passes).values())


def test_a_mapping_is_an_etchpy_value_regrouping_by_the_computed_key():
    days = np.array(["1994-01-03", "1994-12-30", "1995-06-01"], dtype="datetime64[D]")
    R = ep.relation({"day": days, "item": np.array(["a", "b", "a"]),
                     "v": np.array([1.0, 2.0, 4.0])}, ["day", "item"], values="v")
    year, years = R.keys[0].mapping(lambda x: x.astype("datetime64[Y]"), name="year")
    assert isinstance(year, ep.Tensor) and year.format.name == "csr"
    assert year.to_dense().tolist() == [[1, 0], [1, 0], [0, 1]]
    y = ep.indices("y")[0]
    expr = ep.sum((d, s), R.var("R")[d, s] * ep.tensor("Y", 2, "csr")[d, y])
    got = ep.decode(ep.evaluate(expr, R=R.tensor, Y=year), [years], columns=["year"])
    assert [str(v) for v in got["year"]] == ["1994", "1995"] and list(got["value"]) == [3, 4]


def test_bad_filter_options_name_the_keys():
    k = ep.Keys(np.array(["a", "b"]), name="item")
    with pytest.raises(InputError, match="'item'.*sparse is True, False or None"):
        k.mask(lambda v: v == "a", sparse="yes")
    with pytest.raises(InputError, match="'item'.*sparse_below"):
        k.like("a%", sparse_below=2.0)


def test_a_pair_filter_holds_the_pairs_of_values_that_pass():
    n = ep.Keys(np.array([3, 7, 9, 12]), name="nation")
    pair = n.pairs(n, lambda x, y: ((x == 7) & (y == 12)) | ((x == 12) & (y == 7)))
    assert pair.format.name == "csr" and pair.to_dense().tolist() == [
        [0, 0, 0, 0], [0, 0, 0, 1], [0, 0, 0, 0], [0, 1, 0, 0]]
    same = n.pairs(n, lambda x, y: (x == 9) & (y == 9), format="dcsr")
    assert same.format.name == "dcsr" and same.nnz == 1
    with pytest.raises(InputError, match="'nation'.*csr"):
        n.pairs(n, lambda x, y: x == y, format="csf")
