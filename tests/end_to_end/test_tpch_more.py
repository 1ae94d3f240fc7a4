"""TPC-H Q8 (and the other queries of bench/tpch/more.py) written as
docs/relational.md teaches give DuckDB's rows at scale 0.01 for three
parameter sets each on the tables loaded once (bench/tpch/tables.py); DuckDB's
rows are stored beside the fixture (tpch_more_sf0.01.json, made from the
fixture's columns by bench/tpch/more_answers.py)."""
import json
from pathlib import Path

import numpy as np
import pytest

from bench.tpch import tables as shared
from bench.tpch.catalog import QUERIES, rows_of, same
from bench.tpch.more import MORE

DATA = Path(__file__).parent / "data"


@pytest.fixture(scope="module")
def loaded():
    with np.load(DATA / "tpch_q5_sf0.01.npz") as z:
        cols = {k: z[k] for k in z.files if "." in k and not k.startswith("answer")}
    return shared.load(cols, added_orders=False)


@pytest.mark.parametrize("name", sorted(MORE))
def test_query_gives_duckdbs_rows(loaded, name):
    answers = json.loads((DATA / "tpch_more_sf0.01.json").read_text())[name]
    query = QUERIES[name]
    assert len(answers) == 3
    for case in answers:
        got = rows_of(shared.QUERIES[name](loaded, **case["params"]), query)
        want = [tuple(r) for r in case["rows"]]
        assert want and same(got, want, query), (case["params"], got, want)
