"""TPC-H Q1 written as docs/relational.md teaches (bench/tpch/q1.py: a group-by on
lineitem's value columns of flag and status codes, its six sums over one more
index) gives DuckDB's rows at scale 0.01 for three parameter sets on the
tables loaded once (bench/tpch/tables.py), as one walk of lineitem; DuckDB's
rows are stored beside the fixture (tpch_q1_sf0.01.json, made from the
fixture's columns)."""
import json
from pathlib import Path

import numpy as np
import pytest

from bench.tpch import tables as shared
from bench.tpch.catalog import QUERIES, rows_of, same
from bench.tpch.q1 import q1_expr
from etchpy.expr.compare import CompareVar
from etchpy.expr.walk import accesses

DATA = Path(__file__).parent / "data"


@pytest.fixture(scope="module")
def loaded():
    with np.load(DATA / "tpch_q5_sf0.01.npz") as z:
        cols = {k: z[k] for k in z.files if "." in k and not k.startswith("answer")}
    return shared.load(cols, added_orders=False)


def test_q1_gives_duckdbs_rows_in_one_walk_of_lineitem(loaded):
    answers = json.loads((DATA / "tpch_q1_sf0.01.json").read_text())["Q1"]
    query = QUERIES["Q1"]
    for case in answers:
        got = rows_of(shared.QUERIES["Q1"](loaded, **case["params"]), query)
        want = [tuple(r) for r in case["rows"]]
        assert len(got) == 4 and same(got, want, query), (case["params"], got, want)
    walked = loaded["kernels"][q1_expr]._walked.request.expr
    acc, = accesses(walked)                  # the onehots, the test and the six sums
    assert isinstance(acc.tensor, CompareVar) and len(acc.tensor.terms) == 6
    assert len(acc.tensor.bins) == 2
