"""The bench's TPC-H queries written on tables loaded once (bench/tpch/tables.py:
one ep.table per table, shared by every query) give DuckDB's rows at scale 0.01
for each of three parameter sets, all on one load, and a write into lineitem's
values between queries changes the answers as it would the database's."""
import json
from pathlib import Path

import numpy as np
import pytest

import etchpy as ep
from etchpy import imp
from bench.tpch import tables as shared
from bench.tpch.catalog import QUERIES, rows_of, same

pytestmark = pytest.mark.usefixtures("shared_cache")

FIXTURE = Path(__file__).parent / "data" / "tpch_q5_sf0.01.npz"


@pytest.fixture(scope="module")
def fixture():
    with np.load(FIXTURE) as z:
        cols = {k: z[k] for k in z.files if "." in k and not k.startswith("answer")}
        return cols, json.loads(str(z["answers"]))


@pytest.fixture(scope="module")
def loaded(fixture):
    return shared.load(fixture[0])


def test_every_query_on_one_load_gives_duckdbs_rows(fixture, loaded):
    tables = loaded
    for name, run in shared.QUERIES.items():
        if name not in fixture[1]:     # Q4: no stored answer, against numpy below
            continue
        query, expected = QUERIES[name], fixture[1][name]
        for case in expected:
            got = rows_of(run(tables, **case["params"]), query)
            want = [tuple(r) for r in case["rows"]]
            assert got and same(got, want, query), (name, case["params"], got[:3], want[:3])


def _split(kernel) -> bool:
    """The program the last call ran (its one walk, runtime.shared) lists entries in
    blocks (lower.schedule.guard_blocks: a list on the stack)."""
    ran = kernel._walked.compiled.program if kernel._walked is not None else kernel.program
    return any(isinstance(s, imp.LocalArray) for s in imp.statements(ran.body))


def test_entries_listed_in_blocks_give_the_same_rows(fixture, loaded):
    """Q4, whose orders loop runs as blocks of listed orders (Tuning.guard_blocks,
    on by default), gives the same rows, to the last bit, compiled with it off:
    the same entries visited in the same order (proofs_notes/hoist.md). (Q3's
    shape: tests/lower/schedule/test_guard_blocks.py.)"""
    off = {**loaded, "kernels": {}, "tuning": ep.Tuning(guard_blocks=False)}
    for params in QUERIES["Q4"].params:
        on_rows = shared.QUERIES["Q4"](loaded, **params)
        off_rows = shared.QUERIES["Q4"](off, **params)
        for column, values in on_rows.items():
            np.testing.assert_array_equal(values, off_rows[column])
    on = next(k for make, k in loaded["kernels"].items() if make.__name__ == "q4_expr")
    no, = off["kernels"].values()
    assert _split(on) and not _split(no)


def test_a_write_between_queries_is_read_by_the_next_ones(fixture, loaded):
    """Doubling every line's revenue in place (storage order) doubles Q5's and
    Q3's revenue and Q9's part of the profit that comes from revenue (read in
    lineitem's secondary order). (On a load of its own, written; the kernels
    are the other load's: a kernel takes the tables' tensors at each call.)"""
    tables = {**shared.load(fixture[0]), "kernels": loaded["kernels"]}
    before = {n: shared.QUERIES[n](tables) for n in ("Q5", "Q9")}
    tables["lineitem"].tensor("rev").vals[:] *= 2.0
    q5 = shared.QUERIES["Q5"](tables)
    np.testing.assert_allclose(q5["revenue"], 2 * before["Q5"]["revenue"], rtol=1e-9)
    tables["lineitem"].tensor("l_quantity").vals[:] *= 2.0      # the cost doubles too
    q9 = shared.QUERIES["Q9"](tables)
    np.testing.assert_allclose(q9["sum_profit"], 2 * before["Q9"]["sum_profit"], rtol=1e-9)


