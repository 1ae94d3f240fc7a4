"""The bench's TPC-H queries written on tables loaded once (bench/tpch/tables.py:
one ep.table per table, shared by every query) give DuckDB's rows at scale 0.01
for each of three parameter sets, all on one load, and a write into lineitem's
values between queries changes the answers as it would the database's."""
import json
from pathlib import Path

import numpy as np
import pytest

from bench.tpch import tables as shared
from bench.tpch.catalog import QUERIES, rows_of, same

pytestmark = pytest.mark.usefixtures("shared_cache")

FIXTURE = Path(__file__).parent / "data" / "tpch_q5_sf0.01.npz"


@pytest.fixture(scope="module")
def fixture():
    with np.load(FIXTURE) as z:
        cols = {k: z[k] for k in z.files if "." in k and not k.startswith("answer")}
        return cols, json.loads(str(z["answers"]))


def test_every_query_on_one_load_gives_duckdbs_rows(fixture):
    tables = shared.load(fixture[0])
    for name, run in shared.QUERIES.items():
        query, expected = QUERIES[name], fixture[1][name]
        for case in expected:
            got = rows_of(run(tables, **case["params"]), query)
            want = [tuple(r) for r in case["rows"]]
            assert got and same(got, want, query), (name, case["params"], got[:3], want[:3])


def test_a_write_between_queries_is_read_by_the_next_ones(fixture):
    """Doubling every line's revenue in place (storage order) doubles Q5's and
    Q3's revenue and Q9's part of the profit that comes from revenue (read in
    lineitem's secondary order)."""
    tables = shared.load(fixture[0])
    before = {n: shared.QUERIES[n](tables) for n in ("Q5", "Q9")}
    tables["lineitem"].tensor("rev").vals[:] *= 2.0
    q5 = shared.QUERIES["Q5"](tables)
    np.testing.assert_allclose(q5["revenue"], 2 * before["Q5"]["revenue"], rtol=1e-9)
    tables["lineitem"].tensor("l_quantity").vals[:] *= 2.0      # the cost doubles too
    q9 = shared.QUERIES["Q9"](tables)
    np.testing.assert_allclose(q9["sum_profit"], 2 * before["Q9"]["sum_profit"], rtol=1e-9)
