"""TPC-H Q11, Q16, Q17, Q21 and Q22 written as docs/relational.md teaches give DuckDB's
rows at scale 0.01 for three parameter sets each, all on one load of the
tables (bench/tpch/tables.py `load`):

- Q11 (bench/tpch/q11.py): the nation's suppliers a sparse filter made by a
  kernel, the stock value per part a dense output, HAVING against a fraction
  of its total a sparse output;
- Q16 (q16.py): NOT IN a supplier set made by a kernel from NOT LIKE over the
  coded comments, `<>`, NOT LIKE and IN masks over the group's levels of
  partsupp stored by its part's group, COUNT(DISTINCT) in its kernel form (a
  sparse output over group and supplier, then its positive entries counted);
- Q17 (q17.py): the correlated subquery a first kernel's per-part sums, the
  line's quantity compared with its part's limit, a dense vector read at the
  line's part;
- Q21 (q21.py): EXISTS and NOT EXISTS with `l_suppkey <>` on the same order as
  tests of the order's spreads of supplier codes, a first query's six sums
  per order;
- Q22 (q22.py): the phone's country code coded at load and read by
  ep.onehot, the average balance a first query, NOT EXISTS orders a
  comparison of each customer's order count.

The fixture's columns with the ones these read beside it (the supplier's name
and comment, partsupp's available quantity, the order's status:
tpch_extra_sf0.01.npz, from the same generator); DuckDB's rows computed from
them and stored (tpch_written_sf0.01.json, made by bench/tpch/written_answers.py),
so that no DuckDB is needed."""
import json
from pathlib import Path

import pytest

from bench.tpch import tables as shared
from bench.tpch.catalog import QUERIES, rows_of, same
from bench.tpch.written_answers import WRITTEN, columns

pytestmark = pytest.mark.usefixtures("shared_cache")

DATA = Path(__file__).parent / "data"
# each query's least number of rows for a parameter set (so an empty answer fails)
LEAST_ROWS = {"Q11": 11, "Q16": 11, "Q17": 1, "Q21": 1, "Q22": 7}


@pytest.fixture(scope="module")
def loaded():
    return shared.load(columns(DATA), added_orders=False)


@pytest.mark.parametrize("name", WRITTEN)
def test_a_written_query_gives_duckdbs_rows(loaded, name):
    answers = json.loads((DATA / "tpch_written_sf0.01.json").read_text())[name]
    query = QUERIES[name]
    assert len(answers) == len(query.params) == 3
    for case in answers:
        got = rows_of(shared.QUERIES[name](loaded, **case["params"]), query)
        want = [tuple(r) for r in case["rows"]]
        assert len(want) >= LEAST_ROWS[name] and want[0][0] is not None \
            and same(got, want, query), \
            (case["params"], got[:3], want[:3])