def _q4_reference(cols, date: str) -> list[tuple]:
    """Q4 in numpy: the orders of the quarter with a line committed before its
    receipt, counted per priority (sorted by priority)."""
    lo = np.datetime64(date, "D").astype(np.int64)
    hi = (np.datetime64(date, "M") + 3).astype("datetime64[D]").astype(np.int64)
    late = cols["lineitem.l_commitdate"] < cols["lineitem.l_receiptdate"]
    some = np.isin(cols["orders.o_orderkey"], cols["lineitem.l_orderkey"][late])
    date_ = cols["orders.o_orderdate"].astype(np.int64)
    prio = cols["orders.o_orderpriority"][some & (date_ >= lo) & (date_ < hi)]
    names, counts = np.unique(prio, return_counts=True)
    return [(str(n), int(c)) for n, c in zip(names, counts)]


def test_q4_gives_the_reference_rows_and_reads_a_write(fixture, loaded):
    """Q4 (EXISTS as a sparse output over (order, priority)) against numpy for its
    three parameter sets; then every line made on time (commit = receipt,
    written in place) leaves no order to count (the values put back after)."""
    tables = loaded
    for case in QUERIES["Q4"].params:
        got = rows_of(shared.QUERIES["Q4"](tables, **case), QUERIES["Q4"])
        assert got and got == _q4_reference(fixture[0], **case), case
    commit = tables["lineitem"].tensor("l_commitdate").vals
    kept = commit.copy()
    commit[:] = tables["lineitem"].tensor("l_receiptdate").vals
    try:
        assert rows_of(shared.QUERIES["Q4"](tables, **QUERIES["Q4"].params[0]),
                       QUERIES["Q4"]) == []
    finally:
        commit[:] = kept


@pytest.mark.heavy          # two kernels compiled: about 6 s on a fresh cache
def test_q12_without_an_added_order_gives_duckdbs_rows(fixture):
    """bench/tpch/one_order.py's Q12 on lineitem's storage order (every line's
    mode probe and date tests one guard of its update, Tuning.guard_leaves), on
    tables with no order added, and on its order keyed by receipt date (the
    year's dates one range of it), also after receipt dates are written. (Its
    Q7, on the part order, is checked by the bench against DuckDB: two more
    kernels to compile here.)"""
    from bench.tpch import one_order
    tables = one_order.load(fixture[0])           # the bench's --one-order load
    primary, keys, _, _ = shared.SPEC["lineitem"]
    assert tables["lineitem"].orders == (tuple(primary + keys), tuple(shared.LINE_BY_PART))
    keyed = one_order.load(fixture[0], by_receipt=True)
    assert "order keyed by a value ('l_receiptdate'" in keyed["lineitem"].explain()
    query = QUERIES["Q12"]
    for case in fixture[1]["Q12"]:
        for loaded in (tables, keyed):
            got = rows_of(one_order.QUERIES["Q12"](loaded, **case["params"]), query)
            assert got and same(got, [tuple(r) for r in case["rows"]], query), case["params"]
    kern = keyed["kernels"][one_order._q12_expr_by_receipt]     # its order's attributes
    walked = [ln for ln in kern.explain().splitlines() if "loop order:" in ln][-1]
    assert walked.rstrip().endswith("m, c, d, pr)"), walked     # read last: expr.sink
    receipt = keyed["lineitem"].tensor("l_receiptdate").vals
    receipt[:] += 400.0                 # every line received 400 days later
    params = fixture[1]["Q12"][0]["params"]
    moved = one_order.q12(keyed, **params)      # the order built again
    walked = one_order.q12_walk(keyed, **params)
    for column in moved:
        np.testing.assert_array_equal(moved[column], walked[column])


def _q15_reference(cols, date):
    """Q15's view in numpy: the revenue of the quarter from `date` by supplier key."""
    lo = np.datetime64(date, "D")
    hi = (np.datetime64(date, "M") + 3).astype("datetime64[D]")
    ship = cols["lineitem.l_shipdate"].astype(np.int64)
    keep = (ship >= lo.astype(np.int64)) & (ship < hi.astype(np.int64))
    rev = cols["lineitem.l_extendedprice"] * (1.0 - cols["lineitem.l_discount"])
    return np.bincount(cols["lineitem.l_suppkey"][keep], weights=rev[keep])


