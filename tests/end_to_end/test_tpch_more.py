"""TPC-H Q8, Q2, Q20 and Q15 (the queries of bench/tpch/more.py) written as
docs/relational.md teaches give DuckDB's rows at scale 0.01 for three
parameter sets each on the tables loaded once (bench/tpch/tables.py); DuckDB's
rows and the columns the fixture lacks are stored beside it
(tpch_more_sf0.01.json and .npz, made by bench/tpch/more_answers.py)."""
import json
from pathlib import Path

import pytest

from bench.tpch import tables as shared
from bench.tpch.catalog import QUERIES, rows_of, same
from bench.tpch.more import MORE
from bench.tpch.more_answers import fixture_columns

pytestmark = pytest.mark.usefixtures("shared_cache")

STEM = Path(__file__).parent / "data" / "tpch_more_sf0.01"


@pytest.fixture(scope="module")
def loaded():
    return shared.load(fixture_columns(STEM), added_orders=False)


@pytest.mark.parametrize("name", sorted(MORE))
def test_query_gives_duckdbs_rows(loaded, name):
    answers = json.loads(Path(f"{STEM}.json").read_text())[name]
    query = QUERIES[name]
    assert len(answers) == 3
    for case in answers:
        got = rows_of(shared.QUERIES[name](loaded, **case["params"]), query)
        want = [tuple(r) for r in case["rows"]]
        assert want and same(got, want, query), (case["params"], got[:3], want[:3])
