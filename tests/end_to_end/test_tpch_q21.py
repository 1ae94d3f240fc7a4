"""TPC-H Q21 written as docs/relational.md teaches (bench/tpch/q21.py: EXISTS and
NOT EXISTS with `l_suppkey <>` on the same order as tests of the order's
spreads of supplier codes, a first query's six sums per order) gives DuckDB's
rows at scale 0.01 for three parameter sets on the tables loaded once; the
fixture's columns with the supplier's name and the order's status
(tpch_extra_sf0.01.npz, from the same generator)."""
from pathlib import Path

import numpy as np
import pytest

from bench.tpch import data, tables as shared
from bench.tpch.catalog import QUERIES, rows_of, same

DATA = Path(__file__).parent / "data"


@pytest.fixture(scope="module")
def cols():
    out = {}
    for name in ("tpch_q5_sf0.01.npz", "tpch_extra_sf0.01.npz"):
        with np.load(DATA / name) as z:
            out.update({k: z[k] for k in z.files if "." in k and not k.startswith("answer")})
    return out


def test_q21_gives_duckdbs_rows(cols):
    tables = shared.load(cols, added_orders=False)
    con = data.duckdb_with(cols)
    query = QUERIES["Q21"]
    for params in query.params:
        got = rows_of(shared.QUERIES["Q21"](tables, **params), query)
        want = [tuple(r) for r in con.execute(query.sql(params)).fetchall()]
        assert len(want) > 0 and same(got, want, query), (params, got[:3], want[:3])