@pytest.mark.heavy          # four kernels compiled: about 12 s on a fresh cache
def test_q15_and_q14_on_lineitem_by_ship_date_read_their_dates_alone(fixture):
    """bench/tpch/one_order.py's load stores lineitem ship date first (q15's
    LINE_BY_SHIP): Q15's view (revenue by supplier over a quarter) walks it, the
    quarter a range of its first level (a search and a stop: the only lines
    read), equal to numpy's for each parameter set and to the walk of every
    line (q15_walk's), also after revenues are written (the order's copy
    gathered again); its top supplier the same. Q14's month reads that order
    too, its share the walk's."""
    from bench.tpch import one_order, q10, q15
    keyed = one_order.load(fixture[0], by_ship=True)
    assert "order added ('l_shipdate', 'l_orderkey'" in keyed["lineitem"].explain()
    keys = keyed["supplier"].keys[0].values()
    rev = keyed["lineitem"].tensor("rev").vals
    for written in (False, True):
        if written:
            rev[::3] *= 5.0                 # a third of the lines' revenues written
        for params in QUERIES["Q15"].params:
            got = q15.view(keyed, **params)
            np.testing.assert_allclose(got, q15.view(keyed, **params, walk=True), rtol=1e-12)
            if not written:
                want = _q15_reference(fixture[0], **params)[keys]
                np.testing.assert_allclose(got, want, rtol=1e-12)
                assert got.argmax() == want.argmax(), params
        for params in QUERIES["Q14"].params:       # Q14's month: the same order
            by_ship, walked = (q10.q14(keyed, **params, walk=w) for w in (False, True))
            np.testing.assert_allclose(by_ship["promo_revenue"], walked["promo_revenue"],
                                       rtol=1e-12)
    for make in (q15._revenue_expr_by_ship, q10.q14_expr_by_ship):
        streams = keyed["kernels"][make].explain()
        assert "loop order: out over (sd, o, ln, p, s, m" in streams
        assert "out: Σ sd: jump (a range)" in streams    # the quarter alone: its dense positions


def test_q13_with_a_pattern_no_comment_matches_counts_every_order(fixture, loaded):
    """Q13's NOT LIKE keeping every order: the histogram of the orders per
    customer (numpy's bincount), the customers with none at 0."""
    cols = fixture[0]
    custkey = loaded["customer"].keys[0]
    per_customer = np.bincount(custkey.code(cols["orders.o_custkey"]), minlength=len(custkey))
    want = np.bincount(per_customer)
    got = shared.QUERIES["Q13"](loaded, word1="zzz", word2="qqq")
    assert dict(zip(got["c_count"].tolist(), got["custdist"].tolist())) == \
        {k: float(v) for k, v in enumerate(want) if v}


def test_q18s_having_reads_quantities_written_in_place(fixture, loaded):
    """Doubling every line's quantity in place between calls doubles each order's
    sum: the orders over 2t are then those over t before (on a load of its own,
    the kernels the other load's)."""
    tables = {**shared.load(fixture[0]), "kernels": loaded["kernels"]}
    before = shared.QUERIES["Q18"](tables, quantity=250)
    tables["lineitem"].tensor("l_quantity").vals[:] *= 2.0
    after = shared.QUERIES["Q18"](tables, quantity=500)
    assert len(before["o_orderkey"]) and \
        after["o_orderkey"].tolist() == before["o_orderkey"].tolist()
    np.testing.assert_array_equal(after["sum(l_quantity)"], 2 * before["sum(l_quantity)"])


@pytest.mark.slow
def test_q7_written_with_the_nation_pair_on_the_one_order_load(fixture):
    """bench/tpch/one_order.py's Q7 builds its pair with Keys.pairs from `(n1 = a AND
    n2 = b) OR (n1 = b AND n2 = a)` and writes the customers' nations as `n2 = a
    OR n2 = b` (no Tensor built by hand): DuckDB's rows for every parameter set,
    and for a pair of one nation twice (each row once)."""
    from bench.tpch import one_order
    tables, query = one_order.load(fixture[0]), QUERIES["Q7"]
    for case in fixture[1]["Q7"]:
        got = rows_of(one_order.QUERIES["Q7"](tables, **case["params"]), query)
        assert got and same(got, [tuple(r) for r in case["rows"]], query), case["params"]
    twice = rows_of(one_order.q7(tables, "BRAZIL", "BRAZIL"), query)
    assert all(r[0] == r[1] == "BRAZIL" for r in twice) and len(twice) == 2
