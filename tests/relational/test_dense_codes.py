"""Integer keys with gaps are coded densely: the codes are the ranks among the
distinct values (a level over them spans the keys that occur, not the span of
their values), found by one scatter over the span (relational.columns.occurring)
when it is small, by a sort otherwise; range coding only where no value of the
span is missing (span_limit=1, the default)."""
import numpy as np
from hypothesis import given, strategies as st

import etchpy as ep

DTYPES = st.sampled_from([np.int64, np.int32, np.uint32, np.uint64, np.int16])


@given(st.lists(st.integers(0, 3000), min_size=1, max_size=60), DTYPES,
       st.sampled_from([0, -1000, 10**9]), st.sampled_from([1, 40]))
def test_integer_keys_code_to_their_rank_among_the_distinct_values(vals, dtype, shift,
                                                                   stretch):
    """Whatever the gaps (a span up to 120000 for 60 values: the scatter and the
    sort both), the coding has one code per distinct value, each value's code is
    its rank, and it is a range coding exactly when the span has no gap."""
    vals = np.array(vals, dtype=np.int64) * stretch + shift
    if np.dtype(dtype).kind == "u" and vals.min() < 0 or \
            np.iinfo(dtype).max < vals.max() or np.iinfo(dtype).min > vals.min():
        return
    vals = vals.astype(dtype)
    distinct = np.unique(vals)
    k = ep.Keys(vals, name="k")
    assert len(k) == len(distinct)
    assert (k.kind == "range") == (int(distinct[-1]) - int(distinct[0]) + 1 == len(distinct))
    assert k.code(vals).tolist() == np.searchsorted(distinct, vals).tolist()
    assert (k.values() == distinct).all() and k.values().dtype == vals.dtype
    searched = ep.Keys(vals, lookup_span=None)      # never looked up: the same codes
    assert searched.code(vals).tolist() == k.code(vals).tolist()
    wider = ep.Keys(vals, span_limit=4.0)           # the former default: range with gaps
    assert wider.decode(wider.code(vals)).tolist() == vals.tolist()


def test_order_keys_of_a_quarter_of_their_span_make_a_level_over_the_orders():
    """TPC-H's order keys (8 of every 32 values) coded once for orders and
    lineitem: the codes are 0..orders-1, and a table's dense first level spans
    the orders, not four times as many codes."""
    orderkey = np.concatenate([np.arange(1, 9) + 32 * b for b in range(250)])
    keys = ep.Keys.of(orderkey, np.repeat(orderkey, 3), name="orderkey")
    assert keys.kind == "dictionary" and len(keys) == len(orderkey)
    lines = {"l_orderkey": np.repeat(orderkey, 3), "l_linenumber": np.tile([1, 2, 3], 2000),
             "q": np.ones(6000)}
    L = ep.table(lines, ["l_orderkey", "l_linenumber"], values=["q"],
                 coding={"l_orderkey": keys}, name="L")
    assert L.tensor("q").shape[0] == len(orderkey)
    assert "dense" in L.explain().splitlines()[1]
    o, n = ep.indices("o n")
    per_order = ep.evaluate(ep.sum(n, L.var("q")[o, n]), L=L.tensor("q"))
    assert (np.asarray(per_order) == 3.0).all()
    assert ep.Keys(orderkey, span_limit=4.0).kind == "range"
