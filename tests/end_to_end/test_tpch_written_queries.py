"""TPC-H Q11, Q16, Q21 and Q22 written as docs/relational.md teaches give DuckDB's
rows at scale 0.01 for three parameter sets each, all on one load of the
tables (bench/tpch/tables.py `load`):

- Q11 (bench/tpch/q11.py): the nation's suppliers a sparse filter made by a
  kernel, the stock value per part a dense output, HAVING against a fraction
  of its total a sparse output;
- Q16 (q16.py): NOT IN a supplier set made by a kernel from NOT LIKE over the
  coded comments, `<>`, NOT LIKE and IN on the part, the passing partsupp rows
  a sparse output, the distinct suppliers per group counted in numpy;
- Q21 (q21.py): EXISTS and NOT EXISTS with `l_suppkey <>` on the same order as
  tests of the order's spreads of supplier codes, a first query's six sums
  per order;
- Q22 (q22.py): the phone's country code coded at load and read by
  ep.onehot, the average balance a first query, NOT EXISTS orders a
  comparison of each customer's order count.

The fixture's columns with the ones these read beside it (the supplier's name
and comment, partsupp's available quantity, the order's status:
tpch_extra_sf0.01.npz, from the same generator); DuckDB's rows computed from
them."""
from pathlib import Path

import numpy as np
import pytest

from bench.tpch import data, tables as shared
from bench.tpch.catalog import QUERIES, rows_of, same

DATA = Path(__file__).parent / "data"
# each query's least number of rows for a parameter set (so an empty answer fails)
LEAST_ROWS = {"Q11": 11, "Q16": 11, "Q21": 1, "Q22": 7}


@pytest.fixture(scope="module")
def loaded():
    cols = {}
    for name in ("tpch_q5_sf0.01.npz", "tpch_extra_sf0.01.npz"):
        with np.load(DATA / name) as z:
            cols.update({k: z[k] for k in z.files if "." in k and not k.startswith("answer")})
    return shared.load(cols, added_orders=False), data.duckdb_with(cols)


@pytest.mark.parametrize("name", sorted(LEAST_ROWS))
def test_a_written_query_gives_duckdbs_rows(loaded, name):
    tables, con = loaded
    query = QUERIES[name]
    for params in query.params:
        got = rows_of(shared.QUERIES[name](tables, **params), query)
        want = [tuple(r) for r in con.execute(query.sql(params)).fetchall()]
        assert len(want) >= LEAST_ROWS[name] and same(got, want, query), \
            (params, got[:3], want[:3])
