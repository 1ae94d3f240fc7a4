"""TPC-H Q17 written as docs/relational.md teaches (bench/tpch/q17.py: the
correlated subquery a first kernel's per-part sums, the line's quantity
compared with its part's limit, a dense vector read at the line's part) gives
DuckDB's rows at scale 0.01 for three parameter sets on the tables loaded once
(bench/tpch/tables.py); DuckDB's rows are stored beside the fixture
(tpch_q17_sf0.01.json, made from the fixture's columns)."""
import json
from pathlib import Path

import numpy as np
import pytest

from bench.tpch import tables as shared
from bench.tpch.catalog import QUERIES, rows_of, same

DATA = Path(__file__).parent / "data"


@pytest.fixture(scope="module")
def loaded():
    with np.load(DATA / "tpch_q5_sf0.01.npz") as z:
        cols = {k: z[k] for k in z.files if "." in k and not k.startswith("answer")}
    return shared.load(cols, added_orders=False)


def test_q17_gives_duckdbs_rows(loaded):
    answers = json.loads((DATA / "tpch_q17_sf0.01.json").read_text())["Q17"]
    query = QUERIES["Q17"]
    for case in answers:
        got = rows_of(shared.QUERIES["Q17"](loaded, **case["params"]), query)
        want = [tuple(r) for r in case["rows"]]
        assert want[0][0] is not None and same(got, want, query), (case["params"], got, want)
