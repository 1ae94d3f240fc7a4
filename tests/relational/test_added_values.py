"""Table.add_values: a value column added to a table loaded once, over its own
structure (one structure with the others, every stored order), checked
against the rows it was loaded from, against a pure-Python reference; and
the refusals (other rows, a wrong length or dtype, a name taken)."""
import collections

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import etchpy as ep
from etchpy.runtime.align import same_structure as _same_structure

o, p = ep.indices("o p")
row = st.tuples(st.integers(0, 5), st.integers(0, 3), st.integers(0, 9), st.integers(0, 9))


@settings(max_examples=6, deadline=None)
@given(rows=st.lists(row, min_size=1, max_size=14), perm_seed=st.integers(0, 9))
def test_an_added_column_is_summed_and_compared_as_one_loaded_with_the_table(rows, perm_seed):
    cols = {k: np.array([r[n] for r in rows]) for n, k in enumerate(["o", "p", "q", "w"])}
    T = ep.table({k: cols[k] for k in ("o", "p", "q")}, ["o"], keys=["p"], values=["q"],
                 secondary=["p", "o"], name="T")
    perm = np.random.default_rng(perm_seed).permutation(len(rows))   # any order of the rows
    assert T.add_values({k: v[perm] for k, v in cols.items()}, "w") == ("q", "w")
    assert _same_structure(T.tensor("q"), T.tensor("w"))
    q_sum, w_sum = collections.defaultdict(float), collections.defaultdict(float)
    for a, b, q, w in rows:                   # duplicates combine (the real semiring: Σ)
        q_sum[a, b] += q
        w_sum[a, b] += w
    want = collections.defaultdict(float)
    for (a, b), q in q_sum.items():
        if q > 0.5 * w_sum[a, b]:
            want[b] += w_sum[a, b]
    Q, W = T.var("q", name="Q"), T.var("w", name="W")
    got = ep.evaluate(ep.sum(o, W[o, p] * (Q[o, p] > 0.5 * W[o, p])), Q=T.tensor("q"),
                      W=T.tensor("w"))
    codes = T.keys[1]
    assert {int(codes.decode(np.array([c]))[0]): v for c, v in enumerate(got) if v} \
        == pytest.approx({k: v for k, v in want.items() if v})
    by_p = T.tensor("w", order=["p", "o"]).to_dense()           # the secondary order's copy
    assert by_p.tolist() == T.tensor("w").to_dense().tolist()


def test_rows_that_are_not_the_tables_are_refused():
    cols = {"o": np.array([1, 1, 2]), "p": np.array([5, 6, 5]), "q": np.array([1.0, 2, 3])}
    T = ep.table(cols, ["o"], keys=["p"], values=["q"], name="T")
    with pytest.raises(ep.InputError, match="not the rows it was loaded from"):
        T.add_values({"o": np.array([1, 2]), "p": np.array([5, 5]), "w": np.ones(2)}, "w")
    with pytest.raises(ep.InputError, match="not the rows it was loaded from"):   # a duplicate
        T.add_values({"o": np.array([1, 1, 2, 2]), "p": np.array([5, 6, 5, 5]),
                      "w": np.ones(4)}, "w")
    with pytest.raises(ep.InputError, match="table 'T'.*'w' has shape"):
        T.add_values({**cols, "w": np.ones(2)}, "w")
    with pytest.raises(ep.InputError, match="table 'T'.*dtype"):
        T.add_values({**cols, "w": np.array(["a", "b", "c"])}, "w")
    with pytest.raises(ep.InputError, match="already has a column 'q'"):
        T.add_values(cols, "q")
    with pytest.raises(ep.InputError, match="table 'T'.*no column 'w'"):
        T.add_values(cols, "w")
    assert T.values == ("q",)
