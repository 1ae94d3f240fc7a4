"""A query's result read by the next query (docs/relational.md, "HAVING and
histograms of a result"), against a pure-Python relational reference (dicts of
rows): HAVING as a value comparison of a first kernel's output (dense or sparse)
in a second kernel, NOT of it, the histogram of a result (`ep.onehot` of it,
the groups with no row at 0, as an outer join gives), and decode's ORDER BY
with a direction per column. The kernels are compiled once, the data varies."""
import collections

import numpy as np
from hypothesis import example, given, settings, strategies as st

import etchpy as ep

g, r, a, k = ep.indices("g r a k")
GROUPS = 6
ROWS = st.lists(st.tuples(st.integers(0, GROUPS - 1), st.integers(0, 3),
                          st.integers(0, 9)), min_size=0, max_size=20)
# the first query: each group's sum (a dense output over the group codes, every
# group a cell; or a sparse one, the groups with rows only)
SUMS = ep.compile(ep.sum(r, ep.tensor("L", 2, "csr")[g, r]))
SUMS_SPARSE = ep.compile(ep.sum(r, ep.tensor("L", 2, "csr")[g, r]),
                         output=ep.Format(["compressed"]))
SPARSE_IN = ep.tensor("S", 1, ep.Format(["compressed"]))


def _second(S, keep):
    """Σ over nothing: G[g, a] · keep(S[g]) · S[g], a sparse output over (g, a)."""
    return ep.compile(ep.tensor("G", 2, "csr")[g, a] * keep(S[g]) * S[g],
                      output=ep.Format(["compressed", "compressed"]))


HAVING = _second(ep.tensor("S", 1), lambda s: s > "t")
HAVING_SPARSE = _second(SPARSE_IN, lambda s: s > "t")
NOT_HAVING = _second(ep.tensor("S", 1), lambda s: ~(s > "t"))
HIST = {n: ep.compile(ep.sum(g, ep.onehot(k, ep.tensor("C", 1)[g], n))) for n in (64,)}


def _lines(rows):
    """The rows as a csr over (group, row), duplicates summed."""
    import scipy.sparse as sp
    data = {}
    for gi, ri, v in rows:
        data[(gi, ri)] = data.get((gi, ri), 0) + float(v)
    keys = sorted(data)
    m = sp.csr_array(([data[x] for x in keys], ([x[0] for x in keys], [x[1] for x in keys])),
                     shape=(GROUPS, 4))
    m.sort_indices()
    return m


def _attrs(seed):
    """Each group's attribute (one per group, some groups without): G[g, a]."""
    import scipy.sparse as sp
    rng = np.random.default_rng(seed)
    have = [x for x in range(GROUPS) if rng.random() < 0.8]
    return sp.csr_array((np.ones(len(have)), (have, rng.integers(0, 3, len(have)))),
                        shape=(GROUPS, 3)), have


def _entries(t) -> dict:
    coords, vals = t.to_coords()
    return {tuple(int(x) for x in cd): float(v) for cd, v in zip(coords.T, vals)}


@settings(max_examples=12, deadline=None)
@given(rows=ROWS, t=st.integers(-1, 30), seed=st.integers(0, 5))
@example(rows=[], t=-1, seed=0)  # dev profile: every group of a dense result passes
def test_having_is_a_comparison_of_the_first_result(rows, t, seed):
    sums = collections.Counter()
    for gi, _, v in rows:
        sums[gi] += v
    G, _ = _attrs(seed)
    attr = {int(x): int(G.indices[G.indptr[x]]) for x in range(GROUPS)
            if G.indptr[x + 1] > G.indptr[x]}
    # a sparse result stores the groups with rows only; a dense one every group,
    # those with no row at 0 (which pass when t < 0, as an outer join gives)
    want = {(x, attr[x]): float(s) for x, s in sums.items() if x in attr and s > t}
    want_dense = {(x, attr[x]): float(sums[x]) for x in attr if sums[x] > t}
    L = _lines(rows)
    dense = SUMS(L=L)
    assert _entries(HAVING(G=G, S=dense, t=t)) == want_dense
    assert _entries(HAVING_SPARSE(G=G, S=SUMS_SPARSE(L=L), t=t)) == want
    # NOT: the groups whose sum fails (a dense result stores every group, those
    # with no row at 0: as an outer join, they are groups whose sum is 0)
    fail = {(x, attr[x]): float(sums[x]) for x in attr if not sums[x] > t}
    assert _entries(NOT_HAVING(G=G, S=dense, t=t)) == fail


@settings(max_examples=12, deadline=None)
@given(rows=ROWS)
def test_a_histogram_of_a_result_counts_the_groups_with_no_row_at_zero(rows):
    counts = collections.Counter(gi for gi, _, _ in rows)
    L = _lines([(gi, ri, 1) for gi, ri, _ in rows])
    per_group = SUMS(L=L)
    assert per_group.tolist() == [float(counts[x]) for x in range(GROUPS)]
    hist = HIST[64](C=per_group)
    want = collections.Counter(counts[x] for x in range(GROUPS))
    assert {int(b): int(v) for b, v in enumerate(hist) if v} == dict(want)


@settings(max_examples=25, deadline=None)
@given(rows=st.lists(st.tuples(st.integers(0, 3), st.sampled_from("abc"),
                               st.integers(1, 9)), min_size=1, max_size=12, unique_by=lambda x: x[0]),
       down=st.tuples(st.booleans(), st.booleans()))
def test_decode_orders_each_column_its_own_way(rows, down):
    keys = ep.Keys(np.arange(4), name="id")
    name = np.array(["", "", "", ""], dtype="<U1")
    result = np.zeros(4)
    for i, s, v in rows:
        name[i], result[i] = s, v
    out = ep.decode(result, [keys], columns=["id"], carry={"name": ("id", name)},
                    order_by=["name", "value"], descending=list(down))
    want = sorted(((s, v) for _, s, v in rows),
                  key=lambda x: (-ord(x[0]) if down[0] else ord(x[0]),
                                 -x[1] if down[1] else x[1]))
    assert list(zip(out["name"].tolist(), out["value"].tolist())) == \
        [(s, float(v)) for s, v in want]


def test_decode_refuses_directions_that_do_not_match_the_columns():
    import pytest
    with pytest.raises(ep.InputError, match="one bool per order_by"):
        ep.decode(np.ones(3), [ep.Keys(np.arange(3))], order_by=["keys"],
                  descending=[True, False])
