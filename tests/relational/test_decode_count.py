"""ep.decode's `count` (relational.counted): SQL's rows of a grouped SUM, the
cells with rows whatever their sum (a SUM of 0 is a row), none for a group
without rows, and NULL (NaN) for a SUM of no keys over no rows, against a
pure-Python reference, for dense and sparse results."""
import collections

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import etchpy as ep
from etchpy.errors import InputError

o, n = ep.indices("o n")
SPARSE = ep.Format(["compressed"])


@settings(max_examples=10, deadline=None)
@given(rows=st.lists(st.tuples(st.integers(0, 4), st.integers(0, 3),
                               st.sampled_from([-1.0, 0.0, 1.0])),
                     min_size=1, max_size=10, unique_by=lambda r: r[:2]),
       least=st.sampled_from([-1.0, 0.0, 2.0]), sparse=st.booleans())
def test_sum_with_its_count_gives_sqls_group_by_rows(rows, least, sparse):
    """SELECT o, SUM(v) FROM t WHERE v >= least GROUP BY o."""
    cols = {"o": np.array([r[0] for r in rows]), "n": np.array([r[1] for r in rows]),
            "v": np.array([r[2] for r in rows])}
    keys = ep.Keys(np.arange(5), name="o")
    V = ep.relation(cols, ["o", "n"], values="v", coding={"o": keys}, name="V")
    v = V.var("V")[o, n]
    out = {"output": SPARSE} if sparse else {}
    total = ep.evaluate(ep.sum(n, v * (v >= least)), V=V.tensor, **out)
    count = ep.evaluate(ep.sum(n, v >= least), V=V.tensor, **out)
    got = ep.decode(total, [keys], count=count)
    want = collections.defaultdict(float)
    for ko, _, x in rows:
        if x >= least:
            want[ko] += x
    assert dict(zip(got["o"].tolist(), got["value"].tolist())) == dict(want)
    everything = ep.decode(ep.evaluate(ep.sum((o, n), v * (v >= least)), V=V.tensor), [],
                           count=ep.evaluate(ep.sum((o, n), v >= least), V=V.tensor))
    if want:
        assert everything["value"].tolist() == [sum(want.values())]
    else:
        assert np.isnan(everything["value"]).all() and len(everything["value"]) == 1


def test_count_must_have_the_results_shape():
    with pytest.raises(InputError, match="count has shape"):
        ep.decode(np.zeros(3), [ep.Keys(np.arange(3))], count=np.zeros(4))
