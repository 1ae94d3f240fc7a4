"""TPC-H Q5, Q9, Q3, Q6, Q7, Q12 and Q19 as written in bench/tpch (queries.py,
q7.py, q12.py, q19.py: ep.relation, ep.Keys, masks built by the query,
ep.decode) give DuckDB's rows at scale 0.01, for each of three TPC-H
substitution parameter sets, all on one set of tries built once.

DuckDB's answers were computed independently (its own SQL engine over the same
columns) and stored in data/tpch_q5_sf0.01.npz by `python -m bench.tpch.fixture`."""
import json
from pathlib import Path

import numpy as np
import pytest

from bench.tpch.catalog import QUERIES, rows_of, same
from bench.tpch.queries import build

pytestmark = pytest.mark.usefixtures("shared_cache")

FIXTURE = Path(__file__).parent / "data" / "tpch_q5_sf0.01.npz"


@pytest.fixture(scope="module")
def fixture():
    with np.load(FIXTURE) as z:
        cols = {k: z[k] for k in z.files if "." in k and not k.startswith("answer")}
        return cols, json.loads(str(z["answers"]))


@pytest.fixture(scope="module")
def tries(fixture):
    return build(fixture[0])


@pytest.fixture(scope="module")
def tries_by_key(fixture):
    """Orders coded by order key rather than by date (build's cluster=False)."""
    return build(fixture[0], cluster=False)


@pytest.mark.parametrize("name", ["Q5", "Q9", "Q3", "Q6", "Q7", "Q12", "Q19"])
@pytest.mark.parametrize("cluster", [True, False], ids=["by date", "by key"])
def test_query_gives_duckdbs_rows_for_every_parameter_set(fixture, request, name, cluster):
    tries = request.getfixturevalue("tries" if cluster else "tries_by_key")
    query, expected = QUERIES[name], fixture[1][name]
    assert len(expected) == 3 and len({json.dumps(e["params"]) for e in expected}) == 3
    for case in expected:
        got = rows_of(query.run(tries, **case["params"]), query)
        want = [tuple(r) for r in case["rows"]]
        assert got and same(got, want, query), (case["params"], got[:3], want[:3])


def test_the_parameters_change_the_answer_and_the_tries_do_not_change(fixture, tries):
    """Running one parameter set, another, then the first again gives the first
    answer both times (nothing the query built is kept in the tries), and the
    parameter sets give different answers."""
    for query in QUERIES.values():
        if query.run is None:       # Q4: on the shared tables only (test_tpch_tables)
            continue
        a, b = query.params[:2]
        first = rows_of(query.run(tries, **a), query)
        other = rows_of(query.run(tries, **b), query)
        assert first != other
        assert rows_of(query.run(tries, **a), query) == first


def test_results_are_decoded_columns_in_order_by_order(tries):
    q3 = QUERIES["Q3"].run(tries, segment="BUILDING", date="1995-03-15")
    assert list(q3) == ["l_orderkey", "revenue", "o_orderdate", "o_shippriority"]
    assert len(q3["revenue"]) == 10 and np.all(np.diff(q3["revenue"]) <= 0)
    q9 = QUERIES["Q9"].run(tries, color="green")
    assert q9["nation"].dtype.kind == "U" and sorted(q9["nation"]) == list(q9["nation"])
